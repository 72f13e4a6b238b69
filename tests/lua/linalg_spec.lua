-- luda.matmul and x:matmul against NumPy's matmul written out in plain Lua over float64
-- (and Lua integers): random operands of every dtype kind, 1-D operands promoted as
-- NumPy promotes them, stacks that broadcast evenly and unevenly, transposed, strided,
-- reversed, size-1 and empty operands, out=, and the errors with their exact text.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local here, error_of = support.here, support.error_of

local on_devices = support.device_tests(_ENV)
local function shape_text(s) return "(" .. table.concat(s, ", ") .. ")" end

-- NumPy's matmul of host arrays, with each element's sum of |a||b| (a rounding bound).
local function reference(a, b, dtype)
  local A = #a.shape == 1 and { shape = { 1, a.shape[1] }, data = a.data } or a
  local B = #b.shape == 1 and { shape = { b.shape[1], 1 }, data = b.data } or b
  local na, nb = #A.shape, #B.shape
  local m, k, n = A.shape[na - 1], A.shape[na], B.shape[nb]
  local sa, sb = { table.unpack(A.shape, 1, na - 2) }, { table.unpack(B.shape, 1, nb - 2) }
  local stack = assert(H.broadcast_shape(sa, sb))
  local shape = { table.unpack(stack) }
  if #a.shape > 1 then shape[#shape + 1] = m end
  if #b.shape > 1 then shape[#shape + 1] = n end
  -- The first element of matrix `s` (0-based stack index) of a stack of shape `own`.
  local function base(own, idx, rows, cols)
    local pos, off = 0, #idx - #own
    for d = 1, #own do pos = pos * own[d] + (own[d] == 1 and 0 or idx[off + d]) end
    return pos * rows * cols
  end
  local count = H.size_of(stack)
  local value, bound = {}, {}
  for s = 1, count do
    local idx = #stack > 0 and H.unflatten(stack, s) or {}
    local ba, bb = base(sa, idx, m, k), base(sb, idx, k, n)
    for i = 0, m - 1 do
      for j = 0, n - 1 do
        local acc, abs = dtype ~= "bool" and 0 or false, 0
        for p = 0, k - 1 do
          local x, y = A.data[ba + i * k + p + 1], B.data[bb + p * n + j + 1]
          if type(x) == "boolean" then acc = acc or (x and y)
          else
            acc = acc + x * y
            abs = abs + math.abs(x * y)
          end
        end
        if H.BITS[dtype] then acc = H.in_dtype(dtype, acc) end  -- integer sums wrap, as NumPy's
        value[#value + 1], bound[#bound + 1] = acc, abs
      end
    end
  end
  return { shape = shape, data = value }, bound
end

-- Compares with the reference: floats within (k + 2) rounding errors of the dtype on the
-- sum of |a||b|, the others exactly.
local function check(got, a, b, dtype, what)
  local want, bound = reference(a, b, dtype)
  local k = #a.shape == 1 and a.shape[1] or a.shape[#a.shape]
  local eps = dtype == "float32" and 2 ^ -23 or 2 ^ -52
  local ok = (dtype == "float32" or dtype == "float64")
      and H.within(function(i) return (k + 2) * eps * bound[i] end) or H.exact
  assert.are.equal(dtype, got.dtype, what)
  H.check(got, want, ok, what)
end

local function host(dtype, shape)
  if dtype == "bool" then return H.random("bool", shape) end
  if dtype:match("int") then return H.integers(shape, dtype:match("^u") and 0 or -20, 20) end
  return H.random(dtype, shape, -4, 4)
end

-- NumPy's tensordot of host arrays over 0-based axes xa of a and ya of b: a result with
-- a's other axes then b's, and each element's sum of |a||b|.
local function contract(a, b, xa, ya)
  local function others(h, axes)
    local out = {}
    for d = 0, #h.shape - 1 do
      local summed = false
      for _, x in ipairs(axes) do summed = summed or x == d end
      if not summed then out[#out + 1] = d end
    end
    return out
  end
  local fa, fb = others(a, xa), others(b, ya)
  local shape, summed = {}, {}
  for _, d in ipairs(fa) do shape[#shape + 1] = a.shape[d + 1] end
  for _, d in ipairs(fb) do shape[#shape + 1] = b.shape[d + 1] end
  for _, d in ipairs(xa) do summed[#summed + 1] = a.shape[d + 1] end
  local function pos(h, idx)  -- idx: 0-based index per axis of h
    local p = 0
    for d = 1, #h.shape do p = p * h.shape[d] + idx[d] end
    return p + 1
  end
  local value, bound = {}, {}
  for r = 1, H.size_of(shape) do
    local ri = #shape > 0 and H.unflatten(shape, r) or {}
    local ia, ib = {}, {}
    for i, d in ipairs(fa) do ia[d + 1] = ri[i] end
    for i, d in ipairs(fb) do ib[d + 1] = ri[#fa + i] end
    local acc, abs = 0, 0
    for s = 1, H.size_of(summed) do
      local si = #summed > 0 and H.unflatten(summed, s) or {}
      for i = 1, #xa do ia[xa[i] + 1], ib[ya[i] + 1] = si[i], si[i] end
      local x, y = a.data[pos(a, ia)], b.data[pos(b, ib)]
      acc, abs = acc + x * y, abs + math.abs(x * y)
    end
    value[r], bound[r] = acc, abs
  end
  return { shape = shape, data = value }, bound
end

local function close(got, want, bound, k, what)
  H.check(got, want, H.within(function(i) return (k + 2) * 2 ^ -52 * bound[i] end), what)
end

describe("luda.matmul", function()
  before_each(function() math.randomseed(1414) end)

  on_devices("multiplies matrices, vectors and stacks as NumPy does", function()
    local cases = {
      { { 5, 7 }, { 7, 3 } }, { { 1, 1 }, { 1, 1 } }, { { 7 }, { 7, 4 } }, { { 6, 7 }, { 7 } }, { { 9 }, { 9 } },
      { { 3, 4, 5 }, { 5, 2 } }, { { 4, 5 }, { 3, 5, 2 } }, { { 2, 3, 4 }, { 2, 4, 6 } },
      { { 2, 1, 3, 4 }, { 1, 5, 4, 2 } },   -- stacks that broadcast unevenly
      { { 3, 1, 4, 5 }, { 5 } }, { { 33, 65 }, { 65, 17 } },
      { { 0, 4 }, { 4, 3 } }, { { 4, 0 }, { 0, 3 } }, { { 2, 0, 3, 4 }, { 4, 5 } }, { { 0 }, { 0 } },
    }
    for _, dtype in ipairs({ "float64", "float32", "int64", "int32", "uint8", "bool" }) do
      for _, c in ipairs(cases) do
        local ha, hb = host(dtype, c[1]), host(dtype, c[2])
        local a, b = H.to_array(ha, dtype), H.to_array(hb, dtype)
        local what = dtype .. " " .. shape_text(c[1]) .. " @ " .. shape_text(c[2])
        check(luda.matmul(a, b), ha, hb, dtype, what)
        check(a:matmul(b), ha, hb, dtype, what .. " (method)")
      end
    end
  end)

  on_devices("reads transposed, strided, reversed and size-1 operands", function()
    for _, dtype in ipairs({ "float64", "float32", "int32" }) do
      local views = {
        { "transposed", function(h, s) return H.to_array(h, dtype).T end, true },
        { "strided", function(h, s) return H.to_array(h, dtype):slice("::2, ::3") end },
        { "reversed", function(h, s) return H.to_array(h, dtype):slice("::-1, :") end },
      }
      for _, v in ipairs(views) do
        local name, make, transposed = v[1], v[2], v[3]
        -- Host data whose view is 6 x 4 (a) and 4 x 5 (b).
        local ha = host(dtype, transposed and { 4, 6 } or name == "strided" and { 11, 12 } or { 6, 4 })
        local hb = host(dtype, transposed and { 5, 4 } or name == "strided" and { 7, 15 } or { 4, 5 })
        local a, b = make(ha), make(hb)
        check(luda.matmul(a, b), H.read(a), H.read(b), dtype, dtype .. " " .. name)
        check(luda.matmul(a, H.to_array(H.read(b), dtype)), H.read(a), H.read(b), dtype, dtype .. " " .. name .. " first")
      end
      local one = H.to_array(host(dtype, { 1, 5, 1 }), dtype)
      local row = H.to_array(host(dtype, { 1, 1, 4 }), dtype)
      check(luda.matmul(one, row), H.read(one), H.read(row), dtype, dtype .. " size-1 axes")
    end
  end)

  on_devices("promotes mixed dtypes and writes into out", function()
    local ha, hb = host("float32", { 3, 4 }), host("int64", { 4, 2 })
    local a, b = H.to_array(ha, "float32"), H.to_array(hb, "int64")
    check(luda.matmul(a, b), ha, hb, "float64", "float32 @ int64")
    local hc, hd = host("int8", { 3, 4 }), host("uint8", { 4, 2 })
    check(luda.matmul(H.to_array(hc, "int8"), H.to_array(hd, "uint8")), hc, hd, "int16", "int8 @ uint8")
    local out = luda.empty({ 3, 2 }, "float64")
    local r = luda.matmul(a, b, { out = out })
    assert.are.equal(out, r)
    check(out, ha, hb, "float64", "out=")
    local strided = luda.zeros({ 3, 4 }, "float64"):slice(":, ::2")
    luda.matmul(a, b, { out = strided })
    check(strided, ha, hb, "float64", "a strided out=")
  end)

  on_devices("multiplies float16, bfloat16 and complex matrices", function()
    -- Eighths and small Gaussian integers: every product and partial sum is exact in the
    -- float32 (or float64) sums, so the one rounding is the result's, to its dtype.
    local function eighths(n) local t = {} for i = 1, n do t[i] = math.random(-32, 32) / 8 end return t end
    for _, c in ipairs({ { 5, 7, 3 }, { 1, 9, 1 }, { 16, 33, 8 }, { 3, 0, 2 } }) do
      local m, k, n = c[1], c[2], c[3]
      for _, dtype in ipairs({ "float16", "bfloat16" }) do
        local ha, hb = eighths(m * k), eighths(k * n)
        local a = luda.array(ha, dtype):reshape(m, k)
        local b = luda.array(hb, dtype):reshape(n, k):transpose()  -- a transposed operand
        local got = luda.matmul(a, b)
        assert.are.equal(dtype, got.dtype)
        local flat = got:reshape(-1):totable()
        for i = 0, m - 1 do
          for j = 0, n - 1 do
            local acc = 0
            for p = 0, k - 1 do acc = acc + ha[i * k + p + 1] * hb[j * k + p + 1] end
            assert.are.equal(luda[dtype](acc):value(), flat[i * n + j + 1], ("%s %dx%dx%d [%d,%d]"):format(dtype, m, k, n, i, j))
          end
        end
      end
      for _, dtype in ipairs({ "complex64", "complex128" }) do
        local function gaussian(count)
          local t, z = {}, {}
          for i = 1, count do
            t[i] = { math.random(-9, 9), math.random(-9, 9) }
            z[i] = luda.complex(t[i][1], t[i][2])
          end
          return t, z
        end
        local ha, za = gaussian(m * k)
        local hb, zb = gaussian(k * n)
        local a, b = luda.array(za, dtype):reshape(m, k), luda.array(zb, dtype):reshape(k, n)
        local got = (m > 1 and luda.matmul(a, b) or luda.matmul(a:reshape(-1), b)):reshape(-1):totable()
        for i = 0, m - 1 do
          for j = 0, n - 1 do
            local re, im = 0, 0
            for p = 0, k - 1 do
              local x, y = ha[i * k + p + 1], hb[p * n + j + 1]
              re, im = re + x[1] * y[1] - x[2] * y[2], im + x[1] * y[2] + x[2] * y[1]
            end
            local z = got[i * n + j + 1]
            assert.are.same({ dtype, re, im }, { z.dtype, z.real, z.imag })
          end
        end
      end
    end
    -- a stack of complex matrices against the same products one by one
    local s = luda.array({ luda.complex(1, 2), luda.complex(0, -1), 3, luda.complex(2, 2) }, "complex64"):reshape(1, 2, 2)
    local st = luda.matmul(luda.concatenate({ s, s, s }), s)
    assert.are.equal(tostring(luda.matmul(s[0], s[0])), tostring(st[2]))
  end)

  on_devices("refuses what NumPy refuses, naming both shapes", function()
    local a, b = luda.ones({ 4, 2 }), luda.ones({ 3, 5 })
    local where, err = here(), error_of(function() luda.matmul(a, b) end)
    assert.are.equal(where .. "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc " ..
                     "signature (n?,k),(k,m?)->(n?,m?) (size 3 is different from 2); the shapes are (4, 2) and (3, 5)", err)
    where, err = here(), error_of(function() luda.matmul(luda.array(2.0), a) end)
    assert.are.equal(where .. "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core with " ..
                     "signature (n?,k),(k,m?)->(n?,m?) requires 1)", err)
    where, err = here(), error_of(function() luda.matmul(luda.ones({ 2, 3, 4 }), luda.ones({ 5, 4, 1 })) end)
    assert.are.equal(where .. "matmul: the stacks of matrices of shapes (2, 3, 4) and (5, 4, 1) do not broadcast " ..
                     "together", err)
    where, err = here(), error_of(function() luda.matmul(a, luda.ones({ 2, 2 }), { out = luda.empty({ 4, 2 }, "float32") }) end)
    assert.are.equal(where .. "matmul: out is a float32 array of shape (4, 2); the result is a float64 array of " ..
                     "shape (4, 2)", err)
    where, err = here(), error_of(function() luda.graph(function(x) return luda.matmul(x, x) end, luda.ones({ 2, 2 })) end)
    assert.are.equal(where .. "matmul: a call of the BLAS cannot be recorded in a graph yet; multiply before or " ..
                     "after the graph runs", err)
  end)

  on_devices("dot, vdot, inner, outer, tensordot and trace as NumPy's", function()
    local function f64(shape) return H.random("float64", shape, -4, 4) end
    local function arr(h) return H.to_array(h, "float64") end
    -- dot: every pairing of ranks, the sum over a's last axis and b's second-to-last
    for _, c in ipairs({ { { 3 }, { 3 } }, { { 2, 3 }, { 3 } }, { { 3 }, { 3, 4 } }, { { 2, 3 }, { 3, 4 } },
                         { { 2, 2, 3 }, { 3, 4 } }, { { 3 }, { 2, 3, 4 } }, { { 2, 3 }, { 2, 3, 4 } },
                         { { 2, 1, 3 }, { 2, 3, 2 } }, { { 0, 3 }, { 2, 3, 4 } }, { { 2, 0 }, { 0, 4 } } }) do
      local ha, hb = f64(c[1]), f64(c[2])
      local want, bound = contract(ha, hb, { #c[1] - 1 }, { #c[2] == 1 and 0 or #c[2] - 2 })
      local k = c[1][#c[1]]
      close(luda.dot(arr(ha), arr(hb)), want, bound, k, "dot " .. shape_text(c[1]) .. " " .. shape_text(c[2]))
      close(arr(ha):dot(arr(hb)), want, bound, k, "x:dot")
    end
    -- a transposed operand, and a 0-d one (a product)
    local ht = f64({ 4, 3 })
    local t = arr(ht).T
    local hb = f64({ 2, 4, 5 })
    local want, bound = contract(H.read(t), hb, { 1 }, { 1 })
    close(luda.dot(t, arr(hb)), want, bound, 4, "dot of a transposed x")
    H.check(luda.dot(luda.array(2.5), arr(hb)), H.map(function(v) return 2.5 * v end, hb), H.exact, "dot with 0-d")
    -- vdot: the elements in C order, of any shapes with as many
    local hv, hw = f64({ 2, 3 }), f64({ 3, 2 })
    local v = H.read(arr(hv))
    local flat_w = { shape = { 2, 3 }, data = hw.data }
    want, bound = contract(v, flat_w, { 0, 1 }, { 0, 1 })
    close(luda.vdot(arr(hv), arr(hw)), want, bound, 6, "vdot")
    -- a complex x is conjugated (NumPy's vdot), dot and inner take it as it is
    local zx = luda.array({ luda.complex(1, 2), luda.complex(3, -1) }, "complex64")
    local zy = luda.array({ luda.complex(2, 1), luda.complex(0, 4) }, "complex64")
    local vd, d = luda.vdot(zx, zy):item(), luda.dot(zx, zy):item()
    -- (1-2i)(2+i) + (3+i)(4i) = 4-3i + (-4+12i) = 0+9i; (1+2i)(2+i) + (3-i)(4i) = 5i + (4+12i) = 4+17i
    assert.are.same({ 0, 9, 4, 17 }, { vd.real, vd.imag, d.real, d.imag })
    -- inner: both last axes
    local hi, hj = f64({ 2, 3, 4 }), f64({ 5, 4 })
    want, bound = contract(hi, hj, { 2 }, { 1 })
    close(luda.inner(arr(hi), arr(hj)), want, bound, 4, "inner")
    -- outer: the elements flattened
    local ho, hp = f64({ 2, 2 }), f64({ 3 })
    local flat_o = { shape = { 4 }, data = ho.data }
    want = contract(flat_o, hp, {}, {})
    H.check(luda.outer(arr(ho), arr(hp)), want, H.exact, "outer")
    -- tensordot: a count, and pairs of axes (1-based, negative from the end)
    local ta, tb = f64({ 2, 3, 4 }), f64({ 3, 4, 5 })
    want, bound = contract(ta, tb, { 1, 2 }, { 0, 1 })
    close(luda.tensordot(arr(ta), arr(tb)), want, bound, 12, "tensordot axes=2")
    close(luda.tensordot(arr(ta), arr(tb), { { 2, -1 }, { 1, 2 } }), want, bound, 12, "tensordot pairs")
    want, bound = contract(ta, tb, {}, {})
    close(luda.tensordot(arr(ta), arr(tb), 0), want, bound, 1, "tensordot axes=0")
    -- trace: offsets, other axes, sum's dtype for integers
    local m = H.integers({ 3, 4 }, -9, 9)
    local function diag(h, off)
      local acc = 0
      for i = 0, 2 do
        local j = i + off
        if j >= 0 and j < 4 then acc = acc + h.data[i * 4 + j + 1] end
      end
      return acc
    end
    local mi = H.to_array(m, "int32")
    for _, off in ipairs({ 0, 1, -1, 3, 5, -4 }) do
      local r = luda.trace(mi, off)
      assert.are.equal("int64", r.dtype)
      H.check(r, H.of(diag(m, off)), H.exact, "trace offset " .. off)
    end
    H.check(mi:trace(), H.of(diag(m, 0)), H.exact, "x:trace()")
    local cube = H.integers({ 2, 3, 3 }, -9, 9)
    local want_t = {}
    for s = 0, 1 do
      local acc = 0
      for i = 0, 2 do acc = acc + cube.data[s * 9 + i * 3 + i + 1] end
      want_t[s + 1] = acc
    end
    H.check(luda.trace(H.to_array(cube, "int64"), 0, 2, 3), H.of(want_t), H.exact, "trace over axes 2 and 3")
  end)

  on_devices("refuses the dot family's misuses with NumPy's words", function()
    local a, b = luda.ones({ 2, 3 }), luda.ones({ 4, 5 })
    H.raises("dot: shapes (2, 3) and (4, 5) not aligned: 3 (axis 2) != 4 (axis 1)", function() return luda.dot(a, b) end)
    H.raises("inner: shapes (2, 3) and (4, 5) not aligned: 3 (axis 2) != 5 (axis 2)", function() return luda.inner(a, b) end)
    H.raises("vdot: x has 6 elements and y 20; vdot needs as many in each", function() return luda.vdot(a, b) end)
    H.raises("tensordot: shape-mismatch for sum: axis 2 of (2, 3) is 3, axis 1 of (4, 5) is 4", function() return luda.tensordot(a, b, 1) end)
    H.raises("tensordot: 1 axes of x and 2 of y; the axes summed over pair up, as many of each", function() return luda.tensordot(a, b, { { 1 }, { 1, 2 } }) end)
    H.raises("trace: axis1 and axis2 cannot be the same (axis 1)", function() return luda.trace(a, 0, 1, 1) end)
    H.raises("trace: axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", function() return luda.trace(a, 0, 1, 3) end)
  end)
end)

-- Plain-Lua references for numpy.linalg on host arrays of one n x n matrix (row-major data).
local function mat_mul(a, b, n, k)  -- (n x n) times (n x k)
  local out = {}
  for i = 0, n - 1 do
    for j = 0, k - 1 do
      local acc = 0
      for p = 0, n - 1 do acc = acc + a[i * n + p + 1] * b[p * k + j + 1] end
      out[i * k + j + 1] = acc
    end
  end
  return out
end
local function lua_det(a, n)  -- Gaussian elimination with partial pivoting, in float64
  local m, det = { table.unpack(a) }, 1
  for c = 0, n - 1 do
    local p = c
    for r = c + 1, n - 1 do if math.abs(m[r * n + c + 1]) > math.abs(m[p * n + c + 1]) then p = r end end
    if m[p * n + c + 1] == 0 then return 0 end
    if p ~= c then
      for j = 0, n - 1 do m[c * n + j + 1], m[p * n + j + 1] = m[p * n + j + 1], m[c * n + j + 1] end
      det = -det
    end
    det = det * m[c * n + c + 1]
    for r = c + 1, n - 1 do
      local f = m[r * n + c + 1] / m[c * n + c + 1]
      for j = c, n - 1 do m[r * n + j + 1] = m[r * n + j + 1] - f * m[c * n + j + 1] end
    end
  end
  return det
end
-- A random well-conditioned n x n matrix (diagonally dominant), and a symmetric positive
-- definite one (B B^T + n I).
local function well_conditioned(n)
  local h = H.random("float64", { n, n }, -1, 1)
  for i = 0, n - 1 do h.data[i * n + i + 1] = h.data[i * n + i + 1] + n * (math.random() < 0.5 and -1 or 1) end
  return h
end
local function positive_definite(n)
  local b = H.random("float64", { n, n }, -1, 1)
  local bt = {}
  for i = 0, n - 1 do for j = 0, n - 1 do bt[j * n + i + 1] = b.data[i * n + j + 1] end end
  local data = mat_mul(b.data, bt, n, n)
  for i = 0, n - 1 do data[i * n + i + 1] = data[i * n + i + 1] + n end
  return { shape = { n, n }, data = data }
end
-- Matrix s of a stack's host data.
local function matrix(h, s, n)
  local out = {}
  for k = 1, n * n do out[k] = h.data[s * n * n + k] end
  return out
end


-- Plain-Lua complex numbers as { re, im } and matrices of them as flat row-major tables.
local function cmul(x, y) return { x[1] * y[1] - x[2] * y[2], x[1] * y[2] + x[2] * y[1] } end
local function csub(x, y) return { x[1] - y[1], x[2] - y[2] } end
local function cdiv(x, y)
  local d = y[1] * y[1] + y[2] * y[2]
  return { (x[1] * y[1] + x[2] * y[2]) / d, (x[2] * y[1] - x[1] * y[2]) / d }
end
local function cmat_mul(a, b, r, p, c)  -- (r x p) times (p x c)
  local out = {}
  for i = 0, r - 1 do
    for j = 0, c - 1 do
      local acc = { 0, 0 }
      for k = 0, p - 1 do
        local t = cmul(a[i * p + k + 1], b[k * c + j + 1])
        acc = { acc[1] + t[1], acc[2] + t[2] }
      end
      out[i * c + j + 1] = acc
    end
  end
  return out
end
local function cadjoint(a, r, c)  -- (r x c) to its conjugate transpose (c x r)
  local out = {}
  for i = 0, r - 1 do
    for j = 0, c - 1 do out[j * r + i + 1] = { a[i * c + j + 1][1], -a[i * c + j + 1][2] } end
  end
  return out
end
local function cdet(a, n)  -- Gaussian elimination with partial pivoting
  local m, d = {}, { 1, 0 }
  for k = 1, n * n do m[k] = { a[k][1], a[k][2] } end
  local function abs2(z) return z[1] * z[1] + z[2] * z[2] end
  for c = 0, n - 1 do
    local p = c
    for r = c + 1, n - 1 do if abs2(m[r * n + c + 1]) > abs2(m[p * n + c + 1]) then p = r end end
    if abs2(m[p * n + c + 1]) == 0 then return { 0, 0 } end
    if p ~= c then
      for j = 0, n - 1 do m[p * n + j + 1], m[c * n + j + 1] = m[c * n + j + 1], m[p * n + j + 1] end
      d = { -d[1], -d[2] }
    end
    d = cmul(d, m[c * n + c + 1])
    for r = c + 1, n - 1 do
      local f = cdiv(m[r * n + c + 1], m[c * n + c + 1])
      for j = c, n - 1 do m[r * n + j + 1] = csub(m[r * n + j + 1], cmul(f, m[c * n + j + 1])) end
    end
  end
  return d
end
-- A luda array of complex `dtype` from { re, im } pairs, and its elements back as pairs.
local function to_complex(h, shape, dtype)
  local z = {}
  for k, v in ipairs(h) do z[k] = luda.complex(v[1], v[2]) end
  return luda.array(z, dtype):reshape(table.unpack(shape))
end
local function pairs_of(x)
  local out = {}
  for k, z in ipairs(x:reshape(-1):totable()) do out[k] = { z.real, z.imag } end
  return out
end
local function check_pairs(got, want, tol, what)
  assert.are.equal(#want, #got, what)
  for k = 1, #want do
    local dr, di = got[k][1] - want[k][1], got[k][2] - want[k][2]
    assert(math.sqrt(dr * dr + di * di) <= tol, ("%s [%d]: got %s%+gi, want %s%+gi"):format(
      what, k, got[k][1], got[k][2], want[k][1], want[k][2]))
  end
end

describe("luda.linalg", function()
  before_each(function() math.randomseed(1515) end)

  on_devices("solve, inv, det and cholesky as numpy.linalg's, one matrix and stacks", function()
    for _, dtype in ipairs({ "float64", "float32" }) do
      local tol = dtype == "float64" and 1e-12 or 2e-5
      for _, n in ipairs({ 1, 3, 8, 33 }) do
        local what = dtype .. " n=" .. n
        local ha = well_conditioned(n)
        local a = H.to_array(ha, dtype)
        local hb = H.random("float64", { n, 2 }, -1, 1)
        -- solve: a x = b, checked by its residual against b
        local x = luda.linalg.solve(a, H.to_array(hb, dtype))
        assert.are.equal(dtype, x.dtype)
        local ax = mat_mul(H.read(a).data, H.read(x).data, n, 2)
        H.check(H.to_array({ shape = { n, 2 }, data = ax }, "float64"), hb, H.rel(tol * n, 1), what .. " solve residual")
        local v = luda.linalg.solve(a, H.to_array({ shape = { n }, data = { table.unpack(hb.data, 1, n) } }, dtype))
        assert.are.same({ n }, v.shape)
        -- inv: a inv(a) = I
        local ai = mat_mul(H.read(a).data, H.read(luda.linalg.inv(a)).data, n, n)
        local eye = H.fill({ n, n }, function(k) return (k - 1) // n == (k - 1) % n and 1 or 0 end)
        H.check(H.to_array({ shape = { n, n }, data = ai }, "float64"), eye, H.within(function() return tol * n end), what .. " inv")
        -- det against Gaussian elimination of the same values
        local want = lua_det(H.read(a).data, n)
        if dtype == "float32" and math.abs(want) > 3.4028234663852886e38 then
          want = want > 0 and math.huge or -math.huge  -- past float32's range, as NumPy's float32 det
        end
        H.check(luda.linalg.det(a), H.of(want), H.rel(tol * n), what .. " det")
        -- cholesky: lower triangular, L L^T = a
        local hp = positive_definite(n)
        local l = H.read(luda.linalg.cholesky(H.to_array(hp, dtype)))
        local lt = {}
        for i = 0, n - 1 do
          for j = 0, n - 1 do
            lt[j * n + i + 1] = l.data[i * n + j + 1]
            if j > i then assert.are.equal(0, l.data[i * n + j + 1], what .. " cholesky above the diagonal") end
          end
        end
        H.check(H.to_array({ shape = { n, n }, data = mat_mul(l.data, lt, n, n) }, "float64"), H.read(H.to_array(hp, dtype)),
                H.rel(tol * n, n), what .. " cholesky")
      end
    end
    -- Stacks that broadcast, a transposed operand, integers computed in float64.
    local hs = { shape = { 2, 3, 3 }, data = {} }
    for s = 0, 1 do
      local m = well_conditioned(3)
      for k = 1, 9 do hs.data[s * 9 + k] = m.data[k] end
    end
    local stack = H.to_array(hs, "float64")
    local dets = luda.linalg.det(stack)
    H.check(dets, H.of({ lua_det(matrix(hs, 0, 3), 3), lua_det(matrix(hs, 1, 3), 3) }), H.rel(1e-12), "det of a stack")
    local rhs = H.random("float64", { 3, 1 }, -1, 1)
    local xs = luda.linalg.solve(stack, H.to_array(rhs, "float64"))
    assert.are.same({ 2, 3, 1 }, xs.shape)
    for s = 0, 1 do
      local r = mat_mul(matrix(hs, s, 3), { table.unpack(H.read(xs).data, s * 3 + 1, s * 3 + 3) }, 3, 1)
      H.check(H.to_array({ shape = { 3, 1 }, data = r }, "float64"), rhs, H.rel(1e-12, 1), "solve of a stack " .. s)
    end
    local t = H.to_array(well_conditioned(4), "float64").T
    H.check(luda.linalg.det(t), H.of(lua_det(H.read(t).data, 4)), H.rel(1e-12), "det of a transposed matrix")
    local ints = luda.array({ { 2, 1 }, { 1, 3 } }, "int32")
    assert.are.equal("float64", luda.linalg.inv(ints).dtype)
    H.check(luda.linalg.det(ints), H.of(5), H.rel(1e-14), "det of int32")
    -- Empty and 0 x 0
    H.check(luda.linalg.det(luda.zeros({ 0, 0 })), H.of(1), H.exact, "det of 0 x 0")
    assert.are.same({ 2, 0, 0 }, luda.linalg.inv(luda.zeros({ 2, 0, 0 })).shape)
  end)

  on_devices("solve, inv, det and cholesky of complex64 and complex128 matrices", function()
    -- Gaussian-integer matrices: a well conditioned a, right-hand sides b and a lower L0
    -- with a positive diagonal, whose L0 L0^H is Hermitian positive definite with L0 its
    -- Cholesky factor.
    local ha = { { 4, 1 }, { 1, -1 }, { 0, 2 }, { 2, 0 }, { -1, 0 }, { 5, -2 }, { 1, 1 }, { 0, 3 }, { 1, 0 },
                 { 3, 2 }, { 6, 0 }, { -2, 1 }, { 0, -1 }, { 2, 2 }, { 1, 0 }, { 4, 3 } }
    local hb = { { 1, 0 }, { 0, 1 }, { 2, -1 }, { -3, 2 }, { 0, 0 }, { 1, 1 }, { 5, 0 }, { 0, -4 } }
    local hl = { { 2, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, { 1, 1 }, { 3, 0 }, { 0, 0 }, { 0, 0 },
                 { 0, -1 }, { 2, 1 }, { 1, 0 }, { 0, 0 }, { -1, 2 }, { 0, 1 }, { 1, -1 }, { 2, 0 } }
    local n = 4
    local hp = cmat_mul(hl, cadjoint(hl, n, n), n, n, n)
    local eye = {}
    for k = 0, n * n - 1 do eye[k + 1] = { k // n == k % n and 1 or 0, 0 } end
    for _, dtype in ipairs({ "complex64", "complex128" }) do
      local tol = dtype == "complex128" and 1e-12 or 1e-4
      local a, b = to_complex(ha, { n, n }, dtype), to_complex(hb, { n, 2 }, dtype)
      -- solve: a x = b
      local x = luda.linalg.solve(a, b)
      assert.are.equal(dtype, x.dtype)
      check_pairs(cmat_mul(ha, pairs_of(x), n, n, 2), hb, tol * 10, dtype .. " solve")
      local v = luda.linalg.solve(a, b:slice(":, 1"))
      assert.are.same({ n }, v.shape)
      check_pairs(cmat_mul(ha, pairs_of(v), n, n, 1), cmat_mul(hb, { { 0, 0 }, { 1, 0 } }, n, 2, 1), tol * 10,
                  dtype .. " solve of a vector")
      -- inv: a inv(a) = I
      local ai = luda.linalg.inv(a)
      assert.are.equal(dtype, ai.dtype)
      check_pairs(cmat_mul(ha, pairs_of(ai), n, n, n), eye, tol * 10, dtype .. " inv")
      -- det: complex, as the elimination's
      local d = luda.linalg.det(a)
      assert.are.equal(dtype, d.dtype)
      local want = cdet(ha, n)
      check_pairs(pairs_of(d:reshape(1)), { want }, tol * math.sqrt(want[1] ^ 2 + want[2] ^ 2), dtype .. " det")
      -- cholesky: L0 itself, zero above the diagonal, L L^H = a
      local l = luda.linalg.cholesky(to_complex(hp, { n, n }, dtype))
      assert.are.equal(dtype, l.dtype)
      local hl_got = pairs_of(l)
      check_pairs(hl_got, hl, tol * 10, dtype .. " cholesky factor")
      for i = 0, n - 1 do
        for j = i + 1, n - 1 do assert.are.same({ 0, 0 }, hl_got[i * n + j + 1], dtype .. " cholesky above the diagonal") end
      end
      check_pairs(cmat_mul(hl_got, cadjoint(hl_got, n, n), n, n, n), hp, tol * 100, dtype .. " cholesky L L^H")
      -- only the lower triangle is read, as NumPy's
      local junk = {}
      for k = 1, n * n do junk[k] = (k - 1) % n > (k - 1) // n and { 99, -7 } or hp[k] end
      check_pairs(pairs_of(luda.linalg.cholesky(to_complex(junk, { n, n }, dtype))), hl, tol * 10,
                  dtype .. " cholesky of the lower triangle")
      -- stacks, a transposed operand
      local stack = luda.stack({ a, a.T })
      local dets = pairs_of(luda.linalg.det(stack))
      check_pairs(dets, { want, want }, tol * math.sqrt(want[1] ^ 2 + want[2] ^ 2), dtype .. " det of a stack")
      local xs = luda.linalg.solve(stack, b)
      check_pairs(cmat_mul(ha, pairs_of(xs[0]), n, n, 2), hb, tol * 10, dtype .. " solve of a stack")
      check_pairs(cmat_mul(pairs_of(a.T), pairs_of(xs[1]), n, n, 2), hb, tol * 10, dtype .. " solve of a.T")
    end
    -- mixed dtypes promote as NumPy's: complex64 with float64 is complex128
    local x = luda.linalg.solve(to_complex(ha, { n, n }, "complex64"), luda.ones({ n }, "float64"))
    assert.are.equal("complex128", x.dtype)
    -- errors in NumPy's words
    local singular = to_complex({ { 1, 1 }, { 2, 2 }, { 2, 2 }, { 4, 4 } }, { 2, 2 }, "complex128")
    local at, e = here(), error_of(function() return luda.linalg.inv(singular) end)
    assert.are.equal(at .. "inv: Singular matrix", e)
    check_pairs(pairs_of(luda.linalg.det(singular):reshape(1)), { { 0, 0 } }, 0, "det of a singular matrix")
    at, e = here(), error_of(function() return luda.linalg.cholesky(singular) end)
    assert.are.equal(at .. "cholesky: Matrix is not positive definite", e)
    assert.are.same({ 2, 0, 0 }, luda.linalg.inv(luda.zeros({ 2, 0, 0 }, "complex64")).shape)
    check_pairs(pairs_of(luda.linalg.det(luda.zeros({ 0, 0 }, "complex64")):reshape(1)), { { 1, 0 } }, 0, "det of 0 x 0")
  end)

  on_devices("norm of vectors and matrices as numpy.linalg.norm's", function()
    local h = H.random("float64", { 3, 4 }, -5, 5)
    h.data[2] = 0
    local x = H.to_array(h, "float64")
    local function row(i) return { table.unpack(h.data, i * 4 + 1, i * 4 + 4) } end
    local function col(j) return { h.data[j + 1], h.data[j + 5], h.data[j + 9] } end
    local function vnorm(v, p)
      local acc = 0
      if p == math.huge or p == -math.huge then
        acc = math.abs(v[1])
        for _, e in ipairs(v) do acc = (p > 0 and math.max or math.min)(acc, math.abs(e)) end
        return acc
      end
      if p == 0 then
        for _, e in ipairs(v) do if e ~= 0 then acc = acc + 1 end end
        return acc
      end
      for _, e in ipairs(v) do acc = acc + math.abs(e) ^ p end
      return acc ^ (1 / p)
    end
    local ok = H.rel(1e-13, 1e-300)
    H.check(luda.linalg.norm(x), H.of(vnorm(h.data, 2)), ok, "every element")
    for _, p in ipairs({ 2, 1, 3, 0, -1, math.huge, -math.huge }) do
      local rows, cols = {}, {}
      for i = 0, 2 do rows[i + 1] = vnorm(row(i), p) end
      for j = 0, 3 do cols[j + 1] = vnorm(col(j), p) end
      H.check(luda.linalg.norm(x, p, 2), H.of(rows), ok, "rows, ord " .. p)
      H.check(luda.linalg.norm(x, p, 1), H.of(cols), ok, "columns, ord " .. p)
    end
    local col_sums, row_sums = {}, {}
    for j = 0, 3 do col_sums[j + 1] = vnorm(col(j), 1) end
    for i = 0, 2 do row_sums[i + 1] = vnorm(row(i), 1) end
    local function extreme(t, f) local e = t[1] for _, v in ipairs(t) do e = f(e, v) end return e end
    H.check(luda.linalg.norm(x, "fro"), H.of(vnorm(h.data, 2)), ok, "fro")
    H.check(luda.linalg.norm(x, 1), H.of(extreme(col_sums, math.max)), ok, "matrix 1")
    H.check(luda.linalg.norm(x, -1), H.of(extreme(col_sums, math.min)), ok, "matrix -1")
    H.check(luda.linalg.norm(x, math.huge), H.of(extreme(row_sums, math.max)), ok, "matrix inf")
    H.check(luda.linalg.norm(x.T, math.huge), H.of(extreme(col_sums, math.max)), ok, "matrix inf of a transpose")
    H.check(luda.linalg.norm(x, -math.huge, { 2, 1 }), H.of(extreme(col_sums, math.min)), ok, "axes swapped")
    H.check(luda.linalg.norm(x, "fro", { 1, 2 }, { keepdims = true }), { shape = { 1, 1 }, data = { vnorm(h.data, 2) } }, ok)
    assert.are.equal("float32", luda.linalg.norm(x:astype("float32")).dtype)
    assert.are.equal("float64", luda.linalg.norm(luda.arange(4)).dtype)
    H.raises("norm: Invalid norm order 'fro' for vectors", function() return luda.linalg.norm(x, "fro", 1) end)
  end)

  on_devices("raises numpy.linalg's errors", function()
    H.raises("inv: Singular matrix", function() return luda.linalg.inv(luda.ones({ 3, 3 })) end)
    H.raises("solve: Singular matrix", function() return luda.linalg.solve(luda.zeros({ 2, 2 }), luda.ones(2)) end)
    H.raises("cholesky: Matrix is not positive definite", function() return luda.linalg.cholesky(luda.array({ { 1, 2 }, { 2, 1 } })) end)
    H.raises("det: 1-dimensional array given. Array must be at least two-dimensional", function() return luda.linalg.det(luda.ones(3)) end)
    H.raises("inv: Last 2 dimensions of the array must be square, got shape (2, 3)", function() return luda.linalg.inv(luda.ones({ 2, 3 })) end)
    H.raises("solve: b of shape (3,) does not fit a of shape (2, 2): it needs 2 rows", function() return luda.linalg.solve(luda.ones({ 2, 2 }), luda.ones(3)) end)
    -- singular, then usable
    H.check(luda.linalg.det(luda.ones({ 2, 2 })), H.of(0), H.exact, "det of a singular matrix")
  end)
end)

-- ---- qr, eigh, svd, lstsq, pinv, matrix_rank and the singular-value norms ----------------
-- Checked against what defines them, in plain Lua over float64: Q R = a with Q orthonormal
-- and R upper triangular; a v = w v with v orthonormal and w ascending; U diag(S) Vh = a
-- with U and V orthonormal and S descending; eigenvalues and singular values against a
-- Jacobi eigenvalue iteration written here; lstsq and pinv against NumPy's answers stored
-- by tests/lua/linalg_numpy.py.
local numpy = require "linalg_numpy"

-- Matrix s (0-based) of a host stack of r x c matrices, as a row-major list.
local function nth(h, s, r, c)
  local out = {}
  for k = 1, r * c do out[k] = h.data[s * r * c + k] end
  return out
end
local function mul(a, b, r, p, c)  -- (r x p) times (p x c)
  local out = {}
  for i = 0, r - 1 do
    for j = 0, c - 1 do
      local acc = 0
      for k = 0, p - 1 do acc = acc + a[i * p + k + 1] * b[k * c + j + 1] end
      out[i * c + j + 1] = acc
    end
  end
  return out
end
local function transposed(a, r, c)
  local out = {}
  for i = 0, r - 1 do for j = 0, c - 1 do out[j * r + i + 1] = a[i * c + j + 1] end end
  return out
end
local function max_diff(x, y)
  local d = 0
  for k = 1, #x do d = math.max(d, math.abs(x[k] - y[k])) end
  return d
end
local function max_abs(x)
  local d = 0
  for k = 1, #x do d = math.max(d, math.abs(x[k])) end
  return d
end
-- The largest |Q^T Q - I| of an r x c matrix whose columns should be orthonormal.
local function orthonormality(q, r, c)
  local g = mul(transposed(q, r, c), q, c, r, c)
  for i = 0, c - 1 do g[i * c + i + 1] = g[i * c + i + 1] - 1 end
  return max_abs(g)
end
-- The eigenvalues of a symmetric n x n matrix, ascending, by cyclic Jacobi rotations.
local function jacobi_eigenvalues(a, n)
  local m = { table.unpack(a) }
  local function at(i, j) return m[i * n + j + 1] end
  for _ = 1, 100 do
    local off = 0
    for i = 0, n - 1 do for j = 0, n - 1 do if i ~= j then off = off + at(i, j) ^ 2 end end end
    if off < 1e-30 * (1 + max_abs(m) ^ 2) then break end
    for p = 0, n - 2 do
      for q = p + 1, n - 1 do
        if at(p, q) ~= 0 then
          local theta = (at(q, q) - at(p, p)) / (2 * at(p, q))
          local t = (theta >= 0 and 1 or -1) / (math.abs(theta) + math.sqrt(theta * theta + 1))
          local c = 1 / math.sqrt(t * t + 1)
          local sn = t * c
          for k = 0, n - 1 do  -- columns p and q
            local kp, kq = at(k, p), at(k, q)
            m[k * n + p + 1], m[k * n + q + 1] = c * kp - sn * kq, sn * kp + c * kq
          end
          for k = 0, n - 1 do  -- rows p and q
            local pk, qk = at(p, k), at(q, k)
            m[p * n + k + 1], m[q * n + k + 1] = c * pk - sn * qk, sn * pk + c * qk
          end
        end
      end
    end
  end
  local w = {}
  for i = 0, n - 1 do w[i + 1] = at(i, i) end
  table.sort(w)
  return w
end
-- The singular values of an r x c matrix, descending: the square roots of A^T A's
-- eigenvalues (or A A^T's, the smaller).
local function singular_values(a, r, c)
  local g = r >= c and mul(transposed(a, r, c), a, c, r, c) or mul(a, transposed(a, r, c), r, c, r)
  local w = jacobi_eigenvalues(g, math.min(r, c))
  local s = {}
  for i = #w, 1, -1 do s[#s + 1] = math.sqrt(math.max(w[i], 0)) end
  return s
end

local TOL = { float64 = 1e-12, float32 = 4e-5 }
local function shape_of(x) return "(" .. table.concat(x.shape, ", ") .. ")" end
local function stack_of(shape) return { table.unpack(shape, 1, #shape - 2) } end
local function with_tail(stack, ...)
  local s = { table.unpack(stack) }
  for _, e in ipairs({ ... }) do s[#s + 1] = e end
  return s
end

-- Every mode of qr on `a` (host data h), matrix by matrix.
local function check_qr(a, h, dtype, what)
  local m, n = h.shape[#h.shape - 1], h.shape[#h.shape]
  local k, stack = math.min(m, n), stack_of(h.shape)
  local tol = TOL[dtype] * math.max(m, n)
  local reduced
  for _, mode in ipairs({ "reduced", "complete", "r" }) do
    local q, r = luda.linalg.qr(a, mode)
    if mode == "r" then q, r = nil, q end
    local rows, cols = mode == "complete" and m or k, mode == "complete" and m or k
    local w = what .. " mode " .. mode
    assert.are.same(with_tail(stack, rows, n), r.shape, w .. " R's shape")
    assert.are.equal(dtype, r.dtype, w)
    local hr = H.read(r)
    if mode == "reduced" then reduced = hr end
    if mode == "r" then assert(max_diff(hr.data, reduced.data) <= tol, w .. ": R differs from the reduced mode's") end
    local hq = q and H.read(q)
    if q then assert.are.same(with_tail(stack, m, cols), q.shape, w .. " Q's shape") end
    for s = 0, H.size_of(stack) - 1 do
      local A, R = nth(h, s, m, n), nth(hr, s, rows, n)
      for i = 0, rows - 1 do
        for j = 0, math.min(i, n) - 1 do assert.are.equal(0, R[i * n + j + 1], w .. " R below the diagonal") end
      end
      if q then
        local Q = nth(hq, s, m, cols)
        local o = orthonormality(Q, m, cols)
        assert(o <= tol, ("%s: Q^T Q is off the identity by %g"):format(w, o))
        local d = max_diff(mul(Q, R, m, cols, n), A)
        assert(d <= tol, ("%s: Q R is off a by %g"):format(w, d))
      end
    end
  end
end

-- eigh and eigvalsh of `a`, whose `uplo` triangle holds the symmetric matrices `sym`.
local function check_eigh(a, sym, uplo, dtype, what)
  local n, stack = sym.shape[#sym.shape], stack_of(sym.shape)
  local w, v = luda.linalg.eigh(a, uplo)
  assert.are.same(with_tail(stack, n), w.shape, what)
  assert.are.same(with_tail(stack, n, n), v.shape, what)
  assert.are.equal(dtype, w.dtype, what)
  local hw, hv, hvals = H.read(w), H.read(v), H.read(luda.linalg.eigvalsh(a, uplo))
  for s = 0, H.size_of(stack) - 1 do
    local A, V, W = nth(sym, s, n, n), nth(hv, s, n, n), nth(hw, s, n, 1)
    local scale = math.max(1, max_abs(A)) * n
    local tol = TOL[dtype] * scale
    for i = 2, n do assert(W[i - 1] <= W[i], what .. ": eigenvalues not ascending") end
    local want = jacobi_eigenvalues(A, n)
    assert(max_diff(W, want) <= tol, ("%s: eigenvalues off by %g"):format(what, max_diff(W, want)))
    assert(max_diff(nth(hvals, s, n, 1), W) <= tol, what .. ": eigvalsh differs from eigh")
    local AV, VW = mul(A, V, n, n, n), {}
    for i = 0, n - 1 do for j = 0, n - 1 do VW[i * n + j + 1] = V[i * n + j + 1] * W[j + 1] end end
    assert(max_diff(AV, VW) <= tol, ("%s: a v - v w is %g"):format(what, max_diff(AV, VW)))
    assert(orthonormality(V, n, n) <= tol, what .. ": eigenvectors not orthonormal")
  end
end

-- svd of `a` (host data h), thin and full, and its singular values alone.
local function check_svd(a, h, dtype, what)
  local m, n = h.shape[#h.shape - 1], h.shape[#h.shape]
  local k, stack = math.min(m, n), stack_of(h.shape)
  for _, full in ipairs({ true, false }) do
    local w = what .. (full and " full" or " thin")
    local u, s, vh = luda.linalg.svd(a, { full_matrices = full })
    local uc, vr = full and m or k, full and n or k
    assert.are.same(with_tail(stack, m, uc), u.shape, w .. " U")
    assert.are.same(with_tail(stack, k), s.shape, w .. " S")
    assert.are.same(with_tail(stack, vr, n), vh.shape, w .. " Vh")
    assert.are.equal(dtype, s.dtype, w)
    local hu, hs, hvh = H.read(u), H.read(s), H.read(vh)
    local values = H.read(luda.linalg.svd(a, { compute_uv = false }))
    for i = 0, H.size_of(stack) - 1 do
      local A, U, S, Vh = nth(h, i, m, n), nth(hu, i, m, uc), nth(hs, i, k, 1), nth(hvh, i, vr, n)
      local want = singular_values(A, m, n)
      local tol = TOL[dtype] * math.max(1, want[1] or 0) * math.max(m, n)
      for j = 1, k do
        assert(S[j] >= 0 and (j == 1 or S[j] <= S[j - 1]), w .. ": singular values not descending")
        -- squared, as the reference has them (its square roots of rounding-sized
        -- eigenvalues are not the singular values' accuracy)
        local d = math.abs(S[j] ^ 2 - want[j] ^ 2)
        assert(d <= tol * math.max(1, want[1]), ("%s: singular value %d is %.17g, expected %.17g"):format(w, j, S[j], want[j]))
      end
      assert(max_diff(nth(values, i, k, 1), S) <= tol, w .. ": compute_uv = false gives other values")
      assert(orthonormality(U, m, uc) <= tol, w .. ": U not orthonormal")
      assert(orthonormality(transposed(Vh, vr, n), n, vr) <= tol, w .. ": Vh's rows not orthonormal")
      local US = {}  -- U[:, :k] diag(S)
      for r = 0, m - 1 do for c = 0, k - 1 do US[r * k + c + 1] = U[r * uc + c + 1] * S[c + 1] end end
      local d = max_diff(mul(US, { table.unpack(Vh, 1, k * n) }, m, k, n), A)
      assert(d <= tol, ("%s: U S Vh is off a by %g"):format(w, d))
    end
  end
end

-- A random symmetric stack (float32 values exact), and its ndarray with the other
-- triangle filled with noise the routine must not read.
local function symmetric(shape, dtype, uplo)
  local h = H.random(dtype, shape, -1, 1)
  local n = shape[#shape]
  local sym, noisy = { shape = shape, data = {} }, { shape = shape, data = {} }
  for s = 0, H.size_of(stack_of(shape)) - 1 do
    for i = 0, n - 1 do
      for j = 0, n - 1 do
        local lo, hi = math.max(i, j), math.min(i, j)
        local v = h.data[s * n * n + lo * n + hi + 1]
        local at = s * n * n + i * n + j + 1
        sym.data[at] = v
        local kept = (uplo == "L" and i >= j) or (uplo == "U" and i <= j)
        noisy.data[at] = kept and v or 7 + math.random()
      end
    end
  end
  return sym, H.to_array(noisy, dtype)
end

describe("luda.linalg factorizations", function()
  before_each(function() math.randomseed(1616) end)

  on_devices("qr as numpy.linalg.qr: every mode, stacks, transposes, empty matrices", function()
    for _, dtype in ipairs({ "float64", "float32" }) do
      for _, shape in ipairs({ { 5, 3 }, { 3, 5 }, { 4, 4 }, { 1, 1 }, { 6, 1 }, { 1, 6 }, { 2, 3, 5, 3 }, { 2, 3, 6 } }) do
        local h = H.random(dtype, shape, -1, 1)
        check_qr(H.to_array(h, dtype), h, dtype, dtype .. " " .. shape_text(shape))
      end
      local t = H.to_array(H.random(dtype, { 3, 6 }, -1, 1), dtype).T  -- 6 x 3, by columns
      check_qr(t, H.read(t), dtype, dtype .. " transposed")
      local strided = H.to_array(H.random(dtype, { 8, 7 }, -1, 1), dtype):slice("::2, 1::2")
      check_qr(strided, H.read(strided), dtype, dtype .. " strided")
    end
    local ints = H.integers({ 4, 3 }, -5, 5)
    local q, r = luda.linalg.qr(H.to_array(ints, "int32"))
    assert.are.same({ "float64", "float64" }, { q.dtype, r.dtype })
    check_qr(H.to_array(ints, "int32"), ints, "float64", "int32")
    -- Empty: NumPy's shapes; a complete Q of no columns' reflectors is the identity.
    for _, c in ipairs({ { { 0, 3 }, { 0, 0 }, { 0, 3 }, { 0, 0 }, { 0, 3 } }, { { 3, 0 }, { 3, 0 }, { 0, 0 }, { 3, 3 }, { 3, 0 } },
                         { { 2, 0, 3 }, { 2, 0, 0 }, { 2, 0, 3 }, { 2, 0, 0 }, { 2, 0, 3 } } }) do
      local a = luda.zeros(c[1])
      local q1, r1 = luda.linalg.qr(a)
      local q2, r2 = luda.linalg.qr(a, "complete")
      assert.are.same({ c[2], c[3], c[4], c[5] }, { q1.shape, r1.shape, q2.shape, r2.shape }, shape_text(c[1]))
    end
    H.check(luda.linalg.qr(luda.zeros({ 3, 0 }), "complete"), H.of({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }), H.exact)
  end)

  on_devices("qr of complex64 and complex128 matrices: Q unitary, Q R = a, every mode", function()
    local tall = { { 1, 2 }, { 0, -1 }, { 3, 0 }, { 2, 2 }, { -1, 1 }, { 0, 4 }, { 1, 0 }, { 5, -3 }, { 2, 1 },
                   { 0, 0 }, { 1, -2 }, { -3, 1 } }  -- 4 x 3
    for _, dtype in ipairs({ "complex64", "complex128" }) do
      local tol = dtype == "complex128" and 1e-12 or 1e-4
      for _, shape in ipairs({ { 4, 3 }, { 3, 4 } }) do
        local m, n = shape[1], shape[2]
        local a = to_complex(tall, shape, dtype)
        local ha = pairs_of(a)
        for _, mode in ipairs({ "reduced", "complete" }) do
          local what = ("%s %dx%d %s"):format(dtype, m, n, mode)
          local q, r = luda.linalg.qr(a, mode)
          assert.are.equal(dtype, q.dtype, what)
          assert.are.equal(dtype, r.dtype, what)
          local k = q.shape[2]
          assert.are.same({ m, k }, q.shape, what)
          assert.are.same({ k, n }, r.shape, what)
          local hq, hr = pairs_of(q), pairs_of(r)
          for i = 0, k - 1 do
            for j = 0, math.min(i, n) - 1 do assert.are.same({ 0, 0 }, hr[i * n + j + 1], what .. " R below the diagonal") end
          end
          local eye = {}
          for e = 0, k * k - 1 do eye[e + 1] = { e // k == e % k and 1 or 0, 0 } end
          check_pairs(cmat_mul(cadjoint(hq, m, k), hq, k, m, k), eye, tol * 10, what .. " Q^H Q")
          check_pairs(cmat_mul(hq, hr, m, k, n), ha, tol * 100, what .. " Q R")
        end
        local r = luda.linalg.qr(a, "r")
        check_pairs(pairs_of(r), pairs_of(select(2, luda.linalg.qr(a))), 0, dtype .. " mode r")
      end
      -- a stack: each matrix as on its own
      local a = to_complex(tall, { 4, 3 }, dtype)
      local qs, rs = luda.linalg.qr(luda.stack({ a, a * luda.complex(0, 1) }))
      assert.are.same({ 2, 4, 3 }, qs.shape)
      check_pairs(cmat_mul(pairs_of(qs[1]), pairs_of(rs[1]), 4, 3, 3), pairs_of(a * luda.complex(0, 1)), tol * 100,
                  dtype .. " qr of a stack")
    end
  end)

  on_devices("eigh and eigvalsh as numpy.linalg's: one triangle read, ascending, stacks", function()
    for _, dtype in ipairs({ "float64", "float32" }) do
      for _, shape in ipairs({ { 1, 1 }, { 4, 4 }, { 9, 9 }, { 3, 5, 5 } }) do
        for _, uplo in ipairs({ "L", "U" }) do
          local sym, a = symmetric(shape, dtype, uplo)
          check_eigh(a, sym, uplo, dtype, dtype .. " " .. shape_text(shape) .. " UPLO " .. uplo)
        end
      end
      local sym, a = symmetric({ 5, 5 }, dtype, "U")
      check_eigh(a.T, sym, "L", dtype, dtype .. " transposed")  -- the upper triangle of a is the lower of a.T
    end
    local sym = { shape = { 2, 2 }, data = { 2, 1, 1, 2 } }
    check_eigh(luda.array({ { 2, 1 }, { 1, 2 } }, "int64"), sym, "l", "float64", "int64, UPLO in lower case")
    local w, v = luda.linalg.eigh(luda.zeros({ 2, 0, 0 }))
    assert.are.same({ { 2, 0 }, { 2, 0, 0 } }, { w.shape, v.shape })
    assert.are.same({ 0 }, luda.linalg.eigvalsh(luda.zeros({ 0, 0 })).shape)
  end)

  on_devices("eigh and eigvalsh of complex64 and complex128 Hermitian matrices", function()
    local hb = { { 1, 2 }, { 0, -1 }, { 3, 0 }, { 2, 2 }, { -1, 1 }, { 0, 4 }, { 1, 0 }, { 5, -3 }, { 2, 1 },
                 { 0, 0 }, { 1, -2 }, { -3, 1 }, { 2, 0 }, { 1, 1 }, { -2, -1 }, { 0, 3 } }
    local n = 4
    local hh = {}  -- b + b^H: Hermitian
    local bh = cadjoint(hb, n, n)
    for k = 1, n * n do hh[k] = { hb[k][1] + bh[k][1], hb[k][2] + bh[k][2] } end
    local trace = 0
    for i = 0, n - 1 do trace = trace + hh[i * n + i + 1][1] end
    for _, dtype in ipairs({ "complex64", "complex128" }) do
      local tol = dtype == "complex128" and 1e-12 or 1e-4
      local real = dtype == "complex128" and "float64" or "float32"
      for _, uplo in ipairs({ "L", "U" }) do
        local what = dtype .. " UPLO=" .. uplo
        -- the other triangle holds junk, which is not read
        local given = {}
        for k = 0, n * n - 1 do
          local i, j = k // n, k % n
          given[k + 1] = ((uplo == "L" and j > i) or (uplo == "U" and i > j)) and { 50, -9 } or hh[k + 1]
        end
        local a = to_complex(given, { n, n }, dtype)
        local w, v = luda.linalg.eigh(a, uplo)
        assert.are.equal(real, w.dtype, what)
        assert.are.equal(dtype, v.dtype, what)
        local hw, hv = w:totable(), pairs_of(v)
        local sum = 0
        for i = 1, n do
          sum = sum + hw[i]
          if i > 1 then assert(hw[i - 1] <= hw[i], what .. " ascending") end
        end
        assert(math.abs(sum - trace) <= tol * 100, what .. " sum of the eigenvalues")
        local vw = {}
        for k = 0, n * n - 1 do vw[k + 1] = { hv[k + 1][1] * hw[k % n + 1], hv[k + 1][2] * hw[k % n + 1] } end
        check_pairs(cmat_mul(hh, hv, n, n, n), vw, tol * 200, what .. " a v = v diag(w)")
        local eye = {}
        for k = 0, n * n - 1 do eye[k + 1] = { k // n == k % n and 1 or 0, 0 } end
        check_pairs(cmat_mul(cadjoint(hv, n, n), hv, n, n, n), eye, tol * 10, what .. " V^H V")
        local wv = luda.linalg.eigvalsh(a, uplo)
        assert.are.equal(real, wv.dtype, what)
        for i = 1, n do assert(math.abs(wv:totable()[i] - hw[i]) <= tol * 100, what .. " eigvalsh") end
      end
      -- a stack: the second matrix -a, eigenvalues negated and reversed
      local a = to_complex(hh, { n, n }, dtype)
      local ws = luda.linalg.eigvalsh(luda.stack({ a, -a })):totable()
      for i = 1, n do assert(math.abs(ws[2][i] + ws[1][n + 1 - i]) <= tol * 100, dtype .. " eigvalsh of a stack") end
    end
  end)

  on_devices("svd as numpy.linalg.svd: thin and full, tall and wide, stacks, empty matrices", function()
    for _, dtype in ipairs({ "float64", "float32" }) do
      -- 40 columns and more: what a GPU gives cuSOLVER's polar-decomposition SVD, after a
      -- QR (90 x 40) or alone (50 x 40)
      for _, shape in ipairs({ { 6, 3 }, { 3, 6 }, { 4, 4 }, { 1, 1 }, { 5, 1 }, { 1, 5 }, { 12, 3 }, { 3, 12 },
                               { 7, 5 }, { 2, 2, 5, 3 }, { 2, 3, 8 }, { 90, 40 }, { 50, 40 }, { 40, 45 } }) do
        local h = H.random(dtype, shape, -1, 1)
        check_svd(H.to_array(h, dtype), h, dtype, dtype .. " " .. shape_text(shape))
      end
      local t = H.to_array(H.random(dtype, { 3, 9 }, -1, 1), dtype).T
      check_svd(t, H.read(t), dtype, dtype .. " transposed")
    end
    -- Rank-deficient: the zero singular values come out zero to rounding.
    local h = { shape = { 6, 4 }, data = {} }
    for i = 0, 5 do for j = 0, 3 do h.data[i * 4 + j + 1] = (i + 1) * (j % 2 + 1) + (j == 3 and i or 0) end end
    check_svd(H.to_array(h, "float64"), h, "float64", "rank 2")
    local ints = H.integers({ 3, 4 }, -9, 9)
    assert.are.equal("float64", luda.linalg.svdvals(H.to_array(ints, "int16")).dtype)
    H.check(luda.linalg.svdvals(H.to_array(ints, "int16")), H.of(singular_values(ints.data, 3, 4)), H.rel(1e-12, 1))
    -- Empty: NumPy's shapes, identities where full_matrices asks for a square factor.
    local u, s, vh = luda.linalg.svd(luda.zeros({ 3, 0 }))
    assert.are.same({ { 3, 3 }, { 0 }, { 0, 0 } }, { u.shape, s.shape, vh.shape })
    H.check(u, H.of({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }), H.exact, "U of a 3 x 0 matrix")
    u, s, vh = luda.linalg.svd(luda.zeros({ 2, 0, 3 }), { full_matrices = false })
    assert.are.same({ { 2, 0, 0 }, { 2, 0 }, { 2, 0, 3 } }, { u.shape, s.shape, vh.shape })
  end)

  -- Twelve Gaussian integers, the elements of the complex svd, lstsq and pinv cases, and
  -- the k x k identity as {re, im} pairs.
  local COMPLEX_12 = { { 1, 2 }, { 0, -1 }, { 3, 0 }, { 2, 2 }, { -1, 1 }, { 0, 4 }, { 1, 0 }, { 5, -3 }, { 2, 1 },
                       { 0, 0 }, { 1, -2 }, { -3, 1 } }
  local function identity(k)
    local eye = {}
    for e = 0, k * k - 1 do eye[e + 1] = { e // k == e % k and 1 or 0, 0 } end
    return eye
  end

  on_devices("svd of complex64 and complex128 matrices: U S V^H = a, tall and wide, thin and full", function()
    local h = COMPLEX_12
    for _, dtype in ipairs({ "complex64", "complex128" }) do
      local tol = dtype == "complex128" and 1e-12 or 1e-4
      local real = dtype == "complex128" and "float64" or "float32"
      for _, shape in ipairs({ { 4, 3 }, { 3, 4 } }) do
        local m, n = shape[1], shape[2]
        local k = math.min(m, n)
        local a = to_complex(h, shape, dtype)
        local ha = pairs_of(a)
        for _, full in ipairs({ false, true }) do
          local what = ("%s %dx%d full=%s"):format(dtype, m, n, tostring(full))
          local u, sv, vh = luda.linalg.svd(a, { full_matrices = full })
          assert.are.equal(real, sv.dtype, what)
          assert.are.equal(dtype, u.dtype, what)
          assert.are.equal(dtype, vh.dtype, what)
          local uc, vr = full and m or k, full and n or k
          assert.are.same({ m, uc }, u.shape, what)
          assert.are.same({ vr, n }, vh.shape, what)
          local hu, hs, hv = pairs_of(u), sv:totable(), pairs_of(vh)
          for i = 2, k do assert(hs[i - 1] >= hs[i], what .. " descending") end
          check_pairs(cmat_mul(cadjoint(hu, m, uc), hu, uc, m, uc), identity(uc), tol * 10, what .. " U^H U")
          check_pairs(cmat_mul(hv, cadjoint(hv, vr, n), vr, n, vr), identity(vr), tol * 10, what .. " Vh Vh^H")
          -- U[:, :k] diag(S) Vh[:k, :]
          local us, vk = {}, {}
          for i = 0, m - 1 do
            for j = 0, k - 1 do
              local z = hu[i * uc + j + 1]
              us[i * k + j + 1] = { z[1] * hs[j + 1], z[2] * hs[j + 1] }
            end
          end
          for i = 0, k * n - 1 do vk[i + 1] = hv[i + 1] end
          check_pairs(cmat_mul(us, vk, m, k, n), ha, tol * 100, what .. " U S Vh")
        end
        local hs = luda.linalg.svd(a, { compute_uv = false }):totable()
        local ws = luda.linalg.svdvals(a):totable()
        local _, sv = luda.linalg.svd(a)
        for i = 1, k do
          assert(math.abs(hs[i] - sv:totable()[i]) <= tol * 100, dtype .. " singular values alone")
          assert(math.abs(ws[i] - hs[i]) <= tol * 100, dtype .. " svdvals")
        end
      end
      -- a stack; the singular values of i a are a's
      local a = to_complex(h, { 4, 3 }, dtype)
      local s2 = luda.linalg.svdvals(luda.stack({ a, a * luda.complex(0, 1) })):totable()
      for i = 1, 3 do assert(math.abs(s2[1][i] - s2[2][i]) <= tol * 100, dtype .. " svdvals of a stack") end
      assert.are.equal(3, luda.linalg.matrix_rank(a):item())
    end
  end)

  on_devices("lstsq and pinv of complex64 and complex128 matrices", function()
    local h = COMPLEX_12
    local hb = { { 1, 0 }, { 0, 1 }, { 2, -1 }, { -3, 2 }, { 0, 0 }, { 1, 1 }, { 5, 0 }, { 0, -4 } }
    for _, dtype in ipairs({ "complex64", "complex128" }) do
      local tol = dtype == "complex128" and 1e-12 or 1e-4
      local real = dtype == "complex128" and "float64" or "float32"
      for _, shape in ipairs({ { 4, 3 }, { 3, 4 } }) do
        local m, n = shape[1], shape[2]
        local what = ("%s %dx%d"):format(dtype, m, n)
        local a = to_complex(h, shape, dtype)
        local ha = pairs_of(a)
        -- pinv: a p a = a, and p a = I for full column rank (a tall)
        local p = luda.linalg.pinv(a)
        assert.are.equal(dtype, p.dtype, what)
        assert.are.same({ n, m }, p.shape, what)
        local hp = pairs_of(p)
        check_pairs(cmat_mul(cmat_mul(ha, hp, m, n, m), ha, m, m, n), ha, tol * 100, what .. " a pinv(a) a")
        if m > n then check_pairs(cmat_mul(hp, ha, n, m, n), identity(n), tol * 100, what .. " pinv(a) a") end
        -- lstsq: the normal equations a^H (a x - b) = 0; residuals |b - a x|^2 when tall
        local b = to_complex({ table.unpack(hb, 1, m * 2) }, { m, 2 }, dtype)
        local x, residuals, rank, sv = luda.linalg.lstsq(a, b)
        assert.are.equal(dtype, x.dtype, what)
        assert.are.same({ n, 2 }, x.shape, what)
        assert.are.equal(real, sv.dtype, what)
        assert.are.equal(real, residuals.dtype, what)
        assert.are.equal(math.min(m, n), rank, what)
        local hx = pairs_of(x)
        local ax = cmat_mul(ha, hx, m, n, 2)
        local r = {}
        for k = 1, m * 2 do r[k] = csub(ax[k], pairs_of(b)[k]) end
        local zeros = {}
        for k = 1, n * 2 do zeros[k] = { 0, 0 } end
        check_pairs(cmat_mul(cadjoint(ha, m, n), r, n, m, 2), zeros, tol * 1000, what .. " normal equations")
        if m > n then
          local hr = residuals:totable()
          for j = 0, 1 do
            local want = 0
            for i = 0, m - 1 do want = want + r[i * 2 + j + 1][1] ^ 2 + r[i * 2 + j + 1][2] ^ 2 end
            assert(math.abs(hr[j + 1] - want) <= tol * 1000 * (1 + want), what .. " residuals")
          end
        else
          assert.are.same({ 0 }, residuals.shape, what)
        end
      end
    end
  end)

  on_devices("lstsq as numpy.linalg.lstsq, against NumPy's answers", function()
    for _, dtype in ipairs({ "float64", "float32" }) do
      for _, c in ipairs(numpy.lstsq) do
        local m, n = c.a.shape[1], c.a.shape[2]
        local deficient = c.rank < math.min(m, n)
        -- float32's default cutoff is float32's epsilon (NumPy computes in float64): only
        -- an explicit rcond decides a float32 rank the same way.
        if dtype == "float64" or not deficient or c.rcond then
          local what = dtype .. " " .. c.name
          local x, residuals, rank, s = luda.linalg.lstsq(H.to_array(c.a, dtype), H.to_array(c.b, dtype), c.rcond)
          assert.are.same({ dtype, dtype, dtype }, { x.dtype, residuals.dtype, s.dtype }, what)
          assert.are.equal(c.rank, rank, what .. ": rank")
          assert.are.equal("integer", math.type(rank), what)
          local tol = dtype == "float64" and 1e-10 or 1e-4
          H.check(x, c.x, H.rel(tol, 1), what .. ": x")
          H.check(residuals, c.residuals, H.rel(tol, 1), what .. ": residuals")
          H.check(s, c.s, H.rel(tol, 1), what .. ": s")
        end
      end
    end
    -- The normal equations a^T (a x - b) = 0 of a full-rank system, in plain Lua.
    local ha, hb = H.random("float64", { 9, 4 }, -1, 1), H.random("float64", { 9, 2 }, -1, 1)
    local x = H.read((luda.linalg.lstsq(H.to_array(ha, "float64"), H.to_array(hb, "float64"))))
    local r = mul(ha.data, x.data, 9, 4, 2)
    for k = 1, #r do r[k] = r[k] - hb.data[k] end
    assert(max_abs(mul(transposed(ha.data, 9, 4), r, 4, 9, 2)) <= 1e-12, "a^T (a x - b) is not 0")
    -- A transposed a and a strided b: the same answer as their contiguous copies.
    local at = H.to_array(H.random("float64", { 4, 9 }, -1, 1), "float64").T
    local bs = H.to_array(H.random("float64", { 9, 6 }, -1, 1), "float64"):slice(":, ::3")
    local x1, r1 = luda.linalg.lstsq(at, bs)
    local x2, r2 = luda.linalg.lstsq(at:copy(), bs:copy())
    H.check(x1, H.read(x2), H.rel(1e-12, 1), "lstsq of a transposed a")
    H.check(r1, H.read(r2), H.rel(1e-12, 1), "lstsq residuals of a transposed a")
    H.check(luda.linalg.pinv(at), H.read(luda.linalg.pinv(at:copy())), H.rel(1e-12, 1), "pinv of a transposed a")
    -- Empty systems as NumPy's.
    local e, res, rank, s = luda.linalg.lstsq(luda.random.random({ 3, 0 }), luda.full({ 3, 2 }, 2))
    assert.are.same({ { 0, 2 }, { 0 }, 0 }, { e.shape, s.shape, rank })
    H.check(res, H.of({ 12, 12 }), H.exact, "residuals of a 3 x 0 system")
    e, res, rank = luda.linalg.lstsq(luda.random.random({ 0, 2 }), luda.ones({ 0, 3 }))
    H.check(e, H.of({ { 0, 0, 0 }, { 0, 0, 0 } }), H.exact, "x of a 0 x 2 system")
    assert.are.same({ { 0 }, 0 }, { res.shape, rank })
    e, res = luda.linalg.lstsq(luda.random.random({ 3, 2 }), luda.ones({ 3, 0 }))
    assert.are.same({ { 2, 0 }, { 0 } }, { e.shape, res.shape })
  end)

  on_devices("pinv and matrix_rank as numpy.linalg's", function()
    for _, dtype in ipairs({ "float64", "float32" }) do
      local tol = dtype == "float64" and 1e-10 or 1e-4
      for _, c in ipairs(numpy.pinv) do
        -- float32 computes in float32, where NumPy's default cutoff (1e-15) keeps the
        -- rounding-sized singular values of a rank-deficient matrix: only cutoffs given
        -- decide alike.
        if dtype == "float64" or c.rcond or not c.name:match("^rank") then
          H.check(luda.linalg.pinv(H.to_array(c.a, dtype), c.rcond), c.pinv, H.rel(tol, 1), dtype .. " " .. c.name)
        end
      end
      -- a pinv(a) a = a, on a stack
      local h = H.random(dtype, { 2, 5, 3 }, -1, 1)
      local p = H.read(luda.linalg.pinv(H.to_array(h, dtype)))
      assert.are.same({ 2, 3, 5 }, p.shape)
      for s = 0, 1 do
        local A, P = nth(h, s, 5, 3), nth(p, s, 3, 5)
        assert(max_diff(mul(mul(A, P, 5, 3, 5), A, 5, 5, 3), A) <= tol * 10, dtype .. ": a pinv(a) a ~= a")
      end
    end
    local last = numpy.pinv[#numpy.pinv]
    local a = H.to_array(last.a, "float64")
    H.check(luda.linalg.pinv(a, nil, { rtol = last.rcond }), last.pinv, H.rel(1e-12, 1), "rtol as rcond")
    assert.are.same({ 2, 4, 0 }, luda.linalg.pinv(luda.zeros({ 2, 0, 4 })).shape)
    -- matrix_rank: products of r rank-one terms have rank r.
    local function rank_r(m, n, r)
      local h = { shape = { m, n }, data = {} }
      for k = 1, m * n do h.data[k] = 0 end
      for _ = 1, r do
        local u, v = H.integers({ m }, -4, 4).data, H.integers({ n }, -4, 4).data
        for i = 0, m - 1 do for j = 0, n - 1 do h.data[i * n + j + 1] = h.data[i * n + j + 1] + u[i + 1] * v[j + 1] end end
      end
      return h
    end
    local stack = { shape = { 3, 6, 5 }, data = {} }
    for r = 1, 3 do for _, v in ipairs(rank_r(6, 5, r).data) do stack.data[#stack.data + 1] = v end end
    for _, dtype in ipairs({ "float64", "float32" }) do
      local ranks = luda.linalg.matrix_rank(H.to_array(stack, dtype))
      assert.are.equal("int64", ranks.dtype)
      H.check(ranks, H.of({ 1, 2, 3 }), H.exact, dtype .. " ranks of a stack")
      H.check(luda.linalg.matrix_rank(H.to_array(H.random(dtype, { 4, 7 }, -1, 1), dtype)), H.of(4), H.exact, dtype .. " full rank")
    end
    local d = luda.array({ { 4, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1e-3 } })
    H.check(luda.linalg.matrix_rank(d), H.of(3), H.exact, "default tolerance")
    H.check(luda.linalg.matrix_rank(d, 1e-2), H.of(2), H.exact, "tol")
    H.check(luda.linalg.matrix_rank(d, nil, { rtol = 0.5 }), H.of(1), H.exact, "rtol")
    H.check(luda.linalg.matrix_rank(luda.ones(3)), H.of(1), H.exact, "1-D")
    H.check(luda.linalg.matrix_rank(luda.zeros({ 3 })), H.of(0), H.exact, "1-D zeros")
    H.check(luda.linalg.matrix_rank(luda.zeros({ 0, 3 })), H.of(0), H.exact, "empty")
  end)

  on_devices("norm 2, -2 and 'nuc' from the singular values", function()
    local h = H.random("float64", { 2, 4, 3 }, -2, 2)
    local x = H.to_array(h, "float64")
    local tol = H.rel(1e-12, 1)
    local big, small, nuc = {}, {}, {}
    for s = 0, 1 do
      local sv = singular_values(nth(h, s, 4, 3), 4, 3)
      big[s + 1], small[s + 1], nuc[s + 1] = sv[1], sv[3], sv[1] + sv[2] + sv[3]
    end
    H.check(luda.linalg.norm(x, 2, { 2, 3 }), H.of(big), tol, "ord 2")
    H.check(luda.linalg.norm(x, -2, { 2, 3 }), H.of(small), tol, "ord -2")
    H.check(luda.linalg.norm(x, "nuc", { 2, 3 }), H.of(nuc), tol, "nuc")
    H.check(luda.linalg.norm(x, 2, { 3, 2 }), H.of(big), tol, "axes swapped")
    H.check(luda.linalg.norm(x, "nuc", { 2, 3 }, { keepdims = true }), { shape = { 2, 1, 1 }, data = nuc }, tol, "keepdims")
    local m = H.to_array({ shape = { 4, 3 }, data = nth(h, 0, 4, 3) }, "float32")
    assert.are.equal("float32", luda.linalg.norm(m, 2).dtype)
    H.check(luda.linalg.norm(m, 2), H.of(big[1]), H.rel(1e-5), "float32 ord 2")
    H.check(luda.linalg.norm(luda.ones({ 2, 0 }), 2), H.of(0), H.exact, "ord 2 of an empty matrix")
    H.check(luda.linalg.norm(luda.ones({ 2, 0 }), "nuc"), H.of(0), H.exact, "nuc of an empty matrix")
  end)

  on_devices("raises numpy.linalg's errors for the factorizations", function()
    H.raises("svd: 1-dimensional array given. Array must be at least two-dimensional", function() return luda.linalg.svd(luda.ones(3)) end)
    H.raises("qr: 1-dimensional array given. Array must be at least two-dimensional", function() return luda.linalg.qr(luda.ones(3)) end)
    H.raises("eigh: Last 2 dimensions of the array must be square, got shape (2, 3)", function() return luda.linalg.eigh(luda.ones({ 2, 3 })) end)
    H.raises("eigvalsh: Last 2 dimensions of the array must be square, got shape (3, 2)", function() return luda.linalg.eigvalsh(luda.ones({ 3, 2 })) end)
    H.raises("eigh: UPLO argument must be 'L' or 'U', got 'X'", function() return luda.linalg.eigh(luda.eye(2), "X") end)
    H.raises("qr: Unrecognized mode 'full'", function() return luda.linalg.qr(luda.eye(2), "full") end)
    H.raises("lstsq: 3-dimensional array given. Array must be two-dimensional", function() return luda.linalg.lstsq(luda.ones({ 2, 3, 3 }), luda.ones({ 2, 3 })) end)
    H.raises("lstsq: Incompatible dimensions: a of shape (3, 3) has 3 rows, b of shape (4,) has 4", function() return luda.linalg.lstsq(luda.ones({ 3, 3 }), luda.ones(4)) end)
    H.raises("pinv: `rtol` and `rcond` can't be both set.", function() return luda.linalg.pinv(luda.eye(2), 0.1, { rtol = 0.1 }) end)
    H.raises("svd: unknown option 'hermitian'; expected full_matrices, compute_uv, stream", function() return luda.linalg.svd(luda.eye(2), { hermitian = true }) end)
    H.raises("svd: option 'full_matrices' must be a boolean, got 0", function() return luda.linalg.svd(luda.eye(2), { full_matrices = 0 }) end)
    local nan = luda.array({ { 0 / 0, 1 }, { 1, 1 } })
    H.raises("svd: SVD did not converge", function() return luda.linalg.svd(nan) end)
    H.raises("norm: SVD did not converge", function() return luda.linalg.norm(nan, 2) end)
    H.raises("lstsq: SVD did not converge in Linear Least Squares", function() return luda.linalg.lstsq(nan, luda.ones(2)) end)
    H.raises("qr: a call of LAPACK cannot be recorded in a graph yet", function() return luda.graph(function(x) return luda.linalg.qr(x) end, luda.eye(2)) end)
    -- usable after the errors
    H.check(luda.linalg.svdvals(luda.eye(2)), H.of({ 1, 1 }), H.exact)
  end)
end)

-- The benchmark's Lua part at small sizes on the cpu (bench/linalg.sh runs it at full size
-- on a GPU): it checks matmul's elements before it reports a figure.
describe("bench/linalg.lua --smoke", function()
  it("times every figure on the cpu", function()
    local source = os.getenv("LUDA_SOURCE_DIR") or "."
    local out, err, code = support.run_luda(support.quote(source .. "/bench/linalg.lua") .. " --smoke", nil, false,
                                            { LUDA_DEVICE = "cpu" })
    assert.are.same({ "", 0 }, { err, code })
    for _, key in ipairs({ "matmul_f32_256_ms", "dot_f32_128_cpu_ms", "matmul_small_us", "svd_f64_200x20_lapacke_ms",
                           "svd_f64_20x20_lapacke_ms", "qr_f64_200x20_ms", "eigh_f64_64_ms" }) do
      assert.is_truthy(out:find("\n@@ " .. key .. " %d"), out)
    end
    -- the factors' accuracy it reports
    for _, key in ipairs({ "svd_f64_200x20_lapacke_u_orth", "svd_f64_200x20_lapacke_v_orth", "svd_f64_200x20_lapacke_recon",
                           "qr_f64_200x20_recon", "eigh_f64_64_resid" }) do
      local v = tonumber(out:match("\n@@ " .. key .. " (%S+)"))
      assert(v and v < 1e-12, key .. " is " .. tostring(v))
    end
  end)
end)

-- The examples of docs/linalg.md run as written and print what their comments say.
describe("docs/linalg.md", function()
  it("runs its examples", function()
    local source = os.getenv("LUDA_SOURCE_DIR") or "."
    local text = support.read_file(source .. "/docs/linalg.md")
    local printed = { "^true\n", "^true\n4\t4\n$" }
    local n = 0
    for code in text:gmatch("```lua\n(.-)```") do
      n = n + 1
      local out, err, status = support.run_luda("-", code, false, { LUDA_DEVICE = "cpu" })
      assert.are.same({ "", 0 }, { err, status }, "example " .. n)
      assert.is_truthy(out:find(printed[n]), "example " .. n .. " printed " .. out)
    end
    assert.are.equal(#printed, n)
  end)
end)

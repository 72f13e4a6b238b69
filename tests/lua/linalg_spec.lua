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
    H.raises("norm: ord 2 of a matrix needs its singular values, which luda does not compute yet; the norms of a matrix it has are 'fro', 1, -1, inf and -inf", function() return luda.linalg.norm(x, 2) end)
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

-- The benchmark's Lua part at small sizes on the cpu (bench/linalg.sh runs it at full size
-- on a GPU): it checks matmul's elements before it reports a figure.
describe("bench/linalg.lua --smoke", function()
  it("times every figure on the cpu", function()
    local source = os.getenv("LUDA_SOURCE_DIR") or "."
    local out, err, code = support.run_luda(support.quote(source .. "/bench/linalg.lua") .. " --smoke", nil, false,
                                            { LUDA_DEVICE = "cpu" })
    assert.are.same({ "", 0 }, { err, code })
    for _, key in ipairs({ "matmul_f32_256_ms", "dot_f32_128_cpu_ms", "matmul_small_us" }) do
      assert.is_truthy(out:find("\n@@ " .. key .. " %d"), out)
    end
  end)
end)

-- The example at the top of docs/linalg.md runs as written.
describe("docs/linalg.md", function()
  it("runs its first example", function()
    local source = os.getenv("LUDA_SOURCE_DIR") or "."
    local text = support.read_file(source .. "/docs/linalg.md")
    local code = assert(text:match("```lua\n(.-)```"), "no lua block in docs/linalg.md")
    local out, err, status = support.run_luda("-", code, false, { LUDA_DEVICE = "cpu" })
    assert.are.same({ "", 0 }, { err, status })
    assert.is_truthy(out:find("^true\n"), out)
  end)
end)

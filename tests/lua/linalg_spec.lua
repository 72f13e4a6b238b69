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
end)

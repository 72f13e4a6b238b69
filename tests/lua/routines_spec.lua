-- NumPy's array routines (luda.concatenate, stack, hstack, vstack, squeeze, expand_dims,
-- flip, eye, identity, diag, tril, triu, x:ravel, x:flatten) against their definitions
-- written out in plain Lua over random data, with contiguous, transposed, strided,
-- reversed, 0-d, size-1 and empty operands, and NumPy's errors with their exact text.
local luda = require "luda"
local support = require "support"
local H = require "hostref"

local on_devices = support.device_tests(_ENV)

-- The element of host array h at 0-based index idx.
local function at(h, idx)
  local p = 0
  for d = 1, #h.shape do p = p * h.shape[d] + idx[d] end
  return h.data[p + 1]
end
-- A host array of `shape` whose element at idx is f(idx).
local function build(shape, f)
  return H.fill(shape, function(k) return f(#shape > 0 and H.unflatten(shape, k) or {}) end)
end

describe("array routines", function()
  before_each(function() math.randomseed(1616) end)

  on_devices("concatenate, stack, hstack and vstack join as NumPy's", function()
    for _, layout in ipairs(H.layouts("int32", -50, 50)) do
      local name, x = layout[1], layout[2]
      local hx = H.read(x)
      if #hx.shape > 0 then
        for axis = 1, #hx.shape do
          local y = H.to_array(H.random("float32", hx.shape, -4, 4), "float32")
          local hy = H.read(y)
          local got = luda.concatenate({ x, y, x }, axis)
          assert.are.equal("float64", got.dtype, name)  -- int32 and float32 promote to float64
          local n = hx.shape[axis]
          local shape = { table.unpack(hx.shape) }
          shape[axis] = 3 * n
          H.check(got, build(shape, function(idx)
            local i = { table.unpack(idx) }
            local part = i[axis] // math.max(n, 1)
            i[axis] = i[axis] % math.max(n, 1)
            return at(part == 1 and hy or hx, i)
          end), H.exact, name .. " concatenate axis " .. axis)
        end
      end
      for axis = 1, #hx.shape + 1 do
        local got = luda.stack({ x, x }, axis)
        local shape = { table.unpack(hx.shape) }
        table.insert(shape, axis, 2)
        H.check(got, build(shape, function(idx)
          local i = { table.unpack(idx) }
          table.remove(i, axis)
          return at(hx, i)
        end), H.exact, name .. " stack axis " .. axis)
      end
    end
    local v, w = luda.array({ 1, 2 }), luda.array({ 3, 4, 5 })
    H.check(luda.hstack({ v, w }), H.of({ 1, 2, 3, 4, 5 }), H.exact)
    H.check(luda.vstack({ w, w * 2 }), H.of({ { 3, 4, 5 }, { 6, 8, 10 } }), H.exact)
    local m = luda.arange(6):reshape(2, 3)
    H.check(luda.hstack({ m, m }), H.of({ { 0, 1, 2, 0, 1, 2 }, { 3, 4, 5, 3, 4, 5 } }), H.exact)
    H.check(luda.stack({ v, v }, -1), H.of({ { 1, 1 }, { 2, 2 } }), H.exact)
  end)

  on_devices("squeeze, expand_dims, flip, ravel and flatten", function()
    local h = H.random("float64", { 1, 3, 1, 4 }, -9, 9)
    local x = H.to_array(h, "float64")
    H.check(luda.squeeze(x), { shape = { 3, 4 }, data = h.data }, H.exact)
    H.check(x:squeeze({ 1, 3 }), { shape = { 3, 4 }, data = h.data }, H.exact)
    H.check(luda.squeeze(x, 1), { shape = { 3, 1, 4 }, data = h.data }, H.exact)
    H.check(luda.expand_dims(x, -1), { shape = { 1, 3, 1, 4, 1 }, data = h.data }, H.exact)
    H.check(luda.expand_dims(luda.array(7.0), 1), H.of({ 7 }), H.exact)
    for _, layout in ipairs(H.layouts("float64")) do
      local name, y = layout[1], layout[2]
      local hy = H.read(y)
      H.check(luda.flip(y), build(hy.shape, function(idx)
        local i = {}
        for d = 1, #idx do i[d] = hy.shape[d] - 1 - idx[d] end
        return at(hy, i)
      end), H.exact, name .. " flip")
      if #hy.shape > 0 then
        H.check(y:flip(#hy.shape), build(hy.shape, function(idx)
          local i = { table.unpack(idx) }
          i[#i] = hy.shape[#i] - 1 - i[#i]
          return at(hy, i)
        end), H.exact, name .. " flip last axis")
      end
      H.check(y:ravel(), { shape = { H.size_of(hy.shape) }, data = hy.data }, H.exact, name .. " ravel")
      local f = y:flatten()
      H.check(f, { shape = { H.size_of(hy.shape) }, data = hy.data }, H.exact, name .. " flatten")
      if f.size > 0 then
        f[0] = 12345
        assert.are_not.equal(12345, y:ravel()[0], name .. ": flatten copies")
      end
    end
    local c = luda.arange(6.0)
    local r = c:ravel()
    r[0] = 9
    assert.are.equal(9, c[0])  -- a contiguous array's ravel is a view
  end)

  on_devices("eye, identity, diag, tril and triu make and pick diagonals", function()
    for _, c in ipairs({ { 3, 3, 0 }, { 2, 4, 1 }, { 4, 2, -1 }, { 3, 3, 5 }, { 0, 0, 0 }, { 1, 3, -2 } }) do
      local n, m, k = c[1], c[2], c[3]
      H.check(luda.eye(n, m, k, "int32"), build({ n, m }, function(i) return i[2] - i[1] == k and 1 or 0 end), H.exact,
              ("eye(%d, %d, %d)"):format(n, m, k))
    end
    assert.are.equal("float32", luda.identity(3, "float32").dtype)
    H.check(luda.identity(2), H.of({ { 1, 0 }, { 0, 1 } }), H.exact)
    H.check(luda.eye(2, { device = "cpu" }), H.of({ { 1, 0 }, { 0, 1 } }), H.exact)
    local hv = H.random("float64", { 3 }, -9, 9)
    for _, k in ipairs({ 0, 1, -2 }) do
      local n = 3 + math.abs(k)
      local want = build({ n, n }, function(i) return i[2] - i[1] == k and hv.data[math.min(i[1], i[2]) + 1] or 0 end)
      H.check(luda.diag(H.to_array(hv, "float64"), k), want, H.exact, "diag of a vector, k=" .. k)
    end
    local hm = H.random("float64", { 3, 4 }, -9, 9)
    local mt = H.to_array(hm, "float64")
    for _, k in ipairs({ 0, 2, -1, 4, -3 }) do
      local want = {}
      for i = 0, 2 do
        local j = i + k
        if j >= 0 and j < 4 then want[#want + 1] = hm.data[i * 4 + j + 1] end
      end
      H.check(luda.diag(mt, k), { shape = { #want }, data = want }, H.exact, "diag of a matrix, k=" .. k)
      H.check(luda.tril(mt, k), build({ 3, 4 }, function(i) return i[2] - i[1] <= k and at(hm, i) or 0 end), H.exact,
              "tril k=" .. k)
      H.check(luda.triu(mt.T, k), build({ 4, 3 }, function(i) return i[2] - i[1] >= k and hm.data[i[2] * 4 + i[1] + 1] or 0 end),
              H.exact, "triu of a transposed matrix, k=" .. k)
    end
    local stack = luda.ones({ 2, 3, 3 }, "int8")
    assert.are.equal("int8", luda.tril(stack).dtype)
    H.check(luda.tril(stack):sum(), H.of(12), H.exact, "tril of a stack")
  end)

  on_devices("refuses what NumPy refuses", function()
    local a = luda.ones({ 2, 3 })
    H.raises("concatenate: need at least one array to concatenate", function() return luda.concatenate({}) end)
    H.raises("concatenate: zero-dimensional arrays cannot be concatenated", function() return luda.concatenate({ luda.array(1.0) }) end)
    H.raises("concatenate: all the input array dimensions except for the concatenation axis must match exactly, but along dimension 2, the array at index 1 has size 3 and the array at index 2 has size 2", function() return luda.concatenate({ a, luda.ones({ 2, 2 }) }) end)
    H.raises("concatenate: axis 3 is out of range (axes are 1 to 2, or -1 for the last)", function() return luda.concatenate({ a, a }, 3) end)
    H.raises("stack: all input arrays must have the same shape", function() return luda.stack({ a, a.T }) end)
    H.raises("squeeze: cannot select an axis to squeeze out which has size not equal to one (axis 2 has size 3)", function() return luda.squeeze(a, 2) end)
    H.raises("diag: Input must be 1- or 2-d.", function() return luda.diag(luda.ones({ 2, 2, 2 })) end)
    H.raises("tril: x must be at least 2-dimensional, got a 1-d array", function() return luda.tril(luda.ones(3)) end)
    H.raises("concatenate: element 2 of the sequence is 3, not an array", function() return luda.concatenate({ a, 3 }) end)
  end)
end)

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
    local bools = luda.ones({ 2, 3 }, "bool")
    assert.are.equal("bool", luda.tril(bools).dtype)
    H.check(luda.triu(bools, 1), H.of({ { false, true, true }, { false, false, true } }), H.exact, "triu of bools")
    H.check(luda.tril(stack):sum(), H.of(12), H.exact, "tril of a stack")
  end)

  on_devices("split, repeat, tile, roll and diff", function()
    local h = H.random("int64", { 4, 6 }, -50, 50)
    local x = H.to_array(h, "int64")
    for _, axis in ipairs({ 1, 2 }) do
      local n = h.shape[axis]
      for _, cut in ipairs({ { 2 }, { { 1, 3 } }, { { -2, 99 } } }) do
        local parts = luda.split(x, cut[1], axis)
        -- The cuts, as NumPy makes them.
        local cuts = {}
        if type(cut[1]) == "number" then
          for i = 1, cut[1] - 1 do cuts[i] = i * n // cut[1] end
        else
          for i, c in ipairs(cut[1]) do cuts[i] = math.max(0, math.min(n, c < 0 and c + n or c)) end
        end
        local from = 0
        for i = 1, #cuts + 1 do
          local to = math.max(from, cuts[i] or n)
          local shape = { table.unpack(h.shape) }
          shape[axis] = to - from
          local f = from
          H.check(parts[i], build(shape, function(idx)
            local j = { table.unpack(idx) }
            j[axis] = j[axis] + f
            return at(h, j)
          end), H.exact, ("split axis %d part %d"):format(axis, i))
          from = to
        end
      end
      local r = luda["repeat"](x, 3, axis)
      local shape = { table.unpack(h.shape) }
      shape[axis] = 3 * n
      H.check(r, build(shape, function(idx)
        local j = { table.unpack(idx) }
        j[axis] = j[axis] // 3
        return at(h, j)
      end), H.exact, "repeat axis " .. axis)
      for _, shift in ipairs({ 1, -2, 13, 0 }) do
        H.check(luda.roll(x, shift, axis), build(h.shape, function(idx)
          local j = { table.unpack(idx) }
          j[axis] = (j[axis] - shift) % n
          return at(h, j)
        end), H.exact, ("roll %d axis %d"):format(shift, axis))
      end
      local d = luda.diff(x, 1, axis)
      shape = { table.unpack(h.shape) }
      shape[axis] = n - 1
      H.check(d, build(shape, function(idx)
        local j = { table.unpack(idx) }
        j[axis] = j[axis] + 1
        return at(h, j) - at(h, idx)
      end), H.exact, "diff axis " .. axis)
    end
    H.check(luda.repeat_(x, 2), build({ 48 }, function(idx) return h.data[idx[1] // 2 + 1] end), H.exact, "repeat flattened")
    H.check(luda.roll(x, 5), build(h.shape, function(idx)
      local k = idx[1] * 6 + idx[2]
      return h.data[(k - 5) % 24 + 1]
    end), H.exact, "roll flattened")
    H.check(luda.tile(x, { 2, 1, 3 }), build({ 2, 4, 18 }, function(idx) return at(h, { idx[2] % 4, idx[3] % 6 }) end),
            H.exact, "tile")
    H.check(luda.diff(luda.array({ 1, 4, 9, 16, 25 }), 3), H.of({ 0, 0 }), H.exact, "third difference")
    H.check(luda.diff(luda.array({ true, true, false, true })), H.of({ false, true, true }), H.exact, "diff of bools")
  end)

  on_devices("isclose, allclose, any, all, count_nonzero and meshgrid", function()
    local a = luda.array({ 1, 1 / 0, -1 / 0, 0 / 0, 1e-9, 100, 1 / 0 })
    local b = luda.array({ 1.000001, 1 / 0, 1 / 0, 0 / 0, 0, 100.002, 5 })
    H.check(luda.isclose(a, b), H.of({ true, true, false, false, true, false, false }), H.exact, "isclose")
    H.check(luda.isclose(a, b, { equal_nan = true, rtol = 0, atol = 0 }),
            H.of({ false, true, false, true, false, false, false }), H.exact, "isclose exact, NaN equal")
    assert.is_true(luda.allclose(a, a, { equal_nan = true }))
    assert.is_false(luda.allclose(a, b))
    assert.is_true(luda.allclose(luda.ones(3), 1))
    local h = H.integers({ 3, 4 }, -1, 1)
    local x = H.to_array(h, "int32")
    local function count(pred, axis)
      if not axis then
        local c = 0
        for _, v in ipairs(h.data) do if pred(v) then c = c + 1 end end
        return c
      end
      local out = {}
      local n = axis == 1 and 4 or 3
      for i = 0, n - 1 do
        local c = 0
        for j = 0, (axis == 1 and 3 or 4) - 1 do
          local v = axis == 1 and h.data[j * 4 + i + 1] or h.data[i * 4 + j + 1]
          if pred(v) then c = c + 1 end
        end
        out[i + 1] = c
      end
      return out
    end
    local nz = function(v) return v ~= 0 end
    H.check(luda.count_nonzero(x), H.of(count(nz)), H.exact)
    H.check(luda.count_nonzero(x, 2), H.of(count(nz, 2)), H.exact)
    local per_column = count(nz, 1)
    local any_col, all_col = {}, {}
    for i, c in ipairs(per_column) do any_col[i], all_col[i] = c > 0, c == 3 end
    H.check(x:any(1), H.of(any_col), H.exact)
    H.check(luda.all(x, 1), H.of(all_col), H.exact)
    H.check(luda.all(x, 1, { keepdims = true }), { shape = { 1, 4 }, data = all_col }, H.exact)
    H.check(luda.any(x), H.of(count(nz) > 0), H.exact)
    H.check(luda.all(luda.zeros(0)), H.of(true), H.exact, "all of nothing")
    H.check(luda.any(luda.zeros(0)), H.of(false), H.exact, "any of nothing")
    local p, q = luda.arange(3), luda.arange(10, 12)
    local X, Y = luda.meshgrid(p, q)
    H.check(X, H.of({ { 0, 1, 2 }, { 0, 1, 2 } }), H.exact)
    H.check(Y, H.of({ { 10, 10, 10 }, { 11, 11, 11 } }), H.exact)
    local I, J = luda.meshgrid(p, q, { indexing = "ij" })
    H.check(I, H.of({ { 0, 0 }, { 1, 1 }, { 2, 2 } }), H.exact)
    H.check(J, H.of({ { 10, 11 }, { 10, 11 }, { 10, 11 } }), H.exact)
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
    H.raises("split: array split does not result in an equal division: 3 elements into 2 sections", function() return luda.split(a, 2, 2) end)
    H.raises("meshgrid: Valid values for `indexing` are 'xy' and 'ij', got 'yx'", function() return luda.meshgrid(a, a, { indexing = "yx" }) end)
    H.raises("diff: order must be non-negative but got -1", function() return luda.diff(a, -1) end)
  end)
end)

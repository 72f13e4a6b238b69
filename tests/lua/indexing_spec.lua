-- NumPy's indexing: x[key], x[key] = v and x:slice with integers, slices, luda.newaxis,
-- luda.ellipsis, booleans, integer arrays (every integer dtype, transposed ones too) and
-- boolean masks, in each of the ways luda takes an index (a table of items, x:slice's
-- arguments, NumPy's syntax in a string, one item as the key), on views with any strides;
-- and luda.take, put, nonzero, where, flatnonzero, argwhere and compress. The references
-- are NumPy's own results on random cases (indexing_numpy.lua, written by
-- indexing_numpy.py); then NumPy's errors with their exact text, and the rules a case at a
-- time.
local luda = require "luda"
local support = require "support"
local N = require "indexing_numpy"

local on_devices = support.device_tests(_ENV)
local here, error_of = support.here, support.error_of

-- The elements of a result in C order (x:totable() flattened; a 0-d array's one value).
local function flat(x)
  local out = {}
  local function walk(v)
    if type(v) == "table" then
      for _, e in ipairs(v) do walk(e) end
    else
      out[#out + 1] = v
    end
  end
  walk(x:totable())
  return out
end

-- The base array of a case and the view x of it (a transpose, then a slice).
local function make_x(d)
  local base = luda.array(d.values, d.dtype):reshape(d.shape)
  local x = base
  if d.T then x = x:transpose(d.T) end
  if d.view then x = x:slice(d.view) end
  return base, x
end

-- An index item of a case: { "int", v }, { "slice", start, stop, step }, { "newaxis" },
-- { "ellipsis" }, { "bool", v }, { "array", dtype, shape, values [, transposed] }. Arrays go
-- on `device` (another than x's for some cases: luda copies them).
local function make_item(item, device)
  local kind = item[1]
  if kind == "int" then return item[2] end
  if kind == "slice" then return { item[2], item[3], item[4] } end
  if kind == "newaxis" then return luda.newaxis end
  if kind == "ellipsis" then return luda.ellipsis end
  if kind == "bool" then return item[2] end
  local a = luda.array(item[4], item[2], { device = device }):reshape(item[3])
  if item[5] then a = a.T end
  return a
end

local function make_index(c, device)
  local items = {}
  for k, item in ipairs(c.index) do items[k] = make_item(item, device) end
  return items
end

-- The case's value for a set: a Lua number or boolean, or an array.
local function make_value(v)
  if v.number ~= nil then return v.number end
  if v.boolean ~= nil then return v.boolean end
  return luda.array(v.values, v.dtype):reshape(v.shape)
end

local function name_of(i, c)
  return ("case %d (%s, %s form, x %s %s%s%s)"):format(i, c.kind, c.form, c.x.dtype, table.concat(c.x.shape, "x"),
    c.x.T and " transposed" or "", c.x.view and (" [" .. c.x.view .. "]") or "")
end

describe("indexing", function()
  on_devices("reads x[index] as NumPy does, in every form of the index", function(device)
    local count = 0
    for i, c in ipairs(N.cases) do
      if c.kind == "get" then
        local _, x = make_x(c.x)
        local index_device = (device ~= "cpu" and i % 3 == 0) and "cpu" or device
        local items = make_index(c, index_device)
        local get
        if c.form == "table" then
          get = function() return x[items] end
        elseif c.form == "slice" then
          get = function() return x:slice(table.unpack(items, 1, #c.index)) end
        elseif c.form == "string" then
          get = i % 2 == 0 and function() return x[c.text] end or function() return x:slice(c.text) end
        else
          get = function() return x[items[1]] end
        end
        local name = name_of(i, c)
        if c.error then
          local ok, err = pcall(get)
          assert.is_false(ok, name .. " gave no error; NumPy's: " .. c.error)
          assert.are.equal(c.error, tostring(err):gsub("^[^:]*:%d+: ", ""), name)
        else
          local r = get()
          assert.are.same(c.shape, r.shape, name)
          assert.are.equal(x.dtype, r.dtype, name)
          assert.are.equal(device == "cpu" and "cpu" or "cuda:0", r.device, name)
          assert.are.same(c.values, flat(r), name)
        end
        count = count + 1
      end
    end
    assert.is_true(count >= 300)
  end)

  on_devices("writes x[index] = v as NumPy does (the base array after)", function(device)
    local count = 0
    for i, c in ipairs(N.cases) do
      if c.kind == "set" and not (c.repeated and device ~= "cpu") then
        local base, x = make_x(c.x)
        local index_device = (device ~= "cpu" and i % 3 == 0) and "cpu" or device
        local items = make_index(c, index_device)
        local v = make_value(c.value)
        local set
        if c.form == "table" then
          set = function() x[items] = v end
        elseif c.form == "string" then
          set = function() x[c.text] = v end
        else
          set = function() x[items[1]] = v end
        end
        local name = name_of(i, c)
        if c.error then
          local ok, err = pcall(set)
          assert.is_false(ok, name .. " gave no error; NumPy's: " .. c.error)
          assert.are.equal(c.error, tostring(err):gsub("^[^:]*:%d+: ", ""), name)
        else
          set()
          assert.are.same(c.base, flat(base), name)
        end
        count = count + 1
      end
    end
    assert.is_true(count >= 100)
  end)

  on_devices("take, nonzero, flatnonzero, argwhere, compress and put as NumPy's", function(device)
    local seen = {}
    for i, c in ipairs(N.cases) do
      local name = name_of(i, c)
      if c.kind == "take" then
        local _, x = make_x(c.x)
        local indices = luda.array(c.indices.values, "int64"):reshape(c.indices.shape)
        local function take() return luda.take(x, indices, c.axis, { mode = c.mode }) end
        if c.error then
          assert.are.equal("take: " .. c.error, tostring(error_of(take)):gsub("^[^:]*:%d+: ", ""), name)
        else
          local r = take()
          assert.are.same(c.shape, r.shape, name)
          assert.are.same(c.values, flat(r), name)
          -- the method, with the axis, and indices as a table
          if #c.indices.shape == 1 then
            assert.are.same(c.values, flat(x:take(c.indices.values, c.axis, { mode = c.mode })), name)
          end
        end
      elseif c.kind == "nonzero" then
        local _, x = make_x(c.x)
        if c.nonzero then
          local got = table.pack(luda.nonzero(x))
          assert.are.equal(#c.nonzero, got.n, name)
          for k, want in ipairs(c.nonzero) do
            assert.are.equal("int64", got[k].dtype, name)
            assert.are.same(want, flat(got[k]), name)
          end
          local w = table.pack(luda.where(x))
          for k, want in ipairs(c.nonzero) do assert.are.same(want, flat(w[k]), name) end
          local m = table.pack(x:nonzero())
          for k, want in ipairs(c.nonzero) do assert.are.same(want, flat(m[k]), name) end
        end
        assert.are.same(c.flatnonzero, flat(luda.flatnonzero(x)), name)
        local aw = luda.argwhere(x)
        assert.are.same(c.argwhere.shape, aw.shape, name)
        assert.are.same(c.argwhere.values, flat(aw), name)
      elseif c.kind == "compress" then
        local _, x = make_x(c.x)
        local cond = luda.array(#c.condition > 0 and c.condition or {}, "bool")
        local r = luda.compress(cond, x, c.axis)
        assert.are.same(c.shape, r.shape, name)
        assert.are.same(c.values, flat(r), name)
        if #c.condition > 0 then assert.are.same(c.values, flat(x:compress(c.condition, c.axis)), name) end
      elseif c.kind == "put" then
        local base = make_x(c.x)
        assert.are.equal(base, luda.put(base, c.ind, c.v, c.mode), name)
        assert.are.same(c.base, flat(base), name)
      end
      seen[c.kind] = (seen[c.kind] or 0) + 1
    end
    for _, kind in ipairs({ "take", "nonzero", "compress", "put" }) do
      assert.is_true((seen[kind] or 0) >= 10, kind)
    end
  end)

  on_devices("basic indexing gives views, advanced indexing copies", function()
    local x = luda.arange(12):reshape(3, 4)
    local v = x[{ 1, { 1, 3 } }]
    v[0] = 100
    assert.are.equal(100, x[1][1])
    local w = x["..., None, ::2"]
    assert.are.same({ 3, 4, 1 }, x[{ luda.ellipsis, luda.newaxis }].shape)
    assert.are.same({ 3, 1, 2 }, w.shape)
    w[{ 0, 0, 0 }] = -1
    assert.are.equal(-1, x[0][0])
    local c = x[luda.array({ 0, 2 })]
    c[{ 0, 0 }] = 7
    assert.are.equal(-1, x[0][0])
    local t = x[true]
    assert.are.same({ 1, 3, 4 }, t.shape)
    t[{ 0, 0, 0 }] = 5
    assert.are.equal(-1, x[0][0])
  end)

  on_devices("the CuPy guide's example, and the documented ones", function()
    local X = luda.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } })
    assert.are.same({ 1, 4, 5 }, X["[0, 1, 2], [0, 1, 0]"]:totable())
    assert.are.same({ 1, 4, 5 }, X[{ luda.array({ 0, 1, 2 }), luda.array({ 0, 1, 0 }) }]:totable())
    assert.are.same({ 1, 4, 5 }, X:slice(luda.array({ 0, 1, 2 }), luda.array({ 0, 1, 0 })):totable())
    assert.are.same({ 3, 4, 5, 6 }, X[luda.greater(X, 2)]:totable())
    assert.are.same({ { 5, 6 }, { 1, 2 } }, X[luda.array({ 2, 0 })]:totable())
    assert.are.same({ { 2 }, { 4 }, { 6 } }, X["..., [1]"]:totable())
    assert.are.same({ { 3, 4 } }, X[{ luda.array({ false, true, false }) }]:totable())
    local x = luda.arange(6)
    x[luda.array({ 1, 3 })] = luda.array({ -1, -3 })
    x[luda.less(x, 0)] = 0
    x["[5, 5]"] = 50
    assert.are.same({ 0, 0, 2, 0, 4, 50 }, x:totable())
    -- index arrays of any integer dtype, unsigned too, and negative indices
    for _, dtype in ipairs({ "int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64" }) do
      assert.are.same({ 4, 0 }, x[luda.array({ 4, 0 }, dtype)]:totable(), dtype)
    end
    assert.are.same({ 50, 4 }, x[luda.array({ -1, -2 })]:totable())
    assert.are.same({ { 5, 6 } }, X[{ luda.uint8(2), luda.newaxis }]:totable())
    assert.are.equal(50, x[luda.int16(-1)]:item())
    -- uint64 indices are read as int64, as NumPy casts them: 2^64 - 1 is -1
    assert.are.same({ 50 }, x[luda.array({ -1 }):astype("uint64")]:totable())
    assert.are.same({}, x[luda.array(-1):astype("uint64")].shape)
    -- empty index arrays and masks
    assert.are.same({ 0 }, x[luda.array({}, "int64")].shape)
    assert.are.same({ 0, 2 }, X[luda.zeros(0, "int32")].shape)
    assert.are.same({ 0 }, X[luda.zeros({ 3, 2 }, "bool")].shape)
    assert.are.same({ 0, 3, 2 }, X[false].shape)
    assert.are.same({ 1, 3, 2 }, X[luda.array(true)].shape)
    -- adjacent advanced items stay in place, separated ones move to the front
    local y = luda.zeros({ 3, 4, 5 })
    assert.are.same({ 3, 2 }, y[{ {}, luda.array({ 0, 1 }), luda.array({ 0, 1 }) }].shape)
    assert.are.same({ 2, 4 }, y[{ luda.array({ 0, 1 }), {}, luda.array({ 0, 1 }) }].shape)
    assert.are.same({ 2, 4 }, y["0, :, [0, 1]"].shape)
    assert.are.same({ 3, 2 }, y["..., 0, [0, 1]"].shape)
  end)

  on_devices("the examples of docs/api.md", function()
    local y = luda.arange(60):reshape(3, 4, 5)
    assert.are.same({ 2, 4 }, y:slice(luda.array({ 0, 1 }), {}, luda.array({ 2, 0 })).shape)
    assert.are.same({ 2, 20 }, y:slice(luda.array({ 0, 1 }), {}, luda.array({ 2, 0 }))[{ {}, 0 }]:totable())
    assert.are.same(y:slice(1, { 0, 3 }):totable(), y[{ 1, { 0, 3 } }]:totable())
    local one = y[{ 1, 2, 3 }]
    assert.are.same({}, one.shape)
    assert.are.equal(33, one:item())
    local mask = luda.equal(luda.mod(y, 7), 0)
    assert.are.same(y[mask]:totable(), y[{ luda.nonzero(mask) }]:totable())
    local rows, cols = luda.nonzero(luda.array({ { 0, 2 }, { 3, 0 } }))
    assert.are.same({ 0, 1 }, rows:totable())
    assert.are.same({ 1, 0 }, cols:totable())
    assert.are.same({ 1, 2 }, luda.flatnonzero(luda.array({ -0.0, 0 / 0, 1.5, 0 })):totable())
    local x = luda.array({ -1, 2, -3, 4 })
    x[luda.less(x, 0)] = 0
    x["[1, 3]"] = luda.array({ 10, 30 })
    assert.are.same({ 0, 10, 0, 30 }, x:totable())
    assert.are.same({ 10, 30 }, luda.compress({ false, true, false, true, false }, x):totable())
    assert.are.same({ 10 }, x:compress({ false, true }):totable())
  end)

  on_devices("a repeated index keeps the last write on the cpu", function(device)
    local x = luda.arange(5)
    x["[1, 1, 1]"] = luda.array({ 7, 8, 9 })
    local got = x[1]
    if device == "cpu" then
      assert.are.equal(9, got)
    else
      assert.is_true(got == 7 or got == 8 or got == 9)
    end
  end)

  on_devices("values of another dtype and device, and values over x itself", function(device)
    local x = luda.zeros({ 2, 3 }, "int32")
    x[luda.array({ 1, 0 })] = luda.array({ 1.75, 2.5, -3.5 }, "float64", { device = "cpu" })
    assert.are.same({ { 1, 2, -3 }, { 1, 2, -3 } }, x:totable())
    x[{ luda.array({ 0, 1 }), luda.array({ 2, 0 }) }] = { 10, 20 }
    assert.are.same({ { 1, 2, 10 }, { 20, 2, -3 } }, x:totable())
    local y = luda.arange(6)
    y[luda.array({ 0, 1, 2, 3, 4, 5 })] = y:slice({ nil, nil, -1 })
    assert.are.same({ 5, 4, 3, 2, 1, 0 }, y:totable())
    local b = luda.zeros(4, "bool")
    b[luda.array({ 1, 3 })] = true
    assert.are.same({ false, true, false, true }, b:totable())
    local f = luda.zeros(3, "float32")
    f["[True, False, True]"] = luda.int8(-2)
    assert.are.same({ -2, 0, -2 }, f:totable())
    assert.are.equal(device == "cpu" and "cpu" or "cuda:0", f.device)
  end)

  on_devices("take's modes and out, put's modes and repeated values", function()
    local a = luda.array({ { 4, 3, 5 }, { 7, 6, 8 } }, "float32")
    assert.are.same({ 4, 3, 6 }, luda.take(a, { 0, 1, 4 }):totable())
    assert.are.same({ { 5, 4 }, { 8, 7 } }, luda.take(a, { -1, 3 }, 2, { mode = "wrap" }):totable())
    assert.are.same({ { 4, 5 }, { 7, 8 } }, a:take({ -1, 3 }, -1, { mode = "clip" }):totable())
    assert.are.equal(6, luda.take(a, 4):item())
    local out = luda.zeros(2, "int64")
    assert.are.equal(out, luda.take(a, { 5, 0 }, { out = out }))
    assert.are.same({ 8, 4 }, out:totable())
    local p = luda.arange(6)
    luda.put(p, { 0, 2, 4 }, { -1, -2 })
    assert.are.same({ -1, 1, -2, 3, -1, 5 }, p:totable())
    p:put(luda.array({ 7, -8 }), 9, "wrap")
    assert.are.same({ -1, 9, -2, 3, 9, 5 }, p:totable())
    luda.put(p, { 100 }, 0, "clip")
    assert.are.equal(0, p[5])
    -- put writes a view's own elements
    local m = luda.zeros({ 3, 4 }, "int32")
    luda.put(m:slice({}, { 1, nil, 2 }), { 0, 5 }, { 1, 2 })
    assert.are.same({ { 0, 1, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 2 } }, m:totable())
    luda.put(m, {}, 3)
    luda.put(m, { 1 }, luda.array({}, "int32"))
    assert.are.equal(1, m[0][1])
  end)

  on_devices("where keeps its three-argument form", function()
    local c = luda.array({ true, false, true })
    assert.are.same({ 1, 20, 3 }, luda.where(c, luda.array({ 1, 2, 3 }), 20):totable())
    assert.are.same({ 0, 2 }, (luda.where(c)):totable())
  end)

  on_devices("NumPy's errors, with the caller's line", function()
    local x = luda.arange(3)
    local m = luda.zeros({ 2, 3 })
    local idx = luda.array({ 0, 5 })
    assert.are.equal(here() .. "index 5 is out of bounds for axis 0 with size 3", error_of(function() return x[idx] end))
    assert.are.equal(here() .. "index -4 is out of bounds for axis 0 with size 3", error_of(function() return x["[-4]"] end))
    assert.are.equal(here() .. "index 5 is out of bounds for axis 1 with size 3", error_of(function() return m[{ {}, idx }] end))
    assert.are.equal(here() .. "index 5 is out of bounds for axis 0 with size 3", error_of(function() x[idx] = 1 end))
    assert.are.equal(here() .. "index 3 is out of bounds for axis 0 with size 3", error_of(function() return x[{ luda.newaxis, luda.array({ 3 }, "uint8") }] end))
    assert.are.equal(here() .. "index 9 is out of bounds for axis 1 with size 3", error_of(function() return m[{ luda.array({ 0 }), 9 }] end))
    assert.are.equal(here() .. "boolean index did not match indexed array along axis 0; size of axis is 3 but size of corresponding boolean axis is 4", error_of(function() return x[luda.zeros(4, "bool")] end))
    assert.are.equal(here() .. "boolean index did not match indexed array along axis 1; size of axis is 3 but size of corresponding boolean axis is 4", error_of(function() return m[luda.zeros({ 2, 4 }, "bool")] end))
    assert.are.equal(here() .. "too many indices for array: array is 2-dimensional, but 3 were indexed", error_of(function() return m["0, [0], 1"] end))
    assert.are.equal(here() .. "too many indices for array: array is 1-dimensional, but 2 were indexed", error_of(function() return x[luda.zeros({ 3, 1 }, "bool")] end))
    assert.are.equal(here() .. "shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,)", error_of(function() return m["[0, 1], [0, 1, 2]"] end))
    assert.are.equal(here() .. "shape mismatch: indexing arrays could not be broadcast together with shapes (1,) (2,) (3,)", error_of(function() return m[{ true, luda.array({ 0, 1 }), luda.array({ 0, 1, 2 }) }] end))
    assert.are.equal(here() .. "shape mismatch: indexing arrays could not be broadcast together with shapes (2, 3) (2,)", error_of(function() return luda.zeros({ 2, 2, 2 })[{ luda.zeros({ 2, 3 }, "int64"), luda.zeros(2, "int64") }] end))
    assert.are.equal(here() .. "arrays used as indices must be of integer (or boolean) type", error_of(function() return x[luda.array({ 1.0 })] end))
    assert.are.equal(here() .. "an index can only have a single ellipsis ('...')", error_of(function() return x[{ luda.ellipsis, luda.ellipsis }] end))
    assert.are.equal(here() .. "shape mismatch: value array of shape (3,) could not be broadcast to indexing result of shape (2,)", error_of(function() x[luda.array({ 0, 1 })] = luda.array({ 1, 2, 3 }) end))
    assert.are.equal(here() .. "x[index] = v: value must be a number, a boolean or a typed scalar, got string", error_of(function() x[luda.array({ 0 })] = "7" end))
    assert.are.equal(here() .. "x[index] = v: 300 is out of range for uint8 (0 to 255)", error_of(function() luda.zeros(2, "uint8")[luda.array({ 0 })] = 300 end))
    assert.are.equal(here() .. "take: index 3 is out of bounds for axis 0 with size 3", error_of(function() return luda.take(x, { 3 }) end))
    assert.are.equal(here() .. "take: index 3 is out of bounds for axis 1 with size 3", error_of(function() return luda.take(m, { 3 }, 2) end))
    assert.are.equal(here() .. "take: cannot do a non-empty take from an empty axes.", error_of(function() return luda.take(luda.zeros(0), { 0 }, nil, { mode = "clip" }) end))
    assert.are.equal(here() .. "take: mode must be 'raise', 'wrap' or 'clip', got 'around'", error_of(function() return luda.take(x, { 0 }, nil, { mode = "around" }) end))
    assert.are.equal(here() .. "take: option 'out' has shape (3,) but the result has shape (2,)", error_of(function() return luda.take(x, { 0, 1 }, nil, { out = luda.zeros(3) }) end))
    assert.are.equal(here() .. "bad argument #4 to 'take' (unknown option 'outt'; expected out, mode)", error_of(function() return luda.take(x, { 0 }, nil, { outt = 1 }) end))
    assert.are.equal(here() .. "take: indices must be integers, got a float64 array", error_of(function() return luda.take(x, luda.zeros(1)) end))
    assert.are.equal(here() .. "put: index 6 is out of bounds for axis 0 with size 6", error_of(function() luda.put(m, { 6 }, 1) end))
    assert.are.equal(here() .. "put: cannot replace elements of an empty array", error_of(function() luda.put(luda.zeros(0), { 0 }, 1) end))
    assert.are.equal(here() .. "nonzero: Calling nonzero on 0d arrays is not allowed. Use x:reshape(1) (NumPy's np.atleast_1d(scalar).nonzero()) instead.", error_of(function() return luda.nonzero(luda.array(1)) end))
    assert.are.equal(here() .. "compress: condition must be a 1-d array", error_of(function() return luda.compress(luda.ones({ 1, 1 }, "bool"), x) end))
    assert.are.equal(here() .. "take: index 3 is out of bounds for axis 0 with size 3", error_of(function() return luda.compress({ false, false, false, true }, x) end))
    assert.are.equal(here() .. "bad argument #1 to 'slice' (integer, {start, stop, step} table, array, boolean, luda.newaxis, luda.ellipsis or slice string expected, got function)", error_of(function() return x:slice(print) end))
    assert.are.equal(here() .. "bad argument #2 to 'slice' (a slice string must be the only argument, as in x:slice(\"1:5, ::2\"))", error_of(function() return x[{ 0, "1" }] end))
    assert.are.equal(here() .. "ndarray has no field or method 'Nonesuch'", error_of(function() return x.Nonesuch end))
    assert.are.equal(here() .. "slice: syntax error in \"None:\" at column 5: expected ',' but found ':'", error_of(function() return x["None:"] end))
    assert.are.equal(here() .. "slice: syntax error in \"[[0], 1]\" at column 1: a ragged nested list (the lists inside one list must all have one shape, or all be values)", error_of(function() return x["[[0], 1]"] end))
    assert.are.equal(here() .. "slice: syntax error in \"[0, x]\" at column 5: expected an integer, True, False or '[' but found 'x'", error_of(function() return x["[0, x]"] end))
    assert.are.equal(here() .. "slice: syntax error in \"Truth\" at column 1: expected an integer, ':', '...', '[', None, newaxis, True or False but found 'T'", error_of(function() return x:slice("Truth") end))
    assert.are.equal(here() .. "slice: syntax error in \"" .. ("["):rep(65) .. "\" at column 65: lists nested more than 64 deep (the most axes an array may have)", error_of(function() return x[("["):rep(65)] end))
    assert.are.equal(64, x[("["):rep(64) .. "2" .. ("]"):rep(64)].ndim)
    -- Errors leave the array as it was.
    assert.are.same({ 0, 1, 2 }, x:totable())
  end)

  it("refuses to record indexing with arrays in a graph", function()
    local f = function(a, i) return a[i] end
    local a, i = luda.arange(4, nil, { device = "cpu" }), luda.array({ 1 }, nil, { device = "cpu" })
    local err = tostring(error_of(function() return luda.graph(f, a, i) end))
    assert.is_truthy(err:find("indexing with an array needs a result on the host, but a graph is being recorded", 1, true), err)
  end)

  it("luda.newaxis and luda.ellipsis print as their names", function()
    assert.are.equal("luda.newaxis", tostring(luda.newaxis))
    assert.are.equal("luda.ellipsis", tostring(luda.ellipsis))
  end)
end)

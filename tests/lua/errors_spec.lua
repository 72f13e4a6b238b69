-- The exact text of the errors a user meets first, each with the caller's position, and
-- the Lua state still usable afterwards.
local luda = require "luda"
local support = require "support"
local here, error_of = support.here, support.error_of

local CPU = { device = "cpu" }
local GPU, NO_GPU_REASON = luda.cuda.is_available()

local DTYPES = "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, float16, bfloat16, complex64, complex128"

-- What asking for cuda:7 says on this machine.
local function missing_cuda7()
  if not GPU then return "no CUDA device: " .. NO_GPU_REASON end
  local n = luda.cuda.device_count()
  local which = n == 1 and "cuda:0" or n == 2 and "cuda:0, cuda:1" or ("cuda:0 to cuda:" .. (n - 1))
  return ("no CUDA device cuda:7: this machine has %d (%s)"):format(n, which)
end

describe("errors", function()
  it("bad dtype", function()
    assert.are.equal(here() .. "bad argument #2 to 'zeros' (unknown dtype 'flaot32'; expected one of " .. DTYPES .. ")", error_of(function() return luda.zeros(3, "flaot32") end))
    assert.are.equal(here() .. "bad argument #2 to 'zeros' (dtype expected, got number)", error_of(function() return luda.zeros(3, 5) end))
    assert.are.equal(here() .. "bad argument #1 to 'astype' (dtype expected, got table)", error_of(function() return luda.zeros(3, nil, CPU):astype({}) end))
    assert.are.equal(here() .. "bad argument #2 to 'array' (dtype expected, got function)", error_of(function() return luda.array({ 1 }, print) end))
  end)

  it("ragged and bad nested tables", function()
    assert.are.equal(here() .. "array: ragged nested table: t[2] has 1 element but t[1] has 2", error_of(function() return luda.array({ { 1, 2 }, { 3 } }) end))
    assert.are.equal(here() .. "array: ragged nested table: t[2][1] has 3 elements but t[1][1] has 2", error_of(function() return luda.array({ { { 1, 2 } }, { { 1, 2, 3 } } }) end))
    assert.are.equal(here() .. "array: ragged nested table: t[2] is a number but t[1] is a table", error_of(function() return luda.array({ { 1, 2 }, 3 }) end))
    assert.are.equal(here() .. "array: ragged nested table: t[2] is a table but t[1] is not", error_of(function() return luda.array({ 1, { 2 } }) end))
    assert.are.equal(here() .. "array: t[1][2] is a string; array elements must be numbers, booleans or typed scalars", error_of(function() return luda.array({ { 1, "x" } }) end))
    assert.are.equal(here() .. "array: t[2] = 300 is out of range for int8 (-128 to 127)", error_of(function() return luda.array({ 1, 300 }, "int8") end))
    assert.are.equal(here() .. "bad argument #1 to 'array' (table or ndarray expected, got string)", error_of(function() return luda.array("1, 2") end))
  end)

  it("out-of-range and bad indices", function()
    local x = luda.arange(10, nil, CPU)
    local y = luda.zeros({ 2, 3 }, nil, CPU)
    assert.are.equal(here() .. "index 10 is out of bounds for axis 0 with size 10", error_of(function() return x[10] end))
    assert.are.equal(here() .. "index -11 is out of bounds for axis 0 with size 10", error_of(function() return x[-11] end))
    assert.are.equal(here() .. "index 5 is out of bounds for axis 0 with size 2", error_of(function() y[5] = 1 end))
    assert.are.equal(here() .. "index 3 is out of bounds for axis 0 with size 3", error_of(function() return y[1][3] end))
    assert.are.equal(here() .. "ndarray index must be an integer (0-based), an array, a boolean, luda.newaxis, luda.ellipsis, a table of x:slice's items, an index string or a field name, got 1.5", error_of(function() return x[1.5] end))
    assert.are.equal(here() .. "ndarray has no field or method 'shap'", error_of(function() return x.shap end))
    assert.are.equal(here() .. "cannot set field 'shape': an ndarray's fields are read-only (reshape with x:reshape, change the dtype with x:astype)", error_of(function() x.shape = { 5, 2 } end))
    assert.are.equal(here() .. "x[0] = v: value must be a number, a boolean or a typed scalar, got string", error_of(function() x[0] = "7" end))
    assert.are.equal(here() .. "#x of a 0-d array: it has no first dimension (read its value with x:item())", error_of(function() return #luda.array(3, nil, CPU) end))
    assert.are.equal(here() .. "too many indices for array: array is 0-dimensional, but 1 were indexed", error_of(function() return luda.array(3, nil, CPU)[0] end))
    assert.are.equal(here() .. "item: the array has 10 elements; item() reads an array of exactly one (use x:totable())", error_of(function() return x:item() end))
  end)

  it("a CUDA device that does not exist", function()
    local want = missing_cuda7()
    assert.are.equal(here() .. want, error_of(function() return luda.zeros(3, nil, { device = "cuda:7" }) end))
    assert.are.equal(here() .. want, error_of(function() return luda.device("cuda:7") end))
    assert.are.equal(here() .. want, error_of(function() return luda.device(7) end))
    assert.are.equal(here() .. want, error_of(function() return luda.arange(3, nil, CPU):to("cuda:7") end))
    assert.are.equal(here() .. "zeros: option 'device' must be \"cpu\", \"cpu:N\", \"cuda\", \"cuda:N\", a CUDA ordinal or a device object, got 'gpu'", error_of(function() return luda.zeros(3, nil, { device = "gpu" }) end))
    assert.are.equal(here() .. "invalid device 'cuda:x': expected 'cpu', 'cpu:N', 'cuda' or 'cuda:N'", error_of(function() return luda.device("cuda:x") end))
  end)

  it("bad slice strings, with the column", function()
    local x = luda.zeros({ 4, 4 }, nil, CPU)
    assert.are.equal(here() .. "slice: syntax error in \"1:x\" at column 3: expected an integer, ':' or ',' but found 'x'", error_of(function() return x:slice("1:x") end))
    assert.are.equal(here() .. "slice: syntax error in \"1 2\" at column 3: expected ':' or ',' but found '2'", error_of(function() return x:slice("1 2") end))
    assert.are.equal(here() .. "slice: syntax error in \"1:2:3:4\" at column 6: expected ',' but found ':'", error_of(function() return x:slice("1:2:3:4") end))
    assert.are.equal(here() .. "slice: syntax error in \"::0\" at column 3: slice step cannot be zero", error_of(function() return x:slice("::0") end))
    assert.are.equal(here() .. "slice: syntax error in \"..., ...\" at column 6: an index can have only one '...'", error_of(function() return x:slice("..., ...") end))
    assert.are.equal(here() .. "slice: syntax error in \"0, -\" at column 5: expected digits after the sign but found the end", error_of(function() return x:slice("0, -") end))
    assert.are.equal(here() .. "slice: syntax error in \"[1:2]\" at column 3: expected ',' or ']' but found ':'", error_of(function() return x:slice("[1:2]") end))
    assert.are.equal(here() .. "too many indices for array: array is 2-dimensional, but 3 were indexed", error_of(function() return x:slice("1, 2, 3") end))
    assert.are.equal(here() .. "bad argument #1 to 'slice' (a slice string must be the only argument, as in x:slice(\"1:5, ::2\"))", error_of(function() return x:slice("1", 2) end))
    assert.are.equal(here() .. "slice: slice step cannot be zero (argument #2)", error_of(function() return x:slice({}, { 1, 2, 0 }) end))
    -- Every byte of the string is read: a "\0" is no end of it.
    assert.are.equal(here() .. "slice: syntax error in \"1\\0:2\" at column 2: expected ':' or ',' but found '\\0'", error_of(function() return x:slice("1\0:2") end))
    assert.are.equal(here() .. "slice: syntax error in \"0,\\n\\1\" at column 4: expected an integer, ':', '...', '[', None, newaxis, True or False but found '\\1'", error_of(function() return x:slice("0,\n\1") end))
    -- A slice table has start, stop and step; nothing more.
    assert.are.equal(here() .. "slice: a slice table is {start, stop, step}, but argument #1 also has key [4]", error_of(function() return x:slice({ 1, 2, 1, 5 }) end))
    assert.are.equal(here() .. "slice: a slice table is {start, stop, step}, but argument #2 also has key 'start'", error_of(function() return x:slice({}, { start = 1 }) end))
    assert.are.same({ 4, 2 }, x:slice({}, { nil, nil, 2 }).shape)
  end)

  it("names with a \"\\0\" in them are not read as the name before it", function()
    assert.are.equal(here() .. "bad argument #2 to 'zeros' (unknown dtype 'float32\\0x'; expected one of " .. DTYPES .. ")", error_of(function() return luda.zeros(3, "float32\0x") end))
    assert.are.equal(here() .. "ndarray has no field or method 'shape\\0'", error_of(function() return luda.zeros(3, nil, CPU)["shape\0"] end))
  end)

  it("arange keeps to its dtype's range, and to what an array holds", function()
    assert.are.equal(here() .. "arange: the last element = 299 is out of range for int8 (-128 to 127)", error_of(function() return luda.arange(0, 300, 1, "int8") end))
    assert.are.equal(here() .. "arange: the first element = -5 is out of range for uint8 (0 to 255)", error_of(function() return luda.arange(-5, 5, 1, "uint8") end))
    assert.are.equal(here() .. "arange: the last element = 299.5 is out of range for int8 (-128 to 127)", error_of(function() return luda.arange(0.5, 300, 1.0, "int8") end))
    assert.are.equal(here() .. "arange: the first element = 40000 is out of range for int16 (-32768 to 32767)", error_of(function() return luda.arange(40000, 0, -1, "int16") end))
    assert.are.equal(here() .. "arange: a range of booleans has at most 2 elements (False, True), this one has 10", error_of(function() return luda.arange(10, "bool") end))
    assert.are.equal(here() .. "arange: a range of booleans has at most 2 elements (False, True), this one has 3", error_of(function() return luda.arange(0.0, 3.0, 1.0, "bool") end))
    assert.are.equal(here() .. "arange: the range from -9223372036854775808 to 9223372036854775807 by 1 has 18446744073709551615 elements, more than an array can hold", error_of(function() return luda.arange(math.mininteger, math.maxinteger) end))
    assert.are.equal(here() .. "arange: the length of the range is not a number (start nan, stop 1.0, step 1.0)", error_of(function() return luda.arange(0 / 0, 1.0) end))
    -- At the edges of the range, and past what i * step can hold.
    local int8 = luda.arange(-128, 128, 1, "int8", CPU):totable()
    assert.are.equal(256, #int8)
    for i = 1, 256 do assert.are.equal(i - 129, int8[i]) end
    assert.are.same({ false, true }, luda.arange(2, "bool", CPU):totable())
    local q = math.maxinteger // 2 + 1
    assert.are.same({ math.mininteger, -q, 0, q }, luda.arange(math.mininteger, math.maxinteger, q, nil, CPU):totable())
    assert.are.same({ 127, 126 }, luda.arange(127, 125, -1, "int8", CPU):totable())
  end)

  it("wrong argument types", function()
    local x = luda.zeros({ 2, 3 }, nil, CPU)
    assert.are.equal(here() .. "bad argument #1 to 'zeros' (shape (a number or a sequence of numbers) expected, got string)", error_of(function() return luda.zeros("3") end))
    assert.are.equal(here() .. "zeros: shape[2] must be an integer, got 2.5", error_of(function() return luda.zeros({ 2, 2.5 }) end))
    assert.are.equal(here() .. "zeros: negative dimensions are not allowed (shape (2, -1))", error_of(function() return luda.zeros({ 2, -1 }) end))
    assert.are.equal(here() .. "bad argument #3 to 'zeros' (unknown option 'devce'; expected device)", error_of(function() return luda.zeros(3, nil, { devce = "cpu" }) end))
    assert.are.equal(here() .. "bad argument #3 to 'ones' (options table expected, got string)", error_of(function() return luda.ones(3, nil, "cpu") end))
    assert.are.equal(here() .. "bad argument #2 to 'full' (number, boolean or typed scalar expected, got string)", error_of(function() return luda.full(3, "1") end))
    assert.are.equal(here() .. "bad argument #1 to 'arange' (number expected, got no value)", error_of(function() return luda.arange() end))
    assert.are.equal(here() .. "arange: step must not be zero", error_of(function() return luda.arange(1, 5, 0) end))
    assert.are.equal(here() .. "bad argument #3 to 'linspace' (number of samples, -1, must be non-negative)", error_of(function() return luda.linspace(0, 1, -1) end))
    assert.are.equal(here() .. "bad argument #1 to 'reshape' (integer expected, got string)", error_of(function() return x:reshape("6") end))
    assert.are.equal(here() .. "cannot reshape array of size 6 into shape (4, 2)", error_of(function() return x:reshape(4, 2) end))
    assert.are.equal(here() .. "calling 'reshape' on bad self (ndarray expected, got table)", error_of(function() local t = { reshape = x.reshape }; return t:reshape(6) end))
    assert.are.equal(here() .. "bad argument #1 to 'reshape' (ndarray expected, got number)", error_of(function() local f = x.reshape; return f(5, 6) end))
    assert.are.equal(here() .. "transpose: axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", error_of(function() return x:transpose(3, 1) end))
    assert.are.equal(here() .. "bad argument #1 to 'to' (device expected, got no value)", error_of(function() return x:to() end))
    assert.are.equal(here() .. "bad argument #2 to 'with_device' (function expected, got nil)", error_of(function() return luda.with_device("cpu", nil) end))
  end)

  it("keeps the Lua state usable after errors", function()
    for _ = 1, 100 do
      pcall(luda.zeros, 3, "bad")
      pcall(function() return luda.array({ { 1 }, 2 }) end)
    end
    local x = luda.arange(4, nil, CPU)
    assert.are.same({ 0, 1, 2, 3 }, x:totable())
  end)
end)

describe("errors raised where C calls luda", function()
  it("carry the place of the Lua code that made the call (ipairs, tostring, print)", function()
    local a = luda.zeros(3, "float32", CPU)
    local where, err = here(), error_of(function() for _ in ipairs(a) do end end)
    assert.are.equal(where .. "index 3 is out of bounds for axis 0 with size 3", err)
    local freed
    do
      local b <close> = luda.zeros(3, "float32", CPU)
      freed = b
    end
    assert.are.equal(here() .. "the ndarray was already freed (closed or garbage-collected)", error_of(function() return tostring(freed) end))
    assert.are.equal(here() .. "the ndarray was already freed (closed or garbage-collected)", error_of(function() print(freed) end))
  end)

  it("a yield inside luda.with_device is refused at the yield, and the device is restored", function()
    local function current() return luda.zeros(1).device end
    local before = current()
    local yield_line
    local co = coroutine.create(function()
      luda.with_device("cpu", function()
        yield_line = debug.getinfo(1, "l").currentline + 1
        coroutine.yield(1)
      end)
    end)
    local ok, err = coroutine.resume(co)
    assert.is_false(ok)
    assert.are.equal(debug.getinfo(1, "S").short_src .. ":" .. yield_line .. ": luda.with_device: the function " ..
                     "yielded (coroutine.yield); with_device sets the device only while its function runs, so it " ..
                     "cannot be left suspended: call coroutine.yield outside luda.with_device, or luda.with_device " ..
                     "around the code between two yields", err)
    assert.are.equal(before, current())
    -- A yield across another C function is not with_device's to explain.
    ok, err = coroutine.resume(coroutine.create(function()
      luda.with_device("cpu", function() table.sort({ 3, 2, 1 }, function() coroutine.yield() end) end)
    end))
    assert.are.same({ false, "attempt to yield across a C-call boundary" }, { ok, err })
  end)
end)

describe("luda's objects are known by what they are, not by their metatable", function()
  it("an ndarray given a scalar's metatable is still an ndarray, and a scalar still a scalar", function()
    local x = luda.array({ 1, 2, 3 }, "int64", CPU)
    local s = luda.int64(10)
    local array_meta, scalar_meta = getmetatable(x), getmetatable(s)
    local k = luda.cuda.jit(function(a, v, out)
      local i = luda.cuda.grid(1)
      if i < #a then out[i] = a[i] + v end
    end)
    local add = luda.vectorize(function(a, b) return a + b end)
    local out = luda.zeros(3, "int64", CPU)
    debug.setmetatable(x, scalar_meta)
    debug.setmetatable(s, array_meta)
    k[{ 1, 3 }](x, s, out)
    local sum = add(x, s)
    assert.are.equal(here() .. "bad argument #1 to 'tostring' (scalar expected, got ndarray)", error_of(function() return scalar_meta.__tostring(x) end))
    debug.setmetatable(x, array_meta)
    debug.setmetatable(s, scalar_meta)
    assert.are.same({ 11, 12, 13 }, out:totable())
    assert.are.same({ 11, 12, 13 }, sum:totable())
  end)

  it("a table or another userdata given an ndarray's metatable is not an ndarray", function()
    local meta = getmetatable(luda.zeros(1, "int64", CPU))
    local k = luda.cuda.jit(function(a) a[0] = 1 end)
    local t = setmetatable({}, meta)
    local pass = "; pass arrays, numbers, booleans or typed scalars (luda.int32(v))"
    assert.are.equal(here() .. "kernel 'k': argument 1 is a table" .. pass, error_of(function() k[{ 1, 1 }](t) end))
    assert.are.equal(here() .. "ufunc 'add': argument 1 is a table" .. pass, error_of(function() return t + 1 end))
    assert.are.equal(here() .. "bad argument #1 to 'index' (ndarray expected, got table)", error_of(function() return t.shape end))
    local file_meta = getmetatable(io.stdout)
    local f = io.tmpfile()
    debug.setmetatable(f, meta)
    assert.are.equal(here() .. "kernel 'k': argument 1 is a userdata" .. pass, error_of(function() k[{ 1, 1 }](f) end))
    debug.setmetatable(f, file_meta)
    f:close()
    -- Collected with an ndarray's metatable, or a copy of it, a device object and a file
    -- are left alone by the ndarray's finalizer.
    local copy = {}
    for k, v in pairs(meta) do copy[k] = v end
    debug.setmetatable(luda.device("cpu"), meta)
    debug.setmetatable(luda.device("cpu"), copy)
    debug.setmetatable(io.tmpfile(), meta)
    collectgarbage()
    collectgarbage()
    assert.are.same({ 0 }, luda.zeros(1, "int64", CPU):totable())
  end)

  it("refuses to run a luda function whose upvalue the debug library replaced", function()
    local x = luda.zeros(2, "float32", CPU)
    local BROKEN = "a luda function's upvalue was replaced through the debug library, so it cannot run: " ..
                   "put back the value debug.getupvalue gives"
    for _, case in ipairs({
      { luda.float32, function() return luda.float32(1) end, 999 },
      { luda.sum, function() return luda.sum(x) end, 999 },
      { getmetatable(x).__add, function() return x + x end },
      { luda.exp, function() return luda.exp(x) end },
      { luda.random.seed, function() return luda.random.seed(1) end },
    }) do
      local fn, call, number = case[1], case[2], case[3]
      local info = debug.getinfo(call, "S")
      local _, value = debug.getupvalue(fn, 1)
      for _, wrong in ipairs({ {}, number or io.stdout, 5.5 }) do
        debug.setupvalue(fn, 1, wrong)
        local ok, err = pcall(call)
        debug.setupvalue(fn, 1, value)
        assert.are.same({ false, info.short_src .. ":" .. info.linedefined .. ": " .. BROKEN }, { ok, err })
      end
      assert.is_true((pcall(call)))
    end
  end)
end)

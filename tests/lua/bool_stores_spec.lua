-- Bools and numbers stored into one another, as NumPy converts them: True is 1 and False
-- 0 in a number array; a number is true in a bool array when it is not 0 (NaN included).
-- Every place the kernel language stores converts so (docs/language.md, Conversions):
-- cuda.jit kernels' arrays and local arrays, elementwise outputs (assigned, or read and
-- then assigned), a reduction's post_map, a vectorize signature's result. Each runs on
-- the cpu target and on cuda when there is a GPU, on random data in every layout,
-- against plain-Lua references.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local on_devices = support.device_tests(_ENV)
local cuda = luda.cuda

local NUMBERS = { "int8", "uint8", "int32", "int64", "uint64", "float32", "float64" }

local function truth(v) return v ~= 0 end               -- NaN ~= 0 is true, as NumPy's bool(nan)
local function count(b) return b and 1 or 0 end

-- Random floats with zeros, negative zeros and NaNs among them: every case of truth().
local function mixed(shape)
  return H.fill(shape, function()
    local r = math.random(6)
    if r == 1 then return 0.0 elseif r == 2 then return -0.0 elseif r == 3 then return 0 / 0 end
    return support.f32((math.random() - 0.5) * 20)
  end)
end

-- The arrays of `h` in float32 for each layout: contiguous, strided, reversed, size-1,
-- empty. (0-d is the elementwise specs'.)
local function layouts()
  local function make(shape) local h = mixed(shape) return H.to_array(h, "float32") end
  return {
    { "contiguous 37", make({ 37 }) },
    { "strided ::3 of 40", make({ 40 }):slice("::3") },
    { "reversed ::-1 of 9", make({ 9 }):slice("::-1") },
    { "size-1", make({ 1 }) },
    { "empty", luda.empty({ 0 }, "float32") },
  }
end

local compare = cuda.jit(function(x, out)
  local i = cuda.grid(1)
  if i < #x then out[i] = x[i] > 0 end
end)
local as_bool = cuda.jit(function(x, out)
  local i = cuda.grid(1)
  if i < #x then out[i] = x[i] end
end)
local as_bool_fast = cuda.jit(function(x, out)
  local i = cuda.grid(1)
  if i < #x then out[i] = x[i] end
end, { fastmath = true })
local vec_bool_fast = luda.vectorize({ "bool(float64)" }, function(a) return a end, { fastmath = true })
local constants = cuda.jit(function(out, flags)
  out[0] = true
  out[1] = false
  flags[0] = 2.5
  flags[1] = 0
  flags[2] = -0.0
end)
local through_local_array = cuda.jit(function(x, out)
  local i = cuda.grid(1)
  if i < #x then
    local t = cuda.local_array(2, "float64")
    local b = cuda.local_array(1, "bool")
    t[0] = x[i] < 0
    b[0] = x[i] + 1
    out[i] = t[0] + 2 * luda.float64(b[0])
  end
end)

local function launch(k, ...)
  local n = math.max(#select(1, ...), 1)
  k[{ (n + 63) // 64, 64 }](...)
end

describe("a bool stored into a number (and a number into a bool)", function()
  before_each(function() math.randomseed(1107) end)

  on_devices("cuda.jit: out[i] = x[i] > 0 stores 1 or 0 in every number dtype", function()
    for _, case in ipairs(layouts()) do
      local x, hx = case[2], H.read(case[2])
      for _, dtype in ipairs(NUMBERS) do
        local out = luda.full(x.shape, 7, dtype)
        launch(compare, x, out)
        H.check(out, H.map(function(v) return count(v > 0) end, hx), H.exact, dtype .. " " .. case[1])
      end
    end
  end)

  on_devices("cuda.jit: a number stored into a bool array is true when it is not 0, NaN included", function()
    for _, case in ipairs(layouts()) do
      local x, hx = case[2], H.read(case[2])
      local out = luda.zeros(x.shape, "bool")
      launch(as_bool, x, out)
      H.check(out, H.map(truth, hx), H.exact, case[1])
      local xi = H.to_array(H.random("int32", { 23 }, -3, 3), "int32")
      local bi = luda.zeros({ 23 }, "bool")
      launch(as_bool, xi, bi)
      H.check(bi, H.map(truth, H.read(xi)), H.exact, "int32")
    end
  end)

  on_devices("with fastmath too: NaN stored into a bool is true on every device", function()
    local m = mixed({ 40 })
    local x = H.to_array(m, "float64")
    local out = luda.zeros({ 40 }, "bool")
    launch(as_bool_fast, x, out)
    H.check(out, H.map(truth, m), H.exact, "cuda.jit")
    H.check(vec_bool_fast(x), H.map(truth, m), H.exact, "vectorize")
  end)

  on_devices("cuda.jit: constants true and false into numbers, numbers into bools", function()
    for _, dtype in ipairs(NUMBERS) do
      local out, flags = luda.full({ 2 }, 7, dtype), luda.zeros({ 3 }, "bool")
      constants[{ 1, 1 }](out, flags)
      H.check(out, H.of({ 1, 0 }), H.exact, dtype)
      H.check(flags, H.of({ true, false, false }), H.exact, dtype)
    end
  end)

  on_devices("cuda.jit: local arrays of numbers and of bools convert too", function()
    local x = luda.array(mixed({ 31 }).data, "float64")
    local out = luda.zeros({ 31 }, "float64")
    launch(through_local_array, x, out)
    H.check(out, H.map(function(v) return count(v < 0) + 2 * count(truth(v + 1)) end, H.read(x)), H.exact)
  end)

  on_devices("elementwise: an output keeps its type and converts what the body assigns", function()
    local positive = luda.elementwise("T x", "Y y", "y = x > 0", "positive")
    local nonzero = luda.elementwise("T x", "bool y", "y = x", "nonzero")
    -- read before assigned: the output is passed in, and kept where the body skips it
    local some = luda.elementwise("T x", "Y y", "if x < 0 then y = y > 5 end", "some")
    for _, case in ipairs(H.layouts("float32", -3, 3)) do
      local x, hx = case[2], H.read(case[2])
      for _, dtype in ipairs(NUMBERS) do
        local what = dtype .. " " .. case[1]
        H.check(positive(x, luda.empty(x.shape, dtype)), H.map(function(v) return count(v > 0) end, hx), H.exact, what)
        local start = H.integers(x.shape, 0, 9)
        local y = H.to_array(start, dtype)
        some(x, y)
        H.check(y, H.map(function(v, s) if v < 0 then return count(s > 5) end return s end, hx, start), H.exact, what)
      end
      H.check(nonzero(x), H.map(truth, hx), H.exact, case[1])
    end
    local m = mixed({ 50 })
    H.check(nonzero(H.to_array(m, "float64")), H.map(truth, m), H.exact, "zeros, -0.0 and NaN")
  end)

  on_devices("reduction: post_map assigns a bool to a number output and a number to a bool one", function()
    local any_positive = luda.reduction("T x", "float32 y", "x", "math.max(a, b)", "y = a > 0", "-math.huge", "anypos")
    local any_nonzero = luda.reduction("T x", "bool y", "x ~= 0", "a or b", "y = a", "false", "anynz")
    local count_nonzero = luda.reduction("T x", "int64 y", "x ~= 0", "a + b", "y = a", "0", "count", { reduce_type = "int64" })
    for _, case in ipairs(H.layouts("int32", -2, 2)) do
      local x, hx = case[2], H.read(case[2])
      local rows = #x.shape == 2 and 2 or nil
      local function on(k) if rows then return k(x, { axis = rows }) end return k(x) end
      local function ref(step, init, finish)
        return H.reduce(hx, rows, false, function() return init end, step, finish)
      end
      H.check(on(any_positive),
              ref(function(a, v) return math.max(a, v) end, -math.huge, function(a) return count(a > 0) end), H.exact,
              case[1])
      H.check(on(any_nonzero), ref(function(a, v) return a or v ~= 0 end, false),
              H.exact, case[1])
      H.check(on(count_nonzero), ref(function(a, v) return a + count(v ~= 0) end, 0), H.exact,
              case[1])
    end
  end)

  on_devices("vectorize: a bool result converts to the signature's number type, a number to its bool", function()
    local positive = luda.vectorize({ "int32(float32)", "float64(float64)" }, function(a) return a > 0 end)
    local nonzero = luda.vectorize({ "bool(float32)" }, function(a) return a end)
    for _, case in ipairs(layouts()) do
      local x, hx = case[2], H.read(case[2])
      H.check(positive(x), H.map(function(v) return count(v > 0) end, hx), H.exact, case[1])
      H.check(nonzero(x), H.map(truth, hx), H.exact, case[1])
    end
  end)

  it("a local still holds one kind of value: a bool assigned to a number local is an error", function()
    local k = luda.elementwise("T x", "T y", "local v = 0 v = x > 0 y = v", "mix")
    H.raises("elementwise 'mix':1:13: type error: local 'v' is int64 (line 1) and cannot also hold bool\n" ..
             "    local v = 0 v = x > 0 y = v\n" ..
             "                ^", function() return k(luda.array({ 1.0 })) end)
  end)
end)

-- Raw outputs of luda.elementwise, as CuPy's ElementwiseKernel('T x', 'raw T y', ...):
-- a whole array that the body indexes with i or any index, outside the loop's shape,
-- which the other arrays or size= give. Each runs on the cpu target and on cuda when there
-- is a GPU, on random inputs in every layout, against plain-Lua references; the errors for
-- the calls CuPy refuses are pinned.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local raises = H.raises
local on_devices = support.device_tests(_ENV)

-- The elements of a host array in C order, reversed.
local function reversed(h)
  local out = {}
  for k = 1, #h.data do out[k] = h.data[#h.data + 1 - k] end
  return { shape = { #out }, data = out }
end

describe("elementwise raw outputs", function()
  before_each(function() math.randomseed(2211) end)

  on_devices("the body writes a raw output at any index; the inputs give the loop", function()
    local reverse = luda.elementwise("T x", "raw T y", "y[n - 1 - i] = x", "reverse")
    for _, dtype in ipairs({ "float32", "int16", "float64" }) do
      for _, case in ipairs(H.layouts(dtype)) do
        local x = case[2]
        local hx = H.read(x)
        local y = luda.full({ x.size }, 7, dtype)
        assert.are.equal(y, reverse(x, y))  -- the output given comes back
        H.check(y, reversed(hx), H.exact, dtype .. " " .. case[1])
      end
    end
  end)

  on_devices("a histogram by atomics into a raw output", function()
    local hist = luda.elementwise("int32 v", "raw int32 h", "cuda.atomic.add(h, v, 1)", "hist")
    for _, case in ipairs(H.layouts("int32", 0, 9)) do
      local v = case[2]
      local counts = {}
      for k = 1, 10 do counts[k] = 0 end
      for _, e in ipairs(H.read(v).data) do counts[e + 1] = counts[e + 1] + 1 end
      local h = luda.zeros({ 10 }, "int32")
      hist(v, h)
      H.check(h, H.of(counts), H.exact, case[1])
    end
  end)

  on_devices("a strided view as a raw output is indexed as the view", function()
    local put = luda.elementwise("T x", "raw T y", "y[i] = x * 2", "put")
    local base = luda.zeros({ 12 }, "float64")
    local x = H.random("float64", { 4 })
    put(H.to_array(x, "float64"), base:slice("1::3"))
    local want = {}
    for k = 1, 12 do want[k] = 0.0 end
    for k = 1, 4 do want[2 + 3 * (k - 1)] = 2 * x.data[k] end
    H.check(base, H.of(want), H.exact)
  end)

  on_devices("raw and element outputs together come back in out_params order", function()
    local split = luda.elementwise("T x", "raw T lo, T twice", "lo[i] = x - 1\ntwice = x * 2", "split")
    local hx = H.random("float32", { 3, 4 })
    local x = H.to_array(hx, "float32")
    local lo = luda.full({ 15 }, 5, "float32")
    local a, b = split(x, lo, luda.empty({ 3, 4 }, "float32"))
    assert.are.equal(lo, a)
    local want = {}
    for k = 1, 15 do want[k] = k <= 12 and support.f32(hx.data[k] - 1) or 5 end
    H.check(lo, H.of(want), H.exact)
    H.check(b, H.map(function(v) return support.f32(v * 2) end, hx), H.exact)
  end)

  on_devices("every array raw: size= gives the loop, over outputs given or allocated", function()
    local copy = luda.elementwise("raw T x", "raw T y", "y[i] = x[i] + 1", "copy")
    local hx = H.random("int64", { 9 })
    local x = H.to_array(hx, "int64")
    local y = luda.full({ 9 }, -1, "int64")
    copy(x, y, { size = 5 })
    local want = {}
    for k = 1, 9 do want[k] = k <= 5 and hx.data[k] + 1 or -1 end
    H.check(y, H.of(want), H.exact)
    local made = copy(x, { size = 7 })
    assert.are.same({ 7 }, made.shape)
    H.check(made, H.of({ table.unpack(H.map(function(v) return v + 1 end, hx).data, 1, 7) }), H.exact)
    H.check(copy(x, { size = 0 }), H.of({}, { 0 }), H.exact)
  end)

  on_devices("a bool stored into a raw number output converts to 0 or 1", function()
    local positive = luda.elementwise("T x", "raw int8 y", "y[i] = x > 0", "positive")
    local hx = H.random("float64", { 17 })
    local y = luda.full({ 17 }, 9, "int8")
    positive(H.to_array(hx, "float64"), y)
    H.check(y, H.map(function(v) return v > 0 and 1 or 0 end, hx), H.exact)
  end)

  on_devices("an index past a raw output is a bounds error where bounds are checked", function()
    local shift = luda.elementwise("T x", "raw T y", "y[i + 1] = x", "shift", { boundscheck = true })
    local x, y = luda.ones({ 4 }), luda.zeros({ 4 })
    raises("elementwise 'shift' at elementwise 'shift':1: index 4 out of range for axis 0 of size 4",
           function() return shift(x, y) end)
  end)

  on_devices("the calls CuPy refuses, with what to do", function()
    local reverse = luda.elementwise("T x", "raw T y", "y[n - 1 - i] = x", "reverse")
    local copy = luda.elementwise("raw T x", "raw T y", "y[i] = x[i]", "copy")
    local both = luda.elementwise("raw T x", "raw T y, T z", "y[i] = x[i] z = 0", "both")
    local fixed = luda.elementwise("T x", "raw float32 y", "y[i] = x", "fixed")
    local x = luda.ones({ 4 }, "float32")
    raises("elementwise 'reverse': output 1 'y' is raw, so its shape is the body's to decide: pass the outputs",
           function() return reverse(x) end)
    raises("elementwise 'reverse': option 'size' is for calls whose inputs are all raw or scalars; here the arrays " ..
           "give the size", function() return reverse(x, luda.zeros({ 4 }, "float32"), { size = 4 }) end)
    raises("elementwise 'copy': no array argument gives the size of the loop (raw arrays and scalars do not); pass " ..
           "{size = n}", function() return copy(x, luda.zeros({ 4 }, "float32")) end)
    raises("elementwise 'both': option 'size' is for calls whose outputs are allocated or all raw; here the outputs " ..
           "given give the size (pass the outputs or {size = n}, not both)",
           function() return both(x, luda.zeros({ 4 }, "float32"), luda.zeros({ 4 }, "float32"), { size = 4 }) end)
    raises("elementwise 'both': no array argument gives the size of the loop (raw arrays and scalars do not); pass " ..
           "the outputs or {size = n}", function() return both(x) end)
    raises("elementwise 'fixed': output 1 'y' is raw float32, got a float64 array; pass a float32 array",
           function() return fixed(x, luda.zeros({ 4 }, "float64")) end)
    raises("elementwise 'reverse': output 1 'y' must be an ndarray, got 3", function() return reverse(x, 3) end)
    local whole = luda.elementwise("T x", "raw T y", "y = x", "whole")
    raises("elementwise 'whole':1:1: type error: parameter 'y' is array(float32, 1d, C); it cannot be assigned float32\n" ..
           "    y = x\n    ^", function() return whole(x, luda.zeros({ 4 }, "float32")) end)
  end)

  it("a reduction's outputs cannot be raw", function()
    raises("out_params of reduction 'r':1:1: syntax error: 'raw' is for in_params and an elementwise kernel's " ..
           "outputs: a reduction's outputs are written by post_map_expr, one element per reduced row\n" ..
           "    raw T y\n    ^~~", function() return luda.reduction("T x", "raw T y", "x", "a + b", "y = a", "0", "r") end)
  end)

  it("inspect takes the inputs, then the raw outputs", function()
    local reverse = luda.elementwise("T x", "raw T y", "y[n - 1 - i] = x", "reverse")
    assert.is_truthy(reverse:inspect("cuda", "void(float32, float32[:])"):find("reverse", 1, true))
    raises("elementwise 'reverse': the signature 'void(float32)' has 1 parameter but the kernel takes 2 (its " ..
           "inputs, then its raw outputs)", function() return reverse:inspect("cuda", "void(float32)") end)
  end)
end)

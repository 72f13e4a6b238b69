-- The kernel kinds: luda.vectorize, luda.elementwise, luda.reduction and
-- luda.fuse, each behaviour run on the cpu target and on cuda when there is a GPU, against
-- plain-Lua references (tests/lua/hostref.lua) on random inputs in every layout:
-- broadcast, transposed, strided and reversed views, size-1 axes, 0-d and empty arrays.
-- Errors are pinned to their exact text and place.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local f32, error_of, raises = support.f32, support.error_of, H.raises

local on_devices = support.device_tests(_ENV)

local device_name, needs_gpu = support.device_name, support.gpu_test(_ENV)

-- A value computed exactly in Lua, brought into `dtype`: float32 rounds, narrow ints wrap.
local BITS = { int8 = 8, int16 = 16, int32 = 32, int64 = 64, uint8 = 8, uint16 = 16, uint32 = 32, uint64 = 64 }
local function in_dtype(dtype, v)
  if dtype == "float32" then return f32(v) end
  if BITS[dtype] then return H.wrap(v, BITS[dtype], dtype:sub(1, 1) == "u") end
  return v
end

local SQRT_2PI = math.sqrt(2 * math.pi)
local function gaussian_pdf(x, mean, sigma)
  return math.exp(-0.5 * ((x - mean) / sigma) ^ 2) / (sigma * SQRT_2PI)
end

describe("luda.vectorize", function()
  before_each(function() math.randomseed(5005) end)

  on_devices("specializes per input dtypes without signatures, on the inputs' device", function(device)
    local add = luda.vectorize(function(x, y) return x + y end)
    for _, dtype in ipairs({ "float32", "float64", "int32", "int64", "int8", "uint16" }) do
      local hx, hy = H.random(dtype, { 37 }), H.random(dtype, { 37 })
      local z = add(H.to_array(hx, dtype), H.to_array(hy, dtype))
      assert.are.same({ dtype, device_name(device) }, { z.dtype, z.device })
      H.check(z, H.map(function(a, b) return in_dtype(dtype, a + b) end, hx, hy), H.exact, dtype)
    end
  end)

  on_devices("broadcasts shapes as NumPy does", function()
    local mul = luda.vectorize(function(x, y) return x * y - 1 end)
    for _, pair in ipairs(H.BROADCASTS) do
      local hx, hy = H.random("float64", pair[1]), H.random("float64", pair[2])
      local z = mul(H.to_array(hx, "float64"), H.to_array(hy, "float64"))
      H.check(z, H.map(function(a, b) return a * b - 1 end, hx, hy), H.rel(1e-15, 1), "broadcast")
      z = mul(H.to_array(hy, "float64"), H.to_array(hx, "float64"))
      H.check(z, H.map(function(a, b) return a * b - 1 end, hy, hx), H.rel(1e-15, 1), "broadcast, swapped")
    end
  end)

  on_devices("reads transposed, strided, reversed, size-1, 0-d and empty inputs", function()
    local f = luda.vectorize(function(x) return 2 * x + 1 end)
    for _, dtype in ipairs({ "float32", "int32" }) do
      for _, case in ipairs(H.layouts(dtype, -1000, 1000)) do
        local x = case[2]
        local z = f(x)
        assert.are.same({ x.shape, dtype }, { z.shape, z.dtype })
        H.check(z, H.map(function(a) return in_dtype(dtype, 2 * a + 1) end, H.read(x)), H.exact, case[1])
      end
    end
  end)

  -- Sizes around the vector width, and views that start one element in (not 16-byte
  -- aligned), take the fast template's vector body, its tails and the general path.
  on_devices("many sizes, offsets and dtypes: the vectorized body, its tails and the general path", function()
    local f = luda.vectorize(function(x, y) return x * 2 + y end)
    local sizes = { 1, 3, 4, 5, 8, 15, 16, 17, 31, 32, 33, 100, 255, 256, 257, 1000, 4099 }
    for _, dtype in ipairs({ "int8", "uint8", "int16", "int32", "int64", "float32", "float64" }) do
      for _, n in ipairs(sizes) do
        local hx, hy = H.random(dtype, { n + 1 }, 0, 50), H.random(dtype, { n + 1 }, 0, 50)
        local x, y = H.to_array(hx, dtype), H.to_array(hy, dtype)
        local function ref(a, b) return in_dtype(dtype, in_dtype(dtype, a * 2) + b) end
        local what = ("%s n=%d"):format(dtype, n)
        H.check(f(x, y), H.map(ref, hx, hy), H.exact, what)
        local xs, ys = x:slice("1:"), y:slice(":-1")   -- shifted by one element: misaligned
        H.check(f(xs, ys), H.map(ref, H.read(xs), H.read(ys)), H.exact, what .. " misaligned")
        local out = luda.empty(n + 1, dtype)
        f(x, 3, { out = out })
        H.check(out, H.map(function(a) return ref(a, 3) end, hx), H.exact, what .. " scalar")
      end
    end
  end)

  on_devices("takes Lua numbers as weak scalars, and returns a Lua number when all are", function()
    local f = luda.vectorize(function(x, y) return x * y end)
    local hx = H.random("float32", { 20 })
    local z = f(H.to_array(hx, "float32"), 0.1)
    assert.are.equal("float32", z.dtype)  -- 0.1 takes float32, not float64
    H.check(z, H.map(function(a) return a * f32(0.1) end, hx), H.f32_exact)
    local hi = H.random("int32", { 20 }, -1000, 1000)
    z = f(3, H.to_array(hi, "int32"))
    assert.are.equal("int32", z.dtype)
    H.check(z, H.map(function(a) return 3 * a end, hi), H.exact)
    assert.are.equal("float64", f(H.to_array(hi, "int32"), 0.5).dtype)
    local r = f(6, 7)
    assert.are.same({ 42, "integer" }, { r, math.type(r) })
    r = f(1.5, 3)
    assert.are.same({ 4.5, "float" }, { r, math.type(r) })
    assert.are.equal(12, luda.vectorize(function(a, b, c) return a * b + c end)(2, 5, 2))
  end)

  on_devices("returns bools from comparisons and keeps f.lua as the plain function", function()
    local fn = function(x, y) return x < y end
    local lt = luda.vectorize(fn)
    assert.are.equal(fn, lt.lua)
    local hx, hy = H.random("float64", { 3, 4 }), H.random("float64", { 4 })
    local z = lt(H.to_array(hx, "float64"), H.to_array(hy, "float64"))
    assert.are.equal("bool", z.dtype)
    H.check(z, H.map(fn, hx, hy), H.exact)
    assert.are.equal(true, lt(1, 2))
  end)

  on_devices("the Numba tutorial's gaussian_pdf stays in float32 and matches float64 Lua", function()
    local gpdf = luda.vectorize("float32(float32, float32, float32)", gaussian_pdf)
    local hx = H.random("float32", { 1000 }, -4, 4)
    local z = gpdf(H.to_array(hx, "float32"), 0, 1)
    assert.are.equal("float32", z.dtype)
    H.check(z, H.map(function(a) return gaussian_pdf(a, 0, 1) end, hx), H.near32(8, 1e-9))
    assert.is_true(gpdf:inspect("cuda", "float32(float32, float32, float32)"):find("expf") ~= nil)
  end)

  on_devices("a device function called from the scalar function", function()
    local function polar_to_cartesian(rho, theta) return rho * math.cos(theta), rho * math.sin(theta) end
    local function polar_distance(rho1, theta1, rho2, theta2)
      local x1, y1 = polar_to_cartesian(rho1, theta1)
      local x2, y2 = polar_to_cartesian(rho2, theta2)
      return ((x1 - x2) ^ 2 + (y1 - y2) ^ 2) ^ 0.5
    end
    local f = luda.vectorize({ "float64(float64, float64, float64, float64)" }, polar_distance)
    local r1, t1 = H.random("float64", { 300 }, 0.5, 1.5), H.random("float64", { 300 }, -4, 4)
    local r2, t2 = H.random("float64", { 300 }, 0.5, 1.5), H.random("float64", { 300 }, -4, 4)
    local z = f(H.to_array(r1, "float64"), H.to_array(t1, "float64"), H.to_array(r2, "float64"),
                H.to_array(t2, "float64"))
    H.check(z, H.map(polar_distance, r1, t1, r2, t2), H.rel(1e-12, 1))
  end)

  on_devices("writes out= (also a strided view) and returns it", function()
    local add = luda.vectorize(function(x, y) return x + y end)
    local hx, hy = H.random("float64", { 4 }), H.random("float64", { 4 })
    local base = luda.zeros({ 8 }, "float64")
    local out = base:slice("::2")
    local r = add(H.to_array(hx, "float64"), H.to_array(hy, "float64"), { out = out })
    assert.is_true(rawequal(r, out))
    local sum = H.map(function(a, b) return a + b end, hx, hy)
    H.check(r, sum, H.exact, "returned")
    H.check(out, sum, H.exact, "out")
    H.check(base:slice("1::2"), H.fill({ 4 }, function() return 0.0 end), H.exact, "elements between")
    -- out= broadcasts the inputs to its shape
    local o2 = luda.empty({ 3, 4 }, "float64")
    add(H.to_array(hx, "float64"), 1.5, { out = o2 })
    H.check(o2, H.map(function(_, a) return a + 1.5 end, H.fill({ 3, 4 }, function() return 0 end), hx), H.exact)
  end)

  on_devices("empty inputs give empty outputs and launch nothing", function()
    local add = luda.vectorize(function(x, y) return x + y end)
    local z = add(luda.empty({ 0 }, "float32"), luda.empty({ 0 }, "float32"))
    assert.are.same({ { 0 }, "float32" }, { z.shape, z.dtype })
    z = add(luda.empty({ 3, 0 }, "int64"), luda.ones({ 1 }, "int64"))
    assert.are.same({ 3, 0 }, z.shape)
  end)

  describe("signatures", function()
    local SIGS = { "float32(float32, float32)", "int64(int64, int64)" }

    on_devices("picks the exact match, else the lossless conversion", function()
      local add = luda.vectorize(SIGS, function(x, y) return x + y end)
      local a = H.random("float32", { 10 })
      local z = add(H.to_array(a, "float32"), H.to_array(a, "float32"))
      assert.are.equal("float32", z.dtype)
      H.check(z, H.map(function(u, v) return u + v end, a, a), H.f32_exact)
      local i = H.random("int32", { 10 }, -1000000, 1000000)
      z = add(H.to_array(i, "int32"), H.to_array(i, "int32"))   -- int32 -> int64 loses nothing
      assert.are.equal("int64", z.dtype)
      H.check(z, H.map(function(u, v) return u + v end, i, i), H.exact)
      assert.are.equal("float32", add(H.to_array(a, "float32"), 2.5).dtype)
      local r = add(2, 3)
      assert.are.same({ 5, "integer" }, { r, math.type(r) })
    end)

    on_devices("lists the signatures when none takes the inputs", function()
      local add = luda.vectorize(SIGS, function(x, y) return x + y end)
      local x = luda.ones(3, "float64")
      raises("vectorize 'add': no signature takes the arguments (float64, float64) without loss; the signatures are " ..
             "float32(float32, float32), int64(int64, int64)", function() return add(x, x) end)
      local i = luda.ones(3, "int32")
      raises("vectorize 'add': no signature takes the arguments (int32, float32) without loss; the signatures are " ..
             "float32(float32, float32), int64(int64, int64)", function() return add(i, luda.ones(3, "float32")) end)
    end)

    it("compiles the signatures eagerly, so a type error shows at luda.vectorize", function()
      local msg = error_of(function()
        return luda.vectorize("float32(float32)", function(x) return x + true end)
      end)
      assert.is_truthy(msg:find("type error: cannot apply '+' to float32 and bool", 1, true), msg)
    end)

    it("rejects a malformed signature with its column", function()
      raises("signature:1:9: signature error: unknown type 'flaot32' (types: bool, int8, int16, int32, int64, uint8, " ..
             "uint16, uint32, uint64, float32, float64)\n    float32(flaot32)\n            ^",
             function() return luda.vectorize("float32(flaot32)", function(x) return x end) end)
      raises("vectorize 'fn': the signature 'float32(float32)' has 1 parameter but the function takes 2",
             function() return luda.vectorize("float32(float32)", function(x, y) return x + y end) end)
    end)

    on_devices("compile(sig) and inspect(\"types\" | \"cuda\", sig); signatures(); name", function()
      local f = luda.vectorize(function(x, y) return x * y + 1 end)
      f:compile("float64(float64, float64)")
      assert.are.same({ "float64(float64, float64)" }, f:signatures())
      assert.are.same({ "float32(float32, float32)", "int64(int64, int64)" }, luda.vectorize(SIGS, function(x, y) return x + y end):signatures())
      assert.are.equal("f", f.name)
      local types = f:inspect("types", "float64(float64, float64)")
      assert.is_truthy(types:find("float64", 1, true), types)
      local cuda = f:inspect("cuda", "float32(float32, float32)")
      assert.is_truthy(cuda:find("float", 1, true), cuda)
    end)

    -- PTX needs NVRTC, not a GPU: each kind's PTX is for the arch asked, and its entry is the
    -- kernel the "cuda" text defines.
    it("inspect(\"ptx\", sig, {arch=}) for every kind, without a GPU", function()
      local function entry_of(ptx)
        return ptx:match("%.entry%s+([%w_]+)")
      end
      local kinds = {
        { luda.vectorize(function(x, y) return x * y + 1 end), "float32(float32, float32)" },
        { luda.elementwise("float32 x", "float32 y", "y = x * 2", "dbl"), "void(float32)" },
        { luda.reduction("T x", "T y", "x * x", "a + b", "y = a", "0", "ssq"), "float64(float64)" },
        { luda.fuse(function(x, y) return luda.sum(x * y) / luda.sum(y) end), "float64(float64, float64)" },
      }
      for _, k in ipairs(kinds) do
        local f, sig = k[1], k[2]
        for _, arch in ipairs({ "sm_90", 80, "compute_75" }) do
          local ptx = f:inspect("ptx", sig, { arch = arch })
          local want = type(arch) == "number" and arch or tonumber(arch:match("%d+"))
          assert.is_truthy(ptx:find(".target sm_" .. want, 1, true), f.name .. " for " .. arch)
          local entry = entry_of(ptx)
          assert.is_truthy(entry, f.name)
          assert.is_truthy(f:inspect("cuda", sig):find(entry, 1, true), f.name .. ": " .. entry)
        end
      end
      local v = kinds[1][1]
      raises("inspect: option 'arch' must look like \"sm_90\", got 'sm'",
             function() return v:inspect("ptx", "float32(float32, float32)", { arch = "sm" }) end)
      raises("bad argument #3 to 'inspect' (unknown option 'arc'; expected arch)",
             function() return v:inspect("ptx", "float32(float32, float32)", { arc = 90 }) end)
      raises("vectorize 'fn': unknown inspect kind 'sass'; expected \"types\", \"cuda\" or \"ptx\"",
             function() return v:inspect("sass", "float32(float32, float32)") end)
    end)
  end)

  describe("errors", function()
    on_devices("shapes that do not broadcast", function()
      local add = luda.vectorize(function(x, y) return x + y end)
      local x, y = luda.ones(3), luda.ones({ 2, 4 })
      raises("vectorize 'add': operands could not be broadcast together with shapes (3,) (2, 4)", function() return add(x, y) end)
    end)

    on_devices("out= of the wrong dtype or shape", function()
      local add = luda.vectorize(function(x, y) return x + y end)
      local x = luda.ones(4, "float32")
      raises("vectorize 'add': output 1 'out' is a float64 array but the kernel makes float32; pass a float32 array or none",
             function() return add(x, x, { out = luda.empty(4, "float64") }) end)
      raises("vectorize 'add': output 1 'out' has shape (5,) but the result has shape (4,)",
             function() return add(x, x, { out = luda.empty(5, "float32") }) end)
    end)

    on_devices("a wrong number of arguments, a bad operand and unknown options", function()
      local add = luda.vectorize(function(x, y) return x + y end)
      local x = luda.ones(4)
      raises("vectorize 'add' takes 2 arguments (x, y), got 1", function() return add(x) end)
      raises("vectorize 'add': argument 2 'y' is a string; pass arrays, numbers, booleans or typed scalars (luda.int32(v))",
             function() return add(x, "1") end)
      raises("vectorize 'add': unknown option 'outt'; expected out, stream", function() return add(x, x, { outt = x }) end)
      raises("vectorize 'add': option 'stream' must be a stream (luda.stream()) or 0 for the default stream, got 's'",
             function() return add(x, x, { stream = "s" }) end)
      raises("vectorize 'add': option 'out' must be an ndarray, got 3", function() return add(x, x, { out = 3 }) end)
      -- stream = 0 is the default stream; the options table may be reused from call to call
      local z = luda.empty(4)
      local options = { out = z, stream = 0 }
      for _ = 1, 3 do assert.are.equal(z, add(x, x, options)) end
      assert.are.same({ 2, 2, 2, 2 }, z:totable())
    end)

    it("arrays on two devices", needs_gpu(function()
      local add = luda.vectorize(function(x, y) return x + y end)
      local x, y = luda.ones(4, nil, { device = "cpu" }), luda.ones(4, nil, { device = "cuda:0" })
      raises("vectorize 'add' got arrays on cpu (x) and cuda:0 (y); put them on one device (x:to(\"cuda:0\"))",
             function() return add(x, y) end)
    end))
  end)

  it("runs on a stream asynchronously", needs_gpu(function()
    luda.with_device("cuda", function()
      local add = luda.vectorize(function(x, y) return x + y end)
      local hx = H.random("float32", { 1000 })
      local x, z = H.to_array(hx, "float32"), luda.empty(1000, "float32")
      local s = luda.stream()
      add(x, x, { out = z, stream = s })
      s:synchronize()
      H.check(z, H.map(function(a) return a + a end, hx), H.f32_exact)
    end)
  end))
end)

describe("luda.elementwise", function()
  before_each(function() math.randomseed(5006) end)

  -- CuPy's user guide, "Basics of elementwise kernels", in Lua.
  on_devices("CuPy's squared_diff with broadcasting, scalars and a given output", function()
    local squared_diff = luda.elementwise("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    local x = luda.arange(10, "float32"):reshape(2, 5)
    local y = luda.arange(5, "float32")
    local want = { { 0, 0, 0, 0, 0 }, { 25, 25, 25, 25, 25 } }
    assert.are.same(want, squared_diff(x, y):totable())
    assert.are.same({ { 25, 16, 9, 4, 1 }, { 0, 1, 4, 9, 16 } }, squared_diff(x, 5):totable())
    local z = luda.empty({ 2, 5 }, "float32")
    squared_diff(x, y, z)
    assert.are.same(want, z:totable())
  end)

  on_devices("type placeholders bind from the arguments", function()
    local k = luda.elementwise("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic")
    for _, dtype in ipairs({ "float32", "float64", "int32", "int64" }) do
      local hx, hy = H.random(dtype, { 3, 4 }, -1000, 1000), H.random(dtype, { 4 }, -1000, 1000)
      local z = k(H.to_array(hx, dtype), H.to_array(hy, dtype))
      assert.are.equal(dtype, z.dtype)
      local function ref(a, b)
        local d = in_dtype(dtype, a - b)
        return in_dtype(dtype, d * d)
      end
      H.check(z, H.map(ref, hx, hy), H.exact, dtype)
    end
    -- a Lua number takes T from the array next to it
    assert.are.equal("float32", k(luda.ones(3, "float32"), 0.5).dtype)
    -- two placeholders; the output's is bound by the given output
    local k2 = luda.elementwise("X x, Y y", "Z z", "z = x * y", "mixed")
    local z = luda.empty(4, "float64")
    k2(luda.arange(4, "int32"), luda.full(4, 0.5, "float32"), z)
    assert.are.same({ 0, 0.5, 1, 1.5 }, z:totable())
  end)

  on_devices("concrete dtypes convert their arguments", function()
    local k = luda.elementwise("float32 x", "float32 y", "y = x / 3", "third")
    local hx = H.random("float64", { 50 })
    local z = k(H.to_array(hx, "float64"))
    assert.are.equal("float32", z.dtype)
    H.check(z, H.map(function(a) return f32(f32(a) / 3) end, hx), H.f32_exact)
  end)

  on_devices("reads every layout and broadcasts to the output", function()
    local k = luda.elementwise("T x, T b", "T y", "y = x * 2 - b", "layouts")
    for _, case in ipairs(H.layouts("int64", -1000, 1000)) do
      local x = case[2]
      local z = k(x, 7)
      H.check(z, H.map(function(a) return a * 2 - 7 end, H.read(x)), H.exact, case[1])
    end
    -- into a transposed (non-contiguous) output
    local hx, hb = H.random("float64", { 5, 1 }), H.random("float64", { 1, 6 })
    local out = luda.zeros({ 6, 5 }, "float64").T
    k(H.to_array(hx, "float64"), H.to_array(hb, "float64"), out)
    H.check(out, H.map(function(a, b) return a * 2 - b end, hx, hb), H.exact, "transposed output")
  end)

  on_devices("i is the element's 0-based C-order index and n the size", function()
    local k = luda.elementwise("T x", "int64 idx, int64 size", "idx = i\nsize = n", "indices")
    local idx, size = k(luda.zeros({ 3, 4 }))
    assert.are.same({ 3, 4 }, idx.shape)
    H.check(idx, H.fill({ 3, 4 }, function(p) return p - 1 end), H.exact)
    H.check(size, H.fill({ 3, 4 }, function() return 12 end), H.exact)
  end)

  on_devices("raw parameters are indexed freely, sized by the output or by size=", function()
    local reverse = luda.elementwise("raw T x", "T y", "y = x[n - 1 - i]", "reverse")
    local hx = H.random("float64", { 17 })
    local x = H.to_array(hx, "float64")
    local y = luda.empty(17, "float64")
    reverse(x, y)
    H.check(y, H.fill({ 17 }, function(p) return hx.data[18 - p] end), H.exact)
    y = reverse(x, { size = 17 })
    assert.are.same({ 17 }, y.shape)
    H.check(y, H.fill({ 17 }, function(p) return hx.data[18 - p] end), H.exact)
    -- a raw 2-d parameter next to a broadcast one
    local rowsum = luda.elementwise("raw T m, int64 r", "T s", "s = m[r][0] + m[r][1]", "rowsum")
    local m = luda.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float64")
    assert.are.same({ 3, 7, 11 }, rowsum(m, luda.arange(3)):totable())
  end)

  on_devices("raw parameters are checked by default on cpu, not on cuda, and as boundscheck= says", function(device)
    -- A view of the first 16 of 32 elements: an index past it stays inside the buffer.
    local x = luda.arange(32, "int32"):slice({ 0, 16 })
    local beyond = {}
    for p = 1, 16 do beyond[p] = p + 15 end
    local peek = luda.elementwise("raw T x", "T y", "y = x[i + 16]", "peek")
    if device == "cpu" then
      local where = support.here(); local err = error_of(function() peek(x, { size = 16 }) end)
      assert.are.equal(where .. "elementwise 'peek' at elementwise 'peek':1: index 16 out of range for axis 0 of size 16", err)
    else
      assert.are.same(beyond, peek(x, { size = 16 }):totable())
    end
    local unchecked = luda.elementwise("raw T x", "T y", "y = x[i + 16]", "peek", { boundscheck = false })
    assert.are.same(beyond, unchecked(x, { size = 16 }):totable())
    local checked = luda.elementwise("raw T x", "T y", "y = x[i + 16]", "peek", { boundscheck = true })
    local where = support.here(); local err = error_of(function() checked(x, { size = 16 }) end)
    assert.are.equal(where .. "elementwise 'peek' at elementwise 'peek':1: index 16 out of range for axis 0 of size 16", err)
  end)

  on_devices("several outputs come back in order; an output read before it is set is passed in", function()
    local k = luda.elementwise("T x", "T s, T d", "s = x + 1\nd = x - 1", "plus_minus")
    local hx = H.random("int32", { 6 }, -100, 100)
    local s, d = k(H.to_array(hx, "int32"))
    H.check(s, H.map(function(a) return a + 1 end, hx), H.exact)
    H.check(d, H.map(function(a) return a - 1 end, hx), H.exact)
    local acc = luda.elementwise("T x", "T total", "total = total + x", "accumulate")
    local total = luda.full(6, 100, "int32")
    acc(H.to_array(hx, "int32"), total)
    acc(H.to_array(hx, "int32"), total)
    H.check(total, H.map(function(a) return 100 + 2 * a end, hx), H.exact)
  end)

  on_devices("empty arrays", function()
    local k = luda.elementwise("T x", "T y", "y = x + 1", "inc")
    assert.are.same({ 2, 0 }, k(luda.empty({ 2, 0 }, "float32")).shape)
  end)

  it("runs on a stream", needs_gpu(function()
    luda.with_device("cuda", function()
      local k = luda.elementwise("T x", "T y", "y = x + 1", "inc")
      local z = luda.empty(100, "float32")
      local s = luda.stream()
      k(luda.zeros(100, "float32"), z, { stream = s })
      s:synchronize()
      H.check(z, H.fill({ 100 }, function() return 1.0 end), H.exact)
    end)
  end))

  describe("errors", function()
    it("bad parameter strings, with the column", function()
      local function bad(message, ins, outs)
        -- the line of this call to luda.elementwise
        local line = debug.getinfo(1, "l").currentline + 1
        local got = error_of(function() return luda.elementwise(ins, outs, "z = x", "k") end)
        assert.are.equal(debug.getinfo(1, "S").short_src .. ":" .. line .. ": " .. message, got)
      end
      bad("in_params of elementwise 'k':1:6: type error: unknown type 'flaot32': expected a dtype (float32, int64, ...) " ..
          "or a one-letter type placeholder (T)\n    T x, flaot32 w\n         ^~~~~~~", "T x, flaot32 w", "T z")
      bad("in_params of elementwise 'k':1:5: syntax error: a parameter (a type and a name: T x) expected near <eof>\n    T x,\n        ^",
          "T x,", "T z")
      bad("in_params of elementwise 'k':1:13: name error: duplicate parameter 'x' (also at column 3)\n    T x, T y, T x\n                ^",
          "T x, T y, T x", "T z")
      bad("in_params of elementwise 'k':1:3: name error: 'i' is a reserved name: i is the element index and n the size\n" ..
          "    T i\n      ^",
          "T i", "T z")
      -- an input and an output of one name: the output would come back uninitialised
      bad("out_params of elementwise 'k':1:8: name error: duplicate parameter 'x': in_params has it too\n" ..
          "    T z, T x\n           ^",
          "T x", "T z, T x")
    end)

    it("an input and an output of one name in a reduction", function()
      local line = debug.getinfo(1, "l").currentline + 1
      local got = error_of(function() return luda.reduction("T x", "T x", "x", "a + b", "x = a", "0", "r") end)
      assert.are.equal(debug.getinfo(1, "S").short_src .. ":" .. line .. ": out_params of reduction 'r':1:3: name " ..
                       "error: duplicate parameter 'x': in_params has it too\n    T x\n      ^", got)
    end)

    on_devices("a placeholder that no argument binds", function()
      local k = luda.elementwise("T x", "U z", "z = x", "unbound")
      raises("elementwise 'unbound': cannot tell the type of placeholder U (output 1 'z'): no argument binds it; pass the output array",
             function() return k(luda.ones(3)) end)
    end)

    on_devices("a body that uses an unknown name, at its line and column", function()
      local k = luda.elementwise("T x", "T z", "z = x\nz = z + y", "body")
      raises("elementwise 'body':2:9: name error: unknown name 'y'\n    z = z + y\n            ^", function() return k(luda.ones(3)) end)
    end)

    on_devices("shapes that do not broadcast, outputs of the wrong dtype, a wrong number of arguments", function()
      local k = luda.elementwise("T x, T y", "T z", "z = x + y", "add")
      local x = luda.ones(3, "float32")
      raises("elementwise 'add': operands could not be broadcast together with shapes (3,) (4,)",
             function() return k(x, luda.ones(4, "float32")) end)
      local conv = luda.elementwise("T x", "float32 z", "z = x", "conv")
      raises("elementwise 'conv': output 1 'z' is an int32 array but the kernel makes float32; pass a float32 array or none",
             function() return conv(x, luda.empty(3, "int32")) end)
      raises("elementwise 'add' takes 2 inputs (x, y) and optionally 1 output (z), got 1 argument", function() return k(x) end)
    end)

    on_devices("size= with outputs given, or with arrays that give the size: the contradiction is refused", function()
      local reverse = luda.elementwise("raw T x", "T y", "y = x[n - 1 - i]", "reverse")
      local x, y = luda.arange(5, "float64"), luda.zeros(3)
      raises("elementwise 'reverse': option 'size' is for calls whose outputs are allocated or all raw; here the outputs given " ..
             "give the size (pass the outputs or {size = n}, not both)",
             function() return reverse(x, y, { size = 5 }) end)
      raises("elementwise 'reverse': option 'size' is for calls whose outputs are allocated or all raw; here the outputs given " ..
             "give the size (pass the outputs or {size = n}, not both)",
             function() return reverse(x, luda.zeros(5), { size = 5 }) end)
      assert.are.same({ 0, 0, 0 }, y:totable())  -- nothing ran
      local add = luda.elementwise("T x, T y", "T z", "z = x + y", "add")
      raises("elementwise 'add': option 'size' is for calls whose inputs are all raw or scalars; here the arrays give the size",
             function() return add(x, 1.0, { size = 5 }) end)
      reverse(x, y)  -- the output gives n = 3
      assert.are.same({ 2, 1, 0 }, y:totable())
    end)

    it("arrays on two devices", needs_gpu(function()
      local k = luda.elementwise("T x, T y", "T z", "z = x + y", "add")
      local x, y = luda.ones(4, nil, { device = "cpu" }), luda.ones(4, nil, { device = "cuda:0" })
      raises("elementwise 'add' got arrays on cpu (x) and cuda:0 (y); put them on one device (x:to(\"cuda:0\"))",
             function() return k(x, y) end)
      local dnn = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnnLayer")
      raises("reduction 'dnnLayer' got arrays on cpu (x) and cuda:0 (w); put them on one device (x:to(\"cuda:0\"))",
             function() return dnn(x, y, 0.5) end)
    end))
  end)
end)

-- The reductions a ReductionKernel most often spells.
local SUM_ARGS = { "T x", "T y", "x", "a + b", "y = a", "0", "sum" }

describe("luda.reduction", function()
  before_each(function() math.randomseed(5007) end)

  -- CuPy's user guide, "Reduction kernels": the L2 norm along CuPy's axis=1 (luda's 2).
  on_devices("CuPy's l2norm along an axis", function()
    local l2norm = luda.reduction("T x", "T y", "x * x", "a + b", "y = math.sqrt(a)", "0", "l2norm")
    local x = luda.arange(10, "float32"):reshape(2, 5)
    local z = l2norm(x, { axis = 2 })
    assert.are.same({ { 2 }, "float32" }, { z.shape, z.dtype })
    H.check(z, H.of({ math.sqrt(30), math.sqrt(255) }), H.near32(1))
  end)

  on_devices("sums over no axis, one axis, negative axes and several axes, with keepdims", function()
    local sum = luda.reduction(table.unpack(SUM_ARGS))
    local hx = H.random("float64", { 3, 4, 5 })
    local x = H.to_array(hx, "float64")
    local close = H.rel(1e-13, 100)
    for _, axes in ipairs({ 1, 2, 3, -1, -3, { 1, 2 }, { 1, 3 }, { 2, 3 }, { 1, 2, 3 } }) do
      for _, keep in ipairs({ false, true }) do
        local what = ("axis %s keepdims %s"):format(type(axes) == "table" and table.concat(axes, ",") or axes, keep)
        H.check(sum(x, { axis = axes, keepdims = keep }), H.sum(hx, axes, keep), close, what)
      end
    end
    H.check(sum(x), H.sum(hx), close, "full")
    H.check(sum(x, { keepdims = true }), H.sum(hx, nil, true), close, "full keepdims")
  end)

  on_devices("float32 sums match within the rounding of the summation order", function()
    local sum = luda.reduction(table.unpack(SUM_ARGS))
    for _, shape in ipairs({ { 100000 }, { 300, 257 }, { 7, 1, 3000 } }) do
      local hx = H.random("float32", shape, -1, 1)
      local x = H.to_array(hx, "float32")
      for _, axes in ipairs({ false, 1, -1 }) do
        local want, scale = H.sum(hx, axes or nil), H.abs_sum(hx, axes or nil)
        local z = sum(x, { axis = axes or nil })
        assert.are.equal("float32", z.dtype)
        H.check(z, want, H.within(function(k) return 2 ^ -20 * scale.data[k] + 1e-30 end), "axis " .. tostring(axes))
      end
    end
  end)

  on_devices("reduce_type float64 accumulates float32 in float64", function()
    -- 3e38 + 3e38 overflows float32 in any summation order; in float64 it does not, and
    -- the post-map brings it back into float32's range
    local args = { "T x", "T y", "x", "a + b", "y = a / 4", "0", "sum64" }
    local x = luda.full(2, 3e38, "float32")
    local v = f32(3e38)
    H.check(luda.reduction(table.unpack(args))(x), H.of(math.huge), H.exact, "float32 accumulation")
    args[8] = { reduce_type = "float64" }
    H.check(luda.reduction(table.unpack(args))(x), H.of(v / 2), H.exact, "float64 accumulation")
  end)

  on_devices("the CuPy guide's dnnLayer: map x * w, reduce a + b, post-map z = a + bias with a scalar bias", function()
    local dnn = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnnLayer")
    local hx, hw = H.random("float64", { 6, 50 }), H.random("float64", { 50 })
    local x, w = H.to_array(hx, "float64"), H.to_array(hw, "float64")
    local prod = H.map(function(a, b) return a * b end, hx, hw)
    local full = H.sum(prod)
    H.check(dnn(x, w, 0.1), H.map(function(s) return s + 0.1 end, full), H.rel(1e-12, 1000), "full")
    H.check(dnn(x, w, 0.1, { axis = 2 }), H.map(function(s) return s + 0.1 end, H.sum(prod, 2)), H.rel(1e-12, 1000), "rows")
  end)

  on_devices("max and min with math.max and an identity, on integers", function()
    local max = luda.reduction("T x", "T y", "x", "math.max(a, b)", "y = a", "-2147483648", "imax")
    local hx = H.random("int32", { 40, 9 })
    local x = H.to_array(hx, "int32")
    local function ref(axes)
      return H.reduce(hx, axes, false, function() return -2147483648 end, function(a, v) return math.max(a, v) end)
    end
    H.check(max(x), ref(nil), H.exact)
    H.check(max(x, { axis = 1 }), ref(1), H.exact)
    H.check(max(x, { axis = 2 }), ref(2), H.exact)
  end)

  on_devices("reads every layout; empty reductions give the identity through the post-map", function()
    local sum = luda.reduction("T x", "T y", "x", "a + b", "y = a + 1", "0", "sum_plus_one")
    for _, case in ipairs(H.layouts("int64", -1000, 1000)) do
      local x = case[2]
      local hx = H.read(x)
      H.check(sum(x), H.map(function(s) return s + 1 end, H.sum(hx)), H.exact, case[1] .. ", full")
      if x.ndim >= 1 then
        H.check(sum(x, { axis = -1 }), H.map(function(s) return s + 1 end, H.sum(hx, -1)), H.exact, case[1] .. ", last axis")
      end
    end
    H.check(sum(luda.empty({ 3, 0 }, "int64"), { axis = 2 }), H.of({ 1, 1, 1 }), H.exact)
  end)

  on_devices("broadcasts its inputs before reducing", function()
    local dot = luda.reduction("T x, T w", "T z", "x * w", "a + b", "z = a", "0", "dot")
    local hx, hw = H.random("int64", { 4, 5 }, -50, 50), H.random("int64", { 5 }, -50, 50)
    local prod = H.map(function(a, b) return a * b end, hx, hw)
    H.check(dot(H.to_array(hx, "int64"), H.to_array(hw, "int64"), { axis = 1 }), H.sum(prod, 1), H.exact)
  end)

  on_devices("writes out= and returns it", function()
    local sum = luda.reduction(table.unpack(SUM_ARGS))
    local hx = H.random("int64", { 5, 6 }, -100, 100)
    local z = luda.empty(6, "int64")
    local r = sum(H.to_array(hx, "int64"), { axis = 1, out = z })
    H.check(z, H.sum(hx, 1), H.exact)
    H.check(r, H.sum(hx, 1), H.exact)
  end)

  describe("errors", function()
    on_devices("axes out of range, repeated, and out= of the wrong shape or dtype", function()
      local sum = luda.reduction(table.unpack(SUM_ARGS))
      local x = luda.ones({ 2, 3 }, "float32")
      raises("reduction 'sum': axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)",
             function() return sum(x, { axis = 3 }) end)
      raises("reduction 'sum': axis 2 is repeated", function() return sum(x, { axis = { 2, -1 } }) end)
      raises("reduction 'sum': output 1 'y' has shape (2,) but the result has shape (3,)",
             function() return sum(x, { axis = 1, out = luda.empty(2, "float32") }) end)
      raises("reduction 'sum': type placeholder T is float32 from argument 1 'x' but float64 from output 1 'y'; pass one dtype " ..
             "(y:astype(\"float32\") converts)",
             function() return sum(x, { axis = 1, out = luda.empty(3, "float64") }) end)
      raises("reduction 'sum': unknown option 'axes'; expected axis, keepdims, out, stream", function() return sum(x, { axes = 1 }) end)
      raises("reduction 'sum': option 'keepdims' must be a boolean, got 1", function() return sum(x, { axis = 1, keepdims = 1 }) end)
      raises("reduction 'sum': option 'axis' must be an integer or a table of integers (1 is the first axis, -1 the last), " ..
             "got 'a'", function() return sum(x, { axis = "a" }) end)
      raises("reduction 'sum': axis[2] must be an integer, got 1.5", function() return sum(x, { axis = { 1, 1.5 } }) end)
      raises("reduction 'sum': option 'axis' must be an integer, got 1.5", function() return sum(x, { axis = 1.5 }) end)
      -- integral floats are axes; all axes listed is a full reduction
      assert.are.same({ 3, 3 }, sum(x, { axis = 2.0 }):totable())
      assert.are.equal(6, sum(x, { axis = { -1, 1 } }):item())
    end)

    on_devices("bad expressions, at their column", function()
      raises("reduction 'broken' map:1:4: syntax error: unexpected symbol near <eof>\n    x *\n       ^",
             function() return luda.reduction("T x", "T y", "x *", "a + b", "y = a", "0", "broken")(luda.ones(3)) end)
      raises("reduction 'r': the identity (argument 6) is required: an expression that reduce_expr leaves unchanged " ..
             "('0' for a + b, '-math.huge' for a maximum); every partial result starts from it, and an empty reduction " ..
             "gives post_map_expr of it",
             function() return luda.reduction("T x", "T y", "x", "a + b", "y = a", nil, "r") end)
      raises("reduction 'r': option 'reduce_type' is 'U': neither a dtype nor a placeholder of the parameters",
             function() return luda.reduction("T x", "T y", "x", "a + b", "y = a", "0", "r", { reduce_type = "U" }) end)
      raises("in_params of reduction 'r':1:3: name error: 'a' is a reserved name: a and b are the reduce expression's operands\n" ..
             "    T a\n      ^",
             function() return luda.reduction("T a", "T y", "a", "a + b", "y = a", "0", "r") end)
    end)
  end)
end)

describe("luda.fuse", function()
  before_each(function() math.randomseed(5008) end)

  -- Several reductions over the same axes, combined by elementwise work after them, in one
  -- reduction kernel; against float64 references folded in plain Lua.
  local function fold(h, axes, init, op) return H.reduce(h, axes, false, function() return init end, op) end
  local function href(h, axes, fn, ...)
    local parts = { ... }
    local out = fold(h, axes, 0, function(a) return a end)
    for k = 1, #out.data do
      local vals = {}
      for j, p in ipairs(parts) do vals[j] = p.data[k] end
      out.data[k] = fn(table.unpack(vals))
    end
    return out
  end
  local function hsum(h, axes) return H.sum(h, axes) end
  local function hmax(h, axes) return fold(h, axes, -math.huge, function(a, v) return math.max(a, v) end) end
  local function hmin(h, axes) return fold(h, axes, math.huge, function(a, v) return math.min(a, v) end) end

  on_devices("several reductions and the work after them, in every layout, for floats and integers", function()
    local wmean = luda.fuse(function(x) return luda.sum(x * x) / luda.sum(x * 0 + 1) end)
    local range = luda.fuse(function(x) return luda.max(x) - luda.min(x) end)
    local both = luda.fuse(function(x) return luda.sum(x), luda.max(x) end)
    local scaled = luda.fuse(function(x, k) return luda.sum(x) * k + 1 end)
    for _, dtype in ipairs({ "float64", "float32", "int32", "int8" }) do
      local lo, hi = nil, nil
      if dtype == "int32" then lo, hi = -1000, 1000 end
      for _, case in ipairs(H.layouts(dtype, lo, hi)) do
        local what = dtype .. ", " .. case[1]
        local x = case[2]
        local hx = H.read(x)
        local squares = H.map(function(a) return a * a end, hx)
        local float = dtype:sub(1, 5) == "float"
        local tol = dtype == "float32" and H.rel(1e-5, 1) or H.rel(1e-13, 1)
        -- a mean of squares: float64 for integers (int64 sums, true division), float32 stays
        local m = wmean(x)
        assert.are.equal(dtype == "float32" and "float32" or "float64", m.dtype, what)
        if dtype == "int8" then  -- int8 * int8 wraps per element, as NumPy's
          squares = H.map(function(a) return H.wrap(a * a, 8) end, hx)
        end
        local n = #hx.data
        H.check(m, href(hx, nil, function(s) return n == 0 and 0 / 0 or s / n end, hsum(squares)),
                float and tol or H.rel(1e-15, 0), what .. ", mean of squares")
        local s3 = scaled(x, 3)
        assert.are.equal(float and dtype or "int64", s3.dtype, what)
        H.check(s3, href(hx, nil, function(s) return s * 3 + 1 end, hsum(hx)), float and tol or H.exact, what .. ", scaled")
        if n == 0 then
          raises("fuse 'range': zero-size array to reduction operation maximum which has no identity", function() return range(x) end)
          raises("fuse 'both': zero-size array to reduction operation maximum which has no identity", function() return both(x) end)
        else
          local r = range(x)
          assert.are.equal(dtype, r.dtype, what)
          H.check(r, href(hx, nil, function(a, b) return H.in_dtype(dtype, a - b) end, hmax(hx), hmin(hx)), H.exact, what .. ", range")
          local total, top = both(x)
          assert.are.same({ float and dtype or "int64", dtype }, { total.dtype, top.dtype }, what)
          H.check(total, hsum(hx), float and tol or H.exact, what .. ", sum of two outputs")
          H.check(top, hmax(hx), H.exact, what .. ", max of two outputs")
        end
      end
    end
  end)

  on_devices("an array with a reduction of it (x - luda.max(x), x / luda.sum(x, 2)) in two passes, in every layout", function()
    local centered = luda.fuse(function(x) return x - luda.max(x) end)
    local shares = luda.fuse(function(x, k) return x * k / luda.sum(x * 0 + 1) end)
    local per = luda.fuse(function(x, k) return k / luda.sum(x * 0 + 1) end)
    for _, dtype in ipairs({ "float64", "int32" }) do
      for _, case in ipairs(H.layouts(dtype, -1000, 1000)) do
        local what = dtype .. ", " .. case[1]
        local x = case[2]
        local hx = H.read(x)
        local n = #hx.data
        if n == 0 then
          raises("fuse 'centered': zero-size array to reduction operation maximum which has no identity", function() return centered(x) end)
        else
          local top = hmax(hx).data[1]
          local c = centered(x)
          assert.are.same({ x.shape, dtype }, { c.shape, c.dtype }, what)
          H.check(c, H.map(function(a) return a - top end, hx), H.exact, what .. ", centered")
        end
        -- k an array too: its elements meet the reduction
        local s = shares(x, x)
        assert.are.same({ x.shape, "float64" }, { s.shape, s.dtype }, what)
        H.check(s, H.map(function(a) return a * a / n end, hx), H.rel(1e-15, 0), what .. ", shares")
        -- the same function is one pass where what follows the reductions is a Lua number
        local one, two = per(x, 2), per(x, x)
        assert.are.same({ {}, x.shape }, { one.shape, two.shape }, what)
        H.check(one, H.of(2 / n), H.exact, what .. ", one pass")
        H.check(two, H.map(function(a) return a / n end, hx), H.exact, what .. ", two passes")
      end
    end
    -- over an axis: each row with its own sum, into a given output
    local rows = luda.fuse(function(x) return x / luda.sum(x, 2) end)
    local hx = H.random("float64", { 5, 300 }, 1, 2)
    local out = luda.empty({ 5, 300 }, "float64")
    assert.is_true(rawequal(out, rows(H.to_array(hx, "float64"), { out = out })))
    local sums = H.sum(hx, 2)
    H.check(out, H.map(function(a) return a end, hx), function(g, w, k) return math.abs(g - w / sums.data[(k - 1) // 300 + 1]) <= 1e-15 end, "rows")
  end)

  on_devices("work after reductions over an axis, on rows and columns, with out=", function()
    local rows = luda.fuse(function(x) return luda.sum(x, 2) * 2 + 1 end)
    local cols = luda.fuse(function(x, w) return luda.sum(x * w, 1) / luda.sum(w, 1), luda.min(x, 1) end)
    for _, dtype in ipairs({ "float64", "int32" }) do
      local hx = H.random(dtype, { 37, 70 }, -1000, 1000)
      local hw = H.random(dtype, { 37, 70 }, 1, 9)
      local x, w = H.to_array(hx, dtype), H.to_array(hw, dtype)
      local r = rows(x)
      assert.are.same({ { 37 }, dtype == "int32" and "int64" or dtype }, { r.shape, r.dtype }, dtype)
      H.check(r, href(hx, 2, function(s) return s * 2 + 1 end, hsum(hx, 2)), H.rel(1e-13, 1), dtype .. " rows")
      local xw = H.map(function(a, b) return a * b end, hx, hw)
      local mean, low = cols(x, w)
      assert.are.same({ { 70 }, "float64", { 70 }, dtype }, { mean.shape, mean.dtype, low.shape, low.dtype }, dtype)
      H.check(mean, href(hx, 1, function(a, b) return a / b end, hsum(xw, 1), hsum(hw, 1)), H.rel(1e-13, 1), dtype .. " cols")
      H.check(low, hmin(hx, 1), H.exact, dtype .. " cols min")
      local m, l = luda.empty(70, "float64"), luda.empty(70, dtype)
      local m2, l2 = cols(x.T.T, w, { out = { m, l } })
      assert.is_true(rawequal(m, m2) and rawequal(l, l2))
      H.check(m, H.read(mean), H.exact, dtype .. " out=")
      -- a reduced axis that is empty: the sum's identity 0, then 0 / 0; min raises, as NumPy
      local e = luda.empty({ 0, 3 }, dtype)
      raises("fuse 'cols': zero-size array to reduction operation minimum which has no identity", function() return cols(e, e) end)
      H.check(rows(luda.empty({ 3, 0 }, dtype)), H.of({ 1, 1, 1 }), H.exact, dtype .. " empty rows")
    end
    -- a long row split over several blocks (partials of two accumulators)
    local hb = H.random("float64", { 2, 300000 })
    local big = luda.fuse(function(x) return luda.max(x, 2) - luda.min(x, 2), luda.sum(x, 2) end)
    local spread, total = big(H.to_array(hb, "float64"))
    H.check(spread, href(hb, 2, function(a, b) return a - b end, hmax(hb, 2), hmin(hb, 2)), H.exact, "split rows")
    H.check(total, hsum(hb, 2), H.within(function(k) return 1e-13 * H.abs_sum(hb, 2).data[k] end), "split rows, sum")
  end)

  on_devices("x * w + b in one kernel, checked against its own plain-Lua function", function()
    local layer = luda.fuse(function(x, w, b) return x * w + b end)
    local hx, hw, hb = H.random("float32", { 64, 33 }), H.random("float32", { 33 }), H.random("float32", { 64, 1 })
    local z = layer(H.to_array(hx, "float32"), H.to_array(hw, "float32"), H.to_array(hb, "float32"))
    assert.are.same({ { 64, 33 }, "float32" }, { z.shape, z.dtype })
    -- the GPU may fuse the multiply-add (one rounding, not two): allow one ulp of x * w
    -- and one of the result
    local ref = H.map(function(a, b, c) return f32(f32(a * b) + c) end, hx, hw, hb)
    local products = H.map(function(a, b) return a * b end, hx, hw)
    H.check(z, ref, H.within(function(k) return H.ulp32(ref.data[k]) + H.ulp32(products.data[k]) end))
    H.check(layer(H.to_array(hx, "float32"), 2, 1), H.map(function(a) return layer.lua(a, 2, 1) end, hx), H.near32(1))
  end)

  on_devices("builtin math and device functions inside", function()
    local function sq(v) return v * v end
    local f = luda.fuse(function(x, y) return math.sqrt(sq(x) + sq(y)) + luda.math.log1p(math.abs(x)) end)
    local hx, hy = H.random("float64", { 200 }), H.random("float64", { 200 })
    H.check(f(H.to_array(hx, "float64"), H.to_array(hy, "float64")),
            H.map(function(a, b) return math.sqrt(a * a + b * b) + luda.math.log1p(math.abs(a)) end, hx, hy), H.rel(1e-14, 1))
  end)

  on_devices("a final luda.sum, max, min or prod with and without an axis", function()
    local hx, hy = H.random("float64", { 5, 7 }), H.random("float64", { 7 })
    local x, y = H.to_array(hx, "float64"), H.to_array(hy, "float64")
    local prod = H.map(function(a, b) return a * b end, hx, hy)
    local close = H.rel(1e-13, 100)
    H.check(luda.fuse(function(a, b) return luda.sum(a * b) end)(x, y), H.sum(prod), close, "sum")
    H.check(luda.fuse(function(a, b) return luda.sum(a * b, 2) end)(x, y), H.sum(prod, 2), close, "sum axis 2")
    H.check(luda.fuse(function(a, b) return luda.sum(a * b, -2) end)(x, y), H.sum(prod, 1), close, "sum axis -2")
    H.check(luda.fuse(function(a, b) return luda.sum(a * b, { 1, 2 }) end)(x, y), H.sum(prod), close, "sum axes {1, 2}")
    local function fold(op, init) return function(axes) return H.reduce(prod, axes, false, function() return init end, op) end end
    local maxr, minr = fold(math.max, -math.huge), fold(math.min, math.huge)
    H.check(luda.fuse(function(a, b) return luda.max(a * b) end)(x, y), maxr(nil), H.exact, "max")
    H.check(luda.fuse(function(a, b) return luda.min(a * b, 1) end)(x, y), minr(1), H.exact, "min axis 1")
    local hs = H.random("float64", { 4, 6 }, 0.5, 1.5)
    H.check(luda.fuse(function(a) return luda.prod(a + 0, 2) end)(H.to_array(hs, "float64")),
            H.reduce(hs, 2, false, function() return 1 end, function(p, v) return p * v end), H.rel(1e-14, 1), "prod")
  end)

  on_devices("out= for both forms; Lua numbers alone give a Lua number", function()
    local layer = luda.fuse(function(x, w, b) return x * w + b end)
    local hx = H.random("int64", { 2, 3 }, -100, 100)
    local x = H.to_array(hx, "int64")
    local z = luda.empty({ 2, 3 }, "int64")
    assert.is_true(rawequal(z, layer(x, 2, 5, { out = z })))
    H.check(z, H.map(function(a) return a * 2 + 5 end, hx), H.exact)
    local rows = luda.fuse(function(a) return luda.sum(a * a, -1) end)
    local r = luda.empty(2, "int64")
    assert.is_true(rawequal(r, rows(x, { out = r })))
    H.check(r, H.sum(H.map(function(a) return a * a end, hx), -1), H.exact)
    local v = layer(3, 4, 5)
    assert.are.same({ 17, "integer" }, { v, math.type(v) })
    assert.are.equal("layer", layer.name)
    assert.are.equal("named", luda.fuse(function(a) return a end, { name = "named" }).name)
  end)

  on_devices("every layout, and empty inputs", function()
    local f = luda.fuse(function(x) return x * 3 - 1 end)
    local s = luda.fuse(function(x) return luda.sum(x * 3 - 1) end)
    for _, case in ipairs(H.layouts("int32", -1000, 1000)) do
      local x = case[2]
      local hx = H.read(x)
      local mapped = H.map(function(a) return a * 3 - 1 end, hx)
      H.check(f(x), mapped, H.exact, case[1])
      local total = 0
      for _, v in ipairs(mapped.data) do total = total + v end
      H.check(s(x), H.of(total), H.exact, case[1] .. ", sum")
    end
  end)

  describe("errors", function()
    -- more fuse errors, with the file's own line and column: tests/errors/kind_fuse_*.lua
    it("a reduction that is not in the final return, at its place", function()
      local line = debug.getinfo(1, "l").currentline + 1
      local msg = error_of(function() return luda.fuse(function(x) local s = luda.sum(x) return s end) end)
      local at = debug.getinfo(1, "S").short_src .. ":" .. line
      -- column 78 of that line, which is shown without its 6 blanks of indentation
      assert.are.equal(at .. ":78: unsupported: luda.sum in a fused function must be in its final return: " ..
                       "return luda.sum(expr, axis), or elementwise work on reductions (elementwise work first, " ..
                       "then the reductions)\n" ..
                       "    local msg = error_of(function() return luda.fuse(function(x) local s = luda.sum(x) return s end) end)\n" ..
                       string.rep(" ", 4 + 78 - 1 - 6) .. "^~~~~~~~~~~", msg)
    end)

    on_devices("work after the reductions that cannot be fused, refused at its place", function()
      local x = luda.array({ 1, 2, 3 }, "float32")
      -- a mistake in the work after the reductions, shown on the line as written
      local bad = luda.fuse(function(x) return luda.sum(x) + not_defined end)
      assert.are.equal(debug.getinfo(1, "S").short_src .. ":" .. (debug.getinfo(1, "l").currentline - 1) ..
                       ":62: name error: unknown name 'not_defined'\n" ..
                       "    local bad = luda.fuse(function(x) return luda.sum(x) + not_defined end)\n" ..
                       string.rep(" ", 4 + 62 - 1 - 6) .. "^", error_of(function() return bad(x) end))
      -- a last value that is a call of several values would give more outputs than listed
      local function two(v) return v, v end
      local three = luda.fuse(function(x, k) return luda.sum(x), two(k) end)
      raises("fuse 'three': the function returns 3 values here but its return lists 2; return one value per expression", function() return three(x, 1) end)
      -- in two passes each output is elementwise: a value of the reductions alone would not be
      local mixed = luda.fuse(function(x, y) return x - luda.max(x), luda.sum(x) * y end)
      raises("fuse 'mixed': value 2 of the return has the reduced shape, but another is elementwise over the inputs (two passes); NumPy would give them different shapes: return them from two fused functions", function() return mixed(x, 2) end)
      -- a typed scalar there would be NumPy's 0-d array: the reduced shape in one pass,
      -- which takes Lua numbers
      raises("fuse 'mixed': 'y' is read after the reductions, where it must be a Lua number (one value for the reduced ones) or an array (a second pass, elementwise); pass a Lua number, not a typed scalar or a boolean", function() return mixed(2, luda.float32(2)) end)
      local a, b = mixed(x, x)  -- both elementwise
      H.check(a, H.of({ -2.0, -1.0, 0.0 }), H.exact)
      H.check(b, H.of({ 6.0, 12.0, 18.0 }), H.exact)
    end)

    on_devices("a final max or min of an empty axis raises, as NumPy; sum and prod give their identities", function()
      local fmax = luda.fuse(function(x) return luda.max(x) end)
      local fmin = luda.fuse(function(x, y) return luda.min(x * y, 2) end)
      local e0, e30 = luda.empty(0, "int32"), luda.empty({ 3, 0 })
      raises("fuse 'fmax': zero-size array to reduction operation maximum which has no identity", function() return fmax(e0) end)
      raises("fuse 'fmax': zero-size array to reduction operation maximum which has no identity",
             function() return fmax(luda.empty({ 0, 0 }, "float32")) end)
      raises("fuse 'fmin': zero-size array to reduction operation minimum which has no identity",
             function() return fmin(e30, 2.0) end)
      -- a reduced axis that is not empty; the identities of sum and prod
      assert.are.same({ 0 }, fmin(luda.empty({ 0, 3 }), 2.0).shape)
      H.check(luda.fuse(function(x) return luda.sum(x + 1) end)(e0), H.of(0), H.exact)
      H.check(luda.fuse(function(x) return luda.prod(x, 2) end)(e30), H.of({ 1.0, 1.0, 1.0 }), H.exact)
      H.check(fmax(luda.array({ -5, -7 }, "int32")), H.of(-5), H.exact)
    end)
  end)
end)

-- The benchmark's Lua part at small sizes on the cpu (bench/kinds.sh runs it at full size
-- on a GPU): it checks each kernel's result before it reports a figure.
describe("bench/kinds.lua --smoke", function()
  it("runs every measured kernel on the cpu and checks its results", function()
    local source = os.getenv("LUDA_SOURCE_DIR") or "."
    local out, err, code = support.run_luda(support.quote(source .. "/bench/kinds.lua") .. " --smoke", nil, false,
                                            { LUDA_DEVICE = "cpu" })
    assert.are.same({ "", 0 }, { err, code })
    assert.is_truthy(out:find("| elementwise z = x*w+b | ", 1, true), out)
    assert.is_truthy(out:find("| host dispatch, reduction, n=1024 | ", 1, true), out)
    assert.is_truthy(out:find("\n@@ d_fuse %d"), out)
  end)
end)

-- float16, bfloat16, complex64 and complex128 inside kernels, on each device: arithmetic
-- bit for bit as NumPy gives it (a 16-bit float's operation in float32, rounded; complex
-- quotients by Smith's algorithm), conversions rounding once, the math set within 1 ulp of
-- float16 and a few ulp of complex, reductions accumulating float16 in float32, and NumPy
-- 2's lexicographic order of complex numbers; through the array functions, vectorize,
-- elementwise, fuse, reduction and cuda.jit, on contiguous, strided, empty, 0-d and
-- size-1 arrays. The references are NumPy's (dtypes_kernels_numpy.lua, written by
-- dtypes_kernels_numpy.py; bfloat16 by ml_dtypes' rules, there).
local luda = require "luda"
local support = require "support"
local N = require "dtypes_kernels_numpy"

local on_devices = support.device_tests(_ENV)
local cuda = luda.cuda

-- ---- values

local function is_nan(v) return v ~= v end

-- Lua numbers, or {re, im} pairs, as an array of `dtype`.
local function array(values, dtype)
  local t = {}
  for i, v in ipairs(values) do t[i] = type(v) == "table" and luda.complex(v[1], v[2]) or v end
  return luda.array(t, dtype)
end

local parts = require("hostref").parts

local function flat(x) return x:reshape(-1):totable() end

-- The same double, -0.0 apart from 0.0, any NaN like any other.
local function same_bits(a, b)
  if is_nan(a) or is_nan(b) then return is_nan(a) and is_nan(b) end
  return string.pack("<d", a) == string.pack("<d", b)
end

local function assert_bits(got, want, what)
  assert.are.equal(#want, #got, what)
  for k = 1, #want do
    local g = parts(got[k])[1]
    assert.is_true(same_bits(g, want[k]), ("%s element %d: got %.17g, want %.17g"):format(what, k, g, want[k]))
  end
end

-- One unit in the last place of `v` as a float with `mantissa` explicit bits whose least
-- normal exponent is `emin` (float16: 10, -14; bfloat16: 7, -126).
local function ulp(v, mantissa, emin)
  local m, e = math.frexp(math.abs(v))  -- |v| = m * 2^e, m in [0.5, 1)
  if v == 0 or e - 1 < emin then return 2.0 ^ (emin - mantissa) end
  return 2.0 ^ (e - 1 - mantissa)
end
local FORMATS = { float16 = { 10, -14 }, bfloat16 = { 7, -126 } }

local function assert_ulps(got, want, dtype, n, what)
  local f = FORMATS[dtype]
  assert.are.equal(#want, #got, what)
  for k = 1, #want do
    local g, w = parts(got[k])[1], want[k]
    local ok
    if is_nan(w) or w == math.huge or w == -math.huge then ok = same_bits(g, w)
    else ok = math.abs(g - w) <= n * ulp(w, f[1], f[2]) end
    assert.is_true(ok, ("%s element %d: got %.17g, want %.17g (within %d ulp)"):format(what, k, g, w, n))
  end
end

-- Complex results within `n` units of the precision's epsilon of NumPy's, relative to the
-- result's magnitude (the usual normwise measure); non-finite parts must match.
local EPS = { complex64 = 2.0 ^ -23, complex128 = 2.0 ^ -52, float32 = 2.0 ^ -23, float64 = 2.0 ^ -52 }
local function assert_close(got, want, dtype, n, what)
  assert.are.equal(#want, #got, what)
  for k = 1, #want do
    local g, w = parts(got[k]), type(want[k]) == "table" and want[k] or { want[k], 0 }
    local finite = true
    for p = 1, 2 do finite = finite and not is_nan(w[p]) and math.abs(w[p]) ~= math.huge end
    local ok
    if not finite then
      ok = true
      for p = 1, 2 do
        if is_nan(w[p]) then ok = ok and is_nan(g[p])
        elseif math.abs(w[p]) == math.huge then ok = ok and g[p] == w[p] end
      end
    else
      local scale = math.max(math.sqrt(w[1] ^ 2 + w[2] ^ 2), 2.0 ^ -1000)
      ok = math.sqrt((g[1] - w[1]) ^ 2 + (g[2] - w[2]) ^ 2) <= n * EPS[dtype] * scale
    end
    assert.is_true(ok, ("%s element %d: got %.17g%+.17gi, want %.17g%+.17gi"):format(what, k, g[1], g[2], w[1], w[2]))
  end
end

-- ---- the paths an operation takes

-- Each makes f(x, y) of the Lua operator text `op` ("a + b"): the array operators and
-- functions, vectorize, elementwise, fuse and cuda.jit.
local PATHS = {
  ufunc = function(op)
    local f = load("return function(a, b) return " .. op .. " end")()
    return f
  end,
  vectorize = function(op) return luda.vectorize("function(a, b) return " .. op .. " end") end,
  elementwise = function(op)
    local k = luda.elementwise("T a, T b", "T z", "z = " .. op, "op")
    return function(x, y) return k(x, y) end
  end,
  fuse = function(op) return luda.fuse("function(a, b) return " .. op .. " end") end,
  jit = function(op)
    local k = cuda.jit("function(x, y, out) local i = cuda.grid(1) if i < #out then local a, b = x[i], y[i] out[i] = "
      .. op .. " end end")
    return function(x, y)
      local out = luda.empty(x.shape, x.dtype)
      k[{ 4, 64 }](x, y, out)
      return out
    end
  end,
}
local PATH_NAMES = { "ufunc", "vectorize", "elementwise", "fuse", "jit" }

describe("float16 and bfloat16 in kernels", function()
  on_devices("arithmetic is float32's, rounded once, bit for bit as NumPy (ml_dtypes)", function()
    for _, dtype in ipairs({ "float16", "bfloat16" }) do
      local R = N[dtype]
      local a, b = array(R.a, dtype), array(R.b, dtype)
      for _, path in ipairs(PATH_NAMES) do
        for op, text in pairs({ add = "a + b", sub = "a - b", mul = "a * b", div = "a / b" }) do
          local z = PATHS[path](text)(a, b)
          assert.are.equal(dtype, z.dtype, path .. " " .. op)
          assert_bits(flat(z), R[op], dtype .. " " .. op .. " by " .. path)
        end
      end
      assert_bits(flat(-a), R.neg, dtype .. " negative")
      assert_bits(flat(luda.negative(a)), R.neg, dtype .. " negative")
      if dtype == "float16" then
        assert_ulps(flat(luda.abs(a) ^ b), R.pow, dtype, 1, "float16 power")
        assert_bits(flat(luda.square(a)), R.square, "float16 square")
        assert_bits(flat(luda.vectorize(function(x) return x ^ 2 end)(a)), R.square, "float16 x ^ 2")
      end
    end
  end)

  on_devices("conversions round once, to nearest even, in kernels as on the host", function()
    local C = N.convert
    local x64, x32 = array(C.x64, "float64"), array(C.x32, "float32")
    local to16 = luda.vectorize(function(x) return luda.float16(x) end)
    local tob16 = luda.vectorize(function(x) return luda.bfloat16(x) end)
    assert_bits(flat(to16(x64)), C.f16_of_f64, "float64 -> float16")
    assert_bits(flat(to16(x32)), C.f16_of_f32, "float32 -> float16")
    assert_bits(flat(tob16(x64)), C.bf16_of_f64, "float64 -> bfloat16")
    assert_bits(flat(tob16(x32)), C.bf16_of_f32, "float32 -> bfloat16")
    -- a store converts as luda.float16 does, and the host's astype agrees
    local out = luda.empty(#C.x64, "float16")
    cuda.jit(function(x, o) local i = cuda.grid(1) if i < #x then o[i] = x[i] end end)[{ 2, 128 }](x64, out)
    assert_bits(flat(out), C.f16_of_f64, "a float64 stored into float16")
    assert_bits(flat(x64:astype("float16")), C.f16_of_f64, "astype")
    -- and back: float16 -> float32 -> float16 is the identity
    local back = luda.vectorize(function(h) return luda.float16(luda.float32(h)) end)(out)
    assert_bits(flat(back), C.f16_of_f64, "float16 through float32")
    -- to integers as the kernel language converts floats: towards zero, saturated, NaN 0
    local h = array({ 2.75, -2.75, 65504, -65504, 0 / 0, math.huge, -0.0 }, "float16")
    assert.are.same({ 2, -2, 127, -128, 0, 127, 0 }, luda.vectorize(function(v) return luda.int8(v) end)(h):totable())
    local tobool = luda.elementwise("T x", "bool y", "y = x", "tobool")
    assert.are.same({ true, true, true, true, true, true, false }, tobool(h):totable())
  end)

  on_devices("the math set within 1 ulp of NumPy's", function()
    for _, dtype in ipairs({ "float16", "bfloat16" }) do
      local R = N[dtype .. "_math"]
      local x = array(R.x, dtype)
      for name, want in pairs(R) do
        if name ~= "x" then
          local f = luda[name]
          local got = f(x)
          assert.are.equal(dtype, got.dtype, name)
          assert_ulps(flat(got), want, dtype, 1, dtype .. " " .. name)
        end
      end
    end
    -- in vectorize, through the kernel language's names
    local R = N.float16_math
    local f = luda.vectorize(function(v) return math.exp(v) end)
    assert_ulps(flat(f(array(R.x, "float16"))), R.exp, "float16", 1, "math.exp")
  end)

  on_devices("mixed with other dtypes and Lua numbers as NumPy 2 promotes", function()
    local h = array({ 1, 2, 3 }, "float16")
    local b = array({ 1, 2, 3 }, "bfloat16")
    local cases = {
      { h + 0.5, "float16" }, { h * 2, "float16" }, { h + array({ 1, 2, 3 }, "int8"), "float16" },
      { h + array({ 1, 2, 3 }, "int16"), "float32" }, { h + array({ 1, 2, 3 }, "int32"), "float64" },
      { h + array({ 1, 2, 3 }, "float32"), "float32" }, { h + b, "float32" }, { b + array({ 1, 2, 3 }, "uint8"), "bfloat16" },
      { b + array({ 1, 2, 3 }, "int16"), "float32" }, { h + luda.float64(1), "float64" }, { h / 2, "float16" },
    }
    for k, c in ipairs(cases) do assert.are.equal(c[2], c[1].dtype, "case " .. k) end
    local v = luda.vectorize(function(x, y) return x * y end)
    assert.are.equal("float16", v(h, 0.1).dtype)
    assert.are.same({ 0.0999755859375, 0.199951171875, 0.2998046875 }, v(h, 0.1):totable())
    assert.are.equal("float32", v(h, array({ 1, 1, 1 }, "int16")).dtype)
  end)

  on_devices("empty, 0-d, size-1 and strided arrays", function()
    local R = N.float16
    local a, b = array(R.a, "float16"), array(R.b, "float16")
    -- every other element of a 2-d view, transposed
    local m, n = a:reshape(16, 10), b:reshape(16, 10)
    local sm, sn = m:slice({}, { 0, 10, 2 }):transpose(), n:slice({}, { 0, 10, 2 }):transpose()
    for _, path in ipairs({ "ufunc", "vectorize", "elementwise" }) do
      local z = PATHS[path]("a * b")(sm, sn)
      local want, got = {}, z:totable()
      for j = 1, 5 do
        for i = 1, 16 do
          local k = (i - 1) * 10 + (j - 1) * 2 + 1
          want[#want + 1] = R.mul[k]
          assert.is_true(same_bits(got[j][i], R.mul[k]), path .. " strided " .. i .. "," .. j)
        end
      end
    end
    assert.are.same({ 0 }, (luda.empty(0, "float16") + 1).shape)
    local zero_d = luda.array(2.5, "float16")
    assert.are.equal(3.5, (zero_d + 1):item())
    assert.are.equal(0.333251953125, luda.vectorize(function(x) return 1 / x end)(luda.array({ 3 }, "float16")):item())
    assert.are.equal("bfloat16", (luda.empty({ 2, 0 }, "bfloat16") * 2).dtype)
  end)

  on_devices("reductions accumulate in float32 and round once", function()
    local R = N.reductions
    local x = array(R.f16, "float16")
    assert_ulps({ x:sum():item() }, R.f16_sum, "float16", 1, "sum")
    assert_ulps({ x:mean():item() }, R.f16_mean, "float16", 1, "mean")
    assert.are.equal(R.f16_max[1], x:max():item())
    assert.are.equal(R.f16_min[1], x:min():item())
    assert_ulps({ array(R.f16_small, "float16"):prod():item() }, R.f16_prod, "float16", 1, "prod")
    assert_ulps(flat(x:reshape(10, 100):sum(2)), R.f16_rows_sum, "float16", 1, "sum of rows")
    assert_ulps(flat(x:reshape(10, 100):sum(1)), R.f16_cols_sum, "float16", 1, "sum of columns")
    assert.are.equal("float16", x:sum().dtype)
    assert.are.equal("float16", x:mean().dtype)
    -- a float16 sum in float32: 2048 + 1 + 1 ... stays exact until the end (in float16
    -- alone, 2048 + 1 rounds back to 2048)
    local ones = luda.ones(4096, "float16")
    assert.are.equal(4096, ones:sum():item())
    assert.are.equal(65504, luda.full(2, 32752, "float16"):sum():item())
    assert.are.equal(math.huge, luda.full(3, 32752, "float16"):sum():item())
    local f = luda.fuse(function(v) return luda.sum(v) end)
    assert.are.equal(4096, f(ones):item())
    local r = luda.reduction("T x", "T y", "x", "a + b", "y = a", "0", "plain_sum")  -- in T = float16
    assert.are.equal("float16", r(ones).dtype)
    assert.are.equal(4096, r(ones):item())  -- the partial sums stay exact in float16
    local r32 = luda.reduction("T x", "float32 y", "x", "a + b", "y = a", "0", "sum32", { reduce_type = "float32" })
    assert_ulps({ r32(x):item() }, R.f16_sum, "float16", 1, "reduction in float32")
    assert.are.equal(0, luda.empty(0, "float16"):sum():item())
    assert.are.equal(2.5, luda.array({ 2.5 }, "bfloat16"):max():item())
    assert.are.equal(1, luda.array({ 2, 1, 3 }, "float16"):argmin():item())
    assert.are.equal(3, luda.array({ 1, 0 / 0, 3 }, "float16"):nanmax():item())
    assert.are.equal(4, luda.array({ 1, 0 / 0, 3 }, "bfloat16"):nansum():item())
    -- nextafter steps a 16-bit float's own bits (NumPy's float16 nextafter)
    local h = luda.array({ 1, 2, 0, -0.0, 65504 }, "float16")
    assert.are.same({ 1 + 2 ^ -10, 2 - 2 ^ -10, 2 ^ -24, -2 ^ -24, math.huge },
      luda.nextafter(h, luda.array({ 9, -9, 1, -1, math.huge }, "float16")):totable())
    assert.are.same({ 1 + 2 ^ -7 }, luda.nextafter(luda.array({ 1 }, "bfloat16"), 2):totable())
  end)
end)

describe("complex64 and complex128 in kernels", function()
  on_devices("arithmetic as NumPy's loops compute it", function()
    for _, dtype in ipairs({ "complex64", "complex128" }) do
      local R = N[dtype]
      local z, w = array(R.z, dtype), array(R.w, dtype)
      for _, path in ipairs(PATH_NAMES) do
        for op, text in pairs({ add = "a + b", sub = "a - b", mul = "a * b", div = "a / b" }) do
          local got = PATHS[path](text)(z, w)
          assert.are.equal(dtype, got.dtype, path .. " " .. op)
          -- a GPU may fuse a * b + c into one rounding where NumPy rounds twice
          assert_close(flat(got), R[op], dtype, 4, dtype .. " " .. op .. " by " .. path)
        end
      end
      assert_close(flat(-z), R.neg, dtype, 0, dtype .. " negative")
      assert_close(flat(luda.conj(z)), R.conj, dtype, 0, dtype .. " conj")
      assert_close(flat(luda.conjugate(z)), R.conj, dtype, 0, dtype .. " conjugate")
      assert_close(flat(luda.abs(z)), R.abs, dtype, 2, dtype .. " abs")
      assert.are.equal(dtype == "complex64" and "float32" or "float64", luda.abs(z).dtype)
      assert_close(flat(luda.angle(z)), R.angle, dtype, 2, dtype .. " angle")
      assert_close(flat(z ^ w), R.pow, dtype, 64, dtype .. " power")
      assert_close(flat(z ^ 2.5), R.pow_real, dtype, 16, dtype .. " power of a real")
      assert_close(flat(z ^ 2), R.square, dtype, 4, dtype .. " square")
      local less, equal = luda.less(z, w):totable(), luda.equal(z, w):totable()
      for k = 1, #R.less do
        assert.are.equal(R.less[k] == 1, less[k], dtype .. " less " .. k)
        assert.are.equal(R.equal[k] == 1, equal[k], dtype .. " equal " .. k)
      end
    end
  end)

  on_devices("the math set within a few ulp of NumPy's, branch cuts as C99's", function()
    for _, dtype in ipairs({ "complex64", "complex128" }) do
      local R = N[dtype]
      local z = array(R.z, dtype)
      local names = { "sqrt", "exp", "log", "log10", "log2", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
        "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "expm1", "log1p" }
      for _, name in ipairs(names) do
        local got = luda[name](z)
        assert.are.equal(dtype, got.dtype, name)
        -- NumPy's log1p and expm1 of a complex are log(hypot(1 + re, im)) and exp(z) - 1:
        -- near |1 + z| = 1 (or z = 0) their error is one rounding of 1, not of the result,
        -- and the GPU's log and exp round other bits than the host's
        local ulps = (name == "log1p" or name == "expm1") and 64 or 8
        assert_close(flat(got), R[name], dtype, ulps, dtype .. " " .. name)
      end
      -- in cuda.jit, by the kernel language's names
      local k = cuda.jit(function(x, o)
        local i = cuda.grid(1)
        if i < #x then o[i] = luda.math.tanh(x[i]) + math.sqrt(x[i]) - math.log(x[i]) end
      end)
      local out = luda.empty(z.shape, dtype)
      k[{ 2, 128 }](z, out)
      local want = {}
      for i = 1, #R.z do
        want[i] = { R.tanh[i][1] + R.sqrt[i][1] - R.log[i][1], R.tanh[i][2] + R.sqrt[i][2] - R.log[i][2] }
      end
      assert_close(flat(out), want, dtype, 64, dtype .. " in cuda.jit")
    end
  end)

  on_devices("literals, parts and conversions", function()
    local z = array({ { 1, 2 }, { -3, 0.5 } }, "complex64")
    -- luda.complex(re, im) is weak: a complex64 array keeps its dtype
    local f = luda.vectorize(function(v) return v * luda.complex(0, 1) end)
    assert.are.equal("complex64", f(z).dtype)
    assert.are.same({ { -2, 1 }, { -0.5, -3 } }, { parts(f(z):totable()[1]), parts(f(z):totable()[2]) })
    assert.are.equal("complex128", luda.vectorize(function(v) return v * luda.complex128(0, 1) end)(z).dtype)
    assert.are.equal("complex64", (z * luda.complex(0, 1)).dtype)
    assert.are.equal("complex128", (array({ 1, 2 }, "int32") * luda.complex(0, 1)).dtype)
    assert.are.equal("complex64", (array({ 1, 2 }, "float16") * luda.complex(0, 1)).dtype)
    local g = luda.vectorize(function(v) return v.real * 10 + v.imag end)
    assert.are.equal("float32", g(z).dtype)
    assert.are.same({ 12, -29.5 }, g(z):totable())
    local h = luda.vectorize(function(v) return luda.real(v) - luda.imag(v) end)
    assert.are.same({ -1, -3.5 }, h(z):totable())
    assert.are.same({ 1, -3 }, luda.real(z):totable())
    assert.are.same({ 2, 0.5 }, luda.imag(z):totable())
    assert.are.same({ 1, -3 }, luda.vectorize(function(v) return luda.float32(v) end)(z):totable())
    assert.are.same({ true, false, true }, luda.vectorize(function(v) return v ~= 0 end)(
      array({ { 0, 1 }, { 0, 0 }, { 0 / 0, 0 } }, "complex128")):totable())
    local mk = luda.vectorize(function(re, im) return luda.complex64(re, im) end)
    assert.are.same({ 1.5, -2 }, parts(mk(array({ 1.5 }, "float32"), array({ -2 }, "float32")):totable()[1]))
    local into = luda.zeros(2, "bool")
    cuda.jit(function(x, o) local i = cuda.grid(1) if i < #x then o[i] = x[i] end end)[{ 1, 32 }](
      array({ { 0, 1 }, { 0, 0 } }, "complex64"), into)
    assert.are.same({ true, false }, into:totable())
    assert.are.same({ 0, 0 }, luda.imag(array({ 1, 2 }, "float32")):totable())
    -- complex128 scalars (16 bytes, 16-byte aligned) into each kind and a cuda.jit kernel
    local z128 = array({ { 1, 2 }, { -3, 0.5 } }, "complex128")
    local s = luda.complex128(0.5, -1)
    local scaled = luda.elementwise("T x, T s", "T y", "y = x * s", "scaled")(z128, s)
    assert.are.same({ { 2.5, 0 }, { -1, 3.25 } }, { parts(scaled:totable()[1]), parts(scaled:totable()[2]) })
    local dot = luda.reduction("T x, T s", "T y", "x * s", "a + b", "y = a", "0", "sdot")
    assert.are.same({ 1.5, 3.25 }, parts(dot(z128, s):item()))
    local o = luda.empty(2, "complex128")
    cuda.jit(function(x, k, out) local i = cuda.grid(1) if i < #x then out[i] = x[i] * k end end)[{ 1, 32 }](z128, s, o)
    assert.are.same({ -1, 3.25 }, parts(o:totable()[2]))
    assert.are.same({ { 1, 2 }, { -3, 0.5 } }, { parts((z128 * luda.complex(1, 0)):totable()[1]), parts(z128:totable()[2]) })
    assert.are.same({ 0, math.pi }, luda.angle(array({ 1, -2 }, "float64")):totable())
  end)

  on_devices("reductions: sum, prod, mean; max and min in NumPy 2's order", function()
    local R = N.reductions
    local z = array(R.c128, "complex128")
    assert_close({ z:sum():item() }, R.c128_sum, "complex128", 64, "sum")
    assert_close({ z:mean():item() }, R.c128_mean, "complex128", 64, "mean")
    assert_close({ z:slice({ 0, 8 }):prod():item() }, R.c128_prod, "complex128", 16, "prod")
    assert_close({ z:max():item() }, R.c128_max, "complex128", 0, "max")
    assert_close({ z:min():item() }, R.c128_min, "complex128", 0, "min")
    assert.are.equal(R.c128_argmax[1], z:argmax():item())
    assert_close({ z:var():item() }, R.c128_var, "float64", 64, "var")
    assert.are.equal("float64", z:var().dtype)
    local z64 = z:astype("complex64")
    assert.are.equal("complex64", z64:sum().dtype)
    assert.are.equal("float32", z64:std().dtype)
    assert_close({ z64:sum():item() }, R.c128_sum, "complex64", 64, "complex64 sum")
    local f = luda.fuse(function(v) return luda.sum(v * luda.complex(0, 1)) end)
    assert_close({ f(z):item() }, { { -R.c128_sum[1][2], R.c128_sum[1][1] } }, "complex128", 64, "fuse")
    local r = luda.reduction("T x", "T y", "x", "a + b", "y = a", "0", "csum")
    assert_close({ r(z):item() }, R.c128_sum, "complex128", 64, "reduction")
    assert.are.same({ 0, 0 }, parts(luda.empty(0, "complex64"):sum():item()))
    assert.are.same({ 2, -1 }, parts(array({ { 1, 5 }, { 2, -1 }, { 2, -3 } }, "complex64"):max():item()))
  end)
end)

-- A device function of complex numbers, returning two values (one of them complex).
local function rotate(z, turns)
  local r = z
  for _ = 1, turns do r = r * luda.complex(0, 1) end
  return r, math.abs(r)
end

describe("cuda.jit kernels of the new dtypes", function()
  on_devices("elements, locals, shared and local arrays, device functions", function()
    local k = cuda.jit(function(h, z, out16, outz, mags)
      local tile = cuda.shared.array(64, "float16")
      local acc = cuda.local_array(2, "complex128")
      local t = cuda.threadIdx.x
      local i = cuda.grid(1)
      if i < #h then tile[t] = h[i] * 2 end
      cuda.syncthreads()
      if i < #h then
        local back = tile[(t + 1) % 64]        -- a neighbour's, through shared memory
        out16[i] = back + luda.float16(0.5)
        acc[0] = z[i]
        acc[1] = luda.complex128(z[i].imag, z[i].real)
        local r, m = rotate(acc[0] + acc[1], 3)
        outz[i] = r
        mags[i] = m
      end
    end)
    local n = 64
    local hv, zv = {}, {}
    for j = 1, n do
      hv[j] = (j - 1) * 0.25
      zv[j] = { j, -0.5 * j }
    end
    local h, z = array(hv, "float16"), array(zv, "complex64")
    local o16, oz, mags = luda.empty(n, "float16"), luda.empty(n, "complex64"), luda.empty(n, "float32")
    k[{ 1, 64 }](h, z, o16, oz, mags)
    local g16, gz, gm = o16:totable(), oz:totable(), mags:totable()
    for j = 1, n do
      assert.are.equal(hv[j % n + 1] * 2 + 0.5, g16[j], "float16 " .. j)
      local re, im = j + -0.5 * j, -0.5 * j + j           -- z + (im, re)
      assert.are.same({ im, -re }, parts(gz[j]), "complex " .. j)  -- times i^3 = -i
      assert.is_true(math.abs(gm[j] - math.sqrt(re * re + im * im)) <= 1e-6 * gm[j], "magnitude " .. j)
    end
  end)
end)

describe("sorting and running sums of the 16-bit floats", function()
  on_devices("sort by value with NaN last, scan in float32 and round each result", function()
    local h = array({ 3, 1, 0 / 0, 2, -0.5, 1 }, "float16")
    for _, dtype in ipairs({ "float16", "bfloat16" }) do
      local x = h:astype(dtype)
      local sorted = luda.sort(x):totable()
      assert.are.same({ -0.5, 1, 1, 2, 3 }, { sorted[1], sorted[2], sorted[3], sorted[4], sorted[5] })
      assert.is_true(is_nan(sorted[6]))
      assert.are.same({ 4, 1, 5, 3, 0, 2 }, luda.argsort(x):totable())
      assert.are.same({ 1, 2 }, luda.unique(array({ 2, 1, 2, 1 }, dtype)):totable())
    end
    -- 2048 + 1 + 1: float16 alone would stay at 2048; the running sums are exact in float32
    local c = luda.cumsum(array({ 2048, 1, 1, 1 }, "float16"))
    assert.are.equal("float16", c.dtype)
    assert.are.same({ 2048, 2048, 2050, 2052 }, c:totable())  -- 2049 and 2051 round to even
    assert.are.same({ 1.5, 3, 9 }, luda.cumprod(array({ 1.5, 2, 3 }, "bfloat16")):totable())
    assert.are.same({ 3, 4, 4, 6 }, luda.nancumsum(array({ 3, 1, 0 / 0, 2 }, "float16")):totable())
  end)
end)

describe("linear algebra of the new dtypes", function()
  on_devices("dot, vdot (conjugating), matmul and norm of complex; float16 products", function()
    local a = array({ { 1, 2 }, { 3, -1 }, { 0, 0.5 } }, "complex128")
    local b = array({ { 2, 0 }, { -1, 1 }, { 4, 2 } }, "complex128")
    -- sum(a * b) and sum(conj(a) * b), by hand
    assert.are.same({ 2 - 3 + 1 - 1, 4 + 3 + 1 + 2 }, parts(luda.dot(a, b):item()))
    assert.are.same({ 2 - 4 + 1, -4 + 2 - 2 }, parts(luda.vdot(a, b):item()))
    local m = luda.matmul(a:reshape(3, 1), b:reshape(1, 3))
    assert.are.equal("complex128", m.dtype)
    assert.are.same({ 2, 4 }, parts(m:totable()[1][1]))
    local n = luda.linalg.norm(a:astype("complex64"))
    assert.are.equal("float32", n.dtype)
    assert.is_true(math.abs(n:item() - math.sqrt(1 + 4 + 9 + 1 + 0.25)) < 1e-6)
    local h = array({ 1, 2, 3 }, "float16")
    assert.are.equal("float16", luda.dot(h, h).dtype)
    assert.are.equal(14, luda.dot(h, h):item())
    -- numpy.linalg's routines take complex (tests/lua/linalg_spec.lua): m is of rank 1
    local at, e = support.here(), support.error_of(function() return luda.linalg.inv(luda.zeros({ 2, 2 }, "complex128")) end)
    assert.are.equal(at .. "inv: Singular matrix", e)
    assert.are.equal("complex128", luda.linalg.pinv(m).dtype)
    assert.are.equal(1, luda.linalg.matrix_rank(m):item())
  end)
end)

describe("operations the new dtypes do not have", function()
  it("are errors that say so", function()
    local h = luda.array({ 1, 2 }, "float16")
    local z = luda.array({ 1, 2 }, "complex64")
    local function message(f) return support.error_of(f) end
    local at, e = support.here(), message(function() return luda.bitwise_and(h, 1) end)
    assert.are.equal(at .. "ufunc 'bitwise_and' is not defined for float16 operands, only integers and bools; "
      .. "convert them first (x:astype(\"int64\"))", e)
    for _, case in ipairs({ { "floor_divide", function() return z // 2 end }, { "mod", function() return luda.mod(z, z) end },
                            { "floor", function() return luda.floor(z) end }, { "hypot", function() return luda.hypot(z, 1) end } }) do
      at, e = support.here(), message(case[2])
      assert.are.equal(("%sufunc '%s' is not defined for complex64 operands (NumPy's is not supported for complex "
        .. "input types either); convert them first (luda.real(x), x:astype(\"float64\"))"):format(
          at:gsub(":%d+: $", ":" .. debug.getinfo(case[2], "S").linedefined .. ": "), case[1]), e)
    end
    at, e = support.here(), message(function() return luda.invert(z) end)
    assert.are.equal(at .. "ufunc 'invert' is not defined for complex64 operands, only integers and bools; convert "
      .. "them first (x:astype(\"int64\"))", e)
  end)
end)

-- Array arithmetic and reductions on ndarrays: the operators with Lua's
-- meanings per element and NumPy's dtype promotion, the builtin math set as array
-- functions, comparisons and luda.where, x:sum/max/min/prod/mean/argmax/argmin over axes,
-- and luda.dot. Each behaviour runs on the cpu target and on cuda when there is a GPU,
-- against plain-Lua references (tests/lua/hostref.lua) on random inputs in every layout.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local f32, raises = support.f32, H.raises

local on_devices = support.device_tests(_ENV)

local BITS = { int8 = 8, int16 = 16, int32 = 32, int64 = 64, uint8 = 8, uint16 = 16, uint32 = 32, uint64 = 64 }
local function is_int(dtype) return BITS[dtype] ~= nil end

-- The device name an array made under with_device(device) reports.
local function device_name(device) return device == "cpu" and "cpu" or "cuda:0" end

-- A value computed exactly in Lua, brought into `dtype`: float32 rounds, ints wrap.
local function in_dtype(dtype, v)
  if dtype == "float32" then return f32(v) end
  if BITS[dtype] then return H.wrap(v, BITS[dtype], dtype:sub(1, 1) == "u") end
  return v
end

-- Lua's own operators, the reference of each metamethod (ints: integer results; the
-- dtype's wrapping and float32's rounding applied by in_dtype).
local OPS = {
  { "+", function(a, b) return a + b end, function(x, y) return x + y end },
  { "-", function(a, b) return a - b end, function(x, y) return x - y end },
  { "*", function(a, b) return a * b end, function(x, y) return x * y end },
  { "/", function(a, b) return a / b end, function(x, y) return x / y end },
  { "//", function(a, b) return a // b end, function(x, y) return x // y end },
  { "%", function(a, b) return a % b end, function(x, y) return x % y end },
}

-- Random operands for op on dtype: divisors never zero; small ints for *, so the
-- reference needs no wrapping beyond the dtype's.
local function operands(op, dtype, shape)
  if is_int(dtype) then
    local lo, hi = -1000, 1000
    local h = H.random(dtype, shape, lo, hi)
    if op == "/" or op == "//" or op == "%" then
      for k, v in ipairs(h.data) do if v == 0 then h.data[k] = 7 end end
    end
    return h
  end
  local h = H.random(dtype, shape, -100, 100)
  for k, v in ipairs(h.data) do if math.abs(v) < 0.5 then h.data[k] = in_dtype(dtype, v + 1) end end
  return h
end

-- How a result of `op` in `dtype` must agree with the float64/integer Lua reference.
local function agreement(op, dtype, b_host)
  if is_int(dtype) and op ~= "/" then return H.exact end
  if dtype == "float32" then
    if op == "%" then
      -- Lua's float % is fmod then a fix-up: one rounding of |b|'s size at most
      return H.within(function() return 2 * H.ulp32(100) end)
    end
    return H.f32_exact
  end
  if op == "%" or op == "//" then return H.rel(1e-15, 100) end
  return H.exact
end

describe("array arithmetic", function()
  before_each(function() math.randomseed(5101) end)

  on_devices("+ - * / // % between arrays of one dtype follow Lua per element", function(device)
    for _, dtype in ipairs({ "float32", "float64", "int32", "int64" }) do
      for _, op in ipairs(OPS) do
        local ha, hb = operands(op[1], dtype, { 4, 6 }), operands(op[1], dtype, { 6 })
        local z = op[3](H.to_array(ha, dtype), H.to_array(hb, dtype))
        local want_dtype = (op[1] == "/" and is_int(dtype)) and "float64" or dtype
        local what = dtype .. " " .. op[1]
        assert.are.same({ want_dtype, device_name(device) }, { z.dtype, z.device }, what)
        local ref = H.map(function(a, b) return in_dtype(want_dtype, op[2](a, b)) end, ha, hb)
        H.check(z, ref, agreement(op[1], dtype, hb), what)
      end
    end
  end)

  on_devices("integer + - * wrap around in the dtype, as Lua's integers do in int64", function()
    local ha, hb = H.random("int32", { 50 }), H.random("int32", { 50 })
    local a, b = H.to_array(ha, "int32"), H.to_array(hb, "int32")
    H.check(a + b, H.map(function(u, v) return H.wrap(u + v, 32) end, ha, hb), H.exact, "+")
    H.check(a * b, H.map(function(u, v) return H.wrap(u * v, 32) end, ha, hb), H.exact, "*")
    H.check(-a, H.map(function(u) return H.wrap(-u, 32) end, ha), H.exact, "unary -")
    local m = luda.array({ math.maxinteger, math.mininteger }, "int64")
    assert.are.same({ math.mininteger, math.maxinteger }, (m + luda.array({ 1, -1 }, "int64")):totable())
  end)

  on_devices("// and % floor for negative operands; ^ is float power", function()
    local a, b = luda.array({ -7, 7, -7, 7 }, "int32"), luda.array({ 2, -2, 3, -3 }, "int32")
    assert.are.same({ -4, -4, -3, -3 }, (a // b):totable())
    assert.are.same({ 1, -1, 2, -2 }, (a % b):totable())
    local af, bf = luda.array({ -7.5, 7.5 }), luda.array({ 2, -2 }, "float64")
    assert.are.same({ -4.0, -4.0 }, (af // bf):totable())
    assert.are.same({ 0.5, -0.5 }, (af % bf):totable())
    local p = luda.array({ 2, 3 }, "int32") ^ 2
    assert.are.same({ "float64", { 4.0, 9.0 } }, { p.dtype, p:totable() })
    local hx, hy = H.random("float32", { 40 }, 0.5, 2), H.random("float32", { 40 }, -3, 3)
    local z = H.to_array(hx, "float32") ^ H.to_array(hy, "float32")
    assert.are.equal("float32", z.dtype)
    H.check(z, H.map(function(u, v) return u ^ v end, hx, hy), H.near32(8))
  end)

  on_devices("Lua numbers on either side are weak scalars", function()
    local hx = H.random("float32", { 3, 5 })
    local x = H.to_array(hx, "float32")
    local cases = {
      { x + 0.25, function(a) return a + 0.25 end }, { 0.25 - x, function(a) return 0.25 - a end },
      { x * 3, function(a) return a * 3 end }, { 1 / x, function(a) return 1 / a end },
      { -x, function(a) return -a end },
    }
    for n, case in ipairs(cases) do
      assert.are.equal("float32", case[1].dtype, "case " .. n)
      H.check(case[1], H.map(case[2], hx), H.f32_exact, "case " .. n)
    end
    local hi = H.random("int32", { 7 }, -100, 100)
    local i = H.to_array(hi, "int32")
    assert.are.equal("int32", (i + 1).dtype)
    assert.are.equal("int32", (2 * i).dtype)
    assert.are.equal("float64", (i + 0.5).dtype)
    H.check(10 - i, H.map(function(a) return 10 - a end, hi), H.exact)
    H.check(i + 0.5, H.map(function(a) return a + 0.5 end, hi), H.exact)
  end)

  on_devices("unsigned arithmetic wraps; a Lua integer must fit the dtype; bools take no subtraction", function()
    local hu, hv = H.random("uint8", { 30 }), H.random("uint8", { 30 })
    local u, v = H.to_array(hu, "uint8"), H.to_array(hv, "uint8")
    H.check(u - v, H.map(function(a, b) return H.wrap(a - b, 8, true) end, hu, hv), H.exact, "uint8 -")
    H.check(u + 100, H.map(function(a) return H.wrap(a + 100, 8, true) end, hu), H.exact, "uint8 + 100")
    assert.are.equal("uint8", (u * 2).dtype)
    raises("ufunc 'add': Lua integer 300 out of bounds for uint8; pass a typed scalar (luda.int64(300)), which " ..
           "promotes as an array does, or convert the arrays first (x:astype(\"int64\"))", function() return u + 300 end)
    local b = luda.array({ true, false })
    raises("ufunc 'subtract': boolean subtract, the `-` operator, is not supported (as in NumPy); use " ..
           "luda.logical_xor or luda.bitwise_xor instead", function() return b - b end)
    raises("ufunc 'negative': boolean negative, the unary `-` operator, is not supported (as in NumPy); use " ..
           "luda.logical_not or luda.invert instead", function() return -b end)
    assert.are.same({ "int64", { 2, 1 } }, { (b + 1).dtype, (b + 1):totable() })
  end)

  on_devices("mixed dtypes promote as NumPy does", function()
    local function one(dtype) return luda.ones(2, dtype) end
    local cases = {
      { "int8", "float32", "float32" }, { "int16", "float32", "float32" }, { "int32", "float32", "float64" },
      { "int64", "float32", "float64" }, { "float32", "float64", "float64" }, { "int32", "int64", "int64" },
      { "uint8", "int8", "int16" }, { "uint32", "int32", "int64" }, { "bool", "int8", "int8" },
      { "uint8", "uint16", "uint16" },
    }
    for _, c in ipairs(cases) do
      assert.are.equal(c[3], (one(c[1]) + one(c[2])).dtype, c[1] .. " + " .. c[2])
      assert.are.equal(c[3], (one(c[2]) * one(c[1])).dtype, c[2] .. " * " .. c[1])
    end
    local hi, hf = H.random("int32", { 9 }, -1000, 1000), H.random("float32", { 9 })
    H.check(H.to_array(hi, "int32") * H.to_array(hf, "float32"), H.map(function(a, b) return a * b end, hi, hf), H.exact)
  end)

  on_devices("broadcasts, and reads every layout", function()
    for _, pair in ipairs(H.BROADCASTS) do
      local ha, hb = H.random("float64", pair[1]), H.random("float64", pair[2])
      H.check(H.to_array(ha, "float64") - H.to_array(hb, "float64"), H.map(function(a, b) return a - b end, ha, hb), H.exact)
    end
    for _, case in ipairs(H.layouts("int64", -1000, 1000)) do
      local x = case[2]
      local hx = H.read(x)
      H.check(x * x - x, H.map(function(a) return a * a - a end, hx), H.exact, case[1])
      H.check(x.T - 1, H.map(function(a) return a - 1 end, H.read(x.T)), H.exact, case[1] .. " transposed")
    end
  end)

  describe("errors", function()
    on_devices("shapes that do not broadcast", function()
      local x, y = luda.ones(3), luda.ones({ 2, 4 })
      raises("ufunc 'add': operands could not be broadcast together with shapes (3,) (2, 4)", function() return x + y end)
      raises("ufunc 'less': operands could not be broadcast together with shapes (3,) (2, 4)", function() return luda.less(x, y) end)
    end)

    it("arrays on two devices", function()
      local why = support.gpu_missing()
      if why then return pending(why) end
      local x, y = luda.ones(4, nil, { device = "cpu" }), luda.ones(4, nil, { device = "cuda:0" })
      raises("ufunc 'multiply' got arrays on cpu (x1) and cuda:0 (x2); put them on one device (x1:to(\"cuda:0\"))",
             function() return x * y end)
    end)

    -- Lua raises for n // 0 and n % 0, the GPU gives some value; the cpu target must not
    -- trap (SIGFPE would end the host process). Either a value or a Lua error is fine here.
    it("integer // and % by zero do not crash the process on the cpu", function()
      local script = [[
        local x = luda.array({ 7, -7, 0 }, "int32")
        local ok1 = pcall(function() return (x // luda.zeros(3, "int32")):totable() end)
        local ok2 = pcall(function() return (luda.array({ 5 }, "int64") % 0):totable() end)
        print("still running")
      ]]
      local out, err, code = support.run_luda("-e " .. support.quote(script), nil, false, { LUDA_DEVICE = "cpu" })
      assert.are.same({ "still running\n", "", 0 }, { out, err, code })
    end)

    on_devices("an operand that is not an array or a number", function()
      local x = luda.ones(3)
      raises("ufunc 'add': argument 2 is a string; pass arrays, numbers, booleans or typed scalars (luda.int32(v))",
             function() return x + "1" end)
      raises("luda.exp takes 1 argument, got 2", function() return luda.exp(x, x) end)
    end)
  end)
end)

-- The math set: each array function, its plain-Lua (or C library) reference, a domain.
local lm = luda.math
local UNARY = {
  { "exp", math.exp, -5, 5 }, { "log", math.log, 0.1, 100 }, { "sqrt", math.sqrt, 0, 100 },
  { "sin", math.sin, -6, 6 }, { "cos", math.cos, -6, 6 }, { "tan", math.tan, -1.4, 1.4 },
  { "asin", math.asin, -1, 1 }, { "acos", math.acos, -1, 1 }, { "atan", math.atan, -10, 10 },
  { "floor", math.floor, -100, 100 }, { "ceil", math.ceil, -100, 100 }, { "abs", math.abs, -100, 100 },
  { "exp2", function(x) return 2 ^ x end, -10, 10 }, { "log2", function(x) return math.log(x, 2) end, 0.1, 100 },
  { "log10", function(x) return math.log(x, 10) end, 0.1, 100 }, { "log1p", lm.log1p, -0.5, 10 },
  { "expm1", lm.expm1, -2, 2 }, { "sinh", lm.sinh, -5, 5 }, { "cosh", lm.cosh, -5, 5 },
  { "tanh", lm.tanh, -5, 5 }, { "erf", lm.erf, -3, 3 }, { "erfc", lm.erfc, -3, 3 },
  { "lgamma", lm.lgamma, 0.5, 10 }, { "tgamma", lm.tgamma, 0.5, 5 }, { "cbrt", lm.cbrt, -100, 100 },
  { "rsqrt", function(x) return 1 / math.sqrt(x) end, 0.1, 100 }, { "rint", lm.rint, -100, 100 },
  { "round", lm.rint, -100, 100 }, { "trunc", lm.trunc, -100, 100 },
}

describe("array math functions", function()
  before_each(function() math.randomseed(5102) end)

  on_devices("each unary function in float32 and float64 matches float64 Lua", function()
    for _, f in ipairs(UNARY) do
      local name, ref, lo, hi = f[1], f[2], f[3], f[4]
      assert.is_function(luda[name], "luda." .. name)
      for _, dtype in ipairs({ "float32", "float64" }) do
        local hx = H.random(dtype, { 2, 50 }, lo, hi)
        local z = luda[name](H.to_array(hx, dtype))
        local ok = dtype == "float32" and H.near32(8, 2e-6) or H.rel(1e-13, 1e-13)
        H.check(z, H.map(function(v) return ref(v) end, hx), ok, name .. " " .. dtype)
        assert.are.equal(dtype, z.dtype, name)
      end
    end
  end)

  on_devices("floor and ceil keep the dtype, as NumPy's: NaN, infinities and huge values stay", function()
    local edges = { 0 / 0, 1 / 0, -1 / 0, 1e300, -1e300, 2.0 ^ 63, -2.0 ^ 63 - 4096, 2.5, -2.5, -0.5, 0.5, 7.0 }
    -- Lua's math.floor keeps a float where no integer holds the value; + 0.0 makes every one a float
    local floor = function(v) return math.floor(v) + 0.0 end
    local ceil = function(v) return math.ceil(v) + 0.0 end
    for _, dtype in ipairs({ "float64", "float32" }) do
      local x = luda.array(edges, dtype)
      local hx = H.read(x)  -- float32 rounds 1e300 to inf
      for name, ref in pairs({ floor = floor, ceil = ceil }) do
        local z = luda[name](x)
        assert.are.equal(dtype, z.dtype, name)
        H.check(z, H.map(ref, hx), H.exact, name .. " " .. dtype)
      end
    end
    for _, dtype in ipairs({ "int8", "uint16", "int64" }) do
      local hx = H.random(dtype, { 30 }, 0, 100)
      local z = luda.floor(H.to_array(hx, dtype))
      assert.are.equal(dtype, z.dtype)
      H.check(z, hx, H.exact, "floor " .. dtype)
      H.check(luda.ceil(H.to_array(hx, dtype)), hx, H.exact, "ceil " .. dtype)
    end
    assert.are.same({ "float", -3.0 }, { math.type(luda.floor(-2.5)), luda.floor(-2.5) })
    assert.are.same({ "integer", 4 }, { math.type(luda.ceil(4)), luda.ceil(4) })
  end)

  on_devices("integers go to float64, views are read in place, Lua numbers give numbers", function()
    local z = luda.sqrt(luda.array({ 4, 9, 16 }, "int32"))
    assert.are.same({ "float64", { 2.0, 3.0, 4.0 } }, { z.dtype, z:totable() })
    local hx = H.random("float64", { 6, 8 }, 0, 10)
    local view = H.to_array(hx, "float64").T:slice("::2")
    H.check(luda.exp(view), H.map(function(v) return math.exp(v) end, H.read(view)), H.rel(1e-14))
    assert.are.equal(1.0, luda.exp(0))
    assert.are.equal(3.0, luda.sqrt(9))
  end)

  on_devices("binary functions broadcast: hypot and copysign", function()
    local hx, hy = H.random("float64", { 3, 4 }), H.random("float64", { 4 })
    local x, y = H.to_array(hx, "float64"), H.to_array(hy, "float64")
    H.check(luda.hypot(x, y), H.map(function(a, b) return lm.hypot(a, b) end, hx, hy), H.rel(1e-15))
    H.check(luda.copysign(x, y), H.map(function(a, b) return lm.copysign(a, b) end, hx, hy), H.exact)
  end)

  on_devices("minimum and maximum propagate NaN; fmod, log with a base, atan with two arguments", function()
    local hx, hy = H.random("float64", { 3, 4 }), H.random("float64", { 4 })
    local x, y = H.to_array(hx, "float64"), H.to_array(hy, "float64")
    H.check(luda.minimum(x, y), H.map(function(a, b) return math.min(a, b) end, hx, hy), H.exact, "minimum")
    H.check(luda.maximum(x, 0), H.map(function(a) return math.max(a, 0.0) end, hx), H.exact, "maximum")
    local n = luda.array({ 0 / 0, 1.0, 2.0 })
    H.check(luda.minimum(n, luda.array({ 1.0, 0 / 0, 3.0 })), H.of({ 0 / 0, 0 / 0, 2.0 }), H.exact, "minimum with NaN")
    H.check(luda.maximum(n, 5), H.of({ 0 / 0, 5.0, 5.0 }), H.exact, "maximum with NaN")
    H.check(luda.fmod(x, y), H.map(function(a, b) return math.fmod(a, b) end, hx, hy), H.exact, "fmod")
    local hp = H.random("float64", { 10 }, 0.1, 100)
    H.check(luda.log(H.to_array(hp, "float64"), 3), H.map(function(a) return math.log(a, 3) end, hp), H.rel(1e-15), "log base 3")
    H.check(luda.atan(x, y), H.map(function(a, b) return math.atan(a, b) end, hx, hy), H.rel(1e-15, 1e-300), "atan2")
    local i = luda.array({ -7, 7, -7 }, "int32")
    H.check(luda.fmod(i, luda.array({ 2, -2, -3 }, "int32")), H.of({ -1, 1, -1 }), H.exact, "integer fmod truncates")
  end)

  on_devices("out= receives the result, and an all-scalar call gives a Lua number", function()
    local hx = H.random("float32", { 3, 5 }, 0, 10)
    local x = H.to_array(hx, "float32")
    local z = luda.empty({ 3, 5 }, "float32")
    local r = luda.sqrt(x, { out = z })
    assert.is_true(rawequal(r, z))
    H.check(z, H.map(function(a) return math.sqrt(a) end, hx), H.f32_exact)
    local base = luda.zeros({ 5, 6 }, "float32")
    luda.add(x.T, 1, { out = base:slice(":, ::2") })
    H.check(base:slice(":, ::2"), H.map(function(a) return a + 1 end, H.read(x.T)), H.f32_exact, "strided out")
    H.check(base:slice(":, 1::2"), H.fill({ 5, 3 }, function() return 0.0 end), H.exact, "untouched")
    local v = luda.hypot(3, 4)
    assert.are.same({ "number", 5.0 }, { type(v), v })
    assert.are.equal(true, luda.less(1, 2))
  end)

  on_devices("isnan, isinf and isfinite give bool arrays", function()
    local x = luda.array({ 1.0, 0 / 0, math.huge, -math.huge, -0.0 }, "float32")
    assert.are.same({ false, true, false, false, false }, luda.isnan(x):totable())
    assert.are.same({ false, false, true, true, false }, luda.isinf(x):totable())
    assert.are.same({ true, false, false, false, true }, luda.isfinite(x):totable())
    assert.are.equal("bool", luda.isnan(x).dtype)
  end)
end)

describe("comparisons and where", function()
  before_each(function() math.randomseed(5103) end)

  local CMP = {
    { "less", function(a, b) return a < b end }, { "greater", function(a, b) return a > b end },
    { "less_equal", function(a, b) return a <= b end }, { "greater_equal", function(a, b) return a >= b end },
    { "equal", function(a, b) return a == b end }, { "not_equal", function(a, b) return a ~= b end },
  }

  on_devices("each comparison gives bools, with broadcasting, scalars and NaN", function()
    -- few distinct values, so that equal pairs occur
    local ha, hb = H.random("int32", { 5, 6 }, -3, 3), H.random("int32", { 6 }, -3, 3)
    local a, b = H.to_array(ha, "int32"), H.to_array(hb, "int32")
    for _, c in ipairs(CMP) do
      local z = luda[c[1]](a, b)
      assert.are.equal("bool", z.dtype, c[1])
      H.check(z, H.map(c[2], ha, hb), H.exact, c[1])
      H.check(luda[c[1]](a, 1), H.map(function(u) return c[2](u, 1) end, ha), H.exact, c[1] .. " scalar")
      H.check(luda[c[1]](1, a), H.map(function(u) return c[2](1, u) end, ha), H.exact, c[1] .. " scalar first")
    end
    local n = luda.array({ 0 / 0, 1.0 })
    assert.are.same({ false, true }, luda.equal(n, n):totable())
    assert.are.same({ true, false }, luda.not_equal(n, n):totable())
    assert.are.same({ false, false }, luda.less(n, 0.5):totable())
  end)

  on_devices("where(c, x, y) picks per element, broadcasting all three", function()
    local hc = H.random("bool", { 4, 1 })
    local hx, hy = H.random("float64", { 4, 5 }), H.random("float64", { 5 })
    local c, x, y = H.to_array(hc, "bool"), H.to_array(hx, "float64"), H.to_array(hy, "float64")
    H.check(luda.where(c, x, y), H.map(function(k, u, v) if k then return u end return v end, hc, hx, hy), H.exact)
    H.check(luda.where(luda.less(x, 0), 0, x), H.map(function(u) return u < 0 and 0 or u end, hx), H.exact)
    local i = luda.where(luda.array({ true, false }), 1, 2)
    assert.are.same({ "int64", { 1, 2 } }, { i.dtype, i:totable() })
  end)
end)

-- NumPy's result dtype of sum/prod: small ints widen to int64 (uint64 for unsigned).
local SUM_DTYPE = { bool = "int64", int8 = "int64", int16 = "int64", int32 = "int64", int64 = "int64",
                    uint8 = "uint64", uint16 = "uint64", uint32 = "uint64", uint64 = "uint64",
                    float32 = "float32", float64 = "float64" }

local AXES = { false, 1, 2, 3, -1, -2, { 1, 2 }, { 1, 3 }, { 2, 3 }, { 1, 2, 3 } }
local function axes_text(axes) return type(axes) == "table" and "{" .. table.concat(axes, ", ") .. "}" or tostring(axes) end

-- x:method(axes[, {keepdims = true}]) with `false` for no axis.
local function reduce(x, method, axes, keep)
  if keep then return x[method](x, axes or nil, { keepdims = true }) end
  if axes then return x[method](x, axes) end
  return x[method](x)
end

-- Host folds of the reductions.
local FOLDS = {
  sum = { function() return 0 end, function(a, v) return a + v end },
  prod = { function() return 1 end, function(a, v) return a * v end },
  max = { function() return -math.huge end, function(a, v) if v ~= v or a ~= a then return 0 / 0 end return math.max(a, v) end },
  min = { function() return math.huge end, function(a, v) if v ~= v or a ~= a then return 0 / 0 end return math.min(a, v) end },
}
local function host_reduce(method, h, axes, keep)
  local fold = FOLDS[method]
  return H.reduce(h, axes or nil, keep, fold[1], fold[2])
end

-- argmax/argmin: the first index of the extreme; NaN counts as the extreme (NumPy).
local function host_arg(method, h, axes, keep)
  local better = method == "argmax" and function(v, b) return v > b end or function(v, b) return v < b end
  return H.reduce(h, axes or nil, keep, function() return { nil, -1 } end, function(acc, v, pos)
    local best = acc[1]
    if best == nil or (best == best and (v ~= v or better(v, best))) then return { v, pos } end
    return acc
  end, function(acc) return acc[2] end)
end

describe("array reductions", function()
  before_each(function() math.randomseed(5104) end)

  on_devices("sum, prod, max and min over each set of axes, with keepdims", function()
    for _, dtype in ipairs({ "float64", "int32", "int64" }) do
      local lo, hi = -100, 100
      local hx = H.random(dtype, { 3, 4, 5 }, lo, hi)
      local x = H.to_array(hx, dtype)
      for _, method in ipairs({ "sum", "prod", "max", "min" }) do
        for _, axes in ipairs(AXES) do
          for _, keep in ipairs({ false, true }) do
            local what = ("%s %s axis %s keepdims %s"):format(dtype, method, axes_text(axes), keep)
            local z = reduce(x, method, axes, keep)
            local want = host_reduce(method, hx, axes, keep)
            local out_dtype = (method == "sum" or method == "prod") and SUM_DTYPE[dtype] or dtype
            if type(z) ~= "number" then assert.are.equal(out_dtype, z.dtype, what) end
            if dtype ~= "float64" then
              want = H.map(function(v) return in_dtype(out_dtype, v) end, want)
              H.check(z, want, H.exact, what)
            else
              H.check(z, want, H.rel(1e-12, 1e-300), what)
            end
          end
        end
      end
    end
  end)

  -- Sizes around the vector width and the block size take a kernel's vectorized body and
  -- its tails; every dtype, since the vector loads are of the element type.
  on_devices("full and last-axis sums and maxima for many sizes and every integer and float dtype", function()
    local sizes = { 1, 2, 3, 7, 8, 9, 16, 17, 31, 32, 33, 64, 100, 255, 256, 257, 1000, 4099 }
    for _, dtype in ipairs({ "int8", "uint8", "int16", "int32", "int64", "uint32", "float32", "float64" }) do
      for _, n in ipairs(sizes) do
        local h = H.random(dtype, { n }, 0, 100)
        local x = H.to_array(h, dtype)
        local what = ("%s n=%d"):format(dtype, n)
        local ok = H.exact
        if not is_int(dtype) then ok = H.within(function() return 2 ^ -20 * 100 * n end) end
        H.check(x:sum(), H.map(function(v) return in_dtype(SUM_DTYPE[dtype], v) end, H.sum(h)), ok, what .. " sum")
        H.check(x:max(), host_reduce("max", h, false), H.exact, what .. " max")
        H.check(x:argmin(), host_arg("argmin", h, false), H.exact, what .. " argmin")
        local m = H.to_array(H.random(dtype, { 3, n }, 0, 100), dtype)
        H.check(m:sum(-1), H.map(function(v) return in_dtype(SUM_DTYPE[dtype], v) end, H.sum(H.read(m), -1)), ok, what .. " row sums")
        H.check(m:sum(1), H.map(function(v) return in_dtype(SUM_DTYPE[dtype], v) end, H.sum(H.read(m), 1)), ok, what .. " column sums")
      end
    end
  end)

  on_devices("float32 sums within the rounding of the summation order; bools count", function()
    local hx = H.random("float32", { 64, 1000 }, -1, 1)
    local x = H.to_array(hx, "float32")
    for _, axes in ipairs({ false, 1, 2 }) do
      local scale = H.abs_sum(hx, axes or nil)
      H.check(reduce(x, "sum", axes), H.sum(hx, axes or nil),
              H.within(function(k) return 2 ^ -20 * scale.data[k] + 1e-30 end), "axis " .. axes_text(axes))
    end
    local hb = H.random("bool", { 30, 7 })
    local counts = H.reduce(hb, 1, false, function() return 0 end, function(a, v) return a + (v and 1 or 0) end)
    local s = H.to_array(hb, "bool"):sum(1)
    assert.are.equal("int64", s.dtype)
    H.check(s, counts, H.exact)
  end)

  on_devices("full reductions give 0-d arrays; luda.sum(x, ...) is x:sum(...); out= and unsigned sums", function()
    local hx = H.random("int32", { 4, 6 }, -100, 100)
    local x = H.to_array(hx, "int32")
    local total = x:sum()
    assert.are.same({ 0, "int64" }, { total.ndim, total.dtype })
    assert.are.equal(H.sum(hx).data[1], total:item())
    H.check(luda.sum(x, 2), H.sum(hx, 2), H.exact, "luda.sum")
    H.check(luda.max(x, { axis = 1, keepdims = true }), host_reduce("max", hx, 1, true), H.exact, "luda.max with options")
    local z = luda.empty(6, "int64")
    assert.is_true(rawequal(z, x:sum(1, { out = z })))
    H.check(z, H.sum(hx, 1), H.exact, "out=")
    local hu = H.random("uint8", { 100 })
    local s = H.to_array(hu, "uint8"):sum()
    assert.are.equal("uint64", s.dtype)
    H.check(s, H.sum(hu), H.exact, "uint8 sum")
  end)

  on_devices("mean: float64 for integers, the dtype for floats", function()
    local hi = H.random("int32", { 6, 9 }, -1000, 1000)
    local m = H.to_array(hi, "int32"):mean(2)
    assert.are.equal("float64", m.dtype)
    H.check(m, H.reduce(hi, 2, false, function() return 0 end, function(a, v) return a + v end, function(a, n) return a / n end), H.rel(1e-15))
    local hf = H.random("float32", { 6, 9 })
    local mf = H.to_array(hf, "float32"):mean(1)
    assert.are.equal("float32", mf.dtype)
    -- the float32 sum may cancel: its rounding is measured against the sum of |x|
    local scale = H.abs_sum(hf, 1)
    H.check(mf, H.reduce(hf, 1, false, function() return 0 end, function(a, v) return a + v end, function(a, n) return a / n end),
            H.within(function(k) return 2 ^ -21 * scale.data[k] end))
    H.check(H.to_array(hi, "int32"):mean(), H.of(H.sum(hi).data[1] / 54), H.rel(1e-15))
  end)

  on_devices("argmax and argmin give 0-based indices, the first of ties, and NaN first", function()
    local hx = H.random("int32", { 4, 5, 6 }, -5, 5)  -- ties on purpose
    local x = H.to_array(hx, "int32")
    for _, method in ipairs({ "argmax", "argmin" }) do
      for _, axes in ipairs({ false, 1, 2, 3, -1 }) do
        local z = reduce(x, method, axes)
        if type(z) ~= "number" then assert.are.equal("int64", z.dtype) end
        H.check(z, host_arg(method, hx, axes), H.exact, method .. " axis " .. axes_text(axes))
      end
    end
    local n = luda.array({ 1.0, 0 / 0, 3.0, 0 / 0 })
    H.check(n:argmax(), H.of(1), H.exact, "argmax with NaN")
    H.check(n:argmin(), H.of(1), H.exact, "argmin with NaN")
    H.check(n:max(), H.of(0 / 0), H.exact, "max with NaN")
    H.check(luda.array({ 3, 1, 3, 1 }):argmax(), H.of(0), H.exact)
    H.check(luda.array({ 3, 1, 3, 1 }):argmin(), H.of(1), H.exact)
  end)

  on_devices("reads every layout; size-1 and 0-d arrays; empty sums and products", function()
    for _, case in ipairs(H.layouts("int64", -20, 20)) do
      local x = case[2]
      local hx = H.read(x)
      H.check(x:sum(), H.sum(hx), H.exact, case[1] .. " sum")
      if x.size > 0 then
        H.check(x:max(), host_reduce("max", hx, false), H.exact, case[1] .. " max")
        H.check(x:argmin(), host_arg("argmin", hx, false), H.exact, case[1] .. " argmin")
      end
      if x.ndim >= 1 then
        H.check(x:sum(-1), H.sum(hx, -1), H.exact, case[1] .. " sum(-1)")
        H.check(x:sum(1, { keepdims = true }), H.sum(hx, 1, true), H.exact, case[1] .. " sum(1, keepdims)")
      end
    end
    H.check(luda.empty({ 0 }, "float32"):prod(), H.of(1.0), H.exact)
    H.check(luda.empty({ 2, 0 }, "int32"):sum(2), H.of({ 0, 0 }), H.exact)
    H.check(luda.empty({ 0 }, "float64"):mean(), H.of(0 / 0), H.exact)
  end)

  describe("dot", function()
    on_devices("of 1-d vectors", function()
      for _, dtype in ipairs({ "float64", "int64", "float32" }) do
        local hx, hy = H.random(dtype, { 1000 }, -10, 10), H.random(dtype, { 1000 }, -10, 10)
        local z = luda.dot(H.to_array(hx, dtype), H.to_array(hy, dtype))
        local prods = H.map(function(a, b) return a * b end, hx, hy)
        local scale = H.abs_sum(prods).data[1]
        local ok = is_int(dtype) and H.exact or H.within(function() return (dtype == "float32" and 2 ^ -20 or 2 ^ -48) * scale end)
        H.check(z, H.sum(prods), ok, dtype)
      end
      -- a strided view
      local h = H.random("float64", { 20 }, -10, 10)
      local v = H.to_array(h, "float64"):slice("::2")
      local hv = H.read(v)
      H.check(luda.dot(v, v), H.sum(H.map(function(a) return a * a end, hv)), H.rel(1e-14))
    end)

    on_devices("errors: lengths and dimensions", function()
      raises("dot: shapes (3,) and (4,) not aligned: 3 (axis 1) != 4 (axis 1)", function() return luda.dot(luda.ones(3), luda.ones(4)) end)
    end)
  end)

  describe("errors", function()
    on_devices("axes out of range or repeated; empty max and argmax", function()
      local x = luda.ones({ 2, 3 })
      raises("sum: axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", function() return x:sum(3) end)
      raises("max: axis 1 is repeated", function() return x:max({ 1, -2 }) end)
      raises("max: zero-size array to reduction operation maximum which has no identity", function() return luda.empty(0):max() end)
      raises("argmax: attempt to get argmax of an empty sequence", function() return luda.empty(0):argmax() end)
      raises("argmax: takes one axis or none (the flattened array), got 2 axes", function() return x:argmax({ 1, 2 }) end)
      raises("sum: unknown option 'keepdim'; expected axis, keepdims, dtype, initial, out, stream", function() return x:sum(1, { keepdim = true }) end)
    end)

    on_devices("max, min, argmax and argmin of an empty axis raise whatever the result's size, as NumPy", function()
      -- NumPy raises when a reduced axis is empty, even where the result would be empty too
      local e00, e03, e30 = luda.empty({ 0, 0 }), luda.empty({ 0, 3 }, "int32"), luda.empty({ 3, 0 })
      raises("max: zero-size array to reduction operation maximum which has no identity", function() return e00:max(1) end)
      raises("min: zero-size array to reduction operation minimum which has no identity", function() return e00:min(2) end)
      raises("min: zero-size array to reduction operation minimum which has no identity", function() return e03:min(1) end)
      raises("max: zero-size array to reduction operation maximum which has no identity", function() return e30:max(2, { keepdims = true }) end)
      raises("argmax: attempt to get argmax of an empty sequence", function() return e00:argmax(2) end)
      raises("argmin: attempt to get argmin of an empty sequence", function() return e03:argmin(1) end)
      raises("max: zero-size array to reduction operation maximum which has no identity", function() return luda.max(e30) end)
      -- a reduced axis that is not empty gives the empty result NumPy gives; sum and prod have identities
      assert.are.same({ { 0 }, "int32" }, { e03:max(2).shape, e03:max(2).dtype })
      assert.are.same({ 0 }, e30:argmax(1).shape)
      H.check(e00:sum(1), H.of({}), H.exact)
      H.check(e30:prod(2), H.of({ 1.0, 1.0, 1.0 }), H.exact)
      H.check(e03:sum(1), H.of({ 0, 0, 0 }), H.exact)
    end)

    on_devices("argmax takes one axis; a reduction takes its options once", function()
      local x = luda.ones({ 2, 3 })
      raises("argmax: takes one axis or none (the flattened array), got 0 axes", function() return x:argmax({ axis = {} }) end)
      raises("argmin: takes one axis or none (the flattened array), got 0 axes", function() return luda.argmin(x, { axis = {} }) end)
      H.check(x:argmax({ axis = { -1 } }), H.of({ 0, 0 }), H.exact)
      local hint = "; the call is x:max([axis] [, {axis =, keepdims =, out =, stream =}]), and an axis table lists axes ({1, 2})"
      raises("max: argument 3 (table) comes after the options table" .. hint, function() return x:max({}, { keepdims = true }) end)
      raises("max: argument 4 (5) comes after the options table" .. hint, function() return x:max(1, {}, 5) end)
      raises("sum: argument 3 (true) comes after the options table" ..
             "; the call is x:sum([axis] [, {axis =, keepdims =, out =, stream =}]), and an axis table lists axes ({1, 2})",
             function() return luda.sum(x, { keepdims = true }, true) end)
      -- an empty table of axes reduces over none, as NumPy's axis=()
      H.check(x:max({ axis = {} }), H.of({ { 1.0, 1.0, 1.0 }, { 1.0, 1.0, 1.0 } }), H.exact)
      H.check(x:sum(nil, { keepdims = true }), H.of({ { 6.0 } }), H.exact)
    end)
  end)
end)

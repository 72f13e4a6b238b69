-- NumPy's array functions beyond Lua's operators and math set: sign square reciprocal clip
-- fmax fmin nextafter asinh acosh atanh deg2rad rad2deg, the bitwise and logical
-- operations, and NumPy's names as aliases (arcsin, remainder, true_divide, ...). Each runs
-- on the cpu target and on cuda when there is a GPU, against plain-Lua references of
-- NumPy's documented results, on every layout (empty, 0-d, size-1, strided, reversed).
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local raises, in_dtype, BITS = H.raises, H.in_dtype, H.BITS
local on_devices = support.device_tests(_ENV)

local function isnan(v) return v ~= v end

-- NumPy's documented results, one element at a time.
local REF = {
  sign = function(v) if v > 0 then return 1 elseif v < 0 then return -1 elseif v == 0 then return 0 end return v end,
  square = function(v) return v * v end,
  reciprocal = function(v)
    if math.type(v) == "integer" then return (v == 1 or v == -1) and v or 0 end
    return 1 / v
  end,
  clip = function(v, lo, hi)
    if isnan(v) or isnan(lo) or isnan(hi) then return 0 / 0 end
    return math.min(math.max(v, lo), hi)
  end,
  fmax = function(a, b) if isnan(b) then return a elseif isnan(a) then return b end return math.max(a, b) end,
  fmin = function(a, b) if isnan(b) then return a elseif isnan(a) then return b end return math.min(a, b) end,
  asinh = function(x) return (x < 0 and -1 or 1) * math.log(math.abs(x) + math.sqrt(x * x + 1)) end,
  acosh = function(x) return math.log(x + math.sqrt(x * x - 1)) end,
  atanh = function(x) return 0.5 * math.log((1 + x) / (1 - x)) end,
}

-- The next float64 (or float32) after x towards y, from the bits of x.
local function nextafter(x, y, fmt)
  if isnan(x) or isnan(y) then return 0 / 0 end
  if x == y then return y end
  local int = fmt == "f" and "<i4" or "<i8"
  if x == 0 then
    local tiny = string.unpack(fmt == "f" and "<f" or "<d", string.pack(int, 1))
    return y > 0 and tiny or -tiny
  end
  local bits = string.unpack(int, string.pack(fmt == "f" and "<f" or "<d", x))
  bits = bits + (((y > x) == (x > 0)) and 1 or -1)
  return (string.unpack(fmt == "f" and "<f" or "<d", string.pack(int, bits)))
end

describe("NumPy's elementwise functions", function()
  before_each(function() math.randomseed(5201) end)

  on_devices("sign, square and reciprocal keep the dtype, on every layout", function()
    for _, dtype in ipairs({ "int8", "int32", "uint8", "int64", "float32", "float64" }) do
      for _, name in ipairs({ "sign", "square", "reciprocal" }) do
        local lo, hi = -20, 20
        if dtype:sub(1, 1) == "u" then lo = 0 end
        for _, case in ipairs(H.layouts(dtype, lo, hi)) do
          local x = case[2]
          local z = luda[name](x)
          local what = ("%s %s %s"):format(name, dtype, case[1])
          assert.are.equal(dtype, z.dtype, what)
          local ok = (dtype == "float32" or name ~= "reciprocal") and H.exact or H.rel(1e-16)
          H.check(z, H.map(function(v) return in_dtype(dtype, REF[name](v)) end, H.read(x)), ok, what)
        end
      end
    end
    -- integer reciprocal is C's 1 / x, 0 for 0; sign of NaN is NaN and of -0.0 is 0.0
    local i = luda.array({ -3, -1, 0, 1, 2, 127 }, "int8")
    assert.are.same({ 0, -1, 0, 1, 0, 0 }, luda.reciprocal(i):totable())
    assert.are.same({ 0, 1, 0, 0 }, luda.reciprocal(luda.array({ 0, 1, 2, 255 }, "uint8")):totable())
    local s = luda.sign(luda.array({ -0.0, 0 / 0, -math.huge }, "float32")):totable()
    assert.are.same({ math.huge, -1.0 }, { 1 / s[1], s[3] })
    assert.is_true(isnan(s[2]))
    assert.are.equal(-1, luda.sign(-7))
    assert.are.equal(0.25, luda.reciprocal(4.0))
  end)

  on_devices("clip, fmax and fmin broadcast, promote, and treat NaN as NumPy's", function()
    for _, dtype in ipairs({ "int16", "uint32", "float32", "float64" }) do
      local lo0 = dtype:sub(1, 1) == "u" and 0 or -50
      local hx = H.random(dtype, { 3, 1, 5 }, lo0, 50)
      local hlo, hhi = H.random(dtype, { 4, 1 }, lo0, 10), H.random(dtype, { 5 }, 10, 60)
      local x, lo, hi = H.to_array(hx, dtype), H.to_array(hlo, dtype), H.to_array(hhi, dtype)
      local z = luda.clip(x, lo, hi)
      assert.are.same({ dtype, { 3, 4, 5 } }, { z.dtype, z.shape }, dtype)
      H.check(z, H.map(REF.clip, hx, hlo, hhi), H.exact, "clip " .. dtype)
      H.check(luda.clip(x.T, 1, 20), H.map(function(v) return REF.clip(v, 1, 20) end, H.read(x.T)), H.exact,
              "clip by numbers " .. dtype)
      H.check(luda.fmax(x, lo), H.map(REF.fmax, hx, hlo), H.exact, "fmax " .. dtype)
      H.check(luda.fmin(lo, x), H.map(REF.fmin, hlo, hx), H.exact, "fmin " .. dtype)
    end
    local n = luda.array({ 0 / 0, 1.0, 0 / 0, 5.0, -2.0 })
    local m = luda.array({ 0 / 0, 0 / 0, 3.0, 2.0, 7.0 })
    local hn, hm = H.read(n), H.read(m)
    H.check(luda.fmax(n, m), H.map(REF.fmax, hn, hm), H.exact, "fmax NaN")
    H.check(luda.fmin(n, m), H.map(REF.fmin, hn, hm), H.exact, "fmin NaN")
    H.check(luda.clip(n, m, 4.0), H.map(function(v, l) return REF.clip(v, l, 4.0) end, hn, hm), H.exact, "clip NaN")
    assert.are.same({ "int32", { 0, 2, 3 } }, { luda.clip(luda.array({ -1, 2, 9 }, "int32"), 0, 3).dtype,
                                                  luda.clip(luda.array({ -1, 2, 9 }, "int32"), 0, 3):totable() })
    assert.are.same({ "float64", { 0.5, 2.0 } }, { luda.clip(luda.array({ -1, 2 }, "int32"), 0.5, 3).dtype,
                                                   luda.clip(luda.array({ -1, 2 }, "int32"), 0.5, 3):totable() })
    assert.are.same({ true, true, false }, luda.fmax(luda.array({ true, false, false }), luda.array({ false, true, false })):totable())
    -- one bound, as NumPy's clip with None: minimum or maximum
    local hc = H.random("float64", { 2, 7 })
    local c = H.to_array(hc, "float64"):slice(":, ::-2")
    H.check(luda.clip(c, nil, 10), H.map(function(v) return math.min(v, 10) end, H.read(c)), H.exact, "clip nil lo")
    H.check(luda.clip(c, -10, nil), H.map(function(v) return math.max(v, -10) end, H.read(c)), H.exact, "clip nil hi")
    raises("luda.clip: give lo, hi or both; nil stands for no bound", function() return luda.clip(c, nil, nil) end)
    local out = luda.zeros({ 3 }, "int32")
    assert.is_true(rawequal(out, luda.clip(luda.array({ -5, 5, 50 }, "int32"), 0, 10, { out = out })))
    assert.are.same({ 0, 5, 10 }, out:totable())
  end)

  on_devices("asinh, acosh, atanh, nextafter, deg2rad and rad2deg", function()
    local ranges = { asinh = { -10, 10 }, acosh = { 1, 50 }, atanh = { -0.99, 0.99 } }
    for name, r in pairs(ranges) do
      for _, dtype in ipairs({ "float32", "float64" }) do
        for _, case in ipairs(H.layouts(dtype, r[1], r[2])) do
          local z = luda[name](case[2])
          local what = ("%s %s %s"):format(name, dtype, case[1])
          assert.are.equal(dtype, z.dtype, what)
          local ok = dtype == "float32" and H.near32(8, 2e-6) or H.rel(1e-13, 1e-3)
          H.check(z, H.map(REF[name], H.read(case[2])), ok, what)
        end
      end
    end
    assert.are.equal("float64", luda.acosh(luda.array({ 1, 2 }, "int32")).dtype)
    local hx, hy = H.random("float64", { 4, 6 }), H.random("float64", { 6 })
    hy.data[1], hx.data[2], hx.data[3] = hx.data[1], 0.0, -0.0
    H.check(luda.nextafter(H.to_array(hx, "float64"), H.to_array(hy, "float64")),
            H.map(function(a, b) return nextafter(a, b, "d") end, hx, hy), H.exact, "nextafter float64")
    local hf = H.random("float32", { 5, 3 })
    H.check(luda.nextafter(H.to_array(hf, "float32").T, luda.float32(0)),
            H.map(function(a) return nextafter(a, 0.0, "f") end, H.read(H.to_array(hf, "float32").T)), H.exact,
            "nextafter float32")
    for _, dtype in ipairs({ "float32", "float64" }) do
      for _, case in ipairs(H.layouts(dtype, -400, 400)) do
        local hr = H.read(case[2])
        local ok = dtype == "float32" and H.near32(1) or H.exact
        H.check(luda.rad2deg(case[2]), H.map(math.deg, hr), ok, "rad2deg " .. dtype .. " " .. case[1])
        H.check(luda.deg2rad(case[2]), H.map(math.rad, hr), ok, "deg2rad " .. dtype .. " " .. case[1])
      end
    end
    assert.are.equal(180.0, luda.rad2deg(math.pi))
  end)

  on_devices("the kernel language has math.deg, math.rad and luda.math's asinh acosh atanh nextafter", function()
    local f = luda.vectorize(function(x, y)
      return math.deg(x) + math.rad(y) + luda.math.asinh(x) + luda.math.acosh(y + 1) + luda.math.atanh(x / 8)
        + luda.math.nextafter(x, y)
    end)
    local hx, hy = H.random("float64", { 40 }, -4, 4), H.random("float64", { 40 }, 1, 9)
    local want = H.map(function(a, b)
      return math.deg(a) + math.rad(b) + REF.asinh(a) + REF.acosh(b + 1) + REF.atanh(a / 8) + nextafter(a, b, "d")
    end, hx, hy)
    H.check(f(H.to_array(hx, "float64"), H.to_array(hy, "float64")), want, H.rel(1e-13), "kernel")
    H.check(luda.array(H.map(function(a, b) return f.lua(a, b) end, hx, hy).data), want, H.rel(1e-13), "host")
  end)

  -- IEEE's remainder is exact: on integers scaled by a power of two the reference is
  -- integer arithmetic (the nearer of the two multiples, the even one on a tie).
  on_devices("luda.math.remainder is IEEE's (Python's math.remainder) in kernels and on the host", function()
    local function reference(x, y)
      local n = x // y
      local r0, r1 = x - n * y, x - (n + 1) * y
      local r = math.abs(r0) < math.abs(r1) and r0 or math.abs(r1) < math.abs(r0) and r1 or (n % 2 == 0 and r0 or r1)
      return r == 0 and (x < 0 and -0.0 or 0.0) or r
    end
    local xs, ys, want = {}, {}, {}
    for i = 1, 300 do
      local x, y = math.random(-2000, 2000), math.random(-60, 60)
      if y == 0 then y = 7 end
      if i <= 20 then x = y * math.random(-5, 5) + (y // 2) end  -- ties, where y is even
      xs[i], ys[i], want[i] = x * 0.25, y * 0.25, reference(x, y) * 0.25
    end
    local f = luda.vectorize(function(x, y) return luda.math.remainder(x, y) end)
    for _, dtype in ipairs({ "float64", "float32" }) do
      local got = f(luda.array(xs, dtype), luda.array(ys, dtype)):totable()
      for i = 1, #xs do
        assert.are.equal(want[i], got[i], ("remainder(%g, %g) %s"):format(xs[i], ys[i], dtype))
        assert.are.equal(1 / want[i], 1 / got[i], "the zero's sign of remainder(" .. xs[i] .. ", " .. ys[i] .. ")")
      end
    end
    for i = 1, #xs do assert.are.equal(want[i], f.lua(xs[i], ys[i]), "host") end
  end)
end)

describe("NumPy's names", function()
  on_devices("are the same functions as luda's", function()
    local pairs_ = {
      { "arcsin", "asin" }, { "arccos", "acos" }, { "arctan", "atan" }, { "arctan2", "atan2" },
      { "arcsinh", "asinh" }, { "arccosh", "acosh" }, { "arctanh", "atanh" }, { "true_divide", "divide" },
      { "remainder", "mod" }, { "pow", "power" }, { "absolute", "abs" }, { "degrees", "rad2deg" },
      { "radians", "deg2rad" }, { "bitwise_not", "invert" }, { "bitwise_invert", "invert" },
      { "bitwise_left_shift", "left_shift" }, { "bitwise_right_shift", "right_shift" },
    }
    for _, p in ipairs(pairs_) do
      assert.is_function(luda[p[1]], p[1])
      assert.is_true(rawequal(luda[p[1]], luda[p[2]]), p[1] .. " is " .. p[2])
    end
    local hy, hx = H.random("float64", { 3, 4 }), H.random("float64", { 4 })
    H.check(luda.arctan2(H.to_array(hy, "float64"), H.to_array(hx, "float64")),
            H.map(function(a, b) return math.atan(a, b) end, hy, hx), H.rel(1e-15, 1e-300), "arctan2")
    -- NumPy's remainder takes the divisor's sign, as Lua's %
    local r = luda.remainder(luda.array({ -7, 7, -7, 7 }, "int32"), luda.array({ 3, -3, -3, 3 }, "int32"))
    assert.are.same({ 2, -2, -1, 1 }, r:totable())
    raises("luda.atan2 takes 2 arguments, got 1", function() return luda.arctan2(1.0) end)
  end)
end)

describe("bitwise and logical operations", function()
  before_each(function() math.randomseed(5202) end)

  local BITWISE = {
    { "bitwise_and", function(a, b) return a & b end, function(a, b) return a and b end },
    { "bitwise_or", function(a, b) return a | b end, function(a, b) return a or b end },
    { "bitwise_xor", function(a, b) return a ~ b end, function(a, b) return a ~= b end },
  }
  local LOGICAL = {
    { "logical_and", function(a, b) return a and b end }, { "logical_or", function(a, b) return a or b end },
    { "logical_xor", function(a, b) return a ~= b end },
  }
  local function truth(v) if type(v) == "boolean" then return v end return v ~= 0 end

  on_devices("bitwise and, or, xor and invert on every integer dtype and on bools", function()
    for _, dtype in ipairs({ "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64" }) do
      local ha, hb = H.random(dtype, { 3, 5 }), H.random(dtype, { 5 })
      local a, b = H.to_array(ha, dtype), H.to_array(hb, dtype)
      for _, op in ipairs(BITWISE) do
        local z = luda[op[1]](a, b)
        assert.are.equal(dtype, z.dtype, op[1] .. " " .. dtype)
        H.check(z, H.map(function(u, v) return in_dtype(dtype, op[2](u, v)) end, ha, hb), H.exact, op[1] .. " " .. dtype)
      end
      for _, case in ipairs(dtype == "uint64" and {} or H.layouts(dtype)) do
        H.check(luda.invert(case[2]), H.map(function(v) return in_dtype(dtype, ~v) end, H.read(case[2])), H.exact,
                "invert " .. dtype .. " " .. case[1])
      end
    end
    -- uint64 beyond int64 reads back as a float: compared as int64 bit patterns
    assert.are.same({ -1, -6, 0 }, luda.invert(luda.array({ 0, 5, -1 }, "int64"):astype("uint64")):astype("int64"):totable())
    local hp, hq = H.random("bool", { 4, 6 }), H.random("bool", { 6 })
    local p, q = H.to_array(hp, "bool"), H.to_array(hq, "bool")
    for _, op in ipairs(BITWISE) do
      local z = luda[op[1]](p, q)
      assert.are.equal("bool", z.dtype, op[1])
      H.check(z, H.map(op[3], hp, hq), H.exact, op[1] .. " bool")
    end
    H.check(luda.invert(p.T), H.map(function(v) return not v end, H.read(p.T)), H.exact, "invert bool")
    assert.are.same({ "int16", { 6, 2 } }, { luda.bitwise_and(luda.array({ 7, 2 }, "int16"), luda.array({ 14, 3 }, "uint8")).dtype,
                                             luda.bitwise_and(luda.array({ 7, 2 }, "int16"), luda.array({ 14, 3 }, "uint8")):totable() })
    assert.are.equal(6, luda.bitwise_and(7, 14))
  end)

  on_devices("shifts: arithmetic right shift of negatives, 0 past the width", function()
    for _, dtype in ipairs({ "int8", "int32", "int64", "uint8", "uint32" }) do
      local bits = BITS[dtype]
      local ha = H.random(dtype, { 6, 1 })
      local hs = H.integers({ 1, bits + 4 }, 0, bits + 3)
      for k = 1, bits + 4 do hs.data[k] = k - 1 end
      local a, s = H.to_array(ha, dtype), H.to_array(hs, dtype)
      H.check(luda.left_shift(a, s), H.map(function(v, n) return n >= bits and 0 or in_dtype(dtype, v << n) end, ha, hs),
              H.exact, "left_shift " .. dtype)
      H.check(luda.right_shift(a, s), H.map(function(v, n)
        if n >= 63 then return v < 0 and -1 or 0 end
        return v // (1 << n)
      end, ha, hs), H.exact, "right_shift " .. dtype)
    end
    assert.are.same({ -4, -1, 3 }, luda.right_shift(luda.array({ -8, -1, 7 }, "int16"), 1):totable())
  end)

  on_devices("logical operations give bools from any dtype, NaN counting as true", function()
    for _, dtype in ipairs({ "int8", "uint16", "float32", "float64", "bool" }) do
      local lo = dtype == "uint16" and 0 or -2
      for _, case in ipairs(H.layouts(dtype, lo, 2)) do
        local z = luda.logical_not(case[2])
        assert.are.equal("bool", z.dtype)
        H.check(z, H.map(function(v) return not truth(v) end, H.read(case[2])), H.exact, "logical_not " .. dtype .. " " .. case[1])
      end
      local ha, hb = H.random(dtype, { 4, 1 }, lo, 2), H.random(dtype, { 5 }, lo, 2)
      local a, b = H.to_array(ha, dtype), H.to_array(hb, dtype)
      for _, op in ipairs(LOGICAL) do
        H.check(luda[op[1]](a, b), H.map(function(u, v) return op[2](truth(u), truth(v)) end, ha, hb), H.exact,
                op[1] .. " " .. dtype)
      end
    end
    local n = luda.array({ 0 / 0, 0.0, -0.0, 2.5 })
    assert.are.same({ false, true, true, false }, luda.logical_not(n):totable())
    -- a Lua boolean among numbers is 0 or 1, as NumPy's True
    assert.are.same({ true, false, false, true }, luda.logical_and(n, true):totable())
    assert.are.same({ false, false, false, false }, luda.logical_and(n, false):totable())
    local i = luda.array({ -2, 0, 3 }, "int16")
    assert.are.same({ "int16", { 0, 0, 1 } }, { luda.bitwise_and(i, true).dtype, luda.bitwise_and(i, true):totable() })
    assert.are.same({ "float32", { 3.5 } }, { luda.add(luda.array({ 2.5 }, "float32"), true).dtype,
                                              luda.add(luda.array({ 2.5 }, "float32"), true):totable() })
    assert.are.same({ false, false, true }, luda.greater(i, true):totable())
    assert.are.same({ true, false, false, true }, luda.logical_and(n, luda.array({ true, true, true, true })):totable())
    assert.are.same({ false, true }, luda.logical_xor(luda.array({ 3, 0 }, "int8"), 1):totable())
  end)

  on_devices("out= and errors: floats and bool shifts are refused, naming the fix", function()
    local out = luda.zeros({ 2, 3 }, "uint8")
    local x = luda.array({ { 1, 2, 3 }, { 4, 5, 6 } }, "uint8")
    assert.is_true(rawequal(out, luda.bitwise_or(x, 8, { out = out })))
    assert.are.same({ { 9, 10, 11 }, { 12, 13, 14 } }, out:totable())
    local f, b = luda.array({ 1.5, 2 }, "float32"), luda.array({ true })
    raises("ufunc 'bitwise_and' is not defined for float32 operands, only integers and bools; convert them first " ..
           "(x:astype(\"int64\"))", function() return luda.bitwise_and(f, 1) end)
    raises("ufunc 'invert' is not defined for float64 operands, only integers and bools; convert them first " ..
           "(x:astype(\"int64\"))", function() return luda.invert(luda.array({ 1.0 })) end)
    raises("ufunc 'left_shift' is not defined for float64 operands, only integers and bools; convert them first " ..
           "(x:astype(\"int64\"))", function() return luda.left_shift(luda.array({ 1, 2 }, "int32"), 1.0) end)
    raises("ufunc 'right_shift' is not defined for bool operands; convert them first (x:astype(\"int64\"))",
           function() return luda.right_shift(b, b) end)
    raises("ufunc 'sign' is not defined for bool operands; convert them first (x:astype(\"int64\"))",
           function() return luda.sign(b) end)
    raises("luda.clip takes 3 arguments, got 2", function() return luda.clip(f, 1) end)
  end)
end)

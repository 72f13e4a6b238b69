-- Rounding half to even (luda.rint, luda.round / luda.around with decimals, the kernel
-- language's luda.math.rint), the sign of a zero remainder, and the bitwise operations
-- given a Lua integer out of the array's range, against NumPy 2's own results
-- (tests/lua/rounding_numpy.lua, written by rounding_numpy.py). Each runs on the cpu target
-- and on cuda when there is a GPU, on contiguous, strided, 0-d, size-1 and empty arrays;
-- the two devices must give the same bits.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local NP = require "rounding_numpy"
local raises = H.raises
local on_devices = support.device_tests(_ENV)

-- Equal, and a zero has the same sign (H.check already takes NaN as equal to NaN).
local function same(g, w)
  if g ~= w then return false end
  if g == 0 and math.type(g) == "float" then return 1 / g == 1 / w end
  return true
end

-- The values as arrays of `dtype` in several layouts: { name, array, host array }, the
-- expected result taken the same way from `want` (a function of the layout's positions).
local function layouts(values, dtype)
  local n = #values
  local h = H.of(values, { n })
  local wide = luda.zeros({ 2 * n }, dtype)
  local strided = wide:slice("::2")
  luda.copyto(strided, H.to_array(h, dtype))
  return {
    { "contiguous", H.to_array(h, dtype), function(t) return H.of(t, { n }) end },
    { "strided ::2", strided, function(t) return H.of(t, { n }) end },
    { "0-d", H.to_array(H.of(values[1]), dtype), function(t) return H.of(t[1]) end },
    { "size-1", H.to_array(H.of({ values[n] }, { 1 }), dtype), function(t) return H.of({ t[n] }, { 1 }) end },
    { "empty", luda.empty({ 0 }, dtype), function() return H.of({}, { 0 }) end },
  }
end

describe("rounding half to even, as NumPy", function()
  on_devices("luda.rint and luda.round(x, decimals) give NumPy's values, in the input's dtype", function()
    for _, case in ipairs(NP.rounding) do
      local float = case.dtype:sub(1, 5) == "float"
      for _, l in ipairs(layouts(case.x, case.dtype)) do
        for decimals, want in pairs(case.round) do
          local what = ("%s %s decimals %d"):format(case.dtype, l[1], decimals)
          local got = luda.round(l[2], decimals)
          assert.are.equal(case.dtype, got.dtype, what)
          H.check(got, l[3](want), same, what)
          if decimals == 0 and float then H.check(luda.rint(l[2]), l[3](want), same, "rint " .. what) end
        end
      end
    end
  end)

  on_devices("an integer result past the dtype's range wraps, as integer arithmetic does", function()
    H.check(luda.round(luda.array({ 127, -128, 125 }, "int8"), -1), H.of({ -126, 126, 120 }), H.exact)
    H.check(luda.round(luda.array({ 255, 250 }, "uint8"), -1), H.of({ 4, 250 }), H.exact)
    -- 10^3 is past int8's range: every int8 rounds to 0, as NumPy's
    H.check(luda.round(luda.array({ 127, -128, 5 }, "int8"), -3), H.of({ 0, 0, 0 }), H.exact)
    H.check(luda.round(luda.array({ math.maxinteger }, "int64"), -19), H.of({ 0 }), H.exact)
  end)

  on_devices("luda.around is luda.round; out= and Lua numbers", function()
    assert.are.equal(luda.round, luda.around)
    assert.are.equal(2.0, luda.round(2.5))
    assert.are.equal(-2.0, luda.round(-1.5))
    assert.are.equal(0.12, luda.round(0.125, 2))
    assert.are.equal(1230.0, luda.round(1234.5, -1))
    local x = luda.array({ 0.5, 1.5, 2.5, 3.5 }, "float32")
    local out = luda.full({ 4 }, 9, "float32")
    assert.are.equal(out, luda.round(x, { out = out }))
    assert.are.same({ 0, 2, 2, 4 }, out:totable())
    assert.are.equal(out, luda.round(x, 1, { out = out }))
    assert.are.same({ 0.5, 1.5, 2.5, 3.5 }, out:totable())
    -- integers: rint gives float64, as NumPy's
    local r = luda.rint(luda.array({ 3, -4 }, "int32"))
    assert.are.equal("float64", r.dtype)
    assert.are.same({ 3.0, -4.0 }, r:totable())
  end)

  on_devices("the kernel language's luda.math.rint is NumPy's rint; luda.math.round keeps halves away from zero", function()
    assert.are.same({ 2.0, 4.0, -2.0, -0.0 }, { luda.math.rint(2.5), luda.math.rint(3.5), luda.math.rint(-2.5),
                                                 luda.math.rint(-0.5) })  -- the host's, for f.lua
    local rint = luda.vectorize(function(v) return luda.math.rint(v) end)
    local away = luda.vectorize(function(v) return luda.math.round(v) end)
    -- the values docs/language.md gives: C's round of -0.5 is -1.0, NumPy's round -0.0
    local pins = luda.array({ -0.5, 2.5, -0.4, 0.5, -2.5, 3.5 })
    H.check(away(pins), H.of({ -1.0, 3.0, -0.0, 1.0, -3.0, 4.0 }), same, "luda.math.round, documented")
    H.check(rint(pins), H.of({ -0.0, 2.0, -0.0, 0.0, -2.0, 4.0 }), same, "luda.math.rint, documented")
    H.check(luda.round(pins), H.of({ -0.0, 2.0, -0.0, 0.0, -2.0, 4.0 }), same, "luda.round, documented")
    assert.is_true(same(-1.0, luda.math.round(-0.5)) and same(-0.0, luda.math.round(-0.4)), "the host's round")
    for _, case in ipairs(NP.rounding) do
      if case.dtype:sub(1, 5) == "float" then
        for _, l in ipairs(layouts(case.x, case.dtype)) do
          H.check(rint(l[2]), l[3](case.round[0]), same, case.dtype .. " " .. l[1])
          local host = H.read(l[2])
          H.check(away(l[2]), H.map(function(v)
            if v ~= v or v == math.huge or v == -math.huge or v == 0 then return v end
            local r = v >= 0 and math.floor(v + 0.5) or -math.floor(-v + 0.5)
            if math.abs(v) >= 2 ^ 52 then r = v end  -- already integral (v + 0.5 would round)
            if r == 0 then return v < 0 and -0.0 or 0.0 end
            return r + 0.0
          end, host), same, "round " .. case.dtype .. " " .. l[1])
        end
      end
    end
  end)

  on_devices("bools are refused, as by the other rounding functions", function()
    raises("ufunc 'round' is not defined for bool operands; convert them first (x:astype(\"int64\"))",
           function() return luda.round(luda.array({ true, false }), 1) end)
    raises("ufunc 'rint' is not defined for bool operands; convert them first (x:astype(\"int64\"))",
           function() return luda.rint(luda.array({ true })) end)
    raises("luda.round: decimals must be an integer, got 1.5", function() return luda.round(luda.ones(2), 1.5) end)
    raises("luda.round takes 1 or 2 arguments (x [, decimals]), got 3", function() return luda.round(luda.ones(2), 1, 2) end)
  end)
end)

describe("the sign of a zero remainder, as NumPy", function()
  on_devices("remainder (mod, %) takes the divisor's sign, zeros too; fmod the dividend's", function()
    local percent = luda.vectorize(function(a, b) return a % b end)
    for _, case in ipairs(NP.division) do
      local a, b = H.to_array(H.of(case.a), case.dtype), H.to_array(H.of(case.b), case.dtype)
      local rem, fmod = H.of(case.remainder), H.of(case.fmod)
      H.check(luda.remainder(a, b), rem, same, "remainder " .. case.dtype)
      H.check(luda.mod(a, b), rem, same, "mod " .. case.dtype)
      H.check(a % b, rem, same, "% " .. case.dtype)
      H.check(percent(a, b), rem, same, "kernel % " .. case.dtype)
      H.check(luda.fmod(a, b), fmod, same, "fmod " .. case.dtype)
    end
    -- Lua numbers, and a constant folded by the compiler
    assert.is_true(same(0.0, luda.remainder(-4.0, 2.0)))
    assert.is_true(same(-0.0, luda.remainder(4.0, -2.0)))
    local folded = luda.vectorize(function(a) return a + (-4.0 % 2.0) end)
    assert.is_true(same(0.0, folded(-0.0)))  -- -0.0 + 0.0 is 0.0; -0.0 + -0.0 would be -0.0
  end)
end)

describe("bitwise operations and a Lua integer out of the array's range, as NumPy 2", function()
  on_devices("every operand is taken in the array's dtype: a count that does not fit raises", function()
    for _, case in ipairs(NP.bitwise) do
      local x = luda.array(case.x, case.dtype)
      local what = ("%s(%s, %d)"):format(case.op, case.dtype, case.int)
      if case.raises then
        local err = support.error_of(function() return luda[case.op](x, case.int) end)
        local want = ("ufunc '%s': Lua integer %d out of bounds for %s; pass a typed scalar (luda.int64(%d)), which " ..
                      "promotes as an array does, or convert the arrays first (x:astype(\"int64\"))")
                     :format(case.op, case.int, case.dtype, case.int)
        assert.are.equal(support.here():gsub(":%d+: $", ""), err:match("^(.-):%d+: "), what)
        assert.are.equal(want, err:gsub("^.-:%d+: ", ""), what)
      else
        H.check(luda[case.op](x, case.int), H.of(case.values), H.exact, what)
      end
    end
  end)

  on_devices("the kernel language's shifts keep Lua's meaning: a count is not converted", function()
    local shl = luda.vectorize(function(a, n) return a << n end)
    assert.are.same({ 0, 0 }, shl(luda.array({ 1, 2 }, "uint8"), 300):totable())
    assert.are.same({ 2, 4 }, shl(luda.array({ 1, 2 }, "uint8"), 1):totable())
  end)
end)

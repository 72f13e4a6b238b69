-- Typed scalars: luda.bool, luda.int8 ... luda.float64.
local luda = require "luda"
local support = require "support"
local f32, here, error_of = support.f32, support.here, support.error_of

local RANGES = {
  int8 = { -128, 127 }, int16 = { -32768, 32767 }, int32 = { -2147483648, 2147483647 },
  int64 = { math.mininteger, math.maxinteger },
  uint8 = { 0, 255 }, uint16 = { 0, 65535 }, uint32 = { 0, 4294967295 },
}

describe("typed scalars", function()
  before_each(function() math.randomseed(7321) end)

  it("hold integers of each width, with their dtype", function()
    for name, range in pairs(RANGES) do
      for _ = 1, 20 do
        local v = math.random(math.max(range[1], -2^40), math.min(range[2], 2^40))
        local s = luda[name](v)
        assert.are.equal(name, s.dtype)
        assert.are.equal(v, s:value())
        assert.are.equal("integer", math.type(s:value()))
        assert.are.equal(("luda.%s(%d)"):format(name, v), tostring(s))
      end
      assert.are.equal(range[1], luda[name](range[1]):value())
      assert.are.equal(range[2], luda[name](range[2]):value())
    end
  end)

  it("truncate floats toward zero for integer dtypes", function()
    for _ = 1, 50 do
      local x = (math.random() - 0.5) * 1000
      local trunc = x < 0 and math.ceil(x) or math.floor(x)
      assert.are.equal(trunc, luda.int32(x):value())
    end
    assert.are.equal(-2, luda.int8(-2.9):value())
  end)

  it("round to float32 and keep float64", function()
    for _ = 1, 50 do
      local x = (math.random() - 0.5) * 1e6
      assert.are.equal(f32(x), luda.float32(x):value())
      assert.are.equal(x, luda.float64(x):value())
    end
    assert.are.equal("float", math.type(luda.float64(3):value()))
  end)

  it("print as NumPy 2 prints np.float32(2.5), under luda's name", function()
    assert.are.equal("luda.float32(2.5)", tostring(luda.float32(2.5)))
    assert.are.equal("luda.float32(0.1)", tostring(luda.float32(0.1)))
    assert.are.equal("luda.float64(0.1)", tostring(luda.float64(0.1)))
    assert.are.equal("luda.float64(1.0)", tostring(luda.float64(1)))
    assert.are.equal("luda.float64(1e+100)", tostring(luda.float64(1e100)))
    assert.are.equal("luda.float64(inf)", tostring(luda.float64(math.huge)))
    assert.are.equal("luda.bool(true)", tostring(luda.bool(true)))
    assert.are.equal("luda.uint64(18446744073709551615)", tostring(luda.uint64(luda.int64(-1))))
  end)

  it("make booleans from booleans and numbers", function()
    assert.is_true(luda.bool(true):value())
    assert.is_false(luda.bool(false):value())
    assert.is_true(luda.bool(5):value())
    assert.is_false(luda.bool(0):value())
    assert.are.equal(1, luda.int32(true):value())
  end)

  it("convert from another typed scalar as C does", function()
    assert.are.equal(44, luda.uint8(luda.int32(300)):value())  -- wraps, as astype does
    assert.are.equal(2.5, luda.float64(luda.float32(2.5)):value())
  end)

  it("are accepted wherever a dtype is", function()
    assert.are.equal("int16", luda.zeros(3, luda.int16, { device = "cpu" }).dtype)
    assert.are.equal("float32", luda.ones(3, nil, { device = "cpu" }):astype(luda.float32).dtype)
  end)

  it("reject integers out of range, naming the range", function()
    assert.are.equal(here() .. "int8: 300 is out of range for int8 (-128 to 127)", error_of(function() return luda.int8(300) end))
    assert.are.equal(here() .. "uint8: -1 is out of range for uint8 (0 to 255)", error_of(function() return luda.uint8(-1) end))
    assert.are.equal(here() .. "uint16: 65536 is out of range for uint16 (0 to 65535)", error_of(function() return luda.uint16(65536) end))
    assert.are.equal(here() .. "int32: 1e+20 is out of range for int32 (-2147483648 to 2147483647)", error_of(function() return luda.int32(1e20) end))
    assert.are.equal(here() .. "int64: nan is out of range for int64 (-9223372036854775808 to 9223372036854775807)", error_of(function() return luda.int64(0/0) end))
  end)

  it("reject values that are not numbers", function()
    assert.are.equal(here() .. "float32: value must be a number, a boolean or a typed scalar, got string", error_of(function() return luda.float32("2.5") end))
    assert.are.equal(here() .. "int32: value must be a number, a boolean or a typed scalar, got no value", error_of(function() return luda.int32() end))
    assert.are.equal(here() .. "typed scalar has no field 'size' (it has .dtype, .real, .imag and :value())", error_of(function() return luda.int32(1).size end))
  end)
end)

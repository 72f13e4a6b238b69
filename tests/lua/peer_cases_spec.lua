-- Cases from CuPy's and numba-cuda's own test suites, in Lua, each checked as that peer
-- behaves: the value the peer's test expects, computed here another way (plain Lua).
local luda = require "luda"
local support = require "support"
local cuda = luda.cuda
local on_devices = support.device_tests(_ENV)

describe("a parameter is a local whose type unifies everything assigned to it", function()
  -- CuPy's test_fusion: test_scalar_inplace_update_with_array. x is an int8 scalar, y a
  -- float32 array; x += y makes x a float32 per element, as a local would be.
  on_devices("fuse: an int8 scalar parameter added to a float32 array", function()
    local f = luda.fuse(function(x, y)
      x = x + y
      return x
    end)
    local y = luda.array({ 4.5, -0.5 }, "float32")
    local got = f(luda.int8(3), y)
    assert.are.equal("float32", got.dtype)
    assert.are.same({ 7.5, 2.5 }, got:totable())
    -- an integer argument assigned a float, then returned: float64, as in Lua
    local g = luda.fuse(function(x, y)
      x = x * 0.5
      return x + y
    end)
    local z = g(luda.array({ 3, 5 }, "int32"), luda.array({ 1, 1 }, "int32"))
    assert.are.equal("float64", z.dtype)
    assert.are.same({ 2.5, 3.5 }, z:totable())
  end)

  on_devices("cuda.jit: a scalar parameter widened by an assignment", function()
    local k = cuda.jit(function(out, s, t)
      s = s + 0.25   -- int32 argument, float64 after
      t = t * 2      -- float32 stays float32 (a Lua integer is weak)
      out[0] = s
      out[1] = t
    end)
    local out = luda.zeros(2, "float64")
    k[{ 1, 1 }](out, luda.int32(3), luda.float32(1.5))
    assert.are.same({ 3.25, 3.0 }, out:totable())
  end)

  on_devices("vectorize: a parameter assigned a wider value", function()
    local f = luda.vectorize(function(a, b)
      a = a + b / 4
      return a
    end)
    local got = f(luda.array({ 1, 2, 3 }, "int16"), luda.array({ 1, 2, 3 }, "int16"))
    assert.are.equal("float64", got.dtype)
    assert.are.same({ 1.25, 2.5, 3.75 }, got:totable())
  end)

  it("a parameter cannot become another kind of value", function()
    local k = cuda.jit(function(out, s)
      s = true
      out[0] = 1
    end)
    local err = support.error_of(function() k[{ 1, 1 }](luda.zeros(1, "int32", { device = "cpu" }), 3) end)
    assert.truthy(err:find("parameter 's' is int64; it cannot be assigned bool", 1, true), err)
  end)
end)

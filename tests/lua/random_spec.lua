-- luda.random: uniform arrays made on the kinds. Every value is checked exactly against a
-- plain-Lua reference of the documented generator (Philox4x32-10 of the element's position
-- in the seed's stream), on the cpu target and on cuda when there is a GPU, which also
-- makes the two devices' values identical; then the statistics of a large sample, the
-- stream's reproducibility, shapes and errors.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local raises = H.raises

local on_devices = support.device_tests(_ENV)

-- The reference, in Lua's own wrapping integers and logical shifts (runtime/philox.h,
-- runtime/random_draws.h): Philox4x32-10 with the seed's halves as the key, of the counter
-- (k, 0) for stream element k.
local M32 = 0xffffffff
local function philox(c0, c1, c2, c3, k0, k1)
  for r = 1, 10 do
    if r > 1 then k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32 end
    local p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
    c0, c1, c2, c3 = ((p1 >> 32) ~ c1 ~ k0) & M32, p1 & M32, ((p0 >> 32) ~ c3 ~ k1) & M32, p0 & M32
  end
  return c0, c1, c2, c3
end
-- Element k (0-based) of the stream of `seed`, in dtype: the top 24 or 53 bits scaled.
local function expected_value(seed, k, dtype)
  local c0, c1 = philox(k & M32, (k >> 32) & M32, 0, 0, seed & M32, (seed >> 32) & M32)
  local z = c0 | (c1 << 32)
  if dtype == "float32" then return (z >> 40) * 2.0 ^ -24 end
  return (z >> 11) * 2.0 ^ -53
end
local function expected(seed, first, shape, dtype)
  local n = H.size_of(shape)
  local data = {}
  for k = 1, n do data[k] = expected_value(seed, first + k - 1, dtype) end
  return { shape = shape, data = data }
end

local function device_name(device) return device == "cpu" and "cpu" or "cuda:0" end

describe("luda.random", function()
  on_devices("random(shape, dtype, {seed=}) is the seed's stream, exactly", function(device)
    for _, dtype in ipairs({ "float32", "float64" }) do
      for _, seed in ipairs({ 0, 1, 42, -1, math.maxinteger, math.mininteger }) do
        local x = luda.random.random({ 3, 5 }, dtype, { seed = seed })
        assert.are.equal(dtype, tostring(x.dtype))
        assert.are.equal(device_name(device), tostring(x.device))
        H.check(x, expected(seed, 0, { 3, 5 }, dtype), H.exact, dtype .. " seed " .. seed)
      end
    end
    -- a size that leaves a tail past the vector loads, and dtype given as a constructor
    H.check(luda.random.random(1027, luda.float32, { seed = 9 }), expected(9, 0, { 1027 }, "float32"), H.exact)
  end)

  on_devices("the module's stream: seed(s), then each call continues it", function()
    luda.random.seed(123)
    local a = luda.random.random(3, "float32")
    local b = luda.random.random({ 2, 2 }, "float32")
    H.check(a, expected(123, 0, { 3 }, "float32"), H.exact, "first call")
    H.check(b, expected(123, 3, { 2, 2 }, "float32"), H.exact, "second call")
    -- {seed=} reads its own stream and leaves the module's where it was
    H.check(luda.random.random(2, nil, { seed = 5 }), expected(5, 0, { 2 }, "float64"), H.exact)
    H.check(luda.random.random(2), expected(123, 7, { 2 }, "float64"), H.exact, "after {seed=}")
    -- seeding again restarts it; an integral float is a seed
    luda.random.seed(123.0)
    H.check(luda.random.random(3, "float32"), expected(123, 0, { 3 }, "float32"), H.exact, "reseeded")
    -- unseeded (seed()), two calls still differ from each other
    luda.random.seed()
    local u, v = H.read(luda.random.random(4)), H.read(luda.random.random(4))
    assert.are_not.same(u.data, v.data)
  end)

  on_devices("uniform on [0, 1): range, mean and variance of a large sample", function()
    for _, dtype in ipairs({ "float32", "float64" }) do
      local n = 1 << 20
      local x = luda.random.random(n, dtype, { seed = 2024 })
      assert.is_true(x:min():item() >= 0, dtype .. " min")
      assert.is_true(x:max():item() < 1, dtype .. " max")
      local mean = x:astype("float64"):mean():item()
      local var = ((x:astype("float64") - mean) ^ 2):mean():item()
      -- standard errors: 0.289 / sqrt(n) = 2.8e-4 for the mean, 8.4e-5 for the variance
      assert.is_true(math.abs(mean - 0.5) < 2e-3, dtype .. " mean " .. mean)
      assert.is_true(math.abs(var - 1 / 12) < 1e-3, dtype .. " variance " .. var)
      -- tenths of [0, 1) hold a tenth each (within 2%: 30 standard errors' margin is far more)
      for k = 1, 10 do
        local lo, hi = (k - 1) / 10, k / 10
        local inside = luda.where(luda.greater_equal(x, lo), 1, 0) * luda.where(luda.less(x, hi), 1, 0)
        local frac = inside:sum():item() / n
        assert.is_true(math.abs(frac - 0.1) < 0.002, ("%s: [%g, %g) holds %g"):format(dtype, lo, hi, frac))
      end
    end
  end)

  on_devices("shapes: empty, 0-d, several axes; float64 by default", function(device)
    local e = luda.random.random({ 2, 0 })
    assert.are.same({ 2, 0 }, { e.shape[1], e.shape[2] })
    assert.are.equal("float64", tostring(e.dtype))
    local z = luda.random.random({}, "float32", { seed = 3 })
    assert.are.equal(0, #z.shape)
    H.check(z, { shape = {}, data = { expected_value(3, 0, "float32") } }, H.exact)
    local m = luda.random.random({ 2, 3, 4 }, nil, { seed = 8 })
    assert.are.equal(device_name(device), tostring(m.device))
    H.check(m, expected(8, 0, { 2, 3, 4 }, "float64"), H.exact)
  end)

  it("the same values on cpu and cuda for the same seed", function()
    local why = support.gpu_missing()
    if why then return pending(why) end
    for _, dtype in ipairs({ "float32", "float64" }) do
      local c = luda.random.random({ 257, 33 }, dtype, { seed = 77, device = "cpu" })
      local g = luda.random.random({ 257, 33 }, dtype, { seed = 77, device = "cuda" })
      assert.are.equal("cuda:0", tostring(g.device))
      H.check(g, H.read(c), H.exact, dtype)
    end
  end)

  on_devices("errors", function()
    raises("random: dtype must be float32 or float64 (uniform floats in [0, 1)), got int32", function() return luda.random.random(3, "int32") end)
    raises("bad argument #3 to 'random' (unknown option 'sed'; expected device, seed)", function() return luda.random.random(3, nil, { sed = 1 }) end)
    raises("random: negative dimensions are not allowed (shape (2, -1))", function() return luda.random.random({ 2, -1 }) end)
  end)
end)

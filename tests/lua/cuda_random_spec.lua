-- luda.cuda.random (numba.cuda.random's xoroshiro128+ generators) against the generator
-- written in plain Lua (64-bit integers wrap as uint64 arithmetic does): the states
-- create_xoroshiro128p_states makes, and the draws kernels take from them, on each device.
local luda = require "luda"
local support = require "support"
local cuda = luda.cuda
local on_devices = support.device_tests(_ENV)

-- The reference: splitmix64's start, xoroshiro128+'s step and jump.
local function rotl(x, k) return (x << k) | (x >> (64 - k)) end
local function next_word(s)
  local s0, s1 = s[1], s[2] ~ s[1]
  local result = s[1] + s[2]
  s[1] = rotl(s0, 55) ~ s1 ~ (s1 << 14)
  s[2] = rotl(s1, 36)
  return result
end
local JUMP = { 0xbeac0467eba5facb, 0xd86b048b86aa9922 }
local function jump(s)
  local a, b = 0, 0
  for _, word in ipairs(JUMP) do
    for bit = 0, 63 do
      if word & (1 << bit) ~= 0 then a, b = a ~ s[1], b ~ s[2] end
      next_word(s)
    end
  end
  s[1], s[2] = a, b
end
local function states_of(n, seed, start)
  local z = seed + 0x9E3779B97F4A7C15
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  z = z ~ (z >> 31)
  local s, out = { z, z }, {}
  for _ = 1, start or 0 do jump(s) end
  for i = 1, n do
    if i > 1 then jump(s) end
    out[i] = { s[1], s[2] }
  end
  return out
end
local function uniform64(s) return (next_word(s) >> 11) * 2.0 ^ -53 end
local function uniform32(s) return (next_word(s) >> 40) * 2.0 ^ -24 end

-- A uint64 array read back as Lua integers: uint64 values above 2^63 come back as floats
-- from totable, and the conversion to int64 keeps their bits.
local function words(states) return states:astype("int64"):totable() end

describe("luda.cuda.random", function()
  on_devices("create_xoroshiro128p_states makes numba.cuda.random's states", function()
    for _, case in ipairs({ { 1, 0 }, { 5, 1 }, { 33, -7 }, { 4, 12345, 3 } }) do
      local n, seed, start = case[1], case[2], case[3]
      local states = cuda.random.create_xoroshiro128p_states(n, seed, start and { subsequence_start = start } or nil)
      assert.are.same({ n, 2 }, states.shape)
      assert.are.equal("uint64", states.dtype)
      assert.are.same(states_of(n, seed, start), words(states))
    end
    assert.are.same({ 0, 2 }, cuda.random.create_xoroshiro128p_states(0, 1).shape)
  end)

  on_devices("kernels draw uniforms and normals as the reference does, and advance the states", function()
    local n, draws = 45, 6  -- a partial warp too
    local k = cuda.jit(function(states, u32, u64, z32, z64)
      local i = cuda.grid(1)
      if i < states.shape[1] then
        for j = 0, 5 do
          u32[i][j] = cuda.random.xoroshiro128p_uniform_float32(states, i)
          u64[i][j] = cuda.random.xoroshiro128p_uniform_float64(states, i)
          z32[i][j] = cuda.random.xoroshiro128p_normal_float32(states, i)
          z64[i][j] = cuda.random.xoroshiro128p_normal_float64(states, i)
        end
      end
    end)
    local states = cuda.random.create_xoroshiro128p_states(n, 42)
    local u32, u64 = luda.zeros({ n, draws }, "float32"), luda.zeros({ n, draws })
    local z32, z64 = luda.zeros({ n, draws }, "float32"), luda.zeros({ n, draws })
    k[{ 2, 32 }](states, u32, u64, z32, z64)
    local ref = states_of(n, 42)
    local U32, U64, Z32, Z64 = u32:totable(), u64:totable(), z32:totable(), z64:totable()
    for i = 1, n do
      local s = ref[i]
      for j = 1, draws do
        assert.are.equal(uniform32(s), U32[i][j])
        assert.are.equal(uniform64(s), U64[i][j])
        local a, b = 1 - uniform32(s), uniform32(s)
        local want = math.sqrt(-2 * math.log(a)) * math.cos(2 * math.pi * b)
        assert.is_true(math.abs(Z32[i][j] - want) <= 1e-5 * (1 + math.abs(want)), ("%g against %g"):format(Z32[i][j], want))
        a, b = 1 - uniform64(s), uniform64(s)
        want = math.sqrt(-2 * math.log(a)) * math.cos(2 * math.pi * b)
        assert.is_true(math.abs(Z64[i][j] - want) <= 1e-13 * (1 + math.abs(want)), ("%g against %g"):format(Z64[i][j], want))
      end
      assert.are.same({ s[1], s[2] }, words(states)[i], "the states advance")
    end
  end)

  on_devices("draws have the moments of their distributions", function()
    local n, per = 4096, 64
    local k = cuda.jit(function(states, u, z)
      local i = cuda.grid(1)
      if i < states.shape[1] then
        for j = 0, per - 1 do
          u[i * per + j] = cuda.random.xoroshiro128p_uniform_float64(states, i)
          z[i * per + j] = cuda.random.xoroshiro128p_normal_float64(states, i)
        end
      end
    end)
    local u, z = luda.zeros(n * per), luda.zeros(n * per)
    k[{ n // 128, 128 }](cuda.random.create_xoroshiro128p_states(n, 7), u, z)
    local m = n * per
    -- means within 5 standard errors, variances within 5% of 1/12 and 1
    assert.is_true(math.abs(u:mean():item() - 0.5) < 5 * math.sqrt(1 / 12 / m))
    assert.is_true(math.abs(u:var():item() - 1 / 12) < 0.05 / 12)
    assert.is_true(math.abs(z:mean():item()) < 5 / math.sqrt(m))
    assert.is_true(math.abs(z:var():item() - 1) < 0.05)
    assert.is_true(u:min():item() >= 0 and u:max():item() < 1)
  end)

  it("cpu and cuda draw the same uniforms", support.gpu_test(_ENV)(function()
    local k = cuda.jit(function(states, out)
      local i = cuda.grid(1)
      if i < #out then out[i] = cuda.random.xoroshiro128p_uniform_float32(states, i) end
    end)
    local results = {}
    for _, device in ipairs({ "cpu", "cuda" }) do
      local out = luda.zeros(1000, "float32", { device = device })
      k[{ 8, 128 }](cuda.random.create_xoroshiro128p_states(1000, 3, { device = device }), out)
      results[device] = out:totable()
    end
    assert.are.same(results.cpu, results.cuda)
  end))

  it("errors name the function and the fix", function()
    local err = support.error_of(function() cuda.random.create_xoroshiro128p_states(-1, 1) end)
    assert.truthy(err:find("create_xoroshiro128p_states: n must be 0 to 2^31 generators, got -1", 1, true), err)
    err = support.error_of(function() cuda.random.create_xoroshiro128p_states(4, 1, { subsequence_start = -2 }) end)
    assert.truthy(err:find("subsequence_start must be 0 to 2^24, got -2", 1, true), err)
    err = support.error_of(function() cuda.random.create_xoroshiro128p_states(4, 1, { seed = 2 }) end)
    assert.truthy(err:find("unknown option 'seed'", 1, true), err)
    local k = cuda.jit(function(states, out) out[0] = cuda.random.xoroshiro128p_uniform_float32(states, 0) end)
    err = support.error_of(function() k[{ 1, 1 }](luda.zeros(4, "uint64", { device = "cpu" }), luda.zeros(1, "float32", { device = "cpu" })) end)
    assert.truthy(err:find("expects generator states, a uint64 array of shape {n, 2} as " ..
                           "cuda.random.create_xoroshiro128p_states makes them, got", 1, true), err)
  end)
end)

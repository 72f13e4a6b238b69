-- Numba's Monte Carlo estimate of pi (numba.cuda.random's documentation), in luda: each
-- thread draws points in the unit square from its own xoroshiro128+ generator and counts
-- those inside the quarter circle.
--   build/luda examples/monte_carlo_pi.lua [iterations]
-- The states and the uniform draws are the same bits on the cpu and on a GPU, so the
-- estimate is too.
local luda = require "luda"
local cuda = luda.cuda

local compute_pi = cuda.jit(function(rng_states, iterations, out)
  local thread_id = cuda.grid(1)
  -- Draws points in [0, 1) x [0, 1) and counts those inside the unit circle.
  local inside = 0
  for _ = 1, iterations do
    -- float32 draws, squared in float64, where their products are exact: every device
    -- (fused multiply-add or not) and plain Lua count the same points.
    local x = luda.float64(cuda.random.xoroshiro128p_uniform_float32(rng_states, thread_id))
    local y = luda.float64(cuda.random.xoroshiro128p_uniform_float32(rng_states, thread_id))
    if x * x + y * y <= 1.0 then inside = inside + 1 end
  end
  out[thread_id] = 4.0 * inside / iterations
end)

local threads_per_block, blocks = 64, 24
local iterations = tonumber(arg and arg[1]) or 10000
local rng_states = cuda.random.create_xoroshiro128p_states(threads_per_block * blocks, 1)
local out = luda.zeros(threads_per_block * blocks, "float32")
local s = rng_states:slice(0):astype("int64"):totable()  -- thread 0's generator, before it draws
compute_pi[{ blocks, threads_per_block }](rng_states, iterations, out)
local pi = out:mean():item()
print(("pi: %.6f (%d points on %s)"):format(pi, threads_per_block * blocks * iterations, tostring(out.device)))

-- The same count in plain Lua for the first thread's generator, from its state words.
local function rotl(v, k) return (v << k) | (v >> (64 - k)) end
local inside = 0
for _ = 1, iterations do
  local draw = {}
  for d = 1, 2 do
    local s0, s1 = s[1], s[2] ~ s[1]
    draw[d] = ((s[1] + s[2]) >> 40) * 2.0 ^ -24
    s[1], s[2] = rotl(s0, 55) ~ s1 ~ (s1 << 14), rotl(s1, 36)
  end
  if draw[1] * draw[1] + draw[2] * draw[2] <= 1.0 then inside = inside + 1 end
end
local want = string.unpack("f", string.pack("f", 4.0 * inside / iterations))  -- rounded to float32
assert(out:totable()[1] == want, "thread 0 differs from plain Lua")
assert(math.abs(pi - math.pi) < 0.01, "the estimate is off by more than 0.01")
print("thread 0 matches plain Lua; the estimate is within 0.01 of pi")

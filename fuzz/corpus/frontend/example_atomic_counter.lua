-- Numba's atomic counter in luda: 64 blocks of 64 threads each add 1 to one counter.
-- Without an atomic the read-modify-write of different threads overlap and updates are
-- lost; with cuda.atomic.add every one counts, giving exactly 4096. Then the same atomic
-- sums 4096 random integers, checked against the plain Lua sum.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/atomic_counter.lua
local luda = require "luda"
local cuda = luda.cuda

-- Racy: each thread reads counter[0], adds 1 and writes it back; threads that read the
-- same old value write the same new one.
local racy_counter = cuda.jit(function(counter)
  counter[0] = counter[0] + 1
end)

-- Safe: the read-modify-write is one atomic operation (it returns the old value).
local atomic_counter = cuda.jit(function(counter)
  cuda.atomic.add(counter, 0, 1)
end)

local blocks, threads = 64, 64
local expected = 0   -- what plain Lua counts: one increment per thread
for _ = 1, blocks * threads do expected = expected + 1 end

local counter = luda.zeros(1, "int32")
racy_counter[{blocks, threads}](counter)
local racy = counter:totable()[1]
print(("racy counter: %d of %d increments survived (lost updates; the number varies)"):format(racy, expected))
if racy < 1 or racy > expected then
  error(("racy counter: %d is outside 1..%d"):format(racy, expected))
end

counter = luda.zeros(1, "int32")
atomic_counter[{blocks, threads}](counter)
local safe = counter:totable()[1]
print(("atomic counter: %d"):format(safe))
if safe ~= expected then
  error(("atomic counter: %d, expected %d"):format(safe, expected))
end

-- Every thread adds its own random value into one total.
local atomic_sum = cuda.jit(function(values, total)
  local i = cuda.grid(1)
  if i < #values then
    cuda.atomic.add(total, 0, values[i])
  end
end)
local n, values, host_total = blocks * threads, {}, 0
for i = 1, n do
  values[i] = math.random(-100000, 100000)
  host_total = host_total + values[i]
end
local total = luda.zeros(1, "int64")
atomic_sum[{blocks, threads}](luda.array(values, "int64"), total)
local device_total = total:totable()[1]
if device_total ~= host_total then
  error(("atomic sum: %d, plain Lua gives %d"):format(device_total, host_total))
end
print(("atomic sum of %d random integers matches plain Lua: %d"):format(n, device_total))

-- luda.dist's collectives on GPU arrays, under mpirun, each rank on its own GPU where the
-- machine has one per rank (else the ranks share and the data goes through host memory):
--   mpirun -n 3 luda bench/dist.lua                 NCCL where it can be used
--   LUDA_NCCL=off mpirun -n 3 luda bench/dist.lua   through pinned host memory
-- Rank 0 prints each size's median time and bus bandwidth (NCCL's tests' busbw: an
-- allreduce moves 2(n-1)/n of the bytes per rank, an allgather (n-1)/n of the result), and
-- how the data moved (luda.dist.info). OpenMPI in a container may need
-- OMPI_MCA_btl_vader_single_copy_mechanism=none for large host messages.
local luda = require "luda"
local T = dofile("bench/timing.lua")
local dist = luda.dist

local rank, size = dist.rank(), dist.size()
local gpus = luda.cuda.device_count()
if gpus > 0 then luda.device("cuda:" .. rank % gpus):use() end

local function median_ms(fn, reps)
  fn()
  dist.barrier()
  local t = {}
  for k = 1, reps do
    local t0 = luda.clock()
    fn()
    t[k] = (luda.clock() - t0) * 1e3
  end
  -- Every rank's median, the slowest reported.
  return dist.allreduce(luda.array(T.median(t), "float64", { device = "cpu" }), "max"):item()
end

-- MIB="1,16,128" (default) picks the array sizes.
local sizes = {}
for v in (os.getenv("MIB") or "1,16,128"):gmatch("%d+") do sizes[#sizes + 1] = tonumber(v) end
for _, mib in ipairs(sizes) do
  local n = mib * (1 << 20) // 4
  local x = luda.ones(n, "float32") * (rank + 1)
  local ms = median_ms(function() return dist.allreduce(x) end, 10)
  local check = dist.allreduce(x)[n - 1]
  assert(check == size * (size + 1) / 2, ("allreduce gave %s"):format(check))
  local busbw = 2 * (size - 1) / size * n * 4 / (ms * 1e-3) / 1e9
  local gms = median_ms(function() return dist.allgather(x) end, 10)
  local gbw = (size - 1) / size * size * n * 4 / (gms * 1e-3) / 1e9
  if rank == 0 then
    print(("allreduce float32 %4d MiB on %d ranks: %8.3f ms, bus %6.1f GB/s; allgather %8.3f ms, bus %6.1f GB/s")
      :format(mib, size, ms, busbw, gms, gbw))
  end
end
local i = dist.info()
if rank == 0 then
  print(("device %s, NCCL %s, communicator %s, host reason: %s"):format(tostring(luda.current_device()),
    i.nccl or "none", i.nccl_device or "none", i.host_reason or "none"))
end

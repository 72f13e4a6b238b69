-- One sum over several processes: `mpirun -n 4 luda examples/distributed_sum.lua [N]`, or
-- `luda examples/distributed_sum.lua [N]` for a single one (docs/distributed.md).
--
-- The array is 0, 1, ..., N-1 (N = 10 million unless given), cut into one run of
-- consecutive values per rank. Each rank makes only its own part, on its own default
-- device (one GPU per rank where there are several), and sums it there; luda.dist.allreduce adds the ranks' sums, and every rank
-- gets the total. Rank 0 prints it and checks it against N(N-1)/2, and the sum of
-- squares against (N-1)N(2N-1)/6, the first exact, the second in float64.
local dist = luda.dist
local rank, size = dist.rank(), dist.size()
local N = math.tointeger(tonumber(arg and arg[1] or "")) or 10000000

-- On a machine with several GPUs, one per rank (unless LUDA_DEVICE chooses).
local gpus = luda.cuda.device_count()
if gpus > 1 and not os.getenv("LUDA_DEVICE") then luda.device("cuda:" .. rank % gpus):use() end

-- This rank's values: [lo, hi), the ranks' runs covering 0 .. N-1 once.
local per = (N + size - 1) // size
local lo = math.min(rank * per, N)
local hi = math.min(lo + per, N)
local part = luda.arange(lo, hi, 1, "int64")

-- The local sums, as 0-d arrays, and the ranks' totals. The squares go through float64:
-- their sum passes int64's range for a large N.
local sum = dist.allreduce(part:sum())
local squares = part:astype("float64")
local sum_of_squares = dist.allreduce((squares * squares):sum())

if rank == 0 then
  local want = N * (N - 1) // 2
  local want_squares = (N - 1.0) * N * (2.0 * N - 1) / 6  -- in float64: N^3 passes int64
  print(("%d rank%s, up to %d values each, rank 0's on %s"):format(size, size == 1 and "" or "s", per, part.device))
  print(("sum of 0 .. %d = %d (N(N-1)/2 = %d)"):format(N - 1, sum:item(), want))
  print(("sum of squares = %.17g ((N-1)N(2N-1)/6 = %.17g)"):format(sum_of_squares:item(), want_squares))
  assert(sum:item() == want, "the sum differs from N(N-1)/2")
  -- float64 sums of squares in another order than the formula's: equal to 1e-12.
  assert(math.abs(sum_of_squares:item() - want_squares) <= 1e-12 * want_squares,
         "the sum of squares differs from (N-1)N(2N-1)/6")
  print("both equal the closed formulas")
end

-- A job that cannot go on: ranks 0 and 1 give up on an allreduce (their timeout passes),
-- then rank 2 makes that same call late and waits for its data, which they no longer send.
-- Their next collective says they can make no more; rank 2's call times out, and rank 2
-- ends without MPI_Finalize, so mpirun reports the job as failed. Run by ctest under
-- mpirun -n 3 (lua.dist_mpi_out_of_step, through tests/mpi/expect_ranks.sh): each rank
-- prints "ok: rank R" when it saw what it should.
local dist = luda.dist
local rank = dist.rank()

local function busy_wait(seconds)
  local t = luda.clock()
  while luda.clock() - t < seconds do end
end

-- The message of the error f raises, without its "file:line: ".
local function message_of(f)
  local ok, err = pcall(f)
  if ok then return "(no error)" end
  return (tostring(err):gsub("^[^:]*:%d+: ", ""))
end

local function expect(want, got)
  if want == got then return true end
  print(("FAILED: rank %d: expected\n  %s\nbut got\n  %s"):format(rank, want, got))
  return false
end

local x = luda.arange(4, "float64", { device = "cpu" })
dist.barrier()
local ok = true
if rank < 2 then
  ok = expect(("luda.dist.allreduce: rank %d waited 1 s for the other 2 ranks to call luda.dist.allreduce too; every rank must make the same luda.dist calls in the same order (a call that some ranks skip never completes), or a rank is still busy: give the call a longer {timeout = s}, or set LUDA_DIST_TIMEOUT"):format(rank),
    message_of(function() dist.allreduce(x, "sum", { timeout = 1 }) end)) and ok
  local refused = ("luda.dist.barrier: rank %d can make no more collective calls: its luda.dist.allreduce timed out, and then the other ranks made that call, so they wait for its data, which this rank no longer sends; the ranks' calls cannot line up again. End the job, and give that call a longer {timeout = s} (or LUDA_DIST_TIMEOUT)"):format(rank)
  ok = expect(refused, message_of(function() dist.barrier({ timeout = 10 }) end)) and ok
  ok = expect(refused:gsub("barrier", "allgather", 1), message_of(function() dist.allgather(x) end)) and ok
  -- The process goes on with everything else.
  ok = expect(6.0, x:sum():item()) and ok
else
  busy_wait(2)
  ok = expect("luda.dist.allreduce: rank 2 waited 2 s for the data of a call that every rank had made; a rank may have stopped or failed, or this rank made the call after the other ranks' wait for it had timed out: give the call a longer {timeout = s}, or set LUDA_DIST_TIMEOUT",
    message_of(function() dist.allreduce(x, "sum", { timeout = 2 }) end)) and ok
end
if ok then print(("ok: rank %d"):format(rank)) end

-- Chunked arrays on one device, its blocks all on the current one (bench/chunked.sh runs it
-- beside CuPy; bench/multi_gpu.lua spreads blocks over GPUs):
--   map_blocks' cost per block: map_blocks over many small blocks with a function that
--   returns its block (luda's own work alone), and with one that adds 1 (less the same
--   call on a plain block);
--   elementwise work (x * 2 + 1) and reductions (sum over all, sum along each axis) on a
--   chunked array of 4 blocks against the same work on the one array;
--   examples/chunked_svd.lua's SVD: 10000 x 1000 float64 in 5000 x 1000 chunks (TSQR),
--   against luda's one-array SVD (and CuPy's in chunked.sh).
-- Prints one line per figure and "@@ key value" lines for scripts.
--   build/luda bench/chunked.lua [--smoke]      (--smoke: small sizes, any device)
local luda = require "luda"

local smoke = arg and arg[1] == "--smoke"

local T = dofile("bench/timing.lua")
local time = T.time

local function figure(key, value, text)
  print(text)
  print(("@@ %s %.6g"):format(key, value))
end

-- Elementwise work and reductions, chunked (4 blocks of rows) against one array: blocks
-- that are views of the array (luda.chunked(x): the work runs over the array at once), and
-- blocks apart (copies made by map_blocks: the work runs block by block, the blocks'
-- reductions on streams of the device). Each waited for (calls taken in turn with the one
-- array's), and 20 back to back.
local n = smoke and 512 or 8192
local x = luda.random.random({ n, n }, "float32")
local cx = luda.chunked(x, { n // 4, n }, { devices = { x.device } })
local apart = luda.map_blocks(function(b) return b:copy() end, cx)
local reps = smoke and 5 or 41
local cases = {
  { "x2p1", "x * 2 + 1", function(a) return a * 2 + 1 end },
  { "sum", "sum", function(a) return luda.sum(a) end },
  { "sum_axis1", "sum along axis 1", function(a) return luda.sum(a, 1) end },
  { "sum_axis2", "sum along axis 2", function(a) return luda.sum(a, 2) end },
  { "max", "max", function(a) return luda.max(a) end },
}
for _, case in ipairs(cases) do
  local key, what, f = case[1], case[2], case[3]
  for _, form in ipairs({ { "chunked", "blocks of the array", cx }, { "apart", "blocks apart", apart } }) do
    local c = form[3]
    local chunked, plain = T.compare(function() return f(c) end, function() return f(x) end, reps)
    local burst = smoke and 3 or 20
    local chunked_b = T.back_to_back(function() return f(c) end, burst)
    local plain_b = T.back_to_back(function() return f(x) end, burst)
    figure(form[1] .. "_" .. key .. "_ratio", chunked / plain,
      ("%s of %d x %d float32 in 4 blocks (%s): %.3f ms, one array %.3f ms (%.3fx); %d back to back: %.3f ms, %.3f ms (%.3fx)"):format(
        what, n, n, form[2], chunked, plain, chunked / plain, burst, chunked_b, plain_b, chunked_b / plain_b))
    print(("@@ %s_%s_burst_ratio %.6g"):format(form[1], key, chunked_b / plain_b))
  end
end

-- map_blocks per block.
local nblocks = smoke and 64 or 4096
local small = luda.random.random({ nblocks * 16 }, "float32")
local c = luda.chunked(small, 16)
local same = time(function() return luda.map_blocks(function(b) return b end, c) end, 21)
local add = time(function() return luda.map_blocks(function(b) return b + 1 end, c) end, 21)
local block = c:block(0)
local one = time(function() for _ = 1, nblocks do local _ = block + 1 end end, 21)
figure("map_blocks_overhead_us", same * 1e3 / nblocks,
  ("map_blocks over %d blocks, returning each block: %.2f us per block"):format(nblocks, same * 1e3 / nblocks))
figure("map_blocks_add_overhead_us", (add - one) * 1e3 / nblocks,
  ("map_blocks of b + 1 over %d blocks: %.2f us per block, %.2f us of it map_blocks' own (b + 1 alone: %.2f us)"):format(
    nblocks, add * 1e3 / nblocks, (add - one) * 1e3 / nblocks, one * 1e3 / nblocks))

-- Blocks on different GPUs run at the same time: one block per GPU, each a kernel that
-- spins for about 20 ms; map_blocks over all of them against one block alone (each waited
-- for on every GPU).
local gpus = luda.cuda and luda.cuda.device_count() or 0
if not smoke and gpus >= 2 then
  local spin = luda.raw_kernel([[
extern "C" __global__ void spin(float* x, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 0) x[0] += 1.0f;
}]], "spin")
  local devices = {}
  for i = 0, gpus - 1 do devices[#devices + 1] = "cuda:" .. i end
  local cz = luda.chunked.zeros({ gpus * 32 }, 32, "float32", { devices = devices })
  local cycles = 40000000  -- about 20 ms at an H100's or H200's 1.98 GHz
  local wait_all = T.every_gpu
  local one = time(function() spin({ 1 }, { 32 }, { cz:block(0), cycles }) end, 5, wait_all)
  local all = time(function()
    return luda.map_blocks(function(b) spin({ 1 }, { 32 }, { b, cycles }); return b end, cz)
  end, 5, wait_all)
  figure("chunked_gpus_concurrency", gpus * one / all,
    ("map_blocks over %d blocks on %d GPUs, each block's kernel %.2f ms alone: %.2f ms in all, %.2fx of one after another"):format(
      gpus, gpus, one, all, gpus * one / all))
end

-- examples/chunked_svd.lua's SVD.
local m, k, rows = smoke and 2000 or 10000, smoke and 100 or 1000, smoke and 500 or 5000
local a = luda.random.random({ m, k }, "float64", { seed = 7 })
local ca = luda.chunked(a, { rows, k }, { devices = { a.device } })
local svd_reps = smoke and 3 or 7
local t_chunked = time(function() return luda.linalg.svd(ca, { full_matrices = false }) end, svd_reps)
local t_plain = time(function() return luda.linalg.svd(a, { full_matrices = false }) end, svd_reps)
local u, s = luda.linalg.svd(ca, { full_matrices = false })
local _, s1 = luda.linalg.svd(a, { full_matrices = false })
local err = luda.max(luda.abs(s - s1)):item() / s1[0]
local ua = u:compute()
local orth = luda.max(luda.abs(luda.matmul(ua.T, ua) - luda.eye(k))):item()
figure("chunked_svd_ms", t_chunked,
  ("svd of %d x %d float64 in %d x %d chunks (TSQR): %.2f ms; the one array's svd %.2f ms; S within %.1e of the one array's, |U^T U - I| %.1e"):format(
    m, k, rows, k, t_chunked, t_plain, err, orth))
print(("@@ plain_svd_ms %.6g"):format(t_plain))
print(("@@ chunked_svd_s_err %.6g"):format(err))
print(("@@ chunked_svd_u_orth %.6g"):format(orth))

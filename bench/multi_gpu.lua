-- Several GPUs of one machine:
--   peer copies: x:to("cuda:1") of 1 GiB of float32, each direction, in GB/s;
--   weak scaling: a chunked x * 2 + 1 and a chunked sum with one 1 GiB block per GPU,
--     on the first 1 .. G GPUs; efficiency = time on 1 GPU / time on g GPUs (1 is ideal);
--   strong scaling: examples/chunked_svd.lua's SVD (10000 x 1000 float64, TSQR) in
--     blocks of 10000 / (2 G) rows, placed on the first 1 .. G GPUs; speedup against 1 GPU.
-- Every time waits for every GPU. Prints one line per figure and "@@ key value" lines.
--   build/luda bench/multi_gpu.lua [--smoke]   (--smoke: small sizes; any number of GPUs)
local luda = require "luda"
local T = dofile("bench/timing.lua")

local smoke = arg and arg[1] == "--smoke"
local G = luda.cuda and luda.cuda.device_count() or 0
if G < 1 then
  print("no CUDA device: nothing to measure")
  return
end
local all = {}
for i = 0, G - 1 do all[#all + 1] = "cuda:" .. i end
local function first(g) return table.move(all, 1, g, 1, {}) end
local wait_all = T.every_gpu
local function figure(key, value, text)
  print(text)
  print(("@@ %s %.6g"):format(key, value))
end

local n = smoke and (1 << 20) or (1 << 28)  -- elements of float32 per block: 1 GiB
local gib = n * 4 / 2 ^ 30

if G >= 2 then
  local x0 = luda.random.random(n, "float32", { device = "cuda:0" })
  local x1 = x0:to("cuda:1")
  for _, c in ipairs({ { x0, "cuda:1", "0to1" }, { x1, "cuda:0", "1to0" } }) do
    local src, to, key = c[1], c[2], c[3]
    local ms = T.time(function() return src:to(to) end, 11, wait_all)
    figure("peer_copy_" .. key .. "_GBps", n * 4 / (ms * 1e-3) / 1e9,
      ("peer copy of %.2f GiB %s -> %s: %.3f ms, %.1f GB/s"):format(gib, src.device, to, ms, n * 4 / (ms * 1e-3) / 1e9))
  end
  local back = x1:to("cuda:0")
  assert(luda.all(luda.equal(back, x0)):item(), "peer copies changed the data")
  x0, x1, back = nil, nil, nil
end

local ops = {
  { "x2p1", "x * 2 + 1", function(c) return c * 2 + 1 end },
  { "sum", "sum", function(c) return luda.sum(c) end },
}
for _, op in ipairs(ops) do
  local key, what, f = op[1], op[2], op[3]
  local t1
  for g = 1, G do
    local c = luda.chunked.random({ g * n }, n, "float32", { devices = first(g), seed = 1 })
    local ms = T.time(function() return f(c) end, 11, wait_all)
    t1 = t1 or ms
    figure(("weak_%s_eff_%d"):format(key, g), t1 / ms,
      ("weak scaling, chunked %s, one %.2f GiB float32 block per GPU, %d GPU(s): %.3f ms, efficiency %.3f"):format(
        what, gib, g, ms, t1 / ms))
    c = nil
    collectgarbage()
  end
end

local m, k = smoke and 2000 or 10000, smoke and 100 or 1000
local a = luda.random.random({ m, k }, "float64", { seed = 7 })
local rows = m // (2 * G)
local _, s_ref = luda.linalg.svd(a, { full_matrices = false })
local t1
for g = 1, G do
  local ca = luda.chunked(a, { rows, k }, { devices = first(g) })
  local ms = T.time(function() return luda.linalg.svd(ca, { full_matrices = false }) end, 7, wait_all)
  local _, s = luda.linalg.svd(ca, { full_matrices = false })
  local err = luda.max(luda.abs(s:to(s_ref.device) - s_ref)):item() / s_ref[0]
  assert(err < 1e-10, ("chunked SVD on %d GPU(s): S off by %g"):format(g, err))
  t1 = t1 or ms
  figure(("strong_svd_speedup_%d"):format(g), t1 / ms,
    ("strong scaling, svd of %d x %d float64 in %d blocks of %d rows on %d GPU(s): %.2f ms, speedup %.2f"):format(
      m, k, 2 * G, rows, g, ms, t1 / ms))
end

-- Graphs on one GPU (bench/graphs.sh runs it with the rest):
--   the batched Sobel filter of examples/sobel_graph.lua at the poster's sizes, 64 images
--   of 246 x 300 and 64 of 600 x 600, eager and as a graph;
--   two independent long kernels, one after the other eagerly and as the two branches of
--   a graph: the graph's time against the sum of the two.
-- Prints one line per figure and "@@ key value" lines for scripts.
--   build/luda bench/graphs.lua [--smoke]      (--smoke: small sizes, any device)
local luda = require "luda"
local cuda = luda.cuda

local smoke = arg and arg[1] == "--smoke"

local time = dofile("bench/timing.lua").time

local batch = dofile("examples/sobel.lua").batch  -- run from the repository root

local sizes = smoke and { { 4, 40, 50 } } or { { 64, 246, 300 }, { 64, 600, 600 } }
for _, size in ipairs(sizes) do
  local count, h, w = size[1], size[2], size[3]
  local images = {}
  for i = 1, count do images[i] = luda.random.random({ h, w }):astype("float32") end
  local g = luda.graph(batch, table.unpack(images))
  local reps = smoke and 3 or 20
  local eager = time(function() return batch(table.unpack(images)) end, reps)
  local graph = time(function() return g(table.unpack(images)) end, reps)
  local a, b = { batch(table.unpack(images)) }, { g(table.unpack(images)) }
  for i = 1, count do assert(luda.not_equal(a[i], b[i]):sum():item() == 0, "image " .. i .. " differs") end
  print(("sobel %d images of %dx%d on %s: eager %.3f ms, graph %.3f ms (%.2fx), %d nodes"):format(
    count, h, w, luda.current_device().name, eager, graph, eager / graph, g:stats().nodes))
  print(("@@ sobel_%dx%d_eager_ms %.4f"):format(h, w, eager))
  print(("@@ sobel_%dx%d_graph_ms %.4f"):format(h, w, graph))
end

-- Two long kernels on arrays of their own: one block each, so that side by side they share
-- nothing but the GPU.
local spin = cuda.jit(function(out, steps)
  local i = cuda.grid(1)
  local v = i * 1.0
  for _ = 1, steps do v = v * 0.999999 + 1.0 end
  out[i] = v
end)
local steps = smoke and 1000 or 4000000
local p, q = luda.zeros(32, "float64"), luda.zeros(32, "float64")
local function both(x, y)
  spin[{ 1, 32 }](x, steps)
  spin[{ 1, 32 }](y, steps)
end
local one = time(function() spin[{ 1, 32 }](p, steps) end, 5)
local eager = time(function() both(p, q) end, 5)
local g = luda.graph(both, p, q)
assert(2 * g:stats().depth == g:stats().nodes, "the two kernels are not independent: " .. g:dot())
local graph = time(function() g(p, q) end, 5)
print(("two independent kernels of %.3f ms each: eager %.3f ms, graph %.3f ms (%.2f of their sum)"):format(
  one, eager, graph, graph / (2 * one)))
print(("@@ branch_ms %.4f\n@@ branches_eager_ms %.4f\n@@ branches_graph_ms %.4f"):format(one, eager, graph))

-- The batched Sobel filter of "Efficiently Executing NumPy on GPUs via the CUDAGraph API"
-- (Kotak, Kulkarni, Klöckner): for each image of a batch, the x and y gradients and their
-- magnitude, written as NumPy would write them, with slices and array arithmetic. Run
-- eagerly, each of the many small operations is a launch of its own, one after another;
-- recorded once with luda.graph, the batch is one graph whose images are independent
-- branches, replayed with one launch. Both are timed, and their results must be equal;
-- the first image is also checked against plain Lua.
--   build/luda examples/sobel_graph.lua [images [height [width]]]
-- Defaults: 64 images of 246 x 300 on a GPU, 8 on the cpu device.
local luda = require "luda"

local on_cpu = luda.current_device().kind == "cpu"
local count = tonumber(arg and arg[1]) or (on_cpu and 8 or 64)
local height = tonumber(arg and arg[2]) or 246
local width = tonumber(arg and arg[3]) or 300

-- The filter (examples/sobel.lua), found beside this script.
local sobel = dofile((arg and arg[0] and arg[0]:match("^(.*/)") or "") .. "sobel.lua")
local batch = sobel.batch

math.randomseed(2024)
local images = {}
for i = 1, count do
  local rows = {}
  for r = 1, height do
    local row = {}
    for c = 1, width do row[c] = math.random() end
    rows[r] = row
  end
  images[i] = luda.array(rows, "float32")
end

local function wait()
  if not on_cpu then luda.cuda.synchronize() end
end

-- Median time of `reps` runs of fn, in milliseconds.
local function time(fn, reps)
  fn()  -- compiles, and records the graph's first replay
  wait()
  local times = {}
  for k = 1, reps do
    local t0 = luda.clock()
    fn()
    wait()
    times[k] = (luda.clock() - t0) * 1e3
  end
  table.sort(times)
  return times[(reps + 1) // 2]
end

local g = luda.graph(batch, table.unpack(images))
local reps = on_cpu and 3 or 20
local eager_ms = time(function() return batch(table.unpack(images)) end, reps)
local graph_ms = time(function() return g(table.unpack(images)) end, reps)

-- The two agree element for element: the graph runs the same kernels.
local eager, replayed = { batch(table.unpack(images)) }, { g(table.unpack(images)) }
for i = 1, count do
  assert(luda.not_equal(eager[i], replayed[i]):sum():item() == 0, "image " .. i .. ": the graph and eager runs differ")
end

-- The first image's magnitude against plain Lua, at a few places (float32 arithmetic in
-- luda, float64 here).
local pixels = images[1]:totable()
local got = replayed[1]:totable()
local function p(r, c) return pixels[r][c] end
for _, at in ipairs({ { 2, 2 }, { height // 2, width // 3 }, { height - 1, width - 1 } }) do
  local r, c = at[1], at[2]
  local gx = (p(r - 1, c + 1) - p(r - 1, c - 1)) + 2 * (p(r, c + 1) - p(r, c - 1)) + (p(r + 1, c + 1) - p(r + 1, c - 1))
  local gy = (p(r + 1, c - 1) + 2 * p(r + 1, c) + p(r + 1, c + 1)) - (p(r - 1, c - 1) + 2 * p(r - 1, c) + p(r - 1, c + 1))
  local want, have = math.sqrt(gx * gx + gy * gy), got[r - 1][c - 1]
  assert(math.abs(have - want) <= 1e-5 * math.max(1, want), ("pixel (%d, %d): %g, plain Lua %g"):format(r, c, have, want))
end

-- The graph's independent branches: its nodes joined by edges, counted as components.
local nodes, root = g:nodes(), {}
local function find(i)
  while root[i] ~= i do i = root[i] end
  return i
end
for i, node in ipairs(nodes) do
  root[i] = i
  for _, j in ipairs(node.after) do root[find(j)] = find(i) end
end
local branches = 0
for i = 1, #nodes do if find(i) == i then branches = branches + 1 end end

local s = g:stats()
print(("sobel: %d images of %d x %d on %s"):format(count, height, width, luda.current_device().name))
print(("graph: %d nodes, %d edges, %d independent branches"):format(s.nodes, s.edges, branches))
print(("eager %.3f ms, graph %.3f ms (%.1fx)"):format(eager_ms, graph_ms, eager_ms / graph_ms))
print("the graph and eager results are equal, and the first image matches plain Lua")

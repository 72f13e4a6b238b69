-- Numba's histogram kernel in luda: a grid-stride loop puts each value into its bin with
-- cuda.atomic.add, so that threads hitting the same bin do not lose counts. Checked bin
-- by bin against a histogram computed on the host in plain Lua.
-- It runs on luda's default device (the first GPU, else the cpu; LUDA_DEVICE=cpu
-- chooses the cpu): its arrays are made there, and kernels run where their arrays are.
--   build/luda examples/histogram.lua
local luda = require "luda"
local cuda = luda.cuda

-- xmin and xmax are Lua numbers: weak, so they take x's float32. hist.shape[1] is the
-- number of bins (shape is a Lua sequence); math.floor gives an integer bin index, as in
-- Lua; values outside [xmin, xmax) fall in no bin.
local histogram = cuda.jit(function(x, xmin, xmax, hist)
  local nbins = hist.shape[1]
  local bin_width = (xmax - xmin) / nbins
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do
    local bin = math.floor((x[i] - xmin) / bin_width)
    if bin >= 0 and bin < nbins then
      cuda.atomic.add(hist, bin, 1)
    end
  end
end)

-- A bell shape (the sum of three uniforms) with tails past both ends of the range.
local n, nbins, xmin, xmax = 1000000, 64, -2.0, 2.0
local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
local xs = {}
for i = 1, n do
  xs[i] = f32((math.random() + math.random() + math.random() - 1.5) * 1.6)
end
local hist = luda.zeros(nbins, "int32")
histogram[{128, 256}](luda.array(xs, "float32"), xmin, xmax, hist)

-- The host histogram rounds every step to float32 as the device does (each rounding of
-- a float64 result of a float32 operation is exact), so the bins agree exactly.
local expected = {}
for b = 1, nbins do expected[b] = 0 end
local width = f32(f32(xmax - xmin) / nbins)
for i = 1, n do
  local bin = math.floor(f32(f32(xs[i] - xmin) / width))
  if bin >= 0 and bin < nbins then expected[bin + 1] = expected[bin + 1] + 1 end
end

local counts, inside = hist:totable(), 0
for b = 1, nbins do
  if counts[b] ~= expected[b] then
    error(("histogram: bin %d holds %d, the host histogram %d"):format(b - 1, counts[b], expected[b]))
  end
  inside = inside + counts[b]
end

-- A sideways picture: one row per four bins.
for b = 1, nbins, 4 do
  local c = counts[b] + counts[b + 1] + counts[b + 2] + counts[b + 3]
  print(("%6.2f %s"):format(xmin + (b - 1) * (xmax - xmin) / nbins, ("#"):rep(c * 200 // n)))
end
print(("histogram of %d values into %d bins matches the host histogram (%d in range)")
      :format(n, nbins, inside))

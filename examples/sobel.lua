-- The batched Sobel filter that examples/sobel_graph.lua and bench/graphs.lua run, as
-- NumPy would write it: slices and array arithmetic, many small operations per image.
--   local sobel = dofile("examples/sobel.lua")
--   local magnitude = sobel.filter(image)            -- one image's gradient magnitude
--   local m1, m2 = sobel.batch(image1, image2)       -- each image's, independent work
local luda = require "luda"

local M = {}

-- The gradient magnitude over the image's interior (the image less a border of one pixel).
function M.filter(image)
  local top, middle, bottom = image:slice("0:-2, :"), image:slice("1:-1, :"), image:slice("2:, :")
  local function left(rows) return rows:slice(":, 0:-2") end
  local function centre(rows) return rows:slice(":, 1:-1") end
  local function right(rows) return rows:slice(":, 2:") end
  local gx = (right(top) - left(top)) + 2 * (right(middle) - left(middle)) + (right(bottom) - left(bottom))
  local gy = (left(bottom) + 2 * centre(bottom) + right(bottom)) - (left(top) + 2 * centre(top) + right(top))
  return luda.sqrt(gx * gx + gy * gy)
end

-- One magnitude image per input image.
function M.batch(...)
  local out = {}
  for i, image in ipairs({ ... }) do out[i] = M.filter(image) end
  return table.unpack(out)
end

return M

-- void(float32, float32)
local function f(x, y)
  return luda.sum(x * y, 1)
end

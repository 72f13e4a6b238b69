-- void(float32[:], float32[:], float32[:])
local function hypot(x, y)
  x, y = math.abs(x), math.abs(y)
  local t = math.min(x, y)
  x = math.max(x, y)
  t = t / x
  return x * math.sqrt(1 + t * t)
end
local function hypot_kernel(x, y, out)
  local i = cuda.grid(1)
  if i < #out then out[i] = hypot(x[i], y[i]) end
end

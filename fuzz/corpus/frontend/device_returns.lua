-- void(float32[:])
local function f(x)
  if x > 0 then return x end
end
local function k(out)
  local i = cuda.grid(1)
  out[i] = f(out[i])
end

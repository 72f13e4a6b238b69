-- void(float32[:], int32[:])
local function k(x, n)
  local i = cuda.grid(1)
  x[i] = x[i] + x[i] * 2 + x[i] - 1 + x[i] / 3 + x[i] + x[i] + x[i] + x[i] + x[i] + x[i]
  n[i] = n[i] + n[i] + n[i] * n[i] + n[i] + n[i] - n[i] + n[i] + n[i]
  if x[i] > 0 and x[i] < 1 and n[i] > 0 and n[i] < 5 and x[i] ~= 0.5 then n[i] = 1 end
end

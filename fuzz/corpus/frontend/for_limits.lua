-- void(float64[:], int64[:])
local function k(x, n)
  local s = 0
  for i = 1, x[0] do s = s + i end
  for i = n[0], math.maxinteger, 3 do s = s + 1 end
  for i = 3, 0 / 0, -1 do s = s - 1 break end
  n[1] = s
end

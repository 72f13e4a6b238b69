-- void(uint64[:], uint64[:], uint64[:])
local function k(a, b, out)
  local i = cuda.grid(1)
  if i < #out then out[i] = a[i] // b[i] + a[i] % b[i] + (a[i] << b[i]) + (a[i] >> 70) end
end

-- void(int64[:], int32[:])
local function k(a, b)
  local i = cuda.grid(1)
  a[i] = a[i] // -1 + math.mininteger // -1 + math.mininteger % -1 + (1 << 64) + (1 >> -3)
  b[i] = b[i] // -1 + luda.int32(-2147483648) // luda.int32(-1) + b[i] * b[i]
end

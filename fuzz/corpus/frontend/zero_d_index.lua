-- void(float64[], float64[:])
local function k(a, out) out[0] = a[0] + #a end

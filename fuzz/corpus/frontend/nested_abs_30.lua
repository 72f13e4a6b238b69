-- void(float64[:])
local function k(out) out[0] = math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(math.abs(out[0])))))))))))))))))))))))))))))) end

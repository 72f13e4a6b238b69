-- void(float32[:])
local function f(x)
  if x > 0 then return x elseif x < -1 then return 1 end
end
local function k(out) out[0] = f(out[0]) end

-- A device function that returns a value on one path and lets control reach its end on
-- another (Lua would return nil there; C++ says "control reaches end of non-void function").
-- sig: void(float32[:])
-- expect:
-- tests/errors/device_function_missing_return.lua:15:1: type error: 'clamp_positive' returns a value (line 11) but can reach its end without one, when the 'if' at line 10 takes none of its branches (it has no 'else'): return a value on that path too (Lua would return nil, which a kernel cannot hold)
--     end
--     ^
local cuda = require("luda").cuda
local function clamp_positive(x)
  if x > 0 then
    return x
  elseif x < -10 then
    return -10
  end
end
return cuda.jit(function(out)
  local i = cuda.grid(1)
  out[i] = clamp_positive(out[i])
end)

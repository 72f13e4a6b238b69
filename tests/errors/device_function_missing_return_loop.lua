-- The only return is inside a loop: control reaches the end when the loop ends.
-- sig: void(int64[:])
-- expect:
-- tests/errors/device_function_missing_return_loop.lua:12:1: type error: 'first_set_bit' returns a value (line 10) but can reach its end without one, after the 'for' loop at line 9: return a value on that path too (Lua would return nil, which a kernel cannot hold)
--     end
--     ^
local cuda = require("luda").cuda
local function first_set_bit(v)
  for b = 0, 63 do
    if (v >> b) & 1 == 1 then return b end
  end
end
return cuda.jit(function(out)
  out[0] = first_set_bit(out[0])
end)

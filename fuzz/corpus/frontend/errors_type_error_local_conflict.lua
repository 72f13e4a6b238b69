-- void(float32[:])
-- A local assigned a bool and a number: the error names both lines.
-- sig: void(float32[:])
-- expect:
-- tests/errors/type_error_local_conflict.lua:11:5: type error: local 'flag' is bool (line 9) and cannot also hold float64
--     flag = 1.5
--     ^
local cuda = require("luda").cuda
return cuda.jit(function(out)
  local flag = true
  if out[0] > 0 then
    flag = 1.5
  end
  out[0] = 1
end)

-- void(float32[:])
-- A syntax error in a kernel given as source text (a file with one would not load).
-- sig: void(float32[:])
-- expect:
-- [string "function(out)..."]:2:12: syntax error: unexpected symbol near '='
--     out[0] = = 1
--              ^
local cuda = require("luda").cuda
return cuda.jit("function(out)\n  out[0] = = 1\nend")

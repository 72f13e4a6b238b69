-- float32(float32, float32)
-- vectorize: a signature with fewer parameters than the function has.
-- sig: float32(float32, float32)
-- expect:
-- tests/errors/kind_vectorize_signature_arity.lua:6: vectorize 'fn': the signature 'float32(float32)' has 1 parameter but the function takes 2
local luda = require("luda")
return luda.vectorize("float32(float32)", function(x, y)
  return x + y
end)

-- luda's elementwise functions (ufuncs) and arithmetic operators on chunked arrays
-- (docs/chunked.md), and c:astype, c:copy and c:clip: each block where it lives, or once
-- over the whole array where the blocks are views of one.
local luda = require "luda"
local internal = require "luda.internal"
local errors = require "luda.chunked.errors"
local array = require "luda.chunked.array"
local blockwise = require("luda.chunked.blockwise").blockwise

local raise, public = errors.raise, errors.public
local ARRAY_MT = internal.array_metatable
local Chunked, IMPL, methods = array.Chunked, array.IMPL, array.methods

-- A ufunc's arguments: the operands, and an options table (refused: blocks have no `out`).
local function ufunc(name)
  local f = luda[name]
  return public(function(...)
    local args = table.pack(...)
    if args.n > 0 and type(args[args.n]) == "table" and getmetatable(args[args.n]) == nil then
      raise("luda.%s: options (out=, stream=) are not taken with chunked operands", name)
    end
    if name == "clip" and args.n >= 2 and args[2] == nil and args[3] == nil then
      raise("luda.clip: give lo, hi or both; nil stands for no bound")
    end
    if name == "clip" and args.n == 3 and (args[2] == nil) ~= (args[3] == nil) then
      -- One bound (nil for none), as luda.clip takes it: the operands may hold no hole.
      local bound = args[2] == nil and args[3] or args[2]
      return blockwise(luda[args[2] == nil and "minimum" or "maximum"], { args[1], bound }, "luda.clip", 1, true)
    end
    return blockwise(f, { table.unpack(args, 1, args.n) }, "luda." .. name, 1, true)
  end)
end

local UFUNCS = {
  "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "remainder", "fmod", "power", "pow",
  "negative", "abs", "absolute", "sign", "square", "reciprocal", "fma", "minimum", "maximum", "fmin", "fmax", "clip",
  "where", "sqrt", "cbrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
  "asin", "acos", "arcsin", "arccos", "atan", "arctan", "atan2", "arctan2", "sinh", "cosh", "tanh", "asinh", "acosh",
  "atanh", "arcsinh", "arccosh", "arctanh", "hypot", "deg2rad", "radians", "rad2deg", "degrees", "erf", "erfc",
  "lgamma", "tgamma", "copysign", "nextafter", "floor", "ceil", "trunc", "rint", "isnan", "isinf", "isfinite",
  "real", "imag", "conj", "conjugate", "angle", "less", "greater", "less_equal", "greater_equal", "equal",
  "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not", "bitwise_invert", "left_shift",
  "right_shift", "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or", "logical_xor",
  "logical_not",
}

local chunked_ufunc = {}
for _, name in ipairs(UFUNCS) do
  if luda[name] then
    chunked_ufunc[name] = ufunc(name)
    IMPL[luda[name]] = chunked_ufunc[name]
  end
end

-- luda.round(x [, decimals]) and luda.around: decimals passes through.
for _, name in ipairs({ "round", "around" }) do
  if luda[name] then
    IMPL[luda[name]] = public(function(x, decimals)
      return blockwise(function(b) return luda[name](b, decimals or 0) end, { x }, "luda." .. name, 1, true)
    end)
  end
end

local OPERATORS = { __add = "add", __sub = "subtract", __mul = "multiply", __div = "divide", __idiv = "floor_divide",
                    __mod = "mod", __pow = "power" }
for mm, name in pairs(OPERATORS) do
  Chunked[mm] = chunked_ufunc[name]
  IMPL[ARRAY_MT[mm]] = chunked_ufunc[name]  -- array + chunked: the array's metamethod defers
end
Chunked.__unm = function(c) return chunked_ufunc.negative(c) end
IMPL[ARRAY_MT.__unm] = Chunked.__unm

methods.astype = public(function(c, dtype)
  return blockwise(function(b) return b:astype(dtype) end, { c }, "astype", 1, true)
end)
methods.copy = public(function(c)
  return blockwise(function(b) return b:copy() end, { c }, "copy", 1, true)
end)
methods.clip = public(function(c, lo, hi) return chunked_ufunc.clip(c, lo, hi) end)

return chunked_ufunc

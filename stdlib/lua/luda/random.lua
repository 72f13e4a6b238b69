-- luda.random's Generator: NumPy's numpy.random.Generator over a Philox4x32-10 stream
-- (stdlib/random_bindings.cpp, ops/random.h), and the module's functions of the same
-- names, which draw from the module's stream (the one luda.random.random and
-- luda.random.seed use). docs/api.md "luda.random" is the contract.
--
-- A Generator holds a stream: a key (the seed) and a counter. A draw of n values reads
-- stream elements counter .. counter + n - 1, each its own Philox sub-stream, and moves
-- the counter past them, so successive draws never overlap and every value depends only
-- on the seed and its position: the same on every device, thread count and block split.
local luda = require "luda"
local internal = require "luda.internal"
local errors = require "luda.chunked.errors"

local raise, public = errors.raise, errors.public
local draw, new_stream, module_stream, state = internal.random_draw, internal.random_stream,
  internal.random_module_stream, internal.random_state
local is_array = require("luda.chunked.devices").is_array

local Generator = { __name = "Generator" }
local methods = {}
Generator.__index = methods
Generator.__tostring = function(g)
  local key, counter = state(g._stream)
  return ("Generator(Philox4x32-10, key=%d, counter=%d)"):format(key, counter)
end

local function is_generator(v) return getmetatable(v) == Generator end
local function of_stream(stream) return setmetatable({ _stream = stream }, Generator) end

-- ---- arguments -------------------------------------------------------------------------------

-- Whether v is the trailing options table: a plain table with a string key ({device=});
-- a table of numbers is a shape.
local function is_options(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil then return false end
  for k in pairs(v) do
    if type(k) == "string" then return true end
  end
  return false
end

-- The positional arguments (at most `count`) and the options, checked: {device=} only.
local function split(who, count, ...)
  local args = table.pack(...)
  local options
  if args.n > 0 and is_options(args[args.n]) then
    options = args[args.n]
    args[args.n] = nil
    args.n = args.n - 1
  end
  if args.n > count then raise("%s takes at most %d arguments and an options table, got %d", who, count, args.n) end
  options = options or {}
  for k in pairs(options) do
    if k ~= "device" then raise("%s: unknown option '%s' (options: device)", who, tostring(k)) end
  end
  return args, { device = options.device }
end

local function number_arg(who, name, v, default)
  if v == nil then return default end
  if type(v) ~= "number" then
    raise("%s: %s must be a number, got %s (array parameters are not supported)", who, name, type(v))
  end
  return v
end

local function integer_arg(who, name, v, default)
  if v == nil then return default end
  local i = type(v) == "number" and math.tointeger(v)
  if not i then raise("%s: %s must be an integer, got %s", who, name, tostring(v)) end
  return i
end

local function size_arg(who, size)
  if size == nil or type(size) == "number" or (type(size) == "table" and getmetatable(size) == nil) then return size end
  raise("%s: size must be nil, a number or a table of numbers, got %s", who, type(size))
end

-- The number of elements of a size (nil: one).
local function count_of(size)
  if size == nil then return 1 end
  if type(size) == "number" then return size end
  local n = 1
  for _, d in ipairs(size) do n = n * d end
  return n
end

-- ---- the distributions -----------------------------------------------------------------------

-- g:random([size] [, dtype] [, {device=}]): uniform in [0, 1).
function methods.random(g, ...)
  local a, o = split("random", 2, ...)
  return draw(g._stream, "random", size_arg("random", a[1]), a[2], o)
end

-- g:uniform([low=0] [, high=1] [, size] [, {device=}]): low + (high - low) U, float64.
function methods.uniform(g, ...)
  local a, o = split("uniform", 3, ...)
  local low, high = number_arg("uniform", "low", a[1], 0.0), number_arg("uniform", "high", a[2], 1.0)
  return draw(g._stream, "uniform", size_arg("uniform", a[3]), nil, o, low, high)
end

-- g:normal([loc=0] [, scale=1] [, size] [, {device=}]).
function methods.normal(g, ...)
  local a, o = split("normal", 3, ...)
  local loc, scale = number_arg("normal", "loc", a[1], 0.0), number_arg("normal", "scale", a[2], 1.0)
  if scale < 0 then raise("normal: scale < 0") end
  return draw(g._stream, "normal", size_arg("normal", a[3]), nil, o, loc, scale)
end

-- g:standard_normal([size] [, dtype] [, {device=}]).
function methods.standard_normal(g, ...)
  local a, o = split("standard_normal", 2, ...)
  return draw(g._stream, "standard_normal", size_arg("standard_normal", a[1]), a[2], o, 0.0, 1.0)
end

-- g:exponential([scale=1] [, size] [, {device=}]).
function methods.exponential(g, ...)
  local a, o = split("exponential", 2, ...)
  local scale = number_arg("exponential", "scale", a[1], 1.0)
  if scale < 0 then raise("exponential: scale < 0") end
  return draw(g._stream, "exponential", size_arg("exponential", a[2]), nil, o, scale)
end

-- g:standard_exponential([size] [, dtype] [, {device=}]).
function methods.standard_exponential(g, ...)
  local a, o = split("standard_exponential", 2, ...)
  return draw(g._stream, "standard_exponential", size_arg("standard_exponential", a[1]), a[2], o, 1.0)
end

-- g:integers(low [, high] [, size] [, dtype] [, endpoint] [, {device=}]): integers in
-- [low, high), or [low, high] with endpoint; integers(high) is [0, high). int64 by default.
function methods.integers(g, ...)
  local a, o = split("integers", 5, ...)
  local low, high = integer_arg("integers", "low", a[1]), integer_arg("integers", "high", a[2])
  if low == nil then raise("integers: low must be given") end
  local endpoint = a[5]
  if endpoint ~= nil and type(endpoint) ~= "boolean" then raise("integers: endpoint must be a boolean, got %s", type(endpoint)) end
  if high == nil then
    low, high = 0, low
    if not endpoint and high <= 0 then raise("integers: high <= 0") end
    if endpoint and high < 0 then raise("integers: high < 0") end
  end
  if endpoint then
    if low > high then raise("integers: low > high") end
  else
    if low >= high then raise("integers: low >= high") end
    high = high - 1
  end
  return draw(g._stream, "integers", size_arg("integers", a[3]), a[4], o, low, high)
end

-- g:poisson([lam=1] [, size] [, {device=}]): int64.
function methods.poisson(g, ...)
  local a, o = split("poisson", 2, ...)
  local lam = number_arg("poisson", "lam", a[1], 1.0)
  return draw(g._stream, "poisson", size_arg("poisson", a[2]), nil, o, lam)
end

-- g:binomial(n, p [, size] [, {device=}]): int64.
function methods.binomial(g, ...)
  local a, o = split("binomial", 3, ...)
  local n = integer_arg("binomial", "n", a[1])
  local p = number_arg("binomial", "p", a[2])
  if n == nil or p == nil then raise("binomial: n and p must be given") end
  return draw(g._stream, "binomial", size_arg("binomial", a[3]), nil, o, n, p)
end

-- ---- permutations and sampling ---------------------------------------------------------------

-- A random permutation of 0 .. n-1 (int64, on `device`): the order of n random 64-bit keys
-- (a stable sort, so the same on every device).
local function order(g, n, device)
  local keys = draw(g._stream, "bits", n, "int64", { device = device })
  return luda.argsort(keys)
end

local function as_array(who, x, device)
  if is_array(x) then return x end
  if type(x) == "table" then return luda.array(x, { device = device }) end
  raise("%s: x must be an integer or an array, got %s", who, type(x))
end

-- g:permutation(x [, {device=}]): a permuted arange(x) for an integer, else a permuted copy
-- of x along its first axis.
function methods.permutation(g, ...)
  local a, o = split("permutation", 1, ...)
  local x = a[1]
  if type(x) == "number" then
    local n = integer_arg("permutation", "x", x)
    if n < 0 then raise("permutation: negative dimensions are not allowed") end
    return order(g, n, o.device)
  end
  x = as_array("permutation", x, o.device)
  if #x.shape == 0 then raise("permutation: axis 0 is out of bounds for array of dimension 0") end
  return x:take(order(g, x.shape[1], x.device), 1)
end

-- g:shuffle(x): x permuted along its first axis, in place.
function methods.shuffle(g, x)
  if not is_array(x) then raise("shuffle: x must be an array, got %s", type(x)) end
  if #x.shape == 0 then raise("shuffle: x must have at least one axis (a 0-d array has no order)") end
  luda.copyto(x, x:take(order(g, x.shape[1], x.device), 1))
end

-- The values of p as a Lua sequence.
local function probabilities(p)
  if is_array(p) then
    if #p.shape ~= 1 then raise("choice: p must be 1-dimensional") end
    return p:astype("float64"):totable()
  end
  if type(p) ~= "table" then raise("choice: p must be an array or a table of numbers, got %s", type(p)) end
  return p
end

-- The first index of cdf whose value exceeds u (NumPy's searchsorted(side='right')).
local function search(cdf, u)
  local lo, hi = 1, #cdf
  while lo < hi do
    local mid = (lo + hi) // 2
    if cdf[mid] > u then hi = mid else lo = mid + 1 end
  end
  return lo - 1
end

-- g:choice(a [, size] [, replace=true] [, p] [, {device=}]): a sample of arange(a) (an
-- integer) or of a's elements (a 1-d array), with p the probabilities of each.
function methods.choice(g, ...)
  local a, o = split("choice", 4, ...)
  local pool, size, replace, p = a[1], size_arg("choice", a[2]), a[3], a[4]
  if replace == nil then replace = true end
  if type(replace) ~= "boolean" then raise("choice: replace must be a boolean, got %s", type(replace)) end
  local n, device
  if type(pool) == "number" then
    n = integer_arg("choice", "a", pool)
    device = o.device
  else
    pool = as_array("choice", pool, o.device)
    if #pool.shape ~= 1 then raise("choice: a must be 1-dimensional or an integer") end
    n, device = pool.shape[1], pool.device
  end
  local k = count_of(size)
  if n <= 0 and k > 0 then
    if type(pool) == "number" then raise("choice: a must be a positive integer unless no samples are taken") end
    raise("choice: a cannot be empty unless no samples are taken")
  end
  local w
  if p ~= nil then
    w = probabilities(p)
    if #w ~= n then raise("choice: a and p must have same size") end
    local sum = 0.0
    for i = 1, n do
      if type(w[i]) ~= "number" then raise("choice: p must hold numbers") end
      if not (w[i] >= 0) then raise("choice: probabilities are not non-negative") end
      sum = sum + w[i]
    end
    if not (math.abs(sum - 1) <= 1.4901161193847656e-08) then raise("choice: probabilities do not sum to 1") end
  end
  if not replace and k > n then raise("choice: Cannot take a larger sample than population when replace is False") end
  local shape = size == nil and {} or (type(size) == "number" and { size } or size)
  local idx
  if k == 0 then
    idx = luda.zeros(shape, "int64", { device = device })
  elseif replace and not w then
    idx = draw(g._stream, "integers", size, "int64", { device = device }, 0, n - 1)
  elseif replace then
    -- Inverse CDF on the host: the uniforms are drawn on the device (the same bits on each),
    -- the cumulative sums and their search are exact host arithmetic in a fixed order.
    local cdf, acc = {}, 0.0
    for i = 1, n do
      acc = acc + w[i]
      cdf[i] = acc
    end
    for i = 1, n do cdf[i] = cdf[i] / acc end
    local u = draw(g._stream, "random", k, "float64", { device = device }):totable()
    local out = {}
    for i = 1, k do out[i] = search(cdf, u[i]) end
    idx = luda.array(out, "int64", { device = device }):reshape(shape)
  else
    local keys
    if w then
      local nonzero = 0
      for i = 1, n do if w[i] > 0 then nonzero = nonzero + 1 end end
      if nonzero < k then raise("choice: Fewer non-zero entries in p than size") end
      -- Efraimidis and Spirakis: the k smallest of E_i / p_i, E_i standard exponential,
      -- are a sample without replacement in proportion to p.
      keys = draw(g._stream, "standard_exponential", n, "float64", { device = device }, 1.0) /
        luda.array(w, "float64", { device = device })
    else
      keys = draw(g._stream, "bits", n, "int64", { device = device })
    end
    idx = luda.argsort(keys):slice({ 0, k }):copy():reshape(shape)
  end
  if type(pool) == "number" then return idx end
  return pool:take(idx)
end

-- ---- the module ------------------------------------------------------------------------------

local M = luda.random

-- luda.random.default_rng([seed]): a Generator at seed (any Lua integer; from the OS when
-- nil); a Generator is given back as it is.
M.default_rng = public(function(seed)
  if is_generator(seed) then return seed end
  if seed ~= nil and not math.tointeger(seed) then
    raise("default_rng: seed must be an integer or nil, got %s", type(seed) == "number" and tostring(seed) or type(seed))
  end
  return of_stream(new_stream(seed and math.tointeger(seed)))
end)

for name, f in pairs(methods) do methods[name] = public(f) end

-- The module's functions: the methods of the module's generator, whose stream is the one
-- luda.random.random draws from and luda.random.seed restarts.
local module_generator = of_stream(module_stream())
for _, name in ipairs({ "uniform", "normal", "standard_normal", "exponential", "standard_exponential", "integers",
  "poisson", "binomial", "choice", "permutation", "shuffle" }) do
  local method = methods[name]
  M[name] = function(...) return method(module_generator, ...) end
end

return { Generator = Generator, is_generator = is_generator }

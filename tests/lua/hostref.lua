-- Host references for the kernel-kind and array-math specs: plain-Lua arrays (a shape and
-- the elements in C order, float64 or Lua integers), NumPy's broadcasting and reductions
-- written out in Lua, and comparisons of a device result with a reference that say which
-- element differs. Independent of luda's kernels: the only luda calls are luda.array /
-- luda.empty (to make inputs) and x:totable() (to read results).
local luda = require "luda"
local support = require "support"

local M = {}

local function size_of(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end
M.size_of = size_of

-- A host array from a nested table (or a number: 0-d). `shape` is needed where the table
-- cannot say it (an empty array of shape {2, 0} reads back as {{}, {}}, {0, 3} as {}).
function M.of(t, shape)
  if type(t) ~= "table" then return { shape = {}, data = { t } } end
  if not shape then
    shape = {}
    local v = t
    while type(v) == "table" do
      shape[#shape + 1] = #v
      v = v[1]
    end
  end
  local data = {}
  local function walk(x, d)
    if d > #shape then
      data[#data + 1] = x
    else
      for i = 1, shape[d] do walk(x[i], d + 1) end
    end
  end
  if size_of(shape) > 0 then walk(t, 1) end
  return { shape = shape, data = data }
end

-- The host array of an ndarray's elements (a copy through x:totable()).
function M.read(x) return M.of(x:totable(), x.shape) end

-- A host array of `shape` filled by gen(k) (k: 1-based flat position).
function M.fill(shape, gen)
  local data = {}
  for k = 1, size_of(shape) do data[k] = gen(k) end
  return { shape = shape, data = data }
end

-- The nested table of a host array (a number for 0-d), as x:totable() gives.
function M.nested(h)
  if #h.shape == 0 then return h.data[1] end
  local k = 0
  local function build(d)
    local t = {}
    for i = 1, h.shape[d] do
      if d == #h.shape then
        k = k + 1
        t[i] = h.data[k]
      else
        t[i] = build(d + 1)
      end
    end
    return t
  end
  return build(1)
end

-- The ndarray of a host array, on the current device.
function M.to_array(h, dtype)
  if size_of(h.shape) == 0 then return luda.empty(h.shape, dtype) end
  return luda.array(M.nested(h), dtype)
end

-- Random host arrays: uniform floats in [lo, hi), integers in [lo, hi]. `round` applies a
-- rounding (support.f32 for float32 data) so the host keeps exactly what the device holds.
function M.uniform(shape, lo, hi, round)
  return M.fill(shape, function()
    local v = lo + (hi - lo) * math.random()
    return round and round(v) or v
  end)
end
function M.integers(shape, lo, hi) return M.fill(shape, function() return math.random(lo, hi) end) end

-- Random data of a dtype: float32 values already rounded to float32; integers over the
-- dtype's whole range for the narrow ones (so wrapping arithmetic is exercised), a
-- moderate range for int64 and floats. `lo`, `hi` override the range.
local INT_RANGE = {
  int8 = { -128, 127 }, uint8 = { 0, 255 }, int16 = { -32768, 32767 }, uint16 = { 0, 65535 },
  int32 = { -(1 << 31), (1 << 31) - 1 }, uint32 = { 0, (1 << 32) - 1 }, int64 = { -(1 << 40), 1 << 40 },
  uint64 = { 0, 1 << 40 },
}
function M.random(dtype, shape, lo, hi)
  if dtype == "bool" then return M.fill(shape, function() return math.random() < 0.5 end) end
  if INT_RANGE[dtype] then
    return M.integers(shape, lo or INT_RANGE[dtype][1], hi or INT_RANGE[dtype][2])
  end
  return M.uniform(shape, lo or -100, hi or 100, dtype == "float32" and support.f32 or nil)
end

-- Arrays of random data in every layout a kernel must handle, each as
-- { name, array (on the current device) }: contiguous, transposed, strided slices with a
-- negative step, size-1 axes, 0-d, and empty. The host reference of each is M.read(array).
function M.layouts(dtype, lo, hi)
  local function make(shape) return M.to_array(M.random(dtype, shape, lo, hi), dtype) end
  return {
    { "contiguous 4x5", make({ 4, 5 }) },
    { "transposed 6x3 (.T)", make({ 3, 6 }).T },
    { "strided slice ::2, 1::3 of 7x10", make({ 7, 10 }):slice("::2, 1::3") },
    { "reversed ::-1 of 9", make({ 9 }):slice("::-1") },
    { "size-1 axes 1x5x1", make({ 1, 5, 1 }) },
    { "0-d", make({}) },
    { "empty 0", luda.empty({ 0 }, dtype) },
    { "empty 3x0", luda.empty({ 3, 0 }, dtype) },
  }
end

-- Pairs of shapes that broadcast, with what they give.
M.BROADCASTS = {
  { { 4, 5 }, { 4, 5 } },
  { { 3, 1, 4 }, { 5, 1 } },
  { { 4, 5 }, {} },
  { { 1 }, { 6 } },
  { { 2, 0 }, { 1 } },
  { { 6, 1 }, { 1, 7 } },
}

-- NumPy's broadcast shape of several shapes; nil and a message when they do not broadcast.
function M.broadcast_shape(...)
  local shapes, nd = { ... }, 0
  for _, s in ipairs(shapes) do nd = math.max(nd, #s) end
  local out = {}
  for k = 1, nd do
    local d = 1
    for _, s in ipairs(shapes) do
      local v = s[#s - nd + k] or 1
      if v ~= 1 then
        if d ~= 1 and d ~= v then return nil, "shapes do not broadcast" end
        d = v
      end
    end
    out[k] = d
  end
  return out
end

-- The flat (1-based) position in `h` of the element at 0-based multi-index `idx` of the
-- broadcast shape (size-1 and missing leading axes repeat).
local function broadcast_pos(h, idx)
  local nd, pos = #h.shape, 0
  local off = #idx - nd
  for d = 1, nd do
    local i = h.shape[d] == 1 and 0 or idx[off + d]
    pos = pos * h.shape[d] + i
  end
  return pos + 1
end

-- The 0-based multi-index of flat position k (1-based) in `shape`.
local function unflatten(shape, k)
  local idx, r = {}, k - 1
  for d = #shape, 1, -1 do
    idx[d] = r % shape[d]
    r = r // shape[d]
  end
  return idx
end
M.unflatten = unflatten

-- fn applied element by element over broadcast arguments (host arrays or Lua numbers),
-- as a ufunc does. fn gets the elements (nothing else: math.log(x) stays one-argument).
function M.map(fn, ...)
  local args, shapes = table.pack(...), {}
  for i = 1, args.n do
    if type(args[i]) == "table" then shapes[#shapes + 1] = args[i].shape end
  end
  local shape = assert(M.broadcast_shape(table.unpack(shapes)))
  local data, vals = {}, {}
  for k = 1, size_of(shape) do
    local idx = unflatten(shape, k)
    for i = 1, args.n do
      local a = args[i]
      if type(a) == "table" then vals[i] = a.data[broadcast_pos(a, idx)] else vals[i] = a end
    end
    data[k] = fn(table.unpack(vals, 1, args.n))
  end
  return { shape = shape, data = data }
end

-- Normalized 1-based axes of an ndim-d array: nil (all), a number or a list; negative
-- from the end.
local function axis_set(ndim, axes)
  local set = {}
  if axes == nil then
    for d = 1, ndim do set[d] = true end
  else
    if type(axes) == "number" then axes = { axes } end
    for _, a in ipairs(axes) do set[a < 0 and ndim + 1 + a or a] = true end
  end
  return set
end

-- A reduction of h over `axes` (as above): each output element folds the elements of its
-- group in C order with step(acc, v, pos) from init() (pos: the 0-based position of v
-- within its group), then finish(acc, count) (default: acc). keepdims keeps the reduced
-- axes with size 1.
function M.reduce(h, axes, keepdims, init, step, finish)
  local set, shape, oshape = axis_set(#h.shape, axes), h.shape, {}
  for d = 1, #shape do
    if not set[d] then oshape[#oshape + 1] = shape[d] elseif keepdims then oshape[#oshape + 1] = 1 end
  end
  local n_out = size_of(oshape)
  local acc, count = {}, {}
  for o = 1, n_out do acc[o], count[o] = init(), 0 end
  for k = 1, size_of(shape) do
    local idx, o = unflatten(shape, k), 0
    for d = 1, #shape do
      if not set[d] then o = o * shape[d] + idx[d] elseif keepdims then o = o * 1 end
    end
    o = o + 1
    acc[o] = step(acc[o], h.data[k], count[o])
    count[o] = count[o] + 1
  end
  for o = 1, n_out do acc[o] = finish and finish(acc[o], count[o]) or acc[o] end
  return { shape = oshape, data = acc }
end

function M.sum(h, axes, keepdims)
  return M.reduce(h, axes, keepdims, function() return 0 end, function(a, v) return a + v end)
end

-- The sum of |x| per output: the scale a float reduction's rounding error is measured by.
function M.abs_sum(h, axes, keepdims)
  return M.reduce(h, axes, keepdims, function() return 0 end, function(a, v) return a + math.abs(v) end)
end

-- Wraps an integer into a signed or unsigned integer dtype of `bits` bits (C's
-- conversion of an out-of-range result, what the device's wrapping arithmetic gives).
function M.wrap(v, bits, unsigned)
  if bits == 64 then return v end
  local m = 1 << bits
  v = v % m
  if not unsigned and v >= m // 2 then v = v - m end
  return v
end

-- The width of each integer dtype.
M.BITS = { int8 = 8, int16 = 16, int32 = 32, int64 = 64, uint8 = 8, uint16 = 16, uint32 = 32, uint64 = 64 }

-- A value computed exactly in Lua, brought into `dtype`: float32 rounds, ints wrap.
function M.in_dtype(dtype, v)
  if dtype == "float32" then return support.f32(v) end
  if M.BITS[dtype] then return M.wrap(v, M.BITS[dtype], dtype:sub(1, 1) == "u") end
  return v
end

local function isnan(v) return v ~= v end

-- One float32 ulp at the magnitude of v (the spacing of float32 numbers there).
function M.ulp32(v)
  v = math.abs(v)
  if v < 2 ^ -126 then return 2 ^ -149 end
  return 2 ^ (math.floor(math.log(v, 2)) - 23)
end

local function show(v)
  if math.type(v) == "float" then return string.format("%.17g", v) end
  return tostring(v)
end

local function describe_index(shape, k)
  if #shape == 0 then return "the 0-d value" end
  return "element (" .. table.concat(unflatten(shape, k), ", ") .. ")"
end

-- Compares an ndarray (or a Lua number, for a scalar result) with the host array
-- `expected`: the same shape and, per element, `ok(got, want, k)`. NaN equals NaN.
-- Raises naming the first element that differs.
function M.check(actual, expected, ok, what)
  local got
  if type(actual) == "number" or type(actual) == "boolean" then
    got = { shape = {}, data = { actual } }
  else
    got = M.read(actual)
  end
  local function shape_text(s) return "(" .. table.concat(s, ", ") .. ")" end
  if shape_text(got.shape) ~= shape_text(expected.shape) then
    error(("%sshape %s, expected %s"):format(what and (what .. ": ") or "", shape_text(got.shape),
                                             shape_text(expected.shape)), 2)
  end
  for k = 1, #expected.data do
    local g, w = got.data[k], expected.data[k]
    local same = (isnan(g) and isnan(w)) or (not isnan(g) and not isnan(w) and ok(g, w, k))
    if not same then
      error(("%s%s is %s, expected %s"):format(what and (what .. ": ") or "", describe_index(expected.shape, k),
                                               show(g), show(w)), 2)
    end
  end
end

-- Exact equality (integers, booleans, and float results computed exactly).
function M.exact(g, w) return g == w end

-- Equal after rounding the float64 reference to float32 (one correctly rounded float32
-- operation on float32 inputs).
function M.f32_exact(g, w) return g == support.f32(w) or (math.huge == math.abs(w) and g == w) end

-- Within `ulps` float32 ulps of the float64 reference, or within `abs` (for results that
-- cancel to near zero).
function M.near32(ulps, abs)
  return function(g, w)
    if g == w then return true end
    return math.abs(g - w) <= ulps * M.ulp32(w) or math.abs(g - w) <= (abs or 0)
  end
end

-- Within a relative `rel` (of |w|, at least `floor`) of the reference.
function M.rel(rel, floor)
  return function(g, w)
    if g == w then return true end
    return math.abs(g - w) <= rel * math.max(math.abs(w), floor or 0)
  end
end

-- Within tolerance tol(k) of element k (a per-element bound, e.g. from abs_sum).
function M.within(bound)
  return function(g, w, k) return g == w or math.abs(g - w) <= bound(k) end
end

-- Checks that fn raises exactly `message`, located at the line fn is defined on (write fn
-- on one line: the luda call inside it raises from there, and the message starts with
-- that "file:line: ").
function M.raises(message, fn)
  local info = debug.getinfo(fn, "S")
  local want = info.short_src .. ":" .. info.linedefined .. ": " .. message
  local got = support.error_of(fn)
  if got ~= want then
    error(("expected the error:\n%s\n--- but it was:\n%s"):format(want, tostring(got)), 2)
  end
end

-- An element read back from an array as {re, im}: a complex typed scalar's parts, a
-- real value and 0 (a boolean as 1 or 0).
function M.parts(v)
  if type(v) == "userdata" then
    if v.dtype:match("complex") then return { v.real, v.imag } end
    return M.parts(v:value())
  end
  if type(v) == "boolean" then return { v and 1 or 0, 0 } end
  return { v, 0 }
end

return M

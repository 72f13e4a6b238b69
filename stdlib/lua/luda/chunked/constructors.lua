-- The chunked arrays luda.chunked makes (docs/chunked.md): luda.chunked(x, chunks) of an
-- array, and luda.chunked.zeros, ones, empty, full, random and arange, whose blocks are
-- made where they live.
local luda = require "luda"
local internal = require "luda.internal"
local errors = require "luda.chunked.errors"
local grid = require "luda.chunked.grid"
local array = require "luda.chunked.array"
local R = require "luda.chunked.ranks"

local raise, public = errors.raise, errors.public
local block_shape, copy, normalize_chunks, numblocks_of, offsets_of, placement, positions, ranges =
  grid.block_shape, grid.copy, grid.normalize_chunks, grid.numblocks_of, grid.offsets_of, grid.placement,
  grid.positions, grid.ranges
local is_array = require("luda.chunked.devices").is_array
local read_devices = require("luda.chunked.devices").read_devices
local to = require("luda.chunked.devices").to
local is_chunked, make, of_base = array.is_chunked, array.make, array.of_base

local M = {}

-- luda.chunked(x, chunks [, {devices=}]): x's blocks, each a view of x where it stays on
-- x's device, else a copy on its device.
local function from_array(x, chunks, options, who)
  who = who or "luda.chunked"
  if is_chunked(x) then x = x:compute() end
  if not is_array(x) then
    local ok, a = pcall(luda.array, x)
    if not ok then raise("%s: x must be an array (or what luda.array takes), got %s", who, type(x)) end
    x = a
  end
  if options ~= nil and type(options) ~= "table" then raise("%s: options must be a table, got %s", who, type(options)) end
  options = options or {}
  for k in pairs(options) do
    if k ~= "devices" and k ~= "distributed" then
      raise("%s: unknown option '%s' (options: devices, distributed)", who, tostring(k))
    end
  end
  local shape = x.shape
  local c = normalize_chunks(chunks, shape, who)
  local devices = read_devices(options.devices, who)
  local off, nb = offsets_of(c), numblocks_of(c)
  local blocks = {}
  local all = positions(nb)
  local owners, where
  if options.distributed then owners, where = R.place(#all, devices) end
  local views = not owners  -- every block a view of x
  for k, g in ipairs(all) do
    local device  -- nil: a block of another rank
    if owners then device = where[k] else device = placement(k - 1, #all, devices) end
    if device then
      local view = #shape == 0 and x or x:slice(table.unpack(ranges(c, off, g)))
      blocks[k] = to(view, device)
      views = views and blocks[k].device == x.device
    else
      blocks[k] = false
    end
  end
  return make(shape, x.dtype, c, blocks, devices, owners, views and x or nil)
end

-- Blocks made where they live: maker(block_shape, device, ranges) for each. Where `whole`
-- and every block goes to one device, one array of the whole shape made by the maker, of
-- which the blocks are views.
local function build(shape, chunks, options, who, maker, whole)
  if type(shape) == "number" then shape = { shape } end
  if type(shape) ~= "table" then raise("%s: shape must be a number or a table of them, got %s", who, type(shape)) end
  options = options or {}
  local c = normalize_chunks(chunks, shape, who)
  local devices = read_devices(options.devices, who)
  local off, nb = offsets_of(c), numblocks_of(c)
  local all = positions(nb)
  local owners, where
  if options.distributed then owners, where = R.place(#all, devices) end
  if whole and not owners and #devices == 1 then
    local r = {}
    for a = 1, #shape do r[a] = { 0, shape[a] } end
    return of_base(maker(copy(shape), devices[1], r), c, devices)
  end
  local blocks, dtype = {}, nil
  for k, g in ipairs(all) do
    local device  -- nil: a block of another rank
    if owners then device = where[k] else device = placement(k - 1, #all, devices) end
    blocks[k] = device and maker(block_shape(c, g), device, ranges(c, off, g)) or false
    dtype = dtype or (blocks[k] and blocks[k].dtype)
  end
  return make(copy(shape), dtype, c, blocks, devices, owners)
end

local function constructor(name, fill)
  return public(function(shape, chunks, ...)
    local args = table.pack(...)
    local dtype, options = nil, nil
    for i = 1, args.n do
      if type(args[i]) == "table" and getmetatable(args[i]) == nil then options = args[i]
      elseif args[i] ~= nil then dtype = args[i] end
    end
    local c = build(shape, chunks, options, "luda.chunked." .. name, function(s, device)
      if fill == nil then return luda[name](s, dtype or "float64", { device = device }) end
      return luda.full(s, fill, dtype or "float64", { device = device })
    end, true)
    rawset(c, "_dtype", c._dtype or (dtype or "float64"))
    return c
  end)
end

M.zeros = constructor("zeros")
M.ones = constructor("ones")
M.empty = constructor("empty")
M.full = public(function(shape, chunks, value, dtype, options)
  if type(dtype) == "table" then dtype, options = nil, dtype end
  local c = build(shape, chunks, options, "luda.chunked.full", function(s, device)
    if dtype then return luda.full(s, value, dtype, { device = device }) end
    return luda.full(s, value, { device = device })
  end, true)
  return c
end)

-- luda.chunked.random(shape, chunks [, dtype] [, {devices=, seed=}]): blocks of uniform
-- values in [0, 1), each drawn at its place in the whole array's draw from the module's
-- stream (or the stream of `seed`, from its start), so the values are luda.random.random's
-- for the same stream whatever the chunks; the module's stream then moves past them all.
-- A block's elements sit in the stream at offset + sum of idx_a * strides[a] (luda.random's
-- placement): its axes of extent 1 are dropped and each axis it spans whole is merged into
-- the axis before.
local MAX_PLACE_AXES = 4  -- ops/random.h's kMaxPlacementAxes
local function stream_place(shape, r)
  local strides, n = {}, 1
  for a = #shape, 1, -1 do
    strides[a] = n
    n = n * shape[a]
  end
  local offset, extents, steps = 0, {}, {}
  for a = 1, #shape do
    local lo, hi = r[a][1], r[a][2]
    offset = offset + lo * strides[a]
    local e = hi - lo
    if e ~= 1 then
      local last = #extents
      if last > 0 and steps[last] == e * strides[a] then
        extents[last], steps[last] = extents[last] * e, strides[a]
      else
        extents[last + 1], steps[last + 1] = e, strides[a]
      end
    end
  end
  if #extents == 0 then extents, steps = { 1 }, { 0 } end
  return { offset, extents, steps }
end

M.random = public(function(shape, chunks, dtype, options)
  if type(dtype) == "table" then dtype, options = nil, dtype end
  options = options or {}
  if type(shape) == "number" then shape = { shape } end
  local stream = options.seed ~= nil and internal.random_stream(options.seed) or internal.random_module_stream()
  -- A block whose place needs more axes than a draw takes is drawn as slices along its
  -- first axis of extent over 1 (each needs one axis fewer), joined.
  local function draw(r, device)
    local place, s, size = stream_place(shape, r), {}, 1
    for a = 1, #shape do
      s[a] = r[a][2] - r[a][1]
      size = size * s[a]
    end
    if #place[2] <= MAX_PLACE_AXES or size == 0 then
      return internal.random_draw(stream, "random", s, dtype or "float64", { device = device }, nil, nil, place)
    end
    local axis = 1
    while r[axis][2] - r[axis][1] <= 1 do axis = axis + 1 end
    local parts = {}
    for i = r[axis][1], r[axis][2] - 1 do
      local part = copy(r)
      part[axis] = { i, i + 1 }
      parts[#parts + 1] = draw(part, device)
    end
    return luda.concatenate(parts, axis)
  end
  local c = build(shape, chunks, { devices = options.devices, distributed = options.distributed }, "luda.chunked.random",
    function(_, device, r) return draw(r, device) end)
  local total = 1
  for a = 1, #shape do total = total * shape[a] end
  internal.random_advance(stream, total)
  return c
end)

-- luda.chunked.arange([start,] stop [, step], chunks [, dtype] [, {devices=}]).
M.arange = public(function(...)
  local args = table.pack(...)
  local options
  if type(args[args.n]) == "table" and getmetatable(args[args.n]) == nil then
    options = args[args.n]
    args.n = args.n - 1
  end
  local dtype
  if type(args[args.n]) == "string" then
    dtype = args[args.n]
    args.n = args.n - 1
  end
  local nums = {}
  for i = 1, args.n do nums[i] = args[i] end
  local chunks = table.remove(nums)
  local start, stop, step = 0, nil, 1
  if #nums == 1 then stop = nums[1]
  elseif #nums == 2 then start, stop = nums[1], nums[2]
  elseif #nums == 3 then start, stop, step = nums[1], nums[2], nums[3]
  else raise("luda.chunked.arange takes [start,] stop [, step], then chunks") end
  if type(step) ~= "number" or step == 0 then raise("luda.chunked.arange: step must be a non-zero number") end
  local n = math.max(0, math.ceil((stop - start) / step))
  n = math.tointeger(n) or math.floor(n)
  -- Each block's values as NumPy's arange makes them, start + i * step, exactly the
  -- block's count of them (a stop computed as start + hi * step may round past it).
  local float = math.type(start) == "float" or math.type(step) == "float"
  return build({ n }, { chunks }, options, "luda.chunked.arange", function(_, device, r)
    local v = luda.arange(r[1][1], r[1][2], 1, float and "float64" or "int64", { device = device }) * step + start
    return dtype and v:astype(dtype) or v
  end, true)
end)

M.from_array = from_array

return M

-- luda.chunked: Dask's chunked arrays over luda arrays (docs/chunked.md).
--
-- A chunked array is a grid of ordinary luda arrays (blocks), each on one device, with
-- Dask's vocabulary: shape, dtype, chunks (per axis, the blocks' extents), numblocks.
-- Work on a chunked array is work on its blocks, each where it lives, so blocks on
-- different devices run at once (each device its own stream; a launch is asynchronous).
-- Functions of the luda module that are given a chunked array come here through the
-- metatable's __luda_function (stdlib/lua_support.h, defer_to_argument), as NumPy's
-- __array_function__ lets Dask take NumPy's functions; so code written for an array runs
-- on a chunked one.
--
-- Loaded once per Lua state with the luda module table, the arrays' metatable, its parts
-- (as functions, by name: ranks, how blocks move between ranks, stdlib/chunked_ranks.lua;
-- reduce, kinds and linalg, stdlib/chunked_<name>.lua) and a table of C functions for
-- these files alone (qr_each, kind_info, ...) as its arguments.
local luda, ARRAY_MT, parts, C = ...

local M = {}        -- luda.chunked: the constructor (through __call) and its functions
local Chunked = {}  -- the metatable of chunked arrays
local methods = {}  -- c:name(...)
local IMPL = {}     -- a luda function (or array metamethod) -> its chunked form
local NAME = {}     -- a luda function -> "luda.name", for messages

-- ---- errors at the caller's line ------------------------------------------------------

-- This file and its parts: the lines that are not the caller's.
local INTERNAL = { [debug.getinfo(1, "S").source] = true }
for _, part in pairs(parts) do INTERNAL[debug.getinfo(part, "S").source] = true end
local function internal(source) return INTERNAL[source] == true end

-- The place of the innermost caller outside these files: "file:line: ", or "".
local function where()
  for level = 2, 64 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if not internal(info.source) and info.what ~= "C" and info.currentline and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
  end
  return ""
end

local function raise(fmt, ...)
  error(where() .. string.format(fmt, ...), 0)
end

-- fn as a public function: an error raised at a line of these files (a luda function that
-- refused a block's operands) is reported at the caller's line instead.
local function short(source) return source:sub(1, 1) == "=" and source:sub(2) or source end
local SHORTS = {}
for source in pairs(INTERNAL) do SHORTS[#SHORTS + 1] = short(source) .. ":" end
local function at_internal_line(e)
  for _, prefix in ipairs(SHORTS) do
    if e:sub(1, #prefix) == prefix then return true end
  end
  return false
end
local function public(fn)
  return function(...)
    local r = table.pack(pcall(fn, ...))
    if r[1] then return table.unpack(r, 2, r.n) end
    local e = r[2]
    if type(e) == "string" then
      local here = where()
      if at_internal_line(e) then
        e = here .. e:gsub("^[^:]*:%d+: ", "", 1)
      elseif e:sub(1, #here) ~= here and not e:find("^[^%s:]+:%d+: ") then
        -- a luda function called with no Lua line of its own (through with_device); the
        -- caller's place may hold spaces ("(command line 1)"), so it is compared whole
        e = here .. e
      end
    end
    error(e, 0)
  end
end

-- ---- small helpers ---------------------------------------------------------------------

local function is_chunked(v) return getmetatable(v) == Chunked end
local function is_array(v) return getmetatable(v) == ARRAY_MT end

local function tuple(t)
  local parts = {}
  for i, v in ipairs(t) do parts[i] = tostring(v) end
  return "(" .. table.concat(parts, ", ") .. (#t == 1 and ",)" or ")")
end

local function copy(t)
  local out = {}
  for i, v in ipairs(t) do out[i] = type(v) == "table" and copy(v) or v end
  return out
end

local function product(t)
  local p = 1
  for _, v in ipairs(t) do p = p * v end
  return p
end

local function to(x, device)
  if is_array(x) and x.device ~= device then return x:to(device) end
  return x
end

-- A partial result of a reduction: an array, or a list of arrays (argmax's index and
-- value, which travel together).
local function partial_device(p) return is_array(p) and p.device or p[1].device end
local function partial_to(p, device)
  if is_array(p) then return to(p, device) end
  local out = {}
  for i, a in ipairs(p) do out[i] = to(a, device) end
  return out
end

-- Pairwise combination of a list of partials, kept in order, each pair on the left one's
-- device (luda's functions run where their arrays are).
local function tree(list, combine)
  while #list > 1 do
    local next_list = {}
    for i = 1, #list, 2 do
      local a, b = list[i], list[i + 1]
      if b == nil then next_list[#next_list + 1] = a
      else next_list[#next_list + 1] = combine(a, partial_to(b, partial_device(a))) end
    end
    list = next_list
  end
  return list[1]
end

-- Ranks, and moves of blocks and partials between them.
local R = parts.ranks(luda, { is_array = is_array, partial_to = partial_to, partial_device = partial_device, tree = tree })

-- A device's name as arrays report theirs ("cpu", "cpu:1", "cuda:0").
local function device_name(d)
  if type(d) == "string" then return d end
  if d.kind == "cpu" then return d.index == 0 and "cpu" or ("cpu:" .. d.index) end
  return "cuda:" .. d.index
end

-- The devices blocks go to by default: every CUDA device when the current device is one,
-- else every cpu device (LUDA_CPU_DEVICES).
local function default_devices()
  local want = luda.current_device().kind
  local out = {}
  for _, d in ipairs(luda.devices()) do
    if d.kind == want then out[#out + 1] = device_name(d) end
  end
  if #out == 0 then out[1] = device_name(luda.current_device()) end
  return out
end

local function read_devices(list, who)
  if list == nil then return default_devices() end
  if type(list) == "string" or type(list) == "userdata" then list = { list } end
  if type(list) ~= "table" or #list == 0 then
    raise("%s: option 'devices' must be a device or a non-empty list of them, got %s", who, type(list))
  end
  local out = {}
  for i, d in ipairs(list) do
    local name = device_name(d)
    local ok, e = pcall(luda.device, name)
    if not ok then raise("%s: devices[%d]: %s", who, i, tostring(e):gsub("^[^:]*:%d+: ", "", 1)) end
    out[i] = name
  end
  return out
end

-- Block k (0-based, of n) goes to devices[...]: spread evenly, neighbours together.
local function placement(k, n, devices)
  return devices[(k * #devices) // math.max(n, 1) + 1]
end

-- ---- chunks ----------------------------------------------------------------------------

-- Dask's chunks: a block size for every axis, or one entry per axis that is a block size
-- (-1: the whole axis) or a list of the blocks' extents. Returns per-axis lists of extents.
local function normalize_chunks(chunks, shape, who)
  local nd = #shape
  if math.type(chunks) == "integer" or (type(chunks) == "number" and chunks == math.floor(chunks)) then
    local same = {}
    for a = 1, nd do same[a] = math.tointeger(chunks) end
    chunks = same
  end
  if type(chunks) ~= "table" then
    raise("%s: chunks must be a block size, or a table with one entry per axis (a block size or a list of extents), got %s",
      who, type(chunks))
  end
  if #chunks ~= nd then
    raise("%s: chunks has %d entr%s, but the array has %d ax%s; give one per axis (a block size or a list of extents)",
      who, #chunks, #chunks == 1 and "y" or "ies", nd, nd == 1 and "is" or "es")
  end
  local out = {}
  for a = 1, nd do
    local c, n = chunks[a], shape[a]
    if type(c) == "number" then
      local size = math.tointeger(c)
      if size == -1 or n == 0 then size = math.max(n, 1) end
      if not size or size <= 0 then
        raise("%s: the block size of axis %d must be a positive integer or -1 (the whole axis), got %s", who, a, tostring(c))
      end
      local list = {}
      if n == 0 then list[1] = 0 end
      for start = 0, n - 1, size do list[#list + 1] = math.min(size, n - start) end
      out[a] = list
    elseif type(c) == "table" then
      local list, sum = {}, 0
      for i, v in ipairs(c) do
        local e = math.tointeger(v)
        if not e or e < 0 then
          raise("%s: chunks of axis %d: extent %d must be a non-negative integer, got %s", who, a, i, tostring(v))
        end
        list[i] = e
        sum = sum + e
      end
      if #list == 0 then raise("%s: chunks of axis %d is an empty list; give the blocks' extents", who, a) end
      if sum ~= n then
        raise("%s: the chunks of axis %d add up to %d, but the axis has %d element%s; give extents that add up to it",
          who, a, sum, n, n == 1 and "" or "s")
      end
      out[a] = list
    else
      raise("%s: chunks of axis %d must be a block size or a list of extents, got %s", who, a, type(c))
    end
  end
  return out
end

-- Each axis' block offsets: offsets[a][i] is where block i (1-based) of axis a starts.
local function offsets_of(chunks)
  local out = {}
  for a, list in ipairs(chunks) do
    local o, at = {}, 0
    for i, e in ipairs(list) do
      o[i] = at
      at = at + e
    end
    out[a] = o
  end
  return out
end

local function numblocks_of(chunks)
  local nb = {}
  for a, list in ipairs(chunks) do nb[a] = #list end
  return nb
end

-- Every grid position (0-based per axis) in C order, made once per grid shape (read only).
local position_cache = setmetatable({}, { __mode = "v" })
local function positions(nb)
  local key = table.concat(nb, ",")
  local cached = position_cache[key]
  if cached then return cached end
  local out, n = {}, product(nb)
  for k = 0, n - 1 do
    local g, rest = {}, k
    for a = #nb, 1, -1 do
      g[a] = rest % nb[a]
      rest = rest // nb[a]
    end
    out[k + 1] = g
  end
  position_cache[key] = out
  return out
end

-- The 1-based flat index of grid position g.
local function flat(nb, g)
  local k = 0
  for a = 1, #nb do k = k * nb[a] + g[a] end
  return k + 1
end

-- The slice items ({start, stop} per axis) of the block at g.
local function ranges(chunks, offsets, g)
  local r = {}
  for a = 1, #chunks do
    local o = offsets[a][g[a] + 1]
    r[a] = { o, o + chunks[a][g[a] + 1] }
  end
  return r
end

local function block_shape(chunks, g)
  local s = {}
  for a = 1, #chunks do s[a] = chunks[a][g[a] + 1] end
  return s
end

-- ---- the object -------------------------------------------------------------------------

-- A chunked array of these blocks (a flat list in C order over the grid). A distributed
-- one (docs/distributed.md) has `owners`, each block's rank; a block of another rank is
-- `false` here. `base`: one array of the whole shape, on one device, of which every block
-- is a view (its slice at the block's place); elementwise work and reductions then run
-- once over it, as on one array, instead of once per block (docs/chunked.md, "Blocks of
-- one array").
-- (`owners` and `base` are kept as false where absent: a read of a missing field would go
-- to the metatable's __index.)
local function make(shape, dtype, chunks, blocks, devices, owners, base)
  return setmetatable({ _shape = shape, _dtype = dtype, _chunks = chunks, _blocks = blocks,
                        _nb = numblocks_of(chunks), _devices = devices, _owners = owners or false,
                        _base = base or false }, Chunked)
end

-- Each block's place for a chunks table (its ranges, as x:slice takes them), made once per
-- table: the results of work over one array share their operand's chunks table.
local PLACES = setmetatable({}, { __mode = "k" })
local function places_of(chunks)
  local list = PLACES[chunks]
  if not list then
    list = {}
    local off = offsets_of(chunks)
    for k, g in ipairs(positions(numblocks_of(chunks))) do list[k] = ranges(chunks, off, g) end
    PLACES[chunks] = list
  end
  return list
end

-- The views of `base` (an array of the whole shape) at the places `chunks` give blocks.
local function views_of(base, chunks)
  local blocks = {}
  if #chunks == 0 then blocks[1] = base
  else
    for k, r in ipairs(places_of(chunks)) do blocks[k] = base:slice(table.unpack(r)) end
  end
  return blocks
end

-- The chunked array whose blocks are views of `base` at the places `chunks` give them,
-- made at the first read of its _blocks (Chunked.__index): work over the whole base never
-- reads them.
local function of_base(base, chunks, devices)
  return make(base.shape, base.dtype, chunks, nil, devices or { base.device }, nil, base)
end

local my_rank, rank_count = R.rank, R.count

-- Each block's rank when `n` blocks are spread over the ranks (neighbours together), and
-- this rank's blocks' devices: its own blocks spread over `devices` as placement does.
local function spread_over_ranks(n, devices)
  local owners = R.spread(n)
  return owners, R.placed(owners, devices)
end

-- The devices of a list of blocks (this rank's, of a distributed array), in order of first
-- appearance.
local function devices_of(blocks)
  local seen, out = {}, {}
  for _, b in ipairs(blocks) do
    local d = b and b.device
    if d and not seen[d] then
      seen[d] = true
      out[#out + 1] = d
    end
  end
  return out
end

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
  if options.distributed then owners, where = spread_over_ranks(#all, devices) end
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
  if options.distributed then owners, where = spread_over_ranks(#all, devices) end
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
-- values in [0, 1), drawn in block order from the module's stream (restarted at `seed`).
M.random = public(function(shape, chunks, dtype, options)
  if type(dtype) == "table" then dtype, options = nil, dtype end
  options = options or {}
  if options.seed ~= nil then luda.random.seed(options.seed) end
  return build(shape, chunks, { devices = options.devices, distributed = options.distributed }, "luda.chunked.random",
    function(s, device)
    return luda.random.random(s, dtype or "float64", { device = device })
  end)
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

-- ---- fields, methods, printing ----------------------------------------------------------

local FIELDS = {
  shape = function(c) return copy(c._shape) end,
  dtype = function(c) return c._dtype end,
  chunks = function(c) return copy(c._chunks) end,
  numblocks = function(c) return copy(c._nb) end,
  ndim = function(c) return #c._shape end,
  size = function(c) return product(c._shape) end,
  npartitions = function(c) return #c._blocks end,
  chunksize = function(c)
    local s = {}
    for a, list in ipairs(c._chunks) do
      local m = 0
      for _, e in ipairs(list) do m = math.max(m, e) end
      s[a] = m
    end
    return s
  end,
  devices = function(c) return devices_of(c._blocks) end,
  distributed = function(c) return c._owners and true or false end,
  owners = function(c) return c._owners and copy(c._owners) or nil end,
  T = function(c) return methods.transpose(c) end,
}

Chunked.__index = function(c, k)
  if k == "_blocks" then  -- the views of a base, made at the first read
    local base = rawget(c, "_base")
    if not base then return nil end
    local blocks = views_of(base, rawget(c, "_chunks"))
    rawset(c, "_blocks", blocks)
    return blocks
  end
  if type(k) == "string" and k:sub(1, 1) == "_" then return nil end  -- an unset internal field
  local f = FIELDS[k]
  if f then return f(c) end
  local m = methods[k]
  if m then return m end
  raise("chunked array has no field '%s'", tostring(k))
end

Chunked.__newindex = function(_, k)
  raise("chunked arrays are read-only: cannot set '%s' (write a block, c:block(i, ...), instead)", tostring(k))
end

Chunked.__tostring = function(c)
  return string.format("chunked<shape=%s, dtype=%s, chunksize=%s, numblocks=%s, devices=%s%s>", tuple(c._shape),
    c._dtype, tuple(FIELDS.chunksize(c)), tuple(c._nb), table.concat(devices_of(c._blocks), ", "),
    c._owners and (", ranks=" .. rank_count()) or "")
end

Chunked.__name = "chunked"

-- c:block(i, j, ...): the block at grid position (i, j, ...), 0-based (Dask's c.blocks[i, j]).
methods.block = public(function(c, ...)
  local g = { ... }
  if #g ~= #c._nb then
    raise("block: give %d block index%s (the grid is %s), got %d", #c._nb, #c._nb == 1 and "" or "es", tuple(c._nb), #g)
  end
  for a = 1, #g do
    local i = math.tointeger(g[a])
    if not i then raise("block: index %d must be an integer, got %s", a, tostring(g[a])) end
    if i < 0 then i = i + c._nb[a] end
    if i < 0 or i >= c._nb[a] then
      raise("block: index %s is out of range for axis %d with %d block%s", tostring(g[a]), a, c._nb[a],
        c._nb[a] == 1 and "" or "s")
    end
    g[a] = i
  end
  local k = flat(c._nb, g)
  if c._blocks[k] == false then
    raise("block: block %s lives on rank %d, and this is rank %d; c:compute() gathers every block", tuple(g),
      c._owners[k], my_rank())
  end
  return c._blocks[k]
end)

-- c:blocks(): every block, in C order over the grid.
methods.blocks = function(c) return { table.unpack(c._blocks) } end

-- c:compute([{device=, root=}]): one array on one device (default: the first block's, or
-- for a distributed array the current device). A distributed array's blocks travel from
-- their ranks to every rank (a collective: every rank calls it), or with `root` to that
-- rank only, where the others get nil.
methods.compute = public(function(c, options)
  options = options or {}
  local first
  for _, b in ipairs(c._blocks) do first = first or b or nil end
  local device = options.device and device_name(options.device) or
                 ((c._owners or not first) and device_name(luda.current_device()) or first.device)
  local me = my_rank()
  local keep = options.root == nil or options.root == me
  local out = keep and luda.empty(c._shape, c._dtype, { device = device }) or nil
  local off = offsets_of(c._chunks)
  for k, g in ipairs(positions(c._nb)) do
    local b = c._blocks[k]
    if c._owners and rank_count() > 1 then
      local buffer = b or luda.empty(block_shape(c._chunks, g), c._dtype, { device = device })
      b = luda.dist.broadcast(buffer, c._owners[k])
    end
    if keep and b.size > 0 then
      if #c._shape == 0 then out = to(b, device):copy() else out[ranges(c._chunks, off, g)] = to(b, device) end
    end
  end
  return out
end)


-- ---- rechunk -----------------------------------------------------------------------------

-- The pieces of old blocks that make up [lo, hi) of an axis with these offsets/extents:
-- a list of {old block index (0-based), start within it, stop within it, start in the new}.
local function pieces(old_off, old_chunks, lo, hi)
  local out = {}
  for i, o in ipairs(old_off) do
    local e = old_chunks[i]
    local a, b = math.max(lo, o), math.min(hi, o + e)
    if a < b then out[#out + 1] = { i - 1, a - o, b - o, a - lo } end
  end
  return out
end

-- c with the blocks of `chunks`, made from the pieces of the old blocks that each covers
-- (a new block inside one old block is a view of it, where it stays on its device). A
-- distributed c's new blocks are spread over the ranks as a new array's are, and each
-- piece held by another rank is sent to the new block's rank.
local function rechunk(c, chunks, options)
  options = options or {}
  local new = normalize_chunks(chunks, c._shape, "rechunk")
  local same = true
  for a = 1, #new do
    if #new[a] ~= #c._chunks[a] then same = false
    else
      for i = 1, #new[a] do if new[a][i] ~= c._chunks[a][i] then same = false end end
    end
  end
  if same and not options.devices then return c end
  local devices = options.devices and read_devices(options.devices, "rechunk") or c._devices or devices_of(c._blocks)
  local old_off, new_off = offsets_of(c._chunks), offsets_of(new)
  local nb = numblocks_of(new)
  local all = positions(nb)
  local owners, where
  if c._owners then owners, where = spread_over_ranks(#all, devices) end
  local me = my_rank()
  -- Old block j's piece `items`, on the rank of the new block (nil on other ranks).
  local function piece(j, items, shape, device, owner)
    local b = c._blocks[j]
    local p = b and (#items == 0 and b or b:slice(table.unpack(items))) or nil
    if not owners then return p end
    return R.move(p, c._owners[j], owner,
      function() return luda.empty(shape, c._dtype, { device = device }) end)
  end
  local blocks = {}
  for k, g in ipairs(all) do
    local device, owner
    if owners then device, owner = where[k], owners[k] else device = placement(k - 1, #all, devices) end
    -- Per axis, the old blocks' pieces; their product covers the new block.
    local per_axis = {}
    for a = 1, #new do
      local lo = new_off[a][g[a] + 1]
      per_axis[a] = pieces(old_off[a], c._chunks[a], lo, lo + new[a][g[a] + 1])
    end
    local combos = { {} }
    for a = 1, #new do
      local next_combos = {}
      for _, combo in ipairs(combos) do
        for _, p in ipairs(per_axis[a]) do
          local cc = { table.unpack(combo) }
          cc[a] = p
          next_combos[#next_combos + 1] = cc
        end
      end
      combos = next_combos
    end
    local shape = block_shape(new, g)
    local here = not owners or owner == me
    if #combos == 1 then
      local combo = combos[1]
      local old_g, items = {}, {}
      for a = 1, #new do
        old_g[a] = combo[a][1]
        items[a] = { combo[a][2], combo[a][3] }
      end
      local b = piece(flat(c._nb, old_g), items, shape, device, owner)
      blocks[k] = here and to(b, device) or false
    else
      local out = here and luda.empty(shape, c._dtype, { device = device }) or false
      for _, combo in ipairs(combos) do
        local old_g, from, into, size = {}, {}, {}, {}
        for a = 1, #new do
          old_g[a] = combo[a][1]
          from[a] = { combo[a][2], combo[a][3] }
          into[a] = { combo[a][4], combo[a][4] + combo[a][3] - combo[a][2] }
          size[a] = combo[a][3] - combo[a][2]
        end
        local p = piece(flat(c._nb, old_g), from, size, device, owner)
        if out and p.size > 0 then out[into] = to(p, device) end
      end
      blocks[k] = out
    end
  end
  return make(copy(c._shape), c._dtype, new, blocks, devices, owners)
end
methods.rechunk = public(rechunk)

-- ---- blockwise work ----------------------------------------------------------------------

-- The shape that shapes broadcast to (NumPy's rule), or an error naming them.
local function broadcast_shapes(shapes, who)
  local nd = 0
  for _, s in ipairs(shapes) do nd = math.max(nd, #s) end
  local out = {}
  for a = 1, nd do
    local n = 1
    for _, s in ipairs(shapes) do
      local e = s[#s - nd + a]
      if e ~= nil and e ~= 1 then
        if n ~= 1 and n ~= e then
          local texts = {}
          for i, t in ipairs(shapes) do texts[i] = tuple(t) end
          raise("%s: shapes %s cannot be broadcast together", who, table.concat(texts, ", "))
        end
        n = e
      end
    end
    out[a] = n
  end
  return out
end

-- The operands' common grid: the output shape and chunks, and each chunked operand
-- rechunked where its chunks differ from the first one spanning that axis.
local function unify(operands, who)
  -- One chunked operand, or several of one shape and one chunks table, and no plain array:
  -- that grid as it is.
  local lead, same = nil, true
  for _, v in ipairs(operands) do
    if is_chunked(v) then
      lead = lead or v
      same = same and v._chunks == lead._chunks and v._shape == lead._shape
    elseif is_array(v) then
      same = false
    end
  end
  if lead and same then return operands, lead._shape, lead._chunks end
  local shapes = {}
  for i, v in ipairs(operands) do
    if is_chunked(v) then shapes[#shapes + 1] = v._shape
    elseif is_array(v) then shapes[#shapes + 1] = v.shape end
  end
  local shape = broadcast_shapes(shapes, who)
  local nd = #shape
  local chunks = {}
  for a = 1, nd do
    for _, v in ipairs(operands) do
      if is_chunked(v) then
        local va = #v._shape - nd + a
        if va >= 1 and v._shape[va] == shape[a] and (shape[a] ~= 1 or chunks[a] == nil) then
          chunks[a] = chunks[a] or v._chunks[va]
        end
      end
    end
    chunks[a] = chunks[a] or { shape[a] }
  end
  local out = {}
  for i, v in ipairs(operands) do
    if is_chunked(v) then
      local want, differs = {}, false
      local vnd = #v._shape
      for va = 1, vnd do
        local a = nd - vnd + va
        if v._shape[va] == shape[a] then
          want[va] = chunks[a]
          local have = v._chunks[va]
          if #have ~= #chunks[a] then differs = true
          else for j = 1, #have do if have[j] ~= chunks[a][j] then differs = true end end end
        else
          want[va] = v._chunks[va]  -- extent 1, broadcast
        end
      end
      out[i] = differs and rechunk(v, want) or v
    else
      out[i] = v
    end
  end
  return out, shape, chunks
end

-- Operand v's piece for the output block at g (of an output with nd axes): a chunked
-- operand's block, a plain array's slice (broadcast axes whole), anything else itself.
local function piece_of(v, g, nd, off, chunks)
  if is_chunked(v) then
    local vnd = #v._shape
    local vg = {}
    for va = 1, vnd do
      local a = nd - vnd + va
      vg[va] = v._nb[va] == 1 and 0 or g[a]
    end
    return v._blocks[flat(v._nb, vg)]
  elseif is_array(v) then
    local vnd = v.ndim
    if vnd == 0 then return v end
    local items = {}
    local s = v.shape
    for va = 1, vnd do
      local a = nd - vnd + va
      if s[va] == 1 and chunks[a][1] ~= nil then items[va] = { 0, 1 }
      else
        local o = off[a][g[a] + 1]
        items[va] = { o, o + chunks[a][g[a] + 1] }
      end
    end
    return v:slice(table.unpack(items))
  end
  return v
end

-- The ranks of the output blocks of a grid of `nb` where operands are distributed: the
-- first distributed operand's that spans the whole grid, else an even spread; nil where
-- none is distributed.
local function output_owners(operands, nb)
  local any = false
  for _, v in ipairs(operands) do
    if is_chunked(v) and v._owners then
      any = true
      local spans = #v._nb == #nb
      for a = 1, spans and #nb or 0 do spans = spans and v._nb[a] == nb[a] end
      if spans then return v._owners end
    end
  end
  return any and R.spread(product(nb)) or nil
end

-- The operands, each distributed one holding on each rank the blocks that the rank's
-- output blocks (of a grid of `nb`, at ranks `owners`) take from it: a block held by
-- another rank is sent to each rank that needs it, once. Chunked operands that are not
-- distributed hold every block on every rank already.
local function bring(operands, nb, owners)
  if not owners then return operands end
  local nd = #nb
  local out = {}
  for i, v in ipairs(operands) do
    out[i] = v
    if is_chunked(v) and v._owners then
      local fetch, vnd, vpos = R.fetcher(), #v._shape, positions(v._nb)
      local blocks = {}
      for j, b in ipairs(v._blocks) do blocks[j] = b end
      for k, g in ipairs(positions(nb)) do
        local vg = {}
        for va = 1, vnd do vg[va] = v._nb[va] == 1 and 0 or g[nd - vnd + va] end
        local j = flat(v._nb, vg)
        blocks[j] = fetch(j, v._blocks[j] or nil, v._owners[j], owners[k], function()
          return luda.empty(block_shape(v._chunks, vpos[j]), v._dtype)
        end) or blocks[j]
      end
      out[i] = make(v._shape, v._dtype, v._chunks, blocks, v._devices)
    end
  end
  return out
end

-- The device of the bases of the chunked operands (unified: of one grid) when each has one
-- (make's `base`) and they are all on one device and none is distributed; else nil.
local function whole_device(ops)
  local device
  for _, v in ipairs(ops) do
    if is_chunked(v) then
      if not v._base or v._owners then return nil end
      local d = v._base.device
      if device and d ~= device then return nil end
      device = d
    end
  end
  return device
end

-- The operands for one call over the whole arrays: the chunked ones' bases, plain arrays on
-- that device, anything else as it is.
local function whole_args(ops, device)
  local args = {}
  for i, v in ipairs(ops) do
    if is_chunked(v) then args[i] = v._base else args[i] = to(v, device) end
  end
  return args
end

-- The results of an elementwise f over unified operands whose blocks are all views of
-- bases on one device: f called once over the bases, its `nout` results made chunked arrays
-- of `chunks` whose blocks are their views; nil where the operands are not such.
local function whole_results(f, ops, shape, chunks, nout, who)
  local device = whole_device(ops)
  if not device then return nil end
  local results = table.pack(f(table.unpack(whole_args(ops, device), 1, #ops)))
  local out = {}
  for j = 1, nout do
    local r = results[j]
    local s = r.shape
    for a = 1, math.max(#s, #shape) do
      if s[a] ~= shape[a] then
        raise("%s gave a result of shape %s over arrays of shape %s; it must work element by element", who,
          tuple(s), tuple(shape))
      end
    end
    out[j] = of_base(r, chunks)
  end
  return out
end

-- The operands' pieces for the output block at grid position g, each moved to the device
-- of the first chunked operand's block there (that device too).
-- k: g's flat index (a chunked operand of the grid's own chunks table gives its block k).
local function pieces_at(ops, g, nd, off, chunks, k)
  local args, device = {}, nil
  local moves = false  -- a piece that may be elsewhere: a plain array, or another grid's block
  for i, v in ipairs(ops) do
    if is_chunked(v) and v._chunks == chunks and k then
      args[i] = v._blocks[k]
      if device then moves = true end
    else
      args[i] = piece_of(v, g, nd, off, chunks)
      moves = moves or is_array(args[i]) or is_chunked(v)
    end
    if is_chunked(v) and not device then device = args[i].device end
  end
  if moves then
    for i = 1, #ops do args[i] = to(args[i], device) end
  end
  return args, device
end

-- f applied block by block to operands (chunked arrays, arrays, numbers, ...), each block
-- on its first chunked operand's device, the other pieces moved there; f gives `nout`
-- arrays (default 1), and so many chunked arrays come back. Where operands are
-- distributed, each rank computes the output blocks output_owners gives it.
-- `refused`: a message raised where the work would go block by block (f is right only
-- over the whole arrays).
local function blockwise(f, operands, who, nout, elementwise, refused)
  nout = nout or 1
  local ops, shape, chunks = unify(operands, who)
  if elementwise then
    local results = whole_results(f, ops, shape, chunks, nout, who)
    if results then return table.unpack(results, 1, nout) end
  end
  if refused then raise("%s", refused) end
  local nd = #shape
  local off, nb = offsets_of(chunks), numblocks_of(chunks)
  local owners = output_owners(ops, nb)
  ops = bring(ops, nb, owners)
  local me = my_rank()
  local blocks, dtypes = {}, {}
  for j = 1, nout do blocks[j] = {} end
  local lead
  for _, v in ipairs(ops) do if is_chunked(v) then lead = lead or v end end
  for k, g in ipairs(positions(nb)) do
    if owners and owners[k] ~= me then
      for j = 1, nout do blocks[j][k] = false end
    else
      local args = pieces_at(ops, g, nd, off, chunks, k)
      local results = table.pack(f(table.unpack(args, 1, #ops)))  -- runs where the block is
      for j = 1, nout do
        blocks[j][k] = results[j]
        dtypes[j] = dtypes[j] or results[j].dtype
      end
    end
  end
  if not dtypes[1] then
    -- A rank holding none of the blocks: the dtypes f gives elements of the operands' dtypes.
    local probe = {}
    for i, v in ipairs(ops) do
      if is_chunked(v) then probe[i] = luda.zeros({}, v._dtype)
      elseif is_array(v) then probe[i] = luda.zeros({}, v.dtype, { device = v.device })
      else probe[i] = v end
    end
    local results = table.pack(f(table.unpack(probe, 1, #ops)))
    for j = 1, nout do dtypes[j] = results[j].dtype end
  end
  local out = {}
  for j = 1, nout do out[j] = make(shape, dtypes[j], chunks, blocks[j], lead._devices, owners) end
  return table.unpack(out, 1, nout)
end

-- ---- map_blocks ----------------------------------------------------------------------------

local MAP_OPTIONS = { dtype = true, chunks = true, drop_axis = true, new_axis = true }

local function axis_list(v, nd, what)
  if v == nil then return {} end
  if type(v) == "number" then v = { v } end
  local out = {}
  for i, a in ipairs(v) do
    local n = math.tointeger(a)
    if not n or n == 0 or n > nd or n < -nd then
      raise("map_blocks: %s %s is out of range (axes are 1 to %d, or negative from the end)", what, tostring(a), nd)
    end
    out[i] = n < 0 and nd + n + 1 or n
  end
  table.sort(out)
  return out
end

-- luda.map_blocks(fn, args... [, {dtype=, chunks=, drop_axis=, new_axis=}]): fn called once
-- per block with the matching blocks of the chunked arguments (views with their true
-- strides), other arguments passed as they are; its results make the output's blocks.
local function map_blocks(fn, ...)
  if type(fn) ~= "function" and not (getmetatable(fn) and getmetatable(fn).__call) then
    raise("map_blocks: the first argument must be a function, got %s", type(fn))
  end
  local args = table.pack(...)
  local options = {}
  local last = args[args.n]
  if args.n > 0 and type(last) == "table" and getmetatable(last) == nil then
    local all_options = true
    for k in pairs(last) do if not MAP_OPTIONS[k] then all_options = false end end
    if all_options then
      options = last
      args.n = args.n - 1
    end
  end
  local chunked_args = {}
  for i = 1, args.n do if is_chunked(args[i]) then chunked_args[#chunked_args + 1] = i end end
  if #chunked_args == 0 then raise("map_blocks: no argument is a chunked array (luda.chunked(x, chunks) makes one)") end
  -- The grid: chunked arguments aligned as for broadcasting; plain arrays pass whole.
  local cs = {}
  for j, i in ipairs(chunked_args) do cs[j] = args[i] end
  local unified, shape, chunks = unify(cs, "map_blocks")
  local nb = numblocks_of(chunks)
  local owners = output_owners(unified, nb)
  unified = bring(unified, nb, owners)
  for j, i in ipairs(chunked_args) do args[i] = unified[j] end
  local lead = args[chunked_args[1]]
  local nd = #shape
  local drop = axis_list(options.drop_axis, nd, "drop_axis")
  for _, a in ipairs(drop) do
    if #chunks[a] > 1 then
      raise("map_blocks: drop_axis %d has %d blocks; rechunk that axis to one block first (c:rechunk)", a, #chunks[a])
    end
  end
  -- The output grid: the input grid without the dropped axes, with new axes of one block.
  local kept = {}
  local dropped = {}
  for _, a in ipairs(drop) do dropped[a] = true end
  for a = 1, nd do if not dropped[a] then kept[#kept + 1] = a end end
  local new_count = options.new_axis == nil and 0 or type(options.new_axis) == "table" and #options.new_axis or 1
  local out_nd = #kept + new_count
  local new = axis_list(options.new_axis, out_nd, "new_axis")
  local is_new = {}
  for _, a in ipairs(new) do is_new[a] = true end
  local in_axis_of = {}  -- output axis -> input axis (nil for a new one)
  local next_kept = 1
  for a = 1, out_nd do
    if not is_new[a] then
      in_axis_of[a] = kept[next_kept]
      next_kept = next_kept + 1
    end
  end
  -- The output's chunks: given (a block extent, or the list, per output axis), else the
  -- input's, with 1 for new axes.
  local out_chunks = {}
  for a = 1, out_nd do
    local given = options.chunks and options.chunks[a]
    local count = in_axis_of[a] and #chunks[in_axis_of[a]] or 1
    if options.chunks and (type(options.chunks) ~= "table" or #options.chunks ~= out_nd) then
      raise("map_blocks: chunks must have one entry per output axis (%d), got %s", out_nd,
        type(options.chunks) == "table" and tostring(#options.chunks) or type(options.chunks))
    end
    if type(given) == "number" then
      local list = {}
      for i = 1, count do list[i] = given end
      out_chunks[a] = list
    elseif type(given) == "table" then
      if #given ~= count then
        raise("map_blocks: chunks of output axis %d lists %d extents, but that axis has %d block%s", a, #given, count,
          count == 1 and "" or "s")
      end
      out_chunks[a] = copy(given)
    else
      out_chunks[a] = in_axis_of[a] and copy(chunks[in_axis_of[a]]) or { 1 }
    end
  end
  local dtype = options.dtype or lead._dtype
  local off = offsets_of(chunks)
  local out_owners = owners and {} or nil
  local me = my_rank()
  local blocks = {}
  local out_nb = numblocks_of(out_chunks)
  local moved = {}  -- plain array arguments on each block device: moved[device][i]
  for k, g in ipairs(positions(nb)) do
    local og = {}
    for a = 1, out_nd do og[a] = in_axis_of[a] and g[in_axis_of[a]] or 0 end
    local at = flat(out_nb, og)
    if owners then out_owners[at] = owners[k] end
    if owners and owners[k] ~= me then
      blocks[at] = false
      goto next_block
    end
    do
    local call = {}
    local device
    for i = 1, args.n do
      if is_chunked(args[i]) then
        call[i] = piece_of(args[i], g, nd, off, chunks)
        device = device or call[i].device
      else
        call[i] = args[i]
      end
    end
    for _, i in ipairs(chunked_args) do call[i] = to(call[i], device) end
    for i = 1, args.n do
      if is_array(call[i]) and call[i].device ~= device then
        moved[device] = moved[device] or {}
        moved[device][i] = moved[device][i] or call[i]:to(device)
        call[i] = moved[device][i]
      end
    end
    local r = luda.with_device(device, fn, table.unpack(call, 1, args.n))
    -- The block it must be.
    local want = {}
    for a = 1, out_nd do want[a] = out_chunks[a][og[a] + 1] end
    if not is_array(r) then
      raise("map_blocks: the block function returned %s for block %s; it must return an array", type(r), tuple(g))
    end
    local got = r.shape
    local ok = #got == #want
    for a = 1, math.min(#got, #want) do if got[a] ~= want[a] then ok = false end end
    if not ok or r.dtype ~= dtype then
      raise("map_blocks: the block function returned a %s array of shape %s for block %s, where %s of shape %s was expected; give map_blocks the output's dtype= and chunks=",
        r.dtype, tuple(got), tuple(g), dtype, tuple(want))
    end
    blocks[at] = r
    end
    ::next_block::
  end
  local out_shape = {}
  for a = 1, out_nd do
    local s = 0
    for _, e in ipairs(out_chunks[a]) do s = s + e end
    out_shape[a] = s
  end
  return make(out_shape, dtype, out_chunks, blocks, lead._devices, out_owners)
end
local public_map_blocks = public(map_blocks)
methods.map_blocks = public(function(c, fn, ...) return map_blocks(fn, c, ...) end)

-- ---- elementwise functions and operators ---------------------------------------------------

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

-- c.T and c:transpose(): the blocks transposed, the grid reversed.
methods.transpose = public(function(c)
  local nd = #c._shape
  local rev = function(t)
    local r = {}
    for a = 1, #t do r[a] = t[#t - a + 1] end
    return r
  end
  local chunks = rev(copy(c._chunks))
  local nb = numblocks_of(chunks)
  if nd < 2 then return c end
  local blocks, owners = {}, c._owners and {} or nil
  for k, g in ipairs(positions(nb)) do
    local from = flat(c._nb, rev(g))
    blocks[k] = c._blocks[from] and c._blocks[from].T
    if owners then owners[k] = c._owners[from] end
  end
  return make(rev(copy(c._shape)), c._dtype, chunks, blocks, c._devices, owners, c._base and c._base.T)
end)

-- ---- reductions, kernel kinds and linear algebra: files of their own -------------------------

-- stdlib/chunked_reduce.lua, chunked_kinds.lua and chunked_linalg.lua, each run with the
-- luda module table and the locals above that it reads; each adds its functions to IMPL
-- and methods. The kinds' reductions use the reductions' read_axes, reduce and
-- whole_reduced.
local H = {
  C = C, FIELDS = FIELDS, IMPL = IMPL, R = R, block_shape = block_shape, blockwise = blockwise,
  bring = bring, chunked_ufunc = chunked_ufunc, copy = copy, device_name = device_name,
  flat = flat, from_array = from_array, is_array = is_array, is_chunked = is_chunked,
  make = make, map_blocks = map_blocks, methods = methods, my_rank = my_rank,
  numblocks_of = numblocks_of, of_base = of_base, offsets_of = offsets_of,
  output_owners = output_owners, pieces = pieces, pieces_at = pieces_at, positions = positions,
  product = product, public = public, raise = raise, rank_count = rank_count,
  rechunk = rechunk, to = to, tree = tree, unify = unify, where = where,
  whole_args = whole_args, whole_device = whole_device,
}
local reductions = parts.reduce(luda, H)
H.read_axes, H.reduce, H.whole_reduced = reductions.read_axes, reductions.reduce, reductions.whole_reduced
parts.kinds(luda, H)
parts.linalg(luda, H)

-- ---- the protocol, names and the module ------------------------------------------------------

for name, f in pairs(luda) do
  if type(f) == "function" then NAME[f] = "luda." .. name end
end
for name, f in pairs(luda.linalg) do
  if type(f) == "function" then NAME[f] = "luda.linalg." .. name end
end

Chunked.__luda_function = function(f, ...)
  local impl = IMPL[f]
  if impl then return impl(...) end
  raise("%s does not take chunked arrays; c:compute() makes one array of one (or map_blocks works block by block)",
    NAME[f] or "this function")
end

M.is_chunked = is_chunked

setmetatable(M, {
  __call = function(_, x, chunks, options) return public(from_array)(x, chunks, options) end,
  __index = function(_, k) raise("luda.chunked has no field '%s'", tostring(k)) end,
})

luda.chunked = M
luda.map_blocks = public_map_blocks
luda.rechunk = methods.rechunk

-- The chunked array (docs/chunked.md): a grid of ordinary luda arrays (blocks), each on one
-- device, with Dask's vocabulary: shape, dtype, chunks (per axis, the blocks' extents),
-- numblocks. This module holds its metatable, its fields and the methods that read its
-- blocks; the other modules of luda.chunked add their methods to `methods` and the chunked
-- forms of luda's functions to `IMPL` (luda.chunked's __luda_function looks them up there).
local luda = require "luda"
local errors = require "luda.chunked.errors"
local grid = require "luda.chunked.grid"
local R = require "luda.chunked.ranks"

local raise, public = errors.raise, errors.public
local block_shape, copy, flat, numblocks_of, offsets_of, places_of, positions, product, ranges, tuple =
  grid.block_shape, grid.copy, grid.flat, grid.numblocks_of, grid.offsets_of, grid.places_of, grid.positions,
  grid.product, grid.ranges, grid.tuple
local device_name = require("luda.chunked.devices").device_name
local devices_of = require("luda.chunked.devices").devices_of
local to = require("luda.chunked.devices").to
local my_rank, rank_count = R.rank, R.count

local Chunked = {}  -- the metatable of chunked arrays
local methods = {}  -- c:name(...)
local IMPL = {}     -- a luda function (or array metamethod) -> its chunked form

local function is_chunked(v) return getmetatable(v) == Chunked end

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

-- c:persist(): c itself. Its blocks were computed (their kernels queued) when it was made;
-- Dask's persist runs a task graph, which luda has not. Plain arrays have it too.
methods.persist = function(c, ...)
  if select("#", ...) > 0 then
    raise("persist: c:persist() takes no arguments (a chunked array's blocks are computed when it is made)")
  end
  return c
end

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

return {
  Chunked = Chunked, FIELDS = FIELDS, IMPL = IMPL, is_chunked = is_chunked, make = make, methods = methods,
  of_base = of_base,
}

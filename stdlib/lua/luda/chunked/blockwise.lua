-- Work on chunked operands block by block (docs/chunked.md): the operands' common grid, each
-- operand's piece at a grid position, blocks brought to the ranks that need them, and f
-- called once per output block, or once over the whole arrays where every operand's
-- blocks are views of one array.
local luda = require "luda"
local raise = require("luda.chunked.errors").raise
local grid = require "luda.chunked.grid"
local array = require "luda.chunked.array"
local rechunk = require "luda.chunked.rechunk"
local R = require "luda.chunked.ranks"

local block_shape, broadcast_shapes, flat, numblocks_of, offsets_of, positions, product, tuple =
  grid.block_shape, grid.broadcast_shapes, grid.flat, grid.numblocks_of, grid.offsets_of, grid.positions,
  grid.product, grid.tuple
local is_array = require("luda.chunked.devices").is_array
local to = require("luda.chunked.devices").to
local is_chunked, make, of_base = array.is_chunked, array.make, array.of_base
local my_rank = R.rank

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

return {
  blockwise = blockwise, bring = bring, output_owners = output_owners, piece_of = piece_of, pieces_at = pieces_at,
  unify = unify, whole_args = whole_args, whole_device = whole_device,
}

-- luda.map_blocks and c:map_blocks (docs/chunked.md): a function called once per block,
-- whose results make the output's blocks.
local luda = require "luda"
local errors = require "luda.chunked.errors"
local grid = require "luda.chunked.grid"
local array = require "luda.chunked.array"
local by_blocks = require "luda.chunked.blockwise"
local R = require "luda.chunked.ranks"

local raise, public = errors.raise, errors.public
local copy, flat, numblocks_of, offsets_of, positions, tuple =
  grid.copy, grid.flat, grid.numblocks_of, grid.offsets_of, grid.positions, grid.tuple
local is_array = require("luda.chunked.devices").is_array
local to = require("luda.chunked.devices").to
local is_chunked, make, methods = array.is_chunked, array.make, array.methods
local bring, output_owners, piece_of, unify = by_blocks.bring, by_blocks.output_owners, by_blocks.piece_of,
  by_blocks.unify
local my_rank = R.rank

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

methods.map_blocks = public(function(c, fn, ...) return map_blocks(fn, c, ...) end)

return map_blocks

-- c:rechunk(chunks [, {devices=}]) and luda.rechunk (docs/chunked.md): a chunked array
-- with other blocks, made from the pieces of the old ones.
local luda = require "luda"
local public = require("luda.chunked.errors").public
local grid = require "luda.chunked.grid"
local array = require "luda.chunked.array"
local R = require "luda.chunked.ranks"

local block_shape, copy, flat, normalize_chunks, numblocks_of, offsets_of, pieces, placement, positions =
  grid.block_shape, grid.copy, grid.flat, grid.normalize_chunks, grid.numblocks_of, grid.offsets_of, grid.pieces,
  grid.placement, grid.positions
local devices_of = require("luda.chunked.devices").devices_of
local read_devices = require("luda.chunked.devices").read_devices
local to = require("luda.chunked.devices").to
local make, methods = array.make, array.methods

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
  if c._owners then owners, where = R.place(#all, devices) end
  local me = R.rank()
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

return rechunk

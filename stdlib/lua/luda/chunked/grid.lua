-- The grid of a chunked array (docs/chunked.md): Dask's chunks (per axis, the blocks'
-- extents), block offsets and grid positions, each block's place in the whole array, the
-- pieces of old blocks a new block is made of, and the shape that operands broadcast to;
-- with the small table helpers they use.
local errors = require "luda.chunked.errors"

local raise = errors.raise

-- "(2, 3)", "(4,)": a shape or grid position as NumPy prints a tuple.
local function tuple(t)
  local parts = {}
  for i, v in ipairs(t) do parts[i] = tostring(v) end
  return "(" .. table.concat(parts, ", ") .. (#t == 1 and ",)" or ")")
end

-- A deep copy of a list (of lists).
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

return {
  block_shape = block_shape, broadcast_shapes = broadcast_shapes, copy = copy, flat = flat,
  normalize_chunks = normalize_chunks, numblocks_of = numblocks_of, offsets_of = offsets_of, pieces = pieces,
  placement = placement, places_of = places_of, positions = positions, product = product, ranges = ranges,
  tuple = tuple,
}

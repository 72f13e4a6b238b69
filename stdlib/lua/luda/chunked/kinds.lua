-- luda.chunked's kernel kinds (docs/chunked.md): luda.vectorize, elementwise, reduction and
-- fuse called with chunked operands, and f:reduce of a vectorize function.
--
-- Adds them to the chunked forms of luda's functions (the kinds' __call and f:reduce).
local luda = require "luda"
local internal = require "luda.internal"
local errors = require "luda.chunked.errors"
local grid = require "luda.chunked.grid"
local array = require "luda.chunked.array"
local by_blocks = require "luda.chunked.blockwise"
local reductions = require "luda.chunked.reduce"
local R = require "luda.chunked.ranks"

local raise, public = errors.raise, errors.public
local copy, flat, numblocks_of, offsets_of, positions =
  grid.copy, grid.flat, grid.numblocks_of, grid.offsets_of, grid.positions
local is_array = require("luda.chunked.devices").is_array
local from_array = require("luda.chunked.constructors").from_array
local IMPL, is_chunked, make = array.IMPL, array.is_chunked, array.make
local blockwise, bring, output_owners, pieces_at, unify, whole_args, whole_device =
  by_blocks.blockwise, by_blocks.bring, by_blocks.output_owners, by_blocks.pieces_at, by_blocks.unify,
  by_blocks.whole_args, by_blocks.whole_device
local read_axes, reduce, whole_reduced = reductions.read_axes, reductions.reduce, reductions.whole_reduced
local my_rank = R.rank

-- ---- kernel kinds -----------------------------------------------------------------------------

-- A call of a kernel kind (luda.vectorize, elementwise, reduction, fuse) with chunked
-- operands. Elementwise kinds run block by block as the ufuncs do (several outputs give
-- several chunked arrays). A luda.reduction reduces each block to the accumulator's value
-- (before post_map_expr), combines those by reduce_expr as a tree in block order, and
-- applies post_map_expr once to each combined value: four kinds derived from its strings,
-- made at its first chunked call and kept while it lives.
local kind_info = internal.kind_info
local derived = setmetatable({}, { __mode = "k" })

-- The kinds a reduction kind's chunked calls run. Their parameters keep the kind's own
-- declarations (placeholders bind as in the kind's call); the partial's is named so as to
-- differ from every parameter of the kind.
local function derived_kinds(k, info)
  local d = derived[k]
  if d then return d end
  local taken = {}
  for _, list in ipairs({ info.ins, info.outs }) do
    for _, decl in ipairs(list) do taken[decl:match("(%S+)$")] = true end
  end
  local p = "partial"
  while taken[p] or taken[p .. "_in"] do p = p .. "_" end
  local rtype = info.reduce_type ~= "" and info.reduce_type or info.outs[1]:match("^(%S+)")
  local acc = rtype .. " " .. p
  local options = { reduce_type = rtype, fastmath = info.fastmath }
  local ins = table.concat(info.ins, ", ")
  d = {
    -- A block's reduction: the accumulator's value, before post_map_expr.
    partial = luda.reduction(ins, acc, info.map, info.reduce, p .. " = a", info.identity, info.name, options),
    -- Two partials combined by reduce_expr.
    pair = luda.elementwise(rtype .. " a, " .. rtype .. " b", acc, p .. " = " .. info.reduce, info.name .. "_combine",
      { fastmath = info.fastmath }),
    -- post_map_expr of a combined partial. The kind's inputs follow it: its scalars as
    -- given, its arrays as 0-d arrays of their dtypes, which bind its placeholders as the
    -- arrays do (post_map_expr reads only `a` and scalars).
    post = luda.elementwise(acc .. ", " .. ins, table.concat(info.outs, ", "), "local a = " .. p .. "\n" .. info.post,
      info.name .. "_post", { fastmath = info.fastmath }),
  }
  d.checked = {}
  derived[k] = d
  return d
end

-- Runs k once on one element of each piece (of the dtypes a chunked call gives it), the
-- first time a call has these dtypes: errors in its strings are then k's own, with their
-- places in them, rather than a derived kind's.
local function check_kind_once(k, d, pieces, options)
  local key, tiny = {}, {}
  for i, v in ipairs(pieces) do
    if is_array(v) then
      key[i] = v.dtype
      if v.ndim > 0 and v.size > 0 then
        local one = {}
        for a = 1, v.ndim do one[a] = { 0, 1 } end
        v = v:slice(table.unpack(one))
      end
    else
      key[i] = math.type(v) or type(v)
    end
    tiny[i] = v
  end
  key = table.concat(key, ",")
  if d.checked[key] then return end
  tiny[#pieces + 1] = options
  k(table.unpack(tiny, 1, #pieces + 1))
  d.checked[key] = true
end

local function kind_reduction(k, info, operands, options)
  local who = info.who
  for key in pairs(options) do
    if key ~= "axis" and key ~= "keepdims" then
      raise("%s: option '%s' is not taken with chunked operands (axis and keepdims are)", who, tostring(key))
    end
  end
  if info.nout ~= 1 then raise("%s: a reduction of several outputs does not take chunked arrays; use map_blocks", who) end
  if #operands ~= info.nin then raise("%s: takes %d inputs, got %d", who, info.nin, #operands) end
  local ops, shape, chunks = unify(operands, who)
  local nd = #shape
  local axes = read_axes(options.axis, nd, who)
  local keep = options.keepdims and true or false
  local whole = whole_device(ops)
  if whole then
    local args = whole_args(ops, whole)
    args[#ops + 1] = { axis = options.axis, keepdims = keep }
    return whole_reduced(k(table.unpack(args, 1, #ops + 1)), chunks, axes, keep, { whole })
  end
  if info.map:find("%f[%w_]_j%f[^%w_]") then
    raise("%s: its map_expr reads _j (the index along the reduced axes), which block by block would be a block's; give blocks of one array (luda.chunked(x) on one device), or use map_blocks", who)
  end
  local d = derived_kinds(k, info)
  local off, nb = offsets_of(chunks), numblocks_of(chunks)
  local all = positions(nb)
  -- Where operands are distributed, each rank reduces the grid blocks that output_owners
  -- gives it, the other operands' blocks that those take brought to it.
  local owners = output_owners(ops, nb)
  ops = bring(ops, nb, owners)
  local me = my_rank()
  -- The grid's blocks (each the first chunked operand's piece there, for its device) and
  -- the operands' pieces at each grid position of this rank.
  local lead
  for i, v in ipairs(ops) do if is_chunked(v) then lead = lead or i end end
  local blocks, args_at, first = {}, {}, nil
  for j, g in ipairs(all) do
    if owners and owners[j] ~= me then
      blocks[j] = false
    else
      args_at[j] = pieces_at(ops, g, nd, off, chunks, j)
      blocks[j] = args_at[j][lead]
      first = first or args_at[j]
    end
  end
  -- Operands of one element each (of their dtypes): for a rank that holds no block.
  local function tiny()
    local args = {}
    for i, v in ipairs(ops) do
      if is_chunked(v) then
        local ones = {}
        for a = 1, #v._shape do ones[a] = 1 end
        args[i] = luda.ones(ones, v._dtype)
      else
        args[i] = v
      end
    end
    return args
  end
  local grid = make(shape, ops[lead]._dtype, chunks, blocks, ops[lead]._devices, owners)
  check_kind_once(k, d, first or tiny(), { axis = options.axis, keepdims = keep })
  -- The inputs after the partial in d.post: scalars as given, arrays as 0-d arrays.
  local function post(p)
    local extra = {}
    for i, v in ipairs(ops) do
      if is_chunked(v) then extra[i] = luda.zeros({}, v._dtype, { device = p.device })
      elseif is_array(v) then extra[i] = luda.zeros({}, v.dtype, { device = p.device })
      else extra[i] = v end
    end
    return d.post(p, table.unpack(extra, 1, #ops))
  end
  return reduce(grid, axes, keep, {
    per_block = function(_, list, g)
      local args = args_at[flat(nb, g)] or tiny()  -- tiny: the dtype of a rank holding no block
      args[#ops + 1] = { axis = list, keepdims = keep }
      return d.partial(table.unpack(args, 1, #ops + 1))
    end,
    combine = function(p, q) return d.pair(p, q) end,
    finish = post,
  })
end

local function kind_call(k, ...)
  local info = kind_info(k)
  local args = table.pack(...)
  local options
  if args.n > 0 and type(args[args.n]) == "table" and getmetatable(args[args.n]) == nil then
    options = args[args.n]
    args.n = args.n - 1
  end
  local operands = { table.unpack(args, 1, args.n) }
  if info.raw then
    raise("%s: a kernel with raw parameters does not take chunked arrays (its raw arrays, i and n would be a block's); use map_blocks, which hands it each block", info.who)
  end
  if info.reduces then
    if info.type == "fuse" then
      raise("%s: a fused function with reductions does not take chunked arrays; use luda.sum (max, min, prod) on the chunked array, which reduces each block and combines them, or map_blocks", info.who)
    end
    return kind_reduction(k, info, operands, options or {})
  end
  if options ~= nil then raise("%s: options (out=, stream=, size=) are not taken with chunked operands", info.who) end
  if #operands > info.nin then
    raise("%s: give the %d inputs only; with chunked operands the outputs are made block by block", info.who, info.nin)
  end
  local refused
  if info.body and (info.body:find("%f[%w_]i%f[^%w_]") or info.body:find("%f[%w_]n%f[^%w_]")) then
    refused = ("%s: its body reads i or n (the element's index and the size), which block by block would be a block's; give blocks of one array (luda.chunked(x) on one device), or use map_blocks"):format(info.who)
  end
  return blockwise(function(...) return k(...) end, operands, info.who, info.nout, true, refused)
end
IMPL[internal.kind_call] = public(kind_call)

-- f:reduce(c [, axis] [, {axis =, keepdims =, initial =}]) of a vectorize function of two
-- arguments (NumPy's ufunc.reduce): each block reduced by f:reduce, the partials combined
-- by f itself in block order, and `initial` combined once with each result.
IMPL[internal.kind_reduce] = public(function(k, c, axis, options)
  local info = kind_info(k)
  if type(axis) == "table" and getmetatable(axis) == nil and options == nil and axis[1] == nil then
    axis, options = nil, axis
  end
  options = options or {}
  for key in pairs(options) do
    if key ~= "axis" and key ~= "keepdims" and key ~= "initial" then
      raise("%s: option '%s' is not taken with a chunked array (axis, keepdims and initial are)", info.who, tostring(key))
    end
  end
  if not is_chunked(c) then raise("%s: reduce takes one array (a chunked one here), got %s", info.who, type(c)) end
  local nd = #c._shape
  if axis == nil then axis = options.axis end
  if axis == nil then
    if nd == 0 then raise("%s: reduce takes an array of one or more axes (it reduces the first by default); got a 0-d array", info.who) end
    axis = 1
  end
  local axes = read_axes(axis, nd, info.who)
  local keep = options.keepdims and true or false
  local initial = options.initial
  local extent = 1
  for a = 1, nd do if axes[a] then extent = extent * c._shape[a] end end
  if c._base or extent == 0 then
    -- Over one array (an empty reduced extent: every block is empty there, and the array
    -- is small).
    local base = c._base or c:compute()
    local list = {}
    for a = 1, nd do if axes[a] then list[#list + 1] = a end end
    local r = k:reduce(base, { axis = list, keepdims = keep, initial = initial })
    if c._base then return whole_reduced(r, c._chunks, axes, keep, c._devices) end
    return r.ndim == 0 and r or from_array(r, (function()
      local out = {}
      for a = 1, nd do
        if not axes[a] then out[#out + 1] = copy(c._chunks[a]) elseif keep then out[#out + 1] = { 1 } end
      end
      return out
    end)(), { devices = c._devices })
  end
  return reduce(c, axes, keep, {
    per_block = function(b, list) return k:reduce(b, { axis = list, keepdims = keep }) end,
    combine = function(p, q) return k(p, q) end,
    -- initial once per result, in the result's dtype (docs/kinds.md)
    finish = initial ~= nil and function(p) return k(luda.full({}, initial, p.dtype, { device = p.device }), p) end or nil,
  })
end)

-- luda.chunked's reductions (docs/chunked.md): sum, prod, min, max, mean, var, std, their
-- nan-forms, any, all, argmin, argmax and count_nonzero of chunked arrays, over every block
-- or along axes, each block reduced where it lives and the partials combined as a tree in
-- block order (across ranks through luda.chunked.ranks). Adds them to the chunked array's
-- methods and to the chunked forms of luda's functions; returns read_axes, reduce and
-- whole_reduced, which the kernel kinds' reductions use.
local luda = require "luda"
local errors = require "luda.chunked.errors"
local grid = require "luda.chunked.grid"
local array = require "luda.chunked.array"
local chunked_ufunc = require "luda.chunked.ufuncs"
local R = require "luda.chunked.ranks"

local raise, public = errors.raise, errors.public
local copy, offsets_of, positions, product = grid.copy, grid.offsets_of, grid.positions, grid.product
local tree = require("luda.chunked.devices").tree
local IMPL, is_chunked, make, methods, of_base = array.IMPL, array.is_chunked, array.make, array.methods, array.of_base
local rank_count = R.count

-- ---- reductions ----------------------------------------------------------------------------

-- Whether the blocks at these indices are all on one device.
local function one_device(blocks, members)
  local d = blocks[members[1]].device
  for _, k in ipairs(members) do
    if blocks[k].device ~= d then return false end
  end
  return true
end

-- A reduction's arguments: (c [, axis] [, {axis=, keepdims=, dtype=, ddof=, ...}]).
-- The set of axes (1-based, axes[a] true) that `axis` names for an nd-d array: a number, a
-- list, or nil for every axis; `who` starts the error for one out of range.
local function read_axes(axis, nd, who)
  local axes = {}
  if axis == nil then
    for a = 1, nd do axes[a] = true end
    return axes
  end
  for _, a in ipairs(type(axis) == "table" and axis or { axis }) do
    local n = math.tointeger(a)
    if not n or n == 0 or n > nd or n < -nd then
      raise("%s: axis %s is out of range for a %d-d array (axes are 1 to %d, or -1 for the last)", who, tostring(a),
        nd, nd)
    end
    axes[n < 0 and nd + n + 1 or n] = true
  end
  return axes
end

local function reduction_args(name, c, axis, options, ...)
  if type(axis) == "table" and getmetatable(axis) == nil and options == nil then
    -- luda.sum(c, {axis = ...}) or luda.sum(c, {1, 2})
    local is_list = #axis > 0
    for k in pairs(axis) do if type(k) ~= "number" then is_list = false end end
    if not is_list then axis, options = nil, axis end
  end
  options = options or {}
  if select("#", ...) > 0 then raise("luda.%s: nothing may follow the options table", name) end
  if options.axis ~= nil then
    if axis ~= nil then raise("luda.%s: the axis is given twice (argument and option)", name) end
    axis = options.axis
  end
  if options.out ~= nil then raise("luda.%s: out= is not taken with chunked arrays", name) end
  return read_axes(axis, #c._shape, "luda." .. name), options
end

-- run(j, stream) for j = 1 .. n, the reductions of n blocks of one device into their
-- partials. On a CUDA device each goes on one of a few blocking streams of the device,
-- made once: CUDA orders them after the default stream's earlier work (the blocks, the
-- array of partials) and before its later work (the partials' combination), with no
-- event, and they overlap one another, so that one block's last wave and its small second
-- pass run beside the next block's work instead of after it. On the cpu, in order.
local STREAMS_PER_DEVICE = 4
local block_streams = {}
-- The j-th of those streams of `device` (in turn), nil on the cpu.
local function block_stream(device, j)
  if not tostring(device):match("^cuda") then return nil end
  local pool = block_streams[device]
  if not pool then
    pool = {}
    for i = 1, STREAMS_PER_DEVICE do pool[i] = luda.stream({ device = device, non_blocking = false }) end
    block_streams[device] = pool
  end
  return pool[(j - 1) % STREAMS_PER_DEVICE + 1]
end
local function on_block_streams(device, n, run)
  for j = 1, n do run(j, n > 1 and block_stream(device, j) or nil) end
end

-- The reduced result: each block reduced by `how.per_block(block, axes list, grid
-- position [, stream])` (a stream of block_stream's, which it may use or not) to a partial
-- (of the shape the result's blocks have: the kept axes, and the reduced ones as 1 with
-- keepdims), the partials of each output block combined in block
-- order by `how.combine` as a tree, and `how.finish` (where given) making the output block
-- of the combined partial. Where `how.stacked` is given and partials are on one device,
-- they are written into one array that stacked.final reduces along its first axis instead.
-- A chunked array, or a plain one when no axis is left. Of a distributed c, each rank
-- reduces its own blocks, and the partials move to the rank of their output block
-- (R.combine_groups); a plain result is sent from there to every rank.
local function reduce(c, axes, keepdims, how)
  local nd = #c._shape
  local finish = how.finish or function(p) return p end
  local list, shape, chunks = {}, {}, {}
  for a = 1, nd do
    if axes[a] then
      list[#list + 1] = a
      if keepdims then
        shape[#shape + 1] = 1
        chunks[#chunks + 1] = { 1 }
      end
    else
      shape[#shape + 1] = c._shape[a]
      chunks[#chunks + 1] = copy(c._chunks[a])
    end
  end
  local groups = {}
  local all, nb = positions(c._nb), c._nb
  for k = 1, #all do
    local g = all[k]
    local key = 0
    for a = 1, nd do
      if not axes[a] then key = key * nb[a] + g[a] end
    end
    key = key + 1
    local group = groups[key]
    if group then group[#group + 1] = k else groups[key] = { k } end
  end
  local stacked = how.stacked
  -- The partial of blocks `run` (flat indices, of this rank).
  local turn = 0
  local function partial(run)
    if stacked and #run > 1 and one_device(c._blocks, run) then
      -- The partials written into one array, reduced along its first axis: one launch to
      -- combine them, and no array per partial.
      local rshape = { #run }
      for a = 1, nd do
        if not axes[a] then rshape[#rshape + 1] = c._chunks[a][all[run[1]][a] + 1]
        elseif keepdims then rshape[#rshape + 1] = 1 end
      end
      local stack = luda.empty(rshape, stacked.dtype, { device = c._blocks[run[1]].device })
      on_block_streams(c._blocks[run[1]].device, #run, function(j, stream)
        stacked.into(c._blocks[run[j]], list, stack:slice(j - 1), stream)
      end)
      return stacked.final(stack)
    end
    if #run == 1 then
      -- An output block of one input block: the output blocks reduce on the device's
      -- streams in turn, as the blocks of one output block do above.
      turn = turn + 1
      local b = c._blocks[run[1]]
      return how.per_block(b, list, all[run[1]], #groups > 1 and block_stream(b.device, turn) or nil)
    end
    local parts = {}
    for j, k in ipairs(run) do parts[j] = how.per_block(c._blocks[k], list, all[k]) end
    return tree(parts, how.combine)
  end
  local owner_of = c._owners and function(k) return c._owners[k] end or nil
  local combined, owners = R.combine_groups(groups, owner_of, partial, how.combine)
  local blocks, dtype = {}, nil
  for key, p in ipairs(combined) do
    blocks[key] = p and finish(p)
    dtype = dtype or (blocks[key] and blocks[key].dtype)
  end
  if not dtype then
    -- A rank holding no output block: the dtype of one reduced from a block of ones.
    local ones, zeros = {}, {}
    for a = 1, nd do ones[a], zeros[a] = 1, 0 end
    dtype = finish(how.per_block(luda.ones(ones, c._dtype), list, zeros)).dtype
  end
  if #shape == 0 then
    if not owners then return blocks[1] end
    return R.share(blocks[1] or nil, owners[1], function() return luda.empty({}, dtype) end)
  end
  return make(shape, dtype, chunks, blocks, c._devices, owners)
end

-- The reduced axes of c, in order (1-based).
local function axes_list(c, axes)
  local l = {}
  for a = 1, #c._shape do if axes[a] then l[#l + 1] = a end end
  return l
end

-- The dtype of a reduction's result (NumPy's: sums and products of bools and integers in
-- 64 bits, of the same signedness; the others keep the dtype), without computing one.
local function reduced_dtype(name, dtype, given)
  if given then return given end
  if name == "sum" or name == "prod" or name == "nansum" or name == "nanprod" then
    if dtype == "bool" or dtype:find("^int") then return "int64" end
    if dtype:find("^uint") then return "uint64" end
  end
  return dtype
end

-- A reduction by luda[name]; partials combine by `combine` (a binary luda function), or,
-- where `final` names one and they are on one device, written into one array that
-- luda[final] reduces along its first axis.
local function simple_reduction(name, combine, final)
  local f = luda[name]
  local counts = name == "any" or name == "all" or name == "count_nonzero"
  local reduction
  reduction = public(function(c, ...)
    local axes, options = reduction_args(name, c, ...)
    if options.initial ~= nil then
      -- initial combined once with each result, as the array functions do.
      local rest = {}
      for k, v in pairs(options) do if k ~= "initial" then rest[k] = v end end
      local list = axes_list(c, axes)
      if #list == #c._shape then list = nil end
      return combine(reduction(c, list, rest), options.initial)
    end
    local nd = #c._shape
    local every = true
    for a = 1, nd do every = every and axes[a] end
    if every and not options.keepdims then
      -- Every axis: each block to a 0-d partial, the partials combined in order.
      local o = options.dtype ~= nil and { dtype = options.dtype } or nil
      local all = {}
      for k = 1, #c._blocks do all[k] = k end
      if final and not c._owners and #c._blocks > 1 and one_device(c._blocks, all) then
        local stack = luda.empty({ #c._blocks }, reduced_dtype(name, c._dtype, options.dtype),
                                 { device = c._blocks[1].device })
        on_block_streams(c._blocks[1].device, #c._blocks, function(k, stream)
          f(c._blocks[k], { dtype = options.dtype, out = stack:slice(k - 1), stream = stream })
        end)
        return luda[final](stack)
      end
      local partial = {}
      for _, b in ipairs(c._blocks) do
        if b then partial[#partial + 1] = f(b, o) end
      end
      if not c._owners then return tree(partial, combine) end
      local template = #partial == 0 and f(luda.zeros({ 1 }, c._dtype), o) or nil
      return R.across(#partial > 0 and tree(partial, combine) or nil, template, combine)
    end
    local keep = options.keepdims and true or false
    local o = { keepdims = keep, dtype = (not counts) and options.dtype or nil }
    local stacked = final and #axes_list(c, axes) > 0 and {
      dtype = reduced_dtype(name, c._dtype, options.dtype),
      into = function(b, list, out, stream)
        f(b, list, { keepdims = keep, dtype = options.dtype, out = out, stream = stream })
      end,
      final = function(stack) return luda[final](stack, 1) end,
    } or nil
    return reduce(c, axes, keep, {
      per_block = function(b, list, _, stream)
        if #list == 0 then return f(b, { axis = {}, keepdims = keep }) end
        if counts then return f(b, list, { keepdims = keep }) end
        return f(b, list, { keepdims = keep, dtype = o.dtype, stream = stream })
      end,
      combine = combine,
      stacked = stacked,
    })
  end)
  return reduction
end

local chunked_reduction = {
  sum = simple_reduction("sum", luda.add, "sum"),
  prod = simple_reduction("prod", luda.multiply, "prod"),
  max = simple_reduction("max", luda.maximum, "max"),
  min = simple_reduction("min", luda.minimum, "min"),
  nansum = simple_reduction("nansum", luda.add, "sum"),
  nanprod = simple_reduction("nanprod", luda.multiply, "prod"),
  nanmax = simple_reduction("nanmax", luda.fmax, "nanmax"),
  nanmin = simple_reduction("nanmin", luda.fmin, "nanmin"),
  any = simple_reduction("any", luda.logical_or),
  all = simple_reduction("all", luda.logical_and),
  count_nonzero = simple_reduction("count_nonzero", luda.add),
}

local function count_of(c, axes)
  local n = 1
  for a = 1, #c._shape do if axes[a] then n = n * c._shape[a] end end
  return n
end

local function is_inexact(dtype) return dtype:find("float") or dtype:find("complex") end

-- mean: the sum (in float64 for integers and bools, as NumPy's), over the count.
chunked_reduction.mean = public(function(c, ...)
  local axes, options = reduction_args("mean", c, ...)
  local dtype = options.dtype or (is_inexact(c._dtype) and c._dtype or "float64")
  local wide = (dtype == "float16" or dtype == "bfloat16") and "float32" or dtype
  local n = count_of(c, axes)
  local s = chunked_reduction.sum(c, { axis = axes_list(c, axes), keepdims = options.keepdims, dtype = wide })
  local m = s / n
  if wide ~= dtype then m = is_chunked(m) and methods.astype(m, dtype) or m:astype(dtype) end
  return m
end)

-- var: the mean of |x - mean|^2, over count - ddof (NumPy's two passes).
chunked_reduction.var = public(function(c, ...)
  local axes, options = reduction_args("var", c, ...)
  local list = axes_list(c, axes)
  -- Over every axis the mean is a plain 0-d array, which broadcasts as it is.
  local m = chunked_reduction.mean(c, { axis = list, keepdims = #list < #c._shape, dtype = options.dtype })
  local d = chunked_ufunc.subtract(c, m)
  local sq = c._dtype:find("complex") and chunked_ufunc.square(chunked_ufunc.abs(d)) or chunked_ufunc.multiply(d, d)
  local s = chunked_reduction.sum(sq, { axis = list, keepdims = options.keepdims })
  return s / math.max(count_of(c, axes) - (options.ddof or 0), 0)
end)

chunked_reduction.std = public(function(c, ...)
  local v = chunked_reduction.var(c, ...)
  return is_chunked(v) and chunked_ufunc.sqrt(v) or luda.sqrt(v)
end)

chunked_reduction.nanmean = public(function(c, ...)
  local axes, options = reduction_args("nanmean", c, ...)
  local list = axes_list(c, axes)
  local s = chunked_reduction.nansum(c, { axis = list, keepdims = options.keepdims,
                                          dtype = options.dtype or (is_inexact(c._dtype) and c._dtype or "float64") })
  local n = chunked_reduction.count_nonzero(chunked_ufunc.logical_not(chunked_ufunc.isnan(c)), list,
    { keepdims = options.keepdims })
  local r = s / n
  local want = options.dtype or (is_inexact(c._dtype) and c._dtype) or "float64"
  if r.dtype ~= want then r = r:astype(want) end  -- the sum's dtype, as NumPy's nanmean
  return r
end)

-- argmax and argmin: per block, the index (offset to the whole array's) and the value, a
-- partial of two arrays; combined keeping the better value, and of equal values (or NaNs)
-- the smaller index, as NumPy's first. (Block order is not index order over several axes:
-- a later block of the grid may hold an earlier index.)
-- NaN where v is NaN, of any dtype (v ~= v: false for bools and integers, which
-- luda.isnan refuses for bools).
local function nan_at(v) return luda.not_equal(v, v) end

local function arg_reduction(name, better)
  local value_of = name:find("max") and "max" or "min"
  if name:find("nan") then value_of = "nan" .. value_of end
  return public(function(c, ...)
    local axes, options = reduction_args(name, c, ...)
    local list = axes_list(c, axes)
    local nd = #c._shape
    if #list > 1 and #list < nd then raise("luda.%s: one axis at most", name) end
    local keep = options.keepdims and true or false
    local off = offsets_of(c._chunks)
    local flat_all = #list == nd and nd ~= 1
    local ones = {}
    for a = 1, nd do ones[a] = 1 end
    -- A block's index and value by luda[name], over every axis or along axis a. Of the nan
    -- forms, a slice of NaNs only gives index 0 and value NaN (luda's own nanargmax refuses
    -- it, but another block may hold a number of that slice).
    local function arg_of(b, a)
      local o = a and { keepdims = keep } or nil
      if not (name:find("nan") and is_inexact(b.dtype)) then return luda[name](b, a, o), luda[value_of](b, a, o) end
      local nan = luda.isnan(b)
      local filled = luda.where(a and luda.all(nan, a, { keepdims = true }) or luda.all(nan), 0, b)
      return luda[name](filled, a, o), luda.where(luda.all(nan, a, o), 0 / 0, luda[value_of](filled, a, o))
    end
    local function per_block(b, _, g)
      if flat_all then
        local idx, val = arg_of(b)
        -- The block's flat index, as a flat index of the whole array.
        local bs = b.shape
        local global = luda.zeros({}, "int64", { device = b.device })
        local rest = idx
        local stride_b = product(bs)
        for a = 1, nd do
          stride_b = stride_b // bs[a]
          local coord = luda.floor_divide(rest, stride_b) + off[a][g[a] + 1]
          rest = luda.mod(rest, stride_b)
          local stride_c = 1
          for a2 = a + 1, nd do stride_c = stride_c * c._shape[a2] end
          global = global + coord * stride_c
        end
        if keep then return { global:reshape(ones), val:reshape(ones) } end
        return { global, val }
      end
      local a = list[1]
      local idx, val = arg_of(b, a)
      return { idx + off[a][g[a] + 1], val }
    end
    local all_nan = false  -- a value left NaN by a nan form: a slice of NaNs only
    local result = reduce(c, axes, keep, {
      per_block = function(b, l, g) return luda.with_device(b.device, per_block, b, l, g) end,
      combine = function(p, q)
        local take = luda.with_device(p[1].device, function()
          local tie = luda.logical_or(luda.equal(q[2], p[2]), luda.logical_and(nan_at(q[2]), nan_at(p[2])))
          return luda.logical_or(better(q[2], p[2]), luda.logical_and(tie, luda.less(q[1], p[1])))
        end)
        return { luda.where(take, q[1], p[1]), luda.where(take, q[2], p[2]) }
      end,
      finish = function(p)
        if name:find("nan") then all_nan = all_nan or luda.any(nan_at(p[2])):item() end
        return p[1]
      end,
    })
    if name:find("nan") then
      -- Every rank raises it, or none: the ranks' later calls stay in step.
      if c._owners and rank_count() > 1 then all_nan = luda.dist.allreduce(luda.array(all_nan), "max"):item() end
      if all_nan then raise("%s: All-NaN slice encountered", name) end
    end
    return result
  end)
end

-- q is better than p: greater (less), or NaN where p is not (NumPy: the first NaN wins).
local function better_max(q, p) return luda.logical_or(luda.greater(q, p), luda.logical_and(nan_at(q), luda.logical_not(nan_at(p)))) end
local function better_min(q, p) return luda.logical_or(luda.less(q, p), luda.logical_and(nan_at(q), luda.logical_not(nan_at(p)))) end
chunked_reduction.argmax = arg_reduction("argmax", better_max)
chunked_reduction.argmin = arg_reduction("argmin", better_min)
-- Of the nan forms: greater (less), or a number where p is NaN (a slice of NaNs only).
local function number_over_nan(q, p) return luda.logical_and(nan_at(p), luda.logical_not(nan_at(q))) end
chunked_reduction.nanargmax = arg_reduction("nanargmax", function(q, p) return luda.logical_or(luda.greater(q, p), number_over_nan(q, p)) end)
chunked_reduction.nanargmin = arg_reduction("nanargmin", function(q, p) return luda.logical_or(luda.less(q, p), number_over_nan(q, p)) end)

-- A reduction's result r over the whole base of a chunked array of `chunks`, reduced along
-- `axes`: r itself when no axis is left, else a chunked array of the kept axes' chunks
-- (and 1 for each reduced one with keepdims) whose blocks are views of r.
local function whole_reduced(r, chunks, axes, keepdims, devices)
  local out = {}
  for a = 1, #chunks do
    if not axes[a] then out[#out + 1] = copy(chunks[a])
    elseif keepdims then out[#out + 1] = { 1 } end
  end
  if #out == 0 then return r end
  return of_base(r, out, devices)
end

-- The arguments of a reduction checked as the array function checks them (its options,
-- axes and dtypes): the function run once on a one-element array of c's dtype and
-- dimensions, for each new form of the arguments, so that chunked arrays take and refuse
-- what arrays do.
local checked_forms = {}
local function check_like_plain(name, plain, c, ...)
  local args, key = table.pack(...), { name, #c._shape, c._dtype }
  for i = 1, args.n do
    local v = args[i]
    if type(v) == "table" and getmetatable(v) == nil then
      local keys = {}
      for k, x in pairs(v) do keys[#keys + 1] = tostring(k) .. "=" .. type(x) .. ":" .. tostring(x) end
      table.sort(keys)
      key[#key + 1] = "{" .. table.concat(keys, ",") .. "}"
    else
      key[#key + 1] = type(v) .. ":" .. tostring(v)
    end
  end
  key = table.concat(key, "|")
  if checked_forms[key] then return end
  local ones = {}
  for a = 1, #c._shape do ones[a] = 1 end
  local device
  for _, b in ipairs(c._blocks) do
    if b and not device then device = b.device end
  end
  plain(luda.ones(ones, c._dtype, { device = device }), ...)
  checked_forms[key] = true
end

-- Each reduction: over the base where c has one (the arguments are the array function's
-- own), else block by block, its arguments first checked as the array function checks them.
for name, f in pairs(chunked_reduction) do
  local g = f
  if luda[name] then
    local plain = luda[name]
    g = public(function(c, ...)
      local axes, options = reduction_args(name, c, ...)
      if c._base and not c._owners then
        return whole_reduced(plain(c._base, ...), c._chunks, axes, options.keepdims, c._devices)
      end
      check_like_plain(name, plain, c, ...)
      return f(c, ...)
    end)
  end
  methods[name] = g
  if luda[name] then IMPL[luda[name]] = g end
end

return { read_axes = read_axes, reduce = reduce, whole_reduced = whole_reduced }

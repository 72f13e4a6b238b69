-- luda.chunked across ranks (docs/chunked.md, "Across processes"): which rank holds each
-- block of a distributed chunked array, and how blocks and partial results move between
-- the ranks through luda.dist.
--
-- A move is a send on one rank and a recv on another. The owners of every block are known
-- on every rank, so every rank walks the same list of moves in the same order, taking part
-- in its own only. Each send then meets its recv even where MPI holds a large send until
-- the recv comes: the earliest move not yet done always has both its ranks at it.
local luda = require "luda"
local is_array = require("luda.chunked.devices").is_array
local tree = require("luda.chunked.devices").tree

local R = {}

-- The tag of every message sent here, so that a script's own sends and recvs (tag 0 unless
-- given) never meet them: the largest tag every MPI allows.
local TAG = 32767

-- This process's rank and the number of ranks (0 and 1 without mpirun).
function R.rank() return luda.dist and luda.dist.rank() or 0 end
function R.count() return luda.dist and luda.dist.size() or 1 end

-- Each of `n` blocks' ranks, spread over the ranks in order, neighbours together (block k
-- on rank k * N // n).
function R.spread(n)
  local ranks, owners = R.count(), {}
  for k = 0, n - 1 do owners[k + 1] = (k * ranks) // math.max(n, 1) end
  return owners
end

-- The devices of this rank's blocks among `owners`, spread over `devices` in order as
-- placement spreads an array's blocks (nil at other ranks' blocks).
function R.placed(owners, devices)
  local me, count = R.rank(), 0
  for _, o in ipairs(owners) do if o == me then count = count + 1 end end
  local where, j = {}, 0
  for k, o in ipairs(owners) do
    if o == me then
      where[k] = devices[(j * #devices) // math.max(count, 1) + 1]
      j = j + 1
    end
  end
  return where
end

-- Each block's rank when `n` blocks are spread over the ranks (neighbours together), and
-- this rank's blocks' devices: its own blocks spread over `devices` as placement does.
function R.place(n, devices)
  local owners = R.spread(n)
  return owners, R.placed(owners, devices)
end

-- A partial's arrays: an array alone, or a list of them (argmax's index and value).
local function arrays_of(p) return is_array(p) and { p } or p end

-- New arrays of p's shapes and dtypes, on its device: what receives a partial like p.
local function like(p)
  if is_array(p) then return luda.empty(p.shape, p.dtype, { device = p.device }) end
  local out = {}
  for i, a in ipairs(p) do out[i] = like(a) end
  return out
end

-- x (an array, or a list of arrays) moved from rank `from` to rank `dest`: returned on
-- `dest`, where it is received into `buffers()` (new arrays of x's shapes and dtypes),
-- and nil on the other ranks. Every rank calls it, with the same ranks.
function R.move(x, from, dest, buffers)
  local me = R.rank()
  if from == dest then return me == dest and x or nil end
  if me == from then
    for _, a in ipairs(arrays_of(x)) do luda.dist.send(a, dest, TAG) end
    return nil
  end
  if me ~= dest then return nil end
  local got = buffers()
  for _, a in ipairs(arrays_of(got)) do luda.dist.recv(a, from, TAG) end
  return got
end

-- A mover that takes each thing to each rank once: fetch(key, x, from, dest, buffers) is
-- R.move, where `key` names x; a later fetch of that key to that rank moves nothing and
-- returns what the first one returned.
function R.fetcher()
  local seen = {}
  return function(key, x, from, dest, buffers)
    local k = tostring(key) .. "@" .. dest
    local got = seen[k]
    if got == nil then
      got = R.move(x, from, dest, buffers) or false
      seen[k] = got
    end
    return got or nil
  end
end

-- Output blocks combined from partials. groups[key] lists output block key's members
-- (blocks reduced into it, or terms of a product), in order; `partial(run)` makes the
-- partial of a run of consecutive members (a list) on its rank, and `combine` joins two.
-- With owner_of(member), each member's rank, every rank makes the partials of its own runs;
-- they move to the output block's rank, which combines them in member order. That rank
-- is the one holding most of the members (so nothing moves where each output block has
-- one), among equals the one an even spread of the output blocks gives it where that is
-- one of them, else the first in member order. Returns each output block's partial (false
-- where another rank's) and, with owner_of, the output blocks' ranks.
function R.combine_groups(groups, owner_of, partial, combine)
  local out = {}
  if not owner_of then
    for key, members in ipairs(groups) do out[key] = partial(members) end
    return out
  end
  local me, even, owners = R.rank(), R.spread(#groups), {}
  for key, members in ipairs(groups) do
    local runs, count = {}, {}
    for _, m in ipairs(members) do
      local r = owner_of(m)
      local last = runs[#runs]
      if last and last.rank == r then last[#last + 1] = m else runs[#runs + 1] = { m, rank = r } end
      count[r] = (count[r] or 0) + 1
    end
    local home, most = even[key], count[even[key]] or 0
    for _, run in ipairs(runs) do
      if count[run.rank] > most then home, most = run.rank, count[run.rank] end
    end
    owners[key] = home
    local parts, mine = {}, nil
    for i, run in ipairs(runs) do
      if run.rank == me then
        parts[i] = partial(run)
        mine = mine or parts[i]
      end
    end
    local list = {}
    for i, run in ipairs(runs) do
      list[#list + 1] = R.move(parts[i], run.rank, home, function() return like(mine) end)
    end
    out[key] = home == me and tree(list, combine) or false
  end
  return out, owners
end

-- A partial made on the ranks holding some blocks (nil on the others; `template`, a partial
-- of the same shapes and dtypes, stands in for it there), combined across the ranks in rank
-- order; every rank gets the result.
function R.across(partial, template, combine)
  if R.count() == 1 then return partial or template end
  local gathered = luda.dist.allgather(partial or template)
  local flags = luda.dist.allgather(luda.array(partial ~= nil, "bool", { device = gathered.device })):totable()
  local list = {}
  for r, held in ipairs(flags) do
    if held then list[#list + 1] = gathered:slice(r - 1) end
  end
  return tree(list, combine):copy()
end

-- x, held by rank `root` (nil elsewhere), on every rank; `buffer()` makes an array of its
-- shape and dtype where it is not held.
function R.share(x, root, buffer)
  if R.count() == 1 then return x end
  return luda.dist.broadcast(x or buffer(), root)
end

return R

-- luda.chunked's linear algebra (docs/chunked.md): matmul of chunked arrays, and QR and SVD
-- of tall-and-skinny ones by TSQR.
--
-- Adds them to the chunked array's methods and to the chunked forms of luda's functions.
local luda = require "luda"
local internal = require "luda.internal"
local errors = require "luda.chunked.errors"
local grid = require "luda.chunked.grid"
local array = require "luda.chunked.array"
local rechunk = require "luda.chunked.rechunk"
local R = require "luda.chunked.ranks"

local raise, public = errors.raise, errors.public
local block_shape, copy, flat, positions = grid.block_shape, grid.copy, grid.flat, grid.positions
local device_name = require("luda.chunked.devices").device_name
local is_array = require("luda.chunked.devices").is_array
local to = require("luda.chunked.devices").to
local tree = require("luda.chunked.devices").tree
local from_array = require("luda.chunked.constructors").from_array
local FIELDS, IMPL, is_chunked, make, methods = array.FIELDS, array.IMPL, array.is_chunked, array.make, array.methods
local rank_count = R.count

-- ---- linear algebra --------------------------------------------------------------------------

-- matmul of a 2-d chunked a and a 2-d (or 1-d) chunked or plain b: block (i, j) is the sum
-- over k of a's (i, k) times b's (k, j), b's row chunks made a's column chunks. Where a or b
-- is distributed, each term is computed on the rank of a's block (else of b's), b's blocks
-- sent to the ranks whose terms need them, and the terms summed as a reduction's partials
-- are (R.combine_groups): on the rank holding most of an output block's terms.
local function matmul(a, b)
  if not is_chunked(a) then
    if is_array(a) then a = from_array(a, { -1, -1 }, { devices = b._devices }) else raise("matmul: operands must be arrays") end
  end
  if #a._shape ~= 2 then raise("matmul: chunked operands must be 2-d (got %d-d)", #a._shape) end
  local vector = (is_chunked(b) and #b._shape or b.ndim) == 1
  if is_array(b) then
    b = from_array(b, vector and { a._chunks[2] } or { a._chunks[2], -1 }, { devices = a._devices })
  end
  if b._shape[1] ~= a._shape[2] then
    raise("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size %d is different from %d)",
      b._shape[1], a._shape[2])
  end
  local want = vector and { a._chunks[2] } or { a._chunks[2], b._chunks[2] }
  b = rechunk(b, want)
  local I, K = a._nb[1], a._nb[2]
  local J = vector and 1 or b._nb[2]
  local function a_at(i, k) return flat(a._nb, { i, k }) end
  local function b_at(k, j) return vector and k + 1 or flat(b._nb, { k, j }) end
  local owner_of
  if a._owners then owner_of = function(m) return a._owners[a_at(m[1], m[2])] end
  elseif b._owners then owner_of = function(m) return b._owners[b_at(m[2], m[3])] end end
  -- b's blocks on the ranks of the terms that take them (a's are there already: a term is
  -- on a's block's rank, or a is on every rank).
  local b_here = b._blocks
  if a._owners and b._owners then
    local fetch, bpos = R.fetcher(), positions(b._nb)
    b_here = {}
    for kb, blk in ipairs(b._blocks) do b_here[kb] = blk end
    for i = 0, I - 1 do
      for j = 0, J - 1 do
        for k = 0, K - 1 do
          local kb = b_at(k, j)
          b_here[kb] = fetch(kb, b._blocks[kb] or nil, b._owners[kb], owner_of({ i, k, j }), function()
            return luda.empty(block_shape(b._chunks, bpos[kb]), b._dtype)
          end) or b_here[kb]
        end
      end
    end
  end
  -- Output block (i, j): the terms (i, k, j) over k, in order.
  local groups = {}
  for i = 0, I - 1 do
    for j = 0, J - 1 do
      local terms = {}
      for k = 0, K - 1 do terms[k + 1] = { i, k, j } end
      groups[#groups + 1] = terms
    end
  end
  local blocks, owners = R.combine_groups(groups, owner_of, function(run)
    local terms = {}
    for t, m in ipairs(run) do
      local ab, bb = a._blocks[a_at(m[1], m[2])], b_here[b_at(m[2], m[3])]
      terms[t] = luda.with_device(ab.device, luda.matmul, ab, to(bb, ab.device))
    end
    return tree(terms, luda.add)
  end, luda.add)
  local dtype
  for _, blk in ipairs(blocks) do dtype = dtype or (blk and blk.dtype) end
  dtype = dtype or luda.matmul(luda.ones({ 1, 1 }, a._dtype), luda.ones(vector and { 1 } or { 1, 1 }, b._dtype)).dtype
  if vector then return make({ a._shape[1] }, dtype, { copy(a._chunks[1]) }, blocks, a._devices, owners) end
  return make({ a._shape[1], b._shape[2] }, dtype, { copy(a._chunks[1]), copy(b._chunks[2]) }, blocks, a._devices,
    owners)
end
methods.matmul = public(matmul)
methods.dot = methods.matmul
IMPL[luda.matmul] = methods.matmul
if luda.dot then IMPL[luda.dot] = methods.matmul end

-- TSQR (Dask's tsqr): a QR of each block of rows, then a QR of the stacked R factors; Q's
-- blocks are each block's Q times its rows of the second Q. For a tall array of one column
-- of blocks, each at least as tall as the array is wide.
local function tsqr(c, who)
  if #c._shape ~= 2 then raise("%s: a chunked array must be 2-d, got %d-d", who, #c._shape) end
  if c._nb[2] ~= 1 then
    raise("%s: the array has %d blocks across; TSQR takes one column of blocks (c:rechunk({%s, -1}))", who, c._nb[2],
      tostring(FIELDS.chunksize(c)[1]))
  end
  local n = c._shape[2]
  for i, e in ipairs(c._chunks[1]) do
    if e < n then
      raise("%s: block %d has %d rows, fewer than the %d columns; TSQR needs blocks at least as tall as the array is wide (c:rechunk)",
        who, i - 1, e, n)
    end
  end
  -- The blocks' QRs, each device's on a thread of its own (a factorization holds its
  -- thread until it ends).
  local mine, at = {}, {}
  for k, b in ipairs(c._blocks) do
    if b then
      mine[#mine + 1] = b
      at[#mine] = k
    end
  end
  local qs, rs = {}, {}
  local q_list, r_list = internal.qr_each(mine, "reduced")
  for j, k in ipairs(at) do qs[k], rs[k] = q_list[j], r_list[j] end
  -- The R factors, on one device (of a distributed array: every rank gets every R, from
  -- its block's rank, and factors their stack itself).
  local home
  for _, b in ipairs(c._blocks) do home = home or (b and b.device) end
  home = home or device_name(luda.current_device())
  local moved = {}
  for k = 1, #c._blocks do
    local r = rs[k]
    if c._owners and rank_count() > 1 then
      r = luda.dist.broadcast(r or luda.empty({ n, n }, c._dtype, { device = home }), c._owners[k])
    end
    moved[k] = to(r, home)
  end
  local q2, r = luda.with_device(home, luda.linalg.qr, luda.concatenate(moved, 1))
  local blocks, dtype = {}, q2.dtype
  for k = 1, #c._blocks do
    local q = qs[k]
    if q then
      local rows = q2:slice({ (k - 1) * n, k * n })
      blocks[k] = luda.with_device(q.device, luda.matmul, q, to(rows, q.device))
    else
      blocks[k] = false
    end
  end
  return make(copy(c._shape), dtype, { copy(c._chunks[1]), { n } }, blocks, c._devices, c._owners), r
end

local function chunked_qr(c, mode)
  if mode ~= nil and mode ~= "reduced" and mode ~= "r" then
    raise("luda.linalg.qr: chunked arrays take mode 'reduced' or 'r' (TSQR), got '%s'", tostring(mode))
  end
  local q, r = tsqr(c, "luda.linalg.qr")
  if mode == "r" then return r end
  return q, r
end

-- SVD through TSQR: R = U_R S Vh, so U = Q U_R (a chunked array like Q); S and Vh plain.
local function chunked_svd(c, options)
  options = options or {}
  if options.full_matrices then
    raise("luda.linalg.svd: chunked arrays give the thin SVD; pass {full_matrices = false}")
  end
  local q, r = tsqr(c, "luda.linalg.svd")
  local home = r.device
  local ur, s, vh = luda.with_device(home, luda.linalg.svd, r, { full_matrices = false })
  if options.compute_uv == false then return s end
  local blocks = {}
  for k, b in ipairs(q._blocks) do
    blocks[k] = b and luda.with_device(b.device, luda.matmul, b, to(ur, b.device)) or false
  end
  return make(copy(q._shape), q._dtype, copy(q._chunks), blocks, q._devices, q._owners), s, vh
end

IMPL[luda.linalg.qr] = public(chunked_qr)
IMPL[luda.linalg.svd] = public(chunked_svd)
if luda.linalg.svdvals then
  IMPL[luda.linalg.svdvals] = public(function(c) return chunked_svd(c, { compute_uv = false }) end)
end

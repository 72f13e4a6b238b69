-- Distributed chunked arrays under mpirun (docs/chunked.md, "Across processes"): ctest runs
-- this spec in busted inside `luda` on 3 ranks; it holds for any number of ranks from two
-- on. Every rank makes the same data (a seeded random array, and shapes and chunks from
-- Lua's seeded generator), so each can check the distributed results against the same
-- work on the whole array; each rank must hold and compute its own blocks only.
local luda = require "luda"
local support = require "support"

local RANK, SIZE = luda.dist.rank(), luda.dist.size()
local error_of = support.error_of

-- A distributed result holds exactly the blocks of its owners that are this rank.
local function check_held(c, what)
  assert.is_true(c.distributed, what .. ": distributed")
  local blocks = c:blocks()
  for k, owner in ipairs(c.owners) do
    assert.are.equal(owner == RANK, blocks[k] ~= false, ("%s: block %d (rank %d) on rank %d"):format(what, k - 1, owner, RANK))
  end
end

-- Equal arrays: shape, dtype, and values (NaN equal to NaN; floats within rtol). A chunked
-- result must be distributed, hold its own blocks only, and is gathered first.
local function check(got, want, what, rtol)
  if luda.chunked.is_chunked(got) then
    check_held(got, what)
    got = got:compute()
  end
  support.assert_array_equal(got, want, what, rtol)
end

-- A random shape of 1 to 3 axes (extents 1 to 9, or 0 where `empty`), and random chunks for
-- it: per axis a block size or a list of uneven extents (some 1, and a whole axis).
local function random_shape(empty)
  local s = {}
  for a = 1, math.random(1, 3) do s[a] = math.random(1, 9) end
  if empty then s[math.random(1, #s)] = 0 end
  return s
end
local random_chunks = support.random_chunks

local seed = 100
local function random_array(shape, lo, hi)
  seed = seed + 1
  lo, hi = lo or -10, hi or 10
  return luda.random.random(shape, "float64", { seed = seed }) * (hi - lo) + lo
end

local function dist(x, chunks) return luda.chunked(x, chunks, { distributed = true }) end

-- Every non-empty set of axes of an nd-d array, as a list (and the last also as -1).
local function axis_sets(nd)
  local out = {}
  for mask = 1, (1 << nd) - 1 do
    local set = {}
    for a = 1, nd do if mask & (1 << (a - 1)) ~= 0 then set[#set + 1] = a end end
    out[#out + 1] = set
  end
  out[#out + 1] = -1
  return out
end
local function axes_text(axis) return type(axis) == "table" and "{" .. table.concat(axis, ",") .. "}" or tostring(axis) end

describe("distributed chunked arrays", function()
  before_each(function() math.randomseed(4099) end)

  it("spread their blocks over the ranks, neighbours together, each rank holding its own", function()
    local x = luda.random.random({ 70, 5 }, "float64", { seed = 11 })
    local c = luda.chunked(x, { 10, -1 }, { distributed = true })
    -- Block k of the 7 on rank k * SIZE // 7 (docs/chunked.md): rank r holds the run of
    -- blocks from ceil(r * 7 / SIZE) up to ceil((r + 1) * 7 / SIZE), some runs empty where
    -- there are more ranks than blocks.
    local owners = {}
    for r = 0, SIZE - 1 do
      local first, after = -(-r * 7 // SIZE), -(-(r + 1) * 7 // SIZE)  -- ceilings
      for _ = first, after - 1 do owners[#owners + 1] = r end
    end
    assert.are.same(owners, c.owners)
    for k, owner in ipairs(c.owners) do
      if owner == RANK then
        check(c:block(k - 1, 0), x:slice({ (k - 1) * 10, k * 10 }), "block " .. (k - 1))
      else
        assert.truthy(error_of(function() return c:block(k - 1, 0) end):find(
          ("block %%(%d, 0%%) lives on rank %d, and this is rank %d"):format(k - 1, owner, RANK)))
      end
    end
    assert.truthy(tostring(c):find(", ranks=" .. SIZE .. ">$"))
  end)

  it("compute elementwise work and map_blocks rank by rank, and gather with compute()", function()
    local x = luda.random.random({ 70, 5 }, "float64", { seed = 12 })
    local y = luda.random.random({ 5 }, "float64", { seed = 13 })
    local c = luda.chunked(x, { 10, -1 }, { distributed = true })
    local calls = 0
    local m = luda.map_blocks(function(b) calls = calls + 1; return b * 2 end, c)
    local mine = 0
    for _, owner in ipairs(c.owners) do if owner == RANK then mine = mine + 1 end end
    assert.are.equal(mine, calls)
    check((c * 3 + y):compute(), x * 3 + y, "elementwise")
    check(luda.exp(c):compute(), luda.exp(x), "exp")
    check(m:compute(), x * 2, "map_blocks")
    local only = (c + 1):compute({ root = 1 })
    if RANK == 1 then check(only, x + 1, "compute to rank 1") else assert.is_nil(only) end
  end)

  it("run the kernel kinds rank by rank: elementwise kinds, reduction kernels and f:reduce", function()
    local x = random_array({ 23, 6 })
    local w = random_array({ 6 })
    local c = dist(x, { 4, 4 })
    local fma = luda.vectorize(function(a, b) return a * b + 1 end)
    local split = luda.elementwise("T x, T y", "T s, T d", "s = x + y\nd = x - y", "split")
    local dnn = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnn")
    local add = luda.vectorize(function(a, b) return a + b end)
    check(fma(c, w), fma(x, w), "vectorize")
    local sd, dd = split(c, x)
    check(sd, x + x, "elementwise, first output")
    check(dd, x - x, "elementwise, second output")
    for _, axis in ipairs({ false, 1, 2, -1 }) do
      local o = axis and { axis = axis } or {}
      check(dnn(c, w, 0.5, o), dnn(x, w, 0.5, o), "reduction kernel, axis " .. tostring(axis), 1e-12)
      check(dnn(c, dist(x, { 7, 2 }), -1, o), dnn(x, x, -1, o), "reduction kernel of two grids, axis " .. tostring(axis),
            1e-12)
    end
    check(add:reduce(c, 1), add:reduce(x, 1), "f:reduce along axis 1", 1e-12)
    check(add:reduce(c, { 1, 2 }), add:reduce(x, { 1, 2 }), "f:reduce over both", 1e-12)
    -- A rank that holds no block still gives the 0-d result, and a chunked one that later
    -- work takes (its devices are the operands').
    local small = dist(luda.arange(4):astype("float64"), { 4 })
    check(dnn(small, 2, 1), dnn(luda.arange(4):astype("float64"), 2, 1), "one block, on rank 0")
    local x12 = luda.arange(12):astype("float64"):reshape({ 3, 4 })
    local two = dist(x12, { 3, 2 })  -- 2 blocks: a third rank holds none
    local r = dnn(two, 1, 0, { axis = 2 })
    check(r:rechunk(1), dnn(x12, 1, 0, { axis = 2 }), "rechunked after a reduction kernel")
  end)

  it("reduce over every axis across the ranks", function()
    local x = luda.random.random({ 70, 5 }, "float64", { seed = 14 })
    local c = luda.chunked(x, { 10, -1 }, { distributed = true })
    for _, name in ipairs({ "sum", "prod", "max", "min", "mean", "var", "std", "nansum", "nanmax" }) do
      check(luda[name](c), luda[name](x), name, 1e-12)
    end
    local b = luda.greater(x, 0.5)
    local cb = luda.chunked(b, { 10, -1 }, { distributed = true })
    check(luda.count_nonzero(cb), luda.count_nonzero(b), "count_nonzero")
    check(luda.any(cb), luda.any(b), "any")
    check(luda.all(cb), luda.all(b), "all")
    -- A rank with no block of a small array still takes part.
    local small = luda.chunked(luda.arange(4):astype("float64"), { 4 }, { distributed = true })
    assert.are.same({ 0 }, small.owners)
    check(luda.sum(small), luda.array(6.0), "one block, on rank 0")
  end)

  it("give qr and svd by TSQR across the ranks", function()
    local x = luda.random.random({ 90, 6 }, "float64", { seed = 15 })
    local c = luda.chunked(x, { 15, -1 }, { distributed = true })
    local q, r = luda.linalg.qr(c)
    assert.is_true(q.distributed)
    local qa = q:compute()
    assert.is_true(luda.allclose(luda.matmul(qa, r), x, { atol = 1e-12 }))
    assert.is_true(luda.allclose(luda.matmul(qa.T, qa), luda.eye(6), { atol = 1e-12 }))
    local u, s, vh = luda.linalg.svd(c, { full_matrices = false })
    local s1 = luda.linalg.svd(x, { compute_uv = false })
    assert.is_true(luda.allclose(s, s1, { rtol = 0, atol = 1e-10 * s1[0] }))
    assert.is_true(luda.allclose(luda.matmul(u:compute() * s, vh), x, { atol = 1e-10 }))
  end)

  it("reduce along any axes, with keepdims, each output block on one rank", function()
    local names = { "sum", "prod", "max", "min", "mean", "var", "std", "nansum", "nanprod", "nanmax", "nanmin",
                    "nanmean" }
    for _ = 1, 12 do
      local shape = random_shape()
      local x = random_array(shape, 0.5, 1.5)
      if math.random() < 0.5 then x[{ 0 }] = 0 / 0 end  -- NaNs in the first row
      local chunks = random_chunks(shape)
      local c = dist(x, chunks)
      local what = ("%s in %s"):format(table.concat(shape, "x"), luda.chunked(x, chunks))
      for _, axis in ipairs(axis_sets(#shape)) do
        for _, name in ipairs(names) do
          local w = ("%s axis %s of %s"):format(name, axes_text(axis), what)
          check(luda[name](c, axis), luda[name](x, axis), w, 1e-12)
          check(c[name](c, axis, { keepdims = true }), x[name](x, axis, { keepdims = true }), w .. " keepdims", 1e-12)
        end
        local w = ("axis %s of %s"):format(axes_text(axis), what)
        check(luda.var(c, axis, { ddof = 1 }), luda.var(x, axis, { ddof = 1 }), "var ddof=1 " .. w, 1e-12)
        check(luda.sum(c, axis, { dtype = "float32" }), luda.sum(x, axis, { dtype = "float32" }), "sum float32 " .. w, 1e-6)
        -- A transposed array's owners run across the grid, not along it.
        check(luda.sum(c.T, axis), luda.sum(x.T, axis), "sum of the transpose " .. w, 1e-12)
        check(luda.max(c.T, axis, { keepdims = true }), luda.max(x.T, axis, { keepdims = true }), "max of the transpose " .. w)
      end
      local b = luda.greater(x, 1)
      local cb = dist(b, random_chunks(shape))
      local xi = luda.floor(x * 7):astype("int32")
      local ci = dist(xi, random_chunks(shape))
      for _, axis in ipairs(axis_sets(#shape)) do
        for _, name in ipairs({ "any", "all", "count_nonzero" }) do
          check(luda[name](cb, axis), luda[name](b, axis), name .. " axis " .. axes_text(axis))
          check(luda[name](cb, axis, { keepdims = true }), luda[name](b, axis, { keepdims = true }),
            name .. " keepdims axis " .. axes_text(axis))
        end
        check(luda.sum(ci, axis), luda.sum(xi, axis), "int32 sum (to int64) axis " .. axes_text(axis))
        check(luda.mean(ci, axis), luda.mean(xi, axis), "int32 mean axis " .. axes_text(axis), 1e-12)
      end
    end
  end)

  it("reduce arrays with an empty axis, and of one element, along each axis", function()
    for _ = 1, 6 do
      local shape = random_shape(true)
      local x = random_array(shape)
      local c = dist(x, random_chunks(shape))
      for _, axis in ipairs(axis_sets(#shape)) do
        for _, name in ipairs({ "sum", "prod", "nansum", "any", "all", "count_nonzero" }) do
          local w = ("%s axis %s of %s"):format(name, axes_text(axis), table.concat(shape, "x"))
          check(luda[name](c, axis), luda[name](x, axis), w, 1e-12)
          check(luda[name](c, axis, { keepdims = true }), luda[name](x, axis, { keepdims = true }), w .. " keepdims", 1e-12)
        end
      end
    end
    local one = luda.array({ { 2.5 } })
    local c = dist(one, 1)
    for _, axis in ipairs({ 1, 2, { 1, 2 } }) do
      check(luda.max(c, axis), luda.max(one, axis), "max of one element, axis " .. axes_text(axis))
      check(luda.argmin(c, type(axis) == "number" and axis or nil), luda.argmin(one, type(axis) == "number" and axis or nil),
        "argmin of one element")
    end
  end)

  it("give argmax and argmin along each axis and over all, the first of equals and the first NaN", function()
    for _ = 1, 12 do
      local shape = random_shape()
      -- Few values, so that equal ones are in several blocks; NaNs in some.
      local x = luda.floor(random_array(shape, 0, 3))
      if math.random() < 0.5 then x = luda.where(luda.greater(random_array(shape, 0, 1), 0.8), 0 / 0, x) end
      local c = dist(x, random_chunks(shape))
      local w = table.concat(shape, "x") .. " in " .. tostring(c)
      for _, name in ipairs({ "argmax", "argmin" }) do
        check(luda[name](c), luda[name](x), name .. " of " .. w)
        check(c[name](c, { keepdims = true }), x[name](x, { keepdims = true }), name .. " keepdims of " .. w)
        for a = 1, #shape do
          check(luda[name](c, a), luda[name](x, a), ("%s axis %d of %s"):format(name, a, w))
          check(luda[name](c, a, { keepdims = true }), luda[name](x, a, { keepdims = true }),
            ("%s axis %d keepdims of %s"):format(name, a, w))
        end
        check(luda[name](c, -1), luda[name](x, -1), name .. " axis -1 of " .. w)
      end
      -- The nan forms skip NaNs; each block here has a number in every slice.
      local y = luda.floor(random_array(shape, 0, 3))
      local cy = dist(y, random_chunks(shape))
      for _, name in ipairs({ "nanargmax", "nanargmin" }) do
        check(luda[name](cy), luda[name](y), name .. " of " .. table.concat(shape, "x"))
        for a = 1, #shape do check(luda[name](cy, a), luda[name](y, a), ("%s axis %d"):format(name, a)) end
      end
    end
    local y = luda.array({ { 1, 0 / 0, 5 }, { 0 / 0, 7, 2 }, { 3, 4, 0 / 0 }, { 7, 1, 9 } })
    local cy = dist(y, { 1, 2 })
    for _, name in ipairs({ "nanargmax", "nanargmin" }) do
      check(luda[name](cy), luda[name](y), name .. " with NaNs")
      check(luda[name](cy, 1), luda[name](y, 1), name .. " with NaNs, axis 1")
    end
  end)

  it("rechunk, each new block sent to its rank from the ranks of its pieces", function()
    for i = 1, 20 do
      local shape = random_shape(i % 5 == 0)
      local x = random_array(shape)
      local from, to = random_chunks(shape), random_chunks(shape)
      local c = dist(x, from)
      local r = c:rechunk(to)
      local w = ("%s to %s"):format(tostring(c), tostring(luda.chunked(x, to)))
      -- Placed as a new array of those chunks is: they combine without moving.
      assert.are.same(dist(x, to).owners, r.owners, w)
      check(r, x, "rechunk " .. w)
      check(luda.rechunk(c, to) * 2, x * 2, "luda.rechunk " .. w)
      local reversed = {}
      for a = 1, #to do reversed[a] = to[#to - a + 1] end
      check(c.T:rechunk(reversed), x.T, "rechunk of the transpose " .. w)
    end
    -- The script's own messages (tag 0) and rechunk's do not meet.
    local mine = luda.arange(3)
    if RANK == 0 then luda.dist.send(mine, 1) end
    local x = random_array({ 12, 4 })
    check(dist(x, { 4, 2 }):rechunk({ 3, 4 }), x, "rechunk between a send and its recv")
    if RANK == 1 then check(luda.dist.recv(luda.empty({ 3 }, "int64"), 0), mine, "the script's own message") end
  end)

  it("combine distributed arrays whose blocks are on other ranks, and with chunked ones", function()
    for _ = 1, 12 do
      local shape = random_shape()
      local x, y, z = random_array(shape), random_array(shape), random_array(shape)
      local cx, cy = dist(x, random_chunks(shape)), dist(y, random_chunks(shape))
      local w = ("%s and %s"):format(tostring(cx), tostring(cy))
      check(cx + cy, x + y, "add " .. w)
      check(luda.hypot(cy, cx), luda.hypot(y, x), "hypot " .. w)
      check(luda.where(luda.less(cx, 0), cy, luda.chunked(z, random_chunks(shape))), luda.where(luda.less(x, 0), y, z),
        "where with a chunked array that is not distributed " .. w)
      check(cx * luda.chunked(y, random_chunks(shape)), x * y, "with a chunked array that is not distributed")
      check(luda.map_blocks(function(a, b) return a - b end, cx, cy), x - y, "map_blocks " .. w)
      -- A transposed array's owners run across the grid.
      if #shape >= 2 then check(cx.T + cy.T, x.T + y.T, "transposed " .. w) end
      -- A row and a column, distributed, broadcast against the grid.
      local row = random_array({ shape[#shape] })
      check(cx + dist(row, random_chunks({ shape[#shape] })), x + row, "+ a distributed row " .. w)
      local col_shape = { table.unpack(shape) }
      col_shape[#col_shape] = 1
      local col = random_array(col_shape)
      check(luda.multiply(dist(col, random_chunks(col_shape)), cy), col * y, "a distributed column * " .. w)
      -- Results of reductions, which are on the ranks that reduced them.
      check(cx - luda.mean(cy, 1, { keepdims = true }), x - luda.mean(y, 1, { keepdims = true }), "- a mean " .. w, 1e-12)
    end
  end)

  it("give matmul and dot across the ranks", function()
    for _ = 1, 12 do
      local n, k, m = math.random(1, 12), math.random(1, 12), math.random(1, 9)
      local a, b, v = random_array({ n, k }), random_array({ k, m }), random_array({ k })
      local ca = dist(a, random_chunks({ n, k }))
      local cb = dist(b, random_chunks({ k, m }))
      local w = ("%s @ %s"):format(tostring(ca), tostring(cb))
      check(luda.matmul(ca, cb), luda.matmul(a, b), "matmul " .. w, 1e-12)
      check(luda.dot(ca, cb), luda.matmul(a, b), "dot " .. w, 1e-12)
      check(ca:matmul(b), luda.matmul(a, b), "distributed @ plain " .. w, 1e-12)
      check(luda.matmul(a, cb), luda.matmul(a, b), "plain @ distributed " .. w, 1e-12)
      check(luda.matmul(ca, luda.chunked(b, random_chunks({ k, m }))), luda.matmul(a, b), "@ chunked " .. w, 1e-12)
      check(luda.matmul(luda.chunked(a, random_chunks({ n, k })), cb), luda.matmul(a, b), "chunked @ " .. w, 1e-12)
      check(luda.matmul(ca, dist(v, random_chunks({ k }))), luda.matmul(a, v), "@ a distributed vector " .. w, 1e-12)
      check(luda.matmul(ca, v), luda.matmul(a, v), "@ a vector " .. w, 1e-12)
      check(luda.matmul(ca.T, ca), luda.matmul(a.T, a), "a.T @ a " .. w, 1e-12)
    end
    -- An empty inner axis gives zeros.
    local a, b = luda.zeros({ 4, 0 }), luda.zeros({ 0, 3 })
    check(luda.matmul(dist(a, { 2, 1 }), dist(b, { 1, 2 })), luda.matmul(a, b), "empty inner axis")
  end)
end)

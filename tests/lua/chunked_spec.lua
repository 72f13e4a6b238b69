-- Chunked arrays (luda.chunked, map_blocks, rechunk): every result against the same work
-- on one array (itself checked against NumPy by the other specs), on random shapes with
-- uneven chunks, broadcasting between chunk grids and with plain arrays, every reduction
-- axis, TSQR against linalg.qr and svd; Dask's post (a raw kernel that reads each block's
-- strides); and the errors, pinned.
local luda = require "luda"
local support = require "support"

local on_devices = support.device_tests(_ENV)
local here, error_of = support.here, support.error_of

-- Equal arrays: shape, dtype, and values (NaN equal to NaN; floats within rtol).
local function check(got, want, what, rtol, atol)
  if luda.chunked.is_chunked(got) then got = got:compute() end
  support.assert_array_equal(got, want, what, rtol, atol)
end

-- A random shape of 1 to 3 axes, and random chunks for it: per axis a block size or a
-- list of uneven extents (some 1, and a whole axis).
local function random_shape()
  local s = {}
  for a = 1, math.random(1, 3) do s[a] = math.random(1, 9) end
  return s
end
local random_chunks = support.random_chunks

local function random_array(shape, lo, hi)
  return luda.random.random(shape) * ((hi or 10) - (lo or -10)) + (lo or -10)
end

-- The same chunked array with blocks of their own (copies): luda.chunked(x) of one device
-- has blocks that are views of x, and works over x at once; these go block by block.
local function apart(c)
  return luda.map_blocks(function(b) return b:copy() end, c)
end

describe("chunked arrays", function()
  before_each(function() math.randomseed(8128) end)

  on_devices("hold blocks that put back together give the array", function(device)
    for _ = 1, 40 do
      local shape = random_shape()
      local x = random_array(shape)
      local chunks = random_chunks(shape)
      local c = luda.chunked(x, chunks)
      assert.are.same(shape, c.shape)
      assert.are.equal("float64", c.dtype)
      assert.are.equal(#shape, c.ndim)
      local count = 1
      for a, list in ipairs(c.chunks) do
        local sum = 0
        for _, e in ipairs(list) do sum = sum + e end
        assert.are.equal(shape[a], sum)
        assert.are.equal(#list, c.numblocks[a])
        count = count * #list
      end
      assert.are.equal(count, c.npartitions)
      check(c:compute(), x, "compute")
      -- A block is a view of x: x's strides, its place's values.
      local b = c:block(table.unpack((function()
        local g = {}
        for a = 1, #shape do g[a] = c.numblocks[a] - 1 end
        return g
      end)()))
      if b.device == x.device then
        assert.are.same(x.strides, b.strides)
      else  -- a copy on its own device: C order
        local want, step = {}, 1
        for a = #shape, 1, -1 do
          want[a] = step
          step = step * b.shape[a]
        end
        assert.are.same(want, b.strides)
      end
    end
    local c = luda.chunked(luda.arange(24):reshape(4, 6), { 3, { 1, 5 } })
    assert.are.equal("chunked<shape=(4, 6), dtype=int64, chunksize=(3, 5), numblocks=(2, 2), devices=" ..
                     table.concat(c.devices, ", ") .. ">", tostring(c))
    -- Placement: every device of the current kind, blocks spread evenly in C order.
    local kinds = {}
    for _, d in ipairs(luda.devices()) do
      if d.kind == device then kinds[#kinds + 1] = d.kind == "cpu" and (d.index == 0 and "cpu" or "cpu:" .. d.index) or "cuda:" .. d.index end
    end
    for k = 0, 3 do
      local b = c:block(k // 2, k % 2)
      assert.are.equal(kinds[(k * #kinds) // 4 + 1], b.device, "block " .. k)
    end
    check(c:block(1, 0), luda.array({ { 18 } }), "block (1, 0)")
    check(c:block(-1, -1), luda.array({ { 19, 20, 21, 22, 23 } }), "block (-1, -1)")
    -- 0-d and empty arrays.
    check(luda.chunked(luda.array(3.5), {}):compute(), luda.array(3.5), "0-d")
    local e = luda.chunked(luda.zeros({ 0, 3 }), { 2, 2 })
    assert.are.same({ { 0 }, { 2, 1 } }, e.chunks)
    check(e:compute(), luda.zeros({ 0, 3 }), "empty")
  end)

  on_devices("make their blocks where they live: zeros, ones, full, random, arange", function()
    check(luda.chunked.zeros({ 5, 4 }, 2, "float32"), luda.zeros({ 5, 4 }, "float32"), "zeros")
    check(luda.chunked.ones({ 7 }, { { 3, 4 } }), luda.ones({ 7 }), "ones")
    check(luda.chunked.full({ 3, 3 }, { 2, 2 }, 2.5), luda.full({ 3, 3 }, 2.5), "full")
    check(luda.chunked.arange(10, 3), luda.arange(10), "arange")
    check(luda.chunked.arange(2, 20, 3, 4, "float32"), luda.arange(2, 20, 3, "float32"), "arange with a step")
    local r = luda.chunked.random({ 50, 3 }, { 20, 3 }, "float32", { seed = 5 })
    assert.are.equal("float32", r.dtype)
    local v = r:compute()
    assert.is_true(luda.all(luda.logical_and(luda.greater_equal(v, 0), luda.less(v, 1))):item())
    check(luda.chunked.random({ 50, 3 }, { 20, 3 }, "float32", { seed = 5 }), v, "random with a seed")
  end)

  on_devices("compute elementwise functions and operators blockwise, broadcasting between grids", function()
    local binary = { "add", "subtract", "multiply", "maximum", "hypot", "less", "atan2" }
    for _ = 1, 30 do
      local shape = random_shape()
      local x, y = random_array(shape), random_array(shape)
      local cx = luda.chunked(x, random_chunks(shape))
      local cy = luda.chunked(y, random_chunks(shape))  -- other chunks: rechunked to cx's
      for _, name in ipairs(binary) do
        check(luda[name](cx, cy), luda[name](x, y), name .. " chunked, chunked")
        check(luda[name](cx, y), luda[name](x, y), name .. " chunked, array")
        check(luda[name](x, cy), luda[name](x, y), name .. " array, chunked")
      end
      check(cx + cy * 2 - 1, x + y * 2 - 1, "operators")
      check(apart(cx) + cy * 2 - 1, x + y * 2 - 1, "operators, blocks apart")
      check(luda.hypot(apart(cx), apart(cy)), luda.hypot(x, y), "hypot, blocks apart")
      check(x / cy, x / y, "array / chunked")
      check(-cx, -x, "negation")
      check(cx ^ 2, x ^ 2, "power")
      check(luda.exp(cx), luda.exp(x), "exp")
      check(luda.where(luda.less(cx, 0), cx, cy), luda.where(luda.less(x, 0), x, y), "where")
      check(cx:astype("float32"), x:astype("float32"), "astype")
      check(cx:clip(-1, 1), x:clip(-1, 1), "clip")
      check(luda.clip(cx, nil, 1), luda.clip(x, nil, 1), "clip with no lower bound")
      check(luda.clip(apart(cx), -1, nil), luda.clip(x, -1, nil), "clip with no upper bound, blocks apart")
      -- A row broadcast against the chunked grid: a plain array, and a chunked one.
      local row = random_array({ shape[#shape] })
      check(cx + row, x + row, "+ a row")
      check(cx + luda.chunked(row, -1), x + row, "+ a chunked row")
      local col_shape = { table.unpack(shape) }
      col_shape[#col_shape] = 1
      local col = random_array(col_shape)
      check(luda.multiply(cx, luda.chunked(col, random_chunks(col_shape))), x * col, "* a chunked column")
    end
    local z = luda.chunked(luda.arange(6):reshape(2, 3) + luda.complex(0, 1), { 1, 2 })
    check(luda.conj(z), luda.conj(luda.arange(6):reshape(2, 3) + luda.complex(0, 1)), "complex")
  end)

  on_devices("reduce along every axis, combining blocks as a tree", function()
    local names = { "sum", "prod", "max", "min", "mean", "var", "std", "nansum", "nanmax", "nanmin", "nanmean",
                    "argmax", "argmin" }
    for _ = 1, 25 do
      local shape = random_shape()
      local x = random_array(shape, 0.5, 1.5)
      if math.random() < 0.3 then x[{ 0 }] = 0 / 0 end  -- a NaN in the first row
      local c = luda.chunked(x, random_chunks(shape))
      local axes = { false }
      for a = 1, #shape do axes[#axes + 1] = a end
      axes[#axes + 1] = -1
      if #shape > 1 then axes[#axes + 1] = { 1, #shape } end
      for _, name in ipairs(names) do
        for _, axis in ipairs(axes) do
          local single = type(axis) == "number" or axis == false
          if single or not name:find("arg") then
            local what = ("%s axis %s of %s"):format(name, type(axis) == "table" and table.concat(axis, ",") or tostring(axis),
                                                    table.concat(shape, "x"))
            local a = axis
            if axis == false then a = nil end
            check(luda[name](c, a), luda[name](x, a), what, 1e-12)
            check(luda[name](apart(c), a), luda[name](x, a), what .. ", blocks apart", 1e-12)
            if not name:find("arg") and a ~= nil then
              check(c[name](c, a, { keepdims = true }), x[name](x, a, { keepdims = true }), what .. " keepdims", 1e-12)
            end
          end
        end
      end
      local b = luda.greater(x, 1)
      local cb = luda.chunked(b, random_chunks(shape))
      for _, name in ipairs({ "any", "all", "count_nonzero" }) do
        check(luda[name](cb), luda[name](b), name)
        check(luda[name](cb, 1), luda[name](b, 1), name .. " axis 1")
      end
      check(luda.sum(c, { dtype = "float32" }), luda.sum(x, { dtype = "float32" }), "sum dtype=float32", 1e-6)
      check(luda.var(c, 1, { ddof = 1 }), luda.var(x, 1, { ddof = 1 }), "var ddof=1", 1e-12)
    end
    -- Integers sum exactly, to int64; their mean is float64.
    local i = luda.arange(-50, 50):reshape(10, 10):astype("int8")
    local ci = luda.chunked(i, { 3, 4 })
    check(luda.sum(ci, 2), luda.sum(i, 2), "int8 sum")
    check(luda.mean(ci), luda.mean(i), "int8 mean")
  end)

  on_devices("run the kernel kinds block by block: vectorize, elementwise, fuse and reduction kernels", function()
    local fma = luda.vectorize(function(a, b) return a * b + 1 end)
    local split = luda.elementwise("T x, T y", "T s, T d", "s = x + y\nd = x - y", "split")
    local poly = luda.fuse(function(x, y) return x * x - 3 * y end)
    -- CuPy's ReductionKernel example: a dot product of rows with w, plus a bias.
    local dnn = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnn")
    local absmax = luda.reduction("T x", "float64 m", "math.abs(x)", "math.max(a, b)", "m = a * 2", "0", "absmax")
    local count = luda.reduction("T x", "int64 k", "x > 0.5", "a + b", "k = a", "0", "count",
                                 { reduce_type = "int64" })
    local add = luda.vectorize(function(a, b) return a + b end)
    local maxi = luda.vectorize(function(a, b) return math.max(a, b) end, { identity = -math.huge })
    for _ = 1, 20 do
      local shape = random_shape()
      local x, y = random_array(shape), random_array(shape)
      local cx = luda.chunked(x, random_chunks(shape))
      local cy = luda.chunked(y, random_chunks(shape))
      check(fma(cx, cy), fma(x, y), "vectorize")
      check(fma(apart(cx), cy), fma(x, y), "vectorize, blocks apart")
      check(fma(cx, 2.5), fma(x, 2.5), "vectorize with a number")
      local s, d = split(cx, y)
      local s1, d1 = split(x, y)
      check(s, s1, "elementwise, first output")
      check(d, d1, "elementwise, second output")
      check(poly(x, cy), poly(x, y), "fuse")
      local row = random_array({ shape[#shape] })
      check(fma(cx, row), fma(x, row), "vectorize with a row")
      local axes = { false, -1 }
      for a = 1, #shape do axes[#axes + 1] = a end
      if #shape > 1 then axes[#axes + 1] = { 1, #shape } end
      for _, axis in ipairs(axes) do
        local what = ("axis %s of %s"):format(type(axis) == "table" and table.concat(axis, ",") or tostring(axis),
                                             tostring(cx))
        local o = axis and { axis = axis } or {}
        local ok = axis and { axis = axis, keepdims = true } or { keepdims = true }
        check(dnn(cx, row, 0.5, o), dnn(x, row, 0.5, o), "reduction kernel " .. what, 1e-12)
        check(dnn(apart(cx), row, 0.5, o), dnn(x, row, 0.5, o), "reduction kernel, blocks apart " .. what, 1e-12)
        check(dnn(apart(cx), apart(cy), -2, ok), dnn(x, y, -2, ok), "reduction kernel keepdims, apart " .. what, 1e-12)
        check(dnn(cx, cy, -2, ok), dnn(x, y, -2, ok), "reduction kernel keepdims " .. what, 1e-12)
        check(absmax(apart(cx), o), absmax(x, o), "max reduction kernel " .. what)
        check(count(apart(cx), o), count(x, o), "count reduction kernel " .. what)
        if axis then
          check(add:reduce(cx, axis), add:reduce(x, axis), "vectorize reduce " .. what, 1e-12)
          check(add:reduce(apart(cx), axis), add:reduce(x, axis), "vectorize reduce, apart " .. what, 1e-12)
          check(maxi:reduce(cx, { axis = axis, keepdims = true }), maxi:reduce(x, { axis = axis, keepdims = true }),
                "vectorize reduce with an identity " .. what)
        end
      end
      check(add:reduce(cx), add:reduce(x), "vectorize reduce along the first axis", 1e-12)
      check(add:reduce(apart(cx), { axis = 1, initial = 100 }), add:reduce(x, { axis = 1, initial = 100 }), "initial",
            1e-12)
    end
    -- float32 blocks: the placeholders bind to float32 in every derived kernel.
    local x = luda.random.random({ 9, 7 }, "float32")
    local w = luda.random.random({ 7 }, "float32")
    local r = dnn(apart(luda.chunked(x, { 4, 3 })), w, 1.5, { axis = 2 })
    assert.are.equal("float32", r.dtype)
    check(r, dnn(x, w, 1.5, { axis = 2 }), "float32 reduction kernel", 1e-6)
    -- Empty blocks reduce to the identity.
    local e = luda.zeros({ 0, 4 })
    check(dnn(apart(luda.chunked(e, { 2, 3 })), luda.ones(4), 1, { axis = 1 }), dnn(e, luda.ones(4), 1, { axis = 1 }),
          "empty")
    -- Against plain Lua: the dot product of each row with w, plus the bias.
    local xs, ws = luda.random.random({ 13, 5 }), luda.random.random({ 5 })
    local got = dnn(apart(luda.chunked(xs, { 5, 2 })), ws, 0.25, { axis = 2 }):compute():totable()
    local xt, wt = xs:totable(), ws:totable()
    for i = 1, 13 do
      local want = 0.25
      for j = 1, 5 do want = want + xt[i][j] * wt[j] end
      assert.is_true(math.abs(got[i] - want) < 1e-12, "row " .. i)
    end
    -- What they refuse, at the caller's line.
    local c = apart(luda.chunked(luda.arange(12.0):reshape(3, 4), { 2, 2 }))
    assert.are.equal(here() .. "reduction 'dnn': option 'out' is not taken with chunked operands (axis and keepdims are)", error_of(function() dnn(c, 1, 0, { out = luda.zeros({}) }) end))
    assert.are.equal(here() .. "reduction 'dnn': axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", error_of(function() dnn(c, 1, 0, { axis = 3 }) end))
    assert.are.equal(here() .. "elementwise 'gather': a kernel with raw parameters does not take chunked arrays (its raw arrays, i and n would be a block's); use map_blocks, which hands it each block", error_of(function() luda.elementwise("raw T x", "T y", "y = x[i]", "gather")(c, { size = 3 }) end))
    assert.are.equal(here() .. "elementwise 'split': options (out=, stream=, size=) are not taken with chunked operands", error_of(function() split(c, c, { stream = nil, size = 2 }) end))
    assert.are.equal(here() .. "elementwise 'split': give the 2 inputs only; with chunked operands the outputs are made block by block", error_of(function() split(c, c, c) end))
    assert.are.equal(here() .. "fuse 'total': a fused function with reductions does not take chunked arrays; use luda.sum (max, min, prod) on the chunked array, which reduces each block and combines them, or map_blocks", error_of(function() luda.fuse(function(v) return luda.sum(v) end, { name = "total" })(c) end))
  end)

  on_devices("blocks of one array on one device: elementwise work and reductions over it at once, their results views of one array", function()
    local x = random_array({ 9, 7 })
    local c = luda.chunked(x, { 4, 3 }, { devices = { x.device } })
    -- Every block a view of an array of the whole shape: that array's C strides.
    local function views_of_one(r, strides)
      for i = 0, r.numblocks[1] - 1 do
        for j = 0, r.numblocks[2] - 1 do assert.are.same(strides, r:block(i, j).strides) end
      end
    end
    views_of_one(c * 2 + 1, { 7, 1 })
    views_of_one(luda.sum(c, 1, { keepdims = true }), { 7, 1 })
    views_of_one(luda.chunked.zeros({ 9, 7 }, { 4, 3 }, { devices = { x.device } }), { 7, 1 })
    views_of_one(c.T, { 1, 7 })  -- views of x.T
    -- Writing a block writes the array, and the next work reads it.
    local z = luda.chunked.zeros({ 6 }, 4, { devices = { x.device } })
    z:block(1)[{ 0 }] = 5
    assert.are.equal(5, luda.sum(z):item())
    check(z + 1, luda.array({ 1, 1, 1, 1, 6, 1 }, "float64"), "after a write")
    -- Blocks apart (copies) keep their own C strides.
    local a = apart(c) * 2
    assert.are.same({ 3, 1 }, a:block(0, 0).strides)
    check(a, x * 2, "apart")
  end)

  on_devices("take and refuse what arrays take and refuse, with blocks of one array and blocks apart", function()
    local x = random_array({ 7, 5 })
    local xi = luda.arange(35):reshape(7, 5):astype("int32")
    for _, c in ipairs({ luda.chunked(x, { 3, 2 }, { devices = { x.device } }), apart(luda.chunked(x, { 3, 2 })) }) do
      check(luda.sum(c, { initial = 100 }), luda.sum(x, { initial = 100 }), "sum initial", 1e-12)
      check(luda.max(c, 1, { initial = 100 }), luda.max(x, 1, { initial = 100 }), "max initial along 1")
      check(luda.nanmean(c:astype("float32"), 2), luda.nanmean(x:astype("float32"), 2), "nanmean float32", 1e-6)
      check(luda.round(c), luda.round(x), "round with no decimals")
      assert.are.equal(error_of(function() luda.sum(x, { bogus = 1 }) end), error_of(function() luda.sum(c, { bogus = 1 }) end))
      assert.are.equal(error_of(function() luda.any(x, { axis = 1 }) end), error_of(function() luda.any(c, { axis = 1 }) end))
    end
    local bools = luda.greater(x, 0)
    check(luda.argmax(apart(luda.chunked(bools, { 3, 2 })), 1), luda.argmax(bools, 1), "argmax of bools")
    assert.are.equal(here() .. "luda.clip: give lo, hi or both; nil stands for no bound", error_of(function() luda.clip(luda.chunked(x, 3), nil, nil) end))
    -- Kernels that read their place: right over one array, refused block by block.
    local idx = luda.elementwise("T x", "T y", "y = x + i * 10 + n * 1000", "idx")
    local z = luda.zeros({ 4 })
    check(idx(luda.chunked(z, 2, { devices = { z.device } })), idx(z), "i and n over one array")
    assert.are.equal(here() .. "elementwise 'idx': its body reads i or n (the element's index and the size), which block by block would be a block's; give blocks of one array (luda.chunked(x) on one device), or use map_blocks", error_of(function() idx(apart(luda.chunked(z, 2))) end))
    local jsum = luda.reduction("T x", "int64 z", "_j", "a + b", "z = a", "0", "jsum")
    local r6 = luda.arange(6.0)
    check(jsum(luda.chunked(r6, 2, { devices = { r6.device } })), jsum(r6), "_j over one array")
    assert.are.equal(here() .. "reduction 'jsum': its map_expr reads _j (the index along the reduced axes), which block by block would be a block's; give blocks of one array (luda.chunked(x) on one device), or use map_blocks", error_of(function() jsum(apart(luda.chunked(r6, 2))) end))
    assert.are.equal(here() .. "elementwise 'r': a kernel with raw parameters does not take chunked arrays (its raw arrays, i and n would be a block's); use map_blocks, which hands it each block", error_of(function() luda.elementwise("T x", "raw T y", "y[i] = x", "r")(luda.chunked(z, 2)) end))
    -- f:reduce: initial in the result's dtype, and of an empty axis.
    local vmax = luda.vectorize(function(a, b) if a > b then return a else return b end end)
    check(vmax:reduce(apart(luda.chunked(xi, { 3, 2 })), { initial = 2.5 }), vmax:reduce(xi, { initial = 2.5 }), "initial 2.5 of int32")
    check(vmax:reduce(apart(luda.chunked(luda.zeros({ 0 }), 2)), { initial = 1 }), vmax:reduce(luda.zeros({ 0 }), { initial = 1 }), "empty, initial")
    -- arange with a float step: the count NumPy gives, in every block.
    local a3 = luda.chunked.arange(0, 0.3, 0.1, 2)
    assert.are.same({ 3 }, a3.shape)
    assert.are.same({ { 2, 1 } }, a3.chunks)
    assert.are.same({ { 3, 3, 3, 1 } }, luda.chunked.arange(0, 1, 0.1, 3, "float32").chunks)
    check(luda.chunked.arange(0, 0.3, 0.1, 2), luda.arange(0, 0.3, 0.1), "arange 0, 0.3, 0.1", 1e-15)
    check(apart(luda.chunked.arange(0, 1, 0.1, 3)), luda.arange(0, 1, 0.1), "arange 0, 1, 0.1 apart", 1e-15)
  end)

  on_devices("find the first of equal values by index, not by block, and skip blocks of NaNs in the nan forms", function()
    for _ = 1, 20 do
      local shape = random_shape()
      local x = luda.floor(random_array(shape, 0, 3))  -- few values: equal ones in several blocks
      local c = luda.chunked(x, random_chunks(shape))
      for _, name in ipairs({ "argmax", "argmin" }) do
        check(luda[name](c), luda[name](x), name .. " of " .. tostring(c))
        for a = 1, #shape do check(luda[name](c, a), luda[name](x, a), name .. " axis " .. a .. " of " .. tostring(c)) end
      end
    end
    -- Blocks whose slices are NaNs only: the other blocks of the slice give the index.
    local y = luda.array({ { 1, 0 / 0, 5 }, { 0 / 0, 7, 2 }, { 3, 4, 0 / 0 }, { 7, 1, 9 } })
    for _, chunks in ipairs({ { 1, 2 }, { 2, 1 }, 1, { 3, 3 } }) do
      local c = luda.chunked(y, chunks)
      for _, name in ipairs({ "nanargmax", "nanargmin", "argmax", "argmin" }) do
        check(luda[name](c), luda[name](y), name .. " with NaNs")
        check(luda[name](c, 1), luda[name](y, 1), name .. " with NaNs, axis 1")
        check(luda[name](c, 2), luda[name](y, 2), name .. " with NaNs, axis 2")
      end
    end
    local z = luda.chunked(luda.array({ { 0 / 0, 1 }, { 0 / 0, 2 } }), 1)
    assert.are.equal(here() .. "nanargmax: All-NaN slice encountered", error_of(function() luda.nanargmax(z, 1) end))
  end)

  on_devices("rechunk to any chunks, keeping the values", function()
    for _ = 1, 30 do
      local shape = random_shape()
      local x = random_array(shape)
      local c = luda.chunked(x, random_chunks(shape))
      local to = random_chunks(shape)
      local r = c:rechunk(to)
      check(r, x, "rechunk")
      local want = luda.chunked(x, to)
      assert.are.same(want.chunks, r.chunks)
      assert.are.same(want.chunks, luda.rechunk(c, to).chunks)
    end
  end)

  on_devices("map_blocks: the Dask post's raw kernel, which reads each block's strides", function()
    -- y added to every row of x (4096x1024 in the post; smaller here), in 4x2 blocks.
    local add_kernel = luda.raw_kernel([[
extern "C" __global__ void add_kernel(const double* x, const double* y, double* out, long long rows, long long cols,
                                      long long x_row_stride) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  long long r = i / cols, c = i % cols;
  out[i] = x[r * x_row_stride + c] + y[c];
}
]], "add_kernel")
    local function dispatch(x, y)
      local out = luda.empty(x.shape, x.dtype)
      local n = x.size
      add_kernel({ (n + 127) // 128 }, { 128 }, { x, y, out, x.shape[1], x.shape[2], x.strides[1] })
      return out
    end
    local x = random_array({ 64, 32 })
    local y = random_array({ 32 })
    local cx = luda.chunked(x, { 16, 16 })
    local cy = luda.chunked(y, 16)
    local out = luda.map_blocks(dispatch, cx, cy)
    assert.are.same({ { 16, 16, 16, 16 }, { 16, 16 } }, out.chunks)
    check(out, x + y, "map_blocks of the raw kernel")
    assert.are.equal(32, cx:block(0, 1).strides[1])  -- a view: a row's stride is x's width
    -- Plain arrays and numbers pass through whole; dtype and chunks given.
    local calls = 0
    local scaled = cx:map_blocks(function(b, s, row)
      calls = calls + 1
      return (b * s + row:slice({ 0, b.shape[2] })):astype("float32")
    end, 3, y, { dtype = "float32" })
    assert.are.equal(8, calls)
    check(scaled, (x * 3 + luda.concatenate({ y:slice({ 0, 16 }), y:slice({ 0, 16 }) })):astype("float32"), "pass-through")
    -- drop_axis: a block's row sums; new_axis: an axis of one.
    local sums = luda.map_blocks(function(b) return luda.sum(b, 2) end, luda.chunked(x, { 16, -1 }), { drop_axis = 2 })
    check(sums, luda.sum(x, 2), "drop_axis", 1e-12)
    local wide = luda.map_blocks(function(b) return b:reshape({ b.shape[1], 1 }) end, luda.chunked(y, 8), { new_axis = 2 })
    assert.are.same({ 32, 1 }, wide.shape)
    check(wide, y:reshape({ 32, 1 }), "new_axis")
    -- chunks= gives the blocks' extents: each block halved.
    local half = luda.map_blocks(function(b) return b:slice({ 0, 8 }) end, cx, { chunks = { 8, 16 } })
    assert.are.same({ 32, 32 }, half.shape)
  end)

  on_devices("matmul blockwise, and TSQR for qr and svd", function()
    for _ = 1, 10 do
      local m, k, n = math.random(1, 12), math.random(1, 9), math.random(1, 7)
      local a, b = random_array({ m, k }), random_array({ k, n })
      local ca = luda.chunked(a, random_chunks({ m, k }))
      local cb = luda.chunked(b, random_chunks({ k, n }))
      -- The blocks' partial products add in another order than one matmul's: an element
      -- whose k terms (each under 100 in size) cancel is off by up to 1e-12 of their sizes.
      local atol = 1e-12 * 100 * k
      check(luda.matmul(ca, cb), luda.matmul(a, b), "matmul chunked, chunked", 1e-12, atol)
      check(luda.matmul(ca, b), luda.matmul(a, b), "matmul chunked, array", 1e-12, atol)
      check(luda.matmul(a, cb), luda.matmul(a, b), "matmul array, chunked", 1e-12, atol)
      local v = random_array({ k })
      check(luda.matmul(ca, v), luda.matmul(a, v), "matmul by a vector", 1e-12, atol)
    end
    local a = random_array({ 200, 6 })
    local c = luda.chunked(a, { { 50, 70, 80 }, -1 })
    local q, r = luda.linalg.qr(c)
    assert.is_true(luda.chunked.is_chunked(q))
    assert.are.same(c.chunks, q.chunks)
    local qa = q:compute()
    assert.is_true(luda.allclose(luda.matmul(qa, r), a, { atol = 1e-12 }))
    assert.is_true(luda.allclose(luda.matmul(qa.T, qa), luda.eye(6), { atol = 1e-12 }))
    local _, r1 = luda.linalg.qr(a)
    assert.is_true(luda.allclose(luda.abs(r), luda.abs(r1), { atol = 1e-10 }))  -- R is unique up to the rows' signs
    check(luda.linalg.qr(c, "r"), r, "mode r")
    local u, s, vh = luda.linalg.svd(c, { full_matrices = false })
    local s1 = luda.linalg.svd(a, { compute_uv = false })
    assert.is_true(luda.allclose(s, s1, { rtol = 0, atol = 1e-10 * s1[0] }))
    local ua = u:compute()
    assert.is_true(luda.allclose(luda.matmul(ua.T, ua), luda.eye(6), { atol = 1e-12 }))
    assert.is_true(luda.allclose(luda.matmul(ua * s, vh), a, { atol = 1e-10 }))
    check(luda.linalg.svd(c, { compute_uv = false }), s, "svd values")
  end)

  on_devices("run the same code on an array and a chunked one", function()
    local function f(x) return luda.sum(luda.exp(x) * 2 + x, 1) / luda.max(x) end
    local x = random_array({ 30, 4 }, 0, 1)
    local c = luda.chunked(x, { 7, 3 })
    local want = f(x)
    check(f(c), want, "f", 1e-12)
  end)

  on_devices("distributed over one rank (no mpirun): every block here, the same results", function()
    local x = random_array({ 40, 6 })
    local c = luda.chunked(x, { 10, -1 }, { distributed = true })
    assert.is_true(c.distributed)
    assert.are.same({ 0, 0, 0, 0 }, c.owners)
    assert.truthy(tostring(c):find(", ranks=1>$"))
    check(c, x, "compute")
    check(c * 2 + 1, x * 2 + 1, "elementwise")
    check(luda.sum(c), luda.sum(x), "sum", 1e-12)
    check(luda.max(c), luda.max(x), "max")
    check(luda.mean(c), luda.mean(x), "mean", 1e-12)
    check(luda.var(c), luda.var(x), "var", 1e-12)
    check(luda.map_blocks(function(b) return b - 1 end, c), x - 1, "map_blocks")
    local q, r = luda.linalg.qr(c)
    assert.is_true(q.distributed)
    assert.is_true(luda.allclose(luda.matmul(q:compute(), r), x, { atol = 1e-12 }))
    local z = luda.chunked.zeros({ 9 }, 4, "int32", { distributed = true })
    assert.is_true(z.distributed)
    check(z, luda.zeros({ 9 }, "int32"), "zeros")
    -- What moves blocks between ranks elsewhere moves nothing here, and stays distributed.
    local s = luda.sum(c, 1, { keepdims = true })
    assert.is_true(s.distributed)
    check(s, luda.sum(x, 1, { keepdims = true }), "sum along an axis", 1e-12)
    check(luda.std(c, 2), luda.std(x, 2), "std along an axis", 1e-12)
    check(luda.argmax(c, 1), luda.argmax(x, 1), "argmax along an axis")
    check(luda.argmin(c), luda.argmin(x), "argmin")
    local r = c:rechunk({ 7, 4 })
    assert.is_true(r.distributed)
    check(r, x, "rechunk")
    check(c + luda.chunked(x, { 6, 2 }), x + x, "with a chunked array of other chunks")
    check(c + r, x + x, "with a distributed one of other chunks")
    local m = luda.matmul(c, luda.chunked(x.T, { 4, 5 }, { distributed = true }))
    assert.is_true(m.distributed)
    check(m, luda.matmul(x, x.T), "matmul", 1e-12)
  end)

  -- Each block's kernel stamps the GPU's global nanosecond timer when it starts and when it
  -- ends (about 10 ms of spinning later): on every GPU at once, every start comes before
  -- every end.
  it("run their blocks on every GPU at the same time", function()
    local why = support.gpu_missing(2)
    if why then return pending(why) end
    local stamp = luda.raw_kernel([[
extern "C" __global__ void stamp(unsigned long long* t, long long cycles) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64();
  while (clock64() - c0 < cycles) {}
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  t[0] = t0;
  t[1] = t1;
}]], "stamp")
    local devices = {}
    for i = 0, luda.cuda.device_count() - 1 do devices[#devices + 1] = "cuda:" .. i end
    local c = luda.chunked.zeros({ 2 * #devices }, 2, "uint64", { devices = devices })
    local out = luda.map_blocks(function(b)
      stamp({ 1 }, { 1 }, { b, 20000000 })
      return b
    end, c)
    for i = 0, #devices - 1 do assert.are.equal(devices[i + 1], out:block(i).device) end
    local t = out:compute():totable()
    local last_start, first_end = 0, math.huge
    for i = 1, #t, 2 do
      assert.is_true(t[i + 1] - t[i] > 1000000, "a block's kernel spun for under 1 ms")
      last_start, first_end = math.max(last_start, t[i]), math.min(first_end, t[i + 1])
    end
    assert.is_true(last_start < first_end,
      ("the blocks ran one after another: the last started %.3f ms after the first ended"):format(
        (last_start - first_end) * 1e-6))
  end)

  it("refuse what they cannot do, at the caller's line", function()
    local x = luda.arange(12):reshape(3, 4)
    local c = luda.chunked(x, { 2, 2 })
    assert.are.equal(here() .. "luda.chunked: the chunks of axis 1 add up to 2, but the axis has 3 elements; give extents that add up to it", error_of(function() luda.chunked(x, { { 1, 1 }, 2 }) end))
    assert.are.equal(here() .. "luda.chunked: chunks has 1 entry, but the array has 2 axes; give one per axis (a block size or a list of extents)", error_of(function() luda.chunked(x, { 2 }) end))
    assert.are.equal(here() .. "luda.chunked: the block size of axis 2 must be a positive integer or -1 (the whole axis), got 0", error_of(function() luda.chunked(x, { 2, 0 }) end))
    assert.are.equal(here() .. "luda.add: shapes (3, 4), (3,) cannot be broadcast together", error_of(function() return c + luda.zeros(3) end))
    assert.are.equal(here() .. "luda.cumsum does not take chunked arrays; c:compute() makes one array of one (or map_blocks works block by block)", error_of(function() luda.cumsum(c) end))
    assert.are.equal(here() .. "block: index 2 is out of range for axis 1 with 2 blocks", error_of(function() c:block(2, 0) end))
    assert.are.equal(here() .. "map_blocks: the block function returned a float64 array of shape (2, 2) for block (0, 0), where int64 of shape (2, 2) was expected; give map_blocks the output's dtype= and chunks=", error_of(function() luda.map_blocks(function(b) return b * 1.5 end, c) end))
    assert.are.equal(here() .. "map_blocks: drop_axis 2 has 2 blocks; rechunk that axis to one block first (c:rechunk)", error_of(function() luda.map_blocks(function(b) return b end, c, { drop_axis = 2 }) end))
    assert.are.equal(here() .. "luda.linalg.qr: the array has 2 blocks across; TSQR takes one column of blocks (c:rechunk({2, -1}))", error_of(function() luda.linalg.qr(c) end))
    -- Raised by a block's QR (on a thread of its device's when the blocks are on several).
    assert.are.equal(here() .. "qr: array type float16 is unsupported in linalg", error_of(function() luda.linalg.qr(luda.chunked(luda.zeros({ 8, 2 }, "float16"), { 2, 2 })) end))
    assert.are.equal(here() .. "luda.sum: axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", error_of(function() luda.sum(c, 3) end))
    assert.are.equal(here() .. "chunked arrays are read-only: cannot set 'shape' (write a block, c:block(i, ...), instead)", error_of(function() c.shape = { 1 } end))
    -- A luda function that refuses a block's operands says so at the caller's line.
    local at, err = here(), error_of(function() return luda.floor(luda.chunked(luda.zeros(3, "complex64"), 2)) end)
    assert.are.equal(at, err:sub(1, #at))
    -- A caller whose chunk name holds spaces (luda -e's "(command line 1)") is named once.
    local spaced = load("local luda, c = ... ; luda.sum(c, 3)", "=(a chunk with spaces)")
    assert.are.equal("(a chunk with spaces):1: luda.sum: axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", error_of(function() spaced(luda, c) end))
    assert.are.equal("(a chunk with spaces):1: luda.linalg.qr: the array has 2 blocks across; TSQR takes one column of blocks (c:rechunk({2, -1}))", error_of(function() load("local luda, c = ... ; luda.linalg.qr(c)", "=(a chunk with spaces)")(luda, c) end))
  end)
end)

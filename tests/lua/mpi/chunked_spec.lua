-- Distributed chunked arrays under mpirun (docs/chunked.md, "Across processes"): ctest runs
-- this spec in busted inside `luda` on 3 ranks. Every rank makes the same data (a seeded
-- random array), so each can check the distributed results against the same work on the
-- whole array; each rank must hold and compute its own blocks only.
local luda = require "luda"
local support = require "support"

local RANK, SIZE = luda.dist.rank(), luda.dist.size()
local error_of = support.error_of

local function check(got, want, what, rtol)
  assert.are.same(want.shape, got.shape, what)
  assert.are.equal(want.dtype, got.dtype, what)
  if got.device ~= want.device then got = got:to(want.device) end
  if want.dtype:find("float") then
    assert.is_true(luda.allclose(got, want, { rtol = rtol or 0, atol = 0, equal_nan = true }), what)
  else
    assert.is_true(luda.all(luda.equal(got, want)):item(), what)
  end
end

describe("distributed chunked arrays", function()
  it("spread their blocks over the ranks, neighbours together, each rank holding its own", function()
    assert.are.equal(3, SIZE)
    local x = luda.random.random({ 70, 5 }, "float64", { seed = 11 })
    local c = luda.chunked(x, { 10, -1 }, { distributed = true })
    assert.are.same({ 0, 0, 0, 1, 1, 2, 2 }, c.owners)
    for k, owner in ipairs(c.owners) do
      if owner == RANK then
        check(c:block(k - 1, 0), x:slice({ (k - 1) * 10, k * 10 }), "block " .. (k - 1))
      else
        assert.truthy(error_of(function() return c:block(k - 1, 0) end):find(
          ("block %%(%d, 0%%) lives on rank %d, and this is rank %d"):format(k - 1, owner, RANK)))
      end
    end
    assert.truthy(tostring(c):find(", ranks=3>$"))
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
end)

-- The limits luda sets on what a script makes: each works at the limit, on every device,
-- and one past it is an exact error that leaves the state usable.
local luda = require "luda"
local support = require "support"
local here, error_of = support.here, support.error_of
local on_devices = support.device_tests(_ENV)
local cuda = luda.cuda

-- {2, 3, 1, ..., 1, 2}: n axes, 12 elements, the interesting extents at both ends.
local function wide_shape(n)
  local shape = { 2, 3 }
  for _ = 3, n - 1 do shape[#shape + 1] = 1 end
  shape[n] = 2
  return shape
end

local function ones(n)
  local shape = {}
  for i = 1, n do shape[i] = 1 end
  return shape
end

local function flat(a) return a:reshape(a.size):totable() end

local function too_many(n) return "maximum supported dimension for an ndarray is currently 64, found " .. n end

describe("array dimensions", function()
  before_each(function() math.randomseed(20240611) end)

  on_devices("every way of making an array stops past 64 axes, with NumPy's message", function()
    assert.are.equal(here() .. too_many(65), error_of(function() return luda.zeros(ones(65)) end))
    assert.are.equal(here() .. too_many(65), error_of(function() return luda.empty(ones(65), "int8") end))
    assert.are.equal(here() .. too_many(65), error_of(function() return luda.ones(ones(65)) end))
    assert.are.equal(here() .. too_many(65), error_of(function() return luda.full(ones(65), 7) end))
    assert.are.equal(here() .. too_many(200), error_of(function() return luda.zeros(ones(200), "float32") end))
    -- A long shape table is refused before it is read.
    assert.are.equal(here() .. too_many(1000000), error_of(function() return luda.zeros(ones(1000000)) end))
    local x = luda.arange(12)
    assert.are.equal(here() .. too_many(65), error_of(function() return x:reshape(ones(65)) end))
    assert.are.equal(here() .. too_many(65), error_of(function() return x:reshape(table.unpack(ones(65))) end))
    assert.are.equal(here() .. too_many(300), error_of(function() return x:reshape(ones(300)) end))
    -- A nested table one level too deep, and one that contains itself.
    local nested = 1
    for _ = 1, 65 do nested = { nested } end
    assert.are.equal(here() .. too_many(65), error_of(function() return luda.array(nested) end))
    local loop = {}
    loop[1] = loop
    assert.are.equal(here() .. too_many(65), error_of(function() return luda.array(loop) end))
    -- At the limit, all of them work.
    assert.are.equal(64, luda.zeros(ones(64)).ndim)
    assert.are.equal(64, luda.array(nested[1]).ndim)
    assert.are.same(wide_shape(64), x:reshape(wide_shape(64)).shape)
  end)

  on_devices("a 64-d array runs through array arithmetic, reductions, kinds and kernels", function()
    local values = {}
    for i = 1, 12 do values[i] = math.random(-100, 100) / 4 end
    local x = luda.array(values):reshape(wide_shape(64))
    assert.are.equal(64, x.ndim)
    -- NumPy broadcasting against a lower-d operand, through the elementwise kinds.
    local y = x * 2 + luda.array({ 1, -1 })
    assert.are.equal(64, y.ndim)
    local want = {}
    for i = 1, 12 do want[i] = values[i] * 2 + (i % 2 == 1 and 1 or -1) end
    assert.are.same(want, flat(y))
    -- A strided view (the general loop over every axis) and a reduction over one axis.
    local t = x.T
    assert.are.same({ 2, 1 }, { t.shape[1], t.shape[2] })
    local sum1 = x:sum(1)
    assert.are.equal(63, sum1.ndim)
    for j = 1, 6 do assert.are.equal(values[j] + values[j + 6], flat(sum1)[j]) end
    local sum_last = t:sum(-1)  -- over x's first axis, read through the transposed strides
    assert.are.same(flat(sum1), flat(sum_last:transpose()))
    local total = 0
    for i = 1, 12 do total = total + values[i] end
    assert.are.equal(total, x:sum():item())
    local twice = luda.vectorize(function(v) return v + v end)
    assert.are.same(flat(x * 2), flat(twice(x)))

    -- A cuda.jit kernel typed for the 64-d array: out[e] = x[i][j][0]...[0][k] + ndim.
    local zeros = ("[0]"):rep(61)
    local kernel = cuda.jit("function(a, out)\n  local e = cuda.grid(1)\n  if e < 12 then\n" ..
                            "    local i, j, k = e // 6, e // 2 % 3, e % 2\n" ..
                            "    out[e] = a[i][j]" .. zeros .. "[k] + a.ndim\n  end\nend\n")
    local out = luda.zeros(12)
    kernel[{ 1, 32 }](x, out)
    for i = 1, 12 do want[i] = values[i] + 64 end
    assert.are.same(want, out:totable())
  end)

  it("a signature or a kernel's local array past 64 axes is a located error", function()
    local k = cuda.jit(function(a) a[0] = 1 end)
    local sig = "void(float32[" .. (":, "):rep(64) .. ":])"
    local at, err = here(), error_of(function() k:compile(sig) end)
    assert.are.equal(at .. "signature:1:206: signature error: " .. too_many(65), err:match("^[^\n]*"))
    local shape = "{" .. ("1, "):rep(64) .. "1}"
    local local_array = cuda.jit("function(x)\n  local t = cuda.local_array(" .. shape .. ", \"float32\")\n  x[0] = 1\nend")
    at, err = here(), error_of(function() local_array[{ 1, 1 }](luda.zeros(1, "float32", { device = "cpu" })) end)
    assert.are.equal(at .. "[string \"function(x)...\"]:2:30: type error: cuda.local_array: " .. too_many(65), err:match("^[^\n]*"))
  end)
end)

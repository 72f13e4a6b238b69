-- luda.random's Generator (default_rng) and the module's functions of its names: the
-- uniform draws exactly against a plain-Lua Philox4x32-10, every distribution's mean and
-- variance and a chi-square goodness of fit against its CDF on a fixed seed (with a wrong
-- reference failing the same test, so the test can fail), the counter's advance, dtypes
-- as NumPy's, integers' bounds, choice, permutation and shuffle, chunked draws equal to
-- plain ones, the same values for any LUDA_CPU_THREADS (a child `luda`), and errors
-- pinned (NumPy's messages after the method's name).
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local raises = H.raises

local on_devices = support.device_tests(_ENV)
local N = 1000000

-- ---- the reference generator, in Lua's wrapping integers ---------------------------------------
local M32 = 0xffffffff
local function philox(c0, c1, c2, c3, k0, k1)
  for r = 1, 10 do
    if r > 1 then k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32 end
    local p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2  -- exact 64-bit products; >> is logical
    c0, c1, c2, c3 = ((p1 >> 32) ~ c1 ~ k0) & M32, p1 & M32, ((p0 >> 32) ~ c3 ~ k1) & M32, p0 & M32
  end
  return c0, c1, c2, c3
end
-- The first 64-bit word of stream element e of `seed`.
local function word(seed, e)
  local c0, c1 = philox(e & M32, (e >> 32) & M32, 0, 0, seed & M32, (seed >> 32) & M32)
  return c0 | (c1 << 32)
end
local function uniform64(seed, e) return (word(seed, e) >> 11) * 2.0 ^ -53 end
local function uniform32(seed, e) return (word(seed, e) >> 40) * 2.0 ^ -24 end

local function values(x) return H.read(x:reshape(-1)).data end

local stats = require "random_stats"
local chi2_discrete, chi2_bound = stats.chi2_discrete, stats.chi2_bound

describe("luda.random.default_rng", function()
  on_devices("random is Philox4x32-10's words, exactly; each call continues the stream", function(device)
    for _, seed in ipairs({ 0, 7, -1, math.maxinteger }) do
      local g = luda.random.default_rng(seed)
      local a, b = g:random({ 2, 3 }), g:random(5, "float32")
      assert.are.equal(support.device_name(device), tostring(a.device))
      local want_a, want_b = {}, {}
      for k = 0, 5 do want_a[k + 1] = uniform64(seed, k) end
      for k = 0, 4 do want_b[k + 1] = uniform32(seed, 6 + k) end
      assert.are.same(want_a, values(a))
      assert.are.same(want_b, values(b))
    end
    -- the module's stream is a Generator's: after seed(s), luda.random.random and the
    -- module's functions continue one stream; default_rng(s) starts at the same place
    luda.random.seed(11)
    local x = luda.random.random(3)
    local y = luda.random.uniform(0, 1, 2)
    local g = luda.random.default_rng(11)
    assert.are.same(values(g:random(5)), { values(x)[1], values(x)[2], values(x)[3], values(y)[1], values(y)[2] })
    assert.are.same(values(luda.random.random(4, nil, { seed = 11 })), values(luda.random.default_rng(11):random(4)))
  end)

  on_devices("successive draws are the one draw's pieces, for every distribution", function()
    local draws = {
      { "normal", { 1.5, 2 } }, { "exponential", { 3 } }, { "integers", { -5, 9 } }, { "poisson", { 30 } },
      { "binomial", { 500, 0.3 } }, { "uniform", { -1, 4 } }, { "standard_normal", {} },
    }
    for _, d in ipairs(draws) do
      local name, args = d[1], d[2]
      local g, h = luda.random.default_rng(3), luda.random.default_rng(3)
      local function with(size)
        local all = { table.unpack(args) }
        all[#all + 1] = size
        return all
      end
      local whole = values(g[name](g, table.unpack(with(7))))
      local a = values(h[name](h, table.unpack(with(3))))
      local b = values(h[name](h, table.unpack(with({ 2, 2 }))))
      assert.are.same(whole, { a[1], a[2], a[3], b[1], b[2], b[3], b[4] }, name)
    end
  end)

  on_devices("dtypes and sizes as NumPy's", function(device)
    local g = luda.random.default_rng(1)
    local function dt(x) return tostring(x.dtype) end
    assert.are.equal("float64", dt(g:random(3)))
    assert.are.equal("float32", dt(g:random(3, "float32")))
    assert.are.equal("float32", dt(g:random(3, luda.float32)))
    assert.are.equal("float64", dt(g:uniform(0, 1, 3)))
    assert.are.equal("float64", dt(g:normal(0, 1, 3)))
    assert.are.equal("float32", dt(g:standard_normal(3, "float32")))
    assert.are.equal("float32", dt(g:standard_exponential(3, "float32")))
    assert.are.equal("float64", dt(g:exponential(1, 3)))
    assert.are.equal("int64", dt(g:integers(0, 5, 3)))
    for _, t in ipairs({ "int8", "uint8", "int16", "uint16", "int32", "uint32", "uint64", "bool" }) do
      local x = g:integers(0, 2, 100, t)
      assert.are.equal(t, dt(x))
    end
    assert.are.equal("int64", dt(g:poisson(2, 3)))
    assert.are.equal("int64", dt(g:binomial(4, 0.5, 3)))
    -- size nil: a 0-d array (as luda's reductions give); a table: that shape; 0: empty
    local s = g:normal()
    assert.are.equal(0, #s.shape)
    assert.are.equal(support.device_name(device), tostring(s.device))
    assert.are.same({ 2, 0, 3 }, g:poisson(1, { 2, 0, 3 }).shape)
    assert.are.same({ 4, 5 }, g:integers(9, nil, { 4, 5 }).shape)
    assert.are.equal(0, g:random(0).shape[1])
    -- {device=} picks the device, as luda's constructors take it
    assert.are.equal("cpu", tostring(g:normal(0, 1, 3, { device = "cpu" }).device))
    -- float32 values are the float64 draws rounded (standard_normal) or 24 bits (random)
    local a = values(luda.random.default_rng(5):standard_normal(50, "float32"))
    local b = values(luda.random.default_rng(5):standard_normal(50))
    for i = 1, 50 do assert.are.equal(support.f32(b[i]), a[i]) end
  end)

  on_devices("integers: bounds and endpoint", function()
    local g = luda.random.default_rng(99)
    local x = g:integers(0, 3, 100000)
    assert.are.same({ 0, 2 }, { x:min():item(), x:max():item() })
    x = g:integers(0, 3, 100000, nil, true)
    assert.are.same({ 0, 3 }, { x:min():item(), x:max():item() })
    x = g:integers(5, nil, 1000)  -- one bound: [0, 5)
    assert.are.same({ 0, 4 }, { x:min():item(), x:max():item() })
    x = g:integers(-128, 127, 100000, "int8", true)
    assert.are.same({ -128, 127 }, { x:min():item(), x:max():item() })
    x = g:integers(math.mininteger, math.maxinteger, 1000, nil, true)  -- the whole of int64
    assert.is_true(x:min():item() < -(1 << 60) and x:max():item() > (1 << 60))
    assert.are.same({ 7 }, values(g:integers(7, 8, 1)))
    local b = g:integers(0, 2, 1000, "bool")
    assert.is_true(b:any():item() and not b:all():item())
  end)

  on_devices("choice, permutation, shuffle", function()
    local g = luda.random.default_rng(2025)
    -- with p: the frequencies fit p (chi-square, 3 df)
    local p = { 0.1, 0.2, 0.3, 0.4 }
    local c = g:choice(4, N, true, p)
    assert.are.equal("int64", tostring(c.dtype))
    local chi, df = chi2_discrete(values(c), function(k) return p[k + 1] or 0 end, 0, 3)
    assert.is_true(chi < chi2_bound(df), "choice with p: chi2 " .. chi)
    -- from an array's elements, p as an array
    local pool = luda.array({ 10, 20, 30 })
    local s = values(g:choice(pool, 1000, true, luda.array({ 0, 0.5, 0.5 })))
    for _, v in ipairs(s) do assert.is_true(v == 20 or v == 30) end
    -- without replacement: distinct; with p, never a zero-probability element
    local d = values(g:choice(50, 50, false))
    table.sort(d)
    for i = 1, 50 do assert.are.equal(i - 1, d[i]) end
    local w = {}
    for i = 1, 20 do w[i] = i % 2 == 0 and 0.1 or 0 end
    local e = values(g:choice(20, 10, false, w))
    table.sort(e)
    for i = 1, 10 do assert.are.equal(2 * i - 1, e[i]) end
    -- without replacement with p: the first pick follows p
    local firsts = {}
    for t = 1, 2000 do firsts[t] = values(g:choice(3, 1, false, { 0.2, 0.3, 0.5 }))[1] end
    local fchi, fdf = chi2_discrete(firsts, function(k) return ({ 0.2, 0.3, 0.5 })[k + 1] or 0 end, 0, 2)
    assert.is_true(fchi < chi2_bound(fdf), "first picks: chi2 " .. fchi)
    assert.are.equal(0, #g:choice(5).shape)
    assert.are.same({ 2, 3 }, g:choice(5, { 2, 3 }).shape)
    -- permutation of an integer and of an array (along the first axis), shuffle in place
    local perm = values(g:permutation(1000))
    table.sort(perm)
    for i = 1, 1000 do assert.are.equal(i - 1, perm[i]) end
    local m = luda.arange(12):reshape(4, 3)
    local pm = g:permutation(m)
    local rows = {}
    for r, row in ipairs(pm:totable()) do
      assert.are.equal(row[1] + 1, row[2])
      rows[r] = row[1] // 3
    end
    table.sort(rows)
    assert.are.same({ 0, 1, 2, 3 }, rows)
    local x = luda.arange(100, "float32")
    g:shuffle(x)
    local xs = values(x)
    assert.are_not.same(values(luda.arange(100, "float32")), xs)
    table.sort(xs)
    assert.are.same(values(luda.arange(100, "float32")), xs)
    assert.are.equal(0, g:permutation(0).shape[1])
  end)

  on_devices("a chunked draw is the plain draw, for any chunks", function()
    for _, case in ipairs({ { { 7, 5 }, { 3, 2 } }, { { 4, 3, 5 }, { 2, 3, 2 } }, { { 10 }, { 4 } }, { { 6, 4 }, { 6, 1 } },
      { { 3, 4, 3, 5, 3, 2 }, { 2, 3, 2, 2, 2, 1 } }, { { 3, 0, 2 }, { 2, 1, 1 } } }) do
      local shape, chunks = case[1], case[2]
      local want = values(luda.random.random(shape, "float32", { seed = 8 }))
      local c = luda.chunked.random(shape, chunks, "float32", { seed = 8 })
      assert.are.same(want, values(c:compute()))
    end
    -- from the module's stream: the chunked draw then the next values continue it
    luda.random.seed(4)
    local c = luda.chunked.random({ 5, 4 }, { 2, 3 })
    local after = values(luda.random.random(2))
    local whole = values(luda.random.random(22, nil, { seed = 4 }))
    local got = values(c:compute())
    for i = 1, 20 do assert.are.equal(whole[i], got[i]) end
    assert.are.same({ whole[21], whole[22] }, after)
  end)

  it("the same values for any LUDA_CPU_THREADS", function()
    local code = "local g = luda.random.default_rng(77) " ..
      "for _, x in ipairs({ g:normal(0, 1, 3000), g:poisson(25, 3000), g:binomial(300, 0.45, 3000), g:permutation(3000) }) do " ..
      "for _, v in ipairs(x:astype('float64'):totable()) do io.write(string.format('%a ', v)) end end"
    local outputs = {}
    for _, threads in ipairs({ "1", "3" }) do
      local out, err, status = support.run_luda("-e " .. support.quote(code), nil, false,
        { LUDA_CPU_THREADS = threads, LUDA_DEVICE = "cpu" })
      assert.are.equal(0, status, err)
      outputs[#outputs + 1] = out
    end
    assert.is_true(#outputs[1] > 12000)
    assert.are.equal(outputs[1], outputs[2])
    -- and this process's cpu draws are the same
    local mine = {}
    luda.with_device("cpu", function()
      local g = luda.random.default_rng(77)
      for _, x in ipairs({ g:normal(0, 1, 3000), g:poisson(25, 3000), g:binomial(300, 0.45, 3000), g:permutation(3000) }) do
        for _, v in ipairs(x:astype("float64"):totable()) do mine[#mine + 1] = string.format("%a ", v) end
      end
    end)
    assert.are.equal(outputs[1], table.concat(mine))
  end)

  it("the same values on cpu and cuda for every distribution", function()
    local why = support.gpu_missing()
    if why then return pending(why) end
    local function draws(device)
      local g = luda.random.default_rng(123)
      local o = { device = device }
      return {
        g:random(4099, "float32", o), g:uniform(-1, 1, 4099, o), g:normal(2, 3, 4099, o),
        g:standard_normal(4099, "float32", o), g:exponential(2, 4099, o), g:integers(-9, 1000, 4099, "int16", false, o),
        g:poisson(2.5, 4099, o), g:poisson(400, 4099, o), g:binomial(30, 0.2, 4099, o), g:binomial(5000, 0.7, 4099, o),
        g:permutation(4099, o), g:choice(100, 50, false, nil, o),
      }
    end
    local c, d = draws("cpu"), draws("cuda")
    for i = 1, #c do
      assert.are.equal("cuda:0", tostring(d[i].device))
      assert.are.same(values(c[i]), values(d[i]), "draw " .. i)
    end
  end)

  on_devices("errors", function()
    local g = luda.random.default_rng(1)
    raises("normal: scale < 0", function() local _ = g:normal(0, -1) end)
    raises("exponential: scale < 0", function() local _ = g:exponential(-2, 3) end)
    raises("poisson: lam < 0 or lam is NaN", function() local _ = g:poisson(-1) end)
    raises("poisson: lam < 0 or lam is NaN", function() local _ = g:poisson(0 / 0) end)
    raises("poisson: lam value too large", function() local _ = g:poisson(1e300) end)
    raises("binomial: n < 0", function() local _ = g:binomial(-1, 0.5) end)
    raises("binomial: p < 0, p > 1 or p is NaN", function() local _ = g:binomial(3, 1.5) end)
    raises("uniform: high - low range exceeds valid bounds", function() local _ = g:uniform(0, math.huge) end)
    raises("integers: low >= high", function() local _ = g:integers(5, 5) end)
    raises("integers: low > high", function() local _ = g:integers(5, 4, nil, nil, true) end)
    raises("integers: high <= 0", function() local _ = g:integers(0) end)
    raises("integers: high is out of bounds for int8", function() local _ = g:integers(0, 300, 3, "int8") end)
    raises("integers: low is out of bounds for uint8", function() local _ = g:integers(-1, 3, 3, "uint8") end)
    raises("Unsupported dtype float64 for integers", function() local _ = g:integers(0, 3, 3, "float64") end)
    raises("Unsupported dtype int32 for random", function() local _ = g:random(3, "int32") end)
    raises("Unsupported dtype int32 for standard_normal", function() local _ = g:standard_normal(3, "int32") end)
    raises("choice: probabilities do not sum to 1", function() local _ = g:choice(3, 2, true, { 0.5, 0.2, 0.2 }) end)
    raises("choice: probabilities are not non-negative", function() local _ = g:choice(3, 2, true, { 1.5, -0.5, 0 }) end)
    raises("choice: a and p must have same size", function() local _ = g:choice(3, 2, true, { 0.5, 0.5 }) end)
    raises("choice: a must be a positive integer unless no samples are taken", function() local _ = g:choice(0, 2) end)
    raises("choice: Cannot take a larger sample than population when replace is False",
      function() local _ = g:choice(3, 5, false) end)
    raises("choice: Fewer non-zero entries in p than size", function() local _ = g:choice(3, 3, false, { 0.5, 0.5, 0 }) end)
    raises("permutation: axis 0 is out of bounds for array of dimension 0",
      function() local _ = g:permutation(luda.array(3.0)) end)
    raises("normal: loc must be a number, got table (array parameters are not supported)",
      function() local _ = g:normal({ 1 }, 1, 3) end)
    raises("normal: unknown option 'devce' (options: device)", function() local _ = g:normal(0, 1, 3, { devce = "cpu" }) end)
    raises("default_rng: seed must be an integer or nil, got 1.5", function() local _ = luda.random.default_rng(1.5) end)
    raises("normal: scale < 0", function() local _ = luda.random.normal(0, -1) end)
  end)
end)

-- luda.random's distributions on fixed seeds, n = 1e6 each: the mean within 5 standard
-- errors and the variance within 1% of the distribution's, and a chi-square fit against
-- its CDF (continuous: 100 bins of equal probability; discrete: every value expected 20
-- times or more) below a bound a correct generator exceeds with probability ~1e-4; the
-- same fit refuses a reference 1% off, so the test has the power to fail.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local stats = require "random_stats"

local on_devices = support.device_tests(_ENV)
local N = 1000000
local normal_cdf, CHI2_CONTINUOUS, chi2_continuous = stats.normal_cdf, stats.CHI2_CONTINUOUS, stats.chi2_continuous
local chi2_discrete, chi2_bound, poisson_pmf, binomial_pmf = stats.chi2_discrete, stats.chi2_bound, stats.poisson_pmf,
  stats.binomial_pmf

local function values(x) return x:totable() end  -- a 1-d array's
local function check_moments(what, x, mean, var) assert.is_true(stats.moments_fit(what, x, mean, var)) end

describe("luda.random's distributions", function()
  on_devices("distributions: moments and a chi-square fit on fixed seeds", function()
    local g = luda.random.default_rng(20240611)
    -- uniform, normal, exponential: continuous
    local u = g:uniform(-2, 3, N)
    check_moments("uniform", u, 0.5, 25 / 12)
    local uc = function(x) return (x + 2) / 5 end
    assert.is_true(chi2_continuous(values(u), uc) < CHI2_CONTINUOUS, "uniform fit")
    local z = g:normal(1, 2, N)
    check_moments("normal", z, 1, 4)
    local zs = values(z)
    assert.is_true(chi2_continuous(zs, function(x) return normal_cdf(x, 1, 2) end) < CHI2_CONTINUOUS, "normal fit")
    -- the same test refuses a normal of scale 2.02: it has the power to see a 1% error
    assert.is_true(chi2_continuous(zs, function(x) return normal_cdf(x, 1, 2.02) end) > CHI2_CONTINUOUS, "power")
    local z32 = g:standard_normal(N, "float32")
    check_moments("standard_normal float32", z32, 0, 1)
    assert.is_true(chi2_continuous(values(z32), function(x) return normal_cdf(x, 0, 1) end) < CHI2_CONTINUOUS)
    local e = g:exponential(0.5, N)
    check_moments("exponential", e, 0.5, 0.25)
    local es = values(e)
    assert.is_true(chi2_continuous(es, function(x) return 1 - math.exp(-x / 0.5) end) < CHI2_CONTINUOUS, "exp fit")
    assert.is_true(chi2_continuous(es, function(x) return 1 - math.exp(-x / 0.505) end) > CHI2_CONTINUOUS, "power")
    -- poisson: multiplication (lam < 10) and PTRS; binomial: inversion, BTRS, p > 1/2
    for _, lam in ipairs({ 3.5, 40, 1000 }) do
      local x = g:poisson(lam, N)
      assert.are.equal("int64", tostring(x.dtype))
      check_moments("poisson " .. lam, x, lam, lam)
      local chi, df = chi2_discrete(values(x), poisson_pmf(lam), 0, math.floor(lam * 3 + 30))
      assert.is_true(chi < chi2_bound(df), ("poisson %g: chi2 %g with %d df"):format(lam, chi, df))
    end
    local wrong_chi, wrong_df = chi2_discrete(values(g:poisson(40, N)), poisson_pmf(40.4), 0, 200)
    assert.is_true(wrong_chi > chi2_bound(wrong_df), "poisson: the fit refuses lam 40.4 for 40")
    for _, np in ipairs({ { 20, 0.3 }, { 1000, 0.4 }, { 200, 0.85 }, { 5, 1 }, { 0, 0.5 } }) do
      local n, p = np[1], np[2]
      local x = g:binomial(n, p, N)
      assert.are.equal("int64", tostring(x.dtype))
      if p == 1 or n == 0 then
        assert.are.equal(n, x:min():item())
        assert.are.equal(n, x:max():item())
      else
        check_moments(("binomial %d %g"):format(n, p), x, n * p, n * p * (1 - p))
        local chi, df = chi2_discrete(values(x), binomial_pmf(n, p), 0, n)
        assert.is_true(chi < chi2_bound(df), ("binomial %d %g: chi2 %g with %d df"):format(n, p, chi, df))
      end
    end
    local bx = values(g:binomial(1000, 0.4, N))
    local bchi, bdf = chi2_discrete(bx, binomial_pmf(1000, 0.404), 0, 1000)
    assert.is_true(bchi > chi2_bound(bdf), "binomial: the fit refuses p 0.404 for 0.4")
    -- integers: each of [-3, 6] a tenth
    local k = g:integers(-3, 7, N)
    check_moments("integers", k, 1.5, 99 / 12)
    local chi, df = chi2_discrete(values(k), function(v) return (v >= -3 and v <= 6) and 0.1 or 0 end, -3, 6)
    assert.is_true(chi < chi2_bound(df), "integers fit")
  end)

end)

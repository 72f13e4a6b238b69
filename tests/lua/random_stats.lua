-- Statistics for the random specs, in plain Lua: moments of an array, chi-square statistics
-- of a sample against a distribution's CDF or probabilities, and those of the distributions
-- luda.random draws (normal CDF, Poisson and binomial probabilities).
local M = {}

local function mean_var(x)
  local f = x:astype("float64")
  local m = f:mean():item()
  return m, ((f - m) ^ 2):mean():item()
end

-- Normal CDF: erfc by W. J. Cody's rational approximations is more than needed here;
-- Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7) moves an expected bin count by < 0.2.
local function erf(x)
  local s = x < 0 and -1 or 1
  x = math.abs(x)
  local t = 1 / (1 + 0.3275911 * x)
  local y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
    math.exp(-x * x)
  return s * y
end
local function normal_cdf(x, loc, scale) return 0.5 * (1 + erf((x - loc) / (scale * math.sqrt(2)))) end

-- Chi-square of a continuous sample against `cdf`, over 100 bins of equal probability;
-- with 99 degrees of freedom, 150 is exceeded with probability about 6e-4.
local CHI2_CONTINUOUS = 150
local function chi2_continuous(xs, cdf)
  local bins = {}
  for b = 1, 100 do bins[b] = 0 end
  for _, x in ipairs(xs) do
    local b = math.floor(cdf(x) * 100) + 1
    if b > 100 then b = 100 elseif b < 1 then b = 1 end
    bins[b] = bins[b] + 1
  end
  local e, chi = #xs / 100, 0
  for b = 1, 100 do chi = chi + (bins[b] - e) ^ 2 / e end
  return chi
end

-- Chi-square of an integer sample against `pmf` over the values whose expected count is at
-- least 20, the rest in one bin; the statistic and its degrees of freedom.
local function chi2_discrete(xs, pmf, lo, hi)
  local counts = {}
  for _, x in ipairs(xs) do counts[x] = (counts[x] or 0) + 1 end
  local n, chi, df, rest_e = #xs, 0, 0, 1.0
  local rest_o = n
  for k = lo, hi do
    local e = n * pmf(k)
    if e >= 20 then
      local o = counts[k] or 0
      chi, df = chi + (o - e) ^ 2 / e, df + 1
      rest_e, rest_o = rest_e - e / n, rest_o - o
    end
  end
  rest_e = rest_e * n
  if rest_e >= 5 then chi, df = chi + (rest_o - rest_e) ^ 2 / rest_e, df + 1 end
  return chi, df - 1
end
-- A bound that a chi-square of df degrees of freedom exceeds with probability ~1e-4.
local function chi2_bound(df) return df + 4 * math.sqrt(2 * df) + 10 end

local function logfact(k)
  local s = 0
  for i = 2, k do s = s + math.log(i) end
  return s
end
local function poisson_pmf(lam)
  return function(k) return math.exp(-lam + k * math.log(lam) - logfact(k)) end
end
local function binomial_pmf(n, p)
  local lf = { [0] = 0 }
  for i = 1, n do lf[i] = lf[i - 1] + math.log(i) end
  return function(k)
    if k < 0 or k > n then return 0 end
    return math.exp(lf[n] - lf[k] - lf[n - k] + k * math.log(p) + (n - k) * math.log(1 - p))
  end
end

-- Whether x's mean is within 5 standard errors of `mean` and its variance within 1% of
-- `var` (at n = 1e6 the variance's standard error is below 0.3% for these distributions);
-- and what was found.
local function moments_fit(what, x, mean, var)
  local n = x.size
  local m, v = mean_var(x)
  local ok = math.abs(m - mean) < 5 * math.sqrt(var / n) and math.abs(v - var) < 0.01 * var
  return ok, ("%s: mean %.6g (expected %.6g), variance %.6g (expected %.6g)"):format(what, m, mean, v, var)
end

M.mean_var, M.normal_cdf, M.CHI2_CONTINUOUS, M.chi2_continuous = mean_var, normal_cdf, CHI2_CONTINUOUS, chi2_continuous
M.chi2_discrete, M.chi2_bound, M.poisson_pmf, M.binomial_pmf, M.moments_fit =
  chi2_discrete, chi2_bound, poisson_pmf, binomial_pmf, moments_fit
return M

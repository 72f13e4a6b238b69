-- NumPy's nan reductions (nansum nanprod nanmax nanmin nanmean nanargmax nanargmin), dtype=
-- and initial= on the reductions, and vectorize's f:reduce (NumPy's ufunc.reduce), each
-- against a plain-Lua reference (a float64 or integer fold on the host) on random inputs
-- with NaN at random places, over every set of axes and in every layout, on each device.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local raises = H.raises

local on_devices = support.device_tests(_ENV)

local function isnan(v) return v ~= v end
local function max(a, v) return math.max(a, v) end
local function min(a, v) return math.min(a, v) end

-- Random floats in [lo, hi] of `dtype` with NaN at random places (probability p).
local function with_nans(dtype, shape, p, lo, hi)
  local h = H.random(dtype, shape, lo, hi)
  for k = 1, #h.data do if math.random() < p then h.data[k] = 0 / 0 end end
  return h
end

-- The same data in every layout a kernel reads: { name, array, host data }.
local function nan_layouts(dtype, p, lo, hi)
  local cases = {}
  local function add(name, x) cases[#cases + 1] = { name, x, H.read(x) } end
  add("contiguous 4x5", H.to_array(with_nans(dtype, { 4, 5 }, p, lo, hi), dtype))
  add("transposed 6x3", H.to_array(with_nans(dtype, { 3, 6 }, p, lo, hi), dtype).T)
  add("strided ::2, 1::3 of 7x10", H.to_array(with_nans(dtype, { 7, 10 }, p, lo, hi), dtype):slice("::2, 1::3"))
  add("reversed ::-1 of 9", H.to_array(with_nans(dtype, { 9 }, p, lo, hi), dtype):slice("::-1"))
  add("size-1 axes 1x5x1", H.to_array(with_nans(dtype, { 1, 5, 1 }, p, lo, hi), dtype))
  add("0-d", H.to_array(with_nans(dtype, {}, p, lo, hi), dtype))
  add("0-d NaN", luda.full({}, 0 / 0, dtype))
  return cases
end

-- Host folds that skip NaN, as NumPy's nan forms.
local NAN_FOLDS = {
  nansum = { function() return 0.0 end, function(a, v) if isnan(v) then return a end return a + v end },
  nanprod = { function() return 1.0 end, function(a, v) if isnan(v) then return a end return a * v end },
  nanmax = { function() return 0 / 0 end, function(a, v) if isnan(v) or (not isnan(a) and a >= v) then return a end return v end },
  nanmin = { function() return 0 / 0 end, function(a, v) if isnan(v) or (not isnan(a) and a <= v) then return a end return v end },
  nanmean = { function() return { 0.0, 0 } end,
              function(a, v) if isnan(v) then return a end return { a[1] + v, a[2] + 1 } end,
              function(a) return a[1] / a[2] end },
}
local function host_nan(method, h, axes, keep)
  local f = NAN_FOLDS[method]
  return H.reduce(h, axes or nil, keep, f[1], f[2], f[3])
end

-- nanargmax/nanargmin: NaN read as -inf/+inf, the first index of the extreme; "all-NaN"
-- where a group has no number.
local function host_nanarg(method, h, axes)
  local fill = method == "nanargmax" and -math.huge or math.huge
  local better = method == "nanargmax" and function(v, b) return v > b end or function(v, b) return v < b end
  local all_nan = false
  local r = H.reduce(h, axes or nil, false, function() return { nil, -1, true } end, function(acc, v, pos)
    local nan = isnan(v)
    if nan then v = fill end
    if acc[1] == nil or better(v, acc[1]) then acc = { v, pos, acc[3] } end
    if not nan then acc[3] = false end
    return acc
  end, function(acc)
    all_nan = all_nan or acc[3]
    return acc[2]
  end)
  return r, all_nan
end

-- x:method(axes [, options]) with `false` for no axis.
local function call(x, method, axes, options)
  if axes then return x[method](x, axes, options) end
  return x[method](x, options)
end

local AXES = { false, 1, 2, 3, -1, { 1, 2 }, { 1, 3 }, { 2, 3 }, { 1, 2, 3 } }
local function axes_text(axes) return type(axes) == "table" and "{" .. table.concat(axes, ", ") .. "}" or tostring(axes) end

describe("nan reductions", function()
  before_each(function() math.randomseed(7211) end)

  on_devices("nansum nanprod nanmax nanmin nanmean skip NaN over every set of axes, with keepdims", function()
    for _, p in ipairs({ 0.3, 0.9 }) do  -- 0.9: many all-NaN groups
      local h = with_nans("float64", { 3, 4, 5 }, p, -2, 2)
      local x = H.to_array(h, "float64")
      for _, method in ipairs({ "nansum", "nanprod", "nanmax", "nanmin", "nanmean" }) do
        for _, axes in ipairs(AXES) do
          for _, keep in ipairs({ false, true }) do
            local what = ("p=%s %s axis %s keepdims %s"):format(p, method, axes_text(axes), keep)
            local z = call(x, method, axes, keep and { keepdims = true } or nil)
            assert.are.equal("float64", z.dtype, what)
            local ok = (method == "nanmax" or method == "nanmin") and H.exact or H.rel(1e-12, 1e-300)
            H.check(z, host_nan(method, h, axes, keep), ok, what)
          end
        end
      end
    end
  end)

  on_devices("float32: the dtype kept, sums within the rounding of their order, extremes exact", function()
    local h = with_nans("float32", { 50, 300 }, 0.2, -1, 1)
    local x = H.to_array(h, "float32")
    local abs = function(v) if isnan(v) then return 0 end return math.abs(v) end
    for _, axes in ipairs({ false, 1, 2 }) do
      local scale = H.reduce(h, axes or nil, false, function() return 0 end, function(a, v) return a + abs(v) end)
      for _, method in ipairs({ "nansum", "nanmean", "nanmax", "nanmin" }) do
        local z = call(x, method, axes)
        local what = method .. " axis " .. axes_text(axes)
        assert.are.equal("float32", z.dtype, what)
        local ok = H.exact
        if method == "nansum" then ok = H.within(function(k) return 2 ^ -20 * scale.data[k] + 1e-30 end) end
        if method == "nanmean" then
          local n = H.reduce(h, axes or nil, false, function() return 0 end, function(a, v) return a + (isnan(v) and 0 or 1) end)
          ok = H.within(function(k) return 2 ^ -20 * scale.data[k] / n.data[k] + 1e-30 end)
        end
        H.check(z, host_nan(method, h, axes), ok, what)
      end
    end
  end)

  on_devices("nanargmax and nanargmin: NaN read as -inf and +inf; an all-NaN group raises", function()
    local h = with_nans("float64", { 4, 5, 6 }, 0.4, -3, 3)
    local x = H.to_array(h, "float64")
    local raised = 0
    for _, method in ipairs({ "nanargmax", "nanargmin" }) do
      for _, axes in ipairs({ false, 1, 2, 3, -1 }) do
        local want, all_nan = host_nanarg(method, h, axes)
        local what = method .. " axis " .. axes_text(axes)
        if all_nan then
          raised = raised + 1
          local ok, err = pcall(call, x, method, axes)
          assert.is_false(ok, what)
          assert.matches(method .. ": All%-NaN slice encountered$", err, nil, false, what)
        else
          local z = call(x, method, axes)
          assert.are.equal("int64", z.dtype, what)
          H.check(z, want, H.exact, what)
        end
      end
    end
    assert.is_true(raised > 0 and raised < 10)  -- both paths taken
    -- NumPy reads NaN as -inf: [NaN, -inf] gives 0, the NaN's index
    H.check(luda.array({ 0 / 0, -math.huge }):nanargmax(), H.of(0), H.exact)
    H.check(luda.array({ 0 / 0, math.huge, 1 }):nanargmin(), H.of(2), H.exact)
    H.check(luda.array({ 2, 0 / 0, 7, 7 }, "float32"):nanargmax(), H.of(2), H.exact)
  end)

  on_devices("every layout: strided, transposed, reversed, size-1, 0-d", function()
    for _, case in ipairs(nan_layouts("float64", 0.3, -5, 5)) do
      local name, x, h = case[1], case[2], case[3]
      for _, method in ipairs({ "nansum", "nanprod", "nanmax", "nanmin", "nanmean" }) do
        H.check(x[method](x), host_nan(method, h), H.rel(1e-12, 1e-300), name .. " " .. method)
        if x.ndim >= 1 then
          H.check(x[method](x, -1), host_nan(method, h, -1), H.rel(1e-12, 1e-300), name .. " " .. method .. "(-1)")
        end
      end
      for _, method in ipairs({ "nanargmax", "nanargmin" }) do
        local want, all_nan = host_nanarg(method, h)
        if not all_nan then H.check(x[method](x), want, H.exact, name .. " " .. method) end
      end
    end
  end)

  on_devices("integers and bools: the plain reductions", function()
    local h = H.random("int32", { 5, 7 }, -50, 50)
    local x = H.to_array(h, "int32")
    for _, pair in ipairs({ { "nansum", "sum" }, { "nanprod", "prod" }, { "nanmax", "max" }, { "nanmin", "min" },
                            { "nanmean", "mean" }, { "nanargmax", "argmax" }, { "nanargmin", "argmin" } }) do
      for _, axes in ipairs({ false, 1, 2 }) do
        local z, want = call(x, pair[1], axes), call(x, pair[2], axes)
        assert.are.equal(want.dtype, z.dtype, pair[1])
        H.check(z, H.read(want), H.exact, pair[1] .. " axis " .. axes_text(axes))
      end
    end
    H.check(H.to_array(h, "int32"):nansum(1), H.sum(h, 1), H.exact)
    local b = luda.array({ true, false, true })
    assert.are.same({ "int64", 2 }, { b:nansum().dtype, b:nansum():item() })
    assert.are.same({ "bool", true }, { b:nanmax().dtype, b:nanmax():item() })
  end)

  on_devices("empty axes as NumPy: nansum 0, nanprod 1, nanmean NaN; nanmax and nanargmax raise", function()
    local e = luda.empty({ 3, 0 })
    H.check(e:nansum(2), H.of({ 0.0, 0.0, 0.0 }), H.exact)
    H.check(e:nanprod(2), H.of({ 1.0, 1.0, 1.0 }), H.exact)
    H.check(e:nanmean(2), H.of({ 0 / 0, 0 / 0, 0 / 0 }), H.exact)
    H.check(e:nansum(1), H.of({}), H.exact)
    H.check(luda.empty({ 0 }, "float32"):nanmean(), H.of(0 / 0), H.exact)
    raises("nanmax: zero-size array to reduction operation fmax which has no identity", function() return e:nanmax() end)
    raises("nanmin: zero-size array to reduction operation fmin which has no identity", function() return e:nanmin(2) end)
    raises("nanmax: zero-size array to reduction operation maximum which has no identity", function() return luda.empty(0, "int32"):nanmax() end)
    raises("nanargmax: attempt to get argmax of an empty sequence", function() return e:nanargmax(2) end)
    raises("nanargmin: attempt to get argmin of an empty sequence", function() return luda.nanargmin(luda.empty(0)) end)
    -- all-NaN: NaN, as NumPy's (which warns)
    local n = luda.full({ 2, 3 }, 0 / 0, "float32")
    H.check(n:nanmax(2), H.of({ 0 / 0, 0 / 0 }), H.exact)
    H.check(n:nanmean(), H.of(0 / 0), H.exact)
    H.check(n:nansum(1), H.of({ 0.0, 0.0, 0.0 }), H.exact)
    raises("nanargmin: All-NaN slice encountered", function() return n:nanargmin(1) end)
  end)

  on_devices("luda.nansum(x, ...) is x:nansum(...); out=", function()
    local h = with_nans("float64", { 4, 6 }, 0.3)
    local x = H.to_array(h, "float64")
    H.check(luda.nanmax(x, 2), host_nan("nanmax", h, 2), H.exact)
    local z = luda.empty(6)
    assert.is_true(rawequal(z, x:nanmean(1, { out = z })))
    H.check(z, host_nan("nanmean", h, 1), H.rel(1e-12))
    local z32 = luda.empty(4, "float32")
    assert.is_true(rawequal(z32, H.to_array(h, "float32"):nanmean(2, { out = z32 })))
    raises("nanmean: out is a float64 array of shape (6,) but the result is a float32 array of shape (6,)",
           function() return H.to_array(h, "float32"):nanmean(1, { out = z }) end)
  end)
end)

-- var of h's groups (NaN skipped with skip_nan), two-pass in float64, divided by
-- max(n - ddof, 0); its root for std.
local function host_var(h, axes, keep, ddof, skip_nan, root)
  local means = H.reduce(h, axes or nil, true, function() return { 0.0, 0 } end, function(a, v)
    if skip_nan and isnan(v) then return a end
    return { a[1] + v, a[2] + 1 }
  end, function(a) return a[1] / a[2] end)
  -- the group of each element: reduce positions back through the kept axes
  local ndim, set = #h.shape, {}
  if axes == nil or axes == false then for d = 1, ndim do set[d] = true end
  else for _, a in ipairs(type(axes) == "table" and axes or { axes }) do set[a < 0 and ndim + 1 + a or a] = true end end
  local dev = { shape = h.shape, data = {} }
  for k = 1, #h.data do
    local idx, o = H.unflatten(h.shape, k), 0
    for d = 1, ndim do o = o * (set[d] and 1 or h.shape[d]) + (set[d] and 0 or idx[d]) end
    local v = h.data[k] - means.data[o + 1]
    dev.data[k] = v * v
  end
  return H.reduce(dev, axes or nil, keep, function() return { 0.0, 0 } end, function(a, v)
    if skip_nan and isnan(v) then return a end
    return { a[1] + v, a[2] + 1 }
  end, function(a)
    local r = a[1] / math.max(a[2] - ddof, 0)
    if root then return math.sqrt(r) end
    return r
  end)
end

describe("var and std, nanvar and nanstd", function()
  before_each(function() math.randomseed(6113) end)

  on_devices("over every set of axes, with ddof and keepdims, against a two-pass float64 reference", function()
    local h = with_nans("float64", { 3, 4, 5 }, 0.3, -10, 10)
    local clean = H.random("float64", { 3, 4, 5 }, -10, 10)
    local x, c = H.to_array(h, "float64"), H.to_array(clean, "float64")
    for _, axes in ipairs(AXES) do
      for _, ddof in ipairs({ 0, 1 }) do
        local what = ("axis %s ddof %d"):format(axes_text(axes), ddof)
        local o = { ddof = ddof, keepdims = ddof == 1 }
        H.check(call(c, "var", axes, o), host_var(clean, axes, ddof == 1, ddof, false), H.rel(1e-12, 1e-300), "var " .. what)
        H.check(call(c, "std", axes, o), host_var(clean, axes, ddof == 1, ddof, false, true), H.rel(1e-12, 1e-300), "std " .. what)
        H.check(call(x, "var", axes, o), host_var(h, axes, ddof == 1, ddof, false), H.rel(1e-12, 1e-300), "var with NaN " .. what)
        H.check(call(x, "nanvar", axes, o), host_var(h, axes, ddof == 1, ddof, true), H.rel(1e-12, 1e-300), "nanvar " .. what)
        H.check(call(x, "nanstd", axes, o), host_var(h, axes, ddof == 1, ddof, true, true), H.rel(1e-12, 1e-300), "nanstd " .. what)
      end
    end
  end)

  on_devices("dtypes: integers give float64, float32 stays, dtype= computes in it; layouts; errors", function()
    local hi = H.random("int32", { 6, 7 }, -100, 100)
    local v = H.to_array(hi, "int32"):var(2)
    assert.are.equal("float64", v.dtype)
    H.check(v, host_var(hi, 2, false, 0, false), H.rel(1e-12))
    local hf = with_nans("float32", { 8, 50 }, 0.2, -1, 1)
    local xf = H.to_array(hf, "float32")
    assert.are.same({ "float32", "float32", "float64" }, { xf:std().dtype, xf:nanvar(1).dtype, xf:nanvar(1, { dtype = "float64" }).dtype })
    H.check(xf:nanvar(2), host_var(hf, 2, false, 0, true), H.rel(2 ^ -18))
    H.check(xf:nanstd(1, { dtype = luda.float64 }), host_var(hf, 1, false, 0, true, true), H.rel(1e-12))
    for _, case in ipairs(nan_layouts("float64", 0.3, -5, 5)) do
      H.check(case[2]:nanvar(), host_var(case[3], nil, false, 0, true), H.rel(1e-12, 1e-300), case[1])
      H.check(luda.std(case[2]), host_var(case[3], nil, false, 0, false, true), H.rel(1e-12, 1e-300), case[1])
    end
    -- empty groups and ddof past the count give NaN, as NumPy's (which warns)
    H.check(luda.empty({ 2, 0 }):var(2), H.of({ 0 / 0, 0 / 0 }), H.exact)
    H.check(luda.array({ 1.5 }):var({ ddof = 1 }), H.of(0 / 0), H.exact)
    H.check(luda.full({ 3 }, 0 / 0):nanstd(), H.of(0 / 0), H.exact)
    local x = luda.ones({ 2, 3 })
    raises("var: dtype must be a float dtype (float16, bfloat16, float32 or float64), got int64", function() return x:var({ dtype = "int64" }) end)
    raises("nanstd: option 'ddof' must be a number, got 'one'", function() return x:nanstd(1, { ddof = "one" }) end)
    raises("std: unknown option 'initial'; expected axis, keepdims, dtype, ddof, out, stream", function() return x:std({ initial = 1 }) end)
  end)
end)

describe("reductions with dtype= and initial=", function()
  before_each(function() math.randomseed(3907) end)

  on_devices("dtype= converts each element, accumulates and returns in the dtype", function()
    local h = H.random("float32", { 6, 40 }, -1, 1)
    local x = H.to_array(h, "float32")
    for _, axes in ipairs({ false, 1, 2 }) do
      local z = call(x, "sum", axes, { dtype = "float64" })
      assert.are.equal("float64", z.dtype)
      H.check(z, H.sum(h, axes or nil), H.rel(1e-13, 1e-300), "float32 sum in float64 axis " .. axes_text(axes))
    end
    -- sum(int8, dtype=int8) wraps in int8, as NumPy's
    local hi = H.random("int8", { 3, 50 }, 60, 120)
    local xi = H.to_array(hi, "int8")
    local z = xi:sum(2, { dtype = "int8" })
    assert.are.equal("int8", z.dtype)
    H.check(z, H.map(function(v) return H.wrap(v, 8, false) end, H.sum(hi, 2)), H.exact)
    -- floats to integers truncate towards zero
    local hf = H.random("float64", { 30 }, -10, 10)
    H.check(luda.sum(H.to_array(hf, "float64"), nil, { dtype = luda.int32 }),
            H.of(H.sum(H.map(function(v) return math.tointeger(v < 0 and math.ceil(v) or math.floor(v)) end, hf)).data[1]),
            H.exact)
    -- prod and mean
    local hp = H.random("int16", { 4, 9 }, -3, 3)
    local p = H.to_array(hp, "int16"):prod(2, { dtype = "float64" })
    assert.are.equal("float64", p.dtype)
    H.check(p, H.reduce(hp, 2, false, function() return 1 end, function(a, v) return a * v end), H.exact)
    local m = H.to_array(hp, "int16"):mean(1, { dtype = "float32" })
    assert.are.equal("float32", m.dtype)
    H.check(m, H.reduce(hp, 1, false, function() return 0 end, function(a, v) return a + v end,
                        function(a, n) return a / n end), H.near32(2))
    -- nansum and nanmean with a dtype
    local hn = with_nans("float32", { 5, 8 }, 0.3, -1, 1)
    local s = H.to_array(hn, "float32"):nansum(2, { dtype = "float64" })
    assert.are.equal("float64", s.dtype)
    H.check(s, host_nan("nansum", hn, 2), H.rel(1e-13, 1e-300))
    local mn = H.to_array(hn, "float32"):nanmean(nil, { dtype = "float64" })
    assert.are.equal("float64", mn.dtype)
    H.check(mn, host_nan("nanmean", hn), H.rel(1e-13, 1e-300))
  end)

  on_devices("NumPy 2's default sum and prod dtypes: small ints widen to int64 and uint64", function()
    local want = { bool = "int64", int8 = "int64", int16 = "int64", int32 = "int64", uint8 = "uint64",
                   uint16 = "uint64", uint32 = "uint64", float32 = "float32" }
    for dtype, out in pairs(want) do
      local x = luda.ones(3, dtype)
      assert.are.same({ out, out, out }, { x:sum().dtype, x:prod().dtype, x:nansum().dtype }, dtype)
    end
  end)

  on_devices("initial= starts the reduction once per result; it makes max and min of an empty axis legal", function()
    local h = H.random("int32", { 3, 4, 5 }, -100, 100)
    local x = H.to_array(h, "int32")
    for _, axes in ipairs(AXES) do
      local what = "axis " .. axes_text(axes)
      H.check(call(x, "sum", axes, { initial = 1000 }), H.map(function(v) return v + 1000 end, H.sum(h, axes or nil)), H.exact, "sum " .. what)
      H.check(call(x, "max", axes, { initial = 50 }), H.reduce(h, axes or nil, false, function() return 50 end, max), H.exact, "max " .. what)
      H.check(call(x, "min", axes, { initial = 50, keepdims = true }),
              H.reduce(h, axes or nil, true, function() return 50 end, min), H.exact, "min " .. what)
      H.check(call(x, "nanmax", axes, { initial = -50 }), H.reduce(h, axes or nil, false, function() return -50 end, max), H.exact, "nanmax " .. what)
    end
    local hp = H.random("float64", { 4, 7 }, -2, 2)
    H.check(H.to_array(hp, "float64"):prod(2, { initial = 3 }),
            H.reduce(hp, 2, false, function() return 3 end, function(a, v) return a * v end), H.rel(1e-14))
    -- empty axes
    assert.are.same({ 5.0, "float64" }, { luda.empty(0):max({ initial = 5 }):item(), luda.empty(0):max({ initial = 5 }).dtype })
    H.check(luda.empty({ 3, 0 }, "int8"):min(2, { initial = -7 }), H.of({ -7, -7, -7 }), H.exact)
    H.check(luda.empty({ 0, 2 }):nanmax(1, { initial = 1.5 }), H.of({ 1.5, 1.5 }), H.exact)
    H.check(luda.empty({ 0 }, "int32"):sum({ initial = 4 }), H.of(4), H.exact)
    H.check(luda.empty({ 2, 0 }, "float32"):nanprod(2, { initial = 2 }), H.of({ 2.0, 2.0 }), H.exact)
    -- NaN: max propagates it, nanmax skips it
    H.check(luda.array({ 1, 0 / 0 }):max({ initial = 5 }), H.of(0 / 0), H.exact)
    H.check(luda.array({ 0 / 0, 0 / 0 }):nanmax({ initial = 5 }), H.of(5.0), H.exact)
    H.check(luda.array({ 0 / 0, 2 }):nanmin({ initial = 5 }), H.of(2.0), H.exact)
    H.check(luda.array({ 1, 2 }, "float32"):nansum({ initial = 0 / 0 }), H.of(0 / 0), H.exact)
    -- typed scalars, booleans, and initial with dtype
    H.check(luda.array({ 1, 2 }, "int8"):max({ initial = luda.int8(9) }), H.of(9), H.exact)
    H.check(luda.array({ false, false }):max({ initial = true }), H.of(true), H.exact)
    H.check(luda.array({ 100, 20 }, "int8"):sum({ dtype = "int8", initial = 10 }), H.of(H.wrap(130, 8, false)), H.exact)
  end)

  on_devices("errors: options an operation lacks, dtypes, initial values", function()
    local x = luda.ones({ 2, 3 })
    raises("argmax: unknown option 'initial'; expected axis, keepdims, out, stream", function() return x:argmax({ initial = 1 }) end)
    raises("max: unknown option 'dtype'; expected axis, keepdims, initial, out, stream", function() return x:max({ dtype = "int32" }) end)
    raises("mean: unknown option 'initial'; expected axis, keepdims, dtype, out, stream", function() return x:mean({ initial = 1 }) end)
    raises("nanargmin: unknown option 'dtype'; expected axis, keepdims, out, stream", function() return x:nanargmin({ dtype = "float32" }) end)
    raises("mean: dtype must be a float or complex dtype (float16, bfloat16, float32, float64, complex64 or complex128), got int32", function() return x:mean({ dtype = "int32" }) end)
    raises("nanmean: dtype must be a float or complex dtype (float16, bfloat16, float32, float64, complex64 or complex128), got int64", function() return x:nanmean(1, { dtype = "int64" }) end)
    raises("sum: dtype bool is not supported; use an integer or float dtype", function() return x:sum({ dtype = "bool" }) end)
    raises("sum: option 'initial' must be a number, a boolean or a typed scalar (luda.int8(3)), got table",
           function() return x:sum({ initial = {} }) end)
    raises("max: initial: Lua integer 1000 out of bounds for int8; pass a typed scalar or convert the array first (x:astype(\"int64\"))",
           function() return luda.ones(2, "int8"):max({ initial = 1000 }) end)
    raises("sum: initial: Lua integer -1 out of bounds for uint8; pass a typed scalar or convert the array first (x:astype(\"int64\"))",
           function() return luda.ones(2, "int8"):sum({ dtype = "uint8", initial = -1 }) end)
  end)
end)

describe("vectorize's reduce", function()
  before_each(function() math.randomseed(4421) end)

  local vadd = luda.vectorize(function(a, b) return a + b end)
  local vmax = luda.vectorize(function(a, b) return math.max(a, b) end)
  -- associative but not commutative: the order the elements are combined in shows
  local vfirst = luda.vectorize(function(a, b) return a end)
  local vlast = luda.vectorize(function(a, b) return b end)

  -- with Numba's identity=: one reduction kernel
  local vadd_id = luda.vectorize(function(a, b) return a + b end, { identity = 0 })
  local vmax_id = luda.vectorize(function(a, b) return math.max(a, b) end, { identity = math.mininteger })

  -- A boolean identity (NumPy's logical_and has True, logical_or False): of a bool function
  -- it is itself; of a function of numbers it is 1 or 0, as a store converts it.
  on_devices("a boolean identity=, for bool functions and for numbers", function()
    local vand = luda.vectorize(function(a, b) return a and b end, { identity = true })
    local vor = luda.vectorize(function(a, b) return a or b end, { identity = false })
    local vmul = luda.vectorize(function(a, b) return a * b end, { identity = true })
    for _, n in ipairs({ 0, 1, 2, 7, 33 }) do
      local h, hi = {}, {}
      for i = 1, 3 * n do h[i] = math.random() < 0.8; hi[i] = math.random(-3, 3) end
      local x = luda.array(h, "bool"):reshape({ 3, n })
      local xi = luda.array(hi, "int32"):reshape({ 3, n })
      local all, any, prod = {}, {}, {}
      for r = 1, 3 do
        all[r], any[r], prod[r] = true, false, 1
        for c = 1, n do
          all[r] = all[r] and h[(r - 1) * n + c]
          any[r] = any[r] or h[(r - 1) * n + c]
          prod[r] = prod[r] * hi[(r - 1) * n + c]
        end
      end
      assert.are.same(all, vand:reduce(x, 2):totable(), "and, n=" .. n)
      assert.are.same(any, vor:reduce(x, 2):totable(), "or, n=" .. n)
      assert.are.same(prod, vmul:reduce(xi, 2):totable(), "product, n=" .. n)
    end
  end)

  on_devices("a function with identity= is still called elementwise after its reduce", function()
    local vmax = luda.vectorize(function(a, b) return math.max(a, b) end, { identity = -math.huge })
    local x, y = luda.array({ 1, 5, -2 }, "float64"), luda.array({ 4, 0, -1 }, "float64")
    assert.are.equal(5, vmax:reduce(x):item())
    assert.are.same({ 4, 5, -1 }, vmax(x, y):totable())
    assert.are.equal(3, vmax(3, 2))
  end)

  on_devices("an associative function along each axis (the first by default), in every layout", function()
    for _, case in ipairs(H.layouts("int64", -1000, 1000)) do
      local name, x = case[1], case[2]
      local h = H.read(x)
      if x.ndim >= 1 and x.shape[1] > 0 then
        H.check(vadd:reduce(x), H.sum(h, 1), H.exact, name .. " default axis")
        H.check(vadd_id:reduce(x), H.sum(h, 1), H.exact, name .. " default axis, identity")
        H.check(vmax:reduce(x), H.reduce(h, 1, false, function() return math.mininteger end, max), H.exact, name .. " max")
        H.check(vmax_id:reduce(x), H.reduce(h, 1, false, function() return math.mininteger end, max), H.exact, name .. " max, identity")
        H.check(vfirst:reduce(x), H.reduce(h, 1, false, function() return nil end, function(a, v) if a == nil then return v end return a end), H.exact, name .. " first")
        H.check(vlast:reduce(x), H.reduce(h, 1, false, function() return nil end, function(_, v) return v end), H.exact, name .. " last")
      end
      if x.ndim >= 1 then  -- identity: empty axes give it
        H.check(vadd_id:reduce(x, -1), H.sum(h, -1), H.exact, name .. " axis -1, identity")
        H.check(vadd_id:reduce(x, { axis = {} }), h, H.exact, name .. " no axis, identity")
      end
      if x.ndim >= 2 and x.size > 0 then
        H.check(vadd:reduce(x, -1), H.sum(h, -1), H.exact, name .. " axis -1")
        H.check(vadd:reduce(x, { 1, 2 }), H.sum(h, { 1, 2 }), H.exact, name .. " all axes")
        H.check(vadd_id:reduce(x, { 1, 2 }, { keepdims = true }), H.sum(h, { 1, 2 }, true), H.exact, name .. " all axes, identity")
        H.check(vlast:reduce(x, 2, { keepdims = true }),
                H.reduce(h, 2, true, function() return nil end, function(_, v) return v end), H.exact, name .. " keepdims")
      end
    end
    -- every length around the halvings, and floats within their summation order
    for n = 1, 70 do
      local h = H.random("float64", { 3, n }, -1, 1)
      local x = H.to_array(h, "float64")
      local scale = H.abs_sum(h, 2)
      H.check(vadd:reduce(x, 2), H.sum(h, 2), H.within(function(k) return 2 ^ -50 * scale.data[k] end), "n=" .. n)
      H.check(vadd_id:reduce(x, 2), H.sum(h, 2), H.within(function(k) return 2 ^ -50 * scale.data[k] end), "identity n=" .. n)
      local t = x:slice("::-1, :").T
      H.check(vadd_id:reduce(t), H.sum(H.read(t), 1), H.within(function() return 2 ^ -50 * n end), "identity transposed n=" .. n)
      H.check(vlast:reduce(x, -1), H.reduce(h, 2, false, function() return nil end, function(_, v) return v end), H.exact, "last n=" .. n)
      H.check(vfirst:reduce(x:slice("::-1, ::-1"), 2),
              H.reduce(H.read(x:slice("::-1, ::-1")), 2, false, function() return nil end, function(a, v) if a == nil then return v end return a end),
              H.exact, "first reversed n=" .. n)
    end
  end)

  on_devices("initial, keepdims, out, no axis; the result's dtype is the function's", function()
    local h = H.random("int32", { 4, 5 }, -100, 100)
    local x = H.to_array(h, "int32")
    H.check(vadd:reduce(x, 1, { initial = 10 }), H.map(function(v) return v + 10 end, H.sum(h, 1)), H.exact)
    H.check(vadd:reduce(x, { axis = 2, initial = 10, keepdims = true }), H.map(function(v) return v + 10 end, H.sum(h, 2, true)), H.exact)
    local z = luda.empty(5, "int32")
    assert.is_true(rawequal(z, vadd:reduce(x, 1, { out = z })))
    H.check(z, H.sum(h, 1), H.exact)
    -- no axis: a copy of x
    local c = vadd:reduce(x, { axis = {} })
    H.check(c, h, H.exact)
    c:fill(12345)
    H.check(x, h, H.exact, "x after its reduction over no axis was filled")
    local one = luda.array({ { 3, 4 } })
    local r = vadd:reduce(one)
    one:fill(9)
    H.check(r, H.of({ 3, 4 }), H.exact)
    -- int8 stays int8 and wraps; an empty axis with initial gives it
    local h8 = H.random("int8", { 40 }, 50, 100)
    local s8 = vadd:reduce(H.to_array(h8, "int8"))
    assert.are.equal("int8", s8.dtype)
    H.check(s8, H.of(H.wrap(H.sum(h8).data[1], 8, false)), H.exact)
    H.check(vadd:reduce(luda.empty({ 0, 3 }, "int32"), { initial = 2 }), H.of({ 2, 2, 2 }), H.exact)
    H.check(vadd:reduce(luda.empty({ 3, 0 }, "int32")), H.of({}), H.exact)
    -- a function whose result is float reduces the elements as floats
    local vavg = luda.vectorize(function(a, b) return (a + b) * 1.0 end)
    local f = vavg:reduce(x, 2)
    assert.are.equal("float64", f.dtype)
    H.check(f, H.sum(h, 2), H.exact)
  end)

  on_devices("with identity=: empty axes give it; initial, out; the dtype a signature gives", function()
    H.check(vadd_id:reduce(luda.empty({ 0, 3 }, "int32")), H.of({ 0, 0, 0 }), H.exact)
    H.check(vmax_id:reduce(luda.empty({ 2, 0 }), 2), H.of({ -2 ^ 63, -2 ^ 63 }), H.exact)
    local vmul = luda.vectorize({ "float64(float64, float64)" }, function(a, b) return a * b end, { identity = 1 })
    local h = H.random("float32", { 3, 6 }, -2, 2)
    local p = vmul:reduce(H.to_array(h, "float32"), 2, { initial = 0.5 })
    assert.are.equal("float64", p.dtype)
    H.check(p, H.reduce(h, 2, false, function() return 0.5 end, function(a, v) return a * v end), H.rel(1e-15))
    local hi = H.random("int32", { 5, 4 }, -100, 100)
    local z = luda.empty(4, "int32")
    assert.is_true(rawequal(z, vadd_id:reduce(H.to_array(hi, "int32"), { out = z, initial = -3 })))
    H.check(z, H.map(function(v) return v - 3 end, H.sum(hi, 1)), H.exact)
    local v8 = luda.vectorize(function(a, b) return a + b end, { identity = 0 })
    H.check(v8:reduce(luda.array({ 100, 100 }, "int8")), H.of(-56), H.exact)
    raises("vectorize 'v8': Lua integer 1000 out of bounds for int8, the dtype of argument 2 'initial' (-128 to 127)",
           function() return v8:reduce(luda.array({ 1, 2 }, "int8"), { initial = 1000 }) end)
    raises("vectorize 'first': option 'identity' must be a number or a boolean (f(identity, x) is x), got 'x'",
           function() return luda.vectorize(function(a, b) return a end, { identity = "x", name = "first" }) end)
    local vlt = luda.vectorize(function(a, b) return a < b end, { identity = false })
    raises("vectorize 'vlt': reduce needs a function whose result has its operands' dtype; f(int64, int64) gives bool, and f(bool, bool) is not defined",
           function() return vlt:reduce(luda.array({ 1, 2 })) end)
  end)

  on_devices("errors: empty axes, functions that cannot reduce, not a vectorize", function()
    raises("vectorize 'vadd': zero-size array to reduction operation vadd which has no identity", function() return vadd:reduce(luda.empty({ 0, 3 })) end)
    raises("vectorize 'vmax': zero-size array to reduction operation vmax which has no identity", function() return vmax:reduce(luda.empty({ 2, 0 }), 2) end)
    local vlt = luda.vectorize(function(a, b) return a < b end)
    raises("vectorize 'vlt': reduce needs a function whose result has its operands' dtype; f(int64, int64) gives bool, and f(bool, bool) is not defined",
           function() return vlt:reduce(luda.array({ 1, 2 })) end)
    raises("vectorize 'vadd': reduce takes an array of one or more axes (it reduces the first by default); got a 0-d array",
           function() return vadd:reduce(luda.array(5)) end)
    H.check(vadd:reduce(luda.array(5), { axis = {} }), H.of(5), H.exact)
    raises("vectorize 'vadd': axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", function() return vadd:reduce(luda.ones({ 2, 2 }), 3) end)
    raises("vectorize 'vadd': argument 5 (5) comes after the options table; the call is f:reduce(x [, axis] [, {axis =, keepdims =, initial =, out =, stream =}]), and an axis table lists axes ({1, 2})",
           function() return vadd:reduce(luda.ones(2), 1, {}, 5) end)
    raises("vectorize 'vadd': unknown option 'dtype'; expected axis, keepdims, initial, out, stream", function() return vadd:reduce(luda.ones(2), { dtype = "int32" }) end)
    local v3 = luda.vectorize(function(a, b, c) return a + b + c end)
    raises("vectorize 'v3': reduce is for vectorize functions of two arguments and one result (NumPy's binary ufuncs)", function() return v3:reduce(luda.ones(2)) end)
    local ek = luda.elementwise("T x, T y", "T z", "z = x + y", "ek")
    raises("elementwise 'ek': reduce is for vectorize functions of two arguments and one result (NumPy's binary ufuncs)", function() return ek:reduce(luda.ones(2)) end)
  end)
end)

-- NumPy's cumulative sums and products (luda.cumsum, cumprod, nancumsum, nancumprod,
-- x:cumsum, x:cumprod), sort, argsort and unique (luda.sort, x:sort in place,
-- luda.argsort, x:argsort, luda.unique), luda.tri and x:clip: against NumPy's own results
-- on fixed inputs of every dtype (scan_sort_numpy.lua, written by scan_sort_numpy.py), and
-- against the definitions written out in plain Lua on random data in every layout
-- (transposed, strided, reversed, 0-d, size-1, empty), along every axis, in rows long
-- enough for the kernels' multi-block paths and rows short and many; with NumPy's errors.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local NP = require "scan_sort_numpy"

local on_devices = support.device_tests(_ENV)

-- ---- NumPy's cases ------------------------------------------------------------------

-- A complex case's real or imaginary parts (k = 1 or 2).
local function parts(values, k)
  local out = {}
  for i, v in ipairs(values) do out[i] = v[k] end
  return out
end

-- The luda array of a case's array (uint64 from its int64 bits; a complex one from its
-- {re, im} pairs).
local function array_of(c)
  local h = { shape = c.shape, data = c.values }
  if c.dtype == "uint64" then return H.to_array(h, "int64"):astype("uint64") end
  if c.dtype:find("complex") then
    local z = {}
    for i, v in ipairs(c.values) do z[i] = luda.complex(v[1], v[2]) end
    return H.to_array({ shape = c.shape, data = z }, c.dtype)
  end
  return H.to_array(h, c.dtype)
end

-- Exact equality, telling -0.0 from 0.0.
local function same(g, w)
  if g ~= w then return false end
  return math.type(g) ~= "float" or g ~= 0 or 1 / g == 1 / w
end

-- Checks an array against a case's result: dtype, shape and values (exactly).
-- `eq` compares elements (default: `same`).
local function check_case(got, want, what, eq)
  eq = eq or same
  assert.are.equal(want.dtype, got.dtype, what)
  if got.dtype == "uint64" then got = got:astype("int64") end
  if got.dtype:find("complex") then
    H.check(luda.real(got), { shape = want.shape, data = parts(want.values, 1) }, eq, what .. ", real parts")
    H.check(luda.imag(got), { shape = want.shape, data = parts(want.values, 2) }, eq, what .. ", imaginary parts")
    return
  end
  H.check(got, { shape = want.shape, data = want.values }, eq, what)
end

local function case_name(c, extra)
  local axis = c.axis == false and "flattened" or ("axis " .. tostring(c.axis))
  return ("%s %s%s (x: %s %s)"):format(c.op or "", axis, extra or "", c.x.dtype,
                                       "(" .. table.concat(c.x.shape, ", ") .. ")")
end

-- ---- plain-Lua references ------------------------------------------------------------

local function num(v)
  if type(v) == "boolean" then return v and 1 or 0 end
  return v
end

-- The stride (in elements, C order) of axis `axis` of `shape`.
local function stride_of(shape, axis)
  local s = 1
  for d = axis + 1, #shape do s = s * shape[d] end
  return s
end

-- The lines of h along `axis` (1-based; false: the flattened array), each a list of
-- 1-based flat positions in order.
local function lines(h, axis)
  local n = H.size_of(h.shape)
  if axis == false then
    local all = {}
    for k = 1, n do all[k] = k end
    return { all }
  end
  local out, len, stride = {}, h.shape[axis], stride_of(h.shape, axis)
  for k = 1, n do
    if (k - 1) // stride % len == 0 then  -- the first element of its line
      local line = {}
      for j = 0, len - 1 do line[#line + 1] = k + j * stride end
      out[#out + 1] = line
    end
  end
  return out
end

-- A scan of h along axis by f, as a host array (flattened: 1-D), and a function giving a
-- bound on each element's rounding in a float dtype of unit roundoff `eps` (whatever order
-- the sum is taken in: count * eps * the sum of |x| up to it).
local function scan(h, axis, f, eps)
  local n = H.size_of(h.shape)
  local data, bound = {}, {}
  for _, line in ipairs(lines(h, axis)) do
    local acc, mass, count = nil, 0, 0
    for _, k in ipairs(line) do
      local v = num(h.data[k])
      acc = acc == nil and v or f(acc, v)
      mass, count = mass + math.abs(v), count + 1
      data[k], bound[k] = acc, (count + 1) * (eps or 0) * mass
    end
  end
  local shape = axis == false and { n } or h.shape
  return { shape = shape, data = data }, function(k) return bound[k] end
end

-- NumPy's order: NaN after every number.
local function less(a, b)
  a, b = num(a), num(b)
  if a ~= a then return false end
  if b ~= b then return true end
  return a < b
end

-- h sorted along axis, stably, and the positions that sort it.
local function sorted(h, axis)
  local n = H.size_of(h.shape)
  local data, index = {}, {}
  for _, line in ipairs(lines(h, axis)) do
    local order = {}
    for j = 1, #line do order[j] = j end
    table.sort(order, function(p, q)
      local a, b = h.data[line[p]], h.data[line[q]]
      if less(a, b) then return true end
      if less(b, a) then return false end
      return p < q
    end)
    for j, k in ipairs(line) do
      data[k], index[k] = h.data[line[order[j]]], order[j] - 1
    end
  end
  local shape = axis == false and { n } or h.shape
  return { shape = shape, data = data }, { shape = shape, data = index }
end

local DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64" }
local EPS = { float32 = 2 ^ -24, float64 = 2 ^ -53 }
local function scan_dtype(dtype)
  if dtype == "float32" or dtype == "float64" then return dtype end
  return dtype:sub(1, 1) == "u" and "uint64" or "int64"
end

-- Each axis of an n-d array (1-based, and -1), false and nil (both the flattened array).
local function axis_choices(ndim)
  local out = { false }
  for d = 1, ndim do out[#out + 1] = d end
  if ndim > 0 then out[#out + 1] = -1 end
  return out
end

describe("scans and sorts", function()
  before_each(function() math.randomseed(3141) end)

  on_devices("cumsum, cumprod, nancumsum and nancumprod give NumPy's dtypes and values", function()
    for _, c in ipairs(NP.cumulative) do
      local x = array_of(c.x)
      local options = c.dtype and { dtype = c.dtype } or nil
      -- A complex product's zero parts take their signs from the order it is taken in.
      local eq = c.x.dtype:find("complex") and c.op:find("prod") and H.exact or nil
      local got = luda[c.op](x, c.axis, options)
      check_case(got, c.result, case_name(c, c.dtype and (" dtype=" .. c.dtype) or ""), eq)
      if c.axis == false and not options then check_case(luda[c.op](x), c.result, case_name(c, " (nil axis)"), eq) end
      if c.op == "cumsum" or c.op == "cumprod" then
        check_case(x[c.op](x, c.axis, options), c.result, case_name(c, " method"), eq)
      end
    end
  end)

  on_devices("sort and argsort give NumPy's order: stable, NaN last, -0.0 equal to 0.0", function()
    for _, c in ipairs(NP.sorting) do
      local x = array_of(c.x)
      check_case(luda.sort(x, c.axis), c.sort, "sort " .. case_name(c))
      check_case(luda.argsort(x, c.axis), c.argsort, "argsort " .. case_name(c))
      if c.axis ~= false then
        check_case(x:argsort(c.axis), c.argsort, "x:argsort " .. case_name(c))
        local y = array_of(c.x)
        assert.are.equal(y, y:sort(c.axis))
        check_case(y, c.sort, "x:sort " .. case_name(c))
      end
      if c.axis == -1 then
        check_case(luda.sort(x), c.sort, "sort, default axis " .. case_name(c))
        check_case(luda.argsort(x), c.argsort, "argsort, default axis " .. case_name(c))
      end
    end
  end)

  on_devices("unique gives NumPy's values, index, inverse and counts", function()
    for _, c in ipairs(NP.unique) do
      local x = array_of(c.x)
      local what = ("unique of %s (%s), equal_nan=%s"):format(c.x.dtype, table.concat(c.x.shape, ", "), c.equal_nan)
      local u, index, inverse, counts = luda.unique(x, { return_index = true, return_inverse = true,
                                                         return_counts = true, equal_nan = c.equal_nan })
      check_case(u, c.values, what .. ": values")
      check_case(index, c.index, what .. ": index")
      check_case(inverse, c.inverse, what .. ": inverse")
      check_case(counts, c.counts, what .. ": counts")
      if c.equal_nan then
        local v = { luda.unique(x) }
        assert.are.equal(1, #v, what)
        check_case(v[1], c.values, what .. ": alone")
        local v2, n2 = luda.unique(x, { return_counts = true })
        check_case(v2, c.values, what .. ": with counts")
        check_case(n2, c.counts, what .. ": counts alone")
        local v3, i3 = luda.unique(x, { return_inverse = true })
        check_case(i3, c.inverse, what .. ": inverse alone")
      end
    end
  end)

  on_devices("cumsum and cumprod of every dtype and layout, along every axis, against Lua", function()
    for _, dtype in ipairs(DTYPES) do
      local wide = scan_dtype(dtype)
      for _, op in ipairs({ "cumsum", "cumprod", "nancumsum", "nancumprod" }) do
        local prod = op:find("prod") ~= nil
        local lo, hi = -100, 100
        if prod then lo, hi = -3, 3 end
        if prod and dtype:sub(1, 1) == "u" then lo, hi = 0, 2 end  -- uint64 products past 2^63 read back as floats
        if dtype:sub(1, 1) == "u" then lo = 0 end
        for _, layout in ipairs(H.layouts(dtype, lo, hi)) do
          local name, x = layout[1], layout[2]
          local h = H.read(x)
          if dtype:find("float") and op:find("nan") and #h.data > 2 then
            h.data[1], h.data[#h.data] = 0 / 0, 0 / 0  -- NaN among the numbers
            x = H.to_array(h, dtype)
          end
          local f = prod and function(a, b) return a * b end or function(a, b) return a + b end
          local nanless = h
          if op:find("nan") then
            nanless = H.map(function(v) return v ~= v and (prod and 1 or 0) or v end, h)
          end
          for _, axis in ipairs(axis_choices(#h.shape)) do
            local want, bound = scan(nanless, axis == -1 and #h.shape or axis, f, EPS[wide])
            local got = luda[op](x, axis)
            local what = ("%s of %s %s, axis %s"):format(op, dtype, name, tostring(axis))
            assert.are.equal(wide, got.dtype, what)
            if not EPS[wide] then
              H.check(got, want, H.exact, what)
            elseif prod then
              H.check(got, want, H.rel(#h.data * EPS[wide] * 2, 0), what)
            else
              H.check(got, want, H.within(bound), what)
            end
          end
        end
      end
    end
  end)

  on_devices("cumsum's options: dtype, out (returned, any layout), stream; the method", function()
    local h = H.random("int8", { 3, 50 })
    local x = H.to_array(h, "int8")
    -- int8 accumulates in int8 with dtype=, wrapping as NumPy's does.
    local want = scan(h, 2, function(a, b) return H.wrap(a + b, 8) end)
    H.check(luda.cumsum(x, 2, { dtype = "int8" }), want, H.exact, "dtype int8 wraps")
    assert.are.equal("int8", x:cumsum(2, { dtype = luda.int8 }).dtype)
    -- Floats converted to an integer dtype are truncated first.
    local f = luda.array({ { 1.5, 2.5, -0.75 }, { 9.99, -9.99, 0.5 } })
    H.check(luda.cumsum(f, -1, { dtype = "int32" }), H.of({ { 1, 3, 3 }, { 9, 0, 0 } }), H.exact, "float to int32")
    -- out: exactly the result's dtype and shape, in any layout, returned.
    local out = luda.zeros({ 50, 3 }, "int64").T
    local got = luda.cumsum(x, 2, { out = out })
    assert.are.equal(out, got)
    H.check(out, scan(h, 2, function(a, b) return a + b end), H.exact, "into a transposed out")
    local small = H.random("int8", { 3, 50 }, -2, 2)
    local flat = luda.empty(150, "float64")
    assert.are.equal(flat, luda.cumprod(H.to_array(small, "int8"), false, { out = flat, dtype = "float64" }))
    H.check(flat, scan(small, false, function(a, b) return a * b end), H.rel(150 * 2 ^ -52, 0), "flattened into out")
    -- in place: x as its own out
    local y = luda.arange(6)
    luda.cumsum(y, { out = y })
    H.check(y, H.of({ 0, 1, 3, 6, 10, 15 }), H.exact, "in place")
    -- a stream
    local s = luda.stream()
    local on_s = luda.cumsum(y, 1, { stream = s })
    local sorted_on_s, order_on_s = luda.sort(y:slice("::-1"), -1, { stream = s }), luda.argsort(y, { stream = s })
    local u, c = luda.unique(luda.array({ 2, 1, 2 }), { return_counts = true, stream = s })
    s:synchronize()
    H.check(on_s, H.of({ 0, 1, 4, 10, 20, 35 }), H.exact, "cumsum on a stream")
    H.check(sorted_on_s, H.of({ 0, 1, 3, 6, 10, 15 }), H.exact, "sort on a stream")
    H.check(order_on_s, H.of({ 0, 1, 2, 3, 4, 5 }), H.exact, "argsort on a stream")
    H.check(u, H.of({ 1, 2 }), H.exact, "unique on a stream")
    H.check(c, H.of({ 1, 2 }), H.exact, "unique's counts on a stream")
  end)

  on_devices("long rows and many short rows take the multi-block paths", function()
    local n = 100000
    local h = H.integers({ n }, -1000, 1000)
    local x = H.to_array(h, "int64")
    H.check(luda.cumsum(x), scan(h, false, function(a, b) return a + b end), H.exact, "cumsum of a long row")
    local s, i = sorted(h, 1)
    H.check(luda.sort(x), s, H.exact, "sort of a long row")
    H.check(luda.argsort(x), i, H.exact, "argsort of a long row (ties: stable)")
    local hf = H.uniform({ n }, -1, 1)
    for k = 1, n, 997 do hf.data[k] = 0 / 0 end
    local xf = H.to_array(hf, "float64")
    local fs, fi = sorted(hf, 1)
    H.check(luda.sort(xf), fs, H.exact, "sort of a long float row with NaN")
    H.check(luda.argsort(xf), fi, H.exact, "argsort of a long float row with NaN")
    local want, bound = scan(H.map(function(v) return v ~= v and 0 or v end, hf), false, function(a, b) return a + b end, 2 ^ -53)
    H.check(luda.nancumsum(xf), want, H.within(bound), "nancumsum of a long row")
    -- 20000 rows of 5 along the last axis, and 5 rows of 20000 along the first (moved last).
    local hm = H.integers({ 20000, 5 }, -9, 9)
    local m = H.to_array(hm, "int32")
    for _, axis in ipairs({ 2, 1 }) do
      local ms, mi = sorted(hm, axis)
      H.check(luda.sort(m, axis), ms, H.exact, "sort of many rows, axis " .. axis)
      H.check(luda.argsort(m, axis), mi, H.exact, "argsort of many rows, axis " .. axis)
      H.check(m:cumsum(axis), scan(hm, axis, function(a, b) return a + b end), H.exact, "cumsum of many rows, axis " .. axis)
    end
    -- rows of 1500 and 3000: several tiles each, and a partial last tile
    for _, len in ipairs({ 1500, 3000 }) do
      local hr = H.random("float32", { 3, len })
      local r = H.to_array(hr, "float32")
      local rs, ri = sorted(hr, 2)
      H.check(luda.sort(r), rs, H.exact, "sort of rows of " .. len)
      H.check(luda.argsort(r.T, 1), { shape = { len, 3 }, data = H.read(luda.argsort(r).T).data }, H.exact,
              "argsort along the first axis of the transpose, rows of " .. len)
      H.check(luda.argsort(r), ri, H.exact, "argsort of rows of " .. len)
      local w, b = scan(hr, 2, function(a, c) return a + c end, 2 ^ -24)
      H.check(luda.cumsum(r, 2), w, H.within(b), "float32 cumsum of rows of " .. len)
    end
  end)

  on_devices("sort, argsort and x:sort of every dtype and layout, along every axis, against Lua", function()
    for _, dtype in ipairs(DTYPES) do
      for _, layout in ipairs(H.layouts(dtype, dtype:sub(1, 1) == "u" and 0 or -5, 5)) do
        local name, x = layout[1], layout[2]
        local h = H.read(x)
        if dtype:find("float") and #h.data > 3 then
          h.data[2], h.data[3] = 0 / 0, -0.0
          x = H.to_array(h, dtype)
        end
        for _, axis in ipairs(axis_choices(#h.shape)) do
          local a = axis == -1 and #h.shape or axis
          local s, i = sorted(h, a)
          local what = ("%s %s, axis %s"):format(dtype, name, tostring(axis))
          H.check(luda.sort(x, axis), s, H.exact, "sort of " .. what)
          H.check(luda.argsort(x, axis), i, H.exact, "argsort of " .. what)
        end
        if #h.shape > 0 then  -- in place, through the layout's view
          local s1 = sorted(h, 1)
          assert.are.equal(x, x:sort(1))
          H.check(x, s1, H.exact, ("x:sort(1) of %s %s"):format(dtype, name))
          x:sort()
          H.check(x, sorted(s1, #h.shape), H.exact, ("x:sort() of %s %s"):format(dtype, name))
        end
      end
    end
    -- x:sort on a transposed and a reversed view writes through them.
    local base = luda.array({ { 3, 1, 2 }, { 9, 7, 8 } })
    base.T:sort(1)
    H.check(base, H.of({ { 1, 2, 3 }, { 7, 8, 9 } }), H.exact, "sorting the columns of a transposed view")
    base.T:sort(2)
    H.check(base, H.of({ { 1, 2, 3 }, { 7, 8, 9 } }), H.exact, "each column already sorted")
    base:slice(":, ::-1"):sort()
    H.check(base, H.of({ { 3, 2, 1 }, { 9, 8, 7 } }), H.exact, "sorting a reversed view")
    -- 0-d: argsort is [0] (as NumPy's), sort needs axis false.
    H.check(luda.argsort(luda.array(5)), H.of({ 0 }), H.exact, "argsort of a 0-d array")
    H.check(luda.sort(luda.array(5), false), H.of({ 5 }), H.exact, "sort of a 0-d array, flattened")
  end)

  on_devices("unique of random data in every layout, against Lua", function()
    for _, dtype in ipairs(DTYPES) do
      for _, layout in ipairs(H.layouts(dtype, dtype:sub(1, 1) == "u" and 0 or -4, 4)) do
        local name, x = layout[1], layout[2]
        local h = H.read(x)
        if dtype:find("float") and #h.data > 3 then
          h.data[1], h.data[3] = 0 / 0, 0 / 0
          x = H.to_array(h, dtype)
        end
        local flat = { shape = { #h.data }, data = h.data }
        local s, order = sorted(flat, 1)
        local values, index, counts, inverse = {}, {}, {}, {}
        for j = 1, #s.data do
          local v, prev = s.data[j], s.data[j - 1]
          if j == 1 or less(prev, v) then  -- NaNs alike, -0.0 and 0.0 alike
            values[#values + 1], index[#index + 1], counts[#counts + 1] = v, order.data[j], 0
          end
          counts[#counts] = counts[#counts] + 1
          inverse[order.data[j] + 1] = #values - 1
        end
        local what = ("unique of %s %s"):format(dtype, name)
        local u, i, inv, c = luda.unique(x, { return_index = true, return_inverse = true, return_counts = true })
        H.check(u, H.of(values, { #values }), H.exact, what)
        H.check(i, H.of(index, { #index }), H.exact, what .. ": index")
        H.check(inv, { shape = h.shape, data = inverse }, H.exact, what .. ": inverse")
        H.check(c, H.of(counts, { #counts }), H.exact, what .. ": counts")
      end
    end
  end)

  on_devices("tri and x:clip", function()
    for _, c in ipairs({ { 3, 3, 0 }, { 2, 4, 1 }, { 4, 2, -1 }, { 3, 5, -3 }, { 0, 2, 0 }, { 1, 1, 5 } }) do
      local n, m, k = c[1], c[2], c[3]
      local want = H.fill({ n, m }, function(p)
        local idx = H.unflatten({ n, m }, p)
        return idx[2] - idx[1] <= k and 1 or 0
      end)
      local t = luda.tri(n, m, k)
      assert.are.equal("float64", t.dtype)
      H.check(t, want, H.exact, ("tri(%d, %d, %d)"):format(n, m, k))
      H.check(luda.tri(n, m, k, "int8"), want, H.exact)
    end
    H.check(luda.tri(3), H.of({ { 1, 0, 0 }, { 1, 1, 0 }, { 1, 1, 1 } }), H.exact)
    H.check(luda.tri(2, nil, 1, "bool"), H.of({ { true, true }, { true, true } }), H.exact)
    assert.are.equal("int32", luda.tri(2, 3, luda.int32).dtype)
    assert.are.equal("bool", luda.tri(2, "bool").dtype)
    H.check(luda.tri(2, { device = "cpu" }), H.of({ { 1, 0 }, { 1, 1 } }), H.exact)
    local h = H.random("float32", { 4, 5 })
    local x = H.to_array(h, "float32")
    H.check(x:clip(-10, 20), H.map(function(v) return math.min(math.max(v, -10), 20) end, h), H.exact, "x:clip")
    H.check(x.T:clip(nil, 0), H.map(function(v) return math.min(v, 0) end, H.read(x.T)), H.exact, "x:clip, no lower bound")
    local out = luda.empty({ 4, 5 }, "float32")
    assert.are.equal(out, x:clip(0, 1, { out = out }))
    H.check(out, H.map(function(v) return math.min(math.max(v, 0), 1) end, h), H.exact, "x:clip into out")
  end)

  on_devices("docs/api.md's examples are true", function()
    local m = luda.array({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.are.equal("array([[ 1,  3,  6],\n       [ 4,  9, 15]])", tostring(luda.cumsum(m, 2)))
    assert.are.equal("array([ 1,  3,  6, 10, 15, 21])", tostring(luda.cumsum(m)))
    assert.are.equal("array([1., 1., 3.])", tostring(luda.nancumsum(luda.array({ 1, 0 / 0, 2 }))))
    assert.are.equal("array([-inf,  -0.,   0.,   1.,  nan])",
                     tostring(luda.sort(luda.array({ 0 / 0, 1, -math.huge, -0.0, 0.0 }))))
    assert.are.equal("array([1, 3, 2, 0])", tostring(luda.argsort(luda.array({ 3, 1, 2, 1 }))))
    local u, i, inv, c = luda.unique(luda.array({ 3, 1, 3, 2 }), { return_index = true, return_inverse = true,
                                                                  return_counts = true })
    assert.are.same({ "array([1, 2, 3])", "array([1, 3, 0])", "array([2, 0, 2, 1])", "array([1, 1, 2])" },
                    { tostring(u), tostring(i), tostring(inv), tostring(c) })
    assert.are.equal("array([[1, 1, 0],\n       [1, 1, 1]], dtype=int32)", tostring(luda.tri(2, 3, 1, "int32")))
  end)

  on_devices("refuses what NumPy refuses, in its words", function()
    local a = luda.ones({ 2, 3 })
    H.raises("cumsum: axis 3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", function() return luda.cumsum(a, 3) end)
    H.raises("sort: axis -3 is out of range for a 2-d array (axes are 1 to 2, or -1 for the last)", function() return luda.sort(a, -3) end)
    H.raises("argsort: axis 1 is out of range for a 0-d array (it has no axes; axis false takes the flattened array)", function() return luda.argsort(luda.array(1), 1) end)
    H.raises("sort: axis -1 is out of range for a 0-d array (it has no axes; axis false sorts the flattened array)", function() return luda.sort(luda.array(1)) end)
    H.raises("x:sort: axis false (the flattened array) cannot sort in place; use luda.sort(x, false)", function() return a:sort(false) end)
    H.raises("cumsum: dtype bool is not supported; use an integer or float dtype", function() return luda.cumsum(a, 1, { dtype = "bool" }) end)
    H.raises("cumsum: out is a float32 array of shape (2, 3), but the result is float64 of shape (2, 3); pass an array of that dtype and shape", function() return luda.cumsum(a, 1, { out = luda.empty({ 2, 3 }, "float32") }) end)
    H.raises("cumprod: out is a float64 array of shape (2, 3), but the result is float64 of shape (6,); pass an array of that dtype and shape", function() return luda.cumprod(a, { out = luda.empty({ 2, 3 }) }) end)
    H.raises("cumsum: unknown option 'outt'; expected dtype, out, stream", function() return luda.cumsum(a, 1, { outt = a }) end)
    H.raises("cumsum: argument 4 (2) comes after the options table; the call is cumsum(x [, axis] [, {dtype =, out =, stream =}])", function() return luda.cumsum(a, 1, {}, 2) end)
    H.raises("sort: unknown option 'kind'; expected stream", function() return luda.sort(a, -1, { kind = "stable" }) end)
    H.raises("unique: option 'return_index' must be a boolean, got 1", function() return luda.unique(a, { return_index = 1 }) end)
    H.raises("bad argument #2 to 'sort' (integer expected, got boolean)", function() return luda.sort(a, true) end)
    H.raises("tri: negative dimensions are not allowed (-1 x -1)", function() return luda.tri(-1) end)
  end)
end)

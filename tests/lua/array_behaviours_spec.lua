-- Small NumPy behaviours of arrays that meet Lua's own rules: Lua's order operators on
-- arrays of one element (a Lua boolean, as NumPy's `if x.sum() > 2:`), `==` (Lua's
-- identity test), bool `+` and `*` (NumPy's or and and) in the operators, the array
-- functions and the kinds alike, bool `-` refused as NumPy refuses it, x:compute() and
-- x:persist() (a chunked array's, for code written for both), x.device, and the
-- positional forms of eye, tri and arange. Each runs on the cpu target and on cuda when
-- there is a GPU, against plain-Lua references on random inputs.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local raises = H.raises
local cuda = luda.cuda
local on_devices = support.device_tests(_ENV)

-- A random value of `dtype` that the dtype holds exactly (so a Lua comparison of it is
-- the reference): floats from a small set of halves, integers in range.
local function value_of(dtype)
  if dtype == "bool" then return math.random() < 0.5 end
  if dtype:match("^float") then return math.random(-8, 8) / 2 end
  if dtype:match("^uint") then return math.random(0, 8) end
  return math.random(-8, 8)
end

local ORDER = {
  { "<", function(a, b) return a < b end },
  { "<=", function(a, b) return a <= b end },
  { ">", function(a, b) return a > b end },
  { ">=", function(a, b) return a >= b end },
}

-- `a op b` written with Lua's operator, whatever a and b are.
local function compare(op, a, b)
  if op == "<" then return a < b elseif op == "<=" then return a <= b
  elseif op == ">" then return a > b else return a >= b end
end

describe("Lua's order operators on arrays of one element", function()
  on_devices("<, <=, > and >= of a 0-d or size-1 array and a number or such an array give a Lua boolean", function()
    local dtypes = { "float64", "int8", "uint64" }
    for _ = 1, 4 do
      for _, dtype in ipairs(dtypes) do
        local a, b = value_of(dtype), value_of(dtype)
        -- one element in several layouts: 0-d, size-1 (1-D, 2-D) and a strided view of one
        local ones = {
          { "0-d", luda.array(a, dtype) },
          { "size-1", luda.array({ a }, dtype) },
          { "strided view", luda.array({ b, a, b, b }, dtype):slice({ 1, 2 }) },
        }
        for _, one in ipairs(ones) do
          for _, o in ipairs(ORDER) do
            local what = ("%s %s %s %s"):format(dtype, one[1], o[1], b)
            local got = compare(o[1], one[2], b)
            assert.are.equal("boolean", type(got), what)
            assert.are.equal(o[2](a, b), got, what)
            assert.are.equal(o[2](b, a), compare(o[1], b, one[2]), what .. " (number first)")
            assert.are.equal(o[2](a, b), compare(o[1], one[2], luda.array(b, dtype)), what .. " (0-d right)")
            assert.are.equal(o[2](a, a), compare(o[1], one[2], luda.array({ a }, dtype)), what .. " (equal)")
          end
        end
      end
    end
  end)

  on_devices("x:sum() > 2 compares the sum, as NumPy's x.sum() > 2", function()
    for _ = 1, 5 do
      local h = H.random("float64", { math.random(0, 7) }, -2, 3)
      local x = H.to_array(h, "float64")
      local sum = 0.0
      for _, v in ipairs(h.data) do sum = sum + v end
      -- a threshold near the sum, on both sides
      for _, t in ipairs({ sum - 0.5, sum + 0.5, 2 }) do
        assert.are.equal(sum > t, x:sum() > t)
        assert.are.equal(sum <= t, x:sum() <= t)
        assert.are.equal(t < sum, t < x:sum())
      end
    end
    assert.is_true(luda.empty(0):sum() >= 0)  -- an empty sum is 0
  end)

  on_devices("values compare as NumPy 2 compares them: by value across dtypes, NaN unordered", function()
    assert.is_true(luda.array(100, "int8") < 1000)                 -- NumPy 2: by value, no overflow
    -- int64 against uint64 exactly, where a common float64 would make them equal
    assert.is_true(luda.array(math.maxinteger, "int64") < luda.array(math.maxinteger, "uint64") + 1)
    assert.is_true(luda.array(-1, "int64") < luda.array(0, "uint64"))
    assert.is_false(luda.array(0.0 / 0.0) < 1)
    assert.is_false(luda.array(0.0 / 0.0) >= 1)
    assert.is_false(1 <= luda.array(0.0 / 0.0))
    assert.is_true(luda.array(0.5, "float32") < 0.75)
    assert.is_true(luda.int32(2) < luda.array(3))                  -- a typed scalar on the left
    assert.is_true(luda.array(true) > false)                        -- bools as 0 and 1
    assert.is_true(luda.array(1.5) <= luda.array({ 2 }, "int8"))   -- promoted as luda.less_equal
  end)

  on_devices("an array of more elements, or none, is an error that names the elementwise functions", function()
    local x = luda.array({ 1, 2, 3 })
    raises("ndarray comparison: Lua's '<' and '>' give one boolean, so they compare arrays of one element (0-d or " ..
           "size 1), and this array has shape (3,); compare elementwise with luda.less or luda.greater, then " ..
           "reduce with x:all() or x:any()", function() return x < 2 end)
    raises("ndarray comparison: Lua's '<' and '>' give one boolean, so they compare arrays of one element (0-d or " ..
           "size 1), and this array has shape (3,); compare elementwise with luda.less or luda.greater, then " ..
           "reduce with x:all() or x:any()", function() return x > 2 end)
    raises("ndarray comparison: Lua's '<=' and '>=' give one boolean, so they compare arrays of one element (0-d " ..
           "or size 1), and this array has shape (2, 2); compare elementwise with luda.less_equal or " ..
           "luda.greater_equal, then reduce with x:all() or x:any()", function() return luda.ones({ 2, 2 }) >= 0 end)
    raises("ndarray comparison: Lua's '<' and '>' give one boolean, so they compare arrays of one element (0-d or " ..
           "size 1), and this array has shape (0,); compare elementwise with luda.less or luda.greater, then " ..
           "reduce with x:all() or x:any()", function() return luda.empty(0) < 1 end)
    raises("ufunc 'less': argument 2 is a string; pass arrays, numbers, booleans or typed scalars (luda.int32(v))",
           function() return luda.array(1) < "2" end)
    -- the elementwise form and its reductions, as the message says
    assert.is_true(luda.less(x, 4):all():item())
    assert.is_false(luda.greater(x, 2):all():item())
  end)

  on_devices("== is Lua's identity test: x:item() reads the value to compare", function()
    local x = luda.array({ 1, 2 })
    local s = x:sum()
    assert.is_true(x == x)
    assert.is_false(x == x:copy())          -- two arrays of the same values are two userdata
    assert.is_false(s == 3)                 -- Lua never asks an array whether it equals a number
    assert.is_true(s:item() == 3)
    assert.is_true(luda.equal(x, x:copy()):all():item())
    assert.is_true(s >= 3 and s <= 3)       -- the order operators do compare values
  end)
end)

describe("bool + and * are NumPy's or and and", function()
  local OR = function(a, b) return a or b end
  local AND = function(a, b) return a and b end

  on_devices("operators and array functions of bools give bool arrays, in every layout", function()
    local layouts = H.layouts("bool")
    -- contiguous, transposed, strided, 0-d and empty (each a kernel of its own)
    for _, l in ipairs({ layouts[1], layouts[2], layouts[3], layouts[6], layouts[7] }) do
      local name, p = l[1], l[2]
      local hp = H.read(p)
      local q = H.to_array(H.random("bool", p.shape), "bool")
      local hq = H.read(q)
      for _, case in ipairs({
        { "p + q", p + q, H.map(OR, hp, hq) }, { "luda.add", luda.add(p, q), H.map(OR, hp, hq) },
        { "p * q", p * q, H.map(AND, hp, hq) }, { "luda.multiply", luda.multiply(p, q), H.map(AND, hp, hq) },
        { "p + true", p + true, H.map(function() return true end, hp) },
        { "false + p", false + p, hp }, { "p * false", p * false, H.map(function() return false end, hp) },
      }) do
        assert.are.equal("bool", case[2].dtype, name .. " " .. case[1])
        H.check(case[2], case[3], H.exact, name .. " " .. case[1])
      end
    end
    -- broadcasting, and Lua booleans alone (a Lua value)
    local col, row = H.random("bool", { 3, 1 }), H.random("bool", { 1, 4 })
    H.check(H.to_array(col, "bool") + H.to_array(row, "bool"), H.map(OR, col, row), H.exact, "broadcast +")
    assert.are.same({ true, false, true }, { luda.add(true, false), luda.multiply(true, false), luda.add(false, true) })
    -- with a number a bool is 0 or 1, as before: NumPy's promotion
    local b = luda.array({ true, false, true })
    assert.are.same({ "int8", { 3, 2, 3 } }, { (b + luda.array({ 2, 2, 2 }, "int8")).dtype, (b + luda.array({ 2, 2, 2 }, "int8")):totable() })
    assert.are.same({ "int64", { 2, 0, 2 } }, { (b * 2).dtype, (b * 2):totable() })
  end)

  on_devices("vectorize, fuse, elementwise and cuda.jit kernels type bool + and * the same way", function()
    local p = H.to_array(H.random("bool", { 37 }), "bool")
    local q = H.to_array(H.random("bool", { 37 }), "bool")
    local hp, hq = H.read(p), H.read(q)
    local want_or, want_and = H.map(OR, hp, hq), H.map(AND, hp, hq)
    local vor = luda.vectorize(function(a, b) return a + b end)
    local vand = luda.vectorize(function(a, b) return a * b end)
    H.check(vor(p, q), want_or, H.exact, "vectorize +")
    H.check(vand(p, q), want_and, H.exact, "vectorize *")
    assert.are.equal("bool", vor(p, q).dtype)
    H.check(luda.fuse(function(a, b) return a + b end)(p, q), want_or, H.exact, "fuse +")
    H.check(luda.fuse(function(a, b) return a * b end)(p, q), want_and, H.exact, "fuse *")
    -- a fused count of the or: the bools summed as int64, as numpy.sum(p + q)
    local count = 0
    for _, v in ipairs(want_or.data) do if v then count = count + 1 end end
    assert.are.equal(count, luda.fuse(function(a, b) return luda.sum(a + b) end)(p, q):item())
    local ew = luda.elementwise("bool a, bool b", "bool o, bool m", "o = a + b; m = a * b", "bool_ops")
    local o, m = ew(p, q)
    H.check(o, want_or, H.exact, "elementwise +")
    H.check(m, want_and, H.exact, "elementwise *")
    local k = cuda.jit(function(a, b, out)
      local i = cuda.grid(1)
      if i < out.size then out[i] = (a[i] + b[i]) * true end
    end)
    local out = luda.zeros(37, "bool")
    k[{ 1, 64 }](p, q, out)
    H.check(out, want_or, H.exact, "cuda.jit +")
    -- constants fold to the same values; the reduction of + over bools is any
    H.check(luda.vectorize(function(a) return a * (true + false) end)(p), hp, H.exact, "folded true + false")
    local any = false
    for _, v in ipairs(hp.data) do any = any or v end
    assert.are.equal(any, vor:reduce(p):item())
  end)

  on_devices("bool - and unary - are refused, as NumPy refuses them, with what to use", function()
    local b = luda.array({ true, false })
    local sub = "ufunc 'subtract': boolean subtract, the `-` operator, is not supported (as in NumPy); use " ..
                "luda.logical_xor or luda.bitwise_xor instead"
    local neg = "ufunc 'negative': boolean negative, the unary `-` operator, is not supported (as in NumPy); use " ..
                "luda.logical_not or luda.invert instead"
    raises(sub, function() return b - b end)
    raises(sub, function() return luda.subtract(b, true) end)
    raises(sub, function() return luda.subtract(true, false) end)
    raises(neg, function() return -b end)
    raises(neg, function() return luda.negative(luda.array(true)) end)
    -- what the messages name does what NumPy's `^` and `~` do
    assert.are.same({ false, true }, luda.logical_xor(b, luda.array({ true, true })):totable())
    assert.are.same({ false, true }, luda.bitwise_xor(b, true):totable())
    assert.are.same({ false, true }, luda.logical_not(b):totable())
    -- a bool and a number subtract as numbers
    assert.are.same({ 0, -1 }, (b - 1):totable())
    -- in a kernel, at the line, with the kernel language's spelling
    local err = support.error_of(function() return luda.vectorize(function(a, c) return a - c end)(b, b) end)
    assert.truthy(err:find("type error: cannot apply '-' to bool and bool: NumPy's boolean subtract is not " ..
                           "supported; for exclusive or write a ~= b", 1, true), err)
    err = support.error_of(function() return luda.vectorize(function(a) return -a end)(b) end)
    assert.truthy(err:find("type error: cannot negate bool: NumPy's boolean negative is not supported; for the " ..
                           "logical not write not x", 1, true), err)
  end)
end)

describe("x:compute() and x:persist() of a plain array", function()
  on_devices("give the array itself, or with {device=} the array on that device, as a chunked array's", function()
    local h = H.random("float64", { 5, 3 })
    local x = H.to_array(h, "float64")
    assert.is_true(rawequal(x, x:compute()))
    assert.is_true(rawequal(x, x:compute({})))
    assert.is_true(rawequal(x, x:compute({ root = 0 })))
    assert.is_true(rawequal(x, x:compute({ device = x.device })))
    assert.is_true(rawequal(x, x:persist()))
    local back = x:compute({ device = "cpu" })
    assert.are.equal("cpu", back.device)
    H.check(back, h, H.exact)
    -- one function for both kinds of array
    local function total(a) return a:persist():compute():sum():item() end
    local c = luda.chunked(x, { 2, 3 })
    assert.is_true(rawequal(c, c:persist()))
    local sum = 0.0
    for _, v in ipairs(h.data) do sum = sum + v end
    assert.is_true(math.abs(total(x) - sum) < 1e-9, "plain")
    assert.is_true(math.abs(total(c) - sum) < 1e-9, "chunked")
    -- 0-d and empty
    local z = luda.array(2.5)
    assert.is_true(rawequal(z, z:compute()))
    assert.are.same({ 0 }, luda.empty(0):persist().shape)
  end)

  on_devices("bad options are errors that say what compute takes", function()
    local x = luda.ones(2)
    raises("bad argument #1 to 'compute' (unknown option 'devices'; expected device, root)",
           function() return x:compute({ devices = { "cpu" } }) end)
    raises("compute: option 'root' must be a rank (an integer), got '0'", function() return x:compute({ root = "0" }) end)
    raises("bad argument #1 to 'persist' (x:persist() takes no arguments (an array's values are computed when it is " ..
           "made))", function() return x:persist({}) end)
    raises("persist: c:persist() takes no arguments (a chunked array's blocks are computed when it is made)",
           function() local c = luda.chunked(x, 1):persist({}) return c end)  -- not a tail call: its line
  end)
end)

describe("x.device", function()
  on_devices("is the device's name, a string; luda.device of it is the device object", function(device)
    local x = luda.zeros(3)
    local name = support.device_name(device)
    assert.are.equal("string", type(x.device))
    assert.are.equal(name, x.device)
    assert.are.equal(x.device, x:copy().device)
    assert.are.equal(luda.device(name), luda.device(x.device))
    assert.are.equal(luda.current_device(), luda.device(x.device))
    -- Lua compares a string and a userdata as different, without asking either
    assert.is_false(x.device == luda.device(name))
    assert.are.equal("on " .. name, "on " .. x.device)
  end)
end)

describe("eye, tri and arange take NumPy's positional arguments", function()
  -- ones on the k-th diagonal of an n x m matrix (eye), or at and below it (tri)
  local function ref(n, m, k, below)
    local t = {}
    for i = 1, n do
      t[i] = {}
      for j = 1, m do
        local on = below and (j - i <= k) or (j - i == k)
        t[i][j] = on and 1 or 0
      end
    end
    return H.of(t, { n, m })
  end

  on_devices("eye(N, M, k, dtype) and tri(N, M, k, dtype), nil standing for a default", function(device)
    for _ = 1, 6 do
      local n, m, k = math.random(0, 5), math.random(0, 5), math.random(-3, 3)
      for _, f in ipairs({ { "eye", false }, { "tri", true } }) do
        local fn, below = luda[f[1]], f[2]
        local what = ("%s(%d, %d, %d)"):format(f[1], n, m, k)
        local cases = {
          { fn(n, m, k), ref(n, m, k, below), "float64" },
          { fn(n, nil, k), ref(n, n, k, below), "float64" },
          { fn(n, m, nil, "int32"), ref(n, m, 0, below), "int32" },
          { fn(n, nil, nil, "int8"), ref(n, n, 0, below), "int8" },
          { fn(n, nil, k, nil, { device = device }), ref(n, n, k, below), "float64" },
          { fn(n, m, k, luda.uint8), ref(n, m, k, below), "uint8" },
          { fn(n, "bool"), ref(n, n, 0, below), "bool" },
          { fn(n, m, { device = device }), ref(n, m, 0, below), "float64" },
        }
        for i, case in ipairs(cases) do
          assert.are.equal(case[3], case[1].dtype, what .. " case " .. i)
          assert.are.equal(support.device_name(device), case[1].device, what .. " case " .. i)
          H.check(case[1], case[3] == "bool" and H.map(function(v) return v == 1 end, case[2]) or case[2],
                  H.exact, what .. " case " .. i)
        end
      end
    end
    assert.are.same({ { 1.0, 0.0 }, { 0.0, 1.0 } }, luda.identity(2, nil, { device = device }):totable())
    raises("bad argument #3 to 'eye' (number has no integer representation)", function() return luda.eye(3, nil, 1.5) end)
    raises("bad argument #4 to 'eye' (unknown dtype 'int'; expected one of bool, int8, int16, int32, int64, uint8, " ..
           "uint16, uint32, uint64, float32, float64, float16, bfloat16, complex64, complex128)",
           function() return luda.eye(3, nil, nil, "int") end)
  end)

  on_devices("arange(start, stop, step, dtype) with nil for a number left out", function()
    local function range(start, stop, step)
      local t = {}
      for v = start, stop - (step > 0 and 1 or -1), step do t[#t + 1] = v end
      return H.of(t, { #t })
    end
    for _ = 1, 6 do
      local start, stop, step = math.random(-5, 5), math.random(-5, 10), math.random(1, 3)
      local cases = {
        { luda.arange(start, stop, nil, "int32"), range(start, stop, 1), "int32" },
        { luda.arange(stop, nil, step), range(0, stop, step), "int64" },
        { luda.arange(stop, nil, nil, "int16"), range(0, stop, 1), "int16" },
        { luda.arange(start, stop, step, nil, { device = luda.current_device() }), range(start, stop, step), "int64" },
        { luda.arange(stop, nil, { device = luda.current_device() }), range(0, stop, 1), "int64" },
      }
      for i, case in ipairs(cases) do
        local what = ("arange(%d, %d, %d) case %d"):format(start, stop, step, i)
        assert.are.equal(case[3], case[1].dtype, what)
        H.check(case[1], case[2], H.exact, what)
      end
    end
    assert.are.same({ 0.0, 0.5, 1.0 }, luda.arange(0, 1.5, 0.5, nil):totable())
    assert.are.equal("float32", luda.arange(0.0, 2, nil, "float32").dtype)
  end)
end)

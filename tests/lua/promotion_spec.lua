-- NumPy 2's rule for operands of mixed kinds (NEP 50), in every path that takes them: the
-- array operations (operators and luda.add, luda.less, ...), vectorize, fuse, elementwise
-- and cuda.jit, on each device. Arrays and typed scalars (luda.int64(-2)) are strong and
-- promote together as arrays do; a Lua integer is weak: it takes the dtype it meets and
-- raises NumPy's OverflowError out of that dtype's bounds, becomes a float where the
-- operation computes in float, and compares by value; integers compare exactly, int64 with
-- uint64 too. The references are NumPy 2's own results (promotion_numpy.lua, written by
-- promotion_numpy.py).
local luda = require "luda"
local support = require "support"
local N = require "promotion_numpy"

local on_devices = support.device_tests(_ENV)
local cuda = luda.cuda

-- { "array", dtype [, values] }: N.arrays[values or dtype] as dtype (uint64: from the bits;
-- complex: from { re, im } pairs).
local function array_of(desc)
  local values = N.arrays[desc[3] or desc[2]]
  if desc[2] == "uint64" then return luda.array(values, "int64"):astype("uint64") end
  if desc[2]:match("complex") then
    local t = {}
    for i, v in ipairs(values) do t[i] = luda.complex(v[1], v[2]) end
    values = t
  end
  return luda.array(values, desc[2])
end

-- { "typed", dtype, v [, im] }, { "complex", re, im } (luda.complex: weak), or a Lua number.
local function operand(desc)
  if desc[1] == "array" then return array_of(desc) end
  if desc[1] == "typed" and desc[4] then return luda[desc[2]](desc[3], desc[4]) end
  if desc[1] == "typed" then return luda[desc[2]](desc[3]) end
  if desc[1] == "complex" then return luda.complex(desc[2], desc[3]) end
  return desc[2]
end

local function is_array(desc) return desc[1] == "array" end

-- The Lua text of the operation on `x` and `y` (for an array operand, its element i).
local function body(c, x, y)
  local function read(desc, name) return is_array(desc) and name .. "[i]" or name end
  return (N.functions[c.op]:gsub("%f[%w]a%f[%W]", read(c.a, x)):gsub("%f[%w]b%f[%W]", read(c.b, y)))
end

-- The kernel of each path and operation, made once: { call = function(case, a, b), who =
-- how its messages start, text = its Lua source text }.
local kinds = {}
local function kind_of(path, c)
  local key = path .. " " .. c.op .. (path == "jit" and (c.a[1] .. c.b[1]) or "")
  if kinds[key] then return kinds[key] end
  local k = { text = N.functions[c.op] and ("function(a, b) return " .. N.functions[c.op] .. " end") }
  if path == "ufunc" then
    local f = luda[c.op == "atan2" and "atan" or c.op]  -- luda.atan(y, x) is atan2
    k.f, k.who, k.text = f, "ufunc '" .. c.op .. "'", nil
  elseif path == "vectorize" then
    k.f, k.who = luda.vectorize(k.text, { name = c.op }), "vectorize '" .. c.op .. "'"
  elseif path == "fuse" then
    k.f, k.who = luda.fuse(k.text, { name = c.op }), "fuse '" .. c.op .. "'"
  elseif path == "elementwise" then
    local z = N.functions[c.op]:gsub("%f[%w]a%f[%W]", "x"):gsub("%f[%w]b%f[%W]", "y")
    k.f = luda.elementwise("T x, T y", c.op == "less" and "bool z" or "T z", "z = " .. z, c.op)
    k.who, k.text = "elementwise '" .. c.op .. "'", nil
  else  -- cuda.jit: out[i] = the operation
    k.text = "function(x, y, out) local i = cuda.grid(1) if i < #out then out[i] = " .. body(c, "x", "y") .. " end end"
    local kernel = cuda.jit(k.text)
    k.call = function(case, a, b)
      local shape = (is_array(case.a) and a or b).shape
      local out = luda.zeros(shape, case.dtype or (is_array(case.a) and case.a[2] or case.b[2]))
      kernel[{ 1, 32 }](a, b, out)
      return out
    end
    k.who = "kernel 'kernel'"
  end
  k.call = k.call or function(case, a, b, c)
    if case.c then return k.f(a, b, c) end
    return k.f(a, b)
  end
  kinds[key] = k
  return k
end

-- The message luda gives for NumPy's OverflowError ("Python integer 300 out of bounds for
-- uint8") in each path: that text with Lua's name, where the function meets the integer,
-- and the fix; an elementwise placeholder names the argument whose dtype it has.
local function overflow_message(path, c)
  local k = kind_of(path, c)
  local v, dtype = c.overflow[1], c.overflow[2]
  local at = c.a[1] == "int" and 1 or 2
  local head = ("%s: Lua integer %d out of bounds for %s"):format(k.who, v, dtype)
  if path == "elementwise" then
    assert(dtype == "uint8", "the elementwise cases are uint8's")
    return ("%s, the dtype of argument %d '%s' (0 to 255)"):format(head, at, at == 1 and "x" or "y")
  end
  local fix = ("; pass a typed scalar (luda.int64(%d)), which promotes as an array does, or convert the arrays " ..
               "first (x:astype(\"int64\"))"):format(v)
  if path == "ufunc" then return head .. fix end
  local arg = ("argument %d"):format(at) .. (path == "jit" and "" or (" '" .. (at == 1 and "a" or "b") .. "'"))
  local chunk = #k.text > 40 and k.text:sub(1, 40) .. "..." or k.text
  return ("%s, which %s meets at [string \"%s\"]:1"):format(head, arg, chunk) .. fix
end

-- The values, complex ones as { re, im } pairs.
local function values_of(z)
  if z.dtype == "uint64" then return z:astype("int64"):totable() end
  local t = z:totable()
  if z.dtype:match("complex") then
    for i, v in ipairs(t) do t[i] = { v.real, v.imag } end
  end
  return t
end

-- How closely a value must agree: exactly, but where luda and NumPy call different
-- libraries' atan2 and hypot (a few ulps of the result's dtype), and where a complex
-- quotient's rounding may differ (a GPU fuses a * b + c).
local function agrees(c, want, got, dtype)
  if type(want) == "table" and type(got) == "table" then
    local eps = dtype == "complex64" and 2 ^ -23 or 2 ^ -52
    local scale = math.sqrt(want[1] ^ 2 + want[2] ^ 2)
    return math.sqrt((want[1] - got[1]) ^ 2 + (want[2] - got[2]) ^ 2) <= 4 * eps * scale
  end
  if want == got then return true end
  if type(want) ~= "number" or type(got) ~= "number" or (c.op ~= "atan2" and c.op ~= "hypot") then return false end
  local ulp = dtype == "float32" and 2 ^ -23 or 2 ^ -52
  return math.abs(want - got) <= 4 * ulp * math.abs(want)
end

local function describe_case(path, c)
  local function d(x) return x[1] .. " " .. tostring(x[2]) .. (x[3] and (" " .. tostring(x[3])) or "") .. (x[4] and (" " .. tostring(x[4])) or "") end
  return ("%s %s(%s, %s%s)"):format(path, c.op, d(c.a), d(c.b), c.c and (", " .. d(c.c)) or "")
end

-- Runs the cases `wanted` picks, each on its paths, against NumPy's outcome.
local function check_cases(wanted)
  local count = 0
  for _, c in ipairs(N.cases) do
    for _, path in ipairs(c.paths) do
      if wanted(path, c) then
        count = count + 1
        local what = describe_case(path, c)
        local k = kind_of(path, c)
        local ok, z = pcall(k.call, c, operand(c.a), operand(c.b), c.c and operand(c.c))
        if c.overflow then
          assert(not ok, what .. ": NumPy raises " .. c.numpy .. ", luda gave " .. tostring(z))
          local got = tostring(z):gsub("^.-:%d+: ", "", 1)  -- after the caller's place
          assert.are.equal(overflow_message(path, c), got, what)
          assert.is_truthy(got:find((c.numpy:gsub("^Python", "Lua")), 1, true), what)
        else
          assert(ok, what .. ": " .. tostring(z))
          assert.are.equal(c.dtype, z.dtype, what)
          local got = values_of(z)
          for i, want in ipairs(c.values) do
            assert(agrees(c, want, got[i], c.dtype),
                   ("%s: element %d is %s, NumPy %s"):format(what, i, tostring(got[i]), tostring(want)))
          end
        end
      end
    end
  end
  assert(count > 0, "no case ran")
end

describe("mixed operands follow NumPy 2 (NEP 50)", function()
  it("the references are NumPy 2's", function()
    assert.are.equal("2", N.numpy:sub(1, 1))
  end)

  on_devices("typed scalars of another dtype promote as 0-d arrays in the array operations", function()
    check_cases(function(path, c) return path == "ufunc" and (c.a[1] == "typed" or c.b[1] == "typed") end)
  end)

  on_devices("a typed scalar converts as an array of its dtype does where a signature or a dtype fixes the type", function()
    -- NumPy: a ufunc with only a float64 loop takes np.float32(2) and np.int64(2) by safe casting
    local v = luda.vectorize({ "float64(float64, float64)" }, function(a, b) return a + b end)
    local x = luda.array({ 1.5, -0.25 })
    for _, s in ipairs({ luda.float32(2), luda.int64(2), luda.uint64(2) }) do
      local z = v(x, s)
      assert.are.same({ "float64", { 3.5, 1.75 } }, { z.dtype, z:totable() }, tostring(s))
    end
    -- elementwise: a fixed dtype takes arrays of any dtype, converting; a typed scalar too
    local k = luda.elementwise("float32 x, int8 y", "float32 z", "z = x + y", "k")
    local x32 = luda.array({ 1.5, 2.5 }, "float32")
    assert.are.same(k(x32, luda.array({ 2.75, 2.75 }, "float64")):totable(), k(x32, luda.float64(2.75)):totable())
    assert.are.same({ 3.5, 4.5 }, k(x32, luda.float64(2.75)):totable())
  end)

  on_devices("a Lua integer takes the array's dtype, raises out of its bounds, is a float where the operation " ..
             "computes in float, and compares by value: array operations", function()
    check_cases(function(path, c) return path == "ufunc" and (c.a[1] == "int" or c.b[1] == "int" or c.b[1] == "float") end)
  end)

  on_devices("the same rule for a Lua integer in vectorize, fuse, elementwise and cuda.jit", function()
    check_cases(function(path, c)
      return path ~= "ufunc" and (c.a[1] == "int" or c.b[1] == "int")
    end)
  end)

  on_devices("the error names the value, the dtype, the argument, the line that meets it, and the fix", function()
    local u8 = luda.array({ 250, 3 }, "uint8")
    local file = debug.getinfo(1, "S").short_src
    local fix = "; pass a typed scalar (luda.int64(300)), which promotes as an array does, or convert the arrays " ..
                "first (x:astype(\"int64\"))"
    local line = debug.getinfo(1, "l").currentline + 1
    local vadd = luda.vectorize(function(x, n) return x + n end)
    local call = debug.getinfo(1, "l").currentline + 1
    local err = support.error_of(function() return vadd(u8, 300) end)
    assert.are.equal(("%s:%d: vectorize 'vadd': Lua integer 300 out of bounds for uint8, which argument 2 'n' " ..
                      "meets at %s:%d"):format(file, call, file, line) .. fix, err)
    local scale = cuda.jit(function(x, n, out)
      local i = cuda.grid(1)
      local m = n
      if i < #out then out[i] = x[i] * m end
    end)
    call = debug.getinfo(1, "l").currentline + 1
    err = support.error_of(function() scale[{ 1, 32 }](u8, 300, luda.zeros(2, "uint8")) end)
    assert.are.equal(("%s:%d: kernel 'scale': Lua integer 300 out of bounds for uint8, which argument 2 'n' " ..
                      "meets at %s:%d"):format(file, call, file, call - 3) .. fix, err)
    -- the same kernel with a value that fits, and the old error texts are gone
    local out = luda.zeros(2, "uint8")
    scale[{ 1, 32 }](u8, 2, out)
    assert.are.same({ 244, 6 }, out:totable())
    call = debug.getinfo(1, "l").currentline + 1
    err = support.error_of(function() return u8 + 300 end)
    assert.are.equal(("%s:%d: ufunc 'add': Lua integer 300 out of bounds for uint8"):format(file, call) .. fix, err)
  end)

  on_devices("float16, bfloat16 and complex promote as NumPy 2 (bfloat16 as ml_dtypes), in every path", function()
    local news = { float16 = true, bfloat16 = true, complex64 = true, complex128 = true }
    check_cases(function(_, c)
      return news[c.a[2]] or news[c.b[2]] or c.a[1] == "complex" or c.b[1] == "complex"
    end)
  end)

  on_devices("int64 and uint64 compare exactly, in every path, Lua integers with uint64 too", function()
    check_cases(function(_, c)
      local function dtype(d) return d[1] == "int" and "int64" or d[2] end
      local pair = dtype(c.a) .. " " .. dtype(c.b)
      return c.dtype == "bool" and (pair == "int64 uint64" or pair == "uint64 int64")
    end)
  end)
end)

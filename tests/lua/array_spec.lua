-- Arrays on the cpu device: constructors, fields, views, element access, conversions.
-- Values are checked on random inputs against plain-Lua references.
local luda = require "luda"
local support = require "support"
local f32, random_table = support.f32, support.random_table

local CPU = { device = "cpu" }

local function rand_int() return math.random(-1000, 1000) end
local function rand_float() return (math.random() - 0.5) * 200 end

-- The element of nested table t at 0-based indices idx (a Lua sequence).
local function at(t, idx)
  for _, i in ipairs(idx) do t = t[i + 1] end
  return t
end

describe("luda arrays on the cpu device", function()
  before_each(function() math.randomseed(20240611) end)

  describe("luda.array", function()
    it("builds N-d arrays from nested tables and reads them back", function()
      for _, shape in ipairs({ { 7 }, { 3, 5 }, { 2, 3, 4 }, { 1, 1, 6 } }) do
        local ints = random_table(shape, rand_int)
        local x = luda.array(ints, nil, CPU)
        assert.are.equal("int64", x.dtype)
        assert.are.same(shape, x.shape)
        assert.are.same(ints, x:totable())
        local floats = random_table(shape, rand_float)
        local y = luda.array(floats, nil, CPU)
        assert.are.equal("float64", y.dtype)
        assert.are.same(floats, y:totable())
        assert.are.equal(#shape, y.ndim)
      end
    end)

    it("infers dtypes as NumPy does for Python scalars", function()
      assert.are.equal("bool", luda.array({ true, false }, nil, CPU).dtype)
      assert.are.equal("int64", luda.array({ 1, 2, 3 }, nil, CPU).dtype)
      assert.are.equal("float64", luda.array({ 1, 2.5, 3 }, nil, CPU).dtype)
      assert.are.equal("int64", luda.array({ true, 2 }, nil, CPU).dtype)
      assert.are.equal("float32", luda.array({ luda.float32(1.5), luda.int8(2) }, nil, CPU).dtype)
      assert.are.equal("float64", luda.array({}, nil, CPU).dtype)
      assert.are.same({ 0 }, luda.array({}, nil, CPU).shape)
    end)

    it("converts to a given dtype, by name or by constructor", function()
      local t = random_table({ 50 }, rand_float)
      local x = luda.array(t, "float32", CPU)
      local y = luda.array(t, luda.int32, CPU)
      assert.are.equal("float32", x.dtype)
      assert.are.equal("int32", y.dtype)
      local xs, ys = x:totable(), y:totable()
      for i = 1, 50 do
        assert.are.equal(f32(t[i]), xs[i])
        local trunc = t[i] < 0 and math.ceil(t[i]) or math.floor(t[i])
        assert.are.equal(trunc, ys[i])
        assert.is_true(math.type(ys[i]) == "integer")
      end
      assert.are.same({ true, false, true }, luda.array({ 2, 0, -1 }, "bool", CPU):totable())
    end)

    it("makes 0-d arrays from a scalar", function()
      local x = luda.array(2.5, nil, CPU)
      assert.are.equal(0, x.ndim)
      assert.are.same({}, x.shape)
      assert.are.equal(2.5, x:totable())
      assert.are.equal(2.5, x:item())
    end)

    it("copies an existing array, optionally to another dtype", function()
      local a = luda.array({ 1, 2, 3 }, nil, CPU)
      local b = luda.array(a)
      b[0] = 10
      assert.are.same({ 1, 2, 3 }, a:totable())
      assert.are.same({ 10, 2, 3 }, b:totable())
      assert.are.same({ 1.0, 2.0, 3.0 }, luda.array(a, "float64"):totable())
      assert.are.equal("cpu", luda.array(a).device)   -- a copy stays on its device
    end)
  end)

  describe("filled constructors", function()
    it("zeros, ones, empty and full take a shape, a dtype and options", function()
      local z = luda.zeros({ 2, 3 }, "int32", CPU)
      assert.are.equal("int32", z.dtype)
      assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, z:totable())
      local o = luda.ones(4, nil, CPU)
      assert.are.equal("float64", o.dtype)
      assert.are.same({ 1.0, 1.0, 1.0, 1.0 }, o:totable())
      local e = luda.empty({ 3, 0, 2 }, "uint8", CPU)
      assert.are.same({ 3, 0, 2 }, e.shape)
      assert.are.equal(0, e.size)
      local v = rand_float()
      local f = luda.full({ 2, 2 }, v, "float32", CPU)
      assert.are.same({ { f32(v), f32(v) }, { f32(v), f32(v) } }, f:totable())
    end)

    it("full takes its dtype from the value when none is given", function()
      assert.are.equal("int64", luda.full(3, 7, nil, CPU).dtype)
      assert.are.equal("float64", luda.full(3, 7.5, nil, CPU).dtype)
      assert.are.equal("bool", luda.full(3, true, nil, CPU).dtype)
      assert.are.equal("uint16", luda.full(3, luda.uint16(9), nil, CPU).dtype)
      assert.are.same({ 9, 9, 9 }, luda.full(3, luda.uint16(9), nil, CPU):totable())
    end)

    it("puts new arrays on the default device", function()
      local d = luda.current_device()
      assert.are.equal(d.kind == "cpu" and "cpu" or ("cuda:" .. d.index), luda.zeros(2).device)
      assert.are.equal("cpu", luda.zeros(2, nil, { device = luda.device("cpu") }).device)
    end)
  end)

  describe("arange", function()
    local function reference(start, stop, step)
      local out = {}
      local n = math.max(0, math.ceil((stop - start) / step))
      for i = 0, n - 1 do out[#out + 1] = start + i * step end
      return out
    end

    it("follows NumPy for integer arguments", function()
      for _ = 1, 20 do
        local start, stop = math.random(-50, 50), math.random(-50, 50)
        local step = math.random(1, 7) * (math.random() < 0.5 and -1 or 1)
        local x = luda.arange(start, stop, step, nil, CPU)
        assert.are.equal("int64", x.dtype)
        assert.are.same(reference(start, stop, step), x:totable())
      end
      assert.are.same({ 0, 1, 2, 3, 4 }, luda.arange(5, nil, CPU):totable())
      assert.are.same({ 2, 3, 4 }, luda.arange(2, 5, nil, CPU):totable())
      assert.are.same({}, luda.arange(5, 2, nil, CPU):totable())
    end)

    it("follows NumPy for float arguments and given dtypes", function()
      local x = luda.arange(0.5, 3, 0.25, nil, CPU)
      assert.are.equal("float64", x.dtype)
      assert.are.same(reference(0.5, 3, 0.25), x:totable())
      local y = luda.arange(1, 2, 0.1, "float32", CPU)
      local ref = reference(1, 2, 0.1)
      assert.are.equal(#ref, y.size)
      for i, v in ipairs(y:totable()) do assert.are.equal(f32(ref[i]), v) end
      assert.are.same({ 0.0, 1.0, 2.0 }, luda.arange(3, "float64", CPU):totable())
    end)
  end)

  describe("linspace", function()
    local function reference(start, stop, num, endpoint)
      local div = endpoint and num - 1 or num
      local step = (stop - start) / div
      local out = {}
      for i = 0, num - 1 do out[i + 1] = i * step + start end
      if endpoint and num > 1 then out[num] = stop end
      return out
    end

    it("follows NumPy with and without the endpoint", function()
      for _ = 1, 10 do
        local start, stop = rand_float(), rand_float()
        local num = math.random(2, 40)
        assert.are.same(reference(start, stop, num, true), luda.linspace(start, stop, num, nil, nil, CPU):totable())
        assert.are.same(reference(start, stop, num, false), luda.linspace(start, stop, num, false, nil, CPU):totable())
      end
      assert.are.equal(50, luda.linspace(0, 1, nil, nil, nil, CPU).size)
      assert.are.same({ 3.0 }, luda.linspace(3, 7, 1, nil, nil, CPU):totable())
      assert.are.same({}, luda.linspace(3, 7, 0, nil, nil, CPU):totable())
    end)

    it("floors for integer dtypes, as NumPy", function()
      assert.are.same({ -3, -2, 0, 1, 3 }, luda.linspace(-3, 3, 5, true, "int32", CPU):totable())
    end)
  end)

  describe("fields", function()
    it("reports shape, strides, dtype, ndim, size, itemsize, nbytes and device", function()
      local x = luda.zeros({ 2, 3, 4 }, "float32", CPU)
      assert.are.same({ 2, 3, 4 }, x.shape)
      assert.are.same({ 12, 4, 1 }, x.strides)
      assert.are.equal("float32", x.dtype)
      assert.are.equal(3, x.ndim)
      assert.are.equal(24, x.size)
      assert.are.equal(4, x.itemsize)
      assert.are.equal(96, x.nbytes)
      assert.are.equal("cpu", x.device)
      assert.are.equal(2, #x)
      assert.are.same({ 1, 4, 12 }, x.T.strides)
      assert.are.same({ 4, 3, 2 }, x.T.shape)
    end)
  end)

  describe("element access", function()
    it("reads 1-D elements 0-based, negative from the end", function()
      local t = random_table({ 20 }, rand_int)
      local x = luda.array(t, nil, CPU)
      for i = 0, 19 do
        assert.are.equal(t[i + 1], x[i])
        assert.are.equal(t[20 - i], x[-1 - i])
      end
    end)

    it("gives views for N-d, sharing memory with the base", function()
      local t = random_table({ 4, 5 }, rand_float)
      local x = luda.array(t, nil, CPU)
      for i = 0, 3 do
        local row = x[i]
        assert.are.same({ 5 }, row.shape)
        assert.are.same(t[i + 1], row:totable())
      end
      local row = x[2]
      row[3] = 42.5
      assert.are.equal(42.5, x[2][3])
      assert.are.equal(t[4][5], x[-1][-1])
    end)

    it("assigns numbers, rows, tables and arrays", function()
      local x = luda.zeros({ 3, 4 }, "int32", CPU)
      x[0] = 7                                 -- a number fills the row
      x[1] = { 1, 2, 3, 4 }                    -- a table assigns it
      x[2] = luda.array({ 9.9, 8.1, -7.5, 6 }, nil, CPU)  -- converted to int32
      assert.are.same({ { 7, 7, 7, 7 }, { 1, 2, 3, 4 }, { 9, 8, -7, 6 } }, x:totable())
      x[-1][0] = 100
      assert.are.equal(100, x[2][0])
      local y = luda.zeros(5, "float32", CPU)
      local v = rand_float()
      y[4] = v
      assert.are.equal(f32(v), y[4])
      y[0] = luda.float64(1.25)
      assert.are.equal(1.25, y[0])
      local b = luda.zeros(2, "bool", CPU)
      b[1] = true
      assert.are.same({ false, true }, b:totable())
    end)
  end)

  describe("views", function()
    local function random_array(shape)
      local t = random_table(shape, rand_int)
      return luda.array(t, nil, CPU), t
    end

    it("reshape keeps C order, infers -1, and shares memory when contiguous", function()
      local x, t = random_array({ 4, 6 })
      local flat = {}
      for _, row in ipairs(t) do for _, v in ipairs(row) do flat[#flat + 1] = v end end
      local y = x:reshape({ 24 })
      assert.are.same(flat, y:totable())
      local z = x:reshape(2, -1, 3)
      assert.are.same({ 2, 4, 3 }, z.shape)
      for i = 0, 1 do for j = 0, 3 do for k = 0, 2 do
        assert.are.equal(flat[i * 12 + j * 3 + k + 1], z[i][j][k])
      end end end
      y[5] = 12345
      assert.are.equal(12345, x[0][5])
      -- a transposed array is not contiguous: reshape copies, still in C order of the view
      local tt = x.T:reshape(24):totable()
      for i = 0, 5 do for j = 0, 3 do assert.are.equal(x[j][i], tt[i * 4 + j + 1]) end end
    end)

    it("transpose reverses or permutes axes (1-based, -1 the last)", function()
      local x, t = random_array({ 2, 3, 4 })
      local rev = x:transpose()
      assert.are.same({ 4, 3, 2 }, rev.shape)
      local p = x:transpose(2, 3, 1)
      local q = x:transpose({ -2, -1, 1 })
      assert.are.same({ 3, 4, 2 }, p.shape)
      for i = 0, 1 do for j = 0, 2 do for k = 0, 3 do
        local v = t[i + 1][j + 1][k + 1]
        assert.are.equal(v, rev[k][j][i])
        assert.are.equal(v, p[j][k][i])
        assert.are.equal(v, q[j][k][i])
      end end end
      p[0][0][1] = -99999
      assert.are.equal(-99999, x[1][0][0])
    end)

    it("slice takes integers and {start, stop, step} tables", function()
      local x, t = random_array({ 6, 7 })
      local s = x:slice({ 1, 5 }, { nil, nil, 2 })
      assert.are.same({ 4, 4 }, s.shape)
      for i = 0, 3 do for j = 0, 3 do assert.are.equal(t[i + 2][2 * j + 1], s[i][j]) end end
      local r = x:slice({ nil, nil, -1 }, 3)
      assert.are.same({ 6 }, r.shape)
      for i = 0, 5 do assert.are.equal(t[6 - i][4], r[i]) end
      local w = x:slice({ -2 })
      assert.are.same({ 2, 7 }, w.shape)
      assert.are.same({ t[5], t[6] }, w:totable())
      s[0][0] = 777
      assert.are.equal(777, x[1][0])
    end)

    it("slice matches a reference on random slices", function()
      local x, t = random_array({ 9 })
      for _ = 1, 100 do
        local step = math.random(1, 4) * (math.random() < 0.5 and -1 or 1)
        local start = math.random() < 0.2 and nil or math.random(-12, 12)
        local stop = math.random() < 0.2 and nil or math.random(-12, 12)
        -- NumPy's rules for start/stop with a given step
        local n = 9
        local function norm(v, default)
          if v == nil then return default end
          if v < 0 then v = v + n end
          if step > 0 then return math.min(math.max(v, 0), n) end
          return math.min(math.max(v, -1), n - 1)
        end
        local a = norm(start, step > 0 and 0 or n - 1)
        local b = norm(stop, step > 0 and n or -1)
        local ref = {}
        for i = a, b + (step > 0 and -1 or 1), step do ref[#ref + 1] = t[i + 1] end
        if (step > 0 and a >= b) or (step < 0 and a <= b) then ref = {} end
        assert.are.same(ref, x:slice({ start, stop, step }):totable())
        local text = (start or "") .. ":" .. (stop or "") .. ":" .. step
        assert.are.same(ref, x:slice(text):totable())
      end
    end)

    it("slice parses NumPy index strings, with spaces and '...'", function()
      local x, t = random_array({ 3, 4, 5 })
      local a = x:slice(" 1: , ::-2 , 3 ")
      assert.are.same({ 2, 2 }, a.shape)
      for i = 0, 1 do for j = 0, 1 do assert.are.equal(t[i + 2][4 - 2 * j][4], a[i][j]) end end
      local b = x:slice("..., 0")
      assert.are.same({ 3, 4 }, b.shape)
      for i = 0, 2 do for j = 0, 3 do assert.are.equal(t[i + 1][j + 1][1], b[i][j]) end end
      local c = x:slice("-1, ...")
      assert.are.same(t[3], c:totable())
      assert.are.same({ 3, 4, 5 }, x:slice("").shape)
      assert.are.same({ 4, 5 }, x:slice("2,").shape)
    end)
  end)

  describe("copies and conversions", function()
    it("copy, astype, fill, get, copy_to_host and to", function()
      local t = random_table({ 3, 4 }, rand_float)
      local x = luda.array(t, nil, CPU)
      local c = x:copy()
      c[0][0] = 1e9
      assert.are.equal(t[1][1], x[0][0])
      local i = x:astype("int16")
      assert.are.equal("int16", i.dtype)
      for r = 0, 2 do for k = 0, 3 do
        local v = t[r + 1][k + 1]
        assert.are.equal(v < 0 and math.ceil(v) or math.floor(v), i[r][k])
      end end
      local h = x.T:get()
      assert.are.equal("cpu", h.device)
      assert.are.same({ 3, 1 }, h.strides)   -- a C-contiguous copy of the (4, 3) view
      assert.are.same(x.T:totable(), h:totable())
      assert.are.same(x:totable(), x:copy_to_host():totable())
      assert.are.same(x:totable(), x:to("cpu"):totable())
      local v = rand_float()
      assert.are.equal(x, x:fill(v))
      assert.are.same({ v, v, v, v }, x[1]:totable())
      local u = luda.zeros(2, "uint64", CPU)
      u:fill(luda.uint64(2 ^ 63 + 2 ^ 12))
      assert.are.equal(2 ^ 63 + 2 ^ 12, u[0])   -- beyond maxinteger: a float
    end)

    it("totable gives integers for integer dtypes and floats for float dtypes", function()
      assert.are.equal("integer", math.type(luda.array({ 3 }, "uint8", CPU):totable()[1]))
      assert.are.equal("float", math.type(luda.array({ 3 }, "float32", CPU):totable()[1]))
      assert.are.equal("float", math.type(luda.array({ 3 }, "float32", CPU)[0]))
    end)

    it("item reads a one-element array", function()
      assert.are.equal(-4, luda.array({ { -4 } }, nil, CPU):item())
    end)
  end)

  describe("printing", function()
    it("tostring is NumPy's repr", function()
      assert.are.equal("array([1, 2, 3])", tostring(luda.array({ 1, 2, 3 }, nil, CPU)))
      assert.are.equal("array([[0., 0., 0.],\n       [0., 0., 0.]])", tostring(luda.zeros({ 2, 3 }, nil, CPU)))
      assert.are.equal("array([1.5, 2.5], dtype=float32)", tostring(luda.array({ 1.5, 2.5 }, "float32", CPU)))
      assert.are.equal("array([ True, False])", tostring(luda.array({ true, false }, nil, CPU)))
    end)
  end)

  it("take the options table in place of an omitted dtype (and omitted linspace arguments)", function()
    local ints = random_table({ 4 }, rand_int)
    local cases = {
      { luda.array(ints, CPU), luda.array(ints, nil, CPU) },
      { luda.zeros({ 2, 3 }, CPU), luda.zeros({ 2, 3 }, nil, CPU) },
      { luda.ones(5, CPU), luda.ones(5, nil, CPU) },
      { luda.full({ 2 }, 7, CPU), luda.full({ 2 }, 7, nil, CPU) },
      { luda.arange(4, CPU), luda.arange(4, nil, CPU) },
      { luda.arange(1, 9, 2, CPU), luda.arange(1, 9, 2, nil, CPU) },
      { luda.linspace(0, 1, 5, CPU), luda.linspace(0, 1, 5, nil, nil, CPU) },
      { luda.linspace(0, 1, CPU), luda.linspace(0, 1, nil, nil, nil, CPU) },
      { luda.random.random({ 3 }, { device = "cpu", seed = 4 }), luda.random.random({ 3 }, nil, { device = "cpu", seed = 4 }) },
    }
    for i, c in ipairs(cases) do
      assert.are.equal("cpu", c[1].device, "case " .. i)
      assert.are.equal(c[2].dtype, c[1].dtype, "case " .. i)
      assert.are.same(c[2]:totable(), c[1]:totable(), "case " .. i)
    end
    assert.are.equal(support.here() .. "bad argument #3 to 'zeros' (unknown option 'dtype'; expected device)", support.error_of(function() luda.zeros(2, { dtype = "int8" }) end))
  end)

  it("frees arrays when collected", function()
    for _ = 1, 200 do luda.zeros({ 100, 100 }, nil, CPU) end
    collectgarbage()
    collectgarbage()
    assert.are.equal(3, luda.zeros(3, nil, CPU).size)
  end)
  describe("luda.copyto", function()
    it("writes arrays, broadcast rows, tables and numbers into an existing array", function()
      local t = random_table({ 4, 5 }, rand_int)
      local src = luda.array(t, "int64", CPU)
      local dst = luda.zeros({ 4, 5 }, "float32", CPU)
      assert.are.equal(dst, luda.copyto(dst, src))
      assert.are.same(t, dst:totable())               -- converted to float32, values exact
      local row = random_table({ 5 }, rand_float)
      luda.copyto(dst, luda.array(row, "float64", CPU))  -- broadcast over the 4 rows
      for i = 1, 4 do
        for j = 1, 5 do assert.are.equal(f32(row[j]), dst:totable()[i][j]) end
      end
      local v = rand_float()
      luda.copyto(dst:slice({ 1, 3 }), v)             -- rows 1 and 2 of a view
      local got = dst:totable()
      for j = 1, 5 do
        assert.are.equal(f32(row[j]), got[1][j])
        assert.are.equal(f32(v), got[2][j])
        assert.are.equal(f32(v), got[3][j])
        assert.are.equal(f32(row[j]), got[4][j])
      end
      luda.copyto(dst, t)
      assert.are.same(t, dst:totable())
    end)

    it("names both shapes when they do not broadcast", function()
      local where, ok, err = support.here(), pcall(luda.copyto, luda.zeros({ 2, 3 }, "float32", CPU), luda.zeros(4, "float32", CPU))
      assert.is_false(ok)
      -- the place of the line that called pcall, which called luda.copyto
      assert.are.equal(where .. "could not broadcast input array from shape (4,) into shape (2, 3)", err)
    end)
  end)
end)

-- Lua's collector sees an array as its small userdata; luda tells it of the memory behind
-- new arrays, so that a loop's garbage temporaries are freed as the loop goes.
describe("garbage arrays", function()
  local SCRIPT = [[
local luda = require "luda"
local x = luda.ones(8 << 20, "float32", { device = "cpu" })  -- 32 MiB
%s
for _ = 1, 40 do local y = x * 2 + 1 end  -- 80 temporaries of 32 MiB: 2.5 GiB in all
for line in io.lines("/proc/self/status") do
  local kb = line:match("^VmHWM:%%s+(%%d+)")
  if kb then print(tonumber(kb) // 1024) end
end
print(collectgarbage("isrunning"))
]]
  local function peak_mib(prelude)
    local out, err, code = support.run_luda("-", SCRIPT:format(prelude), false, { LUDA_DEVICE = "cpu" }, 120)
    assert.are.same({ "", 0 }, { err, code })
    local mib, running = out:match("^(%d+)\n(%a+)\n$")
    assert.truthy(mib, out)
    return tonumber(mib), running
  end

  it("are freed as a loop makes new ones, not when the Lua heap alone asks", function()
    if not io.open("/proc/self/status") then return pending("needs Linux's /proc/self/status") end
    local mib, running = peak_mib("")
    assert.are.equal("true", running)
    assert.is_true(mib < 1024, ("the loop's peak memory was %d MiB"):format(mib))
  end)

  it("stay while collectgarbage('stop') holds the collector", function()
    if not io.open("/proc/self/status") then return pending("needs Linux's /proc/self/status") end
    local mib, running = peak_mib('collectgarbage("stop")')
    assert.are.equal("false", running)
    assert.is_true(mib > 2048, ("the loop's peak memory was %d MiB"):format(mib))
  end)
end)

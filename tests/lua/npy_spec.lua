-- Arrays in NumPy's files: luda.save, luda.savez, luda.savez_compressed, luda.load_npy,
-- x:tofile, luda.fromfile (docs/api.md "Files"). Random arrays of every dtype, 0-d, empty,
-- size-1 and non-contiguous, on each device: the bytes written checked against the
-- elements packed by string.pack from the Lua values the arrays were made of; read back
-- and compared; and round trips with NumPy itself in both directions (tests/lua/npy_numpy.py,
-- run by /usr/bin/python3; pending where it has no NumPy).
local luda = require "luda"
local support = require "support"
local error_of, here = support.error_of, support.here
local on_devices = support.device_tests(_ENV)

local DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
  "bfloat16", "float32", "float64", "complex64", "complex128" }
local DESCR = { bool = "|b1", int8 = "|i1", int16 = "<i2", int32 = "<i4", int64 = "<i8", uint8 = "|u1",
  uint16 = "<u2", uint32 = "<u4", uint64 = "<u8", float16 = "<f2", bfloat16 = "<V2", float32 = "<f4",
  float64 = "<f8", complex64 = "<c8", complex128 = "<c16" }
local INT_PACK = { int8 = "<i1", int16 = "<i2", int32 = "<i4", int64 = "<i8", uint8 = "<I1", uint16 = "<I2",
  uint32 = "<I4", uint64 = "<I8" }
local INT_RANGE = { int8 = { -128, 127 }, int16 = { -32768, 32767 }, int32 = { -2147483648, 2147483647 },
  int64 = { math.mininteger, math.maxinteger }, uint8 = { 0, 255 }, uint16 = { 0, 65535 },
  uint32 = { 0, 4294967295 }, uint64 = { 0, math.maxinteger } }

-- A random element of `dtype` as a Lua value: floats are k/8 with |k| < 256, exact in
-- every float dtype (bfloat16 keeps 8 significant bits); a complex is {re, im}.
local function random_value(dtype)
  if dtype == "bool" then return math.random(0, 1) == 1 end
  if INT_RANGE[dtype] then return math.random(INT_RANGE[dtype][1], INT_RANGE[dtype][2]) end
  local function f() return math.random(-255, 255) / 8 end
  if dtype:find("complex") then return { f(), f() } end
  return f()
end

-- The IEEE half bits of a value that float16 holds exactly (normal or zero).
local function half_bits(v)
  if v == 0 then return 1 / v < 0 and 0x8000 or 0 end
  local sign = v < 0 and 0x8000 or 0
  local m, e = math.frexp(math.abs(v))  -- v = m * 2^e, m in [0.5, 1)
  return sign | ((e + 14) << 10) | (math.tointeger(m * 2048) - 1024)
end

-- The little-endian bytes of one element, by string.pack: the reference for the files.
local function element_bytes(dtype, v)
  if dtype == "bool" then return string.char(v and 1 or 0) end
  if INT_PACK[dtype] then return string.pack(INT_PACK[dtype], v) end
  if dtype == "float16" then return string.pack("<I2", half_bits(v)) end
  if dtype == "bfloat16" then return string.pack("<f", v):sub(3, 4) end
  if dtype == "float32" then return string.pack("<f", v) end
  if dtype == "float64" then return string.pack("<d", v) end
  local fmt = dtype == "complex64" and "<ff" or "<dd"
  return string.pack(fmt, v[1], v[2])
end

local function product(shape)
  local n = 1
  for _, e in ipairs(shape) do n = n * e end
  return n
end

-- A random array of `shape` and `dtype` on the current device, with its values in C order
-- (a flat Lua list).
local function random_array(shape, dtype)
  local flat, elements = {}, {}
  for i = 1, product(shape) do
    flat[i] = random_value(dtype)
    elements[i] = type(flat[i]) == "table" and luda.complex128(flat[i][1], flat[i][2]) or flat[i]
  end
  if #shape == 0 then return luda.array(elements[1], dtype), flat end
  if #flat == 0 then return luda.zeros(shape, dtype), flat end
  return luda.array(elements, dtype):reshape(shape), flat
end

local function flat_bytes(dtype, flat)
  local parts = {}
  for i, v in ipairs(flat) do parts[i] = element_bytes(dtype, v) end
  return table.concat(parts)
end

local function shape_text(shape)
  if #shape == 1 then return "(" .. shape[1] .. ",)" end
  local t = {}
  for i, e in ipairs(shape) do t[i] = tostring(e) end
  return "(" .. table.concat(t, ", ") .. ")"
end

-- numpy.save's preamble: the dict, room for the first extent to grow to 21 digits,
-- spaces to a multiple of 64 bytes, '\n'.
local function preamble(dtype, shape)
  local dict = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }"):format(DESCR[dtype], shape_text(shape))
  if #shape > 0 then dict = dict .. (" "):rep(21 - #tostring(shape[1])) end
  local total = 10 + #dict + 1
  local pad = 64 - total % 64
  local hlen = #dict + pad + 1
  return "\x93NUMPY\x01\x00" .. string.pack("<I2", hlen) .. dict .. (" "):rep(pad) .. "\n"
end

local function tmpdir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. support.quote(dir)))
  return dir
end

local function remove_tree(dir) os.execute("rm -rf " .. support.quote(dir)) end

-- The bytes x:tofile writes.
local function raw_bytes(x, dir)
  local p = dir .. "/raw.bin"
  x:tofile(p)
  return support.read_file(p)
end

local SHAPES = { {}, { 0 }, { 1 }, { 7 }, { 3, 4 }, { 2, 0, 3 }, { 2, 3, 2 } }

describe("luda.save and luda.load_npy", function()
  on_devices("write numpy.save's bytes and read them back, for every dtype and shape", function(device)
    local dir = tmpdir()
    for _, dtype in ipairs(DTYPES) do
      for _, shape in ipairs(SHAPES) do
        local x, flat = random_array(shape, dtype)
        local what = dtype .. " " .. shape_text(shape)
        local p = dir .. "/a.npy"
        luda.save(p, x)
        assert.are.equal(preamble(dtype, shape) .. flat_bytes(dtype, flat), support.read_file(p), what)
        local y = luda.load_npy(p)
        assert.are.equal(device == "cpu" and "cpu" or "cuda:0", tostring(y.device), what)
        support.assert_array_equal(y, x, what)
      end
    end
    remove_tree(dir)
  end)

  on_devices("write a non-contiguous array in C order", function(device)
    local dir = tmpdir()
    for _, dtype in ipairs(DTYPES) do
      local x, flat = random_array({ 4, 6 }, dtype)
      local views = {
        { x:transpose(), function(i, j) return flat[j * 6 + i + 1] end, { 6, 4 } },
        { x:slice({ 0, 4, 2 }, { 5, 0, -2 }), function(i, j) return flat[(2 * i) * 6 + (5 - 2 * j) + 1] end, { 2, 3 } },
      }
      for k, v in ipairs(views) do
        local want = {}
        for i = 0, v[3][1] - 1 do
          for j = 0, v[3][2] - 1 do want[#want + 1] = v[2](i, j) end
        end
        local p = dir .. "/v.npy"
        luda.save(p, v[1])
        assert.are.equal(preamble(dtype, v[3]) .. flat_bytes(dtype, want), support.read_file(p), dtype .. " view " .. k)
        support.assert_array_equal(luda.load_npy(p), v[1], dtype .. " view " .. k)
      end
    end
    remove_tree(dir)
  end)

  it("appends .npy to a path without it, as numpy.save, and loads onto the device asked", function()
    local dir = tmpdir()
    local x = luda.arange(6, "int16", { device = "cpu" })
    luda.save(dir .. "/plain", x)
    local y = luda.load_npy(dir .. "/plain.npy", { device = "cpu" })
    assert.are.equal("cpu", tostring(y.device))
    support.assert_array_equal(y, x)
    remove_tree(dir)
  end)

  it("keeps NaN, infinities and negative zero", function()
    local dir = tmpdir()
    for _, dtype in ipairs({ "float16", "bfloat16", "float32", "float64" }) do
      local x = luda.array({ 0 / 0, math.huge, -math.huge, -0.0, 1.5 }, dtype, { device = "cpu" })
      luda.save(dir .. "/s.npy", x)
      local y = luda.load_npy(dir .. "/s.npy")
      support.assert_array_equal(y, x, dtype)
      assert.are.equal(raw_bytes(x, dir), raw_bytes(y, dir), dtype)
    end
    remove_tree(dir)
  end)

  it("luda.load reads an existing .npy or .npz file by name, and any other string as a chunk", function()
    assert.are.equal(3, luda.load("return 1 + 2")())
    local dir = tmpdir()
    local x = luda.arange(5, "float32", { device = "cpu" })
    luda.save(dir .. "/a.npy", x)
    luda.savez(dir .. "/b.npz", x)
    support.assert_array_equal(luda.load(dir .. "/a.npy", { device = "cpu" }), x)
    support.assert_array_equal(luda.load(dir .. "/b.npz", { device = "cpu" }).arr_0, x)
    -- a chunk that ends like a file name, where no such file is: Lua's load
    local data = { npy = 7 }
    assert.are.equal(7, luda.load("return data.npy", "=chunk", "t", { data = data })())
    assert.are.equal(7, luda.load("return data.npy", nil, "t", { data = data })())
    local f, err = luda.load("x = = data.npy")
    assert.is_nil(f)
    assert.truthy(err:find("unexpected symbol", 1, true), err)
    -- NumPy's errors name luda.load
    support.write_file(dir .. "/bad.npy", "hello")
    err = support.error_of(function() luda.load(dir .. "/bad.npy") end)
    assert.truthy(err:find("load: " .. dir .. "/bad.npy: not an .npy or .npz file", 1, true), err)
    remove_tree(dir)
  end)
end)

describe("luda.savez", function()
  on_devices("names positional arrays arr_0, arr_1 and keeps a table's names", function(device)
    local dir = tmpdir()
    local a, af = random_array({ 3 }, "float32")
    local b = random_array({}, "complex128")
    local c = random_array({ 2, 0 }, "bool")
    local d = random_array({ 4, 5 }, "bfloat16")
    for _, save in ipairs({ luda.savez, luda.savez_compressed }) do
      save(dir .. "/z", a, b, { c = c, dee = d:transpose() })
      local t = luda.load_npy(dir .. "/z.npz")
      local names = {}
      for k in pairs(t) do names[#names + 1] = k end
      table.sort(names)
      assert.are.same({ "arr_0", "arr_1", "c", "dee" }, names)
      support.assert_array_equal(t.arr_0, a)
      support.assert_array_equal(t.arr_1, b)
      support.assert_array_equal(t.c, c)
      support.assert_array_equal(t.dee, d:transpose())
      assert.are.equal(flat_bytes("float32", af), raw_bytes(t.arr_0, dir))
    end
    remove_tree(dir)
  end)

  it("compresses", function()
    local dir = tmpdir()
    local x = luda.zeros(10000, nil, { device = "cpu" })
    luda.savez(dir .. "/s.npz", x)
    luda.savez_compressed(dir .. "/c.npz", x)
    local stored, compressed = #support.read_file(dir .. "/s.npz"), #support.read_file(dir .. "/c.npz")
    assert.is_true(stored > 80000 and compressed < 2000, stored .. " " .. compressed)
    remove_tree(dir)
  end)
end)

describe("x:tofile and luda.fromfile", function()
  on_devices("write raw C-order bytes and read them with count and offset", function(device)
    local dir = tmpdir()
    for _, dtype in ipairs(DTYPES) do
      local x, flat = random_array({ 3, 5 }, dtype)
      local p = dir .. "/r.bin"
      x:transpose():tofile(p)
      local want = {}
      for i = 0, 4 do
        for j = 0, 2 do want[#want + 1] = flat[j * 5 + i + 1] end
      end
      assert.are.equal(flat_bytes(dtype, want), support.read_file(p), dtype)
      local y = luda.fromfile(p, dtype)
      support.assert_array_equal(y, x:transpose():ravel(), dtype)
      local part = luda.fromfile(p, dtype, 4, { offset = 2 * #element_bytes(dtype, flat[1]) })
      support.assert_array_equal(part, x:transpose():ravel():slice({ 2, 6 }), dtype)
    end
    local z = luda.fromfile(dir .. "/r.bin", "uint8", { offset = 15 * 16 })
    assert.are.same({ 0 }, z.shape)
    remove_tree(dir)
  end)

  it("reads float64 by default, and all of the file for count -1", function()
    local dir = tmpdir()
    support.write_file(dir .. "/d.bin", string.pack("<ddd", 1.5, -2.25, 1e300))
    local x = luda.fromfile(dir .. "/d.bin", nil, -1, { device = "cpu" })
    assert.are.equal("float64", x.dtype)
    assert.are.same({ 1.5, -2.25, 1e300 }, x:totable())
    remove_tree(dir)
  end)
end)

describe("errors", function()
  local dir

  before_each(function() dir = tmpdir() end)
  after_each(function() remove_tree(dir) end)

  it("name the file and the problem", function()
    local at, e
    local x = luda.arange(5, "float64", { device = "cpu" })
    local p = dir .. "/t.npy"
    luda.save(p, x)
    support.write_file(p, support.read_file(p):sub(1, 128 + 12))
    at, e = here(), error_of(function() luda.load_npy(p) end)
    assert.are.equal(at .. "load_npy: " .. p .. ": file ends after 12 of 40 bytes of data", e)
    support.write_file(p, "hello")
    at, e = here(), error_of(function() luda.load_npy(p) end)
    assert.are.equal(at .. "load_npy: " .. p
      .. ": not an .npy or .npz file (it starts with 'hello'; .npy files start with '\\x93NUMPY', .npz files with 'PK')", e)
    support.write_file(p, preamble("float64", { 1 }):gsub("<f8", "|O8") .. ("\0"):rep(8))
    at, e = here(), error_of(function() luda.load_npy(p) end)
    assert.are.equal(at .. "load_npy: " .. p .. ": dtype '|O8' holds Python objects, which luda cannot read", e)
    at, e = here(), error_of(function() luda.load_npy(dir .. "/none.npy") end)
    assert.are.equal(at .. "load_npy: " .. dir .. "/none.npy: cannot open it: No such file or directory", e)
    at, e = here(), error_of(function() luda.save(dir .. "/no/x", x) end)
    assert.are.equal(at .. "save: " .. dir .. "/no/x.npy: cannot open it for writing: No such file or directory", e)
    at, e = here(), error_of(function() x:tofile(dir .. "/no/x") end)
    assert.are.equal(at .. "tofile: " .. dir .. "/no/x: cannot open it for writing: No such file or directory", e)
    x:tofile(p)
    at, e = here(), error_of(function() luda.fromfile(p, "float64", 6) end)
    assert.are.equal(at .. "fromfile: " .. p .. ": count 6 asks for 48 bytes of float64 from byte 0, but the file holds 40 from there", e)
    at, e = here(), error_of(function() luda.fromfile(p, "float64", { offset = 3 }) end)
    assert.are.equal(at .. "fromfile: " .. p .. ": its 37 bytes from byte 3 are not a whole number of float64 elements (8 bytes each); give count", e)
  end)

  it("check the arguments", function()
    local at, e
    local x = luda.zeros(2, nil, { device = "cpu" })
    at, e = here(), error_of(function() luda.save(dir .. "/a", { 1, 2 }) end)
    assert.are.equal(at .. "bad argument #2 to 'save' (ndarray expected, got table)", e)
    at, e = here(), error_of(function() luda.save("a\0b", x) end)
    assert.are.equal(at .. "bad argument #1 to 'save' (the path holds a zero byte)", e)
    at, e = here(), error_of(function() luda.savez(dir .. "/z", x, { y = 3 }) end)
    assert.are.equal(at .. "bad argument #3 to 'savez' (the table's 'y' is 3, not an ndarray)", e)
    at, e = here(), error_of(function() luda.savez(dir .. "/z", x, { arr_0 = x }) end)
    assert.are.equal(at .. "bad argument #3 to 'savez' (the name 'arr_0' is taken by a positional array; name it otherwise)", e)
    at, e = here(), error_of(function() luda.savez(dir .. "/z") end)
    assert.are.equal(at .. "savez: no arrays to save", e)
    at, e = here(), error_of(function() luda.graph(function(a) luda.save(dir .. "/g", a) return a end, x) end)
    assert.are.equal(at .. "writing an array to a file needs a result on the host, but a graph is being recorded and "
      .. "its work has not run; return the arrays from the recorded function and read them after the graph runs", e)
    at, e = here(), error_of(function() luda.load_npy(dir .. "/z.npz", { devcie = "cpu" }) end)
    assert.are.equal(at .. "bad argument #2 to 'load_npy' (unknown option 'devcie'; expected device)", e)
  end)
end)

-- ---- NumPy itself ------------------------------------------------------------------------

local PYTHON = "/usr/bin/python3"
local HELPER = (os.getenv("LUDA_SOURCE_DIR") or ".") .. "/tests/lua/npy_numpy.py"

-- Why the NumPy round trips cannot run here, or nil.
local function numpy_missing()
  local ok = os.execute(PYTHON .. " -c 'import numpy' >/dev/null 2>&1")
  if not ok then return PYTHON .. " has no NumPy (Debian: apt-get install python3-numpy)" end
  return nil
end

local function run_helper(command, dir)
  local out = os.tmpname()
  local ok = os.execute(PYTHON .. " " .. support.quote(HELPER) .. " " .. command .. " " .. support.quote(dir) .. " >"
    .. out .. " 2>&1")
  local text = support.read_file(out)
  os.remove(out)
  return ok, text
end

local function hex(s)
  return s == "" and "-" or (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end
local function shape_field(shape)
  if #shape == 0 then return "-" end
  local t = {}
  for i, e in ipairs(shape) do t[i] = tostring(e) end
  return table.concat(t, "x")
end

describe("NumPy", function()
  on_devices("reads what luda writes", function(device)
    local why = numpy_missing()
    if why then return pending(why) end
    local dir = tmpdir()
    local lines = {}
    for _, dtype in ipairs(DTYPES) do
      for k, shape in ipairs(SHAPES) do
        local x, flat = random_array(shape, dtype)
        if #shape == 2 then x = x:transpose():copy():transpose() end  -- written from strided memory
        local name = ("%s_%d.npy"):format(dtype, k)
        luda.save(dir .. "/" .. name, x)
        lines[#lines + 1] = table.concat({ name, "-", dtype, shape_field(shape), hex(flat_bytes(dtype, flat)) }, " ")
      end
    end
    local a, af = random_array({ 2, 3 }, "int32")
    local b, bf = random_array({}, "complex64")
    luda.savez(dir .. "/s.npz", a, { named = b })
    luda.savez_compressed(dir .. "/c.npz", { a = a, b = b })
    for _, z in ipairs({ { "s.npz", "arr_0", "named" }, { "c.npz", "a", "b" } }) do
      lines[#lines + 1] = table.concat({ z[1], z[2], "int32", "2x3", hex(flat_bytes("int32", af)) }, " ")
      lines[#lines + 1] = table.concat({ z[1], z[3], "complex64", "-", hex(flat_bytes("complex64", bf)) }, " ")
    end
    support.write_file(dir .. "/manifest.txt", table.concat(lines, "\n") .. "\n")
    local ok, text = run_helper("check", dir)
    assert.is_true(ok, text)
    assert.are.equal(("ok %d of %d\n"):format(#lines, #lines), text)
    remove_tree(dir)
  end)

  on_devices("writes what luda reads: C and Fortran order, big-endian, versions 1.0 and 2.0, .npz", function(device)
    local why = numpy_missing()
    if why then return pending(why) end
    local dir = tmpdir()
    local ok, text = run_helper("write", dir)
    assert.is_true(ok, text)
    local count, archives = 0, {}
    for line in io.lines(dir .. "/manifest.txt") do
      local name, member, dtype, shape, want = line:match("^(%S+) (%S+) (%S+) (%S+) (%S+)$")
      local x
      if member == "-" then
        x = luda.load_npy(dir .. "/" .. name)
      else
        archives[name] = archives[name] or luda.load_npy(dir .. "/" .. name)
        x = archives[name][member]
      end
      local what = name .. " " .. member
      assert.are.equal(device == "cpu" and "cpu" or "cuda:0", tostring(x.device), what)
      assert.are.equal(dtype, x.dtype, what)
      assert.are.equal(shape, shape_field(x.shape), what)
      assert.are.equal(want, hex(raw_bytes(x, dir)), what)
      count = count + 1
    end
    assert.is_true(count > 300, "only " .. count .. " arrays")
    remove_tree(dir)
  end)
end)

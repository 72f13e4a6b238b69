-- luda.cuda.jit: making kernels, their names and sources, the launch syntax and its errors
-- (no GPU needed); inspection of the typed function, CUDA C++ and PTX; results against
-- plain Lua on each device (the cpu target always, a GPU when one is usable).
local luda = require "luda"
local support = require "support"
local cuda = luda.cuda
local here, error_of, f32 = support.here, support.error_of, support.f32
local on_devices = support.device_tests(_ENV)

-- Numba's tutorial kernel: a grid-stride loop.
local add_kernel = cuda.jit(function(x, y, out)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do out[i] = x[i] + y[i] end
end)

local SYNTAX = "add_kernel[{blockspergrid, threadsperblock}](arg0, ...)"

describe("cuda.jit", function()
  before_each(function() math.randomseed(2024) end)

  it("makes kernel objects that keep their function and name", function()
    local f = function(a, b) end
    local k = cuda.jit(f)
    assert.are.equal(f, k.lua)
    assert.are.equal("f", k.name)  -- the name where the function was defined
    assert.are.equal("add_kernel", add_kernel.name)
    assert.are.equal("<cuda.jit kernel 'add_kernel'>", tostring(add_kernel))
    local function saxpy(a, x, y) end
    assert.are.equal("saxpy", cuda.jit(saxpy, { fastmath = true }).name)
    -- Numba's decorator with options.
    local decorated = cuda.jit({ boundscheck = true, debug = false })(function(x) end)
    assert.are.equal("decorated", decorated.name)
    -- Source text, named by its own `function NAME(`, else "kernel".
    local src = "function scale(x, out) out[0] = 2 * x[0] end"
    local t = cuda.jit(src)
    assert.are.equal("scale", t.name)
    assert.are.equal(src, t.lua)
    assert.are.equal("kernel", cuda.jit("function(x) end").name)
  end)

  it("checks its arguments and options", function()
    assert.are.equal(here() .. "bad argument #1 to 'jit' (function, source string or options table expected, got number)", error_of(function() cuda.jit(42) end))
    assert.are.equal(here() .. "bad argument #2 to 'jit' (unknown option 'fastmth'; expected boundscheck, fastmath, debug, link)", error_of(function() cuda.jit(function() end, { fastmth = true }) end))
    assert.are.equal(here() .. "jit: option 'debug' must be a boolean, got 'yes'", error_of(function() cuda.jit({ debug = "yes" }) end))
    assert.are.equal(here() .. "a C function cannot become a kernel: pass a Lua function, or its source text (luda.cuda.jit([[ function(x, out) ... end ]]))", error_of(function() cuda.jit(print) end))
    local named = load("return function(x) end", "=mychunk")()
    assert.are.equal(here() .. "cannot find the source of the function defined at mychunk:1: its chunk '=mychunk' was loaded without keeping its text: load it with luda::load_chunk (from Lua: luda.load), or register the text with luda::register_chunk, or pass the source text instead: luda.cuda.jit([[ function(x, out) ... end ]])", error_of(function() cuda.jit(named) end))
    assert.are.equal(here() .. "jit_kernel has no field 'sources' (fields: lua, name; methods: compile, inspect, max_cooperative_grid_blocks, signatures, stats)", error_of(function() return add_kernel.sources end))
  end)

  it("asks for a launch configuration in numba's words", function()
    local x = luda.zeros(4, "float32", { device = "cpu" })
    assert.are.equal(here() .. "kernel 'add_kernel' launch configuration was not specified. Use the syntax: " .. SYNTAX, error_of(function() add_kernel(x, x, x) end))
  end)

  it("checks the launch configuration before any device is needed", function()
    local k = add_kernel
    -- Raised where the kernel is indexed: checked once, then compared without the position.
    assert.are.equal(here() .. "kernel 'add_kernel': the launch configuration has no grid; use the syntax " .. SYNTAX, error_of(function() return k[{}] end))
    local function err(config)
      local e = error_of(function() return k[config] end)
      return (e:gsub("^[^:]+:%d+: ", ""))
    end
    local function here() return "" end
    local p = "kernel 'add_kernel': "
    assert.are.equal(here() .. p .. "the launch configuration has no block; use the syntax " .. SYNTAX, err({ 30 }))
    assert.are.equal(here() .. p .. "grid dimension x is 0: each grid and block dimension must be at least 1", err({ 0, 128 }))
    assert.are.equal(here() .. p .. "block dimension y is -2: each grid and block dimension must be at least 1", err({ grid = 1, block = { 32, -2 } }))
    assert.are.equal(here() .. p .. "grid must be a number or a table of 1 to 3 numbers, got a string (use the syntax " .. SYNTAX .. ")", err({ "30", 128 }))
    assert.are.equal(here() .. p .. "block must be a number or a table of 1 to 3 numbers, got a table of 4 (use the syntax " .. SYNTAX .. ")", err({ 1, { 1, 1, 1, 1 } }))
    assert.are.equal(here() .. p .. "block must be an integer, got 2.5", err({ 1, 2.5 }))
    -- NaN of either sign and infinities as Lua and NumPy print them (never "-nan").
    assert.are.equal(here() .. p .. "grid must be an integer, got nan", err({ 0 / 0, 1 }))
    assert.are.equal(here() .. p .. "grid[2] must be an integer, got nan", err({ { 1, -(0 / 0) }, 1 }))
    assert.are.equal(here() .. p .. "block must be an integer, got -inf", err({ 1, -1 / 0 }))
    assert.are.equal(here() .. p .. "block must be an integer, got 3e+20", err({ 1, 3e20 }))
    assert.are.equal(here() .. p .. "grid[2] must be an integer, got 'a'", err({ { 1, "a" }, 1 }))
    assert.are.equal(here() .. p .. "the grid is given twice ([1] and grid =); give it once", err({ 1, 2, grid = 3 }))
    assert.are.equal(here() .. p .. "the launch configuration takes two values, {blockspergrid, threadsperblock}; give shared memory and the stream by name: add_kernel[{grid, block, shared = bytes, stream = s}](...)", err({ 1, 2, 0 }))
    assert.are.equal(here() .. p .. "unknown launch option 'shared_mem'; expected grid, block, shared, stream", err({ 1, 2, shared_mem = 4 }))
    assert.are.equal(here() .. p .. "shared is -1 bytes; it must be between 0 and 4294967295", err({ 1, 2, shared = -1 }))
    assert.are.equal(here() .. "kernel 'add_kernel': option 'stream' must be a stream (luda.stream()) or 0 for the default stream, got 's'", err({ 1, 2, stream = "s" }))
    assert.are.equal("kernel 'add_kernel' is indexed with 3; use the syntax " .. SYNTAX, err(3))
    -- Well-formed configurations make launchers without touching a device.
    assert.truthy(k[{ 30, 128 }])
    assert.truthy(k[{ grid = { 4, 2 }, block = { 16, 16 }, shared = 1024, stream = 0 }])
  end)

  it("checks the arguments of a launch", function()
    local x = luda.zeros(4, "float32", { device = "cpu" })
    assert.are.equal(here() .. "kernel 'add_kernel': argument 2 is a string; pass arrays, numbers, booleans or typed scalars (luda.int32(v))", error_of(function() add_kernel[{ 1, 4 }](x, "y", x) end))
    assert.are.equal(here() .. "kernel 'add_kernel' takes 3 arguments (x, y, out), got 2", error_of(function() add_kernel[{ 1, 4 }](x, x) end))
  end)

  it("shows the typed function and its CUDA C++ without a GPU", function()
    local sig = "void(float32[:], float32[:], float32[:])"
    local code = add_kernel:inspect("cuda", sig)
    assert.truthy(code:find('extern "C" __global__', 1, true), code)
    assert.truthy(code:find("#line", 1, true), code)
    assert.truthy(code:find("add_kernel", 1, true), code)
    local body = code:sub(code:find('extern "C" __global__', 1, true))  -- past the prelude
    assert.is_nil(body:find("double", 1, true), "float64 in a float32 kernel:\n" .. body)
    local types = add_kernel:inspect("types", sig)
    assert.truthy(types:find("float32", 1, true), types)
    assert.are.same({ sig }, add_kernel:signatures())
    -- The only specialization may be left unnamed.
    assert.are.equal(code, add_kernel:inspect("cuda"))
    local ptx = add_kernel:inspect("ptx", sig, { arch = "sm_90" })
    assert.truthy(ptx:find(".target sm_90", 1, true))
    assert.are.equal(here() .. "bad argument #3 to 'inspect' (unknown option 'arc'; expected arch)", error_of(function() add_kernel:inspect("ptx", sig, { arc = 90 }) end))
    -- A kernel given as source text.
    local t = cuda.jit("function fill(out, v) out[cuda.grid(1)] = v end")
    assert.truthy(t:inspect("cuda", "void(int32[:], int32)"):find("fill", 1, true))
  end)

  it("reads globals as Lua does, through the environment's __index", function()
    local parent = { SCALE = 3, luda = luda }
    local env = setmetatable({}, { __index = parent })
    local make = assert(load("return luda.cuda.jit(function(x) x[0] = SCALE * 2 end)", nil, "t", env))
    local code = make():inspect("cuda", "void(float32[:])")
    assert.truthy(code:find("= 6.0f;", 1, true), code)
    local index_line = debug.getinfo(1, "l").currentline + 1
    local failing = setmetatable({ luda = luda }, { __index = function(_, k) error("no global " .. k) end })
    local bad = assert(load("return luda.cuda.jit(function(x) x[0] = MISSING end)", nil, "t", failing))()
    local err = error_of(function() bad:inspect("cuda", "void(float32[:])") end)
    local at = here():gsub(":%d+: $", ":" .. index_line .. ": ")  -- where __index raised
    assert.truthy(err:find("reading the global 'MISSING' for a kernel failed: " .. at .. "no global MISSING", 1, true), err)
  end)

  it("compiles functions typed at the REPL and given to -e", function()
    local sig = "'void(float32[:], float32[:])'"
    local out, err = support.run_luda("-i", table.concat({
      "scale = 3",
      "k = luda.cuda.jit(function(x, out)",  -- reads a global: traced to its input by its _ENV
      "  out[0] = x[0] * scale",
      "end)",
      "j = luda.cuda.jit(function(x, out) out[0] = x[0] end)",  -- no global: the latest input
      "print(k.name, k:inspect('cuda', " .. sig .. "):find('k', 1, true) ~= nil)",
      "print(j.name, j:inspect('cuda', " .. sig .. "):find('j', 1, true) ~= nil)",
    }, "\n") .. "\n")
    assert.are.equal("", err)
    assert.truthy(out:find("k\ttrue\n", 1, true), out)
    assert.truthy(out:find("j\ttrue\n", 1, true), out)
    out, err = support.run_luda("-e " .. support.quote("e = luda.cuda.jit(function(x) x[0] = 1 end) print(e.name, #e:inspect('cuda', 'void(int64[:])') > 0)"))
    assert.are.equal("", err)
    assert.are.equal("e\ttrue\n", out)
  end)

  on_devices("adds arrays as plain Lua does, on the device of its arrays", function()
    local n = 100000
    local a, b = {}, {}
    for i = 1, n do a[i], b[i] = f32((math.random() - 0.5) * 100), f32((math.random() - 0.5) * 100) end
    local x, y = luda.array(a, "float32"), luda.array(b, "float32")
    local out = luda.zeros(n, "float32")
    add_kernel[{ 30, 128 }](x, y, out)
    local got = out:totable()
    for i = 1, n do assert.are.equal(f32(a[i] + b[i]), got[i]) end
    local s = add_kernel:stats()
    add_kernel[{ grid = 30, block = 128 }](x, y, out)
    assert.are.equal(s.memory_hits + 1, add_kernel:stats().memory_hits)
    assert.are.equal(s.specializations, add_kernel:stats().specializations)
    -- Arrays on the cpu device run the kernel there, whatever the current device.
    local hx, hy = luda.array(a, "float32", { device = "cpu" }), luda.array(b, "float32", { device = "cpu" })
    local hout = luda.zeros(n, "float32", { device = "cpu" })
    add_kernel[{ 30, 128 }](hx, hy, hout)
    got = hout:totable()
    for i = 1, n do assert.are.equal(f32(a[i] + b[i]), got[i]) end
  end)

  it("counts a kernel's work with the same fields as the kinds do", function()
    local count = cuda.jit(function(x) x[cuda.grid(1)] = 1 end)
    local twice = luda.elementwise("float64 x", "float64 y", "y = 2 * x", "twice")
    local x = luda.zeros(4, "float64", { device = "cpu" })
    count[{ 1, 4 }](x)
    count[{ 1, 4 }](x)
    twice(x)
    local s, t = count:stats(), twice:stats()
    local fields = {}
    for k, v in pairs(s) do
      fields[#fields + 1] = k
      assert.are.equal(math.type(v) and "number" or "?", type(t[k]), k)
    end
    table.sort(fields)
    assert.are.same({ "calls", "compile_seconds", "disk_hits", "disk_misses", "frontend_seconds", "host_compiles",
      "load_seconds", "loads", "memory_hits", "nvrtc_compiles", "specializations" }, fields)
    for k in pairs(t) do assert.is_not_nil(s[k], k) end
    assert.are.equal(2, s.calls)
    assert.are.equal(1, s.memory_hits)
    assert.are.equal(1, s.specializations)
    assert.are.equal(1, t.calls)
    -- A cpu kernel comes from the host compiler or the disk cache, never from NVRTC.
    assert.are.equal(1, s.host_compiles + s.disk_hits)
    assert.are.equal(0, s.nvrtc_compiles)
  end)

  it("refuses arrays on two devices in one launch, naming both", function()
    local why = support.gpu_missing()
    if why then return pending(why) end
    local g, c = luda.zeros(4, "float32", { device = "cuda" }), luda.zeros(4, "float32", { device = "cpu" })
    assert.are.equal(here() .. "kernel 'add_kernel' got arrays on cuda:0 (x, out) and cpu (y); put them on one device (y:to(\"cuda:0\"))", error_of(function() add_kernel[{ 1, 4 }](g, c, g) end))
    assert.are.equal(here() .. "kernel 'add_kernel' got arrays on cpu (x, y) and cuda:0 (out); put them on one device (x:to(\"cuda:0\"))", error_of(function() add_kernel[{ 1, 4 }](c, c, g) end))
  end)

  on_devices("keeps a Lua float weak: a float32 kernel stays float32", function()
    local scale = cuda.jit(function(x, a, out)
      local i = cuda.grid(1)
      if i < #x then out[i] = a * x[i] end
    end)
    local xs = {}
    for i = 1, 1000 do xs[i] = f32(math.random() * 10) end
    local x, out = luda.array(xs, "float32"), luda.zeros(1000, "float32")
    scale[{ 8, 128 }](x, 0.1, out)
    local got = out:totable()
    for i = 1, 1000 do assert.are.equal(f32(f32(0.1) * xs[i]), got[i]) end
    local code = scale:inspect("cuda")
    assert.is_nil(code:sub(code:find('extern "C" __global__', 1, true)):find("double", 1, true), code)
  end)

  on_devices("raises a located error for an out-of-range index with boundscheck", function()
    local src = table.concat({
      "local luda = require 'luda'",
      "local cuda = luda.cuda",
      "local function hist(bins, n)",
      "  local i = cuda.grid(1)",
      "  if i < n then bins[i] = bins[i] + 1 end",
      "end",
      "return hist",
    }, "\n")
    -- A chunk loaded from a file: its source is read back from the file.
    local path = os.tmpname()
    support.write_file(path, src)
    local hist = cuda.jit(assert(loadfile(path))(), { boundscheck = true })
    local bins = luda.zeros(1024, "int32")
    hist[{ 4, 256 }](bins, 1024)
    local counts = bins:totable()
    for i = 1, 1024 do assert.are.equal(1, counts[i]) end
    local where = here(); local err = error_of(function() hist[{ 8, 256 }](bins, 1025) end)
    os.remove(path)
    assert.are.equal(where .. "kernel 'hist' at " .. path .. ":5: index 1024 out of range for axis 0 of size 1024", err)
  end)

  -- A view of the first 16 of 32 elements: reading past the view stays inside its buffer,
  -- so an unchecked kernel reads the next elements (as a GPU does) instead of faulting.
  local function past_view()
    local whole = luda.arange(32, "int32")
    return whole:slice({ 0, 16 }), luda.zeros(16, "int32")
  end
  local PEEK = "function peek(x, out) local i = cuda.grid(1) out[i] = x[i + 16] end"
  local function beyond() local t = {} for i = 1, 16 do t[i] = i + 15 end return t end

  local peek_line = debug.getinfo(1, "l").currentline + 1
  local function peek(x, out) local i = cuda.grid(1) out[i] = x[i + 16] end
  local PEEK_ERROR = "kernel 'peek' at " .. debug.getinfo(1, "S").short_src .. ":" .. peek_line ..
                     ": index 16 out of range for axis 0 of size 16"

  on_devices("check indices by default on cpu, not on cuda; boundscheck = true or false decides", function(device)
    local x, out = past_view()
    local default = cuda.jit(peek)
    if device == "cpu" then
      local where = here(); local err = error_of(function() default[{ 1, 16 }](x, out) end)
      assert.are.equal(where .. PEEK_ERROR, err)
    else
      default[{ 1, 16 }](x, out)
      assert.are.same(beyond(), out:totable())
    end
    local unchecked = cuda.jit(peek, { boundscheck = false })
    out = luda.zeros(16, "int32")
    unchecked[{ 1, 16 }](x, out)
    assert.are.same(beyond(), out:totable())
    assert.is_nil(unchecked:inspect("cuda"):find("luda_bounds,", 1, true))
    local checked = cuda.jit(peek, { boundscheck = true })
    local where = here(); local err = error_of(function() checked[{ 1, 16 }](x, out) end)
    assert.are.equal(where .. PEEK_ERROR, err)
  end)

  local dim_line = debug.getinfo(1, "l").currentline + 1
  local function dim(x, k, out) out[0] = x.shape[k] end
  local function dim_error(k)
    return "kernel 'dim' at " .. debug.getinfo(1, "S").short_src .. ":" .. dim_line .. ": a.shape[" .. k ..
           "] is out of range: the array has 2 dimensions (a.shape[1] .. a.shape[2]; Lua sequences start at 1)"
  end

  on_devices("check a run-time index into a.shape as array indices: by default on cpu, wherever boundscheck is on", function(device)
    local x, out = luda.zeros({ 3, 5 }, "float32"), luda.zeros(1, "int64")
    local checked = cuda.jit(dim, { boundscheck = true })
    checked[{ 1, 1 }](x, 2, out)
    assert.are.same({ 5 }, out:totable())
    for _, k in ipairs({ 3, 0, -1, math.mininteger }) do
      local where = here(); local err = error_of(function() checked[{ 1, 1 }](x, k, out) end)
      assert.are.equal(where .. dim_error(k), err)
    end
    local default = cuda.jit(dim)
    if device == "cpu" then
      local where = here(); local err = error_of(function() default[{ 1, 1 }](x, 3, out) end)
      assert.are.equal(where .. dim_error(3), err)
    else
      default[{ 1, 1 }](x, 3, out)
      assert.are.same({ 0 }, out:totable())
    end
    local unchecked = cuda.jit(dim, { boundscheck = false })
    unchecked[{ 1, 1 }](x, 3, out)
    assert.are.same({ 0 }, out:totable())
    unchecked[{ 1, 1 }](x, 1, out)
    assert.are.same({ 3 }, out:totable())
  end)

  local floor_line = debug.getinfo(1, "l").currentline + 1
  local function floored(x, out, f) out[0] = x[math.floor(f)] end
  local FLOOR_SRC = debug.getinfo(1, "S").short_src

  on_devices("stop at an index computed from NaN, an infinity or a float beyond int64, as Lua has no integer for it", function()
    local k = cuda.jit(floored, { boundscheck = true })
    local x, out = luda.arange(4, "float32"), luda.zeros(1, "float32")
    k[{ 1, 1 }](x, out, 2.5)
    assert.are.same({ 2 }, out:totable())
    for _, f in ipairs({ 0 / 0, math.huge, -math.huge, 1e300, -2 ^ 64, 2 ^ 63 }) do
      local where = here(); local err = error_of(function() k[{ 1, 1 }](x, out, f) end)
      local prefix = where .. "kernel 'floored' at " .. FLOOR_SRC .. ":" .. floor_line .. ": index "
      assert.are.equal(prefix, err:sub(1, #prefix), err)
      assert.truthy(err:find(" has no integer representation (NaN, an infinity, or a number beyond int64, " ..
                             "converted to an index)", 1, true), err)
    end
    assert.is_nil(math.tointeger(0 / 0))  -- Lua has no integer for it either
    -- without bounds checks the conversion is still defined: NaN gives index 0
    local unchecked = cuda.jit(floored, { boundscheck = false })
    unchecked[{ 1, 1 }](x, out, 0 / 0)
    assert.are.same({ 0 }, out:totable())
  end)

  local for_line = debug.getinfo(1, "l").currentline + 2
  local function stepped(out, step, fstep)
    for i = 0, 9, step do out[i] = out[i] + 1 end
    for x = 0.5, 2.0, fstep do out[0] = out[0] + 10 end
  end
  local SRC = debug.getinfo(1, "S").short_src

  on_devices("raise Lua's error for a 'for' step that is zero at run time, at the loop", function()
    local k = cuda.jit(stepped)
    local out = luda.zeros(10, "int32")
    k[{ 1, 1 }](out, 3, 0.75)
    local want = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
    stepped(setmetatable({}, { __index = function(_, i) return want[i + 1] end,
                               __newindex = function(_, i, v) want[i + 1] = v end }), 3, 0.75)
    assert.are.same(want, out:totable())
    local where = here(); local err = error_of(function() k[{ 1, 1 }](out, 0, 0.75) end)
    assert.are.equal(where .. "kernel 'stepped' at " .. SRC .. ":" .. for_line .. ": 'for' step is zero", err)
    where = here(); err = error_of(function() k[{ 1, 1 }](out, 3, 0.0) end)
    assert.are.equal(where .. "kernel 'stepped' at " .. SRC .. ":" .. (for_line + 1) .. ": 'for' step is zero", err)
    -- what Lua says
    assert.truthy(select(2, pcall(stepped, {}, 0, 1.0)):find("'for' step is zero", 1, true))
    -- A grid-stride loop's step, the grid's size, is never zero: it needs no record.
    assert.is_nil(add_kernel:inspect("cuda", "void(float32[:], float32[:], float32[:])"):find("luda_bounds", 1, true))
  end)

  -- A GPU fault makes the context unusable, so it runs in a process of its own. The fault
  -- surfaces at the copy back; the message names the kernel and how to find the access.
  it("name the kernel of an illegal address on a GPU, and how to find the access", function()
    local why = support.gpu_missing()
    if why then return pending(why) end
    local script = "local cuda = luda.cuda " ..
                   "local wild = cuda.jit(function(x) x[cuda.grid(1) + 1099511627776] = 1 end, {boundscheck = false}) " ..
                   "local x = luda.zeros(16, 'float32') wild[{1, 16}](x) print(x:totable()[1])"
    local out, err, code = support.run_luda("-e " .. support.quote(script), nil, false, { LUDA_DEVICE = "cuda" }, 120)
    assert.are.equal("", out)
    assert.are.equal(1, code)
    assert.truthy(err:find("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered. This error is sticky: " ..
                           "the device's CUDA context is now unusable, and the process must be restarted to use that " ..
                           "device again. The last kernel this thread launched was kernel 'wild' ((command line 1):1): an " ..
                           "index out of range is the usual cause", 1, true), err)
  end)

  it("take LUDA_BOUNDSCHECK=0 or 1 over the option and the default, and refuse other values", function()
    local script = "local x = luda.arange(32, 'int32'):slice({0, 16}) local out = luda.zeros(16, 'int32') " ..
                   "local k = luda.cuda.jit(" .. string.format("%q", PEEK) .. ", {boundscheck = %s}) " ..
                   "k[{1, 16}](x, out) print(table.concat(out:totable(), ' '))"
    local env = { LUDA_DEVICE = "cpu" }
    local function run(value, option)
      env.LUDA_BOUNDSCHECK = value
      return support.run_luda("-e " .. support.quote(script:format(option)), nil, false, env)
    end
    local out, err, code = run("0", "true")
    assert.are.same({ table.concat(beyond(), " ") .. "\n", "", 0 }, { out, err, code })
    out, err, code = run("", "nil")
    assert.are.equal("", out)
    assert.truthy(err:find("luda: (command line 1):1: kernel 'peek' at [string \"function peek(x, out) local i = cuda.gri...\"]:1: " ..
                           "index 16 out of range for axis 0 of size 16", 1, true), err)
    out, err = run("1", "false")
    assert.truthy(err:find("index 16 out of range for axis 0 of size 16", 1, true), err)
    out, err = run("maybe", "nil")
    assert.are.equal("", out)
    assert.truthy(err:find("luda: (command line 1):1: LUDA_BOUNDSCHECK is 'maybe': expected 0 (bounds checks off) or 1 (on), " ..
                           "or leave it unset for each kernel's boundscheck option (default: on for the cpu device, off for cuda)", 1, true), err)
  end)
end)

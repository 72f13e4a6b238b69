-- Where a kernel's source comes from: every kind takes Lua source text as well as a
-- function; luda.load keeps a chunk's text under its own name; luda opened by a stock
-- lua5.4 (require "luda") keeps the text of the files on the call stack when it opens, and
-- reads a file loaded before it once, when a kernel first needs it, never again. (The
-- luda command, the REPL and -e: cli_spec.lua; C++ hosts: tests/host/chunks_test.cpp.)
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local here, error_of, quote, write_file = support.here, support.error_of, support.quote, support.write_file

local on_devices = support.device_tests(_ENV)

local function mul_sub(a, b) return a * b - a end

describe("every kind takes Lua source text", function()
  before_each(function() math.randomseed(7007) end)

  on_devices("vectorize, with and without signatures", function()
    local hx, hy = H.random("int64", { 33 }, -1000, 1000), H.random("int64", { 33 }, -1000, 1000)
    local x, y = H.to_array(hx, "int64"), H.to_array(hy, "int64")
    local ref = H.map(mul_sub, hx, hy)
    local text = "function(a, b) return a * b - a end"
    H.check(luda.vectorize(text)(x, y), ref, H.exact, "dynamic")
    H.check(luda.vectorize("int64(int64, int64)", text)(x, y), ref, H.exact, "one signature")
    H.check(luda.vectorize({ "int64(int64, int64)" }, text)(x, y), ref, H.exact, "signatures")
    H.check(luda.vectorize({ "int64(int64, int64)" })(text)(x, y), ref, H.exact, "decorator")
    local named = luda.vectorize("local function mul_sub(a, b) return a * b - a end")
    assert.are.same({ "mul_sub", "local function mul_sub(a, b) return a * b - a end" }, { named.name, named.lua })
    H.check(named(x, 3), H.map(function(a) return mul_sub(a, 3) end, hx), H.exact, "named")
  end)

  on_devices("fuse, elementwise and with a final reduction", function()
    local hx, hw = H.random("int64", { 5, 7 }, -100, 100), H.random("int64", { 7 }, -100, 100)
    local x, w = H.to_array(hx, "int64"), H.to_array(hw, "int64")
    local prod = H.map(function(a, b) return a * b end, hx, hw)
    H.check(luda.fuse("function(x, w) return x * w + 1 end")(x, w), H.map(function(p) return p + 1 end, prod), H.exact)
    H.check(luda.fuse("function(x, w) return luda.sum(x * w, 2) end")(x, w), H.sum(prod, 2), H.exact)
  end)

  on_devices("elementwise and reduction bodies, cuda.jit, and the device functions a kernel calls", function()
    local hx, hy = H.random("int64", { 50 }, -1000, 1000), H.random("int64", { 50 }, -1000, 1000)
    local x, y = H.to_array(hx, "int64"), H.to_array(hy, "int64")
    local ew = luda.elementwise("T x, T y", "T z", "z = x * y + 3", "ew")
    H.check(ew(x, y), H.map(function(a, b) return a * b + 3 end, hx, hy), H.exact, "elementwise")
    local sumsq = luda.reduction("T x", "T z", "x * x", "a + b", "z = a", "0", "sumsq")
    H.check(sumsq(x), H.sum(H.map(function(a) return a * a end, hx)), H.exact, "reduction")
    -- A kernel given as text calls a global device function from a chunk kept by luda.load.
    _G.chunks_spec_triple = luda.load("-- helpers\nreturn function(v)\n  return 3 * v\nend\n", "=chunks_spec_helpers")()
    local k = luda.cuda.jit([[function(x, out)
      local i = cuda.grid(1)
      if i < #x then out[i] = chunks_spec_triple(x[i]) + 1 end
    end]])
    local out = luda.zeros(50, "int64")
    k[{ 2, 32 }](x, out)
    _G.chunks_spec_triple = nil
    H.check(out, H.map(function(a) return 3 * a + 1 end, hx), H.exact, "cuda.jit with a device function")
  end)

  it("tells a vectorize signature from source text by its first word", function()
    local where, err = here(), error_of(function() luda.vectorize("function(...) return 1 end") end)
    assert.are.equal(where .. "vectorize: the function takes ... (a vararg); name each input as a parameter", err)
    local decorator = luda.vectorize("float32(float32)")
    assert.are.equal("function", type(decorator))
    where, err = here(), error_of(function() luda.fuse(42) end)
    assert.are.equal(where .. "bad argument #1 to 'fuse' (function or source string expected, got number)", err)
  end)
end)

describe("luda.load", function()
  it("is load, keeping the text of the chunk under its name", function()
    assert.are.same({ nil, "chunks_spec_a:1: unexpected symbol near '='" }, { luda.load("x = = 1", "=chunks_spec_a") })
    local pieces = { "local v = ...\n", "return function(x)\n", "  x[0] = v\n", "end\n" }
    local i = 0
    local f = luda.load(function() i = i + 1 return pieces[i] end, "=chunks_spec_b", "t", {})(41)
    local x = luda.zeros(1, "int64", { device = "cpu" })
    luda.cuda.jit(f)[{ 1, 1 }](x)
    assert.are.equal(41, x[0])
  end)

  it("finds a function among the texts of one name by lines and parameters, or says it cannot", function()
    local a = luda.load("return function(x) x[0] = 1 end", "=chunks_spec_c")()
    local b = luda.load("return function(x) x[0] = 2 end", "=chunks_spec_c")()
    local c = luda.load("\nreturn function(x) x[0] = 3 end", "=chunks_spec_c")()
    local x = luda.zeros(1, "int64", { device = "cpu" })
    luda.cuda.jit(c)[{ 1, 1 }](x)
    assert.are.equal(3, x[0])
    local where, err = here(), error_of(function() luda.cuda.jit(a) end)
    assert.are.equal(where .. "chunks_spec_c:1:8: source error: the chunk name '=chunks_spec_c' was loaded with 2 " ..
                     "different texts that each define a function with 1 parameter on line 1, and luda cannot tell " ..
                     "which one is meant: give each chunk its own name, or pass the kernel's source as a string, " ..
                     "e.g. cuda.jit([[function(x, out) ... end]])\n" ..
                     "    return function(x) x[0] = 1 end\n" ..
                     "           ^", err)
    assert.truthy(b)
  end)
end)

describe("luda opened by a stock lua5.4", function()
  local lua = os.getenv("LUA_BIN")

  -- Runs `text` as a script file with lua5.4, luda.so on its cpath, on the cpu device;
  -- returns its stdout and stderr together, and its path (removed already).
  local function run_lua(text, files)
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. quote(dir)))
    for name, body in pairs(files or {}) do write_file(dir .. "/" .. name, body) end
    local path = dir .. "/main.lua"
    write_file(path, text)
    local cwd = assert(os.getenv("PWD"))
    local cpath = package.cpath:gsub("[^;]+", function(p) if p:sub(1, 1) ~= "/" then return cwd .. "/" .. p end end)
    local p = io.popen("cd " .. quote(dir) .. " && LUA_CPATH=" .. quote(cpath) .. " LUDA_DEVICE=cpu " ..
                       quote(lua) .. " main.lua 2>&1")
    local out = p:read("a")
    p:close()
    for name in pairs(files or {}) do os.remove(dir .. "/" .. name) end
    os.remove(path)
    os.remove(dir)
    return out
  end

  local REWRITE = [[
local function rewrite(path, from, to)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  f = assert(io.open(path, "wb"))
  f:write((text:gsub(from, to)))
  f:close()
end
local function run(fn)
  local a = luda.zeros(1, "int32")
  luda.cuda.jit(fn)[{1, 1}](a)
  return a[0]
end
]]

  it("keeps the text of the script that requires luda from when luda opens", function()
    if not lua then return pending("LUA_BIN (lua5.4) is not set; ctest sets it") end
    local out = run_lua("luda = require 'luda'\n" .. REWRITE .. [[
local function fill(x) x[0] = 7 end
rewrite("main.lua", "= 7 end", "= 8 end")
print(run(fill))
]])
    assert.are.equal("7\n", out)
  end)

  it("reads a file loaded before luda once, when a kernel first needs it, and never again", function()
    if not lua then return pending("LUA_BIN (lua5.4) is not set; ctest sets it") end
    local early = "return {\n  fill = function(x) x[0] = 5 end,\n  other = function(x) x[0] = 6 end,\n}\n"
    local out = run_lua("local m = dofile('early.lua')\nluda = require 'luda'\n" .. REWRITE .. [[
print(run(m.fill))
rewrite("early.lua", "^", "\n\n")  -- every line two further down
print(run(m.other))
]], { ["early.lua"] = early })
    assert.are.equal("5\n6\n", out)
  end)

  it("says that a file loaded before luda changed before luda read it", function()
    if not lua then return pending("LUA_BIN (lua5.4) is not set; ctest sets it") end
    local early = "return {\n  fill = function(x) x[0] = 5 end,\n}\n"
    local out = run_lua("local m = dofile('early.lua')\nluda = require 'luda'\n" .. REWRITE .. [[
rewrite("early.lua", "^", "\n\n")
print(pcall(run, m.fill))
]], { ["early.lua"] = early })
    assert.are.equal("false\tmain.lua:13: early.lua:2:1: source error: no function with 1 parameter is defined on " ..
                     "lines 2-2 of early.lua as luda read it, after it was loaded: the file has changed since. " ..
                     "Load the file after require \"luda\" (luda then keeps the text it was loaded from), or pass " ..
                     "the kernel's source as a string\n", out)
  end)
end)

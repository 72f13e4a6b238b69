-- luda's Lua-written modules (stdlib/lua/, embedded in the library): require finds them
-- once luda is open, before any file of the same name; each is named by its file in
-- messages and tracebacks; an error a module raises for the caller's mistake names the
-- caller's line. (From a C++ host's luda::Engine: tests/host/lua_modules_test.cpp.)
local luda = require "luda"
local support = require "support"
local here, error_of, quote, write_file = support.here, support.error_of, support.quote, support.write_file

local source_dir = assert(os.getenv("LUDA_SOURCE_DIR"), "LUDA_SOURCE_DIR is not set; ctest sets it")

-- The number of the first line of stdlib/lua/<file> that holds `text`.
local function line_of(file, text)
  local n = 0
  for line in io.lines(source_dir .. "/stdlib/lua/" .. file) do
    n = n + 1
    if line:find(text, 1, true) then return n end
  end
  error(("no line of %s holds %q"):format(file, text))
end

describe("luda's Lua modules", function()
  it("are the files of stdlib/lua/, each under its module name and file name", function()
    local expected = {}
    local p = io.popen("cd " .. quote(source_dir .. "/stdlib/lua") .. " && find . -name '*.lua'")
    for path in p:lines() do
      local file = path:sub(3)  -- without "./"
      expected["=" .. file] = file:gsub("%.lua$", ""):gsub("/", ".")
    end
    p:close()
    assert.is_not_nil(expected["=luda/chunked.lua"])
    assert.are.same(expected, require("luda.internal").module_chunks)
  end)

  it("are found by require once luda is open", function()
    assert.are.equal(luda.chunked, require "luda.chunked")
    local c = require("luda.chunked")(luda.arange(10), 4)
    assert.are.same({ { 4, 4, 2 } }, c.chunks)
    assert.are.equal("(2, 3)", require("luda.chunked.grid").tuple({ 2, 3 }))
  end)

  it("name the caller's line in the errors they raise for the caller's mistakes", function()
    local chunked = require "luda.chunked"
    local at, err = here(), error_of(function() chunked.zeros(3, 0) end)
    assert.are.equal(at .. "luda.chunked.zeros: the block size of axis 1 must be a positive integer or -1 (the whole axis), got 0", err)
    at, err = here(), error_of(function() luda.sum(chunked(luda.arange(4), 2), 2) end)
    assert.are.equal(at .. "luda.sum: axis 2 is out of range for a 1-d array (axes are 1 to 1, or -1 for the last)", err)
  end)

  it("are named by their file and line where an error is their own", function()
    local c = luda.chunked(luda.arange(4), 2)
    local line = line_of("luda/chunked/array.lua", "methods.blocks = function(c)")
    local at = "luda/chunked/array.lua:" .. line .. ": "
    assert.are.equal(at .. "attempt to index a nil value (local 'c')", error_of(function() return c.blocks() end))
    local _, trace = xpcall(c.blocks, debug.traceback)
    assert.truthy(trace:find("\n\t" .. at, 1, true), trace)
  end)
end)

describe("luda's Lua modules in a stock lua5.4", function()
  local lua = os.getenv("LUA_BIN")

  -- Runs main.lua (`text`) with lua5.4 in a new folder holding `files` too, luda.so on its
  -- cpath, on the cpu device; returns its stdout and stderr together.
  local function run_lua(text, files)
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. quote(dir)))
    files = files or {}
    files["main.lua"] = text
    for name, body in pairs(files) do
      assert(os.execute("mkdir -p " .. quote((dir .. "/" .. name):match("(.*)/"))))
      write_file(dir .. "/" .. name, body)
    end
    local cwd = assert(os.getenv("PWD"))
    local cpath = package.cpath:gsub("[^;]+", function(p) if p:sub(1, 1) ~= "/" then return cwd .. "/" .. p end end)
    local p = io.popen("cd " .. quote(dir) .. " && LUA_CPATH=" .. quote(cpath) .. " LUDA_DEVICE=cpu " ..
                       quote(lua) .. " main.lua 2>&1")
    local out = p:read("a")
    p:close()
    os.execute("rm -rf " .. quote(dir))
    return out
  end

  it("are found by require after require \"luda\", before a file of the same name", function()
    if not lua then return pending("LUA_BIN (lua5.4) is not set; ctest sets it") end
    local out = run_lua([[
local luda = require "luda"
local chunked = require "luda.chunked"
print(chunked == luda.chunked, chunked(luda.arange(10), 4).numblocks[1])
print(pcall(chunked.zeros, 3, 0))
]], { ["luda/chunked.lua"] = "error('the file luda/chunked.lua was loaded')\n" })
    assert.are.equal("true\t3\nfalse\tmain.lua:4: luda.chunked.zeros: the block size of axis 1 must be a " ..
                     "positive integer or -1 (the whole axis), got 0\n", out)
  end)
end)

-- The `luda` command: scripts and their arguments, errors and exit status, -e, -v, -h,
-- bad options, the REPL (fed through a pipe, as `luda -i` reads it then), and busted
-- running inside luda. LUDA_BIN names the binary (ctest sets it).
local support = require "support"
local quote, write_file, read_file, luda = support.quote, support.write_file, support.read_file, support.run_luda

-- A script file with `text`; returns its path.
local function script(text)
  local path = os.tmpname() .. ".lua"
  write_file(path, text)
  return path
end

-- Lua patterns treat these as magic; escape them to match a literal path.
local function literal(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end

local BANNER = "^luda %d+%.%d+%.%d+ %(Lua 5%.4%.%d+%) \u{2014} "

describe("luda script.lua", function()
  it("runs the script with luda preloaded, `arg` and `...` as lua builds them", function()
    local path = script([[
print(select("#", ...), ...)
print(arg[0], arg[1], arg[2], arg[3], arg[-1] ~= nil)
print(luda == require("luda"), package.loaded.luda == luda, type(luda.zeros))
]])
    local out, err, code = luda(quote(path) .. " one 'two words' 3")
    os.remove(path)
    assert.are.equal("", err)
    assert.are.equal(0, code)
    assert.are.equal("3\tone\ttwo words\t3\n" ..
                     path .. "\tone\ttwo words\t3\ttrue\n" ..
                     "true\ttrue\tfunction\n", out)
  end)

  it("exits 1 with 'luda: file:line: message' and a traceback on an error", function()
    local path = script("local x = 1\nprint('before')\nerror('boom ' .. x)\nprint('after')\n")
    local out, err, code = luda(quote(path))
    os.remove(path)
    assert.are.equal(1, code)
    assert.are.equal("before\n", out)
    assert.matches("^luda: " .. literal(path) .. ":3: boom 1\nstack traceback:\n", err)
    assert.matches("in main chunk", err)
  end)

  it("reports a luda error at the script's line", function()
    local path = script("local luda = require 'luda'\n\nlocal x = luda.zeros({2}, 'float33')\n")
    local _, err, code = luda(quote(path))
    os.remove(path)
    assert.are.equal(1, code)
    assert.matches("^luda: " .. literal(path) .. ":3: bad argument #2 to 'zeros' %(unknown dtype 'float33'", err)
  end)

  it("shows a non-string error object through __tostring, else by its type", function()
    local path = script("error(setmetatable({}, {__tostring = function() return 'custom error' end}))\n")
    local _, err, code = luda(quote(path))
    assert.are.equal(1, code)
    assert.are.equal("luda: custom error\n", err)
    write_file(path, "error({code = 7})\n")
    _, err, code = luda(quote(path))
    os.remove(path)
    assert.are.equal(1, code)
    assert.matches("^luda: %(error object is a table value%)\nstack traceback:\n", err)
  end)

  it("reports a syntax error without running anything", function()
    local path = script("print('never')\nx = = 1\n")
    local out, err, code = luda(quote(path))
    os.remove(path)
    assert.are.equal(1, code)
    assert.are.equal("", out)
    assert.are.equal("luda: " .. path .. ":2: unexpected symbol near '='\n", err)
  end)

  it("says which file it cannot open", function()
    local _, err, code = luda("/nonexistent/dir/x.lua")
    assert.are.equal(1, code)
    assert.matches("^luda: cannot open /nonexistent/dir/x%.lua", err)
  end)

  it("passes os.exit's status through", function()
    local _, _, code = luda("-e 'os.exit(3)'")
    assert.are.equal(3, code)
  end)

  it("runs stdin with '-' (with arguments) and when stdin is not a terminal", function()
    local out, err, code = luda("- a b", "print(arg[0], ...)\n")
    assert.are.same({"-\ta\tb\n", "", 0}, {out, err, code})
    out, err, code = luda("", "print(6 * 7)\n")
    assert.are.same({"42\n", "", 0}, {out, err, code})
  end)
end)

describe("luda options", function()
  it("-e runs each string in order, as the chunks '(command line 1)', '(command line 2)'...", function()
    local out, err, code = luda("-e 'x = 20' -e 'print(x + 1, luda ~= nil)'")
    assert.are.same({"21\ttrue\n", "", 0}, {out, err, code})
    out, err, code = luda("-e 'error(\"bad\")' -e 'print(\"not reached\")'")
    assert.are.equal(1, code)
    assert.are.equal("", out)
    assert.matches("^luda: %(command line 1%):1: bad\nstack traceback:\n", err)
    _, err = luda("-e 'x = 1' -e 'error(\"bad\")'")
    assert.matches("^luda: %(command line 2%):1: bad\nstack traceback:\n", err)
  end)

  it("-e runs before the script, which sees its arguments", function()
    local path = script("print(prefix .. select('#', ...))\n")
    local out, err, code = luda("-e 'prefix = \"n=\"' " .. quote(path) .. " x y")
    os.remove(path)
    assert.are.same({"n=2\n", "", 0}, {out, err, code})
  end)

  it("-l requires a module into a global", function()
    local out, err, code = luda("-l string -l s=string -e 'print(s == string, s.rep(\"ab\", 2))'")
    assert.are.same({"true\tabab\n", "", 0}, {out, err, code})
  end)

  it("-v prints the banner with the Lua version and the default device", function()
    local out, err, code = luda("-v")
    assert.are.equal(0, code)
    assert.are.equal("", err)
    assert.matches(BANNER, out)
    local device = out:match(BANNER .. "(.-)\n$")
    assert.is_truthy(device:match("^cuda:0 .+ %(sm_%d+, %d+ SMs, ") or
                     device:match("^cpu %(no CUDA device: .+%)$"), device)
  end)

  it("-h prints the usage and succeeds", function()
    local out, err, code = luda("-h")
    assert.are.same({"", 0}, {err, code})
    assert.matches("^usage: luda %[options%] %[script %[args%]%]\n", out)
  end)

  it("rejects a bad option with the usage on stderr", function()
    local out, err, code = luda("-z")
    assert.are.equal(1, code)
    assert.are.equal("", out)
    assert.matches("^luda: unrecognized option '%-z'\nusage: luda %[options%] %[script %[args%]%]\n", err)
    _, err, code = luda("-e")
    assert.are.equal(1, code)
    assert.matches("^luda: '%-e' needs argument\nusage: ", err)
  end)
end)

describe("the luda REPL", function()
  local session = 'x = 1\n=x + 1\nfunction f()\nreturn 2 end\nprint(f())\nerror("boom")\nprint("still here")\n'

  it("prints values, continues incomplete chunks and survives errors", function()
    local out, err, code = luda("-i", session)
    assert.are.equal(0, code)
    local banner, rest = out:match("^(.-\n)(.*)$")
    assert.matches(BANNER, banner)
    -- prompts: "> " first lines, ">> " continuation; stdin is not echoed
    assert.are.equal("> > 2\n> >> > 2\n> > still here\n> \n", rest)
    -- each input is a chunk of its own, "stdin[N]" for the Nth
    assert.matches("^stdin%[5%]:1: boom\nstack traceback:\n", err)
  end)

  it("prints the error before what follows it", function()
    local out = luda("-i", session, true)
    local at_error, at_after = out:find("stdin[5]:1: boom\n", 1, true), out:find("still here\n", 1, true)
    assert.is_truthy(at_error and at_after)
    assert.is_true(at_error < at_after)
  end)

  it("continues a table constructor over lines, and reports other syntax errors at once", function()
    local out, err = luda("-i", 't = {\n1,\n2}\n=#t\nx = = 1\nprint("ok")\n')
    assert.are.equal("> >> >> > 2\n> > ok\n> \n", out:match("^.-\n(.*)$"))
    assert.are.equal("stdin[3]:1: unexpected symbol near '='\n", err)
  end)

  it("reports a chunk left incomplete at the end of input", function()
    local out, err, code = luda("-i", "for i = 1, 2 do\n")
    assert.are.equal(0, code)
    assert.are.equal("> >> \n", out:match("^.-\n(.*)$"))
    assert.are.equal("stdin[1]:1: 'end' expected near <eof>\n", err)
  end)

  it("prints several results tab-separated, and arrays as NumPy does", function()
    local out = luda("-i", '=1, "a", nil\nluda.zeros({2, 2})\n')
    assert.are.equal("> 1\ta\tnil\n> array([[0., 0.],\n       [0., 0.]])\n> \n", out:match("^.-\n(.*)$"))
  end)

  it("keeps running after a luda error", function()
    local out, err = luda("-i", 'luda.zeros({2}, "float33")\nprint("next")\n')
    assert.are.equal("> > next\n> \n", out:match("^.-\n(.*)$"))
    assert.matches("^stdin%[1%]:1: bad argument #2 to 'zeros' %(unknown dtype 'float33'", err)
  end)

  it("keeps top-level locals for later inputs, `_` for the last value, and prints tables as constructors", function()
    local out, err = luda("-i", table.concat({
      "local x, y = 6, 7",
      "=x * y",
      "=_ + 1",
      "local t = {1, {2, 'two'}, key = true, ['a b'] = 1.5}",
      "t",
      "for i = 1, 2 do local inner = i end",
      "=inner",
      "local function sq(v) return v * v end",
      "sq(5)",
      "local before = 3; error('boom')",
      "=before",
      "=luda.zeros({2, 3}).shape",
    }, "\n") .. "\n")
    assert.are.equal("> > 42\n> 43\n> > {1, {2, \"two\"}, [\"a b\"] = 1.5, key = true}\n> > nil\n> > 25\n> > 3\n" ..
                     "> {2, 3}\n> \n", out:match("^.-\n(.*)$"))
    assert.matches("^stdin%[10%]:1: boom\n", err)
  end)

  it("runs the README's tour pasted line by line, printing what its comments say", function()
    local root = debug.getinfo(1, "S").source:match("^@(.*)/tests/lua/[^/]*$")
    local readme = read_file(root .. "/README.md")
    local tour = readme:match("## A short tour\n\n```lua\n(.-)```")
    assert.is_truthy(tour)
    local out, err = luda("-i", tour, false, { LUDA_DEVICE = "cpu" })
    assert.are.equal("", err)
    assert.matches("> 3\tfloat32\tcpu\n", out)
    assert.matches("> 1%.0\t1%.0\n", out)
    assert.matches("array%(1%.e%+10, dtype=float32%)\tarray%(2%.7182817, dtype=float32%)\tarray%(99999%)\n", out)
  end)

  it("runs commands: :time, :devices, :types, :cache, :help, and says what is wrong with a bad one", function()
    local dir = os.tmpname()
    os.remove(dir)
    local out, err = luda("-i", table.concat({
      ":devices",
      ":time luda.zeros(100) + 1",
      "k = luda.cuda.jit(function(x) x[0] = 1 end)",
      "k[{1, 1}](luda.zeros(2))",
      ":types k",
      ":cache",
      ":cache clear",
      ":cache",
      ":help",
      ":bogus",
      ":time",
      ":cuda 42",
      "print('alive')",
    }, "\n") .. "\n", false, { LUDA_DEVICE = "cpu", LUDA_CACHE_DIR = dir })
    os.execute("rm -rf " .. quote(dir))
    local body = out:match("^.-\n(.*)$")
    -- Every device, the current one (LUDA_DEVICE=cpu) starred.
    local listed = body:match("^> (.-)\n> ")
    local want = {}
    local all = luda("-e " .. quote("for _, d in ipairs(luda.devices()) do print(d) end"), "", false, { LUDA_DEVICE = "cpu" })
    for d in all:gmatch("[^\n]+") do want[#want + 1] = (d == "<device cpu>" and "* " or "  ") .. d end
    assert.are.equal(table.concat(want, "\n"), listed)
    assert.matches("\n> [%d.]+ [mun]?s %+%- [%d.]+ [mun]?s per call %(mean %+%- std%. dev%. of 7 runs, %d+ calls? each; best [%d.]+ [mun]?s%)\n", body)
    assert.matches("\n> > > %-%- kernel k_%x+%(x: array%(float64, 1d, C%)%)\n", body)
    -- The first :cache: the kernels compiled so far, written to the new folder; clear
    -- removes them, and the counters stay.
    local writes = body:match("> folder " .. literal(dir) .. "\nhits 0, misses %d+, writes (%d+), corrupt 0, write failures 0\n")
    assert.is_truthy(writes)
    assert.is_truthy(body:find("> removed " .. writes .. " kernel files (", 1, true))
    assert.matches(":time expr +time expr as IPython's %%timeit", body)
    assert.matches("> alive\n> \n$", body)
    assert.are.equal("unknown command ':bogus'; :help lists them\n:time takes an expression\n" ..
                     ":cuda takes a kernel or kind (luda.cuda.jit, vectorize, elementwise, reduction, fuse), got number\n", err)
  end)

  it("shows the API reference's entry for help(value), ?name and name?", function()
    local out, err = luda("-i", table.concat({
      "?luda.vectorize",
      "help(luda.linalg.solve)",
      "x = luda.zeros(3)",
      "help(x.sum)",
      "shape?",
      "help(luda.vectorize(function(a) return a end))",
      "?no_such_name",
      ":help cumsum",
    }, "\n") .. "\n", false, { LUDA_DEVICE = "cpu" })
    assert.are.equal("", err)
    local body = out:match("^.-\n(.*)$")
    -- Each from docs/api.md: the heading, and its section to the next heading as high.
    local root = debug.getinfo(1, "S").source:match("^@(.*)/tests/lua/[^/]*$")
    local api = read_file(root .. "/docs/api.md")
    local function section(name)
      local at = api:find("\n#+ `" .. literal(name) .. "[(`]")
      assert.is_truthy(at, name)
      local level = #api:match("^\n(#+)", at)
      local stop = at + 1
      repeat
        stop = api:find("\n#", stop + 1, true)
      until not stop or #api:match("^\n(#*)", stop) <= level
      return (api:sub(at + 1, stop and stop - 1 or #api):gsub("\n+$", ""))
    end
    assert.is_truthy(body:find("> " .. section("luda.vectorize") .. "\n> ", 1, true))
    assert.is_truthy(body:find("> " .. section("luda.linalg.solve") .. "\n> ", 1, true))
    assert.is_truthy(body:find("> > " .. section("x:sum") .. "\n> ", 1, true))
    assert.is_truthy(body:find("> field: `x.shape`\nvalue: the extents", 1, true))
    assert.equal(2, select(2, body:gsub("### `luda.vectorize%(", "")))  -- ?luda.vectorize and help(a vectorize)
    assert.is_truthy(body:find("> no entry named 'no_such_name' in the API reference (docs/api.md)\n", 1, true))
    assert.is_truthy(body:find("`x:cumsum(", 1, true))
  end)

  it("runs the script first with -i, then reads from stdin", function()
    local path = script("answer = 6 * 7\n")
    local out, err, code = luda("-i " .. quote(path), "=answer\n")
    os.remove(path)
    assert.are.same({"", 0}, {err, code})
    assert.are.equal("> 42\n> \n", out:match("^.-\n(.*)$"))
  end)
end)

describe("kernels from every chunk luda runs", function()
  -- Each chunk keeps the exact text it was loaded from, under its own name; a function is
  -- found there by its line span and parameter count. The kernels run on the cpu device.
  local CPU = { LUDA_DEVICE = "cpu" }

  it("-e: each string is its own chunk, so a function is found in the one that defined it", function()
    local out, err, code = luda("-e 'function f(x) x[0] = 3 end' " ..
                                "-e 'k = luda.cuda.jit(f) local g = function(y) y[0] = 99 end' " ..
                                "-e 'x = luda.zeros(1, \"float32\"); k[{1,1}](x); print(x[0])'", nil, false, CPU)
    assert.are.same({ "3.0\n", "", 0 }, { out, err, code })
  end)

  it("the REPL: each input is its own chunk, however many define a one-line kernel", function()
    local out, err, code = luda("-i", table.concat({
      "f1 = function(x) x[0] = 1 end",
      "f2 = function(x) x[0] = 2 end",
      "k1 = luda.cuda.jit(f1) local g = function(y) y[0] = 99 end",
      "k2 = luda.cuda.jit(f2)",
      "k3 = luda.cuda.jit(function(x) x[0] = 3 end)",
      "a, b, c = luda.zeros(1), luda.zeros(1), luda.zeros(1)",
      "k1[{1, 1}](a) k2[{1, 1}](b) k3[{1, 1}](c)",
      "=a[0], b[0], c[0]",
    }, "\n") .. "\n", false, CPU)
    assert.are.same({ "", 0 }, { err, code })
    assert.are.equal("> > > > > > > > 1.0\t2.0\t3.0\n> \n", out:match("^.-\n(.*)$"))
  end)

  it("a script piped on stdin (luda < file, luda -)", function()
    local text = "local k = luda.cuda.jit(function(x)\n  x[0] = 42\nend)\n" ..
                 "local a = luda.zeros(1, 'int32')\nk[{1, 1}](a)\nprint(a[0])\n"
    for _, args in ipairs({ "", "-" }) do
      local out, err, code = luda(args, text, false, CPU)
      assert.are.same({ "42\n", "", 0 }, { out, err, code }, "luda " .. args)
    end
  end)

  it("a script that rewrites its own file still compiles the function it loaded", function()
    local path = script([[
local function fill(x) x[0] = 7 end
local f = assert(io.open(arg[0], "rb"))
local text = f:read("a")
f:close()
f = assert(io.open(arg[0], "wb"))
f:write((text:gsub("= 7 end", "= 8 end", 1)))
f:close()
local a = luda.zeros(1, "int32")
luda.cuda.jit(fill)[{1, 1}](a)
print(a[0])
]])
    local out, err, code = luda(quote(path), nil, false, CPU)
    os.remove(path)
    assert.are.same({ "7\n", "", 0 }, { out, err, code })
  end)

  it("files loaded by require, dofile and loadfile, and load(text, name), keep the text they were loaded with", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. quote(dir)))
    local files = { "chunk_required", "chunk_done", "chunk_loaded" }
    for i, name in ipairs(files) do
      write_file(dir .. "/" .. name .. ".lua", ("-- %s\nreturn function(x) x[0] = %d end\n"):format(name, i))
    end
    -- A first line starting with '#' is skipped as Lua skips it; the lines keep their numbers.
    write_file(dir .. "/chunk_shebang.lua", "#!/usr/bin/env luda\nreturn function(x) x[0] = 5 end\n")
    local path = script(([[
local dir = %q
package.path = dir .. "/?.lua;" .. package.path
local fns = {
  require "chunk_required",
  dofile(dir .. "/chunk_done.lua"),
  loadfile(dir .. "/chunk_loaded.lua")(),
  load("return function(x) x[0] = 4 end", "=generated")(),
  loadfile(dir .. "/chunk_shebang.lua")(),
  load(coroutine.wrap(function() coroutine.yield("return function(x) ") coroutine.yield("x[0] = 6 end") end), "=pieces")(),
}
for _, name in ipairs({ "chunk_required", "chunk_done", "chunk_loaded", "chunk_shebang" }) do
  local f = assert(io.open(dir .. "/" .. name .. ".lua", "wb"))
  f:write("-- rewritten\nreturn function(x) x[0] = 9 end\n")
  f:close()
end
local out = {}
for i, fn in ipairs(fns) do
  local a = luda.zeros(1, "int32")
  luda.cuda.jit(fn)[{1, 1}](a)
  out[i] = a[0]
end
print(table.concat(out, " "))
]]):format(dir))
    local out, err, code = luda(quote(path), nil, false, CPU)
    os.remove(path)
    for _, name in ipairs({ "chunk_required", "chunk_done", "chunk_loaded", "chunk_shebang" }) do
      os.remove(dir .. "/" .. name .. ".lua")
    end
    os.remove(dir)
    assert.are.same({ "1 2 3 4 5 6\n", "", 0 }, { out, err, code })
  end)

  it("loads files with lua's own messages and results", function()
    local lua = os.getenv("LUA_BIN")
    if not lua then return pending("LUA_BIN (lua5.4) is not set; ctest sets it") end
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. quote(dir)))
    write_file(dir .. "/broken.lua", "x = = 1\n")
    write_file(dir .. "/values.lua", "\239\187\191return ..., 2\n")
    local path = script(([[
local dir = %q
package.path = dir .. "/?.lua"
package.cpath = ""
print(pcall(require, "absent"))
print(pcall(require, "broken"))
print(loadfile(dir .. "/none.lua"))
print(loadfile(dir))
print(pcall(dofile, dir .. "/none.lua"))
print(loadfile(dir .. "/values.lua", "b"))
print(loadfile(dir .. "/values.lua", "t", {})(1))
print(dofile(dir .. "/values.lua"))
print(load("return ...", "=x", "t", {})(7), load("syntax error here", "=x"))
print((select(2, load(function() error("reader failed") end)):match("^[^\n]*")))  -- then a traceback
local given = false
print(load(function() if given then return nil end given = true return 42 end))
print(pcall(load, function() return {} end))
print(select("#", require("values")))
]]):format(dir))
    local expected = { io.popen(quote(lua) .. " " .. quote(path) .. " 2>&1"):read("a") }
    local out, err, code = luda(quote(path), nil, true)
    os.remove(path)
    for _, name in ipairs({ "broken.lua", "values.lua" }) do os.remove(dir .. "/" .. name) end
    os.remove(dir)
    assert.are.equal(0, code, out)
    assert.are.equal(expected[1]:gsub(literal(lua), "LUA"), (out:gsub(literal(quote(support.LUDA)), "LUA")))
  end)
end)

describe("busted inside luda", function()
  local busted = os.getenv("BUSTED_BIN") or "/usr/bin/busted"
  local function have_busted()
    local f = io.open(busted, "r")
    if f then f:close() end
    return f ~= nil
  end

  it("prints busted's version", function()
    if not have_busted() then return pending("busted is not installed at " .. busted) end
    local out, err, code = luda(quote(busted) .. " --version")
    assert.are.same({"", 0}, {err, code})
    assert.matches("^%d+%.%d+%.%d+\n$", out)
  end)

  it("runs specs, with luda preloaded and Lua C modules (lfs, term, system) loading", function()
    if not have_busted() then return pending("busted is not installed at " .. busted) end
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. quote(dir)))
    write_file(dir .. "/tiny_spec.lua", [[
describe("inside luda", function()
  it("has luda", function() assert.are.equal(luda, require("luda")) end)
  it("loads C modules", function()
    assert.is_string(require("lfs").currentdir())
    assert.is_boolean(require("term").isatty(io.stdout))
    assert.is_number(require("system").gettime())
  end)
  it("fails on purpose", function() assert.are.equal(1, 2) end)
end)
]])
    local out, err, code = luda(quote(busted) .. " -o TAP " .. quote(dir .. "/tiny_spec.lua"))
    os.remove(dir .. "/tiny_spec.lua")
    os.remove(dir)
    assert.are.equal(1, code, err)  -- one failure
    assert.matches("ok 1 %- inside luda has luda\n", out)
    assert.matches("ok 2 %- inside luda loads C modules\n", out)
    assert.matches("not ok 3 %- inside luda fails on purpose\n", out)
  end)
end)

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
  it("-e runs each string in order, as the chunk '(command line)'", function()
    local out, err, code = luda("-e 'x = 20' -e 'print(x + 1, luda ~= nil)'")
    assert.are.same({"21\ttrue\n", "", 0}, {out, err, code})
    out, err, code = luda("-e 'error(\"bad\")' -e 'print(\"not reached\")'")
    assert.are.equal(1, code)
    assert.are.equal("", out)
    assert.matches("^luda: %(command line%):1: bad\nstack traceback:\n", err)
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
    assert.matches("^stdin:1: boom\nstack traceback:\n", err)
  end)

  it("prints the error before what follows it", function()
    local out = luda("-i", session, true)
    local at_error, at_after = out:find("stdin:1: boom\n", 1, true), out:find("still here\n", 1, true)
    assert.is_truthy(at_error and at_after)
    assert.is_true(at_error < at_after)
  end)

  it("continues a table constructor over lines, and reports other syntax errors at once", function()
    local out, err = luda("-i", 't = {\n1,\n2}\n=#t\nx = = 1\nprint("ok")\n')
    assert.are.equal("> >> >> > 2\n> > ok\n> \n", out:match("^.-\n(.*)$"))
    assert.are.equal("stdin:1: unexpected symbol near '='\n", err)
  end)

  it("reports a chunk left incomplete at the end of input", function()
    local out, err, code = luda("-i", "for i = 1, 2 do\n")
    assert.are.equal(0, code)
    assert.are.equal("> >> \n", out:match("^.-\n(.*)$"))
    assert.are.equal("stdin:1: 'end' expected near <eof>\n", err)
  end)

  it("prints several results tab-separated, and arrays as NumPy does", function()
    local out = luda("-i", '=1, "a", nil\nluda.zeros({2, 2})\n')
    assert.are.equal("> 1\ta\tnil\n> array([[0., 0.],\n       [0., 0.]])\n> \n", out:match("^.-\n(.*)$"))
  end)

  it("keeps running after a luda error", function()
    local out, err = luda("-i", 'luda.zeros({2}, "float33")\nprint("next")\n')
    assert.are.equal("> > next\n> \n", out:match("^.-\n(.*)$"))
    assert.matches("^stdin:1: bad argument #2 to 'zeros' %(unknown dtype 'float33'", err)
  end)

  it("runs the script first with -i, then reads from stdin", function()
    local path = script("answer = 6 * 7\n")
    local out, err, code = luda("-i " .. quote(path), "=answer\n")
    os.remove(path)
    assert.are.same({"", 0}, {err, code})
    assert.are.equal("> 42\n> \n", out:match("^.-\n(.*)$"))
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

#include "cli/commands.h"

#include <lua.hpp>

#include <filesystem>

#include "cli/api_doc.h"
#include <string>
#include <system_error>

namespace luda::cli {
namespace {

// clear_cache(dir): removes luda's kernel files (<hash>.luda) from dir; returns how many
// and their bytes. Other files in the folder stay.
int clear_cache(lua_State* L) {
  const char* dir = luaL_checkstring(L, 1);
  lua_Integer count = 0, bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".luda") continue;
    auto size = entry.file_size(ec);
    if (ec) continue;
    if (std::filesystem::remove(entry.path(), ec)) {
      ++count;
      bytes += static_cast<lua_Integer>(size);
    }
  }
  lua_pushinteger(L, count);
  lua_pushinteger(L, bytes);
  return 2;
}

// The commands, in Lua: a function(line) run for an input that starts with ':'.
constexpr char kCommandsLua[] = R"lua(
local clear_cache, doc, require_pretty = ...
local luda = require "luda"

local function say(fmt, ...) io.write(fmt:format(...), "\n") end

-- Whether v is an array (a userdata with a shape and a dtype; reading fields of another
-- userdata may raise).
local function is_array(v)
  return type(v) == "userdata" and pcall(function() return v.shape, v.dtype end) and v.shape ~= nil
end

-- An expression of the REPL's globals, compiled as the function that returns it.
local function compile(expr, what)
  if expr == "" then error(("%s takes an expression"):format(what), 0) end
  local f, err = luda.load("return " .. expr, "=" .. what)
  if not f then error(err, 0) end
  return f
end

-- Waits for every device's queued work, so that a time includes it.
local function wait_all()
  if luda.cuda.is_available() then
    for d = 0, luda.cuda.device_count() - 1 do luda.device(d):synchronize() end
  end
end

local function time_text(s)
  if s >= 1 then return ("%.3g s"):format(s) end
  if s >= 1e-3 then return ("%.3g ms"):format(s * 1e3) end
  if s >= 1e-6 then return ("%.3g us"):format(s * 1e6) end
  return ("%.3g ns"):format(s * 1e9)
end

local commands = {}
local help = {}

help.time = ":time expr       time expr as IPython's %timeit: a warm-up call, then 7 runs of n calls each (n making a run last 0.2 s), every device waited for at the end of each run"
commands.time = function(expr)
  local f = compile(expr, ":time")
  collectgarbage()
  f()
  wait_all()
  local loops = 1
  while true do
    local t0 = luda.clock()
    for _ = 1, loops do f() end
    wait_all()
    local t = luda.clock() - t0
    if t >= 0.2 or loops >= 1e7 then break end
    loops = loops * (t > 0.02 and 2 or 10)
  end
  local runs = {}
  for r = 1, 7 do
    local t0 = luda.clock()
    for _ = 1, loops do f() end
    wait_all()
    runs[r] = (luda.clock() - t0) / loops
  end
  local mean = 0
  for _, t in ipairs(runs) do mean = mean + t end
  mean = mean / #runs
  local var = 0
  for _, t in ipairs(runs) do var = var + (t - mean) ^ 2 end
  local sd = math.sqrt(var / (#runs - 1))
  table.sort(runs)
  say("%s +- %s per call (mean +- std. dev. of 7 runs, %d call%s each; best %s)", time_text(mean), time_text(sd),
    loops, loops == 1 and "" or "s", time_text(runs[1]))
end

help.devices = ":devices         the devices, the current one marked"
commands.devices = function()
  local current = tostring(luda.current_device())
  for _, d in ipairs(luda.devices()) do
    say("%s %s", tostring(d) == current and "*" or " ", tostring(d))
  end
end

help.cache = ":cache [clear]   the kernel cache's folder and counters; clear removes its kernel files"
commands.cache = function(rest)
  local s = luda.cuda.cache_stats()
  if rest == "clear" then
    if s.directory == "" then return say("no cache folder") end
    local n, bytes = clear_cache(s.directory)
    return say("removed %d kernel file%s (%.1f MiB) from %s", n, n == 1 and "" or "s", bytes / 2 ^ 20, s.directory)
  elseif rest ~= "" then
    error(":cache takes nothing or 'clear', got '" .. rest .. "'", 0)
  end
  say("folder %s", s.directory == "" and "(none)" or s.directory)
  say("hits %d, misses %d, writes %d, corrupt %d, write failures %d", s.hits, s.misses, s.writes, s.corrupt,
    s.write_failures)
end

-- :cuda k, :ptx k, :types k: what k:inspect gives.
for _, what in ipairs({ "cuda", "ptx", "types" }) do
  help[what] = (":%-15s k:inspect(\"%s\") of a kernel or kind k"):format(what .. " k", what)
  commands[what] = function(expr)
    local k = compile(expr, ":" .. what)()
    local ok, text = pcall(function() return k:inspect(what) end)
    if not ok and type(k) ~= "userdata" then
      error((":%s takes a kernel or kind (luda.cuda.jit, vectorize, elementwise, reduction, fuse), got %s"):format(what,
        type(k)), 0)
    end
    if not ok then error((":%s: %s"):format(what, tostring(text):gsub("^[^:]*:%d+: ", "")), 0) end
    io.write(text, text:sub(-1) == "\n" and "" or "\n")
  end
end

-- ---- help from the API reference (docs/api.md, embedded) ----------------------------
-- Its entries are the code spans of its headings and of its tables' first cells that name
-- `luda.<name>`, `x:<method>`, `x.<field>` (docs/api.md says so at its top); an entry's
-- key is that name without its arguments.
local entries, lines

local function key_of(span) return span:match("^([%a_][%w_%.:]*[%w_])") end

local function index()
  if entries then return end
  entries, lines = {}, {}
  for line in (doc .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  local function add(key, entry)
    if not key then return end
    local list = entries[key] or {}
    entries[key] = list
    if list[#list] and list[#list].at == entry.at then return end  -- named twice in one heading
    list[#list + 1] = entry
  end
  local fenced = false
  for i, line in ipairs(lines) do
    if line:match("^%s*```") then fenced = not fenced end
    local hashes, text = line:match("^(#+) (.*)$")
    if fenced then
      -- code: no entries
    elseif hashes then
      for span in text:gmatch("`([^`]+)`") do add(key_of(span), { at = i, level = #hashes }) end
    else
      local cell = line:match("^| ([^|]*) |")
      if cell then
        for span in cell:gmatch("`([^`]+)`") do add(key_of(span), { at = i }) end
      end
    end
  end
end

-- The text of an entry: a heading's section (to the next heading as high), or a table
-- row as "column: cell" lines under its table's header.
local function entry_text(e)
  local out = {}
  if e.level then
    local fenced = false
    for i = e.at, #lines do
      local line = lines[i]
      if line:match("^%s*```") then fenced = not fenced end
      local hashes = not fenced and line:match("^(#+) ")
      if i > e.at and hashes and #hashes <= e.level then break end
      if #out == 60 then
        out[#out + 1] = "... (the rest in docs/api.md)"
        break
      end
      out[#out + 1] = line
    end
    while out[#out] == "" do out[#out] = nil end
    return table.concat(out, "\n")
  end
  local top = e.at
  while top > 1 and lines[top - 1]:match("^|") do top = top - 1 end
  local function cells(line)
    local list = {}
    for cell in line:sub(2):gmatch("%s*(.-)%s*|") do list[#list + 1] = cell end
    return list
  end
  local header, row = cells(lines[top]), cells(lines[e.at])
  for j, cell in ipairs(row) do
    if cell ~= "" then out[#out + 1] = ("%s: %s"):format(header[j] or ("column " .. j), cell) end
  end
  return table.concat(out, "\n")
end

-- The API reference's name for a value: a function of luda or of one of its tables
-- (luda.linalg.solve), an array's method, a kernel kind's maker; nil when unknown.
local function name_of(v)
  if type(v) == "function" then
    for k, f in pairs(luda) do
      if rawequal(f, v) then return "luda." .. k end
    end
    for k, t in pairs(luda) do
      if type(t) == "table" then
        for j, f in pairs(t) do
          if rawequal(f, v) then return "luda." .. k .. "." .. j end
        end
      end
    end
    index()
    local probe = luda.zeros({ 1 }, "float32", { device = "cpu" })
    for key in pairs(entries) do
      local m = key:match("^x:([%w_]+)$")
      if m and rawequal(probe[m], v) then return key end
    end
    return nil
  end
  local kind = tostring(v):match("^<(%a+) '")
  if kind == "vectorize" or kind == "elementwise" or kind == "reduction" or kind == "fuse" then
    return "luda." .. kind
  end
  if luda.chunked.is_chunked(v) then return "luda.chunked" end
  if is_array(v) then return "x" end
  return nil
end

-- help(v) / ?name: the API reference's entries for a value or a name ("luda.sum", "sum",
-- "x:get", "shape"): the exact name, else luda.<name>, x:<name> and x.<name>, else every
-- entry whose last part is the name.
local function help_text(v)
  index()
  local name = type(v) == "string" and v or name_of(v)
  if name == nil then
    return ("no entry in the API reference for this %s; help(\"name\") looks a name up"):format(type(v))
  end
  if name == "x" then
    local keys = {}
    for key in pairs(entries) do
      if key:match("^x[:%.]") then keys[#keys + 1] = key end
    end
    table.sort(keys)
    return "an array; its fields and methods (help(\"x:sum\") for one):\n" .. table.concat(keys, " ")
  end
  local found = entries[name] or entries["luda." .. name] or entries["x:" .. name] or entries["x." .. name]
  if not found then
    local keys = {}
    for key in pairs(entries) do
      if key:match("[%.:]" .. name:gsub("%p", "%%%0") .. "$") then keys[#keys + 1] = key end
    end
    table.sort(keys)
    if #keys == 1 then found = entries[keys[1]]
    elseif #keys > 1 then return ("several entries end in '%s': %s"):format(name, table.concat(keys, ", "))
    else return ("no entry named '%s' in the API reference (docs/api.md)"):format(name) end
  end
  local texts = {}
  for _, e in ipairs(found) do texts[#texts + 1] = entry_text(e) end
  return table.concat(texts, "\n\n")
end

local function help_fn(v) io.write(help_text(v), "\n") end

help.help = ":help [name]     these commands, or the API reference's entry for a name (also ?name, name?, help(value))"
commands.help = function(rest)
  if rest ~= "" then return help_fn(rest) end
  local names = {}
  for name in pairs(help) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do say("%s", help[name]) end
end

-- A command's own failure (an unknown command, a bad use of it: a message with no place)
-- prints alone on stderr at the REPL, which goes on, and is the cell's error in a
-- notebook (`raises`); an error of the code it runs (a message at a place) goes on, with
-- its traceback.
local function run(line, raises)
  local name, rest = line:match("^:(%a*)%s*(.-)%s*$")
  local command = commands[name]
  local ok, err
  if command then
    ok, err = pcall(command, rest)
    if ok then return end
  else
    err = ("unknown command ':%s'; :help lists them"):format(name or "")
  end
  if raises or type(err) ~= "string" or err:find("^[^%s:]+:%d+: ") then error(err, 0) end
  io.stderr:write(err, "\n")
end

-- ---- completion -----------------------------------------------------------------------
local KEYWORDS = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
                   "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }
local KIND_MEMBERS = { "compile", "inspect", "reduce", "signatures", "stats", "lua", "name" }

-- The names after `v.` (methods: after `v:`) that completion offers: a table's string keys
-- and its __index table's; an array's fields and methods (from the API reference's
-- entries); a kind's members.
local function members(v, methods_only)
  local out, seen = {}, {}
  local function add(k, value)
    if type(k) == "string" and k:match("^[%a_][%w_]*$") and not seen[k] then
      if not methods_only or value == nil or type(value) == "function" then
        seen[k] = true
        out[#out + 1] = k
      end
    end
  end
  if type(v) == "table" then
    for k, value in pairs(v) do add(k, value) end
  end
  local mt = getmetatable(v)
  if type(mt) == "table" and type(mt.__index) == "table" then
    for k, value in pairs(mt.__index) do add(k, value) end
  end
  if type(v) == "userdata" then
    if is_array(v) then
      index()
      for key in pairs(entries) do
        local sep, m = key:match("^x([:%.])([%w_]+)$")
        if m and (sep == ":" or not methods_only) then add(m) end
      end
    elseif tostring(v):match("^<%a+ '") then
      for _, k in ipairs(KIND_MEMBERS) do add(k) end
    end
  end
  return out
end

-- complete(line): the candidates for the name that ends `line` (the text before the
-- cursor), each the whole name as it would read (`luda.vectorize`, `x:sum`), sorted, and
-- the 1-based position in `line` where that name starts.
local function complete(line)
  local word = line:match("[%a_][%w_%.:]*$") or ""
  local start = #line - #word + 1
  local base, sep, part = word:match("^(.*)([%.:])([%w_]*)$")
  local names = {}
  if not base then
    part = word
    for k in pairs(_G) do if type(k) == "string" then names[#names + 1] = k end end
    for _, k in ipairs(KEYWORDS) do names[#names + 1] = k end
  else
    local v = _G
    for name in base:gmatch("[^%.:]+") do
      local ok, field = pcall(function() return v[name] end)
      if not ok or field == nil then return start, {} end
      v = field
    end
    if base:find(":") then return start, {} end  -- a method's result: not known before the call
    names = members(v, sep == ":")
  end
  local out, seen = {}, {}
  for _, k in ipairs(names) do
    if k:sub(1, #part) == part and not seen[k] then
      seen[k] = true
      out[#out + 1] = (base and base .. sep or "") .. k
    end
  end
  table.sort(out)
  return start, out
end

-- ---- a notebook's pictures of values ----------------------------------------------------

local function escape(text)
  return (text:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- The positions shown along an axis of n, NumPy's way: all, or the first and last 3 (nil
-- between them) when the array has more than 1000 elements.
local function shown(n, summarize)
  local list = {}
  if summarize and n > 6 then
    for i = 0, 2 do list[#list + 1] = i end
    list[#list + 1] = false
    for i = n - 3, n - 1 do list[#list + 1] = i end
  else
    for i = 0, n - 1 do list[#list + 1] = i end
  end
  return list
end

-- An array of 1 or 2 axes of numbers or bools as an HTML table (elided as its text is),
-- with its shape, dtype and device; other arrays as their text; nil for what is not an
-- array.
local function html_of(v)
  if not is_array(v) then return nil end
  local caption = ("shape=(%s), dtype=%s, device=%s"):format(table.concat(v.shape, ", "), v.dtype, v.device)
  if v.ndim == 0 or v.ndim > 2 or v.dtype:find("complex") then
    return ("<pre>%s</pre><small>%s</small>"):format(escape(tostring(v)), caption)
  end
  local host = v:get()
  local m = host.ndim == 2 and host:reshape(host.shape[1], host.shape[2]) or host:reshape(1, host.shape[1])
  local summarize = host.size > 1000
  local rows, cols = shown(m.shape[1], summarize), shown(m.shape[2], summarize)
  local out = { "<table><tbody>" }
  for _, i in ipairs(rows) do
    out[#out + 1] = "<tr>"
    local values = i and m[i]:totable() or nil
    for _, j in ipairs(cols) do
      local cell = (i and j) and tostring(values[j + 1]) or "&#8942;"
      if i and not j then cell = "&#8230;" end
      out[#out + 1] = "<td>" .. cell .. "</td>"
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table><small>" .. caption .. "</small>"
  return table.concat(out)
end

-- show(...): for each value, {text = what the REPL prints, html = html_of(v) or nil}.
local pretty_of = require_pretty
local function show(...)
  local out = {}
  for i = 1, select("#", ...) do
    local v = (select(i, ...))
    out[i] = { text = pretty_of(v), html = html_of(v) }
  end
  return out
end

return { run = run, help = help_fn, help_text = help_text, complete = complete, show = show }
)lua";

}  // namespace

int push_commands(lua_State* L) {
  if (luaL_loadbuffer(L, kCommandsLua, sizeof(kCommandsLua) - 1, "=luda.commands") != LUA_OK) return lua_error(L);
  lua_pushcfunction(L, clear_cache);
  lua_pushlstring(L, kApiDoc.data(), kApiDoc.size());
  lua_pushvalue(L, 1);  // the REPL's picture of one value (cli/session.cpp)
  lua_call(L, 3, 1);
  return 1;
}

}  // namespace luda::cli

-- Errors of luda's Lua-written modules (stdlib/lua/), raised at the caller's line: the
-- place an error names is the innermost Lua line outside these modules, the user's, as
-- luda's C functions name their caller's line (stdlib/lua_support.h, trampoline).
local internal = require "luda.internal"

local M = {}

-- The chunk names of luda's own Lua modules: the lines that are not the caller's.
local OWN = internal.module_chunks
local function own(source) return OWN[source] ~= nil end

-- The place of the innermost caller outside these modules: "file:line: ", or "".
function M.where()
  for level = 2, 64 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if not own(info.source) and info.what ~= "C" and info.currentline and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
  end
  return ""
end

function M.raise(fmt, ...)
  error(M.where() .. string.format(fmt, ...), 0)
end

-- fn as a public function: an error raised at a line of these modules (a luda function
-- that refused a block's operands) is reported at the caller's line instead.
local function short(source) return source:sub(1, 1) == "=" and source:sub(2) or source end
local SHORTS = {}
for source in pairs(OWN) do SHORTS[#SHORTS + 1] = short(source) .. ":" end
local function at_own_line(e)
  for _, prefix in ipairs(SHORTS) do
    if e:sub(1, #prefix) == prefix then return true end
  end
  return false
end
function M.public(fn)
  return function(...)
    local r = table.pack(pcall(fn, ...))
    if r[1] then return table.unpack(r, 2, r.n) end
    local e = r[2]
    if type(e) == "string" then
      local here = M.where()
      if at_own_line(e) then
        e = here .. e:gsub("^[^:]*:%d+: ", "", 1)
      elseif e:sub(1, #here) ~= here and not e:find("^[^%s:]+:%d+: ") then
        -- a luda function called with no Lua line of its own (through with_device); the
        -- caller's place may hold spaces ("(command line 1)"), so it is compared whole
        e = here .. e
      end
    end
    error(e, 0)
  end
end

return M

-- docs/api.md against the module it describes: every function of the `luda` table (and of
-- luda.cuda, luda.random, luda.math, and any table added to it), every method, field and
-- metamethod of the objects luda gives a script, has an entry there; and every entry
-- names something that exists. The entries, as the page's opening comment says:
--   * a code span at the start of a `###` or `####` heading, or in the first cell of a
--     table row, naming `luda.<name>...` or `<object>:<method>` / `<object>.<field>`, with
--     an object name of the page's table of names (x, f, k, ...); every such code span in
--     that heading or cell counts;
--   * a row whose first cell is `__<name>` in the table under a heading "`<object>`
--     metamethods".
local luda = require "luda"

local SOURCE = os.getenv("LUDA_SOURCE_DIR") or "."
local DOC = SOURCE .. "/docs/api.md"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

-- The page's object names, each with the objects of that kind a script can hold (the four
-- kinds share one name). Arrays, streams and events are made on the cpu, which every
-- machine has; making the others compiles nothing.
local function make_objects()
  local k = luda.cuda.jit(function(a) end)
  return {
    x = { luda.zeros(2, nil, { device = "cpu" }) },
    v = { luda.int32(1) },
    k = { k },
    launcher = { k[{ 1, 1 }] },
    df = { luda.cuda.declare_device("mul", "float32(float32, float32)") },
    f = {
      luda.vectorize(function(a, b) return a + b end),
      luda.elementwise("T a", "T b", "b = a", "copy"),
      luda.reduction("T p", "T q", "p", "a + b", "q = a", "0", "total"),
      luda.fuse(function(a) return a + 1 end),
    },
    rk = { luda.raw_kernel([[extern "C" __global__ void f(float* a) {}]], "f") },
    m = { luda.raw_module([[extern "C" __global__ void g(float* a) {}]]) },
    g = { luda.graph(function(a) return a end, luda.zeros(2, nil, { device = "cpu" })) },
    dev = { luda.device("cpu") },
    s = { luda.stream({ device = "cpu" }) },
    e = { luda.event({ device = "cpu" }) },
  }
end

local OBJECTS = make_objects()

-- The name an entry's code span refers to ("luda.cuda.jit", "x:reshape", "x.shape"), or
-- nil for any other code span.
local function reference(span)
  local q = span:match("^luda[%w_%.]*")
  if q then
    q = q:gsub("%.$", "")
    return q ~= "luda" and q or nil
  end
  local var, sep, name = span:match("^([%a_][%w_]*)([:.])([%a_][%w_]*)")
  if var and OBJECTS[var] then return var .. sep .. name end
  return nil
end

-- The entries of the page: { ["luda.zeros"] = line, ["x:get"] = line, ... } and
-- metamethods { x = { __add = line, ... }, ... }.
local function read_entries(text)
  local entries, metamethods = {}, {}
  local under = nil  -- the object whose metamethods table follows
  local n = 0
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    n = n + 1
    local level, heading = line:match("^(#+)%s+(.*)$")
    if level then
      under = heading:match("^`([%w_]+)` metamethods")
      if under then metamethods[under] = metamethods[under] or {} end
      if (#level == 3 or #level == 4) and heading:sub(1, 1) == "`" then
        for span in heading:gmatch("`([^`]+)`") do
          local r = reference(span)
          if r then entries[r] = entries[r] or n end
        end
      end
    else
      local cell = line:match("^|%s*(`.-)%s*|")
      if cell then
        local meta = under and cell:match("^`(__[%w_]+)`")
        if meta then
          metamethods[under][meta] = metamethods[under][meta] or n
        else
          for span in cell:gmatch("`([^`]+)`") do
            local r = reference(span)
            if r then entries[r] = entries[r] or n end
          end
        end
      end
    end
  end
  return entries, metamethods
end

local ENTRIES, METAMETHODS = read_entries(read(DOC))

-- Internal metamethods, never a script's to use.
local INTERNAL = { __index = true, __name = true, __gc = true }

-- The methods table of an object: its metatable's __index, or that function's first
-- upvalue (luda's types with fields and methods), or nil.
local function methods_of(obj)
  local index = getmetatable(obj).__index
  if type(index) == "table" then return index end
  if type(index) == "function" then
    local _, t = debug.getupvalue(index, 1)
    if type(t) == "table" then return t end
  end
  return nil
end

-- The fields of an object, from the error that reading a missing one gives, which lists
-- them ("(fields: lua, name; methods: ...)", "(field: device; ...)", "(it has .dtype and
-- :value())"), and the methods that error names; none where there is no __index. For the
-- ndarray, whose error lists nothing, the fields are the keys push_field
-- (stdlib/array_bindings.cpp) answers.
local function fields_of(var, obj)
  local fields, methods = {}, {}
  if var == "x" then
    local src = read(SOURCE .. "/stdlib/array_bindings.cpp")
    local body = assert(src:match("void push_field%(.-\n}\n"), "push_field not found in stdlib/array_bindings.cpp")
    for key in body:gmatch('key == "([%w_]+)"') do fields[#fields + 1] = key end
    assert(#fields > 0, "push_field names no field")
    return fields, methods
  end
  if getmetatable(obj).__index == nil then return fields, methods end  -- a launcher: nothing to read
  local ok, err = pcall(function() return obj.luda_api_docs_probe end)
  assert(not ok, var .. ".luda_api_docs_probe should be an error")
  err = tostring(err)
  local list = err:match("%(fields?: ([^;%)]*)")
  if list then
    for name in list:gmatch("[%a_][%w_]*") do fields[#fields + 1] = name end
    local mlist = err:match("methods: ([^%)]*)%)")
    if mlist then
      for name in mlist:gmatch("[%a_][%w_]*") do methods[#methods + 1] = name end
    end
    return fields, methods
  end
  local has = err:match("%(it has (.-)%)$")
  assert(has, "cannot read the fields of " .. var .. " from its error: " .. err)
  for sep, name in has:gmatch("([:.])([%a_][%w_]*)") do
    if sep == "." then fields[#fields + 1] = name else methods[#methods + 1] = name end
  end
  return fields, methods
end

local function report(problems, what)
  table.sort(problems)
  assert(#problems == 0, #problems .. " " .. what .. ":\n  " .. table.concat(problems, "\n  "))
end

describe("docs/api.md", function()
  it("has entries to check", function()
    local count = 0
    for _ in pairs(ENTRIES) do count = count + 1 end
    assert.is_true(count > 200, "only " .. count .. " entries found in " .. DOC)
    assert.is_truthy(ENTRIES["luda.linspace"])
    assert.is_truthy(METAMETHODS.x and METAMETHODS.x.__add)
  end)

  it("documents every function and value of the luda table", function()
    local missing, seen = {}, {}
    local function walk(t, path)
      if seen[t] then return end
      seen[t] = true
      for key, value in pairs(t) do
        if type(key) == "string" then
          local name = path .. "." .. key
          if type(value) == "table" then
            walk(value, name)
          elseif not ENTRIES[name] then
            missing[#missing + 1] = name .. " (" .. type(value) .. ")"
          end
        end
      end
    end
    walk(luda, "luda")
    report(missing, "names of the luda table have no entry in docs/api.md")
  end)

  it("documents every method and field of luda's objects", function()
    local missing = {}
    local function need(name, what)
      if not ENTRIES[name] then missing[#missing + 1] = name .. " (" .. what .. ")" end
    end
    for var, objects in pairs(OBJECTS) do
      for _, obj in ipairs(objects) do
        for name in pairs(methods_of(obj) or {}) do need(var .. ":" .. name, "method") end
        local fields, methods = fields_of(var, obj)
        for _, name in ipairs(fields) do need(var .. "." .. name, "field") end
        for _, name in ipairs(methods) do need(var .. ":" .. name, "method") end
      end
    end
    local unique, seen = {}, {}
    for _, m in ipairs(missing) do
      if not seen[m] then seen[m], unique[#unique + 1] = true, m end
    end
    report(unique, "methods and fields have no entry in docs/api.md")
  end)

  it("documents every metamethod a script uses", function()
    local missing, seen = {}, {}
    for var, objects in pairs(OBJECTS) do
      for _, obj in ipairs(objects) do
        for key in pairs(getmetatable(obj)) do
          if type(key) == "string" and key:sub(1, 2) == "__" and not INTERNAL[key] then
            local name = var .. " " .. key
            if not (METAMETHODS[var] and METAMETHODS[var][key]) and not seen[name] then
              seen[name] = true
              missing[#missing + 1] = "`" .. var .. "` metamethods: " .. key
            end
          end
        end
      end
    end
    report(missing, "metamethods have no row in docs/api.md")
  end)

  it("names only what exists", function()
    local gone = {}
    for name, line in pairs(ENTRIES) do
      local exists
      if name:match("^luda%.") then
        local value = luda
        for part in name:gmatch("%.([%w_]+)") do
          value = type(value) == "table" and rawget(value, part) or nil
        end
        exists = value ~= nil
      else
        local var, sep, key = name:match("^([%w_]+)([:.])([%w_]+)$")
        exists = false
        for _, obj in ipairs(OBJECTS[var]) do
          if sep == ":" then
            local methods = methods_of(obj)
            local ok, value = pcall(function() return obj[key] end)
            exists = exists or (methods and methods[key] ~= nil) or (ok and type(value) == "function")
          else
            exists = exists or pcall(function() return obj[key] end)
          end
        end
      end
      if not exists then gone[#gone + 1] = ("%s (docs/api.md:%d)"):format(name, line) end
    end
    for var, rows in pairs(METAMETHODS) do
      for key, line in pairs(rows) do
        local exists = false
        for _, obj in ipairs(OBJECTS[var] or {}) do exists = exists or rawget(getmetatable(obj), key) ~= nil end
        if not exists then gone[#gone + 1] = ("`%s` metamethods: %s (docs/api.md:%d)"):format(var, key, line) end
      end
    end
    report(gone, "entries of docs/api.md name nothing that exists")
  end)
end)

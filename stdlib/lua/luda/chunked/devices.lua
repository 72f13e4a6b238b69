-- Where a chunked array's blocks live (docs/chunked.md): device names, the devices blocks
-- go to by default, and arrays and reductions' partial results moved between devices.
local luda = require "luda"
local internal = require "luda.internal"
local errors = require "luda.chunked.errors"

local raise = errors.raise
local ARRAY_MT = internal.array_metatable

local function is_array(v) return getmetatable(v) == ARRAY_MT end

local function to(x, device)
  if is_array(x) and x.device ~= device then return x:to(device) end
  return x
end

-- A partial result of a reduction: an array, or a list of arrays (argmax's index and
-- value, which travel together).
local function partial_device(p) return is_array(p) and p.device or p[1].device end
local function partial_to(p, device)
  if is_array(p) then return to(p, device) end
  local out = {}
  for i, a in ipairs(p) do out[i] = to(a, device) end
  return out
end

-- Pairwise combination of a list of partials, kept in order, each pair on the left one's
-- device (luda's functions run where their arrays are).
local function tree(list, combine)
  while #list > 1 do
    local next_list = {}
    for i = 1, #list, 2 do
      local a, b = list[i], list[i + 1]
      if b == nil then next_list[#next_list + 1] = a
      else next_list[#next_list + 1] = combine(a, partial_to(b, partial_device(a))) end
    end
    list = next_list
  end
  return list[1]
end

-- A device's name as arrays report theirs ("cpu", "cpu:1", "cuda:0").
local function device_name(d)
  if type(d) == "string" then return d end
  if d.kind == "cpu" then return d.index == 0 and "cpu" or ("cpu:" .. d.index) end
  return "cuda:" .. d.index
end

-- The devices blocks go to by default: every CUDA device when the current device is one,
-- else every cpu device (LUDA_CPU_DEVICES).
local function default_devices()
  local want = luda.current_device().kind
  local out = {}
  for _, d in ipairs(luda.devices()) do
    if d.kind == want then out[#out + 1] = device_name(d) end
  end
  if #out == 0 then out[1] = device_name(luda.current_device()) end
  return out
end

local function read_devices(list, who)
  if list == nil then return default_devices() end
  if type(list) == "string" or type(list) == "userdata" then list = { list } end
  if type(list) ~= "table" or #list == 0 then
    raise("%s: option 'devices' must be a device or a non-empty list of them, got %s", who, type(list))
  end
  local out = {}
  for i, d in ipairs(list) do
    local name = device_name(d)
    local ok, e = pcall(luda.device, name)
    if not ok then raise("%s: devices[%d]: %s", who, i, tostring(e):gsub("^[^:]*:%d+: ", "", 1)) end
    out[i] = name
  end
  return out
end

-- The devices of a list of blocks (this rank's, of a distributed array), in order of first
-- appearance.
local function devices_of(blocks)
  local seen, out = {}, {}
  for _, b in ipairs(blocks) do
    local d = b and b.device
    if d and not seen[d] then
      seen[d] = true
      out[#out + 1] = d
    end
  end
  return out
end

return {
  device_name = device_name, devices_of = devices_of, is_array = is_array, partial_device = partial_device,
  partial_to = partial_to, read_devices = read_devices, to = to, tree = tree,
}

-- luda.chunked: Dask's chunked arrays over luda arrays (docs/chunked.md).
--
-- A chunked array is a grid of ordinary luda arrays (blocks), each on one device, with
-- Dask's vocabulary: shape, dtype, chunks (per axis, the blocks' extents), numblocks.
-- Work on a chunked array is work on its blocks, each where it lives, so blocks on
-- different devices run at once (each device its own stream; a launch is asynchronous).
-- Functions of the luda module that are given a chunked array come here through the
-- metatable's __luda_function (stdlib/lua_support.h, defer_to_argument), as NumPy's
-- __array_function__ lets Dask take NumPy's functions; so code written for an array runs
-- on a chunked one.
--
-- This module is luda.chunked, the constructor and its functions; loading it loads the
-- modules of luda.chunked.* that add the chunked forms of luda's functions, and sets
-- luda.chunked, luda.map_blocks and luda.rechunk.
local luda = require "luda"
local errors = require "luda.chunked.errors"
local array = require "luda.chunked.array"
local constructors = require "luda.chunked.constructors"
local map_blocks = require "luda.chunked.map_blocks"
require "luda.chunked.rechunk"
require "luda.chunked.ufuncs"
require "luda.chunked.reduce"
require "luda.chunked.kinds"
require "luda.chunked.linalg"

local raise, public = errors.raise, errors.public
local Chunked, IMPL, methods = array.Chunked, array.IMPL, array.methods

local M = {}     -- luda.chunked: the constructor (through __call) and its functions
local NAME = {}  -- a luda function -> "luda.name", for messages

-- ---- the protocol, names and the module ------------------------------------------------------

for name, f in pairs(luda) do
  if type(f) == "function" then NAME[f] = "luda." .. name end
end
for name, f in pairs(luda.linalg) do
  if type(f) == "function" then NAME[f] = "luda.linalg." .. name end
end

Chunked.__luda_function = function(f, ...)
  local impl = IMPL[f]
  if impl then return impl(...) end
  raise("%s does not take chunked arrays; c:compute() makes one array of one (or map_blocks works block by block)",
    NAME[f] or "this function")
end

for _, name in ipairs({ "zeros", "ones", "empty", "full", "random", "arange" }) do M[name] = constructors[name] end
M.is_chunked = array.is_chunked

local from_array = public(constructors.from_array)
setmetatable(M, {
  __call = function(_, x, chunks, options) return from_array(x, chunks, options) end,
  __index = function(_, k) raise("luda.chunked has no field '%s'", tostring(k)) end,
})

luda.chunked = M
luda.map_blocks = public(map_blocks)
luda.rechunk = methods.rechunk

return M

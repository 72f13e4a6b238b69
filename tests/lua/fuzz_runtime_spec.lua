-- Programs from the runtime fuzzer (fuzz/runtime_fuzz.cpp, docs/testing.md) that crashed,
-- aborted or tripped a sanitizer, reduced to the statements that matter. Each must give
-- its clean error (or its right answer); the comment in each test names the fault it
-- guards against. The fuzzer's inputs for them are in fuzz/corpus/runtime/, so the fuzzer
-- replays them too.
local luda = require "luda"
local support = require "support"
local here, error_of = support.here, support.error_of
local on_devices = support.device_tests(_ENV)

local CPU = { device = "cpu" }

describe("runtime fuzzer findings", function()
  it("an empty array whose other extents multiply past 2^63 is too big, as in NumPy", function()
    -- guards against: signed overflow computing its strides (UBSan, runtime/ndarray.cpp)
    local max = math.maxinteger
    local want = ("array is too big: the extents of shape (0, %d, %d, %d) multiply to more than 2^63"):format(max, max, max)
    assert.are.equal(here() .. want, error_of(function() return luda.zeros({ 0, max, max, max }, "int16", CPU) end))
    assert.are.same({ 0, 2 ^ 31 }, luda.zeros({ 0, 2 ^ 31 }, "int8", CPU).shape)  -- fine when they fit
  end)

  on_devices("a bool element is true for any nonzero byte, whoever wrote it", function()
    -- guards against: copying an `empty` bool array reading bytes other than 0 and 1 as C++
    -- bools (UBSan), and converting such an element on the host giving the byte (190), not 1
    local poke = luda.raw_kernel([[
extern "C" __global__ void poke(bool* b) { ((unsigned char*)b)[threadIdx.x] = (unsigned char)(190 * threadIdx.x); }
]], "poke")
    local b = luda.zeros(3, "bool")
    poke({ 1 }, { 3 }, { b })  -- bytes 0, 190, 124
    assert.are.same({ 0, 1, 1 }, b:astype("int32"):totable())
    assert.are.same({ false, true, true }, b:totable())
    assert.are.same({ false, true, true }, b:copy():totable())
    assert.are.same({ false, true, true }, { b[0], b[1], b[2] })
    assert.are.equal("array([False,  True,  True])", tostring(b))
  end)

  on_devices("operands that broadcast to an empty shape whose other extents multiply past 2^63 are too big", function()
    -- guards against: signed overflow computing the output's strides (UBSan, jit/kinds/elementwise.cpp)
    local a = luda.zeros({ 0, 0, 1, 2 ^ 62 }, "uint8")
    local b = luda.ones({ 3, 1 }, "uint8")
    local want = "array is too big: the extents of shape (0, 0, 3, 4611686018427387904) multiply to more than 2^63"
    assert.are.equal(here() .. want, error_of(function() return luda.where(a, a, b) end))
    assert.are.equal(here() .. want, error_of(function() return a + b end))
    assert.are.same({ 0, 0, 1, 2 ^ 62 }, (a + a).shape)  -- fine when they fit
  end)

  on_devices("reducing the empty axis of an array whose other extent is near 2^63 fails to allocate", function()
    -- guards against: signed overflow planning the reduction's grid, then SIGFPE (UBSan, jit/kinds/core.h)
    local b = luda.zeros({ 0, math.maxinteger }, "int8")
    local want = "array is too big: shape (9223372036854775807,) of int64 needs more bytes than memory can address"
    assert.are.equal(here() .. want, error_of(function() return b:sum(1) end))
    local no_identity = "max: zero-size array to reduction operation maximum which has no identity"
    assert.are.equal(here() .. no_identity, error_of(function() return b:max(1) end))
    assert.are.same({ 0 }, b:sum(2, { keepdims = false }).shape)
  end)
end)

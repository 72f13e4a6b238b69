-- What the runtime fuzzer (fuzz/runtime_fuzz.cpp, docs/testing.md) found: each program
-- crashed, aborted or tripped a sanitizer, and is reduced here to the statements that
-- matter. Each must now give its clean error (or its right answer). The inputs that found
-- them are in fuzz/corpus/runtime/, so the fuzzer replays them too.
local luda = require "luda"
local support = require "support"
local here, error_of = support.here, support.error_of

local CPU = { device = "cpu" }

describe("runtime fuzzer findings", function()
  it("an empty array whose other extents multiply past 2^63 is too big, as in NumPy", function()
    -- was: signed overflow computing its strides (UBSan, runtime/ndarray.cpp)
    local max = math.maxinteger
    local want = ("array is too big: the extents of shape (0, %d, %d, %d) multiply to more than 2^63"):format(max, max, max)
    assert.are.equal(here() .. want, error_of(function() return luda.zeros({ 0, max, max, max }, "int16", CPU) end))
    assert.are.same({ 0, 2 ^ 31 }, luda.zeros({ 0, 2 ^ 31 }, "int8", CPU).shape)  -- fine when they fit
  end)
end)

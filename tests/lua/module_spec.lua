local luda = require "luda"

describe("luda.clock", function()
  it("is a monotonic wall clock in seconds", function()
    local t0, c0 = luda.clock(), os.clock()
    while os.clock() - c0 < 0.05 do end  -- 50 ms of CPU time is at least 50 ms of wall time
    local dt = luda.clock() - t0
    assert.is_true(dt >= 0.049, "elapsed " .. dt)
    assert.is_true(dt < 5, "elapsed " .. dt)
    local a = luda.clock()
    assert.is_true(luda.clock() >= a)
  end)
end)

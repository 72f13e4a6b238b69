-- The CuPy guide's ndarray examples, written in luda's Lua, with the output the guide
-- prints (CuPy prints a 0-d result as an array, where NumPy prints a scalar).
local luda = require "luda"
local support = require "support"

local on_devices = support.device_tests(_ENV)

describe("the CuPy guide's examples", function()
  on_devices("advanced indexing: X[[0, 1, 2], [0, 1, 0]]", function()
    local X = luda.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } })
    assert.are.equal("array([1, 4, 5])", tostring(X["[0, 1, 2], [0, 1, 0]"]))
    -- the same with index arrays
    local rows, cols = luda.array({ 0, 1, 2 }), luda.array({ 0, 1, 0 })
    assert.are.equal("array([1, 4, 5])", tostring(X[{ rows, cols }]))
  end)

  on_devices("matmul of two float32 vectors", function()
    local B = luda.array({ 1, 2, 3, 4 }, "float32")
    local C = luda.array({ 5, 6, 7, 8 }, "float32")
    assert.are.equal("array(70., dtype=float32)", tostring(luda.matmul(B, C)))
    assert.are.equal(70, luda.matmul(B, C):item())
  end)

  on_devices("1j * arange(9, dtype=complex64).reshape(3, 3)", function()
    local z = luda.complex(0, 1) * luda.arange(9, "complex64"):reshape(3, 3)
    assert.are.equal("array([[0.+0.j, 0.+1.j, 0.+2.j],\n" ..
                     "       [0.+3.j, 0.+4.j, 0.+5.j],\n" ..
                     "       [0.+6.j, 0.+7.j, 0.+8.j]], dtype=complex64)", tostring(z))
  end)
end)

-- Timing for the Lua benchmarks (bench/*.lua, run from the repository root):
--   local T = dofile("bench/timing.lua")
-- T.time(fn, reps [, on]): the median milliseconds of `reps` runs of fn after one more,
-- each waited for on the current device when that is a GPU (`on = "cpu"`: work that runs
-- on the cpu device, which needs no wait; a function: what waits, such as a wait for every
-- device). Lua's garbage from before is collected first,
-- so that freeing an earlier figure's arrays does not fall in this one's time.
local luda = require "luda"

local M = {}

local on_gpu = luda.current_device().kind ~= "cpu"

function M.wait(on)
  if type(on) == "function" then return on() end
  if on ~= "cpu" and on_gpu then luda.cuda.synchronize() end
end

-- A wait for every GPU of the machine (T.time's `on` for work spread over devices).
function M.every_gpu()
  for d = 0, luda.cuda.device_count() - 1 do luda.device(d):synchronize() end
end

function M.median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

function M.time(fn, reps, on)
  collectgarbage()
  collectgarbage()
  fn()
  M.wait(on)
  local t = {}
  for k = 1, reps do
    local t0 = luda.clock()
    fn()
    M.wait(on)
    t[k] = (luda.clock() - t0) * 1e3
  end
  return M.median(t)
end

-- T.compare(fa, fb, reps [, on]): the median milliseconds of fa and of fb, their runs taken
-- in turn (fa, fb, fa, ...) so that a drift of the machine's speed falls on both alike.
function M.compare(fa, fb, reps, on)
  collectgarbage()
  collectgarbage()
  fa()
  fb()
  M.wait(on)
  local ta, tb = {}, {}
  for k = 1, reps do
    for _, pair in ipairs({ { fa, ta }, { fb, tb } }) do
      local t0 = luda.clock()
      pair[1]()
      M.wait(on)
      pair[2][k] = (luda.clock() - t0) * 1e3
    end
  end
  return M.median(ta), M.median(tb)
end

-- T.back_to_back(fn, calls [, on]): milliseconds per call of `calls` calls made one after
-- another and waited for once at the end (the best of 5 such runs): what a loop of work
-- sees, where each call's launches queue behind the last's.
function M.back_to_back(fn, calls, on)
  collectgarbage()
  collectgarbage()
  fn()
  M.wait(on)
  local best = math.huge
  for _ = 1, 5 do
    local t0 = luda.clock()
    for _ = 1, calls do fn() end
    M.wait(on)
    best = math.min(best, (luda.clock() - t0) * 1e3 / calls)
  end
  return best
end

return M

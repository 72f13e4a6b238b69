-- A kernel on the cpu device runs inside the host process: what would crash, end or hang
-- that process becomes a Lua error naming the kernel, and the same Lua state then runs the
-- next kernel correctly (docs/cpu.md). Hangs are tested in a child process under a time
-- limit, stopped with SIGINT as Ctrl-C stops them.
local luda = require "luda"
local support = require "support"
local cuda = luda.cuda
local here, error_of = support.here, support.error_of
local on_devices = support.device_tests(_ENV)

local CPU = { device = "cpu" }

-- After every failure: a kernel of each kind still runs and gives the right values.
local function still_works()
  local fill = luda.raw_kernel([[
extern "C" __global__ void fill(int* x, int base) { x[blockIdx.x * blockDim.x + threadIdx.x] = base + blockIdx.x * blockDim.x + threadIdx.x; }
]], "fill")
  local x = luda.zeros(64, "int32", CPU)
  local base = math.random(1000)
  fill({ 2 }, { 32 }, { x, base })
  local want = {}
  for i = 1, 64 do want[i] = base + i - 1 end
  assert.are.same(want, x:totable())
  local twice = cuda.jit(function(a, b) local i = cuda.grid(1) cuda.syncthreads() b[i] = 2 * a[i] end)
  local y = luda.zeros(64, "int32", CPU)
  twice[{ 2, 32 }](x, y)
  for i = 1, 64 do want[i] = 2 * (base + i - 1) end
  assert.are.same(want, y:totable())
end

-- The error a one-block launch of raw kernel `name` raises (its parameters `int* x, int z`),
-- and the place it is raised at.
local function raw_error(name, source, z, threads)
  local k = luda.raw_kernel(source, name)
  local x = luda.zeros(4, "int32", CPU)
  local where = here() local err = error_of(function() k({ 1 }, { threads or 1 }, { x, z or 0 }) end)
  return where, err
end

describe("the cpu device contains a raw kernel that", function()
  before_each(function() math.randomseed(77) end)

  local FAULT = "crashed on the cpu device: invalid memory access at address %s (SIGSEGV): a null or wild pointer, " ..
                "or an index out of range with bounds checks off. luda stopped the kernel, but what it wrote before " ..
                "the fault may have corrupted this process's memory"
  local DIVIDE = "crashed on the cpu device: integer division by zero, or of the smallest integer by -1 (SIGFPE); " ..
                 "luda stopped the kernel"

  it("divides an integer by zero or the smallest integer by -1", function()
    local where, err = raw_error("divide", [[extern "C" __global__ void divide(int* x, int z) { x[0] = 7 / z; }]], 0)
    assert.are.equal(where .. "raw_kernel 'divide' " .. DIVIDE, err)
    still_works()
    where, err = raw_error("overflow", [[
extern "C" __global__ void overflow(int* x, int z) { volatile int m = -2147483647 - 1; x[0] = m / (z - 1); }]], 0)
    assert.are.equal(where .. "raw_kernel 'overflow' " .. DIVIDE, err)
    still_works()
  end)

  it("follows a null or wild pointer, in a loop or between barriers", function()
    local where, err = raw_error("null", [[extern "C" __global__ void null(int* x, int z) { int* p = (int*)(long)z; *p = 1; }]], 0)
    assert.are.equal(where .. "raw_kernel 'null' " .. FAULT:format("0x0"), err)
    still_works()
    -- a store through a pointer the compiler can see is null: kept and faulting (the
    -- host compiler runs with -fno-delete-null-pointer-checks), as on a GPU
    where, err = raw_error("known_null", [[
extern "C" __global__ void known_null(int* x, int z) { int* p = 0; if (z == 0) x = p; x[0] = 1; }]], 0)
    assert.are.equal(where .. "raw_kernel 'known_null' " .. FAULT:format("0x0"), err)
    still_works()
    where, err = raw_error("literal_null", [[extern "C" __global__ void literal_null(int* x, int z) { *(int*)0 = z; }]], 3)
    assert.are.equal(where .. "raw_kernel 'literal_null' " .. FAULT:format("0x0"), err)
    still_works()
    where, err = raw_error("wild", [[extern "C" __global__ void wild(int* x, int z) { *(int*)(0x1000 + (long)z) = 1; }]], 8)
    assert.are.equal(where .. "raw_kernel 'wild' " .. FAULT:format("0x1008"), err)
    still_works()
    -- fiber mode: one thread of 64 faults between barriers; the others are let go
    where, err = raw_error("between", [[
extern "C" __global__ void between(int* x, int z) {
  __syncthreads();
  if (threadIdx.x == 37) *(int*)(long)z = 1;
  __syncthreads();
  x[0] = 5;
}]], 0, 64)
    assert.are.equal(where .. "raw_kernel 'between' " .. FAULT:format("0x0"), err)
    still_works()
  end)

  it("recurses without end, in loop mode and as fibers", function()
    local RECURSE = [[
__device__ int down(int n) { volatile char frame[512]; frame[0] = (char)n; return n == -1 ? 0 : down(n + 1) + frame[0]; }
extern "C" __global__ void NAME(int* x, int z) { BARRIER x[0] = down(z); }
]]
    local where, err = raw_error("deep", (RECURSE:gsub("NAME", "deep"):gsub("BARRIER", "")), 0)
    -- in loop mode a thread's stack is the OS thread's, whose size the system sets
    local prefix = where .. "raw_kernel 'deep' crashed on the cpu device: stack overflow (a thread of it has "
    local suffix = " of stack: deep recursion, or local arrays too large); luda stopped the kernel"
    assert.are.equal(prefix, err:sub(1, #prefix))
    assert.are.equal(suffix, err:sub(-#suffix))
    still_works()
    where, err = raw_error("deeper", (RECURSE:gsub("NAME", "deeper"):gsub("BARRIER", "__syncthreads();")), 0, 4)
    assert.are.equal(where .. "raw_kernel 'deeper' crashed on the cpu device: stack overflow (a thread of it has 640.0 KiB " ..
                     "of stack: deep recursion, or local arrays too large); luda stopped the kernel", err)
    still_works()
  end)

  it("calls exit, quick_exit, _Exit or abort, or fails an assert", function()
    local where, err = raw_error("leave", [[extern "C" __global__ void leave(int* x, int z) { exit(3); }]])
    assert.are.equal(where .. "raw_kernel 'leave' called exit(3); a kernel cannot end the process, so luda stopped the kernel", err)
    where, err = raw_error("leave_std", [[
#include <cstdlib>
extern "C" __global__ void leave_std(int* x, int z) { if (z == 0) std::quick_exit(4); std::_Exit(5); }]])
    assert.are.equal(where .. "raw_kernel 'leave_std' called exit(4); a kernel cannot end the process, so luda stopped the kernel", err)
    where, err = raw_error("give_up", [[extern "C" __global__ void give_up(int* x, int z) { abort(); }]])
    assert.are.equal(where .. "raw_kernel 'give_up' called abort(); luda stopped the kernel instead of the process", err)
    where, err = raw_error("checked", [[
#include <cassert>
extern "C" __global__ void checked(int* x, int z) {
  assert(z > 0);
  x[0] = z;
}]], 0)
    assert.are.equal(where .. "raw_kernel 'checked' failed an assertion: z > 0 (raw_module.cu:3, in void checked(int*, int))", err)
    still_works()
  end)

  it("throws an exception", function()
    local where, err = raw_error("throws", [[
#include <stdexcept>
extern "C" __global__ void throws(int* x, int z) { if (threadIdx.x == 2) throw std::out_of_range("row 7"); }]], 0, 4)
    assert.are.equal(where .. "raw_kernel 'throws' threw std::out_of_range: row 7", err)
    where, err = raw_error("throws_int", [[extern "C" __global__ void throws_int(int* x, int z) { throw 42; }]])
    assert.are.equal(where .. "raw_kernel 'throws_int' threw an exception of type int", err)
    still_works()
  end)
end)

describe("cuda.jit on the cpu device", function()
  -- The stack a kernel's local arrays need: 160 KiB with a barrier (fibers) and without.
  on_devices("gives each thread the stack its local arrays need", function()
    local N = 20480  -- float64: 160 KiB
    local sums = cuda.jit(function(out, k)
      local t = cuda.threadIdx.x
      local scratch = cuda.local_array(N, "float64")
      for i = 0, N - 1 do scratch[i] = i * k + t end
      cuda.syncthreads()
      local s = 0.0
      for i = 0, N - 1, 97 do s = s + scratch[i] end
      out[cuda.grid(1)] = s
    end)
    local out = luda.zeros(64, "float64")
    sums[{ 2, 32 }](out, 3)
    local got = out:totable()
    for g = 0, 63 do
      local want = 0.0
      for i = 0, N - 1, 97 do want = want + (i * 3 + g % 32) end
      assert.are.equal(want, got[g + 1])
    end
  end)

  -- Threads of one block that wait for one another through memory, with no barrier: an
  -- sm_70+ GPU schedules them independently, the cpu device lets the others run at the
  -- waiting loop's back-edges. Run in a child process: a hang would stop the suite.
  it("ends a spin-wait between threads of a block", function()
    local script = [[
local cuda = luda.cuda
local handoff = cuda.jit(function(flag, out)
  local t = cuda.threadIdx.x
  if t == 0 then
    while cuda.atomic.add(flag, 0, 0) == 0 do end
    out[0] = cuda.atomic.add(flag, 1, 0)
  elseif t == 31 then
    cuda.atomic.exch(flag, 1, 42)
    cuda.threadfence()
    cuda.atomic.exch(flag, 0, 1)
  end
end)
local flag, out = luda.zeros(2, "int32"), luda.zeros(1, "int32")
handoff[{1, 32}](flag, out)
print(out[0])
]]
    for _, device in ipairs(support.devices()) do
      local out, err, code = support.run_luda("-e " .. support.quote(script), nil, false, { LUDA_DEVICE = device }, 60)
      assert.are.same({ "42\n", "", 0 }, { out, err, code }, device)
    end
  end)
end)

-- Ctrl-C (SIGINT) stops a running cpu kernel with an error and keeps the session. The
-- kernels loop forever: a generated one, stopped at its loop's back-edge, and a raw one,
-- stopped by the signal the executor sends it. Each is compiled by a first, ending launch;
-- the shell sends SIGINT once the endless launch has begun (after a marker file appears).
describe("Ctrl-C", function()
  local LUDA = support.LUDA

  -- Runs `sh` with $LUDA and $DIR (a fresh directory) set; returns what it printed.
  local function shell(sh, device)
    assert(LUDA, "set LUDA_BIN to the luda binary (ctest does)")
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. support.quote(dir)))
    local p = assert(io.popen("LUDA=" .. support.quote(LUDA) .. " DIR=" .. support.quote(dir) ..
                              " LUDA_DEVICE=" .. (device or "cpu") .. " sh -c " .. support.quote(sh) .. " 2>&1"))
    local out = p:read("a")
    p:close()
    os.execute("rm -rf " .. support.quote(dir))
    return out
  end

  -- interrupt_after FILE: waits (at most 60 s) for FILE, then a moment for the launch to
  -- start, then sends SIGINT to $pid. limit: kills $pid after 90 s (not `timeout`, which
  -- passes on only the first SIGINT), so that a test of a hang fails instead of hanging.
  local INTERRUPT_AFTER = [[
interrupt_after() {
  i=0
  while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  sleep 1
  kill -INT $pid
}
limit() {
  (sleep 90; kill -KILL $pid) > /dev/null 2>&1 &
  killer=$!
}
repl_start() {  # a REPL reading what is written to descriptor 3
  mkfifo "$DIR/in"
  "$LUDA" -i < "$DIR/in" > "$DIR/out" 2>&1 &
  pid=$!
  limit
  exec 3> "$DIR/in"
}
repl_end() {
  exec 3>&-
  wait $pid
  echo "status $?"
  kill $killer
  cat "$DIR/out"
}
]]

  it("stops a kernel that never ends in a script, which then ends with the error", function()
    local out = shell(INTERRUPT_AFTER .. [[
cat > "$DIR/endless.lua" <<'LUA'
local x = luda.zeros(4, "int32")
local spin = luda.cuda.jit(function(x) while x[0] == 0 do x[1] = x[1] + 1 end end)
x[0] = 1
spin[{8, 32}](x)
x[0] = 0
io.open(os.getenv("DIR") .. "/started", "w"):close()
spin[{8, 32}](x)
print("not reached")
LUA
"$LUDA" "$DIR/endless.lua" > "$DIR/out" 2> "$DIR/err" &
pid=$!
limit
interrupt_after "$DIR/started"
wait $pid
echo "status $?"
kill $killer
cat "$DIR/out" "$DIR/err"
]])
    assert.truthy(out:find("^status 1\nluda: [^\n]*/endless.lua:7: kernel 'spin' was interrupted; the arrays it was " ..
                           "writing may hold partial results\nstack traceback:"), out)
  end)

  it("at the REPL stops a generated and a raw kernel, and the session goes on", function()
    local out = shell(INTERRUPT_AFTER .. [==[
repl_start
echo 'x = luda.zeros(4, "int32"); x[0] = 1' >&3
echo 'spin = luda.cuda.jit(function(x) while x[0] == 0 do end end); spin[{4, 32}](x); x[0] = 0' >&3
echo 'io.open(os.getenv("DIR") .. "/one", "w"):close(); spin[{4, 32}](x)' >&3
interrupt_after "$DIR/one"
echo 'raw = luda.raw_kernel([[extern "C" __global__ void raw(int* x) { while (*(volatile int*)x == 0) {} }]], "raw")' >&3
echo 'x[0] = 1; raw({4}, {32}, {x}); x[0] = 0' >&3
echo 'io.open(os.getenv("DIR") .. "/two", "w"):close(); raw({4}, {32}, {x})' >&3
interrupt_after "$DIR/two"
echo 'x[0] = 5; spin[{4, 32}](x); print("session goes on", x[0])' >&3
repl_end
]==])
    assert.truthy(out:find("^status 0\n"), out)
    assert.truthy(out:find("stdin[3]:1: kernel 'spin' was interrupted; the arrays it was writing may hold partial results\n", 1, true), out)
    assert.truthy(out:find("stdin[6]:1: raw_kernel 'raw' was interrupted; the arrays it was writing may hold partial results\n", 1, true), out)
    assert.truthy(out:find("> session goes on\t5\n", 1, true), out)
  end)

  it("stops a cooperative kernel whose blocks wait at the grid barrier for one that spins", function()
    local out = shell(INTERRUPT_AFTER .. [==[
repl_start
echo 'x = luda.zeros(4, "int32"); c = luda.cuda' >&3
echo 'k = c.jit(function(x) if c.blockIdx.x == 0 then while x[0] == 0 do end end c.cg.this_grid():sync() x[1] = 7 end)' >&3
echo 'x[0] = 1; k[{4, 32}](x); x[0] = 0' >&3
echo 'io.open(os.getenv("DIR") .. "/one", "w"):close(); k[{4, 32}](x)' >&3
interrupt_after "$DIR/one"
echo 'x[0] = 5; x[1] = 0; k[{4, 32}](x); print("session goes on", x[1])' >&3
repl_end
]==])
    assert.truthy(out:find("^status 0\n"), out)
    assert.truthy(out:find("stdin[4]:1: kernel 'k' was interrupted; the arrays it was writing may hold partial results\n", 1, true), out)
    assert.truthy(out:find("> session goes on\t7\n", 1, true), out)
  end)

  -- A GPU kernel cannot be stopped from the host: the wait for it is, and says so. The
  -- kernel (a few seconds of dependent multiply-adds in one thread) goes on meanwhile.
  it("at the REPL stops a wait for a GPU kernel, and the session goes on", function()
    local why = support.gpu_missing()
    if why then return pending(why) end
    local out = shell(INTERRUPT_AFTER .. [==[
repl_start
echo 'burn = luda.cuda.jit(function(out, n) local a = 0.0 for i = 1, n do a = a * 0.999999 + 1.0 end out[0] = a end)' >&3
echo 'x = luda.zeros(1, "float64"); burn[{1, 1}](x, 10); print("warm", x[0] > 0)' >&3
echo 'io.open(os.getenv("DIR") .. "/one", "w"):close(); burn[{1, 1}](x, 4000000000); print(x[0])' >&3
interrupt_after "$DIR/one"
echo 'print("session goes on")' >&3
repl_end
]==], "cuda")
    assert.truthy(out:find("^status 0\n"), out)
    assert.truthy(out:find("warm\ttrue\n", 1, true), out)
    assert.truthy(out:find(": interrupted while waiting for cuda:0 (cuStreamSynchronize); the GPU goes on with the " ..
                           "work queued before the wait", 1, true), out)
    assert.truthy(out:find("> session goes on\n", 1, true), out)
  end)
end)

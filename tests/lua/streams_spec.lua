-- Streams, events and the Numba-style luda.cuda array calls, on the cpu device and on
-- cuda when there is a GPU, so that a GPU script that overlaps work on streams or times
-- itself runs unchanged as a cpu test fixture. On the cpu a stream's work runs as it is
-- submitted, so it is in order; events read the host's clock. Values are checked against
-- plain Lua, errors pinned to their exact text and place.
local luda = require "luda"
local support = require "support"
local H = require "hostref"
local error_of, raises = support.error_of, H.raises
local cuda = luda.cuda

local on_devices = support.device_tests(_ENV)

local device_name, needs_gpu = support.device_name, support.gpu_test(_ENV)

-- x[i] = 3 * x[i] + c by each way of launching work: f(g(x)) differs from g(f(x)), so the
-- result is the plain-Lua one only if a stream runs them in the order submitted.
local step_jit = cuda.jit(function(x, c)
  local i = cuda.grid(1)
  if i < #x then x[i] = 3 * x[i] + c end
end)
local step_vectorize = luda.vectorize(function(x, c) return 3 * x + c end)
local step_raw = luda.raw_kernel([[
extern "C" __global__ void step_raw(long long* x, long long c, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = 3 * x[i] + c;
}]], "step_raw")

-- Work that takes a while on either device: each element runs a dependent chain.
local busy = cuda.jit(function(x, rounds)
  local i = cuda.grid(1)
  if i < #x then
    local v = x[i]
    for _ = 1, rounds do v = v * 0.999 + 0.5 end
    x[i] = v
  end
end)

local N = 5000
local function random_ints(n)
  local t = {}
  for i = 1, n do t[i] = math.random(-1000, 1000) end
  return t
end

describe("streams", function()
  before_each(function() math.randomseed(1111) end)

  on_devices("are made on the current device, and have nothing to wait for once synchronized", function(device)
    local s, e = luda.stream(), luda.event()
    assert.are.equal(device_name(device), s.device)
    assert.are.equal(device_name(device), e.device)
    assert.are.equal(e, e:record(s))   -- record returns the event
    s:synchronize()
    assert.is_true(s:query())
    if device == "cpu" then
      assert.are.equal("<stream cpu>", tostring(s))
      assert.are.equal("<event cpu>", tostring(luda.event()))
    else
      assert.truthy(tostring(s):find("^<stream cuda:0 0x%x+>$"), tostring(s))
      assert.truthy(tostring(e):find("^<event cuda:0 0x%x+>$"), tostring(e))
    end
    assert.are.equal("cpu", luda.stream({ device = "cpu" }).device)
    assert.are.equal("cpu", luda.event({ device = "cpu" }).device)
    raises("stream has no field 'handle' (field: device; methods: synchronize, query, wait)", function() return s.handle end)
    raises("event has no field 'time' (field: device; methods: record, synchronize, query, elapsed_time)", function() return e.time end)
  end)

  on_devices("run their launches of every kind and their copies in the order submitted", function(device)
    local t = random_ints(N)
    local s = luda.stream()
    local d = cuda.to_device(luda.array(t, "int64", { device = "cpu" }), { stream = s })
    assert.are.equal(device_name(device), d.device)
    local blocks = (N + 127) // 128
    step_jit[{ grid = blocks, block = 128, stream = s }](d, 1)
    step_vectorize(d, 2, { out = d, stream = s })
    step_raw({ blocks }, { 128 }, { d, luda.int64(3), luda.int64(N) }, { stream = s })
    luda.add(d, 4, { out = d, stream = s })
    step_jit[{ grid = blocks, block = 128, stream = s }](d, 5)
    local back = d:copy_to_host({ stream = s })
    s:synchronize()
    assert.are.equal("cpu", back.device)
    local got = back:totable()
    for i = 1, N do
      local want = 3 * (3 * (3 * t[i] + 1) + 2) + 3 + 4
      assert.are.equal(3 * want + 5, got[i])
    end
  end)

  on_devices("order work across streams with wait on an event", function(device)
    local t = random_ints(N)
    local s1, s2 = luda.stream(), luda.stream()
    local d = cuda.to_device(luda.array(t, "int64", { device = "cpu" }), { stream = s1 })
    local blocks = (N + 127) // 128
    for c = 1, 3 do step_jit[{ grid = blocks, block = 128, stream = s1 }](d, c) end
    local written = luda.event()
    written:record(s1)
    s2:wait(written)
    local back = d:copy_to_host({ stream = s2 })   -- reads what s1 wrote
    s2:synchronize()
    local got = back:totable()
    for i = 1, N do assert.are.equal(3 * (3 * (3 * t[i] + 1) + 2) + 3, got[i]) end
  end)
end)

describe("events", function()
  before_each(function() math.randomseed(2222) end)

  on_devices("time the work recorded between them, in order", function(device)
    local rounds = device == "cpu" and 300 or 20000   -- some milliseconds on the cpu, tens of microseconds on a GPU
    local s = luda.stream()
    local x = cuda.to_device(luda.random.random(1 << 14, "float32", { seed = 3, device = "cpu" }), { stream = s })
    local blocks = ((1 << 14) + 127) // 128
    local e0, e1, e2 = luda.event(), luda.event(), luda.event({ timing = true })
    e0:record(s)
    busy[{ grid = blocks, block = 128, stream = s }](x, rounds)
    e1:record(s)
    busy[{ grid = blocks, block = 128, stream = s }](x, rounds)
    e2:record(s)
    e2:synchronize()
    assert.is_true(e2:query())
    local t01, t12, t02 = e0:elapsed_time(e1), e1:elapsed_time(e2), e0:elapsed_time(e2)
    assert.are.equal("float", math.type(t01))
    assert.is_true(t01 > 0 and t12 > 0, ("t01 = %g ms, t12 = %g ms"):format(t01, t12))
    assert.is_true(t02 >= t01 and t02 >= t12 and t02 < 60000, ("t02 = %g ms"):format(t02))
    -- The times of consecutive stretches add up (float milliseconds, rounded by the clocks).
    assert.is_true(math.abs(t02 - (t01 + t12)) <= 1e-3 * t02 + 2e-3,
                   ("t02 = %g ms but t01 + t12 = %g ms"):format(t02, t01 + t12))
    -- On the default stream too (event:record() with no stream), after synchronizing.
    local a, b = luda.event(), luda.event()
    a:record()
    busy[{ grid = blocks, block = 128 }](x, rounds)
    b:record()
    b:synchronize()
    assert.is_true(a:elapsed_time(b) > 0)
  end)

  on_devices("never recorded are complete, as in CUDA, but have no time", function()
    local s = luda.stream()
    local never, recorded = luda.event(), luda.event()
    recorded:record(s)
    recorded:synchronize()
    assert.is_true(never:query())
    never:synchronize()
    raises("elapsed time needs two recorded events, but the start event was never recorded: record it on a stream first", function() return never:elapsed_time(recorded) end)
    raises("elapsed time needs two recorded events, but the end event was never recorded: record it on a stream first", function() return recorded:elapsed_time(never) end)
    raises("elapsed time needs two recorded events, but the start and end events were never recorded: record them on a stream first", function() return never:elapsed_time(luda.event()) end)
  end)

  on_devices("made with timing off have no time", function()
    local s = luda.stream()
    local untimed, timed = luda.event({ timing = false }), luda.event()
    untimed:record(s)
    timed:record(s)
    s:synchronize()
    assert.is_true(untimed:query())
    raises("elapsed time needs two events created with timing on (Event::create(device, true))", function() return untimed:elapsed_time(timed) end)
    raises("event: option 'timing' must be a boolean, got 1", function() return luda.event({ timing = 1 }) end)
  end)

  it("of the cpu and of a GPU meet only where it makes sense", needs_gpu(function()
    local cpu_s, gpu_s = luda.stream({ device = "cpu" }), luda.stream({ device = "cuda" })
    local cpu_e, gpu_e = luda.event({ device = "cpu" }), luda.event({ device = "cuda" })
    raises("an event of cpu cannot record work of a stream of cuda:0: create the event on the stream's device", function() return cpu_e:record(gpu_s) end)
    raises("an event of cuda:0 cannot record work of a stream of cpu: create the event on the stream's device", function() return gpu_e:record(cpu_s) end)
    cpu_e:record(cpu_s)
    gpu_e:record(gpu_s)
    raises("elapsed time needs two events of one device; the start event is on cpu and the end event on cuda:0", function() return cpu_e:elapsed_time(gpu_e) end)
    gpu_s:wait(cpu_e)   -- complete once recorded: nothing to wait for
    cpu_s:wait(gpu_e)   -- the host waits, since the cpu stream's later work runs when submitted
    assert.is_true(gpu_e:query())
  end))
end)

describe("a stream of another device", function()
  it("is refused by launches of every kind on a GPU's arrays", needs_gpu(function()
    local s = luda.stream({ device = "cpu" })
    local d = luda.zeros(256, "int64", { device = "cuda" })
    raises("kernel 'step_jit': the stream is on cpu but the launch is on cuda:0; use a stream of cuda:0", function() step_jit[{ grid = 2, block = 128, stream = s }](d, 1) end)
    raises("raw_kernel 'step_raw': the stream is on cpu but the launch is on cuda:0; use a stream of cuda:0", function() step_raw({ 2 }, { 128 }, { d, luda.int64(1), luda.int64(256) }, { stream = s }) end)
    raises("vectorize 'step_vectorize': the stream is on cpu but the arrays are on cuda:0; use a stream of cuda:0", function() step_vectorize(d, 2, { out = d, stream = s }) end)
    raises("vectorize 'step_vectorize': the stream is on cpu but the arrays are on cuda:0; use a stream of cuda:0", function() step_vectorize(d:slice("1:"), 2, { out = d:slice(":255"), stream = s }) end)
    raises("cannot allocate on cuda:0 with a stream of cpu: pass a stream of cuda:0", function() return cuda.device_array(4, "int64", { device = "cuda", stream = s }) end)
    assert.are.same(luda.zeros(256, "int64", { device = "cpu" }):totable(), d:totable())
  end))

  it("is no matter to a launch on the cpu, which runs when it is submitted", needs_gpu(function()
    local s = luda.stream({ device = "cuda" })
    local t = random_ints(300)
    local x = luda.array(t, "int64", { device = "cpu" })
    step_jit[{ grid = 3, block = 128, stream = s }](x, 1)
    step_vectorize(x, 2, { out = x, stream = s })
    local got = x:totable()
    for i = 1, 300 do assert.are.equal(3 * (3 * t[i] + 1) + 2, got[i]) end
  end))
end)

describe("luda.cuda array calls", function()
  before_each(function() math.randomseed(3333) end)

  on_devices("make arrays on the current device: to_device, device_array, device_array_like, copy_to_host", function(device)
    local name = device_name(device)
    local t = random_ints(100)
    local h = luda.array(t, "int32", { device = "cpu" })
    local d = cuda.to_device(h)
    assert.are.equal(name, d.device)
    assert.are.equal(name, cuda.to_device(t).device)
    assert.are.equal(name, luda.to_device(t).device)
    -- A host array is copied, as Numba's to_device copies it: writing the copy leaves
    -- the source alone on every device.
    d[0] = 12345
    assert.are.same(t, h:totable())
    local e = cuda.device_array({ 4, 25 }, "float32")
    assert.are.equal(name, e.device)
    assert.are.same({ 4, 25 }, e.shape)
    assert.are.equal("float32", e.dtype)
    local like = cuda.device_array_like(h)
    assert.are.equal(name, like.device)
    assert.are.same(h.shape, like.shape)
    assert.are.equal("int32", like.dtype)
    assert.are.equal(name, cuda.device_array_like(d).device)
    assert.are.equal("float64", cuda.device_array(3).dtype)
    -- copy_to_host is a new host array, however the source was made.
    local back = d:copy_to_host()
    assert.are.equal("cpu", back.device)
    back[0] = -1
    assert.are.equal(12345, d[0])
    -- A GPU's array already on the target is returned as it is (it is no host array).
    if device == "cuda" then
      cuda.to_device(d)[1] = 777
      assert.are.equal(777, d[1])
    end
    -- The stream's device, when one is given.
    assert.are.equal("cpu", cuda.device_array(2, "int8", { stream = luda.stream({ device = "cpu" }) }).device)
    assert.are.equal("cpu", cuda.to_device(t, { device = "cpu" }).device)
  end)

  if support.gpu_missing() then
    it("without a GPU, run on the cpu; asking for a CUDA device still says why", function()
      local _, why = cuda.is_available()
      local want = "no CUDA device: " .. why
      assert.are.equal("cpu", luda.stream().device)
      assert.are.equal("cpu", luda.event():record().device)
      assert.are.equal("cpu", cuda.to_device({ 1, 2 }).device)
      assert.are.equal("cpu", cuda.device_array(3).device)
      assert.are.equal(support.here() .. want, error_of(function() return luda.stream({ device = "cuda" }) end))
      assert.are.equal(support.here() .. want, error_of(function() return luda.event({ device = "cuda:0" }) end))
      assert.are.equal(support.here() .. want, error_of(function() return cuda.to_device({ 1, 2 }, { device = "cuda" }) end))
      assert.are.equal(support.here() .. want, error_of(function() return cuda.device_array(3, nil, { device = "cuda" }) end))
    end)
  end
end)

-- Devices, streams, events, and arrays on CUDA devices. The CUDA parts run when a device is
-- usable and are pending, with the reason, when not.
local luda = require "luda"
local support = require "support"

-- Runs body when `need` CUDA devices are usable, else marks the test pending with why.
local function on_gpu(body, need)
  return function()
    local why = support.gpu_missing(need)
    if why then pending(why) else body() end
  end
end
local here, error_of, f32, random_table =
  support.here, support.error_of, support.f32, support.random_table

local GPU, NO_GPU_REASON = luda.cuda.is_available()
local NGPU = luda.cuda.device_count()

local function rand_float() return (math.random() - 0.5) * 100 end
local function rand_int() return math.random(-100000, 100000) end

describe("devices", function()
  before_each(function() math.randomseed(99) end)

  it("lists every CUDA device, then cpu", function()
    local list = luda.devices()
    assert.are.equal(NGPU + 1, #list)
    for i = 1, NGPU do
      assert.are.equal("cuda", list[i].kind)
      assert.are.equal(i - 1, list[i].index)
    end
    local cpu = list[#list]
    assert.are.equal("cpu", cpu.kind)
    assert.are.equal("cpu", cpu.name)
    assert.is_nil(cpu.arch)
    assert.are.equal("<device cpu>", tostring(cpu))
    assert.are.equal(luda.device("cpu"), cpu)
    assert.are_not.equal(luda.device("cpu"), GPU and luda.device(0) or nil)
  end)

  it("defaults to cuda:0 when a GPU is usable, else cpu", function()
    local d = luda.current_device()
    if GPU then
      assert.are.equal(luda.device("cuda:0"), d)
    else
      assert.are.equal(luda.device("cpu"), d)
    end
    assert.are.equal(GPU and "cuda:0" or "cpu", luda.zeros(1).device)
  end)

  it("with_device runs a function on a device and restores the previous one", function()
    local before = luda.current_device()
    local a, b, dev, arr = luda.with_device("cpu", function(x, y)
      return x + y, luda.current_device(), luda.zeros(2)
    end, 3, 4)
    assert.are.equal(7, a)
    assert.are.equal(luda.device("cpu"), b)
    assert.are.equal("cpu", dev.device)
    assert.is_nil(arr)
    assert.are.equal(before, luda.current_device())
  end)

  it("with_device restores the device when the function fails, and passes the error on", function()
    local before = luda.current_device()
    local thrown = { "the error object" }
    local ok, err = pcall(luda.with_device, "cpu", function() error(thrown) end)
    assert.is_false(ok)
    assert.are.equal(thrown, err)   -- the very object
    assert.are.equal(before, luda.current_device())
    assert.are.equal(here() .. "boom", error_of(function() luda.with_device(luda.device("cpu"), function() error("boom") end) end))
  end)

  it("cpu has no device memory info; its streams and events are in tests/lua/streams_spec.lua", function()
    assert.are.equal(here() .. "memory_info: the cpu device uses host memory; memory_info is for CUDA devices", error_of(function() return luda.device("cpu"):memory_info() end))
    assert.are.equal("cpu", luda.stream({ device = "cpu" }).device)
    assert.are.equal("cpu", luda.event({ device = "cpu" }).device)
    luda.cuda.synchronize()   -- nothing to wait for on the cpu; never an error
  end)

  -- Only meaningful where no CUDA device is usable (the GPU run checks cuda:7 instead).
  if not GPU then
    it("without a GPU, CUDA requests say why", function()
      local want = "no CUDA device: " .. NO_GPU_REASON
      assert.are.equal(here() .. want, error_of(function() return luda.stream({ device = "cuda" }) end))
      assert.are.equal(here() .. want, error_of(function() return luda.event({ device = "cuda" }) end))
      assert.are.equal(here() .. want, error_of(function() return luda.to_device({ 1, 2 }, { device = "cuda" }) end))
      assert.are.equal(here() .. want, error_of(function() return luda.cuda.device_array(3, nil, { device = "cuda:0" }) end))
      assert.are.equal(here() .. want, error_of(function() return luda.zeros(2, nil, { device = "cuda" }) end))
      assert.are.equal(here() .. want, error_of(function() return luda.device(0) end))
    end)
  end

  it("CUDA device properties", on_gpu(function()
    local d = luda.device(0)
    assert.are.equal("cuda", d.kind)
    assert.is_true(#d.name > 0)
    local cc = d.compute_capability
    assert.are.equal("integer", math.type(cc[1]))
    assert.is_true(cc[1] >= 3)
    assert.are.equal(("sm_%d%d"):format(cc[1], cc[2]), d.arch)
    assert.is_true(d.multiprocessors > 0)
    assert.is_true(d.l2_cache_size > 0)
    assert.are.equal(32, d.warp_size)
    local free, total = d:memory_info()
    assert.is_true(free > 0 and free <= total)
    assert.are.equal(d.total_memory, total)
    assert.are.equal("<device cuda:0: " .. d.name .. ">", tostring(d))
    assert.are.equal(d, luda.device("cuda"))
    assert.are.equal(d, luda.device("cuda:0"))
    d:synchronize()
  end))

  it("arrays made on a CUDA device hold the same values as on the cpu", on_gpu(function()
    local cuda = { device = "cuda" }
    local cpu = { device = "cpu" }
    assert.are.same(luda.zeros({ 3, 4 }, "int32", cpu):totable(), luda.zeros({ 3, 4 }, "int32", cuda):totable())
    assert.are.same(luda.ones(7, nil, cpu):totable(), luda.ones(7, nil, cuda):totable())
    assert.are.same(luda.full({ 2, 5 }, 2.5, "float32", cpu):totable(), luda.full({ 2, 5 }, 2.5, "float32", cuda):totable())
    assert.are.same(luda.arange(3, 50, 4, nil, cpu):totable(), luda.arange(3, 50, 4, nil, cuda):totable())
    assert.are.same(luda.linspace(-1, 1, 33, nil, nil, cpu):totable(), luda.linspace(-1, 1, 33, nil, nil, cuda):totable())
    local t = random_table({ 6, 5 }, rand_float)
    local x = luda.array(t, "float32", cuda)
    assert.are.equal("cuda:0", x.device)
    assert.are.equal(tostring(luda.array(t, "float32", cpu)), tostring(x))   -- plain repr, as CuPy
    for i = 1, 6 do for j = 1, 5 do assert.are.equal(f32(t[i][j]), x[i - 1][j - 1]) end end
  end))

  it("transfers round-trip every dtype", on_gpu(function()
    for _, dtype in ipairs({ "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64" }) do
      local gen = dtype == "bool" and function() return math.random() < 0.5 end
        or dtype:match("^u") and function() return math.random(0, 255) end
        or dtype:match("^int") and function() return math.random(-128, 127) end
        or rand_float
      local t = random_table({ 9, 13 }, gen)
      local host = luda.array(t, dtype, { device = "cpu" })
      local dev = luda.to_device(host)
      assert.are.equal("cuda:0", dev.device)
      local back = dev:copy_to_host()
      assert.are.equal("cpu", back.device)
      assert.are.same(host:totable(), back:totable())
      assert.are.same(host:totable(), luda.cuda.to_device(t, {}):astype(dtype):get():totable())
    end
  end))

  it("views, element access and copies work on CUDA arrays", on_gpu(function()
    local t = random_table({ 5, 8 }, rand_int)
    local h = luda.array(t, nil, { device = "cpu" })
    local d = h:to("cuda")
    assert.are.equal("cpu", luda.array(h).device)
    assert.are.equal("cuda:0", luda.array(d).device)
    assert.are.equal("cuda:0", luda.array(h, nil, { device = "cuda" }).device)
    assert.are.same(h:slice("1:4, ::-3"):totable(), d:slice("1:4, ::-3"):totable())
    assert.are.same(h.T:totable(), d.T:totable())
    assert.are.same(h:reshape(4, 10):totable(), d:reshape(4, 10):totable())
    assert.are.same(h.T:reshape(40):totable(), d.T:reshape(40):totable())
    assert.are.same(h:astype("float32"):totable(), d:astype("float32"):totable())
    d[2][3] = 31337
    assert.are.equal(31337, d[2][3])
    d[4] = { 1, 2, 3, 4, 5, 6, 7, 8 }
    assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8 }, d[4]:totable())
    d[0] = 9
    assert.are.same({ 9, 9, 9, 9, 9, 9, 9, 9 }, d:get()[0]:totable())
    local c = d:copy()
    c:fill(-1)
    assert.are.equal(9, d[0][0])
    assert.are.equal(-1, c[4][7])
    local a = luda.cuda.device_array({ 3, 2 }, "int16")
    assert.are.same({ 3, 2 }, a.shape)
    assert.are.equal("int16", a.dtype)
    assert.are.equal("cuda:0", a.device)
    local like = luda.cuda.device_array_like(h)
    assert.are.same(h.shape, like.shape)
    assert.are.equal(h.dtype, like.dtype)
    assert.are.equal("cuda:0", like.device)
  end))

  it("streams and events order and time work", on_gpu(function()
    local s = luda.stream()
    assert.are.equal("cuda:0", s.device)
    local start, stop = luda.event(), luda.event({ timing = true })
    local t = random_table({ 1 << 20 }, rand_float)
    local h = luda.array(t, "float32", { device = "cpu" })
    start:record(s)
    local d = luda.to_device(h, { stream = s })
    stop:record(s)
    s:synchronize()
    assert.is_true(s:query())
    stop:synchronize()
    assert.is_true(stop:query())
    local ms = start:elapsed_time(stop)
    assert.are.equal("float", math.type(ms))
    assert.is_true(ms >= 0 and ms < 10000)
    local s2 = luda.stream()
    s2:wait(stop)
    local back = d:get({ stream = s2 })
    s2:synchronize()
    for i = 1, #t, 4099 do assert.are.equal(f32(t[i]), back[i - 1]) end
    luda.cuda.synchronize()
  end))

  it("the default stream waits for another stream's event", on_gpu(function()
    local d = luda.default_stream()
    assert.are.equal("cuda:0", d.device)
    assert.matches("^<stream cuda:0", tostring(d))
    -- A large copy on s, then the default stream's own work on its result: ordered only
    -- by the event the default stream waits for.
    local s = luda.stream()
    local t = random_table({ 1 << 22 }, rand_float)
    local h = luda.array(t, "float32", { device = "cpu" })
    local done = luda.event({ timing = false })
    local x = luda.to_device(h, { stream = s })
    done:record(s)
    d:wait(done)
    local y = x * 2
    for i = 1, #t, 65537 do assert.are.equal(f32(t[i]) * 2, y[i - 1]) end
    -- A blocking stream needs no event: the default stream's later work waits for it.
    local b = luda.stream({ non_blocking = false })
    local x2 = luda.to_device(h, { stream = b })
    local y2 = x2 * 3
    for i = 1, #t, 65537 do assert.are.equal(f32(f32(t[i]) * 3), y2[i - 1]) end
  end))

  it("the cpu device has a default stream too", function()
    local d = luda.default_stream({ device = "cpu" })
    assert.are.equal("cpu", d.device)
    d:synchronize()
    assert.is_true(d:query())
    assert.are.equal("bad argument #1 to 'default_stream' (unknown option 'devcie'; expected device)",
      (tostring(support.error_of(function() luda.default_stream({ devcie = "cpu" }) end)):gsub("^[^:]*:%d+: ", "")))
    assert.are.equal("stream: option 'non_blocking' must be a boolean, got 1",
      (tostring(support.error_of(function() luda.stream({ device = "cpu", non_blocking = 1 }) end)):gsub("^[^:]*:%d+: ", "")))
    assert.are.equal("cpu", luda.stream({ device = "cpu", non_blocking = false }).device)
  end)

  it("device:use and with_device select the device of new arrays", on_gpu(function()
    luda.device("cpu"):use()
    assert.are.equal("cpu", luda.zeros(1).device)
    luda.device(0):use()
    assert.are.equal("cuda:0", luda.zeros(1).device)
    local dev = luda.with_device("cpu", function() return luda.zeros(1).device end)
    assert.are.equal("cpu", dev)
    assert.are.equal(luda.device(0), luda.current_device())
  end))

  describe("LUDA_DEVICE and the default device", function()
    local probe = "-e " .. support.quote("print(luda.current_device(), luda.zeros(1).device) print(luda.ones(2).device)")
    local function luda_with(device) return support.run_luda(probe, nil, false, device and { LUDA_DEVICE = device }) end

    it("LUDA_DEVICE=cpu chooses the cpu, quietly, on any machine", function()
      assert.are.same({ "<device cpu>\tcpu\ncpu\n", "", 0 }, { luda_with("cpu") })
    end)

    it("with no LUDA_DEVICE, the default is cuda:0, else the cpu with one note on stderr", function()
      local out, err, code = luda_with(nil)
      assert.are.same({ support.cpu_note(), 0 }, { err, code })
      if GPU then
        assert.truthy(out:find("^<device cuda:0: .->\tcuda:0\ncuda:0\n$"), out)
      else
        assert.are.equal("<device cpu>\tcpu\ncpu\n", out)
        assert.are.equal("luda: no CUDA device, running on the cpu device (LUDA_DEVICE=cpu chooses it without this note): " .. NO_GPU_REASON .. "\n", err)
      end
      -- Nothing that needs no default device gives the note.
      assert.are.same({ "true\n", "", 0 }, { support.run_luda("-e " .. support.quote("print(luda.zeros(1, nil, {device = 'cpu'}).device == 'cpu')")) })
    end)

    it("LUDA_DEVICE=cuda chooses cuda:0, and says why it cannot without a GPU", function()
      local out, err, code = luda_with("cuda")
      if GPU then
        assert.are.same({ "", 0 }, { err, code })
        assert.truthy(out:find("^<device cuda:0: .->\tcuda:0\ncuda:0\n$"), out)
      else
        assert.are.same({ "", 1 }, { out, code })
        assert.truthy(err:find("^luda: %(command line 1%):1: LUDA_DEVICE=cuda: no CUDA device: " .. NO_GPU_REASON:gsub("%p", "%%%0") .. "\nstack traceback:\n"), err)
      end
    end)

    it("a malformed or missing LUDA_DEVICE is an error naming the variable", function()
      local out, err, code = luda_with("gpu")
      assert.are.same({ "", 1 }, { out, code })
      assert.truthy(err:find("^luda: %(command line 1%):1: LUDA_DEVICE=gpu: invalid device 'gpu': expected 'cpu', 'cpu:N', 'cuda' or 'cuda:N'\nstack traceback:\n"), err)
      out, err, code = luda_with("cuda:99")
      assert.are.same({ "", 1 }, { out, code })
      local why = GPU and ("no CUDA device cuda:99: this machine has %d ("):format(NGPU) or ("no CUDA device: " .. NO_GPU_REASON .. "\n")
      assert.truthy(err:find("^luda: %(command line 1%):1: LUDA_DEVICE=cuda:99: " .. why:gsub("%p", "%%%0")), err)
    end)
  end)

  it("copies between two GPUs (peer)", on_gpu(function()
    local t = random_table({ 64, 33 }, rand_float)
    local a = luda.array(t, "float64", { device = "cuda:0" })
    local b = a:to("cuda:1")
    assert.are.equal("cuda:1", b.device)
    assert.are.same(t, b:totable())
    local c = b:slice("::2"):to(luda.device(0))
    assert.are.equal("cuda:0", c.device)
    for i = 0, 31 do assert.are.same(t[2 * i + 1], c[i]:totable()) end
    assert.are.equal("cuda:1", luda.with_device(1, function() return luda.zeros(3).device end))
    local s1 = luda.stream({ device = 1 })
    assert.are.equal("cuda:1", s1.device)
  end, 2))
end)

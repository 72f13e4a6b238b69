-- Several cpu devices: ctest runs this spec with LUDA_CPU_DEVICES=3, so that cpu, cpu:1 and
-- cpu:2 exist. Arrays made on cpu:1 and cpu:2 (constructors, every kind of operation) are
-- checked against plain-Lua references on random data, and each result for its device;
-- copies between cpu devices; the errors of mixed and missing devices; devices, streams and
-- the default device. Without the variable (busted run by hand) the tests are pending.
local luda = require "luda"
local support = require "support"
local hostref = require "hostref"

local raises = hostref.raises
local NGPU = luda.cuda.device_count()
local DEVICES = { "cpu:1", "cpu:2" }

-- Runs body when this process has the three cpu devices, else marks the test pending.
local function with_three(body)
  return function()
    if os.getenv("LUDA_CPU_DEVICES") ~= "3" then
      pending("needs LUDA_CPU_DEVICES=3 in the environment (ctest sets it for this spec)")
    else
      body()
    end
  end
end

-- A random float64 host array and its ndarray on `device`.
local function random_on(device, shape, lo, hi)
  local h = hostref.uniform(shape, lo or -10, hi or 10)
  return h, luda.array(hostref.nested(h), "float64", { device = device })
end

-- Checks x's device and its values against the host array h.
local function check_on(device, x, h, ok, what)
  assert.are.equal(device, x.device, what)
  hostref.check(x, h, ok or hostref.exact, what)
end

-- A sum's tolerance: a few float64 roundings of the sum of |x|.
local function sum_ok(h, axes)
  local scale = hostref.abs_sum(h, axes)
  return hostref.within(function(k) return 1e-13 * scale.data[k] end)
end

describe("several cpu devices", function()
  before_each(function() math.randomseed(20240531) end)

  it("lists every CUDA device, then cpu, cpu:1 and cpu:2", with_three(function()
    local list = luda.devices()
    assert.are.equal(NGPU + 3, #list)
    for i = 1, NGPU do assert.are.equal("cuda", list[i].kind) end
    for k = 0, 2 do
      local d = list[NGPU + 1 + k]
      assert.are.equal("cpu", d.kind)
      assert.are.equal(k, d.index)
      local name = k == 0 and "cpu" or ("cpu:" .. k)
      assert.are.equal(name, d.name)
      assert.are.equal("<device " .. name .. ">", tostring(d))
      assert.are.equal(luda.device(name), d)
      assert.are.equal(luda.device("cpu:" .. k), d)
      assert.is_nil(d.arch)
    end
    assert.are_not.equal(luda.device("cpu:1"), luda.device("cpu"))
    assert.are_not.equal(luda.device("cpu:1"), luda.device("cpu:2"))
  end))

  it("constructors place arrays on cpu:1 and cpu:2", with_three(function()
    for _, D in ipairs(DEVICES) do
      local opts = { device = D }
      check_on(D, luda.zeros({ 3, 4 }, "int32", opts), hostref.fill({ 3, 4 }, function() return 0 end), nil, "zeros")
      check_on(D, luda.ones(5, "float32", opts), hostref.fill({ 5 }, function() return 1 end), nil, "ones")
      check_on(D, luda.arange(2, 40, 3, "int64", opts), hostref.fill({ 13 }, function(k) return 2 + 3 * (k - 1) end), nil,
               "arange")
      check_on(D, luda.eye(3, opts), hostref.fill({ 3, 3 }, function(k) return (k - 1) % 4 == 0 and 1 or 0 end), nil, "eye")
      local h = hostref.integers({ 4, 6 }, -1000, 1000)
      check_on(D, luda.array(hostref.nested(h), "int64", opts), h, nil, "array")
      assert.are.equal(D, luda.empty({ 2, 2 }, "float64", opts).device)
      local r = luda.random.random({ 50, 3 }, "float64", { device = D, seed = 17 })
      assert.are.equal(D, r.device)
      -- The same seed gives the same values on every device.
      hostref.check(r, hostref.read(luda.random.random({ 50, 3 }, "float64", { device = "cpu", seed = 17 })), hostref.exact,
                    "random")
      for _, v in ipairs(hostref.read(r).data) do assert.is_true(v >= 0 and v < 1) end
      -- The current device decides where arrays go without a device option.
      local made = luda.with_device(D, function() return luda.arange(4) end)
      check_on(D, made, hostref.fill({ 4 }, function(k) return k - 1 end), nil, "arange on the current device")
    end
  end))

  it("elementwise math, kinds and reductions run where their arrays are", with_three(function()
    local vectorized = luda.vectorize(function(a, b) return a * b - 1 end)
    local kernel = luda.elementwise("T x, T y", "T z", "z = x * y + x", "mul_add")
    local sumsq = luda.reduction("T x", "T y", "x * x", "a + b", "y = a", "0", "sumsq")
    local fused = luda.fuse(function(a, b) return luda.sum(a * b + 1) end)
    for _, D in ipairs(DEVICES) do
      local ha, a = random_on(D, { 6, 7 })
      local hb, b = random_on(D, { 6, 7 })
      check_on(D, a + b, hostref.map(function(x, y) return x + y end, ha, hb), nil, "a + b")
      check_on(D, a * 2.5 - b, hostref.map(function(x, y) return x * 2.5 - y end, ha, hb), nil, "a * 2.5 - b")
      check_on(D, luda.maximum(a, b), hostref.map(math.max, ha, hb), nil, "maximum")
      check_on(D, luda.abs(a), hostref.map(math.abs, ha), nil, "abs")
      check_on(D, luda.sin(a), hostref.map(math.sin, ha), hostref.rel(1e-15, 1e-300), "sin")
      check_on(D, luda.sqrt(luda.abs(a)), hostref.map(function(x) return math.sqrt(math.abs(x)) end, ha), nil, "sqrt")
      -- The host compiler may contract a * b - 1 into one fused multiply-add.
      local fma_ok = hostref.rel(1e-15, 1)
      check_on(D, vectorized(a, b), hostref.map(function(x, y) return x * y - 1 end, ha, hb), fma_ok, "vectorize")
      check_on(D, kernel(a, b), hostref.map(function(x, y) return x * y + x end, ha, hb), fma_ok, "elementwise")
      check_on(D, a:sum(), hostref.sum(ha), sum_ok(ha), "sum")
      check_on(D, luda.sum(a, 1), hostref.sum(ha, 1), sum_ok(ha, 1), "sum over axis 1")
      check_on(D, a:sum(-1, { keepdims = true }), hostref.sum(ha, -1, true), sum_ok(ha, -1), "sum over the last axis")
      check_on(D, a:max(2), hostref.reduce(ha, 2, false, function() return -math.huge end, function(m, v) return math.max(m, v) end), nil, "max")
      local hsq = hostref.map(function(x) return x * x end, ha)
      check_on(D, sumsq(a, { axis = 2 }), hostref.sum(hsq, 2), sum_ok(hsq, 2), "reduction kind")
      local hab = hostref.map(function(x, y) return x * y + 1 end, ha, hb)
      check_on(D, fused(a, b), hostref.sum(hab), sum_ok(hab), "fuse")
      -- An output given on the device is written there.
      local out = luda.empty({ 6, 7 }, "float64", { device = D })
      assert.are.equal(out, luda.add(a, b, { out = out }))
      check_on(D, out, hostref.map(function(x, y) return x + y end, ha, hb), nil, "add into out")
    end
  end))

  it("compiles code for the cpu once, for every cpu device", with_three(function()
    local f = luda.vectorize(function(a, b) return a * 3 + b end)
    local k = luda.cuda.jit(function(x, out)
      local i = luda.cuda.grid(1)
      if i < out.size then out[i] = x[i] + 1 end
    end)
    for _, D in ipairs({ "cpu", "cpu:1", "cpu:2", "cpu:1" }) do
      local h, x = random_on(D, { 64 })
      check_on(D, f(x, x), hostref.map(function(v) return v * 3 + v end, h), hostref.rel(1e-15, 1), "vectorize on " .. D)
      local out = luda.empty(64, "float64", { device = D })
      k[{ 2, 32 }](x, out)
      check_on(D, out, hostref.map(function(v) return v + 1 end, h), nil, "cuda.jit on " .. D)
    end
    for what, stats in pairs({ vectorize = f:stats(), ["cuda.jit"] = k:stats() }) do
      assert.are.equal(4, stats.calls, what)
      assert.are.equal(1, stats.specializations, what)
      assert.are.equal(1, stats.loads, what)
    end
  end))

  it("kernels, raw kernels and graphs run on cpu:N arrays", with_three(function()
    local cuda = luda.cuda
    local axpy = cuda.jit(function(a, x, y, out)
      local i = cuda.grid(1)
      if i < out.size then out[i] = a * x[i] + y[i] end
    end)
    local twice = luda.raw_kernel([[
      extern "C" __global__ void twice(const double* x, double* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = 2 * x[i];
      }]], "twice")
    for _, D in ipairs(DEVICES) do
      local hx, x = random_on(D, { 100 })
      local hy, y = random_on(D, { 100 })
      local out = luda.zeros(100, "float64", { device = D })
      axpy[{ 4, 32 }](3, x, y, out)
      check_on(D, out, hostref.map(function(u, v) return 3 * u + v end, hx, hy), nil, "cuda.jit")
      local doubled = luda.empty(100, "float64", { device = D })
      twice(4, 32, { x, doubled, 100 })
      check_on(D, doubled, hostref.map(function(u) return 2 * u end, hx), nil, "raw_kernel")
      local g = luda.graph(function(p, q) return luda.sum(p * q, 1) + p[{ 0 }] end, x:reshape(10, 10), y:reshape(10, 10))
      local r = g(x:reshape(10, 10), y:reshape(10, 10))
      local hpq = hostref.map(function(u, v) return u * v end, { shape = { 10, 10 }, data = hx.data },
                              { shape = { 10, 10 }, data = hy.data })
      local want = hostref.map(function(s, f) return s + f end, hostref.sum(hpq, 1),
                               { shape = { 10 }, data = { table.unpack(hx.data, 1, 10) } })
      check_on(D, r, want, sum_ok(hpq, 1), "graph")
    end
  end))

  it("matmul, linear algebra, sort and scans run on cpu:N", with_three(function()
    for _, D in ipairs(DEVICES) do
      local ha, a = random_on(D, { 5, 4 })
      local hb, b = random_on(D, { 4, 3 })
      local want = hostref.fill({ 5, 3 }, function(k)
        local i, j = (k - 1) // 3, (k - 1) % 3
        local s = 0
        for t = 0, 3 do s = s + ha.data[i * 4 + t + 1] * hb.data[t * 3 + j + 1] end
        return s
      end)
      check_on(D, luda.matmul(a, b), want, hostref.within(function() return 1e-12 end), "matmul")
      check_on(D, a:dot(b), want, hostref.within(function() return 1e-12 end), "dot")
      local _, s = random_on(D, { 4, 4 })
      local spd = luda.matmul(s, s.T) + luda.eye(4, { device = D }) * 4
      local x = luda.linalg.solve(spd, luda.ones(4, "float64", { device = D }))
      assert.are.equal(D, x.device)
      hostref.check(luda.matmul(spd, x), hostref.fill({ 4 }, function() return 1 end), hostref.within(function() return 1e-9 end),
                    "solve")
      assert.are.equal(D, luda.linalg.inv(spd).device)
      assert.are.equal(D, luda.linalg.cholesky(spd).device)
      assert.are.equal(D, luda.linalg.norm(spd).device)
      local hv, v = random_on(D, { 300 })
      local sorted = { table.unpack(hv.data) }
      table.sort(sorted)
      check_on(D, luda.sort(v), { shape = { 300 }, data = sorted }, nil, "sort")
      local order = luda.argsort(v)
      assert.are.equal(D, order.device)
      check_on(D, v[order], { shape = { 300 }, data = sorted }, nil, "v[argsort(v)]")
      local running, acc = {}, 0
      for k, e in ipairs(hv.data) do acc = acc + e; running[k] = acc end
      check_on(D, luda.cumsum(v), { shape = { 300 }, data = running }, hostref.within(function() return 1e-9 end), "cumsum")
      assert.are.equal(D, luda.unique(luda.floor(v)).device)
    end
  end))

  it("indexing reads and writes on cpu:N", with_three(function()
    for _, D in ipairs(DEVICES) do
      local h, x = random_on(D, { 6, 5 })
      local function at(i, j) return h.data[i * 5 + j + 1] end
      check_on(D, x["1:5:2, ::-1"], hostref.fill({ 2, 5 }, function(k)
        local r, c = (k - 1) // 5, (k - 1) % 5
        return at(1 + 2 * r, 4 - c)
      end), nil, "slice")
      local rows = luda.array({ 4, 0, 4, 2 }, "int64", { device = D })
      check_on(D, x[rows], hostref.fill({ 4, 5 }, function(k)
        local r, c = (k - 1) // 5, (k - 1) % 5
        return at(({ 4, 0, 4, 2 })[r + 1], c)
      end), nil, "x[rows]")
      local positive = {}
      for _, v in ipairs(h.data) do if v > 0 then positive[#positive + 1] = v end end
      check_on(D, x[luda.greater(x, 0)], { shape = { #positive }, data = positive }, nil, "x[x > 0]")
      check_on(D, x:take({ 7, 3 }), { shape = { 2 }, data = { h.data[8], h.data[4] } }, nil, "take")
      assert.are.equal(at(2, 3), x[2][3])
      -- Writes: a table, an array of another cpu device, a number.
      local y = x:copy()
      y[{ 0 }] = { 1, 2, 3, 4, 5 }
      y["1:3, 0"] = luda.array({ -1, -2 }, "float64", { device = "cpu" })
      y[luda.greater(y, 9)] = 9
      local want = hostref.fill({ 6, 5 }, function(k)
        local r, c = (k - 1) // 5, (k - 1) % 5
        local v = at(r, c)
        if r == 0 then v = c + 1 elseif (r == 1 or r == 2) and c == 0 then v = -r end
        return v > 9 and 9 or v
      end)
      check_on(D, y, want, nil, "after writes")
      check_on(D, x, h, nil, "the source of the copy is unchanged")
    end
  end))

  it("astype, copies and to keep or move the device", with_three(function()
    for _, D in ipairs(DEVICES) do
      local h, x = random_on(D, { 3, 8 }, -100, 100)
      check_on(D, x:astype("int32"), hostref.map(function(v) return math.tointeger(v < 0 and math.ceil(v) or math.floor(v)) end, h),
               nil, "astype")
      check_on(D, x:copy(), h, nil, "copy")
      check_on(D, x.T:copy(), hostref.read(x.T), nil, "copy of a transpose")
      local same = x:to(D)  -- x itself: a write through it is a write to x
      same[{ 0, 0 }] = 777
      assert.are.equal(777, x[0][0])
      same[{ 0, 0 }] = h.data[1]
      for _, other in ipairs({ "cpu", "cpu:1", "cpu:2" }) do
        if other ~= D then
          local y = x:to(other)
          check_on(other, y, h, nil, "to " .. other)
          y[{ 0, 0 }] = 12345
          check_on(D, x, h, nil, "x after writing its copy on " .. other)
          check_on(other, x.T:to(other), hostref.read(x.T), nil, "a transpose to " .. other)
          check_on(other, x:to(luda.device(other)), h, nil, "to a device object")
        end
      end
      assert.are.equal("cpu", x:get().device)  -- copy_to_host: the host's array
      check_on(D, luda.cuda.to_device(x, { device = D }), h, nil, "to_device")
      assert.are.equal(tostring(x:to("cpu")), tostring(x))
    end
  end))

  it("refuses work on arrays of two cpu devices, naming each", with_three(function()
    local x = luda.arange(4, "float64", { device = "cpu:1" })
    local y = luda.arange(4, "float64", { device = "cpu:2" })
    local z = luda.arange(4, "float64", { device = "cpu" })
    raises("ufunc 'add' got arrays on cpu:1 (x1) and cpu:2 (x2); put them on one device (x2:to(\"cpu:1\"))",
           function() return x + y end)
    raises("ufunc 'multiply' got arrays on cpu (x1) and cpu:1 (x2); put them on one device (x2:to(\"cpu\"))",
           function() return luda.multiply(z, x) end)
    local f = luda.vectorize(function(a, b) return a + b end)
    raises("vectorize 'f' got arrays on cpu:2 (a) and cpu:1 (b); put them on one device (b:to(\"cpu:2\"))",
           function() return f(y, x) end)
    raises("ufunc 'add' got arrays on cpu:1 (x1, x2) and cpu (out); put them on one device (out:to(\"cpu:1\"))",
           function() return luda.add(x, x, { out = z }) end)
    local k = luda.cuda.jit(function(a, out) out[0] = a[0] end)
    raises("kernel 'k' got arrays on cpu:1 (a) and cpu:2 (out); put them on one device (out:to(\"cpu:1\"))",
           function() k[{ 1, 1 }](x, y) end)
  end))

  it("refuses devices past the count, saying how to have them", with_three(function()
    local why = "no cpu device cpu:3: LUDA_CPU_DEVICES gives 3 (cpu:0 to cpu:2); start the process with LUDA_CPU_DEVICES=4"
    raises(why, function() return luda.zeros(3, nil, { device = "cpu:3" }) end)
    raises(why, function() return luda.device("cpu:3") end)
    raises(why, function() return luda.arange(3, nil, { device = "cpu:1" }):to("cpu:3") end)
    raises(why, function() return luda.stream({ device = "cpu:3" }) end)
    raises(why, function() return luda.event({ device = "cpu:3" }) end)
    raises(why, function() return luda.with_device("cpu:3", function() end) end)
    raises("no cpu device cpu:9: LUDA_CPU_DEVICES gives 3 (cpu:0 to cpu:2); start the process with LUDA_CPU_DEVICES=10",
           function() return luda.array({ 1 }, nil, { device = "cpu:9" }) end)
  end))

  it("streams, events and the current device of cpu:N", with_three(function()
    local s = luda.stream({ device = "cpu:2" })
    assert.are.equal("cpu:2", s.device)
    assert.are.equal("<stream cpu:2>", tostring(s))
    local e = luda.event({ device = "cpu:2" })
    assert.are.equal("<event cpu:2>", tostring(e))
    e:record(s)
    e:record()
    e:synchronize()
    assert.is_true(s:query())
    s:synchronize()
    local h, x = random_on("cpu:2", { 40 })
    local y = luda.multiply(x, 3, { stream = s })
    check_on("cpu:2", y, hostref.map(function(v) return 3 * v end, h), nil, "a launch on a cpu:2 stream")
    raises("an event of cpu:2 cannot record work of a stream of cpu:1: create the event on the stream's device",
           function() e:record(luda.stream({ device = "cpu:1" })) end)
    local before = luda.current_device()
    luda.with_device("cpu:1", function()
      assert.are.equal(luda.device("cpu:1"), luda.current_device())
      assert.are.equal("cpu:1", luda.stream().device)
      assert.are.equal("cpu:1", luda.event().device)
      luda.cuda.synchronize()
    end)
    assert.are.equal(before, luda.current_device())
    luda.device("cpu:1"):synchronize()
    raises("memory_info: cpu:1 uses host memory; memory_info is for CUDA devices",
           function() luda.device("cpu:1"):memory_info() end)
  end))

  it("LUDA_DEVICE=cpu:N is the default device; a malformed LUDA_CPU_DEVICES is an error naming it", with_three(function()
    local script = support.quote("print(luda.current_device(), luda.zeros(2).device, #luda.devices())")
    local out, err, code = support.run_luda("-e " .. script, nil, false, { LUDA_DEVICE = "cpu:2" })
    assert.are.same({ ("<device cpu:2>\tcpu:2\t%d\n"):format(NGPU + 3), "", 0 }, { out, err, code })
    out, err, code = support.run_luda("-e " .. script, nil, false, { LUDA_DEVICE = "cpu:1", LUDA_CPU_DEVICES = "2" })
    assert.are.same({ ("<device cpu:1>\tcpu:1\t%d\n"):format(NGPU + 2), "", 0 }, { out, err, code })
    -- The banner names the default device and the number of cpu devices.
    out, err, code = support.run_luda("-v", nil, false, { LUDA_DEVICE = "cpu:2" })
    assert.are.same({ "", 0 }, { err, code })
    local device = out:match("^luda [^\n]* \u{2014} (.-)\n$")
    assert.is_truthy(device and (device:match("^cpu:2 %(no CUDA device: .+%); 3 cpu devices$") or
                                 device == "cpu:2; 3 cpu devices"), out)
    out, err, code = support.run_luda("-e " .. script, nil, false, { LUDA_DEVICE = "cpu:3" })
    assert.are.same({ "", 1 }, { out, code })
    assert.truthy(err:find("^luda: %(command line 1%):1: LUDA_DEVICE=cpu:3: no cpu device cpu:3: LUDA_CPU_DEVICES gives 3 " ..
                           "%(cpu:0 to cpu:2%); start the process with LUDA_CPU_DEVICES=4\nstack traceback:\n"), err)
    out, err, code = support.run_luda("-e " .. script, nil, false, { LUDA_DEVICE = "cpu", LUDA_CPU_DEVICES = "0" })
    assert.are.same({ "", 1 }, { out, code })
    assert.truthy(err:find("^luda: %(command line 1%):1: LUDA_CPU_DEVICES=0: expected a whole number of cpu devices from 1 to " ..
                           "1024: set LUDA_CPU_DEVICES=2 for cpu:0 and cpu:1, or unset it for the one cpu device\nstack " ..
                           "traceback:\n"), err)
  end))
end)

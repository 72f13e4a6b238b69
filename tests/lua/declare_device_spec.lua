-- CUDA C++ device functions called from Lua kernels (Numba's cuda.declare_device and
-- link=), on each device: the cpu target compiles the same linked source with the host
-- compiler. Values against plain Lua on random inputs; errors pinned.
local luda = require "luda"
local support = require "support"
local on_devices = support.device_tests(_ENV)
local here, error_of, f32 = support.here, support.error_of, support.f32
local cuda = luda.cuda

local DIR = os.tmpname() .. "_link"
os.execute("mkdir -p " .. support.quote(DIR))

local function file(name, text)
  local path = DIR .. "/" .. name
  support.write_file(path, text)
  return path
end

-- Numba's documented example, with C's ABI: the result is returned.
local FUNCTIONS = file("functions.cu", [[
// Device functions in CUDA C++, linked into Lua kernels.
extern "C" __device__ float mul_add(float a, float b, float c) {
  return a * b + c;
}
__device__ long long collatz_steps(long long n) {  // C++ linkage: the declaration makes it C
  long long steps = 0;
  while (n != 1 && steps < 1000) { n = (n % 2 == 0) ? n / 2 : 3 * n + 1; ++steps; }
  return steps;
}
extern "C" __device__ bool in_unit_circle(double x, double y) { return x * x + y * y <= 1.0; }
]])

-- A block-wide sum through shared memory and barriers: the cpu target's threads of a
-- block must interleave for it.
local BLOCK_SUM = [[
extern "C" __device__ float block_sum(float v) {
  __shared__ float partial[64];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  float total = partial[0];
  __syncthreads();
  return total;
}
]]

local mul_add = cuda.declare_device("mul_add", "float32(float32, float32, float32)")
local collatz_steps = cuda.declare_device("collatz_steps", "int64(int64)")
local in_unit_circle = cuda.declare_device("in_unit_circle", "bool(float64, float64)")
local block_sum = cuda.declare_device("block_sum", "float32(float32)", { link = BLOCK_SUM })

local function collatz(n)
  local steps = 0
  while n ~= 1 and steps < 1000 do
    if n % 2 == 0 then n = n // 2 else n = 3 * n + 1 end
    steps = steps + 1
  end
  return steps
end

describe("cuda.declare_device", function()
  before_each(function() math.randomseed(9191) end)

  it("is a value with its name and signature, callable only in kernels", function()
    assert.are.equal("mul_add", mul_add.name)
    assert.are.equal("float32(float32, float32, float32)", mul_add.signature)
    assert.are.equal("<device function 'mul_add' float32(float32, float32, float32)>", tostring(mul_add))
    local where, err = here(), error_of(function() return mul_add(1, 2, 3) end)
    assert.are.equal(where .. "'mul_add' is a CUDA C++ device function (declare_device); call it inside a cuda.jit kernel", err)
  end)

  on_devices("calls CUDA C++ functions linked from a file, converting the arguments to the signature", function(device)
    local k = cuda.jit(function(x, y, n, out, steps, inside)
      local i = cuda.grid(1)
      if i < #x then
        out[i] = mul_add(x[i], y[i], 0.5)              -- a Lua number converts to float32
        steps[i] = collatz_steps(n[i])                   -- int32 elements convert to int64
        inside[i] = in_unit_circle(x[i], y[i])           -- float32 to float64
      end
    end, { link = { FUNCTIONS } })
    local N = 500
    local xs, ys, ns = {}, {}, {}
    for i = 1, N do
      xs[i], ys[i] = f32(math.random() * 2.4 - 1.2), f32(math.random() * 2.4 - 1.2)
      ns[i] = math.random(1, 100000)
    end
    local out, steps, inside = luda.empty(N, "float32"), luda.empty(N, "int64"), luda.empty(N, "bool")
    k[{ (N + 127) // 128, 128 }](luda.array(xs, "float32"), luda.array(ys, "float32"), luda.array(ns, "int32"), out, steps, inside)
    local o, s, c = out:totable(), steps:totable(), inside:totable()
    for i = 1, N do
      local want = f32(f32(xs[i] * ys[i]) + 0.5)
      assert.are.near(want, o[i], 1e-6 * (1 + math.abs(want)))
      assert.are.equal(collatz(ns[i]), s[i])
      assert.are.equal(xs[i] * xs[i] + ys[i] * ys[i] <= 1.0, c[i])
    end
  end)

  on_devices("links a source given with the declaration, whose barriers synchronize the block", function(device)
    local k = cuda.jit(function(x, sums)
      local i = cuda.grid(1)
      local total = block_sum(x[i])
      if cuda.threadIdx.x == 0 then sums[cuda.blockIdx.x] = total end
    end)
    local blocks, T = 6, 64
    local xs = {}
    for i = 1, blocks * T do xs[i] = math.random(-50, 50) end
    local sums = luda.zeros(blocks, "float32")
    k[{ blocks, T }](luda.array(xs, "float32"), sums)
    local want = {}
    for b = 1, blocks do
      local s = 0
      for t = 1, T do s = s + xs[(b - 1) * T + t] end
      want[b] = s
    end
    assert.are.same(want, sums:totable())
  end)

  on_devices("passes arrays as pointers to their elements: rows, shared arrays", function(device)
    local scale_row = cuda.declare_device("scale_row", "float32(float32[:], int32, float32)", { link = [[
extern "C" __device__ float scale_row(float* row, int n, float a) {
  float s = 0;
  for (int k = 0; k < n; ++k) { row[k] *= a; s += row[k]; }
  return s;
}]] })
    local call_line = debug.getinfo(1, "l").currentline + 3  -- the line of scale_row(m[i], ...)
    local rows = cuda.jit(function(m, sums)
      local i = cuda.grid(1)
      if i < #m then sums[i] = scale_row(m[i], m.shape[2], 2) end
    end)
    local R, C = 37, 5
    local t = support.random_table({ R, C }, function() return math.random(-100, 100) end)
    local m, sums = luda.array(t, "float32"), luda.empty(R, "float32")
    rows[{ 2, 32 }](m, sums)
    local got, s = m:totable(), sums:totable()
    for i = 1, R do
      local want = 0
      for j = 1, C do
        assert.are.equal(2 * t[i][j], got[i][j])
        want = want + 2 * t[i][j]
      end
      assert.are.equal(want, s[i])
    end
    local block = cuda.jit(function(x, out)
      local tile = cuda.shared.array({ 8 }, "float32")
      local j = cuda.threadIdx.x
      tile[j] = x[j]
      cuda.syncthreads()
      if j == 0 then out[0] = scale_row(tile, 8, 0.5) end
    end)
    local xs = support.random_table({ 8 }, function() return math.random(-100, 100) end)
    local out = luda.empty(1, "float32")
    block[{ 1, 8 }](luda.array(xs, "float32"), out)
    local want = 0
    for j = 1, 8 do want = want + xs[j] / 2 end
    assert.are.equal(want, out:item())
    -- a strided row (a transposed matrix's) and another dtype are refused at the call
    local line = call_line
    local err = error_of(function() rows[{ 2, 32 }](m.T, sums) end)
    assert.truthy(err:find(":" .. line .. ":%d+: type error: argument 1 of 'scale_row' is passed as a pointer to its " ..
      "elements, so it must be a C%-contiguous array; this one may be strided %(pass a contiguous one, x:copy%(%) if need be%)"))
    err = error_of(function() rows[{ 2, 32 }](luda.zeros({ R, C }, "float64"), sums) end)
    assert.truthy(err:find(":" .. line .. ":%d+: type error: argument 1 of 'scale_row' is array%(float32, 1d, A%) " ..
      "%(float32%(float32%[:%], int32, float32%)%), got array%(float64, 1d, C%)"))
  end)

  on_devices("takes source text as a link, and each kernel its own", function(device)
    local scale = cuda.declare_device("scale_by", "float64(float64, int32)")
    local k1 = cuda.jit(function(x) x[0] = scale(x[0], 3) end,
      { link = 'extern "C" __device__ double scale_by(double v, int k) { return v * k; }' })
    local k2 = cuda.jit(function(x) x[0] = scale(x[0], 3) end,
      { link = { 'extern "C" __device__ double scale_by(double v, int k) { return v + k; }' } })
    local v = math.random() * 10
    local a, b = luda.array({ v }), luda.array({ v })
    k1[{ 1, 1 }](a)
    k2[{ 1, 1 }](b)
    assert.are.equal(v * 3, a:totable()[1])
    assert.are.equal(v + 3, b:totable()[1])
  end)

  on_devices("reports a linked file's compile error at its line", function(device)
    local bad = file("bad.cu", 'extern "C" __device__ float mul_add(float a, float b, float c) {\n  return a * b + undefined_thing;\n}\n')
    local k = cuda.jit(function(x) x[0] = mul_add(x[0], 1, 2) end, { link = bad })
    local x = luda.zeros(1, "float32")
    local where, err = here(), error_of(function() k[{ 1, 1 }](x) end)
    assert.are.equal(where .. bad .. ":2:", err:sub(1, #where + #bad + 3))
    assert.truthy(err:find("undefined_thing", 1, true))
    -- a definition that disagrees with the declared signature
    local wrong = file("wrong.cu", 'extern "C" __device__ double mul_add(double a, double b, double c) { return a * b + c; }\n')
    local k2 = cuda.jit(function(x) x[0] = mul_add(x[0], 1, 2) end, { link = { wrong } })
    where, err = here(), error_of(function() k2[{ 1, 1 }](x) end)
    assert.are.equal(where .. wrong .. ":1:", err:sub(1, #where + #wrong + 3))
    assert.truthy(err:find("mul_add", 1, true))
  end)

  it("compiles with NVRTC in one program with the kernel, no GPU needed", function()
    local k = cuda.jit(function(x, out)
      local i = cuda.grid(1)
      out[i] = mul_add(x[i], x[i], 1) + collatz_steps(i)
    end, { link = FUNCTIONS })
    local sig = "void(float32[:], float32[:])"
    local code = k:inspect("cuda", sig)
    local proto = 'extern "C" __device__ float mul_add(float, float, float);'
    assert.truthy(code:find(proto, 1, true))
    assert.truthy(code:find("#line 1 \"" .. FUNCTIONS .. "\"", 1, true) > code:find(proto, 1, true))
    assert.truthy(k:inspect("ptx", sig, { arch = "sm_90" }):find(".target sm_90", 1, true))
    local bad = file("bad_nvrtc.cu", 'extern "C" __device__ float mul_add(float a, float b, float c) {\n  return a * b + nothing_here;\n}\n')
    local k2 = cuda.jit(function(x) x[0] = mul_add(x[0], 1, 2) end, { link = bad })
    local where, err = here(), error_of(function() return k2:inspect("ptx", "void(float32[:])", { arch = "sm_90" }) end)
    assert.are.equal(where .. bad .. ':2:3: compile error: identifier "nothing_here" is undefined', err:match("^[^\n]*"))
  end)

  it("names what is missing or wrong where the kernel says it", function()
    local x = luda.zeros(2, "float32", { device = "cpu" })
    local where, err = here(), error_of(function() cuda.jit(function(a) a[0] = 1 end, { link = { DIR .. "/nothing.cu" } }) end)
    assert.are.equal(where .. "jit: cannot read the linked file '" .. DIR .. "/nothing.cu' (No such file or directory); " ..
      "link takes CUDA C++ files (.cu) or source text", err)
    local k = cuda.jit(function(a) a[0] = mul_add(a[0], a[1]) end, { link = FUNCTIONS })
    local line = debug.getinfo(1, "l").currentline - 1
    err = error_of(function() k[{ 1, 1 }](x) end)
    assert.truthy(err:find(":" .. line .. ":.-: type error: 'mul_add' takes 3 arguments %(float32%(float32, float32, float32%)%), got 2"))
    k = cuda.jit(function(a) a[0] = mul_add(a[0], a[1], a[0] > 0) end, { link = FUNCTIONS })
    line = debug.getinfo(1, "l").currentline - 1
    err = error_of(function() k[{ 1, 1 }](x) end)
    assert.truthy(err:find(":" .. line .. ":.-: type error: argument 3 of 'mul_add' is float32 %(float32%(float32, float32, float32%)%), got bool"))
    k = cuda.jit(function(a) a[0] = mul_add(a[0], 1, 2) end)
    line = debug.getinfo(1, "l").currentline - 1
    err = error_of(function() k[{ 1, 1 }](x) end)
    assert.truthy(err:find(":" .. line .. ":.-: name error: 'mul_add' is declared %(cuda.declare_device%) but no linked " ..
      "source defines 'mul_add'; give its CUDA source to the kernel, cuda.jit%(fn, {link = {\"file.cu\"}}%), or to " ..
      "the declaration, cuda.declare_device%(name, sig, {link = ...}%)"))
    k = cuda.jit(function(a) a[0] = mul_ad(a[0], 1, 2) end, { link = FUNCTIONS })
    line = debug.getinfo(1, "l").currentline - 1
    err = error_of(function() k[{ 1, 1 }](x) end)
    assert.truthy(err:find(":" .. line .. ":.-: name error: unknown name 'mul_ad'"))
    local v = luda.vectorize(function(a) return mul_add(a, a, a) end)
    line = debug.getinfo(1, "l").currentline - 1
    err = error_of(function() return v(x) end)
    assert.truthy(err:find(":" .. line .. ":.-: unsupported: 'mul_add' is a CUDA C%+%+ device function %(cuda.declare_device%), " ..
      "which cuda.jit kernels call; vectorize, elementwise, reduction and fuse bodies cannot"))
  end)

  it("checks the declaration", function()
    local where, err = here(), error_of(function() return cuda.declare_device("1f", "float32(float32)") end)
    assert.are.equal(where .. "declare_device: '1f' is not a C function name (letters, digits and _, not starting with a " ..
      "digit): declare the name the CUDA source defines", err)
    where, err = here(), error_of(function() return cuda.declare_device("f", "float32[:](float32)") end)
    assert.are.equal(where .. "signature:1:8: signature error: a signature's result is a scalar or void, not an array\n" ..
      "    float32[:](float32)\n           ^", err)
    where, err = here(), error_of(function() return cuda.declare_device("f", "float32(float32)", { link = 5 }) end)
    assert.are.equal(where .. "declare_device: option 'link' must be a file path, CUDA C++ source text or a table of " ..
      "them, got 5", err)
    where, err = here(), error_of(function() return cuda.declare_device("f", "float32(float32)", { lnk = "f.cu" }) end)
    assert.are.equal(where .. "bad argument #3 to 'declare_device' (unknown option 'lnk'; expected link)", err)
  end)
end)

-- Raw CUDA kernels and modules (CuPy's RawKernel / RawModule). Launch-syntax and argument
-- errors need no GPU; results are checked on each device: the cpu target always (the
-- sources use only what its prelude provides), a GPU when one is usable.
local luda = require "luda"
local support = require "support"
local on_devices = support.device_tests(_ENV)

-- Runs body when `need` CUDA devices are usable, else marks the test pending with why.
local function on_gpu(body, need)
  return function()
    local why = support.gpu_missing(need)
    if why then pending(why) else body() end
  end
end
local here, error_of, f32 = support.here, support.error_of, support.f32

local CPU = { device = "cpu" }

-- CuPy's RawKernel example.
local ADD = [[
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
]]

-- CuPy's RawModule example, with one kernel per extern "C" declaration.
local MODULE = [[
extern "C" __global__ void sum_ker(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) y[tid] = x1[tid] + x2[tid];
}
extern "C" __global__ void multiply_ker(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) y[tid] = x1[tid] * x2[tid];
}
]]

-- A scalar of each kind, dynamic shared memory, and a 2-D launch.
local AXPY = [[
extern "C" __global__ void axpy(double a, const double* x, double* y, long long n, bool negate) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) y[i] = (negate ? -a : a) * x[i] + y[i];
}
extern "C" __global__ void reverse_block(int* v) {
    extern __shared__ int buf[];
    int t = threadIdx.x;
    buf[t] = v[blockIdx.x * blockDim.x + t];
    __syncthreads();
    v[blockIdx.x * blockDim.x + t] = buf[blockDim.x - 1 - t];
}
extern "C" __global__ void index2d(int* out, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * width + x] = 1000 * y + x;
}
]]

local function random_f32(n)
  local t = {}
  for i = 1, n do t[i] = f32((math.random() - 0.5) * 100) end
  return t
end

describe("raw kernels", function()
  before_each(function() math.randomseed(4242) end)

  it("are objects with a name, a source and inspect", function()
    local k = luda.raw_kernel(ADD, "my_add")
    assert.are.equal("my_add", k.name)
    assert.are.equal(ADD, k.source)
    assert.are.equal(ADD, k:inspect("cuda"))
    assert.are.equal("<raw_kernel 'my_add'>", tostring(k))
    local ptx = k:inspect("ptx", { arch = "sm_90" })
    assert.truthy(ptx:find(".target sm_90", 1, true))
    assert.truthy(ptx:find(".entry my_add(", 1, true))
    local m = luda.raw_module(MODULE, { options = { "-DUNUSED=1" } })
    assert.are.equal(MODULE, m.source)
    local ptx80 = m:inspect("ptx", { arch = "sm_80" })
    assert.truthy(ptx80:find(".target sm_80", 1, true))
    assert.truthy(ptx80:find(".entry sum_ker(", 1, true))
    assert.truthy(ptx80:find(".entry multiply_ker(", 1, true))
    assert.are.equal("multiply_ker", m:get_function("multiply_ker").name)
  end)

  it("report a compile failure with the NVRTC log and the numbered source", function()
    local k = luda.raw_kernel('extern "C" __global__ void bad(float* y) { y[0] = undefined_name; }', "bad")
    local where = here(); local err = error_of(function() return k:inspect("ptx", { arch = "sm_90" }) end)
    assert.are.equal(where .. "NVRTC failed to compile", err:sub(1, #where + 23))
    assert.truthy(err:find('identifier "undefined_name" is undefined', 1, true))
    assert.truthy(err:find("   1 | extern \"C\" __global__ void bad", 1, true))
  end)

  it("name a kernel missing from the source", function()
    assert.are.equal(here() .. "no kernel named 'my_sub' in the source (its __global__ functions: my_add)", error_of(function() return luda.raw_kernel(ADD, "my_sub") end))
    local m = luda.raw_module(MODULE)
    local _, newlines = MODULE:gsub("\n", "")
    local lines = newlines + (MODULE:sub(-1) == "\n" and 0 or 1)
    assert.are.equal("<raw_module of " .. lines .. " lines of source>", tostring(m))
    assert.are.equal("<raw_module of 1 line of source>", tostring(luda.raw_module('extern "C" __global__ void k() {}')))
    assert.are.equal(here() .. "no kernel named 'sum' in the source (its __global__ functions: sum_ker, multiply_ker)", error_of(function() return m:get_function("sum") end))
  end)

  it("refuse a name that cannot name a kernel when the kernel is made", function()
    local hint = ": name a kernel as its source declares it, by a C identifier (letters, digits and _, not starting " ..
                 "with a digit), with its template arguments for a template kernel ('scale<float>')"
    -- kernels made by a macro, which luda cannot see: the name alone is judged
    local MACRO = '#define K(name) extern "C" __global__ void name(float* y) { y[0] = 1; }\nK(one)\n'
    for _, name in ipairs({ "1", "", "my add", "my_add(", "my_add<float", "my_add<float>>", "ns::", "a-b", "x\ny" }) do
      local shown = name:gsub("\n", "\\n")
      assert.are.equal(here() .. "'" .. shown .. "' is not a kernel name" .. hint, error_of(function() return luda.raw_kernel(MACRO, name) end))
      assert.are.equal(here() .. "'" .. shown .. "' is not a kernel name" .. hint, error_of(function() return luda.raw_module(ADD):get_function(name) end))
    end
    for _, name in ipairs({ "one", "_k2", "ns::inner::k", "scale<float>", "scale<float, 4>", "s<(N > 2)>", "s<a<b>>" }) do
      assert.are.equal(name, luda.raw_kernel(MACRO, name).name)
    end
  end)

  it("check the launch syntax before any device is needed", function()
    local k = luda.raw_kernel(ADD, "my_add")
    local x = luda.zeros(4, "float32", CPU)
    local hint = " (launch as k(grid, block, {args...}, {shared_mem=, stream=}))"
    assert.are.equal(here() .. "raw_kernel 'my_add': grid dimension x is 0: each grid and block dimension must be at least 1", error_of(function() k(0, 1, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': block dimension y is -2: each grid and block dimension must be at least 1", error_of(function() k(1, { 4, -2 }, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': grid must be a number or a table of 1 to 3 numbers, got a string" .. hint, error_of(function() k("10", 1, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': block must be a number or a table of 1 to 3 numbers, got a table of 4" .. hint, error_of(function() k(1, { 1, 1, 1, 1 }, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': grid must be a number or a table of 1 to 3 numbers, got a table of 0" .. hint, error_of(function() k({}, 1, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': block must be an integer, got 2.5", error_of(function() k(1, 2.5, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': block must be an integer, got nan", error_of(function() k(1, 0 / 0, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': grid[2] must be an integer, got 'a'", error_of(function() k({ 1, "a" }, 1, { x, x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': the arguments must be a table {x, y, ...}, got ndarray" .. hint, error_of(function() k(1, 1, x) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': unknown launch option 'shared'; expected shared_mem, stream", error_of(function() k(1, 1, { x, x, x }, { shared = 16 }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': option 'shared_mem' is -1 bytes; it must be between 0 and 4294967295", error_of(function() k(1, 1, { x, x, x }, { shared_mem = -1 }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': option 'stream' must be a stream (luda.stream()) or 0 for the default stream, got 's'", error_of(function() k(1, 1, { x, x, x }, { stream = "s" }) end))
  end)

  it("check the arguments against the parameter list", function()
    local k = luda.raw_kernel(ADD, "my_add")
    local x = luda.zeros(4, "float32", CPU)
    local d = luda.zeros(4, "float64", CPU)
    assert.are.equal(here() .. "raw_kernel 'my_add': argument 3 is a string; pass arrays, numbers, booleans or typed scalars (luda.int32(v))", error_of(function() k(1, 4, { x, x, "y" }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add' takes 3 arguments (x1, x2, y), got 2", error_of(function() k(1, 4, { x, x }) end))
    assert.are.equal(here() .. "raw_kernel 'my_add': argument 1 'x1' is 'const float* x1' but got a float64 array; pass a float32 array", error_of(function() k(1, 4, { d, x, x }) end))
  end)

  on_devices("add two 10x10 float32 arrays with either launch shape (CuPy's example)", function(device)
    local k = luda.raw_kernel(ADD, "my_add")
    for _, shape in ipairs({ { { 10 }, { 10 } }, { { 1 }, { 100 } }, { 1, 100 } }) do
      local a, b = random_f32(100), random_f32(100)
      local x1 = luda.array(a, "float32"):reshape(10, 10)
      local x2 = luda.array(b, "float32"):reshape(10, 10)
      local y = luda.zeros({ 10, 10 }, "float32")
      assert.are.equal(device == "cuda" and "cuda:0" or "cpu", y.device)
      k(shape[1], shape[2], { x1, x2, y })
      local got = y:totable()
      for i = 0, 99 do
        assert.are.equal(f32(a[i + 1] + b[i + 1]), got[i // 10 + 1][i % 10 + 1])
      end
    end
  end)

  on_devices("run sum_ker and multiply_ker from one module", function()
    local m = luda.raw_module(MODULE)
    local sum, mul = m:get_function("sum_ker"), m:get_function("multiply_ker")
    local N = 10
    local a, b = random_f32(N * N), random_f32(N * N)
    local x1 = luda.array(a, "float32"):reshape(N, N)
    local x2 = luda.array(b, "float32"):reshape(N, N)
    local y = luda.zeros({ N, N }, "float32")
    sum({ N }, { N }, { x1, x2, y, N * N })                 -- a Lua integer -> unsigned int
    local s = y:reshape(N * N):totable()
    mul({ N }, { N }, { x1, x2, y, luda.uint32(N * N) })   -- a typed scalar
    local p = y:reshape(N * N):totable()
    for i = 1, N * N do
      assert.are.equal(f32(a[i] + b[i]), s[i])
      assert.are.equal(f32(a[i] * b[i]), p[i])
    end
  end)

  -- The parameter types are the compiler's: the -D options, #if, macros, typedefs and
  -- template arguments decide them, on the cpu target as on a GPU.
  local TYPED = [[
#if USE_DOUBLE
typedef double T;
#else
typedef float T;
#endif
#define SCALE_PARAMS T* y, T a, int n
extern "C" __global__ void scale(SCALE_PARAMS) { int i = threadIdx.x; if (i < n) y[i] *= a; }
template <class U> __global__ void fill(U* y, U v) { y[threadIdx.x] = v; }
#define MAKE(name, V) extern "C" __global__ void name(long long* y) { y[threadIdx.x] = V; }
MAKE(seven, 7)
#if USE_DOUBLE
extern "C" __global__ void which(double* y) { y[threadIdx.x] = 2; }
#else
extern "C" __global__ void which(float* y) { y[threadIdx.x] = 1; }
#endif
]]

  on_devices("take the parameter types from the compiler: -D options, #if, macros, typedefs, templates", function()
    local h = {}
    for i = 1, 8 do h[i] = (math.random() - 0.5) * 100 end
    local double = luda.raw_module(TYPED, { options = { "-DUSE_DOUBLE=1" } })
    local y = luda.array(h, "float64")
    double:get_function("scale")(1, 8, { y, 0.1, 8 })  -- 0.1 is passed as a double, not rounded to float32
    local got = y:totable()
    for i = 1, 8 do assert.are.equal(h[i] * 0.1, got[i]) end
    local where = here(); local err = error_of(function() double:get_function("scale")(1, 8, { luda.zeros(8, "float32"), 0.1, 8 }) end)
    assert.are.equal(where .. "raw_kernel 'scale': argument 1 is 'double*' but got a float32 array; pass a float64 array", err)
    local y32 = luda.array(h, "float32")
    luda.raw_kernel(TYPED, "scale")(1, 8, { y32, 0.1, 8 })  -- float without the option
    got = y32:totable()
    for i = 1, 8 do assert.are.equal(f32(f32(h[i]) * f32(0.1)), got[i]) end

    local yi = luda.zeros(5, "int32")
    double:get_function("fill<int>")(1, 5, { yi, -3 })
    assert.are.same({ -3, -3, -3, -3, -3 }, yi:totable())
    where = here(); err = error_of(function() double:get_function("fill<int>")(1, 5, { yi, 2.5 }) end)
    assert.are.equal(where .. "raw_kernel 'fill<int>': argument 2 'v' is 'int v' but got a float 2.5; pass an integer", err)
    local seven = luda.zeros(3, "int64")
    double:get_function("seven")(1, 3, { seven })
    assert.are.same({ 7, 7, 7 }, seven:totable())
    local w = luda.zeros(2)
    double:get_function("which")(1, 2, { w })
    assert.are.same({ 2.0, 2.0 }, w:totable())
    -- defined in both arms of the #if: the text names no parameter
    where = here(); err = error_of(function() luda.raw_kernel(TYPED, "which")(1, 2, { w }) end)
    assert.are.equal(where .. "raw_kernel 'which': argument 1 is 'float*' but got a float64 array; pass a float32 array", err)
  end)

  -- Macros a CuPy user names with one capital letter (-DN=4, #define T float) reach luda's
  -- own text around the source (the cpu prelude, the parameter reflection): none of them
  -- may change it.
  on_devices("one-letter macros from -D options and #define leave luda's own text alone", function()
    local letters = { "A", "B", "C", "F", "I", "K", "M", "N", "P", "R", "T", "V" }
    local options = {}
    for k, c in ipairs(letters) do options[#options + 1] = ("-D%s=%d"):format(c, k) end
    local src = [[
#define T float
extern "C" __global__ void add(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + N + P * 100 + (float)(A + B + C + F + I + K + M + R + V) / 1000;
}
]]
    local h = {}
    for i = 1, 40 do h[i] = f32((math.random() - 0.5) * 100) end
    local y = luda.zeros(40, "float32")
    luda.raw_kernel(src, "add", { options = options })(2, 32, { luda.array(h, "float32"), y, 40 })
    local sum = 0
    for k, c in ipairs(letters) do if c ~= "N" and c ~= "P" and c ~= "T" then sum = sum + k end end
    local got = y:totable()
    for i = 1, 40 do assert.are.equal(f32(f32(f32(h[i] + 8) + 900) + f32(sum / 1000)), got[i], "element " .. i) end
  end)

  on_devices("pass floats, integers and booleans, dynamic shared memory, 2-D launches and streams", function()
    local m = luda.raw_module(AXPY, { options = { "--fmad=false" } })  -- no FMA: Lua's rounding
    local n = 1000
    local xs, ys = {}, {}
    for i = 1, n do xs[i], ys[i] = (math.random() - 0.5) * 10, (math.random() - 0.5) * 10 end
    local x, y = luda.to_device(xs), luda.to_device(ys)   -- on the current device
    local s = luda.stream()
    m:get_function("axpy")({ (n + 127) // 128 }, { 128 }, { 2.5, x, y, n, true }, { stream = s })
    s:synchronize()
    local got = y:totable()
    for i = 1, n do assert.are.equal(-2.5 * xs[i] + ys[i], got[i]) end

    local v = luda.arange(256, "int32")
    m:get_function("reverse_block")(4, 64, { v }, { shared_mem = 64 * 4 })
    local r = v:totable()
    for i = 0, 255 do assert.are.equal((i // 64) * 64 + 63 - i % 64, r[i + 1]) end

    local out = luda.zeros({ 8, 12 }, "int32")
    m:get_function("index2d")({ 3, 2 }, { 4, 4 }, { out, 12 })
    local o = out:totable()
    for yy = 0, 7 do for xx = 0, 11 do assert.are.equal(1000 * yy + xx, o[yy + 1][xx + 1]) end end
  end)

  -- Float to integer out of range is undefined in C++; the GPU's conversions saturate
  -- (PTX cvt.rzi / cvt.rni: towards zero or to nearest even, clipped to the range), and
  -- the cpu prelude's intrinsics compute the same. NaN gives what an H100 gives: 0 from a
  -- float to 32 bits, the value with only the top bit set otherwise.
  on_devices("float-to-integer intrinsics saturate, and convert NaN as the GPU does", function()
    local k = luda.raw_kernel([[
extern "C" __global__ void convert(const double* x, const float* f, int* i32, unsigned* u32, long long* i64,
                                   unsigned long long* u64, int* fi32, unsigned* fu32, long long* fi64, int* rn, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  i32[k] = __double2int_rz(x[k]); u32[k] = __double2uint_rz(x[k]);
  i64[k] = __double2ll_rz(x[k]); u64[k] = __double2ull_rz(x[k]);
  fi32[k] = __float2int_rz(f[k]); fu32[k] = __float2uint_rz(f[k]);
  fi64[k] = __float2ll_rz(f[k]) + (long long)__float2ull_rz(f[k]) * 0; rn[k] = __float2int_rn(f[k]);
}]], "convert")
    local values = { 0 / 0, -(0 / 0), 1 / 0, -1 / 0, 1e300, -1e300, 2.5, -2.5, 3.5, -0.75, 2147483647.5, -2147483648.75,
                     4294967296.5, 2 ^ 63, -2 ^ 63, 1e10, -1e10, 123.999 }
    local n = #values
    local x, f = luda.array(values, "float64"), luda.array(values, "float32")
    local outs = { luda.zeros(n, "int32"), luda.zeros(n, "uint32"), luda.zeros(n, "int64"), luda.zeros(n, "uint64"),
                   luda.zeros(n, "int32"), luda.zeros(n, "uint32"), luda.zeros(n, "int64"), luda.zeros(n, "int32") }
    k(1, 32, { x, f, outs[1], outs[2], outs[3], outs[4], outs[5], outs[6], outs[7], outs[8], n })
    local function conv(v, lo, hi, round, nan)
      if v ~= v then return nan end
      if round then
        local r = math.floor(v + 0.5)
        if r - v == 0.5 and r % 2 == 1 then r = r - 1 end  -- halves to even
        v = r
      end
      if v <= lo then return lo end
      if v >= hi then return hi end
      return math.tointeger(v >= 0 and math.floor(v) or math.ceil(v))
    end
    local U64_MAX = 18446744073709551615.0  -- totable gives uint64 values past 2^63 as floats
    local got = {}
    for j = 1, 8 do got[j] = outs[j]:totable() end
    for i, v in ipairs(values) do
      local fv = f32(v)
      local want = { conv(v, -2147483648, 2147483647, false, -2147483648), conv(v, 0, 4294967295, false, 2147483648),
                     conv(v, math.mininteger, math.maxinteger, false, math.mininteger),
                     v >= 2 ^ 63 and U64_MAX or conv(v, 0, math.maxinteger, false, 2.0 ^ 63),
                     conv(fv, -2147483648, 2147483647, false, 0), conv(fv, 0, 4294967295, false, 0),
                     conv(fv, math.mininteger, math.maxinteger, false, math.mininteger),
                     conv(fv, -2147483648, 2147483647, true, 0) }
      if v >= 2 ^ 63 and v < 2 ^ 64 then want[4] = v end
      for j = 1, 8 do
        assert.are.equal(want[j], got[j][i], ("value %.17g, output %d"):format(v, j))
      end
    end
  end)

  -- The cpu target compiles raw sources with the host's C++ library: its headers write
  -- On the cpu, a raw kernel calling warp matching runs its threads as fibers, and the cpu
  -- prelude gives __match_any_sync, __match_all_sync, __activemask and __brevll.
  on_devices("warp matching, __activemask and __brevll in a raw kernel", function()
    local k = luda.raw_kernel([[
extern "C" __global__ void groups(const int* v, unsigned* out, long long* rev) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned mask = __activemask();
  int pred = -1;
  out[4 * i] = mask;
  out[4 * i + 1] = __match_any_sync(mask, v[i]);
  out[4 * i + 2] = __match_all_sync(mask, v[i], &pred);
  out[4 * i + 3] = pred;
  rev[i] = (long long)__brevll((unsigned long long)(long long)v[i]);
}]], "groups")
    local threads = 48  -- a full warp and one of 16 lanes, which all hold 9
    local vs = {}
    for t = 1, threads do vs[t] = t > 32 and 9 or ({ 3, -1, 0x40000000 })[math.random(1, 3)] end
    local out, rev = luda.zeros({ threads, 4 }, "uint32"), luda.zeros(threads, "int64")
    k(1, threads, { luda.array(vs, "int32"), out, rev })
    local got, reversed = out:totable(), rev:totable()
    for t = 1, threads do
      local base = t <= 32 and 0 or 32
      local count = t <= 32 and 32 or 16
      local mask = (1 << count) - 1
      local same, all = 0, true
      for lane = 0, count - 1 do
        if vs[base + lane + 1] == vs[t] then same = same | (1 << lane) else all = false end
      end
      local r = 0
      for b = 0, 63 do r = r | (((vs[t] >> b) & 1) << (63 - b)) end
      assert.are.same({ mask, same, all and mask or 0, all and 1 or 0 }, got[t])
      assert.are.equal(r, reversed[t])
    end
  end)

  -- GCC's __attribute__((__noinline__)), which CUDA's __noinline__ as a macro would break.
  it("compile for the cpu with the host's C++ headers and CUDA's __noinline__", function()
    local k = luda.raw_kernel([[
#include <memory>
#include <stdexcept>
__device__ __noinline__ int twice(int v) { return 2 * v; }
static __attribute__((__noinline__)) int plus_one(int v) { return v + 1; }
extern "C" __global__ void scaled(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  std::unique_ptr<int> held(new int(i));
  if (i < n) x[i] = plus_one(twice(*held));
}]], "scaled")
    local n = 37
    local x = luda.zeros(n, "int32", CPU)
    k(2, 32, { x, n })
    local want = {}
    for i = 1, n do want[i] = 2 * (i - 1) + 1 end
    assert.are.same(want, x:totable())
  end)

  it("compile PTX for the current device by default", on_gpu(function()
    local k = luda.raw_kernel(ADD, "my_add")
    local arch = luda.current_device().arch
    assert.truthy(k:inspect("ptx"):find(".target " .. arch, 1, true))
  end))

  -- With no array argument, a kernel runs on the current device: the cpu where no CUDA
  -- device is usable, and never fails for the lack of one.
  on_devices("run a kernel with no array arguments on the current device", function()
    local k = luda.raw_kernel('extern "C" __global__ void nothing(int n) {}', "nothing")
    k(1, 1, { 3 })
  end)

  -- luda's C types for the new dtypes, with their arithmetic; the parameters read as
  -- their dtypes (a complex64 scalar, float16 arrays), so the arguments are checked.
  local TYPES = [[
extern "C" __global__ void zaxpy(luda_complex64 a, const luda_complex64* x, luda_complex64* y,
                                 const luda_half* h, float* widened, luda_half* doubled,
                                 luda_complex128* conj, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = a * x[i] + y[i];
  widened[i] = luda_h2f(h[i]);
  doubled[i] = h[i] + h[i];
  conj[i] = luda_complex128{(double)x[i].re, -(double)x[i].im};
}
]]
  on_devices("use luda_complex64, luda_complex128 and luda_half, checked as their dtypes", function()
    local k = luda.raw_kernel(TYPES, "zaxpy")
    local n = 37
    local xr, xi, yr, yi, hv = {}, {}, {}, {}, {}
    local xs, ys = {}, {}
    for i = 1, n do
      xr[i], xi[i], yr[i], yi[i] = math.random(-9, 9), math.random(-9, 9), math.random(-9, 9), math.random(-9, 9)
      hv[i] = math.random(-2048, 2048) / 4   -- exact in float16, and so is twice it
      xs[i], ys[i] = luda.complex(xr[i], xi[i]), luda.complex(yr[i], yi[i])
    end
    local x, y = luda.array(xs, "complex64"), luda.array(ys, "complex64")
    local h = luda.array(hv, "float16")
    local widened, doubled = luda.zeros(n, "float32"), luda.zeros(n, "float16")
    local conj = luda.zeros(n, "complex128")
    k({ 1 }, { 64 }, { luda.complex64(2, -3), x, y, h, widened, doubled, conj, n })
    local re, im = luda.real(y):totable(), luda.imag(y):totable()
    local w, d = widened:totable(), doubled:astype("float64"):totable()
    local cr, ci = luda.real(conj):totable(), luda.imag(conj):totable()
    for i = 1, n do
      assert.are.equal(2 * xr[i] + 3 * xi[i] + yr[i], re[i])
      assert.are.equal(2 * xi[i] - 3 * xr[i] + yi[i], im[i])
      assert.are.equal(hv[i], w[i])
      assert.are.equal(2 * hv[i], d[i])
      assert.are.equal(xr[i], cr[i])
      assert.are.equal(-xi[i], ci[i])
    end
    local function call(a, x1)  -- the error's place, and the error
      return here(), error_of(function() k(1, 64, { a, x1, y, h, widened, doubled, conj, n }) end)
    end
    local at, err = call(luda.complex64(1, 0), widened)
    assert.are.equal(at .. "raw_kernel 'zaxpy': argument 2 'x' is 'const luda_complex64* x' but got a float32 array; pass a complex64 array", err)
    at, err = call(luda.complex(1, 0), x)
    assert.are.equal(at .. "raw_kernel 'zaxpy': argument 1 'a' is 'luda_complex64 a' but got a complex128 scalar; pass luda.complex64(v) or a plain number", err)
  end)

  it("read CUDA's __half and __nv_bfloat16 as float16 and bfloat16", on_gpu(function()
    local k = luda.raw_kernel([[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void widen(const __half* h, const __nv_bfloat16* b, __half s, float* out) {
  int i = threadIdx.x;
  out[i] = __half2float(h[i]) + __bfloat162float(b[i]) + __half2float(s);
}
]], "widen")
    local h, b = luda.array({ 1.5, -2, 0.25 }, "float16"), luda.array({ 3, 0.5, -8 }, "bfloat16")
    local out = luda.zeros(3, "float32")
    k(1, 3, { h, b, 0.5, out })
    assert.are.same({ 5, -1, -7.25 }, out:totable())
    assert.are.equal(here() .. "raw_kernel 'widen': argument 2 'b' is 'const __nv_bfloat16* b' but got a float16 array; pass a bfloat16 array", error_of(function() k(1, 3, { h, h, 0.5, out }) end))
  end))

  it("refuse arrays on two devices in one launch, naming both", on_gpu(function()
    local k = luda.raw_kernel(ADD, "my_add")
    local x, c = luda.zeros(4, "float32", { device = "cuda" }), luda.zeros(4, "float32", CPU)
    assert.are.equal(here() .. "raw_kernel 'my_add' got arrays on cuda:0 (x1, y) and cpu (x2); put them on one device (x2:to(\"cuda:0\"))", error_of(function() k(1, 4, { x, c, x }) end))
  end))
end)

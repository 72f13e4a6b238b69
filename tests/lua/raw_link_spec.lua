-- Raw modules from compiled files (CuPy's RawModule(path=)) and their global variables
-- (CuPy's get_global), on each device: a cubin or PTX runs on a GPU, and on the cpu it is
-- an error that says what to do; globals are arrays on either.
local luda = require "luda"
local support = require "support"
local on_devices = support.device_tests(_ENV)
local here, error_of, f32 = support.here, support.error_of, support.f32

-- Coefficients in constant memory, a table and a counter in global memory.
local GLOBALS = [[
__constant__ float coef[4];
__device__ double table[3][2];
__device__ int counter;
extern "C" __global__ void poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = coef[0] + x[i] * (coef[1] + x[i] * (coef[2] + x[i] * coef[3]));
    atomicAdd(&counter, 1);
  }
}
extern "C" __global__ void fill_table(double a) {
  int r = threadIdx.x, c = threadIdx.y;
  table[r][c] = a * (10 * r + c);
}
template <typename T> __global__ void twice(T* y) { y[threadIdx.x] *= 2; }
]]

-- A kernel for the compiled-file tests: y = y * s + t.
local AFFINE = [[
extern "C" __global__ void affine(float* y, float s, float t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * s + t;
}
]]

local function random_f32(n)
  local t = {}
  for i = 1, n do t[i] = f32((math.random() - 0.5) * 8) end
  return t
end

local function temp_file(bytes, suffix)
  local path = os.tmpname() .. suffix
  support.write_file(path, bytes)
  return path
end

-- The architecture a compiled file is made for: the device's on a GPU, else any.
local function arch_for(device)
  if device == "cpu" then return { arch = "sm_80" } end
  return nil  -- the current device's
end

local function run_affine(m, n)
  local k = m:get_function("affine")
  local host = random_f32(n)
  local y = luda.array(host, "float32")
  local s, t = f32(math.random() * 3), f32(math.random() - 0.5)
  -- a compiled file's parameters are not known: scalars pass as typed (CuPy's numpy.float32)
  k({ (n + 127) // 128 }, { 128 }, { y, luda.float32(s), luda.float32(t), luda.int32(n) })
  local got = y:totable()
  for i = 1, n do assert.are.near(f32(host[i] * s + t), got[i], 1e-5 * (1 + math.abs(got[i]))) end
end

describe("raw_module from a compiled file", function()
  before_each(function() math.randomseed(515) end)

  for _, kind in ipairs({ "ptx", "cubin" }) do
    on_devices("runs a kernel from a " .. kind .. " file on a GPU and names the fix on the cpu", function(device)
      local image = luda.raw_module(AFFINE):inspect(kind, arch_for(device))
      local path = temp_file(image, "." .. kind)
      local m = luda.raw_module({ path = path })
      assert.are.equal(path, m.path)
      assert.are.equal("<raw_module '" .. path .. "'>", tostring(m))
      local shown = kind == "ptx" and "PTX" or "cubin"
      if device == "cpu" then
        local k, y = m:get_function("affine"), luda.zeros(10, "float32")
        local where, err = here(), error_of(function() k(1, 32, { y, luda.float32(2), luda.float32(1), luda.int32(10) }) end)
        assert.are.equal(where .. "raw_kernel 'affine' cannot run on the cpu: the module was loaded from the " .. shown ..
          " file '" .. path .. "', which only a CUDA device runs; to run it on the cpu too, make the module from its " ..
          "CUDA source (luda.raw_module(source))", err)
      else
        run_affine(m, 1000)
        run_affine(m, 37)  -- loaded once, launched again
      end
      os.remove(path)
    end)
  end

  it("keeps its PTX for inspect and lists a PTX file's kernels when one is missing", function()
    local ptx = luda.raw_module(AFFINE):inspect("ptx", { arch = "sm_80" })
    local path = temp_file(ptx, ".ptx")
    local m = luda.raw_module({ path = path })
    assert.are.equal(ptx, m:inspect("ptx"))
    local where, err = here(), error_of(function() return m:get_function("afine") end)
    assert.are.equal(where .. "no kernel named 'afine' in the PTX file '" .. path .. "' (its kernels: affine)", err)
    where, err = here(), error_of(function() return m:inspect("cuda") end)
    assert.are.equal(where .. "inspect: the module was loaded from the PTX file '" .. path .. "' and has no CUDA source", err)
    os.remove(path)
    local cubin = temp_file(luda.raw_module(AFFINE):inspect("cubin", { arch = "sm_80" }), ".cubin")
    local c = luda.raw_module({ path = cubin })
    where, err = here(), error_of(function() return c:inspect("ptx") end)
    assert.are.equal(where .. "the module was loaded from the cubin file '" .. cubin .. "' and has no CUDA source to " ..
      "compile; only PTX that was loaded as PTX can be shown", err)
    os.remove(cubin)
  end)

  it("refuses a file it cannot read or that holds no compiled module", function()
    local where, err = here(), error_of(function() return luda.raw_module({ path = "/nonexistent/k.ptx" }) end)
    assert.are.equal(where .. "raw_module: cannot read '/nonexistent/k.ptx' (No such file or directory)", err)
    local source = temp_file(AFFINE, ".cu")
    where, err = here(), error_of(function() return luda.raw_module({ path = source }) end)
    assert.are.equal(where .. "raw_module: '" .. source .. "' is not a cubin, PTX or fatbin file (what nvcc -cubin, " ..
      "-ptx or -fatbin writes, or inspect(\"ptx\")); for CUDA C++ source, pass its text: luda.raw_module(source)", err)
    where, err = here(), error_of(function() return luda.raw_module({ path = source }, { options = { "-DN=1" } }) end)
    assert.are.equal(where .. "raw_module: a module loaded from a file is compiled already; it takes no options", err)
    where, err = here(), error_of(function() return luda.raw_module({}) end)
    assert.are.equal(where .. "raw_module: give CUDA source text, or {path = file} for a cubin, PTX or fatbin file; " ..
      "got a table without path", err)
    where, err = here(), error_of(function() return luda.raw_module({ file = source }) end)
    assert.are.equal(where .. "bad argument #1 to 'raw_module' (unknown option 'file'; expected path, enable_cooperative_groups)", err)
    os.remove(source)
  end)
end)

describe("raw_module get_global", function()
  before_each(function() math.randomseed(616) end)

  on_devices("gives arrays viewing constant and global memory, written before a launch and read after", function(device)
    local m = luda.raw_module(GLOBALS)
    local poly = m:get_function("poly")
    local fill = m:get_function("fill_table")
    local coef = m:get_global("coef", { dtype = "float32" })
    assert.are.same({ 4 }, coef.shape)
    assert.are.equal(support.device_name(device), tostring(coef.device))
    local c = random_f32(4)
    luda.copyto(coef, luda.array(c, "float32"))
    local counter = m:get_global("counter", { dtype = luda.int32, shape = {} })
    luda.copyto(counter, luda.array({ 5 }, "int32"):reshape({}))
    local n = 300
    local xs = random_f32(n)
    local y = luda.empty(n, "float32")
    poly({ 3 }, { 128 }, { luda.array(xs, "float32"), y, n })
    local got = y:totable()
    for i = 1, n do
      local x = xs[i]
      local want = c[1] + x * (c[2] + x * (c[3] + x * c[4]))
      assert.are.near(want, got[i], 1e-4 * (1 + math.abs(want)))
    end
    assert.are.equal(5 + n, counter:item())
    -- a view with the shape the variable has, filled by a kernel
    local a = f32(math.random() * 2)
    fill(1, { 3, 2 }, { a })
    local t = m:get_global("table", { dtype = "float64", shape = { 3, 2 } })
    assert.are.same({ 3, 2 }, t.shape)
    local want = {}
    for r = 0, 2 do want[r + 1] = { a * (10 * r), a * (10 * r + 1) } end
    assert.are.same(want, t:totable())
    -- a view that covers part of the variable, and the same memory viewed twice
    local head = m:get_global("coef", { dtype = "float32", shape = { 2 } })
    assert.are.same({ c[1], c[2] }, head:totable())
  end)

  on_devices("names what is missing, too small or asked for too late", function(device)
    local m = luda.raw_module(GLOBALS)
    local hint = " (get_global finds a __constant__ or __device__ variable defined at namespace scope, not static, by its name)"
    local where, err = here(), error_of(function() return m:get_global("coeff", { dtype = "float32" }) end)
    assert.are.equal(where .. "no global variable named 'coeff' in the module" .. hint, err)
    where, err = here(), error_of(function() return m:get_global("poly", { dtype = "float32" }) end)
    assert.are.equal(where .. "no global variable named 'poly' in the module" .. hint, err)
    where, err = here(), error_of(function() return m:get_global("coef", { dtype = "float32", shape = { 5 } }) end)
    assert.are.equal(where .. "get_global: 'coef' is 16 bytes; shape (5,) of float32 needs 20 bytes", err)
    where, err = here(), error_of(function() return m:get_global("coef", { dtype = "float64", shape = 3 }) end)
    assert.are.equal(where .. "get_global: 'coef' is 16 bytes; shape (3,) of float64 needs 24 bytes", err)
    where, err = here(), error_of(function() return m:get_global("counter", { dtype = "float64" }) end)
    assert.are.equal(where .. "get_global: 'counter' is 4 bytes, not a whole number of float64 elements (8 bytes " ..
      "each); give the dtype it holds", err)
    where, err = here(), error_of(function() return m:get_global("coef", { shape = { 4 } }) end)
    assert.are.equal(where .. "get_global: give the element type: {dtype = \"float32\"} (a dtype name or " ..
      "luda.float32), got none", err)
    where, err = here(), error_of(function() return m:get_global("coef") end)
    assert.are.equal(where .. "get_global: the options table {dtype =, shape =} must follow the name " ..
      "(m:get_global(\"coef\", {dtype = \"float32\"})), got no value", err)
    m:get_global("coef", { dtype = "float32" })
    -- a template kernel not compiled yet would need a new compile, with new globals
    where, err = here(), error_of(function() return m:get_function("twice<float>") end)
    assert.are.equal(where .. "raw_module: get_function('twice<float>') after get_global: the module would be " ..
      "compiled again for this kernel, and the new compile would have its own copies of the global variables " ..
      "already given out; call get_function for every kernel before the first get_global", err)
    -- asked for before get_global, it runs beside the globals
    local m2 = luda.raw_module(GLOBALS)
    local twice = m2:get_function("twice<float>")
    local coef = m2:get_global("coef", { dtype = "float32" })
    local y = luda.array({ 1.5, -2, 3, 4 }, "float32")
    twice(1, 4, { y })
    assert.are.same({ 3, -4, 6, 8 }, y:totable())
    assert.are.same({ 4 }, coef.shape)
  end)

  it("keeps its module alive while an array views a global", function()
    local c = luda.raw_module(GLOBALS):get_global("coef", { dtype = "float32" })
    collectgarbage(); collectgarbage()
    local v = random_f32(4)
    luda.copyto(c, luda.array(v, "float32"))
    assert.are.same(v, c:totable())
  end)
end)

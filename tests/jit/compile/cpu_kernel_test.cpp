// cuda.jit kernels and raw kernels on the cpu target, end to end: the front end (or a raw
// source), the cpu prelude, the host compiler, the disk cache, the cpu executor. Values
// are checked against references computed on the host from random inputs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/compile.h"
#include "jit/compile/cpu_prelude.h"
#include "jit/compile/host_compiler.h"
#include "jit/kinds/jit_kernel.h"
#include "jit/raw/raw_module.h"
#include "runtime/cpu_executor.h"
#include "tests/dsl/kernel_sources.h"
#include "tests/dsl/test_environment.h"

namespace luda::jit {
namespace {

// "host C++ compiler failed to compile 'k.cu' for the cpu target (command: ...)" as this
// machine's compiler and flags make it.
std::string compile_failure_head(const std::string& file) {
  return fmt::format(
      "host C++ compiler failed to compile '{}' for the cpu target (command: {} {} -x c++ {} -o kernel.so)", file,
      fmt::join(host_compiler().command, " "), fmt::join(host_compile_flags(false, false), " "), file);
}

namespace fs = std::filesystem;
using namespace luda::dsl::testing;
using dsl::Scalar;

constexpr const char* kKernels = R"(
local function add(x, y, out)
  local start, stride = cuda.grid(1), cuda.gridsize(1)
  for i = start, #x - 1, stride do
    out[i] = x[i] + y[i]
  end
end

local function scaled(x, out, a)
  local i = cuda.grid(1)
  out[i] = a * x[i]
end

local function histogram(x, xmin, xmax, hist)
  local nbins = #hist
  local bin_width = (xmax - xmin) / nbins
  local i = cuda.grid(1)
  if i < #x then
    local bin = math.floor((x[i] - xmin) / bin_width)
    if bin >= 0 and bin < nbins then cuda.atomic.add(hist, bin, 1) end
  end
end

local function transpose_tiled(a, out)
  local tile = cuda.shared.array({TILE, TILE + 1}, "int32")
  local tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
  local x = cuda.blockIdx.x * TILE + tx
  local y = cuda.blockIdx.y * TILE + ty
  if y < a.shape[1] and x < a.shape[2] then tile[ty][tx] = a[y][x] end
  cuda.syncthreads()
  x = cuda.blockIdx.y * TILE + tx
  y = cuda.blockIdx.x * TILE + ty
  if y < out.shape[1] and x < out.shape[2] then out[y][x] = tile[tx][ty] end
end
)";

class CpuKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("luda_cpu_kernel_test_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    cache_ = std::make_unique<DiskCache>(dir_);
    chunk_.env.values["TILE"] = TestEnvironment::integer(8);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<JitKernel> make(const std::string& name, std::vector<std::string> params, JitOptions options = {}) {
    JitKernel::Setup s;
    const dsl::FunctionExpr& f = chunk_.function(name);
    s.function = chunk_.source_of(f);
    s.handle = &f;
    s.name = name;
    s.param_names = std::move(params);
    s.options = options;
    s.cache = cache_.get();
    return std::make_unique<JitKernel>(std::move(s), chunk_.env);
  }

  // Kernel 'scaled' of kernels.lua with a front end whose code fails in every compiler at
  // kernels.lua:11 (a call of an undeclared function).
  JitKernel::Setup failing_at_line_11() {
    JitKernel::Setup s;
    s.function = chunk_.source_of(chunk_.function("scaled"));
    s.name = "scaled";
    s.cache = cache_.get();
    s.frontend = [](const dsl::KernelRequest& r, dsl::Environment&) {
      dsl::CudaKernel k;
      k.entry = "scaled";
      k.params = r.args;
      k.code = "#line 11 \"kernels.lua\"\nextern \"C\" __global__ void scaled() { not_a_function(); }\n";
      return k;
    };
    return s;
  }

  static LaunchConfig config(long long grid, long long block) {
    LaunchConfig c;
    c.grid.x = grid;
    c.block.x = block;
    return c;
  }

  fs::path dir_;
  std::unique_ptr<DiskCache> cache_;
  TestChunk chunk_{kKernels, "kernels.lua"};
};

template <class T>
NDArray host(const std::vector<T>& v, DType t, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<std::int64_t>(v.size())};
  return NDArray::from_host(v.data(), shape, t, Device::cpu());
}

template <class T>
std::vector<T> values(const NDArray& a) {
  std::vector<T> out(static_cast<std::size_t>(a.size()));
  std::memcpy(out.data(), a.data(), out.size() * sizeof(T));
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(CpuKernelTest, GridStrideAddMatchesTheHostAndHitsMemoryThenDisk) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-100, 100);
  std::vector<float> x(1000), y(1000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = d(rng), y[i] = d(rng);
  NDArray X = host(x, DType::Float32), Y = host(y, DType::Float32),
          Out = NDArray::zeros({1000}, DType::Float32, Device::cpu());
  auto k = make("add", {"x", "y", "out"});
  std::vector<KernelArg> args = {KernelArg::of_array(X), KernelArg::of_array(Y), KernelArg::of_array(Out)};
  k->launch(config(3, 64), args);  // 192 threads stride over 1000
  std::vector<float> out = values<float>(Out);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;
  k->launch(config(3, 64), args);
  JitStats s = k->stats();
  EXPECT_EQ(s.calls, 2u);
  EXPECT_EQ(s.memory_hits, 1u);
  EXPECT_EQ(s.host_compiles, 1u);
  EXPECT_EQ(s.nvrtc_compiles, 0u);
  EXPECT_NE(k->inspect("cuda", "", 0).find("_cpu(void* const* luda_args)"), std::string::npos);
  // A second kernel object (a new process, as far as the cache can tell): from the disk.
  detail::forget_loaded_modules();
  auto again = make("add", {"x", "y", "out"});
  again->launch(config(3, 64), args);
  EXPECT_EQ(again->stats().host_compiles, 0u);
  EXPECT_EQ(again->stats().disk_hits, 1u);
}

TEST_F(CpuKernelTest, WeakScalarsAndAtomics) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> d(0, 10);
  std::vector<double> x(777);
  for (double& v : x) v = d(rng);
  std::vector<std::int32_t> want(10, 0);
  for (double v : x) {
    auto bin = static_cast<long long>(std::floor((v - 0.0) / 1.0));
    if (bin >= 0 && bin < 10) ++want[static_cast<std::size_t>(bin)];
  }
  NDArray X = host(x, DType::Float64), H = NDArray::zeros({10}, DType::Int32, Device::cpu());
  auto k = make("histogram", {"x", "xmin", "xmax", "hist"});
  k->launch(config(7, 128), std::vector<KernelArg>{KernelArg::of_array(X), KernelArg::of_float(0.0),
                                                   KernelArg::of_float(10.0), KernelArg::of_array(H)});
  EXPECT_EQ(values<std::int32_t>(H), want);
}

TEST_F(CpuKernelTest, TiledTransposeWithBarriersMatches) {
  const std::int64_t R = 37, C = 21;  // not multiples of the tile
  std::vector<std::int32_t> a(static_cast<std::size_t>(R * C));
  std::mt19937 rng(3);
  for (auto& v : a) v = static_cast<std::int32_t>(rng());
  NDArray A = host(a, DType::Int32, {R, C}), Out = NDArray::zeros({C, R}, DType::Int32, Device::cpu());
  auto k = make("transpose_tiled", {"a", "out"});
  LaunchConfig c;
  c.grid = {(C + 7) / 8, (R + 7) / 8, 1, 2};
  c.block = {8, 8, 1, 2};
  k->launch(c, std::vector<KernelArg>{KernelArg::of_array(A), KernelArg::of_array(Out)});
  std::vector<std::int32_t> out = values<std::int32_t>(Out);
  for (std::int64_t i = 0; i < R; ++i)
    for (std::int64_t j = 0; j < C; ++j)
      ASSERT_EQ(out[static_cast<std::size_t>(j * R + i)], a[static_cast<std::size_t>(i * C + j)]);
  EXPECT_NE(k->inspect("cuda", "", 0).find("_cpu_needs_fibers = 1; }"), std::string::npos);
}

TEST_F(CpuKernelTest, BoundscheckRaisesWithTheLuaLine) {
  NDArray X = host(std::vector<float>(10, 1.0f), DType::Float32),
          Out = NDArray::zeros({10}, DType::Float32, Device::cpu());
  auto k = make("scaled", {"x", "out", "a"}, {.boundscheck = true});
  std::vector<KernelArg> args = {KernelArg::of_array(X), KernelArg::of_array(Out), KernelArg::of_float(2.0)};
  EXPECT_EQ(error_of([&] { k->launch(config(1, 16), args); }),
            "kernel 'scaled' at kernels.lua:11: index 10 out of range for axis 0 of size 10");
  EXPECT_EQ(values<float>(Out), std::vector<float>(10, 2.0f));  // threads in range ran
  k->launch(config(1, 10), args);                               // the record is cleared for each launch
}

TEST_F(CpuKernelTest, MixingDevicesNamesTheArguments) {
  NDArray X = host(std::vector<float>(4, 1.0f), DType::Float32);
  // No GPU here: an array that claims cuda:0 cannot be made, so the message is checked on
  // the helper that both kernel kinds use.
  std::vector<KernelArg> args = {KernelArg::of_array(X)};
  EXPECT_EQ(arrays_device("kernel 'add'", args, std::vector<std::string>{"x"}), Device::cpu());
  NDArray none;
  std::vector<KernelArg> bad = {KernelArg::of_array(X), KernelArg::of_array(none)};
  EXPECT_EQ(error_of([&] {
              arrays_device("kernel 'add'", bad, std::vector<std::string>{"x", "y"});
            }),
            "kernel 'add': argument 2 'y' is an empty array handle; pass an array");
}

TEST_F(CpuKernelTest, CompileErrorIsToldAtTheLuaLine) {
  JitKernel k(failing_at_line_11(), chunk_.env);
  // compile(signature) builds for the current device: make it the cpu, GPU or not.
  Device previous = current_device();
  use_device(Device::cpu());
  std::string what = error_of([&] { k.compile("void(float32[:], float32[:], float32)"); });
  use_device(previous);
  EXPECT_EQ(what.find("kernels.lua:11:3: compile error: 'not_a_function' was not declared in this scope\n"
                      "    out[i] = a * x[i]\n    ^"),
            0u)
      << what;
  EXPECT_NE(what.find("host C++ compiler failed to compile 'scaled.cu' for the cpu target"), std::string::npos);
}

// NVRTC's diagnostics are told at the Lua line the same way (PTX: no GPU needed). The
// kernel language refuses its own mistakes before NVRTC sees them (a shared array larger
// than any address space), so the front end here writes the failing code itself.
TEST_F(CpuKernelTest, NvrtcCompileErrorIsToldAtTheLuaLine) {
  JitKernel k(failing_at_line_11(), chunk_.env);
  std::string what = error_of([&] { k.inspect("ptx", "void(float32[:], float32[:], float32)", 90); });
  EXPECT_EQ(what.find("kernels.lua:11:3: compile error: identifier \"not_a_function\" is undefined\n"
                      "    out[i] = a * x[i]\n    ^"),
            0u)
      << what;
  EXPECT_NE(what.find("NVRTC failed to compile 'scaled.cu' for compute_90"), std::string::npos) << what;
}

// The prelude provides every name generated code uses: one kernel per builtin family.
TEST_F(CpuKernelTest, EveryBuiltinFamilyCompilesForTheCpu) {
  TestChunk c(kEveryBuiltinFamily, "families.lua");
  struct Variant {
    Scalar f, i;
    bool bounds;
  };
  for (Variant v : {Variant{Scalar::Float32, Scalar::Int32, false}, Variant{Scalar::Float64, Scalar::Int64, true},
                    Variant{Scalar::Float32, Scalar::UInt64, true}}) {
    dsl::KernelOptions o;
    o.target = dsl::Target::Cpu;
    o.boundscheck = v.bounds;
    dsl::CudaKernel k = c.compile("families", {arr(v.f), arr(v.i), arr(Scalar::UInt32), arr(v.f)}, o);
    EXPECT_TRUE(k.needs_fibers);
    HostCompileRequest r;
    r.source = std::string(cpu_generated_prelude()) + k.code;
    r.file_name = "families.cu";
    try {
      std::string so = compile_shared_object(r);
      EXPECT_GT(so.size(), 1000u);
    } catch (const CompileError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// CuPy's RawKernel and RawModule examples on cpu arrays.
TEST_F(CpuKernelTest, RawAddFuncAndModuleOnCpuArrays) {
  auto add = RawKernel::create(R"(extern "C" __global__
void my_add(const float* x1, const float* x2, float* y, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) y[tid] = x1[tid] + x2[tid];
})",
                               "my_add");
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(300), b(300);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = d(rng), b[i] = d(rng);
  NDArray A = host(a, DType::Float32), B = host(b, DType::Float32),
          Y = NDArray::zeros({300}, DType::Float32, Device::cpu());
  add->launch(config(3, 128), std::vector<KernelArg>{KernelArg::of_array(A), KernelArg::of_array(B),
                                                     KernelArg::of_array(Y), KernelArg::of_int(300)});
  std::vector<float> y = values<float>(Y);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(y[i], a[i] + b[i]);

  auto module = RawModule::create(R"(
extern "C" __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) y[tid] = x1[tid] + x2[tid];
}
extern "C" __global__ void test_multiply(const float* x1, const float* x2, float* y, unsigned int N) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N) y[tid] = x1[tid] * x2[tid];
}
extern "C" __global__ void block_total(const int* x, int* totals) {
    extern __shared__ int partial[];
    partial[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) totals[blockIdx.x] = partial[0];
})");
  std::vector<KernelArg> args = {KernelArg::of_array(A), KernelArg::of_array(B), KernelArg::of_array(Y),
                                 KernelArg::of_int(300)};
  module->get_function("test_multiply")->launch(config(5, 64), args);
  y = values<float>(Y);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(y[i], a[i] * b[i]);
  module->get_function("test_sum")->launch(config(5, 64), args);
  y = values<float>(Y);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(y[i], a[i] + b[i]);
  EXPECT_EQ(module->cpu_stats().loads, 1u);  // one object for the module's kernels

  std::vector<std::int32_t> x(4 * 32);
  std::vector<std::int32_t> want(4, 0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(rng() % 1000), want[i / 32] += x[i];
  NDArray Xi = host(x, DType::Int32), T = NDArray::zeros({4}, DType::Int32, Device::cpu());
  LaunchConfig c = config(4, 32);
  c.shared_mem = 32 * sizeof(std::int32_t);
  module->get_function("block_total")
      ->launch(c, std::vector<KernelArg>{KernelArg::of_array(Xi), KernelArg::of_array(T)});
  EXPECT_EQ(values<std::int32_t>(T), want);
}

TEST_F(CpuKernelTest, RawSourceBeyondThePreludeGetsTheNote) {
  auto k = RawKernel::create(R"(extern "C" __global__ void k(float* x) {
    x[0] = __half2float(__float2half(x[0]));
})",
                             "k");
  NDArray X = host(std::vector<float>(1, 1.0f), DType::Float32);
  std::string what = error_of([&] { k->launch(config(1, 1), std::vector<KernelArg>{KernelArg::of_array(X)}); });
  // The user's first error leads, at its place; the note names the CUDA name the cpu
  // prelude lacks; the source shown is the user's alone, numbered as the log numbers it.
  EXPECT_EQ(what, "k.cu:2:25: compile error: '__float2half' was not declared in this scope\n"
                  "    x[0] = __half2float(__float2half(x[0]));\n"
                  "                        ^\n" +
                      compile_failure_head("k.cu") +
                      "\nk.cu: In function 'void k(float*)':\n"
                      "k.cu:2:25: error: '__float2half' was not declared in this scope\n"
                      "k.cu:2:12: error: '__half2float' was not declared in this scope\n"
                      "note: the cpu target provides only the prelude's CUDA subset (threadIdx and friends, "
                      "__syncthreads, __shared__, atomics, warp functions, common math, printf); this source uses "
                      "'__float2half', which it lacks\n"
                      "source:\n"
                      "   1 | extern \"C\" __global__ void k(float* x) {\n"
                      "   2 |     x[0] = __half2float(__float2half(x[0]));\n"
                      "   3 | }");
  // A template kernel runs, as its instance's parameters are the compiler's.
  auto tmpl = RawKernel::create("template <class T> __global__ void scale(T* x) { x[0] *= 2; }", "scale<float>");
  tmpl->launch(config(1, 1), std::vector<KernelArg>{KernelArg::of_array(X)});
  EXPECT_EQ(values<float>(X), std::vector<float>{2.0f});
}

// Errors that are not about CUDA: no note on the prelude; the user's line first, also
// for an error GCC reports inside one of the prelude's macros (threadIdx and friends).
TEST_F(CpuKernelTest, RawSourceErrorsLeadWithTheUsersLine) {
  NDArray X = host(std::vector<float>(1, 1.0f), DType::Float32);
  auto first_lines = [&](const std::string& source, const std::string& name, int lines) {
    auto k = RawKernel::create(source, name);
    std::string what = error_of([&] { k->launch(config(1, 1), std::vector<KernelArg>{KernelArg::of_array(X)}); });
    EXPECT_EQ(what.find("note: the cpu target"), std::string::npos) << what;
    std::size_t end = 0;
    for (int i = 0; i < lines && end != std::string::npos; ++i) end = what.find('\n', end + (i > 0));
    return what.substr(0, end);
  };
  EXPECT_EQ(first_lines("extern \"C\" __global__ void syntax(float* x) {\n  x[0] = 1\n}\n", "syntax", 4),
            "syntax.cu:2:11: compile error: expected ';' before '}' token\n"
            "    x[0] = 1\n"
            "            ^\n" +
                compile_failure_head("syntax.cu"));
  EXPECT_EQ(first_lines("extern \"C\" __global__ void macro(float* x) {\n  x[0] = blockDim;\n}\n", "macro", 3),
            "macro.cu:2:10: compile error: cannot convert 'luda_cpu_dim3' to 'float' in assignment\n"
            "    x[0] = blockDim;\n"
            "           ^");
  // A kernel defined twice is the compiler's error at its line, not its parameter list's.
  EXPECT_EQ(first_lines("extern \"C\" __global__ void twice(float* x) { x[0] = 1; }\n"
                        "extern \"C\" __global__ void twice(float* x) { x[0] = 2; }\n",
                        "twice", 1),
            "twice.cu:2:28: compile error: redefinition of 'void twice(float*)'");
  auto overloads = RawKernel::create("__global__ void over(float* x) { x[0] = 1; }\n"
                                     "__global__ void over(int* x) { x[0] = 2; }\n",
                                     "over");
  EXPECT_EQ(error_of([&] { overloads->launch(config(1, 1), std::vector<KernelArg>{KernelArg::of_array(X)}); }),
            "raw_kernel 'over' cannot run on the cpu: the source defines 2 kernels named 'over' (overloads), and the "
            "cpu target calls a kernel through its one parameter list; give each its own name");
}

// The prelude's float16 and bfloat16 conversions in a cpu kernel round as the host's
// (runtime/float16.h, the same text, behind astype) do, bit for bit: every one of the
// 65536 patterns widened to float32, and float32 and float64 values at and around each
// rounding tie (the midpoints between neighbours, one float step either side) narrowed.
TEST_F(CpuKernelTest, HalfConversionsMatchTheHostForEveryPattern) {
  dsl::testing::TestChunk chunk(R"(
local function convert(h, x32, x64, w32, n16, m16)
  local i = cuda.grid(1)
  if i < #h then w32[i] = h[i] end
  if i < #x32 then n16[i] = x32[i] end
  if i < #x64 then m16[i] = x64[i] end
end
)",
                                "convert.lua");
  JitKernel::Setup setup;
  const dsl::FunctionExpr& f = chunk.function("convert");
  setup.function = chunk.source_of(f);
  setup.handle = &f;
  setup.name = "convert";
  setup.param_names = {"h", "x32", "x64", "w32", "n16", "m16"};
  setup.cache = cache_.get();
  JitKernel k(std::move(setup), chunk.env);
  for (DType half : {DType::Float16, DType::BFloat16}) {
    std::vector<std::uint16_t> bits(65536);
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<std::uint16_t>(i);
    NDArray h = host(bits, half);
    NDArray widened = h.astype(DType::Float32);
    // Ties and their neighbours, from each finite value and the next one up.
    std::vector<float> x32;
    std::vector<double> x64;
    const float* w = static_cast<const float*>(widened.data());
    for (std::size_t i = 0; i + 1 < bits.size(); ++i) {
      if (!std::isfinite(w[i]) || !std::isfinite(w[i + 1]) || (i & 0x7fff) == 0x7fff) continue;
      float mid = (w[i] + w[i + 1]) / 2;  // exact: one bit more than the 16-bit float has
      x32.insert(x32.end(), {w[i], mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY)});
      double mid64 = (static_cast<double>(w[i]) + w[i + 1]) / 2;
      x64.insert(x64.end(), {mid64, std::nextafter(mid64, -INFINITY), std::nextafter(mid64, INFINITY)});
    }
    x32.insert(x32.end(), {INFINITY, -INFINITY, NAN, 3.4e38f, 65519.99f, 65520.0f, 1e-30f});
    x64.insert(x64.end(), {INFINITY, -INFINITY, NAN, 1e300, 65519.999999, 65520.0, 1e-300, 3.3961e38});
    NDArray X32 = host(x32, DType::Float32), X64 = host(x64, DType::Float64);
    NDArray w32 = NDArray::empty({65536}, DType::Float32, Device::cpu());
    NDArray n16 = NDArray::empty(X32.shape(), half, Device::cpu()),
            m16 = NDArray::empty(X64.shape(), half, Device::cpu());
    std::vector<KernelArg> args = {KernelArg::of_array(h),   KernelArg::of_array(X32), KernelArg::of_array(X64),
                                   KernelArg::of_array(w32), KernelArg::of_array(n16), KernelArg::of_array(m16)};
    k.launch(config((static_cast<long long>(x32.size()) + 255) / 256, 256), args);
    auto same = [](const NDArray& a, const NDArray& b) {
      return std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * itemsize(a.dtype())) == 0;
    };
    // NaN patterns widen with their payloads; compare the bits.
    EXPECT_TRUE(same(w32, widened)) << dtype_name(half) << " widened";
    EXPECT_TRUE(same(n16, X32.astype(half))) << "float32 to " << dtype_name(half);
    EXPECT_TRUE(same(m16, X64.astype(half))) << "float64 to " << dtype_name(half);
  }
}

}  // namespace
}  // namespace luda::jit

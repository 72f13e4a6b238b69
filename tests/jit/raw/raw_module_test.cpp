// RawKernel and RawModule: missing-kernel errors everywhere, and on a GPU the results of
// CuPy's examples against sums computed on the host.
#include "jit/raw/raw_module.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include <fmt/format.h>

#include "jit/compile/host_compiler.h"
#include "runtime/device.h"
#include "runtime/driver.h"

#include "tests/test_support.h"

namespace luda::jit {
namespace {

using test_support::host_values;

// CuPy's guide, "User-Defined Kernels": RawKernel.
const char* kAddFunc = R"(
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
)";

// CuPy's guide, RawModule: sum_ker = module.get_function('test_sum'), multiply_ker likewise.
const char* kModule = R"(
extern "C"{

__global__ void test_sum(const float* x1, const float* x2, float* y, \
                         unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] + x2[tid];
    }
}

__global__ void test_multiply(const float* x1, const float* x2, float* y, \
                              unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] * x2[tid];
    }
}

}
)";

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-10.0f, 10.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

NDArray device_floats(const std::vector<float>& v, const Shape& shape) {
  return NDArray::from_host(v.data(), shape, DType::Float32, Device::cuda(0));
}

LaunchConfig config(long long grid, long long block) {
  LaunchConfig c;
  c.grid.x = grid;
  c.block.x = block;
  return c;
}

// A disk cache of the test's own, empty at its start: compile counts do not depend on
// what earlier runs left in the process's cache.
class FreshCache {
 public:
  FreshCache()
      : dir_(std::filesystem::temp_directory_path() /
             fmt::format("luda_raw_module_test_{}_{}", ::getpid(),
                         ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        cache_((std::filesystem::remove_all(dir_), dir_)) {}
  ~FreshCache() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  DiskCache* get() { return &cache_; }

 private:
  std::filesystem::path dir_;
  DiskCache cache_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// --- no GPU needed -----------------------------------------------------------------------

TEST(RawModule, MissingKernelNamesTheOnesThere) {
  auto m = RawModule::create(kModule);
  EXPECT_EQ(m->kernel_names(), (std::vector<std::string>{"test_sum", "test_multiply"}));
  EXPECT_EQ(error_of([&] { m->get_function("test_add"); }),
            "no kernel named 'test_add' in the source (its __global__ functions: test_sum, test_multiply)");
  EXPECT_EQ(error_of([&] { RawKernel::create(kAddFunc, "add_func"); }),
            "no kernel named 'add_func' in the source (its __global__ functions: my_add)");
  EXPECT_EQ(error_of([&] { RawKernel::create("int x;", "add"); }),
            "no kernel named 'add' in the source (it defines no __global__ function)");
  auto k = m->get_function("test_multiply");
  auto sig = k->signature_for_arch(80);
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->params.size(), 4u);
  EXPECT_EQ(sig->params[3].type.spelling, "unsigned int");
  EXPECT_EQ(sig->params[3].name, "N");  // across the `\` splice
}

// Against the parameter list of the compile for the device that runs it.
TEST(RawModule, ArgumentsAreCheckedAgainstTheCompiledParameterList) {
  auto k = RawKernel::create(kAddFunc, "my_add");
  std::vector<KernelArg> args = {KernelArg::of_int(1)};
  EXPECT_EQ(error_of([&] { k->launch(config(1, 1), args); }),
            "raw_kernel 'my_add' takes 3 arguments (x1, x2, y), got 1");
}

// No array arguments: the thread's current device (cpu where no GPU is usable).
TEST(RawModule, LaunchWithoutArraysRunsOnTheCurrentDevice) {
  auto k = RawKernel::create("extern \"C\" __global__ void noop(int n) {}", "noop");
  std::vector<KernelArg> args = {KernelArg::of_int(3)};
  if (current_device().is_cpu()) {
    k->launch(config(1, 1), args);
    EXPECT_EQ(k->raw_module()->cpu_stats().loads, 1u);  // from the compiler or the disk
    EXPECT_EQ(k->raw_module()->load_count(), 0);
  } else {
    k->launch(config(1, 1), args);
    synchronize(current_device());
    EXPECT_EQ(k->raw_module()->load_count(), 1);
  }
}

// Raw modules compile and load through the program loader: a second module of the same
// source (a second process, as far as the cache can tell) takes the cpu target's object
// from the disk cache.
TEST(RawModule, TheCpuObjectComesFromTheDiskCacheTheSecondTime) {
  FreshCache cache;
  const char* src = "extern \"C\" __global__ void axpb(const float* x, float* y, float a, float b, int n) {\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < n) y[i] = a * x[i] + b;\n"
                    "}\n";
  std::vector<float> x = random_floats(300, 9);
  for (int round = 0; round < 2; ++round) {
    detail::forget_loaded_modules();  // else the object loaded in this process is reused
    auto k = RawKernel::create(src, "axpb", {}, cache.get());
    NDArray dx = NDArray::from_host(x.data(), {300}, DType::Float32, Device::cpu());
    NDArray dy = NDArray::zeros({300}, DType::Float32, Device::cpu());
    std::vector<KernelArg> args = {KernelArg::of_array(dx), KernelArg::of_array(dy), KernelArg::of_float(1.5),
                                   KernelArg::of_float(-2), KernelArg::of_int(300)};
    k->launch(config(3, 128), args);
    std::vector<float> got = host_values<float>(dy);
    for (std::size_t i = 0; i < 300; ++i)
      ASSERT_FLOAT_EQ(got[i], 1.5f * x[i] - 2.0f) << "round " << round << " i " << i;
    JitStats s = k->stats();
    EXPECT_EQ(s.host_compiles, round == 0 ? 1u : 0u) << round;
    EXPECT_EQ(s.disk_hits, round == 0 ? 0u : 1u) << round;
    EXPECT_EQ(s.loads, 1u);
    EXPECT_EQ(s.calls, 1u);
    EXPECT_EQ(s.memory_hits, 0u);  // the first launch on the cpu loads its target
    k->launch(config(3, 128), args);
    EXPECT_EQ(k->stats().memory_hits, 1u);
    EXPECT_EQ(k->raw_module()->cpu_stats().disk_hits, round == 0 ? 0u : 1u);
  }
}

// --- GPU ---------------------------------------------------------------------------------

// The cubin from the disk cache the second time, with the lowered names of the module's
// name expressions: a C++ kernel, a template one, and their reflected parameter lists.
TEST(RawKernelGpu, TheCubinAndItsLoweredNamesComeFromTheDiskCache) {
  LUDA_REQUIRE_GPU();
  FreshCache cache;
  const char* src = R"(
__global__ void cxx_scale(float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}
template <typename T> __global__ void add_one(T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += T(1);
}
)";
  std::vector<float> y0 = random_floats(200, 10);
  for (int round = 0; round < 2; ++round) {
    auto module = RawModule::create(src, {}, false, cache.get());
    auto scale = module->get_function("cxx_scale");
    auto add_one = module->get_function("add_one<float>");
    ASSERT_TRUE(add_one->signature(Device::cuda(0)));
    EXPECT_EQ(add_one->signature(Device::cuda(0))->params[1].name, "n");
    NDArray y = device_floats(y0, {200});
    std::vector<KernelArg> sargs = {KernelArg::of_array(y), KernelArg::of_float(3), KernelArg::of_int(200)};
    std::vector<KernelArg> aargs = {KernelArg::of_array(y), KernelArg::of_int(200)};
    scale->launch(config(2, 128), sargs);
    add_one->launch(config(2, 128), aargs);
    std::vector<float> got = host_values<float>(y);
    for (std::size_t i = 0; i < 200; ++i)
      ASSERT_FLOAT_EQ(got[i], y0[i] * 3.0f + 1.0f) << "round " << round << " i " << i;
    JitStats s = module->stats();
    EXPECT_EQ(module->compile_count(), round == 0 ? 1 : 0) << round;
    EXPECT_EQ(s.disk_hits, round == 0 ? 0u : 1u) << round;
    EXPECT_EQ(module->load_count(), 1);
  }
}

TEST(RawKernelGpu, CupyAddBothConfigurations) {
  LUDA_REQUIRE_GPU();
  FreshCache cache;
  auto k = RawKernel::create(kAddFunc, "my_add", {}, cache.get());
  std::vector<float> a = random_floats(100, 1), b = random_floats(100, 2);
  NDArray x1 = device_floats(a, {10, 10}), x2 = device_floats(b, {10, 10});
  for (auto [grid, block] : {std::pair{10, 10}, std::pair{1, 100}}) {
    NDArray y = NDArray::zeros({10, 10}, DType::Float32, Device::cuda(0));
    std::vector<KernelArg> args = {KernelArg::of_array(x1), KernelArg::of_array(x2), KernelArg::of_array(y)};
    k->launch(config(grid, block), args);
    std::vector<float> got = host_values<float>(y);
    for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << "grid " << grid << " i " << i;
  }
  EXPECT_EQ(k->raw_module()->compile_count(), 1);
  EXPECT_EQ(k->raw_module()->load_count(), 1);
}

TEST(RawKernelGpu, CupyRawModuleSumAndMultiply) {
  LUDA_REQUIRE_GPU();
  auto module = RawModule::create(kModule);
  auto sum_ker = module->get_function("test_sum");
  auto multiply_ker = module->get_function("test_multiply");
  std::vector<float> a = random_floats(100, 3), b = random_floats(100, 4);
  NDArray x1 = device_floats(a, {10, 10}), x2 = device_floats(b, {10, 10});
  NDArray ys = NDArray::zeros({10, 10}, DType::Float32, Device::cuda(0));
  NDArray ym = NDArray::zeros({10, 10}, DType::Float32, Device::cuda(0));
  std::vector<KernelArg> sum_args = {KernelArg::of_array(x1), KernelArg::of_array(x2), KernelArg::of_array(ys),
                                     KernelArg::of_int(100)};
  std::vector<KernelArg> mul_args = {KernelArg::of_array(x1), KernelArg::of_array(x2), KernelArg::of_array(ym),
                                     KernelArg::of_int(100)};
  sum_ker->launch(config(10, 10), sum_args);
  multiply_ker->launch(config(10, 10), mul_args);
  std::vector<float> s = host_values<float>(ys), m = host_values<float>(ym);
  for (std::size_t i = 0; i < 100; ++i) {
    ASSERT_EQ(s[i], a[i] + b[i]) << i;
    ASSERT_EQ(m[i], a[i] * b[i]) << i;
  }
  EXPECT_EQ(module->load_count(), 1);  // one module for both kernels
}

TEST(RawKernelGpu, CxxKernelAndTemplateThroughNameExpressions) {
  LUDA_REQUIRE_GPU();
  const char* src = R"(
__global__ void cxx_axpy(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
template <typename T> __global__ void twice(T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * T(2);
}
)";
  FreshCache cache;
  auto module = RawModule::create(src, {}, false, cache.get());
  auto axpy = module->get_function("cxx_axpy");
  ASSERT_TRUE(axpy->signature(Device::cuda(0)));
  EXPECT_EQ(axpy->signature(Device::cuda(0))->params.size(), 4u);
  std::vector<float> x = random_floats(300, 5), y0 = random_floats(300, 6);
  NDArray dx = device_floats(x, {300}), dy = device_floats(y0, {300});
  std::vector<KernelArg> args = {KernelArg::of_array(dx), KernelArg::of_array(dy), KernelArg::of_float(0.5),
                                 KernelArg::of_int(300)};
  axpy->launch(config(3, 128), args);
  std::vector<float> got = host_values<float>(dy);
  for (std::size_t i = 0; i < 300; ++i) ASSERT_FLOAT_EQ(got[i], y0[i] + 0.5f * x[i]) << i;

  auto twice = module->get_function("twice<float>");  // a new name: compiled again
  auto tsig = twice->signature(Device::cuda(0));      // as NVRTC instantiates the template
  ASSERT_TRUE(tsig);
  ASSERT_EQ(tsig->params.size(), 2u);
  EXPECT_EQ(tsig->params[0].type.dtype, DType::Float32);
  EXPECT_EQ(tsig->params[1].name, "n");
  std::vector<KernelArg> targs = {KernelArg::of_array(dy), KernelArg::of_int(300)};
  twice->launch(config(3, 128), targs);
  std::vector<float> doubled = host_values<float>(dy);
  for (std::size_t i = 0; i < 300; ++i) ASSERT_EQ(doubled[i], 2 * got[i]) << i;
  axpy->launch(config(3, 128), args);  // its function from the first module still works
  std::vector<float> again = host_values<float>(dy);
  for (std::size_t i = 0; i < 300; ++i) ASSERT_FLOAT_EQ(again[i], doubled[i] + 0.5f * x[i]) << i;
  EXPECT_EQ(module->compile_count(), 2);
}

TEST(RawKernelGpu, ScalarParametersConvert) {
  LUDA_REQUIRE_GPU();
  const char* src = R"(
extern "C" __global__ void scale(const float* x, float a, int n, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
)";
  auto k = RawKernel::create(src, "scale");
  std::vector<float> x = random_floats(256, 7);
  NDArray dx = device_floats(x, {256});
  NDArray y = NDArray::zeros({256}, DType::Float32, Device::cuda(0));
  const int n = 200;  // the tail stays zero
  std::vector<KernelArg> args = {KernelArg::of_array(dx), KernelArg::of_float(-1.75), KernelArg::of_int(n),
                                 KernelArg::of_array(y)};
  k->launch(config(2, 128), args);
  std::vector<float> got = host_values<float>(y);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(got[i], i < n ? -1.75f * x[i] : 0.0f) << i;
  // A float64 array for `const float* x` is refused, naming the parameter.
  NDArray d64 = NDArray::zeros({256}, DType::Float64, Device::cuda(0));
  args[0] = KernelArg::of_array(d64);
  EXPECT_EQ(error_of([&] { k->launch(config(2, 128), args); }),
            "raw_kernel 'scale': argument 1 'x' is 'const float* x' but got a float64 array; pass a "
            "float32 array");
}

TEST(RawKernelGpu, PointersAreDataPointersOfElementZero) {
  LUDA_REQUIRE_GPU();
  auto sig = RawKernel::create(kAddFunc, "my_add")->signature(Device::cuda(0));
  std::vector<float> a = random_floats(100, 8);
  NDArray x = device_floats(a, {10, 10});
  NDArray row = x.at(3);              // a view at an offset
  NDArray col = x.transpose().at(2);  // non-contiguous: its first element's address
  ArgBuffer p = pack_arguments("my_add", sig,
                               std::vector<KernelArg>{KernelArg::of_array(x), KernelArg::of_array(row),
                                                      KernelArg::of_array(col)});
  auto pointer = [&](std::size_t i) {
    void* v = nullptr;
    std::memcpy(&v, p.slot(i), sizeof v);
    return v;
  };
  ASSERT_EQ(p.count(), 3u);
  EXPECT_EQ(pointer(0), x.data());
  EXPECT_EQ(pointer(1), static_cast<void*>(static_cast<char*>(x.data()) + 30 * sizeof(float)));
  EXPECT_EQ(pointer(2), static_cast<void*>(static_cast<char*>(x.data()) + 2 * sizeof(float)));
}

TEST(RawKernelGpu, GridOfZeroIsAnError) {
  LUDA_REQUIRE_GPU();
  auto k = RawKernel::create(kAddFunc, "my_add");
  NDArray x = NDArray::zeros({4}, DType::Float32, Device::cuda(0));
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(x), KernelArg::of_array(x)};
  std::string expected;
  try {
    config(0, 4).validate(cuda_properties(0));
  } catch (const Error& e) {
    expected = std::string("raw_kernel 'my_add': ") + e.what();
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(error_of([&] { k->launch(config(0, 4), args); }), expected);
  EXPECT_EQ(expected.rfind("raw_kernel 'my_add': grid dimension x is 0", 0), 0u) << expected;
  EXPECT_EQ(k->raw_module()->compile_count(), 0);  // refused before compiling
}

TEST(RawKernelGpu, ModuleLoadedOncePerContext) {
  LUDA_REQUIRE_GPU();
  FreshCache cache;
  auto m = RawModule::create(kModule, {}, false, cache.get());
  auto k = m->get_function("test_sum");
  CUfunction f1 = k->function(0);
  CUfunction f2 = k->function(0);
  EXPECT_EQ(f1, f2);
  EXPECT_EQ(m->module(0), m->module(0));
  auto k2 = m->get_function("test_sum");  // another handle: same module, same function
  EXPECT_EQ(k2->function(0), f1);
  EXPECT_EQ(m->compile_count(), 1);
  EXPECT_EQ(m->load_count(), 1);
}

TEST(RawKernelGpu, AKernelTheCompilerDoesNotKnowGivesTheMissingKernelMessage) {
  LUDA_REQUIRE_GPU();
  const char* src = "#define KERNEL(name) extern \"C\" __global__ void name(float* x) { x[0] = 1; }\n"
                    "KERNEL(made_by_macro)\n";
  auto m = RawModule::create(src);
  auto ok = m->get_function("made_by_macro");  // invisible to the parser, found by the compiler
  EXPECT_NE(ok->function(0), nullptr);
  ASSERT_TRUE(ok->signature(Device::cuda(0)));
  EXPECT_EQ(ok->signature(Device::cuda(0))->params[0].type.spelling, "float*");
  auto missing = m->get_function("nope");
  EXPECT_EQ(error_of([&] { missing->function(0); }),
            "no kernel named 'nope' in the source as the compiler reads it (its #if and -D options decide what "
            "it defines)");
}

TEST(RawKernelGpu, ArraysOnTwoDevicesAreRefused) {
  LUDA_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices, this machine has 1";
  auto k = RawKernel::create(kAddFunc, "my_add");
  NDArray a = NDArray::zeros({4}, DType::Float32, Device::cuda(0));
  NDArray b = NDArray::zeros({4}, DType::Float32, Device::cuda(1));
  std::vector<KernelArg> args = {KernelArg::of_array(a), KernelArg::of_array(b), KernelArg::of_array(a)};
  EXPECT_EQ(error_of([&] { k->launch(config(1, 4), args); }),
            "raw_kernel 'my_add' got arrays on cuda:0 (x1, y) and cuda:1 (x2); put them on one device "
            "(x2:to(\"cuda:0\"))");
}

}  // namespace
}  // namespace luda::jit

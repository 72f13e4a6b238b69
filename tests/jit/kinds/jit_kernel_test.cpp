// cuda.jit kernels below the front end: signature keys and weak scalar typing, argument
// packing by the array ABI, launch errors, and, on a GPU, hand-written CUDA C++ (standing in
// for dsl::compile_kernel) through JitKernel's specialize -> cache -> load -> launch path,
// including the disk cache across kernel objects and the boundscheck record.
#include "jit/kinds/jit_kernel.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "jit/call/overlap.h"
#include "runtime/device.h"
#include "runtime/driver.h"
#include "tests/test_support.h"

namespace luda::jit {
namespace {

using test_support::host_values;

namespace fs = std::filesystem;
using dsl::Type;

struct NoGlobals final : dsl::Environment {
  dsl::ExternalValue lookup(dsl::FunctionHandle, const std::string&) override { return {}; }
};

NDArray host_array(const Shape& shape, DType t) { return NDArray::zeros(shape, t, Device::cpu()); }

// ---- signature keys and weak scalars ------------------------------------------------------

TEST(ArgumentTypes, LuaNumbersAreWeakAndFollowTheArrays) {
  NDArray x32 = host_array({4}, DType::Float32), x64 = host_array({4}, DType::Float64);
  NDArray i32 = host_array({2, 3}, DType::Int32);
  // k(x32, 0.5, out32) stays in float32 (NumPy 2's rule for Python scalars).
  std::vector<KernelArg> a = {KernelArg::of_array(x32), KernelArg::of_float(0.5), KernelArg::of_int(3)};
  std::vector<Type> t = argument_types(a);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], Type::array_of(dsl::Scalar::Float32, 1, true));
  EXPECT_EQ(t[1], Type::scalar_of(dsl::Scalar::Float32, true));
  EXPECT_EQ(t[2], Type::scalar_of(dsl::Scalar::Int64, true));
  // The widest float array wins, in any order.
  std::vector<KernelArg> b = {KernelArg::of_array(x64), KernelArg::of_array(x32), KernelArg::of_float(2)};
  EXPECT_EQ(argument_types(b)[2], Type::scalar_of(dsl::Scalar::Float64, true));
  // No float array: float64.
  std::vector<KernelArg> c = {KernelArg::of_array(i32), KernelArg::of_float(2)};
  EXPECT_EQ(argument_types(c)[0], Type::array_of(dsl::Scalar::Int32, 2, true));
  EXPECT_EQ(argument_types(c)[1], Type::scalar_of(dsl::Scalar::Float64, true));
  // Typed scalars and booleans are strong.
  std::vector<KernelArg> d = {KernelArg::of_typed(Scalar::of_float(1.5, DType::Float64)), KernelArg::of_bool(true),
                              KernelArg::of_array(x32)};
  EXPECT_EQ(argument_types(d)[0], Type::scalar_of(dsl::Scalar::Float64, false));
  EXPECT_EQ(argument_types(d)[1], Type::scalar_of(dsl::Scalar::Bool, false));
}

TEST(SignatureKeys, MatchTheTypesAndTellSignaturesApart) {
  NDArray x = host_array({4, 6}, DType::Float32);
  NDArray t = x.transpose();  // a strided view: read in place, through its strides
  NDArray y = host_array({4, 6}, DType::Float64);
  auto key = [](std::vector<KernelArg> args, int device = 0) { return signature_key(args, device); };
  std::vector<KernelArg> base = {KernelArg::of_array(x), KernelArg::of_float(0.5), KernelArg::of_int(1)};
  SignatureKey k = key(base);
  // The fast key equals the key of argument_types' types.
  std::vector<Type> types = argument_types(base);
  EXPECT_EQ(k.flags, SignatureKey::NoAlias);  // one array
  EXPECT_EQ(k, signature_key(types, 0, true));
  EXPECT_EQ(k.hash(), signature_key(types, 0, true).hash());
  EXPECT_FALSE(k == signature_key(types, 0, false));
  EXPECT_EQ(k, key(base));
  std::vector<SignatureKey> different = {
      key(base, 1),                                                                   // device
      key({KernelArg::of_array(y), KernelArg::of_float(0.5), KernelArg::of_int(1)}),  // dtype (and the weak float)
      key({KernelArg::of_array(x.at(0)), KernelArg::of_float(0.5), KernelArg::of_int(1)}),  // ndim
      key({KernelArg::of_array(x), KernelArg::of_int(0), KernelArg::of_int(1)}),            // float vs int
      key({KernelArg::of_array(x), KernelArg::of_typed(Scalar::of_float(0.5, DType::Float32)), KernelArg::of_int(1)}),
      key({KernelArg::of_array(x), KernelArg::of_float(0.5)}),  // count
      key({KernelArg::of_array(x), KernelArg::of_float(0.5), KernelArg::of_bool(true)}),
  };
  for (std::size_t i = 0; i < different.size(); ++i) EXPECT_FALSE(k == different[i]) << i;
  // Layout: a strided view is not C-contiguous (arrays are used where they are).
  EXPECT_EQ(key({KernelArg::of_array(t), KernelArg::of_float(0.5), KernelArg::of_int(1)}).ops[0].flags, 0);
  std::vector<Type> strided = types;
  strided[0].c_contiguous = false;
  EXPECT_FALSE(k == signature_key(strided, 0));
}

TEST(SignatureKeys, ArraysAreDisjointUnlessTheirBytesOverlap) {
  NDArray a = host_array({8, 6}, DType::Float32), b = host_array({8, 6}, DType::Float32);
  auto disjoint = [](std::vector<NDArray> arrays) {
    std::vector<KernelArg> args;
    for (const NDArray& x : arrays) args.push_back(KernelArg::of_array(x));
    args.push_back(KernelArg::of_int(3));
    return arrays_disjoint(args);
  };
  EXPECT_TRUE(disjoint({a, b}));
  EXPECT_FALSE(disjoint({a, a}));                    // the same array twice
  EXPECT_FALSE(disjoint({a, a.at(7)}));              // a row of it
  EXPECT_FALSE(disjoint({a.transpose(), a.at(0)}));  // a view of it, other strides
  Slice lower{4, std::nullopt, 1}, upper{std::nullopt, 4, 1}, reversed{std::nullopt, std::nullopt, -1};
  std::vector<IndexItem> lo = {lower}, up = {upper}, rev = {reversed};
  EXPECT_TRUE(disjoint({a.index(lo), a.index(up)}));              // rows 4..7 and 0..3 share no byte
  EXPECT_FALSE(disjoint({a.index(rev), a.at(0)}));                // negative strides reach back
  EXPECT_FALSE(disjoint({a.index(rev).index(up), a.index(lo)}));  // rows 7, 6, 5, 4 and rows 4..7
  EXPECT_TRUE(disjoint({a.index(rev).index(up), a.index(up)}));   // rows 7, 6, 5, 4 and rows 0..3
}

TEST(SignatureKeys, RefuseTooManyArguments) {
  std::vector<KernelArg> args(kMaxJitArgs + 1, KernelArg::of_int(1));
  try {
    signature_key(args, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "a cuda.jit kernel takes at most 64 arguments, got 65");
  }
}

// ---- packing ------------------------------------------------------------------------------

TEST(ArgPacking, ArraysBecomeDataShapeStrides) {
  NDArray x = NDArray::zeros({5, 7}, DType::Int16, Device::cpu());
  std::vector<IndexItem> items = {Slice{1, 5, 2}, Slice{}};
  NDArray v = x.index(items).transpose();  // shape (7, 2), strides (1, 14)
  ArgBuffer buf;
  put_array(buf, v);
  put_scalar(buf, Scalar::of_float(2.5, DType::Float32));
  put_array(buf, x.at(0).at(3));  // 0-d: only the pointer
  void** p = buf.pointers();
  ASSERT_EQ(buf.count(), 3u);
  long long words[5];
  std::memcpy(words, p[0], sizeof words);
  EXPECT_EQ(words[0], static_cast<long long>(reinterpret_cast<std::uintptr_t>(v.data())));
  EXPECT_EQ(words[1], 7);
  EXPECT_EQ(words[2], 2);
  EXPECT_EQ(words[3], 1);
  EXPECT_EQ(words[4], 14);
  float f;
  std::memcpy(&f, p[1], sizeof f);
  EXPECT_EQ(f, 2.5f);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p[i]) % 8, 0u) << i;
  EXPECT_EQ(static_cast<char*>(p[1]) - static_cast<char*>(p[0]), static_cast<long>(array_struct_size(2)));
  long long data0;
  std::memcpy(&data0, p[2], 8);
  EXPECT_EQ(data0, static_cast<long long>(reinterpret_cast<std::uintptr_t>(x.data()) + 3 * 2));
  // Refilled for the next launch in the same storage.
  const void* first = p[0];
  buf.clear();
  put_array(buf, v);
  EXPECT_EQ(buf.pointers()[0], first);
}

TEST(ArgPacking, ScalarsConvertWithTheRawKernelChecks) {
  auto msg = [](DType want, KernelArg a, std::string_view param = "n") {
    try {
      convert_scalar("scale", 1, param, want, a);
      return std::string("no error");
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(msg(DType::Int32, KernelArg::of_int(3000000000LL)),
            "kernel 'scale': argument 2 'n' is int32 but 3000000000 does not fit in int32");
  EXPECT_EQ(msg(DType::UInt8, KernelArg::of_int(-1), ""),
            "kernel 'scale': argument 2 is uint8 but -1 does not fit in uint8");
  EXPECT_EQ(msg(DType::Int64, KernelArg::of_float(2.5)),
            "kernel 'scale': argument 2 'n' is int64 but got a float 2.5; pass an integer");
  EXPECT_EQ(
      msg(DType::Float32, KernelArg::of_typed(Scalar::of_float(1, DType::Float64))),
      "kernel 'scale': argument 2 'n' is float32 but got a float64 scalar; pass luda.float32(v) or a plain number");
  EXPECT_EQ(msg(DType::Float32, KernelArg::of_bool(true)),
            "kernel 'scale': argument 2 'n' is float32 but got the boolean true; pass a number");
  EXPECT_EQ(msg(DType::Bool, KernelArg::of_int(1)),
            "kernel 'scale': argument 2 'n' is bool but got the integer 1; pass true or false");
  // Values that convert.
  EXPECT_EQ(convert_scalar("k", 0, "", DType::Float32, KernelArg::of_float(0.1)),
            Scalar::of_float(0.1, DType::Float32));
  EXPECT_EQ(convert_scalar("k", 0, "", DType::Int8, KernelArg::of_float(-128.0)), Scalar::of_int(-128, DType::Int8));
  EXPECT_EQ(convert_scalar("k", 0, "", DType::Float64, KernelArg::of_int(1LL << 53)),
            Scalar::of_float(9007199254740992.0, DType::Float64));
  EXPECT_EQ(convert_scalar("k", 0, "", DType::UInt64, KernelArg::of_int(7)), Scalar::of_int(7, DType::UInt64));
}

// ---- JitKernel without a GPU: a hand-written front end ------------------------------------

// Stands in for dsl::compile_kernel: an add kernel over 1-d arrays of the requested dtype
// (ABI of dsl/compile.h), with the BoundsRecord when asked.
dsl::CudaKernel hand_written(const dsl::KernelRequest& r, dsl::Environment&) {
  dsl::CudaKernel k;
  const char* t = dsl::scalar_c_type(r.args.at(0).scalar);
  k.entry = "add_kernel_" + std::string(dsl::scalar_name(r.args[0].scalar));
  k.params = r.args;
  for (Type& p : k.params) p.weak = false;
  if (k.params.size() == 4) k.params[3] = Type::scalar_of(dsl::Scalar::Int64);  // its `long long n`
  k.bounds_record = r.options.boundscheck;
  k.typed = fmt::format("add_kernel({})", r.args.size());
  k.code = fmt::format(R"(struct Bounds {{ int hit, line, axis, pad; long long index, extent; }};
struct A1 {{ {0}* data; long long shape[1]; long long strides[1]; }};
extern "C" __global__ void {1}(A1 x, A1 y, A1 out, long long n{2}) {{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  {3}
  out.data[i * out.strides[0]] = x.data[i * x.strides[0]] + y.data[i * y.strides[0]];
}}
)",
                       t, k.entry, k.bounds_record ? ", Bounds* bounds" : "",
                       k.bounds_record ? "if (i >= out.shape[0]) { if (atomicCAS(&bounds->hit, 0, 1) == 0) "
                                         "{ bounds->line = 14; bounds->axis = 0; bounds->index = i; "
                                         "bounds->extent = out.shape[0]; } return; }"
                                       : "");
  if (r.options.target == dsl::Target::Cpu)  // the per-thread entry codegen would emit (dsl/compile.h)
    k.code +=
        fmt::format("LUDA_CPU_EXPORT void {0}_cpu(void* const* a) {{ {0}(*(A1*)a[0], *(A1*)a[1], *(A1*)a[2], "
                    "*(long long*)a[3]{1}); }}\nextern \"C\" {{ LUDA_CPU_VISIBLE int {0}_cpu_needs_fibers = 0; }}\n",
                    k.entry, k.bounds_record ? ", *(Bounds**)a[4]" : "");
  return k;
}

class JitKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("luda_jit_test_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    cache_ = std::make_unique<DiskCache>(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<JitKernel> make(JitOptions options = {}, int* frontend_calls = nullptr) {
    JitKernel::Setup s;
    auto chunk = std::make_shared<const dsl::Chunk>(dsl::Chunk{"hist.lua", "-- text"});
    s.function = {chunk, 10, 16, 4, {}};
    s.name = "add_kernel";
    s.param_names = {"x", "y", "out", "n"};
    s.options = options;
    s.cache = cache_.get();
    s.frontend = [frontend_calls, this](const dsl::KernelRequest& r, dsl::Environment& e) {
      if (frontend_calls) ++*frontend_calls;
      requests_.push_back(r);
      return hand_written(r, e);
    };
    return std::make_unique<JitKernel>(std::move(s), env_);
  }

  NoGlobals env_;
  fs::path dir_;
  std::unique_ptr<DiskCache> cache_;
  std::vector<dsl::KernelRequest> requests_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(JitKernelTest, OptionsReachTheRequest) {
  ::setenv("LUDA_BOUNDSCHECK", "1", 1);
  auto k = make();
  ::setenv("LUDA_BOUNDSCHECK", "0", 1);
  auto plain = make();
  ::setenv("LUDA_BOUNDSCHECK", "maybe", 1);
  EXPECT_EQ(error_of([&] { make(); }),
            "LUDA_BOUNDSCHECK is 'maybe': expected 0 (bounds checks off) or 1 (on), or leave it unset for each "
            "kernel's boundscheck option (default: on for the cpu device, off for cuda)");
  ::unsetenv("LUDA_BOUNDSCHECK");
  auto unset = make();
  EXPECT_EQ(k->options().boundscheck, std::optional<bool>(true));
  EXPECT_EQ(plain->options().boundscheck, std::optional<bool>(false));
  EXPECT_EQ(unset->options().boundscheck, std::nullopt);  // the target decides: on for cpu, off for cuda
  k->inspect("types", "void(float32[:], float32[:], float32[:], int64)", 0);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_TRUE(requests_[0].options.boundscheck);
  EXPECT_EQ(requests_[0].name, "add_kernel");
  EXPECT_EQ(requests_[0].function.line_defined, 10);
}

TEST_F(JitKernelTest, InspectNeedsNoGpuAndNamesTheSpecialization) {
  int calls = 0;
  auto k = make({}, &calls);
  EXPECT_EQ(error_of([&] { k->inspect("cuda", "", 0); }),
            "kernel 'add_kernel' has no specialization yet; name a signature: "
            "add_kernel:inspect(\"cuda\", \"void(float32[:], ...)\")");
  std::string code = k->inspect("cuda", "void(float32[:], float32[:], float32[:], int64)", 0);
  EXPECT_NE(code.find("extern \"C\" __global__ void add_kernel_float32(A1 x"), std::string::npos) << code;
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].args[0], Type::array_of(dsl::Scalar::Float32, 1));
  EXPECT_EQ(requests_[0].args[3], Type::scalar_of(dsl::Scalar::Int64));
  // The only specialization may be left unnamed; asking again compiles nothing.
  EXPECT_EQ(k->inspect("types", "", 0), "add_kernel(4)");
  EXPECT_EQ(k->inspect("cuda", "void(float32[:], float32[:], float32[:], int64)", 0), code);
  EXPECT_EQ(calls, 1);
  k->compile("void(float64[:], float64[:], float64[:], int64)");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(k->signatures().size(), 2u);
  std::string many = error_of([&] { k->inspect("cuda", "", 0); });
  EXPECT_EQ(many.find("kernel 'add_kernel' has 2 specializations ("), 0u) << many;
  EXPECT_NE(many.find("); name one as the second argument"), std::string::npos) << many;
  EXPECT_EQ(error_of([&] { k->inspect("sass", "", 0); }),
            "kernel 'add_kernel': unknown inspect kind 'sass'; expected \"types\", \"cuda\" or \"ptx\"");
  EXPECT_EQ(error_of([&] { k->compile("float32(float32[:], float32[:], float32[:], int64)"); }),
            "kernel 'add_kernel': a kernel returns nothing, so its signature starts with void, as in "
            "\"void(float32[:], int64)\"; got \"float32(float32[:], float32[:], float32[:], int64)\"");
  EXPECT_EQ(error_of([&] { k->compile("void(float32[:])"); }),
            "kernel 'add_kernel' takes 4 arguments (x, y, out, n), got 1");
  EXPECT_EQ(k->stats().specializations, 2u);
}

TEST_F(JitKernelTest, InspectPtxNeedsOnlyNvrtc) {
  auto k = make();
  std::string ptx = k->inspect("ptx", "void(float32[:], float32[:], float32[:], int64)", 90);
  EXPECT_NE(ptx.find(".entry add_kernel_float32("), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx.back(), '\0');
  // The boundscheck variant (used on the GPU below) compiles too, with the record pointer.
  auto checked = make(JitOptions{true, false, false});
  ptx = checked->inspect("ptx", "void(float32[:], float32[:], float32[:], int64)", 90);
  EXPECT_NE(ptx.find("atom.global.cas"), std::string::npos) << ptx;
}

TEST_F(JitKernelTest, LaunchChecksTheArgumentCountFirst) {
  auto k = make();
  NDArray x = host_array({4}, DType::Float32);
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(x)};
  LaunchConfig config;
  EXPECT_EQ(error_of([&] { k->launch(config, args); }), "kernel 'add_kernel' takes 4 arguments (x, y, out, n), got 2");
}

// Kernels run where their arrays are: host arrays, the cpu target (GPU or not).
TEST_F(JitKernelTest, HostArraysRunOnTheCpuTarget) {
  auto k = make();
  std::vector<float> a = {1.5f, -2, 3, 4.25f}, b = {8, 0.5f, -3, 1};
  NDArray x = NDArray::from_host(a.data(), {4}, DType::Float32, Device::cpu());
  NDArray y = NDArray::from_host(b.data(), {4}, DType::Float32, Device::cpu());
  NDArray out = host_array({4}, DType::Float32);
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(y), KernelArg::of_array(out),
                                 KernelArg::of_float(4.0)};  // an integral float converts to int64
  LaunchConfig c;
  c.block.x = 8;
  k->launch(c, args);
  std::vector<float> got(4);
  std::memcpy(got.data(), out.data(), sizeof(float) * 4);
  EXPECT_EQ(got, (std::vector<float>{9.5f, -1.5f, 0, 5.25f}));
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].options.target, dsl::Target::Cpu);
  EXPECT_EQ(k->stats().host_compiles, 1u);
  EXPECT_EQ(k->stats().nvrtc_compiles, 0u);
}

// ---- on a GPU -------------------------------------------------------------------------------

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  std::vector<float> v(n);
  for (auto& f : v) f = d(rng);
  return v;
}

NDArray device_floats(const std::vector<float>& v) {
  return NDArray::from_host(v.data(), {static_cast<std::int64_t>(v.size())}, DType::Float32, Device::cuda(0));
}

LaunchConfig config_1d(long long grid, long long block) {
  LaunchConfig c;
  c.grid.x = grid;
  c.block.x = block;
  return c;
}

TEST_F(JitKernelTest, GpuSpecializesOnceThenHitsMemory) {
  LUDA_REQUIRE_GPU();
  const std::size_t n = 1000;
  std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
  NDArray x = device_floats(a), y = device_floats(b), out = NDArray::zeros({1000}, DType::Float32, Device::cuda(0));
  auto k = make();
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(y), KernelArg::of_array(out),
                                 KernelArg::of_int(static_cast<std::int64_t>(n))};
  k->launch(config_1d(4, 256), args);
  k->launch(config_1d(4, 256), args);
  std::vector<float> got = host_values<float>(out);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << i;
  JitStats s = k->stats();
  EXPECT_EQ(s.calls, 2u);
  EXPECT_EQ(s.memory_hits, 1u);
  EXPECT_EQ(s.specializations, 1u);
  EXPECT_EQ(s.nvrtc_compiles, 1u);
  EXPECT_EQ(s.disk_misses, 1u);
  EXPECT_EQ(s.loads, 1u);
  EXPECT_EQ(cache_->stats().writes, 1u);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].args[3], Type::scalar_of(dsl::Scalar::Int64, true));  // a weak Lua integer

  // A second kernel object (as in a second process) finds the binary on disk.
  auto again = make();
  std::vector<float> zeros(n, 0.0f);
  NDArray out2 = device_floats(zeros);
  args[2] = KernelArg::of_array(out2);
  again->launch(config_1d(4, 256), args);
  got = host_values<float>(out2);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << i;
  EXPECT_EQ(again->stats().disk_hits, 1u);
  EXPECT_EQ(again->stats().nvrtc_compiles, 0u);
}

TEST_F(JitKernelTest, GpuMixedDevicesAreAnErrorNamingTheArguments) {
  LUDA_REQUIRE_GPU();
  std::vector<float> a = random_floats(300, 3), b = random_floats(300, 4);
  NDArray x = NDArray::from_host(a.data(), {300}, DType::Float32, Device::cpu());
  NDArray y = device_floats(b);
  NDArray out = host_array({300}, DType::Float32);
  auto k = make();
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(y), KernelArg::of_array(out),
                                 KernelArg::of_int(300)};
  EXPECT_EQ(error_of([&] { k->launch(config_1d(2, 256), args); }),
            "kernel 'add_kernel' got arrays on cpu (x, out) and cuda:0 (y); put them on one device (x:to(\"cuda:0\"))");
  EXPECT_EQ(k->stats().specializations, 0u);
}

TEST_F(JitKernelTest, GpuCheckedSignatureConvertsLuaNumbers) {
  LUDA_REQUIRE_GPU();
  std::vector<float> a = random_floats(64, 5), b = random_floats(64, 6);
  NDArray x = device_floats(a), y = device_floats(b), out = device_floats(std::vector<float>(64, 0.0f));
  int calls = 0;
  auto k = make({}, &calls);
  k->compile("void(float32[:], float32[:], float32[:], int64)");
  EXPECT_EQ(k->stats().loads, 1u);
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(y), KernelArg::of_array(out),
                                 KernelArg::of_int(64)};
  k->launch(config_1d(1, 64), args);
  EXPECT_EQ(calls, 1);  // the weak integer used the compiled int64 signature
  EXPECT_EQ(k->stats().loads, 1u);
  std::vector<float> got = host_values<float>(out);
  for (std::size_t i = 0; i < 64; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << i;
  args[3] = KernelArg::of_float(2.5);
  EXPECT_EQ(error_of([&] { k->launch(config_1d(1, 64), args); }),
            "kernel 'add_kernel': argument 4 'n' is int64 but got a float 2.5; pass an integer");
}

TEST_F(JitKernelTest, GpuLaunchConfigErrorsNameTheKernel) {
  LUDA_REQUIRE_GPU();
  NDArray x = device_floats(random_floats(8, 7));
  auto k = make();
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(x), KernelArg::of_array(x),
                                 KernelArg::of_int(8)};
  std::string e = error_of([&] { k->launch(config_1d(1, 4096), args); });
  EXPECT_EQ(e.find("kernel 'add_kernel': block of (4096,) has 4096 threads; cuda:0 ("), 0u) << e;
}

TEST_F(JitKernelTest, GpuBoundscheckRaisesWithTheLuaLine) {
  LUDA_REQUIRE_GPU();
  std::vector<float> a = random_floats(2048, 8);
  NDArray x = device_floats(a), out = NDArray::zeros({1024}, DType::Float32, Device::cuda(0));
  auto k = make(JitOptions{true, false, false});
  std::vector<KernelArg> args = {KernelArg::of_array(x), KernelArg::of_array(x), KernelArg::of_array(out),
                                 KernelArg::of_int(1024)};
  k->launch(config_1d(4, 256), args);  // in range: no error, and the values are right
  std::vector<float> got = host_values<float>(out);
  for (std::size_t i = 0; i < 1024; ++i) ASSERT_EQ(got[i], a[i] + a[i]) << i;
  args[3] = KernelArg::of_int(1025);  // one thread past the end of out
  EXPECT_EQ(error_of([&] { k->launch(config_1d(8, 256), args); }),
            "kernel 'add_kernel' at hist.lua:14: index 1024 out of range for axis 0 of size 1024");
  // The record is reset before each launch: an in-range launch after is clean.
  args[3] = KernelArg::of_int(1024);
  EXPECT_EQ(error_of([&] { k->launch(config_1d(4, 256), args); }), "no error");
}

}  // namespace
}  // namespace luda::jit

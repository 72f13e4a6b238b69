// Checking and converting raw-kernel arguments before launch (no GPU needed).
#include "jit/call/call_args.h"
#include "jit/raw/arguments.h"
#include "jit/raw/raw_module.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>
#include <random>

namespace luda::jit {
namespace {

const char* kSource = R"(
struct Half { unsigned short bits; };
extern "C" __global__ void add_func(const float* x1, const float* x2, float* y) {}
extern "C" __global__ void scale(float* x, float a, int n) {}
extern "C" __global__ void many(double d, long long l, unsigned char u, bool b, unsigned long long s,
                                short h, void* any, float*) {}
extern "C" __global__ void one(int n) {}
extern "C" __global__ void none() {}
extern "C" __global__ void half_arg(Half h) {}
)";

// The parameter list as NVRTC reads it (no GPU needed), read once per kernel.
KernelSignature sig(const char* name) {
  static std::map<std::string, KernelSignature> read;
  if (auto it = read.find(name); it != read.end()) return it->second;
  auto s = RawKernel::create(kSource, name)->signature_for_arch(80);
  if (!s) throw std::runtime_error(std::string("no signature for ") + name);
  return read.emplace(name, *s).first->second;
}

// Slot i of a packed buffer read as T.
template <class T>
T value(const ArgBuffer& b, std::size_t i) {
  T v;
  std::memcpy(&v, b.slot(i), sizeof(T));
  return v;
}
// Whether slot i holds exactly `n` bytes of its value: the rest of its 8-byte word is zero.
bool holds(const ArgBuffer& b, std::size_t i, std::size_t n) {
  for (std::size_t k = n; k < 8; ++k)
    if (b.slot(i)[k] != 0) return false;
  return true;
}

// The message of the Error that packing throws; "" when it does not throw.
std::string error_of(const char* kernel, std::optional<KernelSignature> s, std::vector<KernelArg> args) {
  try {
    pack_arguments(kernel, s, args);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(KernelArgs, CountMismatch) {
  EXPECT_EQ(error_of("add_func", sig("add_func"), {KernelArg::of_int(1), KernelArg::of_int(2)}),
            "raw_kernel 'add_func' takes 3 arguments (x1, x2, y), got 2");
  EXPECT_EQ(error_of("one", sig("one"), {}), "raw_kernel 'one' takes 1 argument (n), got 0");
  EXPECT_EQ(error_of("none", sig("none"), {KernelArg::of_int(1)}), "raw_kernel 'none' takes no arguments, got 1");
  EXPECT_EQ(error_of("many", sig("many"), {KernelArg::of_int(1)}),
            "raw_kernel 'many' takes 8 arguments (d, l, u, b, s, h, any, float*), got 1");
}

TEST(KernelArgs, ConvertsNumbersToDeclaredScalarTypes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> real(-1e3, 1e3);
  std::uniform_int_distribution<int> small(-30000, 30000);
  for (int trial = 0; trial < 20; ++trial) {
    double d = real(rng), a = real(rng);
    int h = small(rng);
    std::int64_t l = static_cast<std::int64_t>(small(rng)) * 1000003;
    auto packed_scale = pack_arguments("scale", std::nullopt, std::vector<KernelArg>{KernelArg::of_float(a)});
    EXPECT_EQ(value<double>(packed_scale, 0), a);  // unparsed: a float passes as float64

    std::optional<KernelSignature> s = sig("many");
    // Arrays cannot be made on a GPU here; pointer slots are tested on the GPU. Pack the
    // scalar prefix through a signature trimmed to its first six parameters.
    s->params.resize(6);
    ArgBuffer p = pack_arguments("many", s,
                                 std::vector<KernelArg>{KernelArg::of_float(d), KernelArg::of_int(l),
                                                        KernelArg::of_int(200), KernelArg::of_bool(trial % 2),
                                                        KernelArg::of_float(static_cast<double>(trial) * 4.0),
                                                        KernelArg::of_int(h)});
    ASSERT_EQ(p.count(), 6u);
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(p.pointers()[i], p.slot(i));
    EXPECT_EQ(value<double>(p, 0), d);
    EXPECT_EQ(value<long long>(p, 1), l);
    EXPECT_EQ(value<unsigned char>(p, 2), 200);
    EXPECT_EQ(value<bool>(p, 3), trial % 2 == 1);
    EXPECT_EQ(value<std::uint64_t>(p, 4), static_cast<std::uint64_t>(trial) * 4);  // 4.0 is an integer
    EXPECT_EQ(value<short>(p, 5), h);
    EXPECT_TRUE(holds(p, 2, 1));  // unsigned char: one byte
    EXPECT_TRUE(holds(p, 3, 1));  // bool
    EXPECT_TRUE(holds(p, 5, 2));  // short

    // float param: a Lua float rounds to float32, a Lua integer converts.
    std::optional<KernelSignature> sc = sig("scale");
    sc->params.erase(sc->params.begin());
    ArgBuffer q = pack_arguments("scale", sc, std::vector<KernelArg>{KernelArg::of_float(a), KernelArg::of_int(h)});
    EXPECT_EQ(value<float>(q, 0), static_cast<float>(a));
    EXPECT_TRUE(holds(q, 0, 4));
    EXPECT_EQ(value<int>(q, 1), h);
    ArgBuffer r = pack_arguments("scale", sc,
                                 std::vector<KernelArg>{KernelArg::of_int(h), KernelArg::of_int(l % 1000)});
    EXPECT_EQ(value<float>(r, 0), static_cast<float>(h));
  }
}

TEST(KernelArgs, TypedScalarsMustMatch) {
  ArgBuffer p = pack_arguments("one", sig("one"),
                               std::vector<KernelArg>{KernelArg::of_typed(Scalar::of_int(-77, DType::Int32))});
  EXPECT_EQ(value<int>(p, 0), -77);
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_typed(Scalar::of_int(3, DType::UInt8))}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got a uint8 scalar; pass "
            "luda.int32(v) or a plain number");
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_typed(Scalar::of_int(3, DType::Int64))}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got an int64 scalar; pass "
            "luda.int32(v) or a plain number");
}

TEST(KernelArgs, ScalarErrors) {
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_int(4294967296LL)}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but 4294967296 does not fit in int32");
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_float(2.5)}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got a float 2.5; pass an integer");
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_float(1e10)}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but 10000000000.0 does not fit in int32");
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_float(std::numeric_limits<double>::infinity())}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got a float inf; pass an integer");
  // Lua's 0/0 has its sign bit set; both NaNs read "nan", as NumPy prints them.
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_float(-std::numeric_limits<double>::quiet_NaN())}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got a float nan; pass an integer");
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_float(std::numeric_limits<double>::quiet_NaN())}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got a float nan; pass an integer");
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_bool(true)}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got the boolean true; pass a number");
  auto many = sig("many");
  many.params.resize(4);
  EXPECT_EQ(error_of("many", many,
                     {KernelArg::of_float(1), KernelArg::of_int(1), KernelArg::of_int(-1), KernelArg::of_bool(false)}),
            "raw_kernel 'many': argument 3 'u' is 'unsigned char u' but -1 does not fit in uint8");
  EXPECT_EQ(error_of("many", many,
                     {KernelArg::of_float(1), KernelArg::of_int(1), KernelArg::of_int(1), KernelArg::of_int(1)}),
            "raw_kernel 'many': argument 4 'b' is 'bool b' but got the integer 1; pass true or false");
  EXPECT_EQ(error_of("half_arg", sig("half_arg"), {KernelArg::of_float(1)}),
            "raw_kernel 'half_arg': argument 1 'h' is 'Half h', a type luda cannot pass; declare "
            "the parameter with a scalar type (int, float, double, ...) or as a pointer");
}

TEST(KernelArgs, PointerParameterErrors) {
  NDArray f64 = NDArray::zeros({3}, DType::Float64, Device::cpu());
  NDArray f32 = NDArray::zeros({3}, DType::Float32, Device::cpu());
  EXPECT_EQ(error_of("add_func", sig("add_func"),
                     {KernelArg::of_array(f32), KernelArg::of_array(f64), KernelArg::of_array(f32)}),
            "raw_kernel 'add_func': argument 2 'x2' is 'const float* x2' but got a float64 array; "
            "pass a float32 array");
  EXPECT_EQ(error_of("add_func", sig("add_func"),
                     {KernelArg::of_array(f64), KernelArg::of_array(f32), KernelArg::of_array(f32)}),
            "raw_kernel 'add_func': argument 1 'x1' is 'const float* x1' but got a float64 array; "
            "pass a float32 array");
  EXPECT_EQ(error_of("add_func", sig("add_func"),
                     {KernelArg::of_int(5), KernelArg::of_array(f32), KernelArg::of_array(f32)}),
            "raw_kernel 'add_func': argument 1 'x1' is 'const float* x1' but got the integer 5; "
            "pass an array");
  EXPECT_EQ(error_of("scale", sig("scale"),
                     {KernelArg::of_typed(Scalar::of_float(1, DType::Float32)), KernelArg::of_float(1),
                      KernelArg::of_int(1)}),
            "raw_kernel 'scale': argument 1 'x' is 'float* x' but got a float32 scalar; pass an array");
  EXPECT_EQ(error_of("scale", sig("scale"), {KernelArg::of_float(0.25), KernelArg::of_float(1), KernelArg::of_int(1)}),
            "raw_kernel 'scale': argument 1 'x' is 'float* x' but got a float 0.25; pass an array");
  EXPECT_EQ(error_of("one", sig("one"), {KernelArg::of_array(f32)}),
            "raw_kernel 'one': argument 1 'n' is 'int n' but got a float32 array; pass a number");
  // The unnamed pointer of `many` shows its declaration.
  auto many = sig("many");
  std::vector<KernelArg> args = {KernelArg::of_float(1),   KernelArg::of_int(1),    KernelArg::of_int(1),
                                 KernelArg::of_bool(true), KernelArg::of_int(1),    KernelArg::of_int(1),
                                 KernelArg::of_array(f64), KernelArg::of_array(f64)};
  // void* takes any dtype (and cpu arrays run on the cpu), so the error is argument 8's.
  EXPECT_EQ(error_of("many", many, args),
            "raw_kernel 'many': argument 8 is 'float*' but got a float64 array; pass a float32 array");
  args[6] = KernelArg::of_int(0);
  EXPECT_EQ(error_of("many", many, args),
            "raw_kernel 'many': argument 7 'any' is 'void* any' but got the integer 0; pass an array");
}

TEST(KernelArgs, UnparsedListPassesAsCupyDoes) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::int64_t> big(-(1LL << 50), 1LL << 50);
  std::int64_t i = big(rng);
  double f = static_cast<double>(big(rng)) / 7.0;
  ArgBuffer p = pack_arguments("tmpl", std::nullopt,
                               std::vector<KernelArg>{KernelArg::of_int(i), KernelArg::of_float(f),
                                                      KernelArg::of_typed(Scalar::of_int(-5, DType::Int16)),
                                                      KernelArg::of_bool(true)});
  ASSERT_EQ(p.count(), 4u);
  EXPECT_EQ(value<std::int64_t>(p, 0), i);
  EXPECT_EQ(value<double>(p, 1), f);
  EXPECT_EQ(value<short>(p, 2), -5);
  EXPECT_TRUE(holds(p, 2, 2));  // a typed scalar passes its own width
  EXPECT_EQ(value<bool>(p, 3), true);
  EXPECT_TRUE(holds(p, 3, 1));
  // A cpu array passes its host address; the launch then runs on the cpu.
  NDArray cpu = NDArray::zeros({2}, DType::Int32, Device::cpu());
  ArgBuffer q = pack_arguments("tmpl", std::nullopt,
                               std::vector<KernelArg>{KernelArg::of_int(1), KernelArg::of_array(cpu)});
  EXPECT_EQ(value<void*>(q, 1), cpu.data());
}

TEST(KernelArgs, PackedBufferSurvivesAMove) {
  ArgBuffer p = pack_arguments("one", sig("one"), std::vector<KernelArg>{KernelArg::of_int(42)});
  ArgBuffer q = std::move(p);
  EXPECT_EQ(*static_cast<int*>(q.pointers()[0]), 42);
  EXPECT_EQ(q.pointers()[0], q.slot(0));
}

// Launches reuse one buffer per thread (launch_buffer): a short call after a long one, and a call
// after a failed one, must leave nothing of the earlier call behind.
TEST(KernelArgs, AReusedBufferHoldsOnlyTheLastCall) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-30000, 30000);
  NDArray cpu = NDArray::zeros({4}, DType::Float32, Device::cpu());
  ArgBuffer& p = launch_buffer();
  for (int trial = 0; trial < 10; ++trial) {
    double a = small(rng) / 8.0;
    int n = small(rng);
    pack_arguments(p, "scale", sig("scale"),
                   std::vector<KernelArg>{KernelArg::of_array(cpu), KernelArg::of_float(a), KernelArg::of_int(n)});
    ASSERT_EQ(p.count(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(p.pointers()[i], p.slot(i));
    EXPECT_EQ(value<void*>(p, 0), cpu.data());
    EXPECT_EQ(value<float>(p, 1), static_cast<float>(a));
    EXPECT_EQ(value<int>(p, 2), n);

    pack_arguments(p, "one", sig("one"), std::vector<KernelArg>{KernelArg::of_int(n)});
    ASSERT_EQ(p.count(), 1u);
    EXPECT_EQ(value<int>(p, 0), n);
    EXPECT_TRUE(holds(p, 0, 4));
    EXPECT_EQ(p.pointers()[0], p.slot(0));

    // A failed pack, then a good one: the same errors, and a clean result after.
    EXPECT_THROW(pack_arguments(p, "scale", sig("scale"),
                                std::vector<KernelArg>{KernelArg::of_array(cpu), KernelArg::of_bool(true),
                                                       KernelArg::of_int(n)}),
                 Error);
    pack_arguments(p, "one", sig("one"), std::vector<KernelArg>{KernelArg::of_int(n + 1)});
    ASSERT_EQ(p.count(), 1u);
    EXPECT_EQ(value<int>(p, 0), n + 1);
  }
}

// The launch paths name the kernel by kind and name, formatted only for an error; the
// message is arrays_device's.
TEST(KernelArgs, ArraysDeviceByKindAndName) {
  NDArray x = NDArray::zeros({3}, DType::Float32, Device::cpu());
  NDArray empty;
  std::vector<KernelArg> good{KernelArg::of_array(x), KernelArg::of_int(2), KernelArg::of_array(x)};
  std::vector<std::string> names{"x", "n", "y"};
  EXPECT_EQ(arrays_device("kernel", "add", good, names), Device::cpu());
  EXPECT_EQ(arrays_device("kernel", "add", std::vector<KernelArg>{KernelArg::of_int(1)}, names), std::nullopt);
  std::vector<KernelArg> bad{KernelArg::of_array(x), KernelArg::of_int(2), KernelArg::of_array(empty)};
  std::string message;
  try {
    arrays_device("kernel", "add", bad, names);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "kernel 'add': argument 3 'y' is an empty array handle; pass an array");
}

}  // namespace
}  // namespace luda::jit

// The kernel kinds (jit/kinds/elementwise.h) end to end with hand-written element code: every layout
// and reduction strategy of the templates, on the cpu target always and on cuda when a
// device is there, against host references on random inputs; the CUDA text of each
// template compiled by NVRTC (no GPU needed) and checked for vector loads and for float64
// in float32 kernels; the errors, pinned.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>

#include <fmt/format.h>

#include "dsl/device_function.h"
#include "jit/compile/nvrtc.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/layout.h"
#include "jit/kinds/reduction.h"
#include "jit/kinds/templates.h"
#include "tests/dsl/test_environment.h"
#include "tests/test_support.h"

namespace luda::jit {
namespace {

namespace fs = std::filesystem;
using dsl::Scalar;
using ElementFrontend = decltype(ElementwiseSetup::frontend);
using ReductionFrontend = decltype(ReductionSetup::frontend);

const char* c_of(Scalar s) { return dsl::scalar_c_type(s); }

// The common type of the scalar inputs with NumPy's rules for weak Lua numbers.
Scalar common_type(std::span<const dsl::Type> in) {
  std::optional<dsl::Type> t;
  for (const dsl::Type& x : in)
    if (x.kind == dsl::Type::Kind::Scalar) t = t ? dsl::promote(*t, x) : x;
  return t ? t->scalar : Scalar::Float64;
}

// `static __device__ OUT f(P0 a0, P1 a1, ...) { return EXPR; }`: one element function.
ElementCode element_code(std::vector<Scalar> params, Scalar out, const std::string& expr) {
  ElementCode c;
  c.call = fmt::format("luda_test_f_{}", static_cast<int>(out));
  std::string list;
  for (std::size_t k = 0; k < params.size(); ++k) {
    list += fmt::format("{}{} a{}", k ? ", " : "", c_of(params[k]), k);
    c.params.push_back(dsl::Type::scalar_of(params[k]));
  }
  c.functions = fmt::format("static __device__ {} {}({}) {{ return {}; }}\n", c_of(out), c.call, list, expr);
  c.outputs = {out};
  c.typed = fmt::format("f({}) -> {}", list, dsl::scalar_name(out));
  return c;
}

// Parameters of the inputs' common type (or `fixed`), one output of that type (or `out`).
ElementFrontend expr_frontend(std::string expr, std::optional<Scalar> fixed = {}, std::optional<Scalar> out = {}) {
  return [=](std::span<const dsl::Type> in, std::span<const std::optional<Scalar>>, dsl::Target) {
    Scalar t = fixed.value_or(common_type(in));
    return element_code(std::vector<Scalar>(in.size(), t), out.value_or(t), expr);
  };
}

// CuPy's ReductionKernel pieces as device functions of type T.
ReductionCode reduction_code(Scalar t, std::size_t nin, const std::string& map, const std::string& reduce,
                             const std::string& post, const std::string& identity, std::vector<int> post_inputs = {}) {
  const char* c = c_of(t);
  ReductionCode r;
  std::string params;
  for (std::size_t k = 0; k < nin; ++k) {
    params += fmt::format("{} a{}, ", c, k);
    r.map_params.push_back(dsl::Type::scalar_of(t));
  }
  std::string post_params;
  for (int k : post_inputs) post_params += fmt::format(", {} a{}", c, k);
  r.functions = fmt::format("static __device__ {0} t_map({1}long long j) {{ (void)j; return {2}; }}\n"
                            "static __device__ {0} t_reduce({0} a, {0} b) {{ return {3}; }}\n"
                            "static __device__ {0} t_post({0} a{4}) {{ return {5}; }}\n"
                            "static __device__ {0} t_identity() {{ return {6}; }}\n",
                            c, params, map, reduce, post_params, post, identity);
  r.map = "t_map";
  r.reduce = "t_reduce";
  r.post = "t_post";
  r.identity = "t_identity";
  r.post_inputs = std::move(post_inputs);
  r.reduce_type = t;
  r.outputs = {t};
  r.typed = "reduction";
  return r;
}

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(std::is_integral_v<T> ? std::floor(d(rng)) : d(rng));
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// ---------------------------------------------------------------------------------------
// on each device

class KindsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (std::string(GetParam()) == "cuda") {
      LUDA_REQUIRE_GPU();
      device_ = Device::cuda(0);
    }
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(test.begin(), test.end(), '/', '_');
    dir_ = fs::temp_directory_path() / fmt::format("luda_kinds_test_{}_{}", ::getpid(), test);
    fs::remove_all(dir_);
    cache_ = std::make_unique<DiskCache>(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  template <class T>
  NDArray array(const std::vector<T>& v, Shape shape, DType t) {
    return NDArray::from_host(v.data(), shape, t, device_);
  }
  template <class T>
  static std::vector<T> values(const NDArray& a) {
    std::vector<std::byte> bytes = a.to_host_bytes();
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

  std::unique_ptr<ElementwiseKind> elementwise(std::string name, std::vector<std::string> ins,
                                               std::vector<std::string> outs, ElementFrontend f) {
    ElementwiseSetup s;
    s.kind = "elementwise";
    s.name = std::move(name);
    s.in_names = std::move(ins);
    s.out_names = std::move(outs);
    s.frontend = std::move(f);
    s.cache = cache_.get();
    return std::make_unique<ElementwiseKind>(std::move(s));
  }
  std::unique_ptr<ReductionKind> reduction(std::string name, std::vector<std::string> ins, ReductionFrontend f) {
    ReductionSetup s;
    s.kind = "reduction";
    s.name = std::move(name);
    s.in_names = std::move(ins);
    s.out_names = {"z"};
    s.frontend = std::move(f);
    s.cache = cache_.get();
    return std::make_unique<ReductionKind>(std::move(s));
  }

  Device device_ = Device::cpu();
  fs::path dir_;
  std::unique_ptr<DiskCache> cache_;
};

INSTANTIATE_TEST_SUITE_P(Devices, KindsTest, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

std::vector<KernelArg> args_of(std::initializer_list<const NDArray*> arrays) {
  std::vector<KernelArg> out;
  for (const NDArray* a : arrays) out.push_back(KernelArg::of_array(*a));
  return out;
}

TEST_P(KindsTest, ContiguousFmaMatchesTheHostAndHitsMemory) {
  const std::size_t n = 1000003;  // not a multiple of any vector width: a tail
  auto x = random_values<float>(n, 1), w = random_values<float>(n, 2), b = random_values<float>(n, 3);
  NDArray X = array(x, {static_cast<std::int64_t>(n)}, DType::Float32), W = array(w, X.shape(), DType::Float32),
          B = array(b, X.shape(), DType::Float32);
  auto k = elementwise("axpb", {"x", "w", "b"}, {"z"}, expr_frontend("a0 * a1 + a2"));
  NDArray out[1];
  k->call(args_of({&X, &W, &B}), out);
  ASSERT_EQ(out[0].dtype(), DType::Float32);
  ASSERT_EQ(out[0].shape(), X.shape());
  std::vector<float> z = values<float>(out[0]);
  for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(z[i], static_cast<double>(x[i]) * w[i] + b[i], 1e-6) << i;
  NDArray again[1] = {NDArray::zeros(X.shape(), DType::Float32, device_)};
  k->call(args_of({&X, &W, &B}), again);  // out= given: another key (no allocation)
  k->call(args_of({&X, &W, &B}), again);
  EXPECT_EQ(values<float>(again[0]), z);
  JitStats s = k->stats();
  EXPECT_EQ(s.calls, 3u);
  EXPECT_EQ(s.memory_hits, 1u);
  EXPECT_EQ(s.specializations, 2u);  // the output's dtype given or not
}

TEST_P(KindsTest, BroadcastingWithWeakScalarsAndSizeOneAxes) {
  auto x = random_values<float>(37 * 5, 4), w = random_values<float>(5, 5);
  NDArray X = array(x, {37, 5}, DType::Float32), W = array(w, {5}, DType::Float32);
  auto k = elementwise("axpb", {"x", "w", "b"}, {"z"}, expr_frontend("a0 * a1 + a2"));
  std::vector<KernelArg> args = {KernelArg::of_array(X), KernelArg::of_array(W), KernelArg::of_float(0.5)};
  NDArray out[1];
  k->call(args, out);
  ASSERT_EQ(out[0].shape(), (Shape{37, 5}));
  EXPECT_EQ(out[0].dtype(), DType::Float32);  // the weak 0.5 stays float32
  std::vector<float> z = values<float>(out[0]);
  for (std::size_t i = 0; i < 37; ++i)
    for (std::size_t j = 0; j < 5; ++j) ASSERT_NEAR(z[i * 5 + j], x[i * 5 + j] * w[j] + 0.5, 1e-6);

  // (4, 1, 3) with (5, 1): (4, 5, 3), integers exactly.
  auto a = random_values<std::int32_t>(12, 6, -1000, 1000), c = random_values<std::int32_t>(5, 7, -1000, 1000);
  NDArray A = array(a, {4, 1, 3}, DType::Int32), C = array(c, {5, 1}, DType::Int32);
  auto add = elementwise("add", {"a", "c"}, {"z"}, expr_frontend("a0 - 3 * a1"));
  NDArray sum[1];
  add->call(args_of({&A, &C}), sum);
  ASSERT_EQ(sum[0].shape(), (Shape{4, 5, 3}));
  std::vector<std::int32_t> s = values<std::int32_t>(sum[0]);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 5; ++j)
      for (std::size_t q = 0; q < 3; ++q) ASSERT_EQ(s[(i * 5 + j) * 3 + q], a[i * 3 + q] - 3 * c[j]);

  // 0-d operands give a 0-d result; an empty operand an empty one, with nothing launched.
  NDArray P = array(std::vector<double>{2.5}, {}, DType::Float64),
          Q = array(std::vector<double>{-4}, {}, DType::Float64);
  NDArray r[1];
  add->call(args_of({&P, &Q}), r);
  ASSERT_EQ(r[0].ndim(), 0);
  EXPECT_EQ(values<double>(r[0]), std::vector<double>{14.5});
  NDArray E = NDArray::zeros({0, 3}, DType::Float64, device_), F = NDArray::zeros({3}, DType::Float64, device_);
  std::uint64_t calls = add->stats().calls;
  NDArray e[1];
  add->call(args_of({&E, &F}), e);
  EXPECT_EQ(e[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(add->stats().calls, calls);
}

TEST_P(KindsTest, StridedViewsInAndOut) {
  auto a = random_values<double>(8 * 12, 8), b = random_values<double>(12, 9);
  NDArray A = array(a, {8, 12}, DType::Float64), B = array(b, {4, 3}, DType::Float64);
  std::vector<IndexItem> idx = {Slice{1, 7, 2}, Slice{std::nullopt, std::nullopt, 3}};
  NDArray Av = A.index(idx);   // (3, 4), strides (24, 3)
  NDArray Bt = B.transpose();  // (3, 4), strides (1, 3)
  NDArray Z = NDArray::zeros({4, 3}, DType::Float64, device_);
  NDArray out[1] = {Z.transpose()};
  auto k = elementwise("sub", {"a", "b"}, {"z"}, expr_frontend("a0 - 2.0 * a1"));
  k->call(args_of({&Av, &Bt}), out);
  std::vector<double> z = values<double>(Z);  // (4, 3): z[j][i] = av[i][j] - 2 bt[i][j]
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      ASSERT_EQ(z[j * 3 + i], a[(1 + 2 * i) * 12 + 3 * j] - 2.0 * b[j * 3 + i]) << i << "," << j;

  // Misaligned starts (no 16-byte loads) and a small-dtype vector width.
  auto x = random_values<float>(1027, 10);
  NDArray X = array(x, {1027}, DType::Float32);
  std::vector<IndexItem> from1 = {Slice{1, std::nullopt, 1}};
  NDArray X1 = X.index(from1);
  auto twice = elementwise("twice", {"x"}, {"z"}, expr_frontend("a0 + a0"));
  NDArray t[1];
  twice->call(args_of({&X1}), t);
  std::vector<float> tv = values<float>(t[0]);
  for (std::size_t i = 0; i < 1026; ++i) ASSERT_EQ(tv[i], x[i + 1] * 2);
  auto u = random_values<std::uint8_t>(100, 11, 0, 100);
  NDArray U = array(u, {100}, DType::UInt8);
  NDArray tu[1];
  twice->call(args_of({&U}), tu);
  std::vector<std::uint8_t> uv = values<std::uint8_t>(tu[0]);
  for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(uv[i], u[i] * 2);
}

TEST_P(KindsTest, OutputsOverInputs) {
  // z = x + z: each element read and written by one thread.
  auto x = random_values<float>(4099, 12), z0 = random_values<float>(4099, 13);
  NDArray X = array(x, {4099}, DType::Float32), Z = array(z0, {4099}, DType::Float32);
  auto add = elementwise("add", {"x", "y"}, {"z"}, expr_frontend("a0 + a1"));
  NDArray out[1] = {Z};
  add->call(args_of({&X, &Z}), out);
  std::vector<float> z = values<float>(Z);
  for (std::size_t i = 0; i < z.size(); ++i) ASSERT_EQ(z[i], x[i] + z0[i]);
  // a[1:] = a[:-1] + 1 reads the old values, as NumPy's (the input is copied first).
  auto a = random_values<double>(1000, 14);
  NDArray A = array(a, {1000}, DType::Float64);
  std::vector<IndexItem> head = {Slice{0, 999, 1}}, tail = {Slice{1, 1000, 1}};
  NDArray in = A.index(head);
  NDArray shifted[1] = {A.index(tail)};
  auto inc = elementwise("inc", {"x"}, {"z"}, expr_frontend("a0 + 1.0"));
  inc->call(args_of({&in}), shifted);
  std::vector<double> got = values<double>(A);
  EXPECT_EQ(got[0], a[0]);
  for (std::size_t i = 1; i < 1000; ++i) ASSERT_EQ(got[i], a[i - 1] + 1.0) << i;
}

TEST_P(KindsTest, TupleOutputsReadOutputsIndexAndRawInputs) {
  // (y, z) = (y + x, x * r[i % 7] + n), r passed whole.
  ElementwiseSetup s;
  s.kind = "elementwise";
  s.name = "pair";
  s.in_names = {"x", "r"};
  s.out_names = {"y", "z"};
  s.raw = {false, true};
  s.out_read = {true, false};
  s.index_args = true;
  s.cache = cache_.get();
  s.frontend = [](std::span<const dsl::Type> in, std::span<const std::optional<Scalar>>, dsl::Target) {
    EXPECT_EQ(in[1].kind, dsl::Type::Kind::Array);
    ElementCode c;
    c.functions = R"(struct pair_result { float v0; float v1; };
static __device__ pair_result pair(float x, luda_Array<float, 1> r, float y, long long i, long long n) {
  pair_result o;
  o.v0 = y + x;
  o.v1 = x * r.data[(i % r.shape[0]) * r.strides[0]] + (float)n;
  return o;
}
)";
    c.call = "pair";
    c.params = {dsl::Type::scalar_of(Scalar::Float32), in[1]};
    c.outputs = {Scalar::Float32, Scalar::Float32};
    return c;
  };
  ElementwiseKind k(std::move(s));
  const std::int64_t n = 3001;
  auto x = random_values<float>(n, 15), y0 = random_values<float>(n, 16), r = random_values<float>(14, 17);
  NDArray X = array(x, {n}, DType::Float32), Y = array(y0, {n}, DType::Float32), R = array(r, {14}, DType::Float32);
  std::vector<IndexItem> every2 = {Slice{std::nullopt, std::nullopt, 2}};
  NDArray R2 = R.index(every2);  // 7 elements, stride 2
  NDArray outs[2] = {Y, NDArray()};
  k.call(args_of({&X, &R2}), outs);
  std::vector<float> y = values<float>(Y), z = values<float>(outs[1]);
  for (std::int64_t i = 0; i < n; ++i) {
    auto u = static_cast<std::size_t>(i);
    ASSERT_EQ(y[u], y0[u] + x[u]);
    ASSERT_NEAR(z[u], static_cast<double>(x[u]) * r[static_cast<std::size_t>(i % 7) * 2] + static_cast<double>(n), 5e-4)
        << i;
  }
}

TEST_P(KindsTest, CompileAheadAndInspect) {
  auto k = elementwise("axpb", {"x", "w", "b"}, {"z"}, expr_frontend("a0 * a1 + a2"));
  std::vector<dsl::Type> types(3, dsl::Type::scalar_of(Scalar::Float32));
  k->compile(types, device_);
  EXPECT_EQ(k->stats().specializations, 1u);
  auto x = random_values<float>(64, 18);
  NDArray X = array(x, {64}, DType::Float32);
  NDArray out[1];
  k->call(args_of({&X, &X, &X}), out);
  JitStats s = k->stats();
  EXPECT_EQ(s.memory_hits, 1u);  // the call compiled ahead
  EXPECT_EQ(s.specializations, 1u);
  EXPECT_EQ(k->inspect("types", types, device_), "f(float a0, float a1, float a2) -> float32");
  std::string cuda = k->inspect("cuda", types, device_);
  EXPECT_NE(cuda.find(device_.is_cpu() ? "_cpu_block(void* const* luda_args" : "luda_vec<float, 4>"),
            std::string::npos);
  // PTX is NVRTC's for the cuda target, wherever the arrays are, for the arch asked.
  std::string ptx = k->inspect("ptx", types, device_, 80);
  EXPECT_NE(ptx.find(".target sm_80"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_NE(ptx.find(".entry"), std::string::npos);
  EXPECT_EQ(error_of([&] { k->inspect("sass", types, device_); }),
            "elementwise 'axpb': unknown inspect kind 'sass'; expected \"types\", \"cuda\" or \"ptx\"");
}

// --- reductions

TEST_P(KindsTest, FullReductionsInOnePass) {
  const std::size_t n = 300001;
  auto x = random_values<float>(n, 20), w = random_values<float>(n, 21);
  NDArray X = array(x, {static_cast<std::int64_t>(n)}, DType::Float32), W = array(w, X.shape(), DType::Float32);
  auto sum = reduction("rsum", {"x"}, [](auto, auto, dsl::Target) {
    return reduction_code(Scalar::Float32, 1, "a0", "a + b", "a", "0.0f");
  });
  double want = 0, scale = 0;
  for (float v : x) want += v, scale += std::fabs(v);
  for (int round = 0; round < 2; ++round) {  // the counters are left at zero for the next launch
    NDArray out[1];
    sum->call(args_of({&X}), out, std::nullopt, false);
    ASSERT_EQ(out[0].ndim(), 0);
    EXPECT_NEAR(values<float>(out[0])[0], want, 1e-5 * scale);
  }
  // dnnLayer: sum(x * w) + bias, the bias a Lua number taken by post().
  auto layer = reduction("dnnLayer", {"x", "w", "bias"}, [](auto, auto, dsl::Target) {
    return reduction_code(Scalar::Float32, 3, "a0 * a1", "a + b", "a + a2", "0.0f", {2});
  });
  double dot = 0, dscale = 0;
  for (std::size_t i = 0; i < n; ++i) dot += static_cast<double>(x[i]) * w[i], dscale += std::fabs(x[i] * w[i]);
  std::vector<KernelArg> args = {KernelArg::of_array(X), KernelArg::of_array(W), KernelArg::of_float(1.25)};
  NDArray out[1];
  layer->call(args, out, std::nullopt, true);
  ASSERT_EQ(out[0].shape(), (Shape{1}));
  EXPECT_NEAR(values<float>(out[0])[0], dot + 1.25, 1e-5 * dscale);
}

// A host reference: sum over the axes in `reduced` of x (C order, shape `shape`) of
// x * (j + 1), j the C-order index within the reduced axes: checks that map gets j.
std::vector<double> weighted_sums(const std::vector<double>& x, const Shape& shape, const std::vector<bool>& reduced) {
  std::size_t nd = shape.size();
  std::size_t rows = 1;
  for (std::size_t a = 0; a < nd; ++a)
    if (!reduced[a]) rows *= static_cast<std::size_t>(shape[a]);
  std::vector<double> out(rows, 0.0);
  std::vector<std::int64_t> c(nd, 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::size_t rem = i;
    for (std::size_t a = nd; a-- > 0;) {
      c[a] = static_cast<std::int64_t>(rem % static_cast<std::size_t>(shape[a]));
      rem /= static_cast<std::size_t>(shape[a]);
    }
    std::size_t row = 0, j = 0;
    for (std::size_t a = 0; a < nd; ++a) {
      if (reduced[a]) j = j * static_cast<std::size_t>(shape[a]) + static_cast<std::size_t>(c[a]);
      else row = row * static_cast<std::size_t>(shape[a]) + static_cast<std::size_t>(c[a]);
    }
    out[row] += x[i] * static_cast<double>(j + 1);
  }
  return out;
}

TEST_P(KindsTest, AxisReductionsByStrategyMatchTheHost) {
  auto wsum = reduction("wsum", {"x"}, [](auto, auto, dsl::Target) {
    ReductionCode r = reduction_code(Scalar::Float64, 1, "a0 * (double)(j + 1)", "a + b", "a", "0.0");
    return r;
  });
  struct Case {
    Shape shape;
    std::vector<int> axes;
    bool transpose = false;
  };
  std::vector<Case> cases = {
      {{67, 301}, {1}},        // Rows
      {{67, 301}, {0}},        // Columns
      {{301, 67}, {0}, true},  // a transposed view: its axis 0 is contiguous (Rows)
      {{5, 6, 7}, {1}},        // General
      {{5, 6, 7}, {0, 2}},     // General, two reduced axes
      {{5, 6, 7}, {1, 2}},     // Rows after collapsing
      {{3, 1, 4}, {1}},        // a size-1 reduced axis
      {{5000, 64}, {0}},       // Columns, few outputs: split over segments
      {{2, 70000}, {1}},       // Rows, long rows
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("shape {} axes {} {}", shape_str(c.shape), fmt::join(c.axes, ","), c.transpose));
    std::size_t size = 1;
    for (auto e : c.shape) size *= static_cast<std::size_t>(e);
    auto x = random_values<double>(size, 22);
    NDArray X;
    std::vector<double> ref_x = x;
    if (c.transpose) {
      // The data lies as (67, 301); the view is (301, 67).
      NDArray base = array(x, {c.shape[1], c.shape[0]}, DType::Float64);
      X = base.transpose();
      ref_x.assign(size, 0);
      for (std::int64_t i = 0; i < c.shape[0]; ++i)
        for (std::int64_t j = 0; j < c.shape[1]; ++j)
          ref_x[static_cast<std::size_t>(i * c.shape[1] + j)] = x[static_cast<std::size_t>(j * c.shape[0] + i)];
    } else {
      X = array(x, c.shape, DType::Float64);
    }
    std::vector<bool> reduced(c.shape.size(), false);
    for (int a : c.axes) reduced[static_cast<std::size_t>(a)] = true;
    std::vector<double> want = weighted_sums(ref_x, c.shape, reduced);
    for (bool keepdims : {false, true}) {
      NDArray out[1];
      wsum->call(args_of({&X}), out, c.axes, keepdims);
      Shape expect;
      for (std::size_t a = 0; a < c.shape.size(); ++a)
        if (!reduced[a]) expect.push_back(c.shape[a]);
        else if (keepdims) expect.push_back(1);
      ASSERT_EQ(out[0].shape(), expect);
      std::vector<double> got = values<double>(out[0]);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-9 * (1 + std::fabs(want[i]))) << i;
    }
  }
}

TEST_P(KindsTest, ReductionsOfBroadcastInputsIntegersAndEmptyOnes) {
  // x (40, 50) * w (50,) by rows and by columns; a (1,) array broadcast along both.
  auto x = random_values<float>(40 * 50, 23), w = random_values<float>(50, 24);
  NDArray X = array(x, {40, 50}, DType::Float32), W = array(w, {50}, DType::Float32);
  NDArray S = array(std::vector<float>{0.5f}, {1}, DType::Float32);
  auto dot = reduction("dot", {"x", "w"}, [](auto, auto, dsl::Target) {
    return reduction_code(Scalar::Float32, 2, "a0 * a1", "a + b", "a", "0.0f");
  });
  for (int axis : {0, 1}) {
    for (const NDArray* second : {&W, &S}) {
      NDArray out[1];
      dot->call(args_of({&X, second}), out, std::vector<int>{axis}, false);
      std::vector<float> got = values<float>(out[0]);
      for (std::size_t r = 0; r < got.size(); ++r) {
        double want = 0;
        for (std::size_t q = 0; q < (axis == 1 ? 50u : 40u); ++q) {
          std::size_t i = axis == 1 ? r : q, j = axis == 1 ? q : r;
          want += static_cast<double>(x[i * 50 + j]) * (second == &W ? w[j] : 0.5f);
        }
        ASSERT_NEAR(got[r], want, 1e-4) << axis << " " << r;
      }
    }
  }
  // int32 max over columns, identity INT_MIN.
  auto m = random_values<std::int32_t>(33 * 129, 25, -1e9, 1e9);
  NDArray M = array(m, {33, 129}, DType::Int32);
  auto max = reduction("max", {"x"}, [](auto, auto, dsl::Target) {
    return reduction_code(Scalar::Int32, 1, "a0", "a < b ? b : a", "a", "(-2147483647 - 1)");
  });
  for (int axis : {0, 1}) {
    NDArray out[1];
    max->call(args_of({&M}), out, std::vector<int>{axis}, false);
    std::vector<std::int32_t> got = values<std::int32_t>(out[0]);
    for (std::size_t r = 0; r < got.size(); ++r) {
      std::int32_t want = INT_MIN;
      for (std::size_t q = 0; q < (axis == 1 ? 129u : 33u); ++q)
        want = std::max(want, m[axis == 1 ? r * 129 + q : q * 129 + r]);
      ASSERT_EQ(got[r], want);
    }
  }
  // Nothing to reduce: post(identity) everywhere; no outputs: an empty result.
  auto biased = reduction("biased", {"x", "bias"}, [](auto, auto, dsl::Target) {
    return reduction_code(Scalar::Float64, 2, "a0", "a + b", "a + a1", "0.0", {1});
  });
  NDArray E = NDArray::zeros({4, 0}, DType::Float64, device_);
  NDArray out[1];
  std::vector<KernelArg> args = {KernelArg::of_array(E), KernelArg::of_float(2.5)};
  biased->call(args, out, std::vector<int>{1}, false);
  EXPECT_EQ(values<double>(out[0]), std::vector<double>(4, 2.5));
  NDArray none[1];
  NDArray E0 = NDArray::zeros({0, 5}, DType::Float64, device_);
  args[0] = KernelArg::of_array(E0);
  biased->call(args, none, std::vector<int>{1}, false);
  EXPECT_EQ(none[0].shape(), (Shape{0}));
}

TEST_P(KindsTest, ReductionIntoAGivenStridedOutput) {
  auto x = random_values<double>(12 * 9, 26);
  NDArray X = array(x, {12, 9}, DType::Float64);
  NDArray Z = NDArray::zeros({12, 2}, DType::Float64, device_);
  std::vector<IndexItem> col = {Slice{}, std::int64_t{1}};
  NDArray out[1] = {Z.index(col)};  // (12,), stride 2
  auto sum = reduction("rsum", {"x"}, [](auto, auto, dsl::Target) {
    return reduction_code(Scalar::Float64, 1, "a0", "a + b", "a", "0.0");
  });
  sum->call(args_of({&X}), out, std::vector<int>{1}, false);
  std::vector<double> z = values<double>(Z);
  for (std::size_t r = 0; r < 12; ++r) {
    double want = 0;
    for (std::size_t q = 0; q < 9; ++q) want += x[r * 9 + q];
    ASSERT_NEAR(z[r * 2 + 1], want, 1e-12);
    ASSERT_EQ(z[r * 2], 0.0);
  }
  // Into its own first column: the rows are summed as they were (the input is copied).
  std::vector<IndexItem> first = {Slice{}, std::int64_t{0}};
  NDArray self[1] = {X.index(first)};
  sum->call(args_of({&X}), self, std::vector<int>{1}, false);
  std::vector<double> after = values<double>(X);
  for (std::size_t r = 0; r < 12; ++r) {
    double want = 0;
    for (std::size_t q = 0; q < 9; ++q) want += x[r * 9 + q];
    ASSERT_NEAR(after[r * 9], want, 1e-12);
    for (std::size_t q = 1; q < 9; ++q) ASSERT_EQ(after[r * 9 + q], x[r * 9 + q]);
  }
}

TEST_P(KindsTest, MixedDevicesNameTheArguments) {
  if (device_.is_cpu()) GTEST_SKIP() << "needs a CUDA device besides the cpu";
  NDArray X = NDArray::from_host(std::vector<float>(4, 1).data(), {4}, DType::Float32, Device::cpu());
  NDArray W = NDArray::zeros({4}, DType::Float32, device_), B = NDArray::zeros({4}, DType::Float32, device_);
  auto k = elementwise("axpb", {"x", "w", "b"}, {"z"}, expr_frontend("a0 * a1 + a2"));
  NDArray out[1];
  EXPECT_EQ(error_of([&] {
              k->call(args_of({&X, &W, &B}), out);
            }),
            "elementwise 'axpb' got arrays on cpu (x) and cuda:0 (w, b); put them on one device (x:to(\"cuda:0\"))");
}

// Lua element functions through the dsl (compile_device_function), as the stdlib makes them.
constexpr const char* kLuaFunctions = R"(
local function gaussian_pdf(x, mean, sigma)
  local d = (x - mean) / sigma
  return math.exp(-0.5 * d * d) / (sigma * math.sqrt(2 * math.pi))
end

local function polar_distance(rho1, theta1, rho2, theta2)
  local x1, y1 = rho1 * math.cos(theta1), rho1 * math.sin(theta1)
  local x2, y2 = rho2 * math.cos(theta2), rho2 * math.sin(theta2)
  return math.sqrt((x1 - x2) ^ 2 + (y1 - y2) ^ 2)
end

local function huge(x)
  local scratch = cuda.local_array(2305843009213693952, "float64")
  scratch[0] = x
  return scratch[0]
end
)";

ElementFrontend lua_frontend(dsl::testing::TestChunk& chunk, std::string fn) {
  return [&chunk, fn](std::span<const dsl::Type> in, std::span<const std::optional<Scalar>>, dsl::Target target) {
    const dsl::FunctionExpr& f = chunk.function(fn);
    dsl::DeviceFunctionRequest r;
    r.function = chunk.source_of(f);
    r.handle = &f;
    r.name = fn;
    r.params.assign(in.begin(), in.end());
    r.options.target = target;
    dsl::DeviceFunction d = dsl::compile_device_function(r, chunk.env);
    ElementCode c;
    c.functions = d.code;
    c.call = d.c_name;
    c.params = r.params;
    c.outputs = {d.result.scalar};
    c.typed = d.typed;
    c.nvrtc_options = d.nvrtc_options;
    c.chunks = {chunk.chunk};
    c.bounds_record = d.uses_bounds;
    return c;
  };
}

TEST_P(KindsTest, LuaElementFunctionsThroughTheDsl) {
  dsl::testing::TestChunk chunk(kLuaFunctions, "ufuncs.lua");
  const std::int64_t n = 100003;
  auto x = random_values<float>(static_cast<std::size_t>(n), 30, -3, 3);
  NDArray X = array(x, {n}, DType::Float32);
  auto pdf = elementwise("gaussian_pdf", {"x", "mean", "sigma"}, {"out"}, lua_frontend(chunk, "gaussian_pdf"));
  std::vector<KernelArg> args = {KernelArg::of_array(X), KernelArg::of_float(0.25), KernelArg::of_float(1.5)};
  NDArray out[1];
  pdf->call(args, out);
  ASSERT_EQ(out[0].dtype(), DType::Float32);  // weak Lua numbers keep float32
  std::vector<float> got = values<float>(out[0]);
  for (std::size_t i = 0; i < got.size(); ++i) {
    double d = (x[i] - 0.25) / 1.5;
    double want = std::exp(-0.5 * d * d) / (1.5 * std::sqrt(2 * M_PI));
    ASSERT_NEAR(got[i], want, 1e-6 + 1e-5 * want) << i;
  }

  auto polar = elementwise("polar_distance", {"rho1", "theta1", "rho2", "theta2"}, {"out"},
                           lua_frontend(chunk, "polar_distance"));
  auto r1 = random_values<double>(1000, 31, 0, 2), t1 = random_values<double>(1000, 32, 0, 6);
  auto r2 = random_values<double>(1000, 33, 0, 2), t2 = random_values<double>(1000, 34, 0, 6);
  NDArray R1 = array(r1, {1000}, DType::Float64), T1 = array(t1, {1000}, DType::Float64),
          R2 = array(r2, {1000}, DType::Float64), T2 = array(t2, {1000}, DType::Float64);
  NDArray dist[1];
  polar->call(args_of({&R1, &T1, &R2, &T2}), dist);
  std::vector<double> dv = values<double>(dist[0]);
  for (std::size_t i = 0; i < 1000; ++i) {
    double dx = r1[i] * std::cos(t1[i]) - r2[i] * std::cos(t2[i]),
           dy = r1[i] * std::sin(t1[i]) - r2[i] * std::sin(t2[i]);
    ASSERT_NEAR(dv[i], std::sqrt(dx * dx + dy * dy), 1e-12);
  }

  // A local array no GPU thread could hold is refused at its Lua line, before a compiler
  // would fail on it, the same on every device.
  auto huge = elementwise("huge", {"x"}, {"out"}, lua_frontend(chunk, "huge"));
  NDArray H[1];
  std::string message = error_of([&] { huge->call(args_of({&R1}), H); });
  EXPECT_EQ(message,
            "ufuncs.lua:14:19: type error: cuda.local_array: the function's local arrays take more than 2^63 bytes; a "
            "GPU thread has at most 524288 bytes (512 KiB) of local memory: use an array argument (global memory)\n"
            "    local scratch = cuda.local_array(2305843009213693952, \"float64\")\n"
            "                    ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
}

// ---------------------------------------------------------------------------------------
// errors (the same on every device: checked before anything runs)

class KindErrors : public KindsTest {};
INSTANTIATE_TEST_SUITE_P(Cpu, KindErrors, ::testing::Values("cpu"));

TEST_P(KindErrors, ElementwiseErrorsArePinned) {
  auto k = elementwise("axpb", {"x", "w", "b"}, {"z"}, expr_frontend("a0 * a1 + a2"));
  NDArray A = NDArray::zeros({2, 3}, DType::Float32, device_), V = NDArray::zeros({4}, DType::Float32, device_);
  NDArray out[1];
  EXPECT_EQ(error_of([&] {
              k->call(args_of({&A, &V, &A}), out);
            }),
            "elementwise 'axpb': operands could not be broadcast together with shapes (2, 3) (4,) (2, 3)");
  NDArray Z3[1] = {NDArray::zeros({3}, DType::Float32, device_)};
  EXPECT_EQ(error_of([&] {
              k->call(args_of({&A, &A, &A}), Z3);
            }),
            "elementwise 'axpb': output 1 'z' has shape (3,) but the result has shape (2, 3)");
  NDArray Z64[1] = {NDArray::zeros({2, 3}, DType::Float64, device_)};
  EXPECT_EQ(
      error_of([&] {
        k->call(args_of({&A, &A, &A}), Z64);
      }),
      "elementwise 'axpb': output 1 'z' is a float64 array but the kernel makes float32; pass a float32 array or none");
  EXPECT_EQ(error_of([&] { k->call(args_of({&A, &A}), out); }), "elementwise 'axpb' takes 3 inputs (x, w, b), got 2");
  NDArray two[2];
  EXPECT_EQ(error_of([&] { k->call(args_of({&A, &A, &A}), two); }), "elementwise 'axpb' has 1 output (z), got 2");
  NDArray empty;
  EXPECT_EQ(error_of([&] {
              k->call(args_of({&empty, &A, &A}), out);
            }),
            "elementwise 'axpb': argument 1 'x' is an empty array handle; pass an array");
  NDArray bcast[1] = {NDArray::view(A.buffer(), DType::Float32, {2, 3}, {0, 1})};
  EXPECT_EQ(
      error_of([&] {
        k->call(args_of({&A, &A, &A}), bcast);
      }),
      "elementwise 'axpb': output 1 'z' is a broadcast view (stride 0 along axis 1): its elements overlap; pass an "
      "array that owns each element");

  auto scale = elementwise("scale", {"x", "k"}, {"z"}, expr_frontend("a0 * a1", Scalar::Int32));
  NDArray I = NDArray::zeros({5}, DType::Int32, device_);
  std::vector<KernelArg> args = {KernelArg::of_array(I), KernelArg::of_float(2.5)};
  EXPECT_EQ(error_of([&] { scale->call(args, out); }),
            "elementwise 'scale': argument 2 'k' is int32 but got a float 2.5; pass an integer");
  // A Lua integer out of the bounds of the integer type the code takes it as: NumPy 2's
  // OverflowError. A typed scalar of another dtype converts, as an array of it would.
  std::vector<KernelArg> big = {KernelArg::of_array(I), KernelArg::of_int(3000000000)};
  EXPECT_EQ(error_of([&] { scale->call(big, out); }),
            "elementwise 'scale': Lua integer 3000000000 out of bounds for int32, the dtype of argument 2 'k' "
            "(-2147483648 to 2147483647)");
  std::vector<KernelArg> typed = {KernelArg::of_array(I),
                                  KernelArg::of_typed(luda::Scalar::of_float(2.0, DType::Float32))};
  EXPECT_EQ(error_of([&] { scale->call(typed, out); }), "no error");
  // One that the code converts to a narrower type where it uses it (a weak int64
  // parameter, ElementCode::weak_int_uses) is checked before the launch.
  auto weak = elementwise("weak", {"x", "k"}, {"z"}, [](auto, auto, dsl::Target) {
    ElementCode c = element_code({Scalar::Int32, Scalar::Int64}, Scalar::Int32, "a0 * (int)a1");
    c.weak_int_uses = {dsl::WeakIntUse{1, Scalar::Int32, "w.lua:7"}};
    return c;
  });
  NDArray none[1];
  EXPECT_EQ(error_of([&] { weak->call(big, none); }),
            "elementwise 'weak': Lua integer 3000000000 out of bounds for int32, which argument 2 'k' meets at "
            "w.lua:7; pass a typed scalar (luda.int64(3000000000)), which promotes as an array does, or convert the "
            "arrays first (x:astype(\"int64\"))");
  EXPECT_FALSE(none[0].valid());  // refused before any output was made

  ElementwiseSetup s;
  s.kind = "vectorize";
  s.name = "split";
  s.in_names = {"x"};
  s.out_names = {"y", "z"};
  s.cache = cache_.get();
  s.frontend = [](auto, auto, dsl::Target) {
    ElementCode c = element_code({Scalar::Float32}, Scalar::Float32, "a0");
    c.outputs = {Scalar::Float32, Scalar::Float32};
    return c;
  };
  ElementwiseKind split(std::move(s));
  NDArray both[2] = {A, A};
  EXPECT_EQ(error_of([&] { split.call(args_of({&A}), both); }),
            "vectorize 'split': output 1 'y' and output 2 'z' share memory; pass separate arrays");
}

TEST_P(KindErrors, ReductionErrorsArePinned) {
  auto sum = reduction("rsum", {"x"}, [](auto, auto, dsl::Target) {
    return reduction_code(Scalar::Float32, 1, "a0", "a + b", "a", "0.0f");
  });
  NDArray A = NDArray::zeros({4, 5}, DType::Float32, device_);
  NDArray out[1];
  EXPECT_EQ(error_of([&] { sum->call(args_of({&A}), out, std::vector<int>{2}, false); }),
            "reduction 'rsum': axis 3 is out of range for 2-dimensional operands (axes count from 1)");
  EXPECT_EQ(error_of([&] {
              sum->call(args_of({&A}), out, std::vector<int>{1, 1}, false);
            }),
            "reduction 'rsum': axis 2 is given twice");
  NDArray Z[1] = {NDArray::zeros({5}, DType::Float32, device_)};
  EXPECT_EQ(error_of([&] { sum->call(args_of({&A}), Z, std::vector<int>{1}, false); }),
            "reduction 'rsum': output 1 'z' has shape (5,) but the result has shape (4,)");
  NDArray K[1] = {NDArray::zeros({4}, DType::Float32, device_)};
  EXPECT_EQ(error_of([&] { sum->call(args_of({&A}), K, std::vector<int>{1}, true); }),
            "reduction 'rsum': output 1 'z' has shape (4,) but the result has shape (4, 1)");
  NDArray Z64[1] = {NDArray::zeros({4}, DType::Float64, device_)};
  EXPECT_EQ(error_of([&] { sum->call(args_of({&A}), Z64, std::vector<int>{1}, false); }),
            "reduction 'rsum': output 1 'z' is a float64 array but the reduction makes float32; pass a float32 array "
            "or none");
}

// ---------------------------------------------------------------------------------------
// layouts (pure)

TEST(KindLayout, CollapsesAndPicksTheStrategy) {
  auto layout_of = [](const Shape& shape, const Strides& strides, std::vector<bool> reduced) {
    LayoutOperand op{shape.data(), strides.data(), static_cast<int>(shape.size())};
    BroadcastShape b;
    EXPECT_TRUE(broadcast({&op, 1}, b));
    std::vector<char> mask(reduced.begin(), reduced.end());
    bool m[kMaxKindDims] = {};
    for (std::size_t a = 0; a < mask.size(); ++a) m[a] = mask[a];
    ReductionLayout l;
    reduction_layout({&op, 1}, {}, b, {m, shape.size()}, false, l);
    return l;
  };
  ReductionLayout rows = layout_of({8, 16, 32}, {512, 32, 1}, {false, true, true});
  EXPECT_EQ(rows.strategy, ReductionStrategy::Rows);
  EXPECT_EQ(rows.reduced_ndim, 1);
  EXPECT_EQ(rows.reduced_shape[0], 512);
  ReductionLayout columns = layout_of({8, 16, 32}, {512, 32, 1}, {true, true, false});
  EXPECT_EQ(columns.strategy, ReductionStrategy::Columns);
  EXPECT_EQ(columns.len, 128);
  ReductionLayout general = layout_of({8, 16, 32}, {512, 32, 1}, {false, true, false});
  EXPECT_EQ(general.strategy, ReductionStrategy::General);
  EXPECT_EQ(general.kept_ndim, 2);
  ReductionLayout full = layout_of({8, 16}, {16, 1}, {true, true});
  EXPECT_EQ(full.strategy, ReductionStrategy::Rows);
  EXPECT_EQ(full.rows, 1);

  // Elementwise: a row broadcast against a matrix stays 2-d; matching C-contiguous shapes
  // collapse to one contiguous axis.
  Shape m{6, 7}, r{7};
  Strides ms{7, 1}, rs{1};
  LayoutOperand ops[2] = {{m.data(), ms.data(), 2}, {r.data(), rs.data(), 1}};
  BroadcastShape b;
  ASSERT_TRUE(broadcast(ops, b));
  ElementwiseLayout e;
  elementwise_layout(ops, b, e);
  EXPECT_EQ(e.ndim, 2);
  EXPECT_FALSE(e.contiguous());
  LayoutOperand same[2] = {{m.data(), ms.data(), 2}, {m.data(), ms.data(), 2}};
  elementwise_layout(same, b, e);
  EXPECT_EQ(e.ndim, 1);
  EXPECT_TRUE(e.contiguous());
  Shape bad{5};
  LayoutOperand mismatch[2] = {{m.data(), ms.data(), 2}, {bad.data(), rs.data(), 1}};
  EXPECT_FALSE(broadcast(mismatch, b));
}

// ---------------------------------------------------------------------------------------
// the CUDA text of every template, through NVRTC (no GPU needed)

std::string ptx_of(const KindSource& s) {
  CompileRequest r;
  r.source = s.code;
  r.program_name = "kind.cu";
  r.arch = 90;
  r.cubin = false;
  std::string ptx = compile(r).image;
  return ptx;
}

KindOperand operand(KindOperand::Kind kind, Scalar dtype) {
  KindOperand op;
  op.kind = kind;
  op.dtype = dtype;
  return op;
}

bool has_float64(const std::string& ptx) {
  return ptx.find(".f64") != std::string::npos || ptx.find("cvt.f64") != std::string::npos;
}

TEST(KindTemplatesNvrtc, ElementwiseTemplatesCompileWithVectorLoadsAndNoFloat64) {
  ElementCode code = element_code({Scalar::Float32, Scalar::Float32, Scalar::Float32}, Scalar::Float32, "a0 * a1 + a2");
  ElementwiseTemplate t;
  t.inputs = {operand(KindOperand::Kind::Array, Scalar::Float32), operand(KindOperand::Kind::Array, Scalar::Float32),
              operand(KindOperand::Kind::Scalar, Scalar::Float32)};
  t.outputs = {Scalar::Float32};
  t.out_read = {false};
  t.vector = 4;
  t.noalias = true;
  std::string ptx = ptx_of(elementwise_source(code, t, "axpb"));
  EXPECT_NE(ptx.find("ld.global.nc.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos);
  EXPECT_FALSE(has_float64(ptx));
  t.contiguous = false;
  t.vector = 1;
  for (int nd : {1, 3}) {
    for (bool index32 : {true, false}) {
      t.ndim = nd;
      t.index32 = index32;
      std::string general = ptx_of(elementwise_source(code, t, "axpb"));
      EXPECT_FALSE(has_float64(general));
    }
  }
}

// A float result stored into an integer output converts as the kernel language does
// (towards zero, saturated, NaN to 0): PTX's cvt.rzi, clamped for 8- and 16-bit outputs.
TEST(KindTemplatesNvrtc, FloatToIntegerOutputsConvertWithCvtRzi) {
  ElementCode code = element_code({Scalar::Float64}, Scalar::Float64, "a0 * 2.0");
  ElementwiseTemplate t;
  t.inputs = {operand(KindOperand::Kind::Array, Scalar::Float64)};
  t.out_read = {false};
  const std::pair<Scalar, const char*> outputs[] = {{Scalar::Int64, "cvt.rzi.s64.f64"},
                                                    {Scalar::UInt32, "cvt.rzi.u32.f64"},
                                                    {Scalar::Int8, "cvt.rzi.s32.f64"}};
  for (const auto& [out, cvt] : outputs) {
    t.outputs = {out};
    code.outputs = {out};
    std::string ptx = ptx_of(elementwise_source(code, t, "store"));
    EXPECT_NE(ptx.find(cvt), std::string::npos) << dsl::scalar_name(out) << "\n" << ptx;
  }
}

TEST(KindTemplatesNvrtc, ReductionTemplatesCompileWithShufflesAndNoFloat64) {
  ReductionCode code = reduction_code(Scalar::Float32, 2, "a0 * a1", "a + b", "a + a1", "0.0f", {1});
  code.map_params = {dsl::Type::scalar_of(Scalar::Float32), dsl::Type::scalar_of(Scalar::Float32)};
  ReductionTemplate t;
  t.inputs = {operand(KindOperand::Kind::Array, Scalar::Float32), operand(KindOperand::Kind::Scalar, Scalar::Float32)};
  t.outputs = {Scalar::Float32};
  struct Variant {
    ReductionStrategy s;
    int k, r, v;
    bool warp;
  };
  for (Variant v :
       {Variant{ReductionStrategy::Rows, 1, 1, 4, false}, Variant{ReductionStrategy::Rows, 2, 1, 4, true},
        Variant{ReductionStrategy::Columns, 1, 1, 4, false}, Variant{ReductionStrategy::Columns, 1, 1, 1, false},
        Variant{ReductionStrategy::General, 2, 2, 1, false}, Variant{ReductionStrategy::General, 1, 3, 1, true}}) {
    SCOPED_TRACE(fmt::format("strategy {} K {} R {} V {} warp {}", static_cast<int>(v.s), v.k, v.r, v.v, v.warp));
    t.strategy = v.s;
    t.kept_ndim = v.k;
    t.reduced_ndim = v.r;
    t.vector = v.v;
    t.warp = v.warp;
    std::string ptx = ptx_of(reduction_source(code, t, "dnnLayer"));
    if (v.s != ReductionStrategy::Columns) {
      EXPECT_NE(ptx.find("shfl.sync.down"), std::string::npos);
    }
    EXPECT_FALSE(has_float64(ptx));
    if (v.v == 4) {
      EXPECT_NE(ptx.find("v4.f32"), std::string::npos);
    }
  }
}

// Several accumulators (fuse's several reductions): a struct accumulator through every
// template, of 16 bytes (shuffled word by word) and of 8 (one 64-bit shuffle).
TEST(KindTemplatesNvrtc, SeveralAccumulatorsCompileInEveryTemplate) {
  for (bool wide : {true, false}) {
    SCOPED_TRACE(wide ? "double and float" : "two floats");
    const char* first = wide ? "double" : "float";
    ReductionCode code;
    code.functions = fmt::format(
        "struct t_pair {{ float v0; float v1; }};\n"
        "static __device__ t_pair t_map(float a0, float a1, long long j) {{ (void)j; return t_pair{{a0 * a1, a0}}; }}\n"
        "static __device__ {0} t_sum({0} a, {0} b) {{ return a + b; }}\n"
        "static __device__ {0} t_zero() {{ return 0; }}\n"
        "static __device__ float t_max(float a, float b) {{ return a > b ? a : b; }}\n"
        "static __device__ float t_low() {{ return -1.0f / 0.0f; }}\n"
        "static __device__ float t_post({0} s, float m, float k) {{ return (float)s / m * k; }}\n",
        first);
    code.map = "t_map";
    code.post = "t_post";
    code.map_params = {dsl::Type::scalar_of(Scalar::Float32), dsl::Type::scalar_of(Scalar::Float32)};
    code.post_inputs = {1};
    Scalar acc = wide ? Scalar::Float64 : Scalar::Float32;
    code.accumulators = {{acc, "t_sum", "t_zero", acc}, {Scalar::Float32, "t_max", "t_low", Scalar::Float32}};
    code.reduce_type = acc;
    code.outputs = {Scalar::Float32};
    EXPECT_EQ(accumulator_bytes(code), wide ? 16u : 8u);
    ReductionTemplate t;
    t.inputs = {operand(KindOperand::Kind::Array, Scalar::Float32),
                operand(KindOperand::Kind::Scalar, Scalar::Float32)};
    t.outputs = {Scalar::Float32};
    for (auto [s, v, warp] :
         {std::tuple{ReductionStrategy::Rows, 4, false}, std::tuple{ReductionStrategy::Rows, 1, true},
          std::tuple{ReductionStrategy::Columns, 4, false}, std::tuple{ReductionStrategy::General, 1, false}}) {
      t.strategy = s;
      t.vector = v;
      t.warp = warp;
      std::string ptx = ptx_of(reduction_source(code, t, "weighted"));
      if (s != ReductionStrategy::Columns) {
        EXPECT_NE(ptx.find("shfl.sync.down"), std::string::npos);
      }
      EXPECT_EQ(has_float64(ptx), wide);
    }
  }
}

// float16, bfloat16, complex64 and complex128 operands through every template: 16-byte
// vector loads of 8, 2 and 1 elements, struct elements shuffled by the reductions and read
// back as volatile partials.
TEST(KindTemplatesNvrtc, NewDtypesCompileInEveryTemplate) {
  for (Scalar d : {Scalar::Float16, Scalar::BFloat16, Scalar::Complex64, Scalar::Complex128}) {
    SCOPED_TRACE(dsl::scalar_name(d));
    const int vector = 16 / (dsl::scalar_bits(d) / 8);
    ElementCode code = element_code({d, d, d}, d, "a0 * a1 + a2");
    ElementwiseTemplate t;
    t.inputs = {operand(KindOperand::Kind::Array, d), operand(KindOperand::Kind::Array, d),
                operand(KindOperand::Kind::Scalar, d)};
    t.outputs = {d};
    t.out_read = {false};
    t.vector = vector;
    t.noalias = true;
    EXPECT_NE(ptx_of(elementwise_source(code, t, "axpb")).find(".entry"), std::string::npos);
    t.contiguous = false;
    t.vector = 1;
    t.ndim = 2;
    EXPECT_NE(ptx_of(elementwise_source(code, t, "axpb")).find(".entry"), std::string::npos);
    std::string zero = fmt::format("luda_cvt<{}>(0)", c_of(d));
    ReductionCode r = reduction_code(d, 2, "a0 * a1", "a + b", "a + a1", zero, {1});
    ReductionTemplate rt;
    rt.inputs = {operand(KindOperand::Kind::Array, d), operand(KindOperand::Kind::Scalar, d)};
    rt.outputs = {d};
    for (auto [s, v, warp] :
         {std::tuple{ReductionStrategy::Rows, vector, false}, std::tuple{ReductionStrategy::Rows, 1, true},
          std::tuple{ReductionStrategy::Columns, vector, false}, std::tuple{ReductionStrategy::General, 1, false}}) {
      rt.strategy = s;
      rt.vector = v;
      rt.warp = warp;
      std::string ptx = ptx_of(reduction_source(r, rt, "dot"));
      if (s != ReductionStrategy::Columns) {
        EXPECT_NE(ptx.find("shfl.sync.down"), std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace luda::jit

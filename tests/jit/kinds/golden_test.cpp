// Golden tests of the kernel kinds: the CUDA C++ that an elementwise kind and a reduction
// kind become, made by jit::make_elementwise and jit::make_reduction (what luda.elementwise,
// luda.reduction and the C++ API's kernels make), kept in tests/jit/golden/<name>.cu with
// the prelude left out (tests/golden.h). Each template that the operands' layout picks,
// for the cuda target and for the cpu target. A change in a template or in the element
// code shows up here as a diff; after checking it, rewrite the files with
// LUDA_UPDATE_GOLDEN=1. tests/host/fuse_golden_test.cpp does the same for luda.fuse.
//
// The texts are the kinds' inspect("cuda"): before any call, the contiguous template
// (elementwise) and the contiguous full reduction; after a call, the template that call
// took, which is how the cpu texts of the strided template and of a reduction over one
// axis are reached. A cuda call needs a GPU, so the cuda texts of those two are made from
// the kind's own frontend and the template a cuda call takes (jit::elementwise_source,
// jit::reduction_source), whose cpu counterpart is checked equal to the cpu call's text.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "jit/kinds/elementwise.h"
#include "jit/kinds/make.h"
#include "jit/kinds/reduction.h"
#include "jit/kinds/templates.h"
#include "tests/golden.h"
#include "tests/test_support.h"

namespace luda::jit {
namespace {

using dsl::Scalar;
using jit::KernelArg;
using test_support::check_kind_golden;
using test_support::host_values;
using test_support::kind_body;

// CuPy's ElementwiseKernel example: x and y arrays of one type, a a float32 scalar.
ElementwiseMade axpy() { return make_elementwise("T x, T y, float32 a", "T z", "z = a * x + y", "axpy", {}); }

// CuPy's ReductionKernel example: the L2 norm.
ReductionMade l2norm() {
  return make_reduction("T x", "T y", "x * x", "a + b", "y = math.sqrt(a)", "0", "l2norm", "", {});
}

// axpy's inputs as inspect takes them: two float32 arrays, then a Lua float (weak, and
// of the arrays' float type, as a call's key types it).
const std::vector<dsl::Type> kAxpyInputs = {dsl::Type::scalar_of(Scalar::Float32),
                                            dsl::Type::scalar_of(Scalar::Float32),
                                            dsl::Type::scalar_of(Scalar::Float32, true)};
const std::vector<dsl::Type> kNormInputs = {dsl::Type::scalar_of(Scalar::Float32)};

// A C-contiguous float32 array of `shape` on the cpu, of random values in [-2, 2).
NDArray random_array(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::int64_t n = 1;
  for (std::int64_t e : shape) n *= e;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return NDArray::from_host(v.data(), shape, DType::Float32, Device::cpu());
}

// axpy's program for the template that a cuda call on transposed 2-d float32 arrays and
// a Lua float takes, its output allocated: two collapsed axes that cannot merge, 32-bit
// indices (fewer than 2^31 elements). `target` Cpu: the same for the cpu target, whose
// calls take no 32-bit indices. The element code is the kind's own frontend's.
jit::KindSource strided_axpy(const jit::ElementwiseKind& kind, dsl::Target target) {
  const jit::ElementCode code = kind.setup().frontend(kAxpyInputs, std::vector<std::optional<Scalar>>(1), target);
  jit::ElementwiseTemplate t;
  t.target = target;
  t.contiguous = false;
  t.ndim = 2;
  t.index32 = target == dsl::Target::Cuda;
  t.noalias = true;
  t.inputs = {{jit::KindOperand::Kind::Array, Scalar::Float32, {}, false},
              {jit::KindOperand::Kind::Array, Scalar::Float32, {}, false},
              {jit::KindOperand::Kind::Scalar, Scalar::Float32, {}, false}};
  t.outputs = code.outputs;
  t.out_read = kind.setup().out_read;
  t.index_args = kind.setup().index_args;
  return jit::elementwise_source(code, t, kind.setup().name);
}

// l2norm's program for the template that a cuda call over the first axis (axes {0}) of a
// C-contiguous (rows, cols) float32 array takes, cols a multiple of 4: the kept axis is the
// contiguous one (Columns), and each thread takes 4 neighbouring outputs (16-byte loads).
// `target` Cpu: the same for the cpu target, whose calls take no vectors.
jit::KindSource columns_l2norm(const jit::ReductionKind& kind, dsl::Target target) {
  const jit::ReductionCode code = kind.setup().frontend(kNormInputs, std::vector<std::optional<Scalar>>(1), target);
  jit::ReductionTemplate t;
  t.target = target;
  t.strategy = jit::ReductionStrategy::Columns;
  t.kept_ndim = t.reduced_ndim = 1;
  t.vector = target == dsl::Target::Cuda ? 4 : 1;
  t.inputs = {{jit::KindOperand::Kind::Array, Scalar::Float32, {}, false}};
  t.outputs = code.outputs;
  return jit::reduction_source(code, t, kind.setup().name);
}

TEST(KindGolden, ElementwiseContiguous) {
  ElementwiseMade k = axpy();
  check_kind_golden("elementwise_contiguous", kind_body(k.kind->inspect("cuda", kAxpyInputs, Device::cuda(0))));
}

TEST(KindGolden, ElementwiseContiguousCpu) {
  ElementwiseMade k = axpy();
  check_kind_golden("elementwise_contiguous_cpu", kind_body(k.kind->inspect("cuda", kAxpyInputs, Device::cpu())));
}

TEST(KindGolden, ElementwiseStridedCpu) {
  ElementwiseMade k = axpy();
  const NDArray x = random_array({4, 3}, 1).transpose(), y = random_array({4, 3}, 2).transpose();
  const KernelArg in[] = {KernelArg::of_array(x), KernelArg::of_array(y), KernelArg::of_float(2.5)};
  std::vector<NDArray> out(1);
  k.kind->call(in, out);
  // The values, against the same arithmetic on the host in float64.
  const std::vector<float> xs = host_values<float>(x.contiguous()), ys = host_values<float>(y.contiguous());
  const std::vector<float> zs = host_values<float>(out[0]);
  ASSERT_EQ(out[0].shape(), (Shape{3, 4}));
  for (std::size_t i = 0; i < zs.size(); ++i) EXPECT_NEAR(zs[i], 2.5 * xs[i] + ys[i], 1e-5) << "element " << i;

  const std::string text = k.kind->inspect("cuda", kAxpyInputs, Device::cpu());
  check_kind_golden("elementwise_strided_cpu", kind_body(text));
  // The template strided_axpy describes is the one the call took.
  EXPECT_EQ(kind_body(strided_axpy(*k.kind, dsl::Target::Cpu).code), kind_body(text));
}

TEST(KindGolden, ElementwiseStrided) {
  ElementwiseMade k = axpy();
  check_kind_golden("elementwise_strided", kind_body(strided_axpy(*k.kind, dsl::Target::Cuda).code));
}

// Where a GPU is: the cuda call's own text is the golden that ElementwiseStrided makes.
TEST(KindGolden, ElementwiseStridedCuda) {
  LUDA_REQUIRE_GPU();
  ElementwiseMade k = axpy();
  const NDArray x = random_array({4, 3}, 1).to(Device::cuda(0)).transpose();
  const NDArray y = random_array({4, 3}, 2).to(Device::cuda(0)).transpose();
  const KernelArg in[] = {KernelArg::of_array(x), KernelArg::of_array(y), KernelArg::of_float(2.5)};
  std::vector<NDArray> out(1);
  k.kind->call(in, out);
  const std::vector<float> xs = host_values<float>(x.contiguous()), ys = host_values<float>(y.contiguous());
  const std::vector<float> zs = host_values<float>(out[0]);
  for (std::size_t i = 0; i < zs.size(); ++i) EXPECT_NEAR(zs[i], 2.5 * xs[i] + ys[i], 1e-5) << "element " << i;
  check_kind_golden("elementwise_strided", kind_body(k.kind->inspect("cuda", kAxpyInputs, Device::cuda(0))));
}

TEST(KindGolden, ReductionAllAxes) {
  ReductionMade k = l2norm();
  check_kind_golden("reduction_all_axes", kind_body(k.kind->inspect("cuda", kNormInputs, Device::cuda(0))));
}

TEST(KindGolden, ReductionAllAxesCpu) {
  ReductionMade k = l2norm();
  check_kind_golden("reduction_all_axes_cpu", kind_body(k.kind->inspect("cuda", kNormInputs, Device::cpu())));
}

TEST(KindGolden, ReductionOneAxisCpu) {
  ReductionMade k = l2norm();
  const NDArray x = random_array({5, 8}, 3);
  const KernelArg in[] = {KernelArg::of_array(x)};
  std::vector<NDArray> out(1);
  const std::vector<int> axes = {0};
  k.kind->call(in, out, axes, false);
  // The values, against the norms of the columns on the host in float64.
  const std::vector<float> xs = host_values<float>(x), ys = host_values<float>(out[0]);
  ASSERT_EQ(out[0].shape(), (Shape{8}));
  for (std::size_t c = 0; c < 8; ++c) {
    double sum = 0;
    for (std::size_t r = 0; r < 5; ++r) sum += double(xs[r * 8 + c]) * xs[r * 8 + c];
    EXPECT_NEAR(ys[c], std::sqrt(sum), 1e-5) << "column " << c;
  }

  const std::string text = k.kind->inspect("cuda", kNormInputs, Device::cpu());
  check_kind_golden("reduction_one_axis_cpu", kind_body(text));
  // The template columns_l2norm describes is the one the call took.
  EXPECT_EQ(kind_body(columns_l2norm(*k.kind, dsl::Target::Cpu).code), kind_body(text));
}

TEST(KindGolden, ReductionOneAxis) {
  ReductionMade k = l2norm();
  check_kind_golden("reduction_one_axis", kind_body(columns_l2norm(*k.kind, dsl::Target::Cuda).code));
}

// Where a GPU is: the cuda call's own text is the golden that ReductionOneAxis makes.
TEST(KindGolden, ReductionOneAxisCuda) {
  LUDA_REQUIRE_GPU();
  ReductionMade k = l2norm();
  const NDArray x = random_array({5, 8}, 3).to(Device::cuda(0));
  const KernelArg in[] = {KernelArg::of_array(x)};
  std::vector<NDArray> out(1);
  const std::vector<int> axes = {0};
  k.kind->call(in, out, axes, false);
  const std::vector<float> xs = host_values<float>(x), ys = host_values<float>(out[0]);
  for (std::size_t c = 0; c < 8; ++c) {
    double sum = 0;
    for (std::size_t r = 0; r < 5; ++r) sum += double(xs[r * 8 + c]) * xs[r * 8 + c];
    EXPECT_NEAR(ys[c], std::sqrt(sum), 1e-5) << "column " << c;
  }
  check_kind_golden("reduction_one_axis", kind_body(k.kind->inspect("cuda", kNormInputs, Device::cuda(0))));
}

}  // namespace
}  // namespace luda::jit

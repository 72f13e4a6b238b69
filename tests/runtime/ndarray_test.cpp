// NDArray: views, reshape, transpose, copies, writes and their errors, checked against
// references computed by index arithmetic on random data. GPU tests skip without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>

#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/ndarray.h"

namespace luda {
namespace {

constexpr std::optional<std::int64_t> N = std::nullopt;

std::mt19937_64& rng() {
  static std::mt19937_64 g(20240611);
  return g;
}

// A random value of any dtype: the whole range for integers, mixed magnitudes and signs
// for floats.
Scalar random_scalar(DType t) {
  std::uniform_int_distribution<std::uint64_t> bits;
  std::uint64_t r = bits(rng());
  if (t == DType::Bool) return Scalar::of_bool(r & 1);
  if (is_unsigned_integer(t)) return Scalar::of_uint(r, DType::UInt64).cast(t);
  if (is_signed_integer(t)) return Scalar::of_int(static_cast<std::int64_t>(r), DType::Int64).cast(t);
  std::normal_distribution<double> normal;
  double x = normal(rng()) * std::pow(10.0, static_cast<int>(r % 9) - 4);
  return Scalar::of_float(x, t);
}

// A C-contiguous cpu array of random values, with the values kept for reference.
struct Random {
  NDArray array;
  std::vector<Scalar> values;  // C order
};

Random random_array(const Shape& shape, DType t, Device device = Device::cpu()) {
  Random r;
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<std::byte> bytes(static_cast<std::size_t>(n) * itemsize(t));
  for (std::int64_t i = 0; i < n; ++i) {
    r.values.push_back(random_scalar(t));
    r.values.back().store(bytes.data() + i * itemsize(t));
  }
  r.array = NDArray::from_host(bytes.data(), shape, t, device);
  return r;
}

std::vector<Scalar> elements(const NDArray& a) {
  std::vector<std::byte> bytes = a.to_host_bytes();
  std::vector<Scalar> out;
  for (std::size_t i = 0; i < bytes.size(); i += itemsize(a.dtype()))
    out.push_back(Scalar::load(bytes.data() + i, a.dtype()));
  return out;
}

// Scalar equality, except that NaN equals NaN (astype must keep NaN a NaN).
bool same(const Scalar& a, const Scalar& b) {
  if (a.dtype == b.dtype && is_float(a.dtype) && std::isnan(a.v.f) && std::isnan(b.v.f)) return true;
  return a == b;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string no_cuda_reason(int devices = 1) {
  try {
    require_cuda_device(devices - 1);
    return "";
  } catch (const Error& e) {
    std::string why = e.what();
    const std::string prefix = "no CUDA device: ";
    return why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why;
  }
}
#define REQUIRE_CUDA(devices)                                  \
  if (std::string why = no_cuda_reason(devices); !why.empty()) \
  GTEST_SKIP() << "no CUDA device" << ((devices) > 1 ? " (this test needs 2)" : "") << ": " << why

const DType kAllDTypes[] = {DType::Bool,   DType::Int8,   DType::Int16,  DType::Int32,   DType::Int64,  DType::UInt8,
                            DType::UInt16, DType::UInt32, DType::UInt64, DType::Float32, DType::Float64};

// ---- shapes and construction ------------------------------------------------------------

TEST(NDArrayShapes, StrAndCStridesAndBroadcast) {
  EXPECT_EQ(shape_str({2, 3}), "(2, 3)");
  EXPECT_EQ(shape_str({5}), "(5,)");
  EXPECT_EQ(shape_str({}), "()");
  EXPECT_EQ(c_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(c_strides({2, 0, 4}), (Strides{4, 4, 1}));
  EXPECT_EQ(broadcast_shapes({2, 1, 3}, {4, 1}), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcast_shapes({}, {3}), (Shape{3}));
  EXPECT_EQ(broadcast_shapes({0, 1}, {1, 5}), (Shape{0, 5}));
  EXPECT_EQ(error_of([] {
              broadcast_shapes({2, 3}, {4});
            }),
            "operands could not be broadcast together with shapes (2, 3) (4,)");
}

TEST(NDArrayConstruct, EmptyZerosFullFromHost) {
  NDArray z = NDArray::zeros({3, 4}, DType::Int32, Device::cpu());
  EXPECT_TRUE(z.valid());
  EXPECT_EQ(z.shape(), (Shape{3, 4}));
  EXPECT_EQ(z.strides(), (Strides{4, 1}));
  EXPECT_EQ(z.size(), 12);
  EXPECT_EQ(z.nbytes(), 48u);
  EXPECT_TRUE(z.is_c_contiguous());
  EXPECT_FALSE(z.is_f_contiguous());
  EXPECT_TRUE(z.device().is_cpu());
  for (const Scalar& s : elements(z)) EXPECT_EQ(s, Scalar::of_int(0, DType::Int32));

  Scalar v = random_scalar(DType::Float32);
  NDArray f = NDArray::full({2, 5}, v, DType::Float32, Device::cpu());
  for (const Scalar& s : elements(f)) EXPECT_EQ(s, v);
  // full converts the value to the dtype.
  NDArray g = NDArray::full({3}, Scalar::of_float(-2.75), DType::Int16, Device::cpu());
  for (const Scalar& s : elements(g)) EXPECT_EQ(s, Scalar::of_int(-2, DType::Int16));

  Random r = random_array({2, 3, 4}, DType::UInt16);
  EXPECT_EQ(elements(r.array), r.values);
  EXPECT_EQ(error_of([] {
              NDArray::empty({2, -1}, DType::Float32, Device::cpu());
            }),
            "negative dimensions are not allowed (shape (2, -1))");
}

TEST(NDArrayConstruct, ZeroDimensionalAndEmpty) {
  NDArray s = NDArray::full({}, Scalar::of_float(3.5), DType::Float64, Device::cpu());
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.get({}), Scalar::of_float(3.5));
  EXPECT_EQ(s.index({}).get({}), Scalar::of_float(3.5));
  s.set({}, Scalar::of_int(7));
  EXPECT_EQ(s.get({}), Scalar::of_float(7.0));
  EXPECT_EQ(s.transpose().shape(), Shape{});
  EXPECT_EQ(s.reshape({1, 1}).get(std::vector<std::int64_t>{0, 0}), Scalar::of_float(7.0));
  EXPECT_EQ(s.reshape({1, 1}).reshape({}).ndim(), 0);
  EXPECT_EQ(s.copy().get({}), Scalar::of_float(7.0));
  EXPECT_EQ(s.astype(DType::Int8).get({}), Scalar::of_int(7, DType::Int8));

  NDArray e = NDArray::empty({0, 3}, DType::Float32, Device::cpu());
  EXPECT_EQ(e.size(), 0);
  EXPECT_EQ(e.nbytes(), 0u);
  EXPECT_TRUE(e.is_c_contiguous());
  EXPECT_TRUE(e.to_host_bytes().empty());
  EXPECT_EQ(e.transpose().shape(), (Shape{3, 0}));
  EXPECT_EQ(e.reshape({3, -1}).shape(), (Shape{3, 0}));
  EXPECT_EQ(e.reshape({0}).shape(), (Shape{0}));
  EXPECT_EQ(e.copy().shape(), (Shape{0, 3}));
  EXPECT_EQ(e.astype(DType::Int64).dtype(), DType::Int64);
  e.fill(Scalar::of_float(1));  // nothing to write, no error
  e.assign(NDArray::zeros({3}, DType::Float64, Device::cpu()));
  IndexItem rows[] = {Slice{1, N, 1}};
  EXPECT_EQ(e.index(rows).shape(), (Shape{0, 3}));
  EXPECT_EQ(error_of([&] { e.reshape({-1, 0}); }), "cannot reshape array of size 0 into shape (-1, 0)");
  EXPECT_EQ(error_of([&] { e.at(0); }), "index 0 is out of bounds for axis 0 with size 0");
}

// ---- slicing ------------------------------------------------------------------------------

struct SliceCase {
  std::int64_t n;
  std::optional<std::int64_t> start, stop;
  std::int64_t step;
  std::vector<std::int64_t> picked;  // list(range(n))[start:stop:step], from Python
};

// clang-format off
const SliceCase kSlices[] = {
    {10, N, N, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
    {10, N, N, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
    {10, 2, 8, 2, {2, 4, 6}},
    {10, -3, N, 1, {7, 8, 9}},
    {10, N, -3, 1, {0, 1, 2, 3, 4, 5, 6}},
    {10, 8, 2, -2, {8, 6, 4}},
    {10, -1, -11, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
    {10, -20, 20, 3, {0, 3, 6, 9}},
    {10, 20, -20, -3, {9, 6, 3, 0}},
    {10, 5, 5, 1, {}},
    {10, 7, 3, 1, {}},
    {10, 3, 7, -1, {}},
    {0, N, N, 1, {}},
    {0, N, N, -1, {}},
    {1, N, N, -5, {0}},
    {7, N, N, 100, {0}},
    {7, -100, 100, -1, {}},
    {7, 100, N, -2, {6, 4, 2, 0}},
    {7, N, -100, -2, {6, 4, 2, 0}},
    {5, -1, N, -1, {4, 3, 2, 1, 0}},
    {5, -8, N, 1, {0, 1, 2, 3, 4}},
    {8, -9, N, -2, {}},
    {3, N, 1, 1, {0}},
    {3, -10, N, 2, {0, 2}},
    {9, -11, N, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8}},
    {8, -8, N, -2, {0}},
    {1, 6, N, 1, {}},
    {9, N, N, -2, {8, 6, 4, 2, 0}},
    {1, N, N, -1, {0}},
    {8, 1, 2, 3, {1}},
    {4, N, N, 1, {0, 1, 2, 3}},
    {9, -3, -2, 3, {6}},
    {10, N, N, INT64_MIN, {9}},  // Python clamps the step; no overflow
    {10, N, N, INT64_MAX, {0}},
};
// clang-format on

TEST(NDArraySlice, OneAxisMatchesPython) {
  for (const SliceCase& c : kSlices) {
    Random r = random_array({c.n}, DType::Int64);
    IndexItem item = Slice{c.start, c.stop, c.step};
    NDArray v = r.array.index(std::span<const IndexItem>(&item, 1));
    ASSERT_EQ(v.shape(), (Shape{static_cast<std::int64_t>(c.picked.size())})) << "n=" << c.n;
    EXPECT_EQ(v.buffer(), r.array.buffer());
    std::vector<Scalar> got = elements(v);
    for (std::size_t i = 0; i < c.picked.size(); ++i) EXPECT_EQ(got[i], r.values[c.picked[i]]);
  }
}

// Every combination of two slices of a random 3-D array: the view's elements are the
// base's at the picked positions, it shares the buffer, and writes go through.
TEST(NDArraySlice, ThreeAxesAgainstIndexArithmetic) {
  const SliceCase* picks[] = {&kSlices[2], &kSlices[5], &kSlices[6], &kSlices[7]};  // n == 10
  Random r = random_array({10, 3, 10}, DType::Float32);
  for (const SliceCase* a : picks)
    for (const SliceCase* b : picks) {
      IndexItem items[] = {Slice{a->start, a->stop, a->step}, Slice{N, N, -1}, Slice{b->start, b->stop, b->step}};
      NDArray v = r.array.index(items);
      ASSERT_EQ(v.shape(),
                (Shape{static_cast<std::int64_t>(a->picked.size()), 3, static_cast<std::int64_t>(b->picked.size())}));
      EXPECT_EQ(v.buffer(), r.array.buffer());
      EXPECT_EQ(v.strides(), (Strides{30 * a->step, -10, b->step}));
      std::vector<Scalar> got = elements(v);
      std::size_t k = 0;
      for (std::int64_t i : a->picked)
        for (std::int64_t j = 2; j >= 0; --j)
          for (std::int64_t l : b->picked) {
            EXPECT_EQ(got[k], r.values[(i * 3 + j) * 10 + l]);
            std::vector<std::int64_t> at{static_cast<std::int64_t>(k / (3 * b->picked.size())),
                                         static_cast<std::int64_t>(k / b->picked.size() % 3),
                                         static_cast<std::int64_t>(k % b->picked.size())};
            EXPECT_EQ(v.get(at), got[k]);
            ++k;
          }
    }
  // A write through a reversed, stepped view lands in the base.
  IndexItem items[] = {Slice{8, 2, -2}, 1, Slice{N, N, 3}};
  NDArray v = r.array.index(items);
  ASSERT_EQ(v.shape(), (Shape{3, 4}));
  v.set(std::vector<std::int64_t>{-1, -2}, Scalar::of_float(42.0, DType::Float32));
  EXPECT_EQ(r.array.get(std::vector<std::int64_t>{4, 1, 6}), Scalar::of_float(42.0, DType::Float32));
}

TEST(NDArrayIndex, IntegersDropAxes) {
  Random r = random_array({4, 5, 6}, DType::Int32);
  NDArray row = r.array.at(-1);
  EXPECT_EQ(row.shape(), (Shape{5, 6}));
  EXPECT_EQ(row.offset(), 3 * 30);
  EXPECT_EQ(row.get(std::vector<std::int64_t>{2, 3}), r.values[3 * 30 + 2 * 6 + 3]);
  IndexItem items[] = {1, Slice{N, N, 2}, -2};
  NDArray v = r.array.index(items);
  EXPECT_EQ(v.shape(), (Shape{3}));
  EXPECT_EQ(v.strides(), (Strides{12}));
  std::vector<Scalar> got = elements(v);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i], r.values[30 + (2 * i) * 6 + 4]);
  IndexItem all[] = {2, 3, 4};
  NDArray scalar = r.array.index(all);
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.get({}), r.values[2 * 30 + 3 * 6 + 4]);
}

TEST(NDArrayIndex, ErrorsAsNumpy) {
  NDArray a = NDArray::zeros({10}, DType::Float64, Device::cpu());
  NDArray b = NDArray::zeros({2, 3}, DType::Float64, Device::cpu());
  EXPECT_EQ(error_of([&] { a.at(10); }), "index 10 is out of bounds for axis 0 with size 10");
  EXPECT_EQ(error_of([&] { a.at(-11); }), "index -11 is out of bounds for axis 0 with size 10");
  IndexItem second[] = {Slice{}, 3};
  EXPECT_EQ(error_of([&] { b.index(second); }), "index 3 is out of bounds for axis 1 with size 3");
  IndexItem three[] = {0, 0, 0};
  EXPECT_EQ(error_of([&] { b.index(three); }),
            "too many indices for array: array is 2-dimensional, but 3 were indexed");
  EXPECT_EQ(error_of([&] { NDArray::zeros({}, DType::Int8, Device::cpu()).at(0); }),
            "too many indices for array: array is 0-dimensional, but 1 were indexed");
  IndexItem zero_step[] = {Slice{N, N, 0}};
  EXPECT_EQ(error_of([&] { a.index(zero_step); }), "slice step cannot be zero");
  EXPECT_EQ(error_of([&] {
              b.get(std::vector<std::int64_t>{1, -4});
            }),
            "index -4 is out of bounds for axis 1 with size 3");
  EXPECT_EQ(error_of([&] {
              b.set(std::vector<std::int64_t>{0, 0, 0}, Scalar::of_float(1));
            }),
            "too many indices for array: array is 2-dimensional, but 3 were indexed");
  EXPECT_EQ(error_of([&] { b.get(std::vector<std::int64_t>{1}); }),
            "an element of a 2-dimensional array needs 2 indices, but 1 were given");
  EXPECT_EQ(error_of([] { NDArray().copy(); }),
            "copy: this NDArray holds no buffer (it was default-constructed); make it with "
            "NDArray::empty, zeros, full, from_host or view");
}

// ---- transpose and reshape --------------------------------------------------------------

TEST(NDArrayTranspose, PermutesAxesAsAView) {
  Random r = random_array({2, 3, 4}, DType::Int64);
  NDArray t = r.array.transpose();
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 4, 12}));
  EXPECT_EQ(t.buffer(), r.array.buffer());
  EXPECT_TRUE(t.is_f_contiguous());
  EXPECT_FALSE(t.is_c_contiguous());
  const int axes[] = {1, -1, 0};
  NDArray p = r.array.transpose(axes);
  EXPECT_EQ(p.shape(), (Shape{3, 4, 2}));
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k) {
        Scalar want = r.values[(i * 3 + j) * 4 + k];
        EXPECT_EQ(t.get(std::vector<std::int64_t>{k, j, i}), want);
        EXPECT_EQ(p.get(std::vector<std::int64_t>{j, k, i}), want);
      }
  const int two[] = {0, 1}, bad[] = {0, 3, 1}, neg[] = {0, -4, 1}, twice[] = {0, 0, 1};
  EXPECT_EQ(error_of([&] { r.array.transpose(two); }), "axes don't match array");
  EXPECT_EQ(error_of([&] { r.array.transpose(bad); }), "axis 3 is out of bounds for array of dimension 3");
  EXPECT_EQ(error_of([&] { r.array.transpose(neg); }), "axis -4 is out of bounds for array of dimension 3");
  EXPECT_EQ(error_of([&] { r.array.transpose(twice); }), "repeated axis in transpose");
}

// Which reshapes are views, and their strides, as NumPy 2.4 gives them
// (numpy.shares_memory and .strides).
TEST(NDArrayReshape, ViewWhenStridesAllowElseCopy) {
  Random r = random_array({4, 6}, DType::Float64);
  IndexItem first_half[] = {Slice{}, Slice{N, 3, 1}};
  NDArray a = r.array.index(first_half);  // (4, 3), strides (6, 1)
  struct Case {
    Shape shape;
    std::optional<Strides> view_strides;  // nullopt: NumPy copies
  };
  const Case cases[] = {
      {{2, 2, 3}, Strides{12, 6, 1}}, {{12}, std::nullopt},          {{4, 3, 1}, Strides{6, 1, 1}},
      {{1, 4, 3}, Strides{24, 6, 1}}, {{4, 1, 3}, Strides{6, 3, 1}}, {{3, 4}, std::nullopt},
      {{2, 6}, std::nullopt},         {{4, -1}, Strides{6, 1}},
  };
  for (const Case& c : cases) {
    NDArray v = a.reshape(c.shape);
    EXPECT_EQ(v.buffer() == a.buffer(), c.view_strides.has_value()) << shape_str(c.shape);
    if (c.view_strides) EXPECT_EQ(v.strides(), *c.view_strides) << shape_str(c.shape);
    else EXPECT_TRUE(v.is_c_contiguous());
    // Same elements in C order either way.
    std::vector<Scalar> got = elements(v);
    for (std::int64_t i = 0; i < 12; ++i) EXPECT_EQ(got[i], r.values[(i / 3) * 6 + i % 3]);
  }
  // A reversed middle axis: splitting the last axis is a view, merging across it is not.
  Random b = random_array({2, 3, 4}, DType::Float64);
  IndexItem rev[] = {Slice{}, Slice{N, N, -1}};
  NDArray c = b.array.index(rev);
  NDArray split = c.reshape({2, 3, 2, 2});
  EXPECT_EQ(split.buffer(), b.array.buffer());
  EXPECT_EQ(split.strides(), (Strides{12, -4, 2, 1}));
  NDArray merged = c.reshape({6, 4});
  EXPECT_NE(merged.buffer(), b.array.buffer());
  std::vector<Scalar> got = elements(merged);
  for (std::int64_t i = 0; i < 24; ++i) {
    std::int64_t x = i / 12, y = 2 - (i / 4) % 3, z = i % 4;
    EXPECT_EQ(got[i], b.values[(x * 3 + y) * 4 + z]);
  }
  // A contiguous array always reshapes to a view.
  NDArray flat = b.array.reshape({-1});
  EXPECT_EQ(flat.buffer(), b.array.buffer());
  EXPECT_EQ(flat.shape(), (Shape{24}));
  EXPECT_EQ(b.array.transpose().reshape({24}).buffer() == b.array.buffer(), false);
}

TEST(NDArrayReshape, ErrorsAsNumpy) {
  NDArray a = NDArray::zeros({6}, DType::Float32, Device::cpu());
  EXPECT_EQ(error_of([&] { a.reshape({4, 2}); }), "cannot reshape array of size 6 into shape (4, 2)");
  EXPECT_EQ(error_of([&] { a.reshape({-1, 4}); }), "cannot reshape array of size 6 into shape (-1, 4)");
  EXPECT_EQ(error_of([&] { a.reshape({-1, -1}); }), "can only specify one unknown dimension");
  EXPECT_EQ(error_of([&] { a.reshape({-2, -3}); }), "negative dimensions are not allowed (shape (-2, -3))");
}

// NumPy's limit of 64 axes, checked wherever an array is made: a host's own buffer
// wrapped as a view included.
TEST(NDArrayConstruct, AtMost64Axes) {
  const Shape ones65(65, 1), ones64(64, 1);
  const std::string too_many = "maximum supported dimension for an ndarray is currently 64, found 65";
  EXPECT_EQ(error_of([&] { NDArray::empty(ones65, DType::Float32, Device::cpu()); }), too_many);
  EXPECT_EQ(error_of([&] { NDArray::zeros(ones65, DType::Int8, Device::cpu()); }), too_many);
  EXPECT_EQ(error_of([&] { NDArray::full(ones65, Scalar::of_int(3), DType::Int8, Device::cpu()); }), too_many);
  float host[4] = {1, 2, 3, 4};
  EXPECT_EQ(error_of([&] { NDArray::from_host(host, ones65, DType::Float32, Device::cpu()); }), too_many);
  auto buffer = Buffer::wrap(Device::cpu(), host, sizeof host);
  EXPECT_EQ(error_of([&] { NDArray::view(buffer, DType::Float32, ones65, Strides(65, 0)); }), too_many);
  NDArray a = NDArray::view(buffer, DType::Float32, {4}, {1});
  EXPECT_EQ(error_of([&] { a.reshape(ones65); }), too_many);
  Shape wide = ones64;
  wide[0] = 2, wide[63] = 2;
  NDArray b = a.reshape(wide);
  EXPECT_EQ(b.ndim(), 64);
  Shape corner(64, 0);
  corner[0] = 1, corner[63] = 1;
  EXPECT_EQ(b.transpose().get(corner), Scalar::of_float(4, DType::Float32));  // b[1, 0, ..., 0, 1]
}

// ---- buffers and views ----------------------------------------------------------------------

TEST(NDArrayView, ChecksTheBuffer) {
  Random r = random_array({12}, DType::Int16);
  NDArray v = NDArray::view(r.array.buffer(), DType::Int16, {3, 2}, {-4, 2}, 9);
  std::vector<Scalar> got = elements(v);
  const int want[] = {9, 11, 5, 7, 1, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], r.values[want[i]]);
  NDArray bytes = NDArray::view(r.array.buffer(), DType::UInt8, {24}, {1}, 0);
  EXPECT_EQ(bytes.size(), 24);
  NDArray broadcast = NDArray::view(r.array.buffer(), DType::Int16, {5, 12}, {0, 1}, 0);
  EXPECT_EQ(elements(broadcast)[12 * 4 + 7], r.values[7]);
  EXPECT_EQ(error_of([&] {
              NDArray::view(r.array.buffer(), DType::Int16, {3, 2}, {4, 2}, 3);
            }),
            "array view reaches outside its buffer: shape (3, 2), strides (4, 2), offset 3 touch "
            "int16 elements [3, 13] but the buffer holds 24 bytes (12 elements)");
  EXPECT_EQ(error_of([&] { NDArray::view(r.array.buffer(), DType::Int16, {3}, {-1}, 1); }),
            "array view reaches outside its buffer: shape (3,), strides (-1,), offset 1 touch "
            "int16 elements [-1, 1] but the buffer holds 24 bytes (12 elements)");
  EXPECT_EQ(error_of([&] {
              NDArray::view(r.array.buffer(), DType::Int16, {3}, {1, 1}, 0);
            }),
            "array view: shape (3,) has 1 axes but 2 strides were given");
  EXPECT_EQ(error_of([&] { NDArray::view(nullptr, DType::Int16, {3}, {1}, 0); }),
            "cannot make an array view of a null buffer");
}

TEST(NDArrayCopy, ContiguousCopiesAndIdentity) {
  Random r = random_array({5, 7}, DType::Float32);
  EXPECT_EQ(r.array.contiguous().buffer(), r.array.buffer());
  EXPECT_EQ(r.array.to(Device::cpu()).buffer(), r.array.buffer());
  NDArray t = r.array.transpose();
  NDArray c = t.contiguous();
  EXPECT_NE(c.buffer(), r.array.buffer());
  EXPECT_TRUE(c.is_c_contiguous());
  EXPECT_EQ(c.shape(), (Shape{7, 5}));
  std::vector<Scalar> got = elements(c);
  for (std::int64_t i = 0; i < 7; ++i)
    for (std::int64_t j = 0; j < 5; ++j) EXPECT_EQ(got[i * 5 + j], r.values[j * 7 + i]);
  NDArray d = r.array.copy();
  EXPECT_NE(d.buffer(), r.array.buffer());
  EXPECT_EQ(elements(d), r.values);
  d.set(std::vector<std::int64_t>{0, 0}, Scalar::of_float(1e9));
  EXPECT_EQ(r.array.get(std::vector<std::int64_t>{0, 0}), r.values[0]);  // independent
}

// ---- writes ---------------------------------------------------------------------------------

TEST(NDArrayAssign, BroadcastsAndConverts) {
  Random src = random_array({4, 1}, DType::Int16);
  NDArray dst = NDArray::zeros({3, 4, 5}, DType::Float64, Device::cpu());
  dst.assign(src.array);
  std::vector<Scalar> got = elements(dst);
  for (std::int64_t i = 0; i < 60; ++i)
    EXPECT_EQ(got[i], Scalar::of_float(static_cast<double>(src.values[(i / 5) % 4].v.i)));
  Random row = random_array({5}, DType::Float64);
  dst.assign(row.array);
  got = elements(dst);
  for (std::int64_t i = 0; i < 60; ++i) EXPECT_EQ(got[i], row.values[i % 5]);
  NDArray scalar = NDArray::full({}, Scalar::of_int(-3), DType::Int64, Device::cpu());
  dst.assign(scalar);
  for (const Scalar& s : elements(dst)) EXPECT_EQ(s, Scalar::of_float(-3.0));
  EXPECT_EQ(error_of([] {
              NDArray::zeros({2, 3}, DType::Float32, Device::cpu())
                  .assign(NDArray::zeros({4}, DType::Float32, Device::cpu()));
            }),
            "could not broadcast input array from shape (4,) into shape (2, 3)");
  EXPECT_EQ(error_of([] {
              NDArray::zeros({3}, DType::Float32, Device::cpu())
                  .assign(NDArray::zeros({2, 3}, DType::Float32, Device::cpu()));
            }),
            "could not broadcast input array from shape (2, 3) into shape (3,)");
}

TEST(NDArrayAssign, IntoAStridedViewLeavesTheRest) {
  Random base = random_array({6, 8}, DType::Int32);
  std::vector<Scalar> before = base.values;
  IndexItem items[] = {Slice{N, N, 2}, Slice{N, N, -3}};
  NDArray v = base.array.index(items);  // rows 0, 2, 4; columns 7, 4, 1
  ASSERT_EQ(v.shape(), (Shape{3, 3}));
  Random src = random_array({3, 3}, DType::Int32);
  v.assign(src.array);
  std::vector<Scalar> got = elements(base.array);
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 8; ++j) {
      bool inside = i % 2 == 0 && j % 3 == 1;
      Scalar want = inside ? src.values[(i / 2) * 3 + (7 - j) / 3] : before[i * 8 + j];
      EXPECT_EQ(got[i * 8 + j], want) << i << "," << j;
    }
  v.fill(Scalar::of_int(-5));
  got = elements(base.array);
  for (std::int64_t i = 0; i < 48; ++i)
    EXPECT_EQ(got[i], (i / 8) % 2 == 0 && (i % 8) % 3 == 1 ? Scalar::of_int(-5, DType::Int32) : before[i]);
}

TEST(NDArrayAssign, OverlappingViewsReadBeforeWriting) {
  Random r = random_array({10}, DType::Float64);
  IndexItem tail[] = {Slice{1, N, 1}}, head[] = {Slice{N, -1, 1}};
  r.array.index(tail).assign(r.array.index(head));  // a[1:] = a[:-1]
  std::vector<Scalar> got = elements(r.array);
  EXPECT_EQ(got[0], r.values[0]);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(got[i], r.values[i - 1]);
  IndexItem rev[] = {Slice{N, N, -1}};
  NDArray c = r.array.copy();
  c.assign(c.index(rev));  // in-place reversal
  std::vector<Scalar> rev_got = elements(c);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rev_got[i], got[9 - i]);
}

// Two views of one buffer that share no byte are copied directly; views that do are read
// first. Both give what index arithmetic gives.
TEST(NDArrayAssign, DisjointViewsOfOneBuffer) {
  Random r = random_array({12}, DType::Int16);
  IndexItem low[] = {Slice{N, 6, 1}}, high[] = {Slice{6, N, 1}}, odd[] = {Slice{1, N, 2}}, even[] = {Slice{N, N, 2}};
  ASSERT_FALSE(may_share_memory(r.array.index(low), r.array.index(high)));
  r.array.index(low).assign(r.array.index(high));  // a[:6] = a[6:]
  std::vector<Scalar> got = elements(r.array);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], r.values[i < 6 ? i + 6 : i]) << i;
  // The even and the odd elements share no byte, but their extents overlap: read first.
  ASSERT_TRUE(may_share_memory(r.array.index(even), r.array.index(odd)));
  r.array.index(even).assign(r.array.index(odd));
  std::vector<Scalar> again = elements(r.array);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(again[i], got[i % 2 == 0 ? i + 1 : i]) << i;
}

// byte_extent is the lowest and one past the highest byte of the elements, which this test
// finds by visiting each element; may_share_memory is the overlap of two such ranges.
TEST(NDArrayByteExtent, SpansTheElementsOfRandomViews) {
  NDArray base = NDArray::zeros({6, 5, 4}, DType::Float32, Device::cpu());
  auto random_view = [&]() {
    std::uniform_int_distribution<int> pick(0, 5);
    std::vector<IndexItem> items;
    for (std::int64_t extent : base.shape()) {
      std::int64_t a = pick(rng()) % extent, b = pick(rng()) % extent;
      std::int64_t step = 1 + pick(rng()) % 2;
      if (pick(rng()) % 2)
        items.push_back(
            Slice{std::max(a, b), std::min(a, b) - 1 < 0 ? N : std::optional<std::int64_t>(std::min(a, b) - 1), -step});
      else if (pick(rng()) % 3 == 0) items.push_back(a);
      else items.push_back(Slice{std::min(a, b), std::max(a, b) + 1, step});
    }
    NDArray v = base.index(items);
    return pick(rng()) % 2 ? v.transpose() : v;
  };
  auto visited = [&](const NDArray& v) {  // [lowest, highest + itemsize) by visiting
    std::uintptr_t lo = UINTPTR_MAX, hi = 0;
    std::vector<std::int64_t> at(static_cast<std::size_t>(v.ndim()), 0);
    for (std::int64_t n = 0; n < v.size(); ++n) {
      std::int64_t offset = 0;
      for (int k = 0; k < v.ndim(); ++k)
        offset += at[static_cast<std::size_t>(k)] * v.strides()[static_cast<std::size_t>(k)];
      auto p = reinterpret_cast<std::uintptr_t>(v.data()) + static_cast<std::uintptr_t>(offset * 4);
      lo = std::min(lo, p);
      hi = std::max(hi, p + 4);
      for (int k = v.ndim(); k-- > 0;) {
        if (++at[static_cast<std::size_t>(k)] < v.shape()[static_cast<std::size_t>(k)]) break;
        at[static_cast<std::size_t>(k)] = 0;
      }
    }
    return std::pair{lo, hi};
  };
  for (int trial = 0; trial < 300; ++trial) {
    NDArray a = random_view(), b = random_view();
    if (a.size() == 0 || b.size() == 0) {
      EXPECT_FALSE(may_share_memory(a, b));
      continue;
    }
    auto [alo, ahi] = visited(a);
    auto [blo, bhi] = visited(b);
    EXPECT_EQ(byte_extent(a).lo, alo);
    EXPECT_EQ(byte_extent(a).hi, ahi);
    EXPECT_EQ(may_share_memory(a, b), alo < bhi && blo < ahi) << trial;
    EXPECT_TRUE(may_share_memory(a, a));
  }
  EXPECT_FALSE(may_share_memory(base, NDArray()));  // an empty handle shares nothing
  EXPECT_FALSE(may_share_memory(base, NDArray::zeros({6, 5, 4}, DType::Float32, Device::cpu())));
}

// Every dtype pair on random values (NaN, out-of-range floats included) converts as
// Scalar::cast does.
TEST(NDArrayAstype, EveryPairMatchesScalarCast) {
  for (DType from : kAllDTypes) {
    Random r = random_array({3, 7}, from);
    if (is_float(from)) {  // the edge cases of float -> int
      const double edges[] = {NAN, INFINITY, -INFINITY, 1e30, -1e30, -0.0, 2.9999, -2.9999};
      for (int i = 0; i < 8; ++i) {
        r.values[i] = Scalar::of_float(edges[i], from);
        r.array.set(std::vector<std::int64_t>{i / 7, i % 7}, r.values[i]);
      }
    }
    for (DType to : kAllDTypes) {
      NDArray strided = r.array.transpose();
      NDArray c = strided.astype(to);
      ASSERT_EQ(c.dtype(), to);
      ASSERT_EQ(c.shape(), (Shape{7, 3}));
      std::vector<Scalar> got = elements(c);
      for (std::int64_t i = 0; i < 7; ++i)
        for (std::int64_t j = 0; j < 3; ++j)
          EXPECT_TRUE(same(got[i * 3 + j], r.values[j * 7 + i].cast(to)))
              << dtype_name(from) << " -> " << dtype_name(to) << " of " << r.values[j * 7 + i].to_double();
    }
  }
}

TEST(NDArrayAstype, KnownValues) {
  const double xs[] = {-2.7, 0.5, 300.0, -1.0};
  NDArray f = NDArray::from_host(xs, {4}, DType::Float64, Device::cpu());
  std::vector<Scalar> i = elements(f.astype(DType::Int32));
  EXPECT_EQ(i[0].v.i, -2);
  EXPECT_EQ(i[1].v.i, 0);
  EXPECT_EQ(i[2].v.i, 300);
  std::vector<Scalar> u8 = elements(f.astype(DType::Int32).astype(DType::UInt8));
  EXPECT_EQ(u8[2].v.u, 44u);   // 300 wraps
  EXPECT_EQ(u8[3].v.u, 255u);  // -1 wraps
  std::vector<Scalar> b = elements(f.astype(DType::Bool));
  EXPECT_TRUE(b[0].v.b && b[1].v.b && b[2].v.b && b[3].v.b);
  EXPECT_FALSE(elements(NDArray::zeros({1}, DType::Float32, Device::cpu()).astype(DType::Bool))[0].v.b);
}

TEST(NDArrayFill, EveryDType) {
  for (DType t : kAllDTypes) {
    Scalar v = random_scalar(t);
    NDArray a = NDArray::empty({4, 3}, t, Device::cpu());
    a.fill(v);
    for (const Scalar& s : elements(a)) EXPECT_EQ(s, v);
    a.fill(Scalar::of_int(0));
    for (const Scalar& s : elements(a)) EXPECT_EQ(s, Scalar::of_int(0).cast(t));
  }
}

// ---- devices (GPU) -------------------------------------------------------------------------

TEST(NDArrayDevice, RoundTripEveryDType) {
  REQUIRE_CUDA(1);
  for (DType t : kAllDTypes) {
    Random r = random_array({17, 33}, t);
    NDArray d = r.array.to(Device::cuda(0));
    EXPECT_TRUE(d.device() == Device::cuda(0));
    EXPECT_NE(d.buffer(), r.array.buffer());
    EXPECT_EQ(elements(d), r.values) << dtype_name(t);
    EXPECT_EQ(elements(d.to(Device::cpu())), r.values) << dtype_name(t);
    NDArray f = NDArray::from_host(r.array.data(), r.array.shape(), t, Device::cuda(0));
    EXPECT_EQ(elements(f), r.values) << dtype_name(t);
    EXPECT_EQ(d.get(std::vector<std::int64_t>{-1, 5}), r.values[16 * 33 + 5]);
  }
}

TEST(NDArrayDevice, NonContiguousViewsToHost) {
  REQUIRE_CUDA(1);
  Random r = random_array({6, 5, 7}, DType::Float32);
  NDArray d = r.array.to(Device::cuda(0));
  IndexItem items[] = {Slice{N, N, -2}, 3, Slice{1, N, 3}};
  NDArray hv = r.array.index(items), dv = d.index(items);
  EXPECT_EQ(dv.buffer(), d.buffer());
  EXPECT_EQ(elements(dv), elements(hv));
  EXPECT_EQ(elements(dv.copy(Device::cpu())), elements(hv));
  EXPECT_EQ(elements(d.transpose()), elements(r.array.transpose()));
  EXPECT_EQ(elements(d.transpose().contiguous()), elements(r.array.transpose()));
  NDArray reshaped = d.transpose().reshape({-1});  // a copy on the device
  EXPECT_TRUE(reshaped.device() == Device::cuda(0));
  EXPECT_EQ(elements(reshaped), elements(r.array.transpose()));
  EXPECT_EQ(elements(dv.astype(DType::Float64)), elements(hv.astype(DType::Float64)));
}

TEST(NDArrayDevice, WritesIntoStridedViews) {
  REQUIRE_CUDA(1);
  Random base = random_array({6, 8}, DType::Int64);
  NDArray host = base.array.copy();
  NDArray dev = base.array.to(Device::cuda(0));
  IndexItem items[] = {Slice{N, N, 2}, Slice{N, N, -3}};
  Random src = random_array({3, 3}, DType::Int64);
  host.index(items).assign(src.array);
  dev.index(items).assign(src.array);
  EXPECT_EQ(elements(dev), elements(host));
  dev.index(items).assign(src.array.to(Device::cuda(0)).transpose());
  host.index(items).assign(src.array.transpose());
  EXPECT_EQ(elements(dev), elements(host));
  IndexItem rows[] = {Slice{1, 5, 1}, Slice{2, 6, 1}};  // runs of 4 contiguous elements
  dev.index(rows).fill(Scalar::of_int(77));
  host.index(rows).fill(Scalar::of_int(77));
  EXPECT_EQ(elements(dev), elements(host));
  Random row = random_array({4}, DType::Float32);  // broadcast and convert
  dev.index(rows).assign(row.array);
  host.index(rows).assign(row.array);
  EXPECT_EQ(elements(dev), elements(host));
  dev.set(std::vector<std::int64_t>{5, -1}, Scalar::of_int(-9));
  host.set(std::vector<std::int64_t>{5, -1}, Scalar::of_int(-9));
  EXPECT_EQ(elements(dev), elements(host));
  NDArray z = NDArray::zeros({3, 4}, DType::Float64, Device::cuda(0));
  for (const Scalar& s : elements(z)) EXPECT_EQ(s, Scalar::of_float(0.0));
}

TEST(NDArrayDevice, PeerCopies) {
  REQUIRE_CUDA(2);
  for (DType t : {DType::UInt8, DType::Float32, DType::Float64}) {
    Random r = random_array({9, 31}, t);
    NDArray d0 = r.array.to(Device::cuda(0));
    NDArray d1 = d0.to(Device::cuda(1));
    EXPECT_TRUE(d1.device() == Device::cuda(1));
    EXPECT_EQ(elements(d1), r.values);
    NDArray t1 = d0.transpose().to(Device::cuda(1));  // strided source
    EXPECT_EQ(elements(t1), elements(r.array.transpose()));
    NDArray back = NDArray::zeros({9, 31}, t, Device::cuda(0));
    back.assign(d1);
    EXPECT_EQ(elements(back), r.values);
  }
}

}  // namespace
}  // namespace luda

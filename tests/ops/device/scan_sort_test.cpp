// The scan and sort kernels (ops/device/scan.h, ops/device/sort.h): each dtype's module
// compiled by NVRTC for sm_90 with no GPU (a cubin, so ptxas accepts the shared memory and
// registers), and the kernels run on each device (the cpu always, cuda:0 when present) on
// random rows of lengths around the tile size, against std::stable_sort and a sequential
// scan computed on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "ops/device/scan.h"
#include "ops/device/sort.h"
#include "tests/test_support.h"

namespace luda::ops::device {
namespace {

using test_support::host_values;

// Every dtype the kernels sort (float16 and bfloat16 by their float32 values, complex
// lexicographically); the scans take float16 and bfloat16 as float32 (ops/cumulative.cpp).
constexpr DType kAll[] = {DType::Bool,    DType::Int8,    DType::Int16,    DType::Int32,     DType::Int64,
                          DType::UInt8,   DType::UInt16,  DType::UInt32,   DType::UInt64,    DType::Float32,
                          DType::Float64, DType::Float16, DType::BFloat16, DType::Complex64, DType::Complex128};

TEST(DeviceScanSort, EveryDtypeCompilesWithNvrtcForSm90) {
  for (DType t : kAll) {
    const std::string name(dtype_name(t));
    const jit::CompiledProgram sort = sort_module(t)->compile_for(90);
    EXPECT_EQ(sort.image.substr(0, 4), "\x7f"
                                       "ELF")
        << name;
    EXPECT_EQ(sort.log, "") << name;
    for (const char* k : {"sort_tiles", "argsort_tiles", "sort_merge", "argsort_merge"})  // the ELF's symbols
      EXPECT_NE(sort.image.find(fmt::format("{}_{}", k, name) + '\0'), std::string::npos) << k << " " << name;
    if (t == DType::Bool || (itemsize(t) == 2 && is_float(t))) continue;  // scanned as int64, float32
    const jit::CompiledProgram scan = scan_module(t)->compile_for(90);
    EXPECT_EQ(scan.image.substr(0, 4), "\x7f"
                                       "ELF")
        << name;
    EXPECT_EQ(scan.log, "") << name;
    for (const char* k : {"cumsum_tiles", "cumprod_tiles", "cumsum_carry", "cumprod_carry"})
      EXPECT_NE(scan.image.find(fmt::format("{}_{}", k, name) + '\0'), std::string::npos) << k << " " << name;
  }
}

// The kernels run on each device: the cpu always, cuda:0 where there is one.
class ScanSortDevices : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (std::string(GetParam()) == "cuda") LUDA_REQUIRE_GPU();
  }
  Device device() const { return Device::parse(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Devices, ScanSortDevices, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

template <class T>
NDArray array_of(const std::vector<T>& v, const Shape& shape, DType t, Device device) {
  return NDArray::from_host(v.data(), shape, t, device);
}

template <class T>
struct is_complex : std::false_type {};
template <class F>
struct is_complex<std::complex<F>> : std::true_type {};

// NumPy's order: NaN after every number; complex values lexicographically, those with a
// NaN part last, in the order R + nanj, nan + Rj, nan + nanj (npysort's CLT).
template <class T>
bool numpy_less(T a, T b) {
  if constexpr (is_complex<T>::value) {
    const bool an = std::isnan(a.real()), bn = std::isnan(b.real());
    const bool ain = std::isnan(a.imag()), bin = std::isnan(b.imag());
    if (an != bn) return bn;            // a real NaN goes after every real number
    if (!an && a.real() != b.real()) {  // both real parts numbers, and different
      if (ain != bin) return bin;       // an imaginary NaN goes after
      return a.real() < b.real();
    }
    return numpy_less(a.imag(), b.imag());  // equal (or both NaN) real parts
  } else if constexpr (std::is_floating_point_v<T>) {
    return a < b || (!std::isnan(a) && std::isnan(b));
  } else {
    return a < b;
  }
}

// Rows of each length around the tile sizes (packed rows, one tile, several, a partial
// last tile), and counts of rows that make several blocks.
struct Case {
  long long rows, len;
};
constexpr Case kCases[] = {{1, 1},    {5, 1},    {3, 2},    {700, 5},    {9, 1023}, {2, 1024}, {2, 1025},
                           {3, 2047}, {1, 4096}, {2, 5000}, {1, 100000}, {40, 37},  {1, 0},    {0, 3}};

template <class T>
void check_sort(DType t, Device device, std::mt19937& rng, std::vector<T> (*make)(std::mt19937&, std::size_t)) {
  for (const Case& c : kCases) {
    const std::size_t n = static_cast<std::size_t>(c.rows * c.len);
    const std::vector<T> data = make(rng, n);
    const std::string what = fmt::format("{} {} x {} on {}", dtype_name(t), c.rows, c.len, device.str());
    const NDArray keys = array_of(data, {c.rows, c.len}, t, device);
    const NDArray index = NDArray::empty({c.rows, c.len}, DType::Int64, device);
    sort_rows(keys, index);
    const NDArray plain = array_of(data, {c.rows, c.len}, t, device);
    sort_rows(plain);
    const std::vector<T> got = host_values<T>(keys), got_plain = host_values<T>(plain);
    const std::vector<long long> got_index = host_values<long long>(index);
    for (long long r = 0; r < c.rows; ++r) {
      std::vector<long long> order(static_cast<std::size_t>(c.len));
      std::iota(order.begin(), order.end(), 0LL);
      const T* row = data.data() + r * c.len;
      std::stable_sort(order.begin(), order.end(),
                       [&](long long a, long long b) { return numpy_less(row[a], row[b]); });
      for (long long j = 0; j < c.len; ++j) {
        const std::size_t at = static_cast<std::size_t>(r * c.len + j);
        const T want = row[order[static_cast<std::size_t>(j)]];
        ASSERT_EQ(got_index[at], order[static_cast<std::size_t>(j)]) << what << " row " << r << " at " << j;
        ASSERT_EQ(std::memcmp(&got[at], &want, sizeof(T)), 0) << what << " row " << r << " at " << j;
        ASSERT_EQ(std::memcmp(&got_plain[at], &want, sizeof(T)), 0) << what << " plain row " << r << " at " << j;
      }
    }
  }
}

// Few distinct values, so that ties test stability.
template <class T>
std::vector<T> small_integers(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> d(0, 9);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng) * (std::is_signed_v<T> && d(rng) < 5 ? -1 : 1));
  return v;
}
// Floats with ties, NaN, infinities, and both zeros (equal, so they keep their order).
template <class T>
std::vector<T> floats(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> d(0, 19);
  std::vector<T> v(n);
  for (auto& x : v) {
    const int k = d(rng);
    x = k == 0   ? std::numeric_limits<T>::quiet_NaN()
        : k == 1 ? -std::numeric_limits<T>::infinity()
        : k == 2 ? std::numeric_limits<T>::infinity()
        : k == 3 ? T(-0.0)
        : k == 4 ? T(0.0)
                 : static_cast<T>(d(rng) - 10) / T(4);
  }
  return v;
}
// Complex values whose parts are floats(): ties in either part, NaN in either or both.
std::vector<std::complex<double>> complexes(std::mt19937& rng, std::size_t n) {
  const std::vector<double> re = floats<double>(rng, n), im = floats<double>(rng, n);
  std::vector<std::complex<double>> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = {re[i], im[i]};
  return v;
}
std::vector<unsigned char> bools(std::mt19937& rng, std::size_t n) {
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng() % 2);
  return v;
}

TEST_P(ScanSortDevices, SortsRowsStablyWithTheirPositions) {
  std::mt19937 rng(4242);
  check_sort<unsigned char>(DType::Bool, device(), rng, bools);
  check_sort<signed char>(DType::Int8, device(), rng, small_integers<signed char>);
  check_sort<int>(DType::Int32, device(), rng, small_integers<int>);
  check_sort<unsigned long long>(DType::UInt64, device(), rng, small_integers<unsigned long long>);
  check_sort<float>(DType::Float32, device(), rng, floats<float>);
  check_sort<double>(DType::Float64, device(), rng, floats<double>);
  check_sort<std::complex<double>>(DType::Complex128, device(), rng, complexes);
}

TEST_P(ScanSortDevices, ScansRowsAgainstASequentialScan) {
  const Device device = this->device();
  {
    std::mt19937 rng(77);
    for (const Case& c : kCases) {
      const std::size_t n = static_cast<std::size_t>(c.rows * c.len);
      const std::string what = fmt::format("{} x {} on {}", c.rows, c.len, device.str());
      // int64 sums and products (which wrap), exactly.
      std::uniform_int_distribution<long long> d(-1000, 1000);
      std::vector<long long> ints(n);
      for (auto& x : ints) x = d(rng);
      for (ScanOp op : {ScanOp::Sum, ScanOp::Prod}) {
        const NDArray a = array_of(ints, {c.rows, c.len}, DType::Int64, device);
        scan_rows(a, op);
        const std::vector<long long> got = host_values<long long>(a);
        for (long long r = 0; r < c.rows; ++r) {
          unsigned long long acc = op == ScanOp::Sum ? 0 : 1;
          for (long long j = 0; j < c.len; ++j) {
            const auto v = static_cast<unsigned long long>(ints[static_cast<std::size_t>(r * c.len + j)]);
            acc = op == ScanOp::Sum ? acc + v : acc * v;
            ASSERT_EQ(got[static_cast<std::size_t>(r * c.len + j)], static_cast<long long>(acc))
                << what << (op == ScanOp::Sum ? " sum" : " prod") << " row " << r << " at " << j;
          }
        }
      }
      // complex128 products of unit monomials (1, -1, 1j, -1j: exact in any order), and
      // sums within the rounding of a sum of that many terms.
      std::vector<std::complex<double>> units(n), zs(n);
      const std::complex<double> unit[] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
      std::uniform_real_distribution<double> part(-1, 1);
      for (std::size_t i = 0; i < n; ++i) {
        units[i] = unit[rng() % 4];
        zs[i] = {part(rng), part(rng)};
      }
      const NDArray zp = array_of(units, {c.rows, c.len}, DType::Complex128, device);
      const NDArray zsum = array_of(zs, {c.rows, c.len}, DType::Complex128, device);
      scan_rows(zp, ScanOp::Prod);
      scan_rows(zsum, ScanOp::Sum);
      const std::vector<std::complex<double>> got_prod = host_values<std::complex<double>>(zp);
      const std::vector<std::complex<double>> got_sum = host_values<std::complex<double>>(zsum);
      for (long long r = 0; r < c.rows; ++r) {
        std::complex<double> prod = 1, sum = 0;
        double scale = 0;
        for (long long j = 0; j < c.len; ++j) {
          const std::size_t at = static_cast<std::size_t>(r * c.len + j);
          prod *= units[at];
          sum += zs[at];
          scale += std::abs(zs[at]);
          ASSERT_EQ(got_prod[at], prod) << what << " complex128 prod row " << r << " at " << j;
          ASSERT_NEAR(std::abs(got_sum[at] - sum), 0.0, 1e-14 * scale)
              << what << " complex128 row " << r << " at " << j;
        }
      }
      // float64 sums within the rounding of a sum of that many terms; uint8 wrapping.
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> reals(n);
      for (auto& x : reals) x = u(rng);
      const NDArray f = array_of(reals, {c.rows, c.len}, DType::Float64, device);
      scan_rows(f, ScanOp::Sum);
      const std::vector<double> got = host_values<double>(f);
      std::vector<unsigned char> bytes(n);
      for (auto& b : bytes) b = static_cast<unsigned char>(rng());
      const NDArray w = array_of(bytes, {c.rows, c.len}, DType::UInt8, device);
      scan_rows(w, ScanOp::Sum);
      const std::vector<unsigned char> wrapped = host_values<unsigned char>(w);
      for (long long r = 0; r < c.rows; ++r) {
        double acc = 0, scale = 0;
        unsigned char byte_sum = 0;
        for (long long j = 0; j < c.len; ++j) {
          const std::size_t at = static_cast<std::size_t>(r * c.len + j);
          acc += reals[at];
          scale += std::abs(reals[at]);
          byte_sum = static_cast<unsigned char>(byte_sum + bytes[at]);
          ASSERT_NEAR(got[at], acc, 1e-14 * scale) << what << " float64 row " << r << " at " << j;
          ASSERT_EQ(wrapped[at], byte_sum) << what << " uint8 row " << r << " at " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace luda::ops::device

// The copy kernel of ops/device/copy.h, which copies between dtypes on a GPU: for every
// pair of the 15 dtypes it must convert exactly as the host converts (runtime/dtype.h
// convert_element: NumPy's astype), so that a copy gives the same bits on every device.
// The kernel is CUDA C++ within the cpu prelude's subset, so it runs here on the cpu
// device, through the same raw-module path, against the host's astype; NVRTC compiles
// each pair's source for a GPU too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "jit/compile/nvrtc.h"
#include "jit/raw/raw_module.h"
#include "ops/device/copy.h"
#include "runtime/dtype.h"
#include "runtime/ndarray.h"

namespace luda::ops::device {
namespace {

// Values every conversion must agree on: signed zeros, halves at rounding ties, values
// past float16's and the integers' ranges, infinities, NaN, and random ones.
std::vector<double> samples() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0,    -0.0,    1.0,     -1.0,    0.5,   -2.5,        2049.0,
                           2051.0, 65504.0, 65519.0, 65520.0, 1e-8,  6e-8,        3e38,
                           -3e38,  1e300,   255.5,   -128.7,  300.0, 70000.0,     4e9,
                           -5e18,  1.0 / 3, inf,     -inf,    0.1,   1 + 0x1p-11, 1 + 0x1p-8 + 0x1p-30};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> d(-1000, 1000);
  for (int i = 0; i < 40; ++i) v.push_back(d(rng));
  v.push_back(std::nan(""));
  return v;
}

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (int i = 0; i < kNumDTypes; ++i) out.push_back(static_cast<DType>(i));
  return out;
}

// The sample values as an array of `t`, converted on the host; complex ones get an
// imaginary part too (the values reversed).
NDArray source_array(DType t) {
  std::vector<double> v = samples();
  NDArray re = NDArray::from_host(v.data(), {static_cast<std::int64_t>(v.size())}, DType::Float64, Device::cpu());
  if (!is_complex(t)) return re.astype(t);
  std::vector<double> both;
  for (std::size_t i = 0; i < v.size(); ++i) {
    both.push_back(v[i]);
    both.push_back(v[v.size() - 1 - i]);
  }
  return NDArray::from_host(both.data(), {static_cast<std::int64_t>(v.size())}, DType::Complex128, Device::cpu())
      .astype(t);
}

TEST(DeviceCopy, EveryPairConvertsAsTheHostConverts) {
  for (DType from : all_dtypes()) {
    NDArray src = source_array(from);
    for (DType to : all_dtypes()) {
      NDArray want = src.astype(to);
      NDArray got = NDArray::empty(src.shape(), to, Device::cpu());
      device_assign(got, src);
      ASSERT_EQ(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(src.size()) * itemsize(to)), 0)
          << dtype_name(from) << " -> " << dtype_name(to);
    }
  }
}

// Strided and broadcast sources of a new dtype, as a GPU graph records them.
TEST(DeviceCopy, StridedAndBroadcastCopiesOfTheNewDtypes) {
  NDArray m = source_array(DType::Complex64).reshape({-1}).astype(DType::Complex64);
  std::vector<double> v(120);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.37 * static_cast<double>(i) - 20;
  m = NDArray::from_host(v.data(), {6, 10}, DType::Complex128, Device::cpu()).astype(DType::Complex64);
  NDArray t = m.transpose();
  NDArray got = NDArray::empty(t.shape(), DType::Float16, Device::cpu());
  device_assign(got, t);
  NDArray want = t.astype(DType::Float16);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), 60 * 2), 0);
}

TEST(DeviceCopy, SourcesCompileWithNvrtc) {
  try {
    jit::nvrtc_version();
  } catch (const std::exception& e) {
    GTEST_SKIP() << e.what();
  }
  for (DType from :
       {DType::Float16, DType::BFloat16, DType::Complex64, DType::Complex128, DType::Bool, DType::Int8, DType::Float64})
    for (DType to : all_dtypes()) {
      // As a raw module compiles it: after luda's prelude where it names the new dtypes.
      const std::string source = device_copy_source(to, from);
      try {
        jit::CompiledProgram p = jit::RawModule::create(source)->compile_for(90);
        EXPECT_EQ(p.log.find("warning"), std::string::npos) << p.log;
      } catch (const CompileError& e) {
        ADD_FAILURE() << dtype_name(from) << " -> " << dtype_name(to) << ": " << e.what();
      }
      EXPECT_EQ(source.find("#include"), std::string::npos);
    }
}

}  // namespace
}  // namespace luda::ops::device

// NCCL as luda.dist loads it: the element types it has for luda's dtypes, and a version
// or the reason it cannot be used. Its communicators need GPUs and ranks: the mpi tests
// (tests/lua/mpi/dist_spec.lua) move cuda arrays with them.
#include "runtime/dist/nccl.h"

#include <gtest/gtest.h>

#include <cstring>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/error.h"
#include "runtime/ndarray.h"
#include "tests/test_support.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
#endif

namespace luda::nccl {
namespace {

using test_support::host_values;

#if __has_include(<nccl.h>)
TEST(Nccl, TypesAreNcclsOwnForTheDtypesItHas) {
  EXPECT_EQ(type_of(DType::Int8), ncclInt8);
  EXPECT_EQ(type_of(DType::UInt8), ncclUint8);
  EXPECT_EQ(type_of(DType::Int32), ncclInt32);
  EXPECT_EQ(type_of(DType::UInt32), ncclUint32);
  EXPECT_EQ(type_of(DType::Int64), ncclInt64);
  EXPECT_EQ(type_of(DType::UInt64), ncclUint64);
  EXPECT_EQ(type_of(DType::Float16), ncclFloat16);
  EXPECT_EQ(type_of(DType::Float32), ncclFloat32);
  EXPECT_EQ(type_of(DType::Float64), ncclFloat64);
  EXPECT_EQ(type_of(DType::BFloat16), ncclBfloat16);
  for (DType d : {DType::Bool, DType::Int16, DType::UInt16, DType::Complex64, DType::Complex128})
    EXPECT_FALSE(type_of(d).has_value()) << dtype_name(d);
}
#endif

TEST(Nccl, GivesItsVersionOrWhyItCannotBeUsed) {
  std::string why;
  std::optional<std::string> v = version(&why);
  if (v) {
    EXPECT_TRUE(std::regex_match(*v, std::regex(R"(2\.\d+\.\d+)"))) << *v;
    EXPECT_EQ(version(), v);  // loaded once
  } else {
#if __has_include(<nccl.h>)
    EXPECT_NE(why.find("LUDA_NCCL"), std::string::npos) << why;  // every reason names the fix
#else
    EXPECT_NE(why.find("nccl.h"), std::string::npos) << why;
#endif
  }
}

// Polls until the communicator's work completes; false after 60 s.
bool settle(Comm& c) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!c.ready()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// A communicator of one rank (NCCL refuses two ranks on one GPU, so this is what one GPU
// can run): its nonblocking setup, and each operation on device memory, polled to the end.
TEST(Nccl, OneRankCommunicatorMovesDeviceMemory) {
  LUDA_REQUIRE_GPU();
  std::string why;
  if (!version(&why)) GTEST_SKIP() << why;
  std::unique_ptr<Comm> c = Comm::start(1, unique_id(), 0, 0);
  ASSERT_TRUE(settle(*c)) << "setup";
  EXPECT_EQ(c->ordinal(), 0);
  const std::vector<float> v = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f};
  const Device gpu = Device::cuda(0);
  NDArray x = NDArray::from_host(v.data(), {5}, DType::Float32, gpu);
  NDArray y = NDArray::zeros({5}, DType::Float32, gpu);
  c->all_reduce(x.data(), y.data(), 5, *type_of(DType::Float32), Op::Max);
  ASSERT_TRUE(settle(*c));
  EXPECT_EQ(host_values<float>(y), v);
  NDArray b = NDArray::zeros({5}, DType::Float32, gpu);
  c->broadcast(x.data(), b.data(), x.nbytes(), 0);
  ASSERT_TRUE(settle(*c));
  EXPECT_EQ(host_values<float>(b), v);
  NDArray g = NDArray::zeros({1, 5}, DType::Float32, gpu);
  c->all_gather(x.data(), g.data(), x.nbytes());
  ASSERT_TRUE(settle(*c));
  EXPECT_EQ(host_values<float>(g), v);
  c->abort();
  EXPECT_THROW(c->ready(), Error);
}

}  // namespace
}  // namespace luda::nccl

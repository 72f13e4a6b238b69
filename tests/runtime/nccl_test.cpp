// NCCL as luda.dist loads it: the element types it has for luda's dtypes, and a version
// or the reason it cannot be used. Its communicators need GPUs and ranks: the mpi tests
// (tests/lua/mpi/dist_spec.lua) move cuda arrays with them.
#include "runtime/nccl.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#if __has_include(<nccl.h>)
#include <nccl.h>
#endif

namespace luda::nccl {
namespace {

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

}  // namespace
}  // namespace luda::nccl

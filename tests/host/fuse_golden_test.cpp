// Golden test of luda.fuse: the CUDA C++ that a fused function with reductions becomes,
// made as a script makes it (luda.fuse in a lua_State, stdlib/kind_bindings.cpp) and read
// with its inspect("cuda"), kept in tests/jit/golden/ as tests/jit/kinds/golden_test.cpp
// keeps the other kinds' (prelude left out; rewrite with LUDA_UPDATE_GOLDEN=1). The
// function is a weighted mean: two reductions in one pass (an accumulator of two
// fields) and the work after them (the post step). Its value is checked too, against the
// same sums in Lua.
#include <gtest/gtest.h>

#include <string>

#include "tests/golden.h"
#include "tests/host/lua_host.h"

namespace luda::test {
namespace {

TEST(FuseGolden, WeightedMean) {
  constexpr const char* kScript = R"lua(
    local wmean = luda.fuse("function(x, w) return luda.sum(x * w) / luda.sum(w) end", {name = "wmean"})
    golden_text = wmean:inspect("cuda", "float32(float32, float32)")
    local x = luda.random.random({100}, "float32", {seed = 5}) * 4 - 2
    local w = luda.random.random({100}, "float32", {seed = 6}) + 1
    local xs, ws = x:totable(), w:totable()
    local num, den = 0, 0
    for i = 1, #xs do num, den = num + xs[i] * ws[i], den + ws[i] end
    golden_value, golden_reference = wmean(x, w):item(), num / den
  )lua";
  LuaHost host;
  ASSERT_EQ(host.run(kScript), "");
  lua_getglobal(host.L, "golden_value");
  lua_getglobal(host.L, "golden_reference");
  EXPECT_NEAR(lua_tonumber(host.L, -2), lua_tonumber(host.L, -1), 1e-5);
  lua_pop(host.L, 2);
  lua_getglobal(host.L, "golden_text");
  ASSERT_TRUE(lua_isstring(host.L, -1));
  std::string text = lua_tostring(host.L, -1);
  lua_pop(host.L, 1);
  test_support::check_kind_golden("fuse_wmean", test_support::kind_body(text));
}

}  // namespace
}  // namespace luda::test

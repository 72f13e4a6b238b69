// A C++ application that embeds Lua opens luda in its own lua_State, runs a script that
// defines and launches a kernel on the cpu device, and reads the results back through
// the Lua C API.
#include <gtest/gtest.h>
#include <lua.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/host/lua_host.h"

namespace {

using LuaState = luda::test::LuaHost;

TEST(Embed, HostStateRunsAKernelOnCpu) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> uniform(-10.0, 10.0);
  std::vector<double> x(257), y(257);
  for (auto& v : x) v = uniform(rng);
  for (auto& v : y) v = uniform(rng);

  LuaState lua;
  lua_newtable(lua.L);
  for (std::size_t i = 0; i < x.size(); ++i) {
    lua_pushnumber(lua.L, x[i]);
    lua_rawseti(lua.L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setglobal(lua.L, "xs");
  lua_newtable(lua.L);
  for (std::size_t i = 0; i < y.size(); ++i) {
    lua_pushnumber(lua.L, y[i]);
    lua_rawseti(lua.L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setglobal(lua.L, "ys");

  ASSERT_EQ("", lua.run(R"(
    local cpu = {device = "cpu"}
    local f = luda.vectorize(function(a, b) return a * b - 0.5 * a end)
    out = f(luda.array(xs, "float64", cpu), luda.array(ys, "float64", cpu)):totable()
  )"));
  ASSERT_EQ(LUA_TTABLE, lua_getglobal(lua.L, "out"));
  ASSERT_EQ(static_cast<lua_Integer>(x.size()), luaL_len(lua.L, -1));
  for (std::size_t i = 0; i < x.size(); ++i) {
    lua_rawgeti(lua.L, -1, static_cast<lua_Integer>(i + 1));
    EXPECT_DOUBLE_EQ(x[i] * y[i] - 0.5 * x[i], lua_tonumber(lua.L, -1)) << "element " << i;
    lua_pop(lua.L, 1);
  }
}

}  // namespace

// A C++ application that embeds Lua opens luda in its own lua_State, runs a script that
// defines and launches a kernel on the cpu device, and reads the results back through
// the Lua C API.
#include <gtest/gtest.h>
#include <lua.hpp>

#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/interrupt.h"
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

// A host stops a kernel that never ends from another thread (as its own signal handler
// would): the script gets the error, and the same state runs the next kernel.
TEST(Embed, HostThreadStopsARunningKernel) {
  LuaState lua;
  for (const char* launch : {"spin[{4, 32}](x)", "raw({4}, {32}, {x})"}) {
    ASSERT_EQ("", lua.run(R"(
      x = luda.zeros(4, "int32", {device = "cpu"})
      spin = luda.cuda.jit(function(x) while x[0] == 0 do x[1] = x[1] + 1 end end)
      raw = luda.raw_kernel([[extern "C" __global__ void raw(int* x) { while (*(volatile int*)x == 0) {} }]], "raw")
    )"));
    std::thread stopper([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // compiled and running
      luda::request_interrupt();
    });
    std::string message = lua.run(launch);
    stopper.join();
    EXPECT_NE(message.find("was interrupted; the arrays it was writing may hold partial results"), std::string::npos)
        << message;
    EXPECT_EQ("", lua.run("x[0] = 5 spin[{4, 32}](x) assert(x[0] == 5)"));
  }
}

}  // namespace

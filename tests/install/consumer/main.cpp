// A C++ host of an installed luda: its public headers alone, built by tests/install/
// package.sh with find_package(luda) and with pkg-config. It opens the module in its own
// lua_State, runs a kernel on the device LUDA_DEVICE names, and checks the values.
#include <luda/core.h>
#include <luda/luda.h>
#include <luda/lua.h>

#include <cstdio>
#include <cstring>

static_assert(luda::dtype_of<float>() == luda::DType::Float32);
static_assert(luda::dtype_of<unsigned short>() == luda::DType::UInt16);
static_assert(luda::itemsize(luda::DType::Int64) == 8);

int main() {
  if (!luda::Device::cpu().is_cpu() || luda::Device::cuda(1).is_cpu()) return 1;

  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "luda", luaopen_luda, 1);
  lua_pop(L, 1);
  // x*x + 1 over 0..6 by a vectorized function, against the same formula in plain Lua.
  const char* script = R"(
    local x = luda.arange(7, "float64")
    local f = luda.vectorize(function(v) return v * v + 1 end)
    local y = f(x):totable()
    assert(#y == 7, "7 elements, got " .. #y)
    for i = 1, 7 do
      local want = (i - 1) * (i - 1) + 1
      assert(y[i] == want, string.format("element %d: %s, expected %s", i, y[i], want))
    end
    return tostring(f(x).device)
  )";
  int status = luda::load_chunk(L, script, "=consumer");
  if (status == LUA_OK) status = lua_pcall(L, 0, 1, 0);
  if (status != LUA_OK) {
    std::fprintf(stderr, "consumer: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return 1;
  }
  std::printf("consumer: 7 values checked on %s\n", lua_tostring(L, -1));
  lua_close(L);
  return 0;
}

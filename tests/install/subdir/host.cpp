// Compiled with what luda::luda_static and luda::luda give a host in its own tree: the
// public headers (C++17), Lua's headers for luda/lua.h, and nothing of luda's internals
// (add_subdirectory.sh checks that CUDA's headers are not on the include path either).
#include <luda/core.h>
#include <luda/lua.h>
#include <luda/luda.h>

#if __has_include("runtime/ndarray.h") || __has_include("stdlib/module.h")
#error "a host sees luda's internal headers"
#endif

static_assert(luda::dtype_of<double>() == luda::DType::Float64);

int main() {
  lua_State* L = luaL_newstate();
  luaL_requiref(L, "luda", luaopen_luda, 1);
  lua_close(L);
  return luda::Device::cpu().is_cpu() ? 0 : 1;
}

// luaopen_luda: the module table, with `luda.cuda` for the numba.cuda-style names.
#include "stdlib/module.h"

#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

int open_module(lua_State* L) {
  lua_newtable(L);
  lua_newtable(L);
  lua_setfield(L, -2, "cuda");
  lua_pushstring(L, "0.1.0");
  lua_setfield(L, -2, "version");
  open_scalars(L);  // first: the dtype constructors are what check_dtype recognizes
  open_arrays(L);
  open_array_constructors(L);
  open_devices(L);
  open_kernels(L);
  return 1;
}

}  // namespace
}  // namespace luda::lua

extern "C" int luaopen_luda(lua_State* L) {
  return luda::lua::trampoline<luda::lua::open_module>(L);
}

// luaopen_luda: the module table, with `luda.cuda` for the numba.cuda-style names.
#include "stdlib/module.h"

#include <chrono>

#include "ops/device/copy.h"
#include "stdlib/bindings.h"
#include "stdlib/chunk_texts.h"
#include "stdlib/kind_bindings.h"
#include "stdlib/lua_modules.h"

namespace luda::lua {
namespace {

// luda.clock(): seconds on a monotonic clock, for timing host work (os.clock is CPU time).
int clock(lua_State* L) {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  lua_pushnumber(L, std::chrono::duration<double>(now).count());
  return 1;
}

int open_module(lua_State* L) {
  // Opened by a stock lua5.4's require: the files running now (the script requiring luda)
  // were loaded without keeping their text; read them now, before they can change.
  keep_stack_chunks(L);
  lua_newtable(L);
  lua_newtable(L);
  lua_setfield(L, -2, "cuda");
  lua_pushstring(L, "0.1.0");
  lua_setfield(L, -2, "version");
  lua_pushcfunction(L, clock);
  lua_setfield(L, -2, "clock");
  lua_pushcfunction(L, load_keeping_text);
  lua_setfield(L, -2, "load");
  open_scalars(L);  // first: the dtype constructors are what check_dtype recognizes
  open_arrays(L);
  open_array_constructors(L);
  open_devices(L);
  open_math(L);
  open_kernels(L);
  open_kinds(L);        // luda.vectorize, elementwise, reduction, fuse
  open_random(L);       // luda.random.random, luda.random.seed (on the kinds)
  open_array_math(L);   // after open_arrays: ndarray arithmetic, reductions, luda.exp and friends
  open_linalg(L);       // luda.linalg
  open_routines(L);     // luda.concatenate, luda.eye, x:ravel, ...
  open_indexing(L);     // luda.take, luda.nonzero, luda.newaxis, x:take, ...
  open_link(L);         // luda.cuda.declare_device
  open_cuda_random(L);  // luda.cuda.random
  open_jit(L);
  open_graphs(L);                        // luda.graph
  ops::device::install_device_assign();  // copies within a GPU by a kernel, in a graph's recording too
  open_dist(L);                          // luda.dist
  open_display(L);                       // luda.display
  open_array_files(L);                   // luda.save, luda.load_npy, x:tofile, ...
  open_lua_modules(L);  // last: luda.chunked and the other Lua-written modules read the functions above
  return 1;
}

}  // namespace
}  // namespace luda::lua

extern "C" int luaopen_luda(lua_State* L) { return luda::lua::trampoline<luda::lua::open_module>(L); }

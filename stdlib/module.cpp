// luaopen_luda: the module table, with `luda.cuda` for the numba.cuda-style names.
#include "stdlib/module.h"

#include <chrono>
#include <string>

#include "jit/device_copy.h"
#include "stdlib/bindings.h"
#include "stdlib/chunk_texts.h"
#include "stdlib/kind_bindings.h"
#include "stdlib/lua_text.h"

namespace luda::lua {
namespace {

// luda.clock(): seconds on a monotonic clock, for timing host work (os.clock is CPU time).
int clock(lua_State* L) {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  lua_pushnumber(L, std::chrono::duration<double>(now).count());
  return 1;
}

// luda.chunked, luda.map_blocks, luda.rechunk: stdlib/chunked.lua, run with the module
// table (on top of the stack), the arrays' metatable, a table of its parts by name (ranks,
// reduce, kinds, linalg: stdlib/chunked_<name>.lua, loaded, not run: chunked.lua runs each
// with its helpers) and a table of C functions for these files alone (push_chunked_helpers,
// push_kind_helpers) as its arguments (no array is made while the module opens: that would
// choose the default device). Their texts are kept as chunks' texts, so that messages and
// debug.getinfo see them as the files "luda.chunked" and "luda.chunked_<name>".
void open_chunked(lua_State* L) {
  if (load_chunk(L, detail::kChunkedLua, "=luda.chunked") != LUA_OK)
    fail("luda's own chunked.lua does not load: {}", lua_tostring(L, -1));
  lua_pushvalue(L, -2);
  luaL_getmetatable(L, kArrayType);
  lua_newtable(L);
  for (const auto& [name, text] : detail::kChunkedParts) {
    std::string chunk = "=luda.chunked_" + std::string(name);
    if (load_chunk(L, text, chunk.c_str()) != LUA_OK)
      fail("luda's own chunked_{}.lua does not load: {}", name, lua_tostring(L, -1));
    lua_setfield(L, -2, std::string(name).c_str());
  }
  push_chunked_helpers(L);
  push_kind_helpers(L);
  lua_call(L, 4, 0);
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
  open_kinds(L);       // luda.vectorize, elementwise, reduction, fuse
  open_random(L);      // luda.random.random, luda.random.seed (on the kinds)
  open_array_math(L);  // after open_arrays: ndarray arithmetic, reductions, luda.exp and friends
  open_linalg(L);      // luda.linalg
  open_routines(L);  // luda.concatenate, luda.eye, x:ravel, ...
  open_indexing(L);  // luda.take, luda.nonzero, luda.newaxis, x:take, ...
  open_link(L);  // luda.cuda.declare_device
  open_jit(L);
  open_graphs(L);  // luda.graph
  jit::install_device_assign();  // copies within a GPU by a kernel, in a graph's recording too
  open_dist(L);    // luda.dist
  open_display(L);  // luda.display
  open_chunked(L);  // last: it reads the functions above
  return 1;
}

}  // namespace
}  // namespace luda::lua

extern "C" int luaopen_luda(lua_State* L) {
  return luda::lua::trampoline<luda::lua::open_module>(L);
}

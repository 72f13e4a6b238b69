// libFuzzer target for the runtime surface: each input is a program of luda calls with
// random arguments (fuzz/runtime_driver.lua turns the bytes into Lua statements), run in
// a fresh lua_State with luda open on the cpu device and a private disk cache. A Lua
// error is an expected answer; a crash, a sanitizer report, a hang (-timeout) or an
// "internal error" is a finding. LUDA_FUZZ_PRINT=1 prints each statement before it runs,
// so that a finding reads as a Lua script:
//   LUDA_FUZZ_PRINT=1 build-fuzz/fuzz/runtime_fuzz crash-<sha1>
#include <lua.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz/runtime_driver_text.h"
#include "stdlib/module.h"

namespace {

bool g_print = false;

// found(statement, message): a finding. Prints both and traps, so libFuzzer keeps the input.
int l_found(lua_State* L) {
  std::fprintf(stderr, "runtime_fuzz finding\n  statement: %s\n  message: %s\n", luaL_checkstring(L, 1),
               luaL_checkstring(L, 2));
  std::fflush(stderr);
  __builtin_trap();
}

int l_echo(lua_State* L) {
  std::fprintf(stderr, "%s\n", luaL_checkstring(L, 1));
  return 0;
}

}  // namespace

// Allocations that no memory holds (an array of 2^40 elements) must fail as they do
// without the sanitizer, as a bad_alloc that luda reports, not as a sanitizer abort.
// intercept_tls_get_addr=0: as in cmake/sanitizer_defaults.cpp (the cpu kernels' TLS).
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:intercept_tls_get_addr=0"; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("LUDA_DEVICE", "cpu", 1);
  setenv("LUDA_CPU_THREADS", "2", 0);
  if (!std::getenv("LUDA_CACHE_DIR")) {  // a private cache, shared by this run's inputs
    static char dir[] = "/tmp/luda-runtime-fuzz-XXXXXX";
    if (!mkdtemp(dir)) {
      std::perror("runtime_fuzz: mkdtemp");
      std::abort();
    }
    setenv("LUDA_CACHE_DIR", dir, 1);
  }
  const char* p = std::getenv("LUDA_FUZZ_PRINT");
  g_print = p && *p && std::strcmp(p, "0") != 0;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "luda", luaopen_luda, 1);
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, kRuntimeDriver.data(), kRuntimeDriver.size(), "=runtime_driver.lua") != LUA_OK) {
    std::fprintf(stderr, "runtime_fuzz: %s\n", lua_tostring(L, -1));
    std::abort();
  }
  lua_pushlstring(L, reinterpret_cast<const char*>(data), size);
  lua_pushcfunction(L, l_found);
  if (g_print) lua_pushcfunction(L, l_echo);
  else lua_pushnil(L);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {  // the generator itself failed: a bug in it
    std::fprintf(stderr, "runtime_fuzz: the driver failed: %s\n", lua_tostring(L, -1));
    std::abort();
  }
  lua_close(L);
  return 0;
}

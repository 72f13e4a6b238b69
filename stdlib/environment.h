// dsl::Environment over a Lua state: what a kernel's globals and upvalues are when a
// specialization is made. One per cuda.jit kernel; it keeps every Lua function it hands
// out (the kernel's own, and the device functions it calls) referenced in a registry
// table, so that their handles stay valid for the kernel's life.
#pragma once

#include <lua.hpp>

#include <string>

#include "dsl/compile.h"

namespace luda::lua {

class LuaEnvironment final : public dsl::Environment {
 public:
  explicit LuaEnvironment(lua_State* L);  // creates its registry table
  // Drops the registry table. Call from __gc (with the state); the destructor cannot.
  void release(lua_State* L);

  // The state of the call in progress (a coroutine's thread, say); set before each call
  // into the kernel, since lookups happen during specialization.
  void bind(lua_State* L) { L_ = L; }

  // Keeps the Lua function at idx and returns its handle.
  dsl::FunctionHandle add_function(int idx);

  // Its upvalue `name`, else the global `name` read raw from its _ENV.
  dsl::ExternalValue lookup(dsl::FunctionHandle fn, const std::string& name) override;

  // The value at idx, converted as lookup does (tests, and tables' fields).
  dsl::ExternalValue convert(int idx, int depth = 0);

 private:
  lua_State* L_;
  int table_ref_ = LUA_NOREF;  // registry ref of {[lightuserdata(fn)] = fn}
};

// Records the builtin namespaces (math, luda, luda.cuda, luda.math) so that values are
// recognized by identity; called once with the luda module table on top of the stack.
void register_namespaces(lua_State* L);

}  // namespace luda::lua

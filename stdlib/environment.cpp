#include "stdlib/environment.h"

#include <cstring>

#include "runtime/error.h"
#include "stdlib/bindings.h"
#include "stdlib/function_source.h"
#include "stdlib/link_bindings.h"

namespace luda::lua {
namespace {

// (t, k) -> t[k] with metamethods; called only through lua_pcall.
int get_field(lua_State* L) {
  lua_gettable(L, 1);
  return 1;
}

// registry["luda.namespaces"]: [table] = "math" | "luda" | "cuda" | "luda.math".
constexpr const char* kNamespaces = "luda.namespaces";

// Constant tables are small namespaces (cfg.TILE); past these a table is refused, which
// also ends a cycle.
constexpr int kMaxDepth = 8;
constexpr int kMaxEntries = 4096;

dsl::ExternalValue other(std::string describe, dsl::ExternalValue::Kind kind = dsl::ExternalValue::Kind::Other) {
  dsl::ExternalValue v;
  v.kind = kind;
  v.describe = std::move(describe);
  return v;
}

// The index of the upvalue named `name` of the function at idx, or 0.
int upvalue_index(lua_State* L, int idx, const char* name) {
  for (int n = 1;; ++n) {
    const char* un = lua_getupvalue(L, idx, n);
    if (!un) return 0;
    lua_pop(L, 1);
    if (std::strcmp(un, name) == 0) return n;
  }
}

}  // namespace

void register_namespaces(lua_State* L) {
  int module = lua_gettop(L);
  lua_newtable(L);
  auto add = [&](const char* name) {  // the table on top -> name
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushstring(L, name);
      lua_rawset(L, -3);
    } else {
      lua_pop(L, 1);
    }
  };
  lua_pushvalue(L, module);
  add("luda");
  lua_pushstring(L, "cuda");
  lua_rawget(L, module);
  add("cuda");
  lua_pushstring(L, "math");
  lua_rawget(L, module);
  add("luda.math");
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushstring(L, "math");
  lua_rawget(L, -2);
  lua_remove(L, -2);
  add("math");
  lua_setfield(L, LUA_REGISTRYINDEX, kNamespaces);
}

LuaEnvironment::LuaEnvironment(lua_State* L) : L_(L) {
  lua_newtable(L);
  table_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
}

void LuaEnvironment::release(lua_State* L) {
  luaL_unref(L, LUA_REGISTRYINDEX, table_ref_);
  table_ref_ = LUA_NOREF;
}

dsl::FunctionHandle LuaEnvironment::add_function(int idx) {
  idx = lua_absindex(L_, idx);
  const void* handle = lua_topointer(L_, idx);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, table_ref_);
  lua_pushlightuserdata(L_, const_cast<void*>(handle));
  lua_pushvalue(L_, idx);
  lua_rawset(L_, -3);
  lua_pop(L_, 1);
  return handle;
}

dsl::ExternalValue LuaEnvironment::lookup(dsl::FunctionHandle fn, const std::string& name) {
  lua_State* L = L_;
  if (!lua_checkstack(L, 8)) throw Error("not enough memory (Lua stack)");
  int top = lua_gettop(L);
  // No handle: a kernel given as source text, whose names are all globals.
  if (fn) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, table_ref_);
    lua_pushlightuserdata(L, const_cast<void*>(fn));
    lua_rawget(L, -2);
    LUDA_INTERNAL_CHECK(lua_type(L, -1) == LUA_TFUNCTION);
  } else {
    lua_pushnil(L);
  }
  int f = lua_gettop(L);
  dsl::ExternalValue out;
  if (int n = fn ? upvalue_index(L, f, name.c_str()) : 0; n > 0) {
    lua_getupvalue(L, f, n);
    out = convert(-1);
  } else {
    // A global: read from the function's _ENV as Lua reads it, __index included (busted
    // and sandboxes give functions such environments), or from the globals table when
    // the function reads no global at all. Metamethods run under lua_pcall, so an error
    // in one cannot longjmp over this frame.
    if (int e = fn ? upvalue_index(L, f, "_ENV") : 0; e > 0) lua_getupvalue(L, f, e);
    else lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    int env = lua_gettop(L);
    lua_pushcfunction(L, get_field);
    lua_pushvalue(L, env);
    lua_pushlstring(L, name.data(), name.size());
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
      std::string why = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "a non-string error";
      lua_settop(L, top);
      fail("reading the global '{}' for a kernel failed: {}", name, why);
    }
    out = convert(-1);
  }
  lua_settop(L, top);
  // A kernel given as source text has no enclosing chunk to import the namespaces: the
  // builtin ones stand for themselves, as for the C++ API.
  if (!fn && out.kind == dsl::ExternalValue::Kind::Missing && (name == "cuda" || name == "luda" || name == "math")) {
    out.kind = dsl::ExternalValue::Kind::Namespace;
    out.name_space = name;
  }
  return out;
}

dsl::ExternalValue LuaEnvironment::convert(int idx, int depth) {
  using Kind = dsl::ExternalValue::Kind;
  lua_State* L = L_;
  idx = lua_absindex(L, idx);
  dsl::ExternalValue v;
  switch (lua_type(L, idx)) {
    case LUA_TNONE:
    case LUA_TNIL: return v;  // Missing
    case LUA_TBOOLEAN:
      v.kind = Kind::Boolean;
      v.boolean = lua_toboolean(L, idx);
      return v;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        v.kind = Kind::Integer;
        v.integer = lua_tointeger(L, idx);
        v.number = static_cast<double>(v.integer);
      } else {
        v.kind = Kind::Float;
        v.number = lua_tonumber(L, idx);
      }
      return v;
    case LUA_TSTRING: return other("a string");
    case LUA_TTHREAD: return other("a coroutine");
    case LUA_TLIGHTUSERDATA: return other("a light userdata");
    case LUA_TUSERDATA:
      if (Scalar* s = test_scalar(L, idx)) {
        v.kind = Kind::Typed;
        v.scalar = static_cast<dsl::Scalar>(s->dtype);  // ORDER SCALAR = ORDER DTYPE
        v.number = s->to_double();
        v.imag = s->im;    // a complex's imaginary part
        v.weak = s->weak;  // luda.complex(re, im): weak, as Python's complex
        v.integer = s->to_int64();
        v.boolean = s->dtype == DType::Bool && s->v.b;
        return v;
      }
      if (test_array(L, idx)) return other("an ndarray", Kind::Array);
      if (auto declared = declared_at(L, idx)) {
        v.kind = Kind::Declared;
        v.declared = std::move(declared);
        return v;
      }
      return other("a " + type_name(L, idx));
    case LUA_TFUNCTION:
      if (lua_iscfunction(L, idx)) return other("a C function");
      v.kind = Kind::Function;
      try {
        v.function = function_source(L, idx);
      } catch (const Error& e) {  // reported where the kernel uses it, with this reason
        return other(fmt::format("a Lua function whose source luda cannot read ({})", e.what()));
      }
      v.handle = add_function(idx);
      return v;
    case LUA_TTABLE: break;
    default: return other(type_name(L, idx));
  }
  // A builtin namespace, by identity.
  if (!lua_checkstack(L, 6)) throw Error("not enough memory (Lua stack)");
  lua_getfield(L, LUA_REGISTRYINDEX, kNamespaces);
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) == LUA_TSTRING) {
      v.kind = Kind::Namespace;
      v.name_space = lua_tostring(L, -1);
      lua_pop(L, 2);
      return v;
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (depth >= kMaxDepth) return other(fmt::format("a table nested more than {} deep", kMaxDepth));
  // A constant namespace: its string and integer keys, each value converted.
  v.kind = Kind::Table;
  int entries = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (++entries > kMaxEntries) {
      lua_pop(L, 2);
      return other(fmt::format("a table of more than {} entries", kMaxEntries));
    }
    std::string key;
    if (lua_type(L, -2) == LUA_TSTRING) {
      key = lua_tostring(L, -2);  // a string key is never converted in place
    } else if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2)) {
      key = std::to_string(lua_tointeger(L, -2));
    } else {
      lua_pop(L, 1);
      continue;  // other keys cannot be reached by cfg.NAME or cfg[i]
    }
    v.fields.emplace(std::move(key), convert(-1, depth + 1));
    lua_pop(L, 1);
  }
  return v;
}

}  // namespace luda::lua

#include "stdlib/lua_support.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <exception>

#include "dsl/diagnostics.h"
#include "jit/call/call_args.h"
#include "runtime/driver.h"
#include "runtime/format.h"

namespace luda::lua {
namespace {

// Where a caught exception's text waits while the catch block unwinds: static storage,
// so that nothing on the C++ stack is alive when the Lua error is raised.
thread_local std::string t_error_message;
thread_local RaisedError t_raised;

// "file:line: " of the Lua code that called into luda, as luaL_where(L, 1) writes it,
// from the first level that runs Lua code: when a C function made the call (ipairs
// indexing an array, tostring or print calling __tostring, pcall), the Lua line that
// called that C function; "" when there is none.
void push_where(lua_State* L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  }
  lua_pushliteral(L, "");
}

void push_error(lua_State* L, bool located) {
  // The calling Lua code's "file:line: " (push_where), unless the message is a
  // dsl::SourceError already placed in that same file ("f.lua:9:10: ..."). One placed in a
  // string (a parameter string, an elementwise body) keeps the caller's place in front.
  push_where(L);
  std::size_t n = 0;
  const char* where = lua_tolstring(L, -1, &n);
  std::string_view file(where, n);
  if (std::size_t colon = file.rfind(':', n >= 3 ? n - 3 : 0); colon != std::string_view::npos)
    file = file.substr(0, colon + 1);  // "f.lua:"
  bool same_file = located && !file.empty() && std::string_view(t_error_message).starts_with(file);
  lua_pushlstring(L, t_error_message.data(), t_error_message.size());
  if (same_file) lua_remove(L, -2);
  else lua_concat(L, 2);
}

}  // namespace

const RaisedError& last_raised_error() { return t_raised; }

void move_options_to(lua_State* L, int first_optional, int options_at) {
  const int top = lua_gettop(L);
  if (top < first_optional || top >= options_at || lua_type(L, top) != LUA_TTABLE) return;
  if (lua_getmetatable(L, top)) {
    lua_pop(L, 1);
    return;
  }
  for (int k = top; k < options_at; ++k) {
    lua_pushnil(L);
    lua_insert(L, top);
  }
}

int defer_to_argument(lua_State* L) {
  const int top = lua_gettop(L);
  for (int i = 1; i <= top; ++i) {
    if (lua_type(L, i) != LUA_TTABLE || !lua_getmetatable(L, i)) continue;
    lua_pushliteral(L, "__luda_function");
    const int handler = lua_rawget(L, -2);
    if (handler != LUA_TFUNCTION) {
      lua_pop(L, 2);
      continue;
    }
    lua_remove(L, -2);  // the metatable
    lua_insert(L, 1);   // handler, args...
    lua_Debug ar;
    if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "f", &ar)) {
      lua_insert(L, 2);  // handler, f, args...
    } else {
      lua_pushnil(L);
      lua_insert(L, 2);
    }
    lua_call(L, top + 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  return -1;
}

int call_protected(lua_State* L, Impl impl) noexcept {
  bool located = false;
  try {
    return impl(L);
  } catch (const dsl::SourceError& e) {
    try {
      t_error_message.assign(e.what());
    } catch (...) {
      t_error_message.clear();
    }
    located = true;
    t_raised.exception = std::current_exception();
  } catch (const std::bad_alloc&) {
    t_error_message.assign("not enough memory");
    t_raised.exception = std::current_exception();
  } catch (const std::exception& e) {
    // luda::Error and InternalError carry their full message; anything else is a bug in
    // luda, reported rather than crashing the host.
    try {
      t_error_message.assign(e.what());
    } catch (...) {
      t_error_message.clear();
    }
    t_raised.exception = std::current_exception();
  } catch (...) {
    t_error_message.assign("internal error: unknown C++ exception");
    t_raised.exception = std::current_exception();
  }
  push_error(L, located);
  std::size_t n = 0;
  const char* message = lua_tolstring(L, -1, &n);
  try {
    t_raised.message.assign(message, n);
  } catch (...) {
    t_raised = {};
  }
  return kRethrow;
}

namespace {

// registry["luda.types"]: [lightuserdata(type name)] = true for every type new_metatable
// made: which userdata tags are luda's, so that a tag may be read as a name.
constexpr const char* kTypes = "luda.types";

// The key of the type tag in luda's metatables (metatables are never indexed by integers
// otherwise). A metatable says what it was made for, for messages only: what a userdata
// is, its own tag says (Box::tag).
constexpr lua_Integer kTypeTagKey = 0x6c756461;  // "luda"

// The type name that luda's metatable of the value at idx carries, else nullptr (no
// metatable, or not one of luda's).
const char* metatable_type(lua_State* L, int idx) {
  if (!lua_getmetatable(L, idx)) return nullptr;
  lua_rawgeti(L, -1, kTypeTagKey);
  const char* type = lua_islightuserdata(L, -1) ? static_cast<const char*>(lua_touserdata(L, -1)) : nullptr;
  lua_pop(L, 2);
  return type;
}

// The type name of the luda userdata at idx, by its tag (whatever its metatable), else
// nullptr.
const char* luda_type(lua_State* L, int idx) {
  const void* tag = userdata_tag(L, idx);
  if (tag == nullptr || !lua_checkstack(L, 2)) return nullptr;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kTypes) != LUA_TTABLE) {
    lua_pop(L, 1);
    return nullptr;
  }
  lua_pushlightuserdata(L, const_cast<void*>(tag));
  bool known = lua_rawget(L, -2) != LUA_TNIL;
  lua_pop(L, 2);
  return known ? static_cast<const char*>(tag) : nullptr;
}

}  // namespace

std::string type_name(lua_State* L, int idx) {
  // A luda object is what its tag says, whatever its metatable; a value given one of
  // luda's metatables is not what that metatable's name says.
  if (const char* own = luda_type(L, idx)) return own;
  if (metatable_type(L, idx) != nullptr) return lua_type(L, idx) == LUA_TUSERDATA ? "userdata" : luaL_typename(L, idx);
  if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING) {  // raw access to a metatable
    std::string name = lua_tostring(L, -1);
    lua_pop(L, 1);
    return name;
  }
  if (lua_type(L, idx) == LUA_TNUMBER) return "number";
  if (lua_type(L, idx) == LUA_TLIGHTUSERDATA) return "light userdata";
  return luaL_typename(L, idx);
}

std::string describe(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) return std::to_string(lua_tointeger(L, idx));
      return jit::lua_float(lua_tonumber(L, idx));
    case LUA_TBOOLEAN: return lua_toboolean(L, idx) ? "true" : "false";
    case LUA_TSTRING: {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      return fmt::format("'{}'", printable(std::string_view(s, n)));
    }
    default: return type_name(L, idx);
  }
}

[[noreturn]] void arg_error(lua_State* L, int arg, std::string_view fname, std::string_view msg) {
  lua_Debug ar;
  if (lua_getstack(L, 0, &ar)) {
    lua_getinfo(L, "n", &ar);
    if (ar.namewhat && std::strcmp(ar.namewhat, "method") == 0) {
      --arg;  // x:f(a): `a` is argument #1, as Lua counts
      if (arg == 0) fail("calling '{}' on bad self ({})", fname, msg);
    }
  }
  fail("bad argument #{} to '{}' ({})", arg, fname, msg);
}

[[noreturn]] void type_error(lua_State* L, int arg, std::string_view fname, std::string_view expected) {
  std::string got = lua_isnone(L, arg) ? "no value" : type_name(L, arg);
  arg_error(L, arg, fname, fmt::format("{} expected, got {}", expected, got));
}

bool is_none_or_nil(lua_State* L, int idx) { return lua_type(L, idx) <= LUA_TNIL; }

std::int64_t to_integer(lua_State* L, int idx, std::string_view fname, std::string_view what) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, idx, &isnum);
    if (isnum) return v;
    fail("{}: {} must be an integer, got {}", fname, what, describe(L, idx));
  }
  fail("{}: {} must be an integer, got {}", fname, what, describe(L, idx));
}

int axis_arg(lua_State* L, int idx, int count, std::string_view who, std::string_view of) {
  const std::int64_t a = check_integer(L, idx, who);
  if (a == 0 || a > count || a < -count)
    fail("{}: axis {} is out of range{} (axes are 1 to {}, or -1 for the last)", who, a, of, count);
  return static_cast<int>(a > 0 ? a - 1 : count + a);
}

std::optional<std::vector<int>> axes_arg(lua_State* L, int idx, int count, std::string_view who, std::string_view of) {
  if (lua_isnoneornil(L, idx)) return std::nullopt;
  if (!lua_istable(L, idx)) return std::vector<int>{axis_arg(L, idx, count, who, of)};
  idx = lua_absindex(L, idx);
  std::vector<int> axes;
  for (lua_Integer i = 1, n = static_cast<lua_Integer>(lua_rawlen(L, idx)); i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    axes.push_back(axis_arg(L, lua_gettop(L), count, who, of));
    lua_pop(L, 1);
  }
  return axes;
}

std::int64_t check_integer(lua_State* L, int arg, std::string_view fname) {
  int isnum = 0;
  lua_Integer v = lua_type(L, arg) == LUA_TNUMBER ? lua_tointegerx(L, arg, &isnum) : 0;
  if (isnum) return v;
  if (lua_type(L, arg) == LUA_TNUMBER) arg_error(L, arg, fname, "number has no integer representation");
  type_error(L, arg, fname, "integer");
}

std::optional<std::int64_t> opt_integer(lua_State* L, int arg, std::string_view fname) {
  if (is_none_or_nil(L, arg)) return std::nullopt;
  return check_integer(L, arg, fname);
}

double check_number(lua_State* L, int arg, std::string_view fname) {
  if (lua_type(L, arg) != LUA_TNUMBER) type_error(L, arg, fname, "number");
  return lua_tonumber(L, arg);
}

std::string_view check_string(lua_State* L, int arg, std::string_view fname) {
  if (lua_type(L, arg) != LUA_TSTRING) type_error(L, arg, fname, "string");
  std::size_t n = 0;
  const char* s = lua_tolstring(L, arg, &n);
  return {s, n};
}

void check_table(lua_State* L, int arg, std::string_view fname) {
  if (lua_type(L, arg) != LUA_TTABLE) type_error(L, arg, fname, "table");
}

void check_function(lua_State* L, int arg, std::string_view fname) {
  if (lua_type(L, arg) != LUA_TFUNCTION) type_error(L, arg, fname, "function");
}

void check_function_or_text(lua_State* L, int arg, std::string_view fname) {
  if (lua_type(L, arg) != LUA_TFUNCTION && lua_type(L, arg) != LUA_TSTRING)
    type_error(L, arg, fname, "function or source string");
}

bool dtype_of_constructor(lua_State* L, int idx, DType* out) {
  if (lua_type(L, idx) != LUA_TFUNCTION) return false;
  idx = lua_absindex(L, idx);
  // registry["luda.dtypes"][fn] = dtype number, filled by the scalar bindings.
  if (lua_getfield(L, LUA_REGISTRYINDEX, "luda.dtypes") != LUA_TTABLE) {
    lua_pop(L, 1);
    return false;
  }
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  // (debug.getregistry() reaches this table: a value that is not a dtype is not taken)
  bool found = lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0 && lua_tointeger(L, -1) < kNumDTypes;
  if (found) *out = static_cast<DType>(lua_tointeger(L, -1));
  lua_pop(L, 2);
  return found;
}

std::optional<DType> opt_dtype(lua_State* L, int arg, std::string_view fname) {
  if (is_none_or_nil(L, arg)) return std::nullopt;
  if (lua_type(L, arg) == LUA_TSTRING) {
    std::string_view name = string_at(L, arg);
    if (auto t = parse_dtype(name)) return *t;
    arg_error(L, arg, fname, fmt::format("unknown dtype '{}'; expected one of {}", printable(name), dtype_names()));
  }
  DType t;
  if (dtype_of_constructor(L, arg, &t)) return t;
  type_error(L, arg, fname, "dtype");
}

DType check_dtype(lua_State* L, int arg, std::string_view fname) {
  if (auto t = opt_dtype(L, arg, fname)) return *t;
  type_error(L, arg, fname, "dtype");
}

std::string unknown_option(lua_State* L, int arg, std::initializer_list<std::string_view> allowed) {
  arg = lua_absindex(L, arg);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1);  // the value; the key stays for lua_next
    bool known = false;
    if (lua_type(L, -1) == LUA_TSTRING) {
      std::string_view key = string_at(L, -1);
      for (auto a : allowed) known = known || a == key;
    }
    if (!known) {
      std::string key = describe(L, -1);
      lua_pop(L, 1);
      return key;
    }
  }
  return {};
}

std::string option_list(std::initializer_list<std::string_view> allowed) {
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  return list;
}

bool check_options(lua_State* L, int arg, std::string_view fname, std::initializer_list<std::string_view> allowed) {
  if (is_none_or_nil(L, arg)) return false;
  if (lua_type(L, arg) != LUA_TTABLE) type_error(L, arg, fname, "options table");
  std::string key = unknown_option(L, arg, allowed);
  if (!key.empty()) arg_error(L, arg, fname, fmt::format("unknown option {}; expected {}", key, option_list(allowed)));
  return true;
}

int push_option(lua_State* L, int arg, const char* key) {
  arg = lua_absindex(L, arg);
  if (lua_type(L, arg) != LUA_TTABLE) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  lua_pushstring(L, key);
  return lua_rawget(L, arg);
}

int arch_option(lua_State* L, int arg, std::string_view fname) {
  int type = push_option(L, arg, "arch");
  int arch = 0;
  if (type == LUA_TSTRING) {
    std::string_view text = string_at(L, -1);
    std::string_view digits = text.starts_with("sm_")        ? text.substr(3)
                              : text.starts_with("compute_") ? text.substr(8)
                                                             : std::string_view{};
    for (char c : digits) arch = (c >= '0' && c <= '9' && arch < 10000) ? arch * 10 + (c - '0') : -1;
    if (digits.empty() || arch <= 0) fail("{}: option 'arch' must look like \"sm_90\", got '{}'", fname, text);
  } else if (type == LUA_TNUMBER) {
    arch = static_cast<int>(to_integer(L, -1, fname, "option 'arch'"));
    if (arch <= 0) fail("{}: option 'arch' must look like \"sm_90\", got {}", fname, arch);
  } else if (type != LUA_TNIL) {
    fail("{}: option 'arch' must look like \"sm_90\", got {}", fname, describe(L, -1));
  }
  lua_pop(L, 1);
  return arch;
}

Device to_device_spec(lua_State* L, int idx, std::string_view fname, std::string_view what) {
  Device d;
  if (Device* obj = test_object<Device>(L, idx, kDeviceType)) {
    d = *obj;
  } else if (lua_type(L, idx) == LUA_TSTRING) {
    std::string_view text = string_at(L, idx);
    if (auto t = text; t != "cpu" && t != "cuda" && !t.starts_with("cuda:") && !t.starts_with("cpu:"))
      fail("{}: {} must be \"cpu\", \"cpu:N\", \"cuda\", \"cuda:N\", a CUDA ordinal or a device object, got '{}'",
           fname, what, text);
    d = Device::parse(text);
  } else if (lua_type(L, idx) == LUA_TNUMBER) {
    std::int64_t i = to_integer(L, idx, fname, what);
    if (i < 0 || i > 1 << 20) fail("{}: {} {} is not a CUDA ordinal (0, 1, ...)", fname, what, i);
    d = Device::cuda(static_cast<int>(i));
  } else {
    fail("{}: {} must be \"cpu\", \"cpu:N\", \"cuda\", \"cuda:N\", a CUDA ordinal or a device object, got {}", fname,
         what, type_name(L, idx));
  }
  require_device(d);
  return d;
}

Device device_option(lua_State* L, int arg, std::string_view fname) {
  push_option(L, arg, "device");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return current_device();
  }
  Device d = to_device_spec(L, -1, fname, "option 'device'");
  lua_pop(L, 1);
  return d;
}

void replaced_upvalue() {
  fail("a luda function's upvalue was replaced through the debug library, so it cannot run: put back the value "
       "debug.getupvalue gives");
}

std::int64_t upvalue_integer(lua_State* L, int n, std::int64_t lo, std::int64_t hi) {
  int at = lua_upvalueindex(n);
  if (!lua_isinteger(L, at)) replaced_upvalue();
  std::int64_t v = lua_tointeger(L, at);
  if (v < lo || v > hi) replaced_upvalue();
  return v;
}

std::string_view upvalue_string(lua_State* L, int n) {
  int at = lua_upvalueindex(n);
  if (lua_type(L, at) != LUA_TSTRING) replaced_upvalue();
  std::size_t len = 0;
  const char* s = lua_tolstring(L, at, &len);
  return {s, len};
}

void check_upvalue_table(lua_State* L, int n) {
  if (lua_type(L, lua_upvalueindex(n)) != LUA_TTABLE) replaced_upvalue();
}

bool push_method(lua_State* L, int key) {
  check_upvalue_table(L, 1);
  lua_pushvalue(L, key);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return true;
  lua_pop(L, 1);
  return false;
}

void new_metatable(lua_State* L, const char* tname, const luaL_Reg* funcs, const luaL_Reg* methods) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kTypes) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kTypes);
  }
  lua_pushlightuserdata(L, const_cast<char*>(tname));
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  luaL_newmetatable(L, tname);  // sets __name
  lua_pushlightuserdata(L, const_cast<char*>(tname));
  lua_rawseti(L, -2, kTypeTagKey);
  if (funcs) luaL_setfuncs(L, funcs, 0);
  if (methods) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
  }
}

void new_metatable_with_index(lua_State* L, const char* tname, const luaL_Reg* funcs, const luaL_Reg* methods,
                              lua_CFunction index) {
  new_metatable(L, tname, funcs, nullptr);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_pushcclosure(L, index, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

void push_int_sequence(lua_State* L, const std::int64_t* values, std::size_t n) {
  lua_createtable(L, static_cast<int>(n), 0);
  for (std::size_t i = 0; i < n; ++i) {
    lua_pushinteger(L, values[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

std::string Subject::str() const {
  if (name.empty()) return std::string(kind);
  return fmt::format("{} '{}'", kind, name);
}

bool read_launch_dim_fast(lua_State* L, int idx, Dim3* out) {
  idx = lua_absindex(L, idx);
  std::int64_t v[3] = {1, 1, 1};
  int n = 0;
  auto positive = [&](int at, std::int64_t* x) {
    int isnum = 0;
    lua_Integer i = lua_tointegerx(L, at, &isnum);
    *x = i;
    return isnum && i >= 1 && lua_type(L, at) == LUA_TNUMBER;
  };
  int type = lua_type(L, idx);
  if (type == LUA_TNUMBER) {
    if (!positive(idx, &v[0])) return false;
    n = 1;
  } else if (type == LUA_TTABLE) {
    n = static_cast<int>(lua_rawlen(L, idx));
    if (n < 1 || n > 3) return false;
    for (int i = 0; i < n; ++i) {
      lua_rawgeti(L, idx, i + 1);
      bool ok = positive(-1, &v[i]);
      lua_pop(L, 1);
      if (!ok) return false;
    }
  } else {
    return false;
  }
  out->x = v[0];
  out->y = v[1];
  out->z = v[2];
  out->ndim = n;
  return true;
}

Dim3 read_launch_dim(lua_State* L, int idx, const Subject& subject, std::string_view what, std::string_view hint) {
  idx = lua_absindex(L, idx);
  Dim3 d;
  if (read_launch_dim_fast(L, idx, &d)) return d;
  // Something is wrong: find it and say so (the only place that formats).
  std::string who = subject.str();
  std::int64_t v[3] = {1, 1, 1};
  int n = 0;
  auto integer = [&](int at, std::string_view label) {
    int isnum = 0;
    lua_Integer x = lua_tointegerx(L, at, &isnum);
    if (!isnum || lua_type(L, at) != LUA_TNUMBER)
      fail("{}: {} must be an integer, got {}", who, label, describe(L, at));
    return static_cast<std::int64_t>(x);
  };
  if (lua_type(L, idx) == LUA_TNUMBER) {
    v[0] = integer(idx, what);
    n = 1;
  } else if (lua_type(L, idx) == LUA_TTABLE && lua_rawlen(L, idx) >= 1 && lua_rawlen(L, idx) <= 3) {
    n = static_cast<int>(lua_rawlen(L, idx));
    for (int i = 0; i < n; ++i) {
      lua_rawgeti(L, idx, i + 1);
      v[i] = integer(lua_gettop(L), fmt::format("{}[{}]", what, i + 1));
      lua_pop(L, 1);
    }
  } else {
    std::string got = lua_type(L, idx) == LUA_TTABLE ? fmt::format("a table of {}", lua_rawlen(L, idx))
                      : lua_isnone(L, idx)           ? std::string("no value")
                                                     : "a " + type_name(L, idx);
    fail("{}: {} must be a number or a table of 1 to 3 numbers, got {} ({})", who, what, got, hint);
  }
  static constexpr char kAxis[3] = {'x', 'y', 'z'};
  for (int i = 0; i < n; ++i)
    if (v[i] < 1)
      fail("{}: {} dimension {} is {}: each grid and block dimension must be at least 1", who, what, kAxis[i], v[i]);
  d.x = v[0];
  d.y = v[1];
  d.z = v[2];
  d.ndim = n;
  return d;
}

Dim3 read_launch_dim(lua_State* L, int idx, std::string_view who, std::string_view what, std::string_view hint) {
  return read_launch_dim(L, idx, Subject{who, {}}, what, hint);
}

CooperativeQuery read_cooperative_query(lua_State* L) {
  constexpr std::string_view fname = "max_cooperative_grid_blocks";
  CooperativeQuery q;
  q.block = read_launch_dim(L, 2, fname, "the block", "the block of the launch");
  if (!lua_isnoneornil(L, 3)) {
    std::int64_t shared = to_integer(L, 3, fname, "the dynamic shared memory in bytes");
    if (shared < 0 || shared > UINT_MAX)
      fail("{}: the dynamic shared memory must be from 0 to {} bytes, got {}", fname, UINT_MAX, shared);
    q.shared = static_cast<unsigned>(shared);
  }
  return q;
}

bool to_kernel_arg(lua_State* L, int idx, jit::KernelArg* out) {
  using Kind = jit::KernelArg::Kind;
  // Every field written in place: building a KernelArg and copying it costs a
  // store-forwarding stall per argument, which showed in profiles of the launch path.
  auto set = [out](Kind kind) {
    out->kind = kind;
    out->array = nullptr;
    out->typed = Scalar{};
    out->i = 0;
    out->f = 0;
    out->b = false;
  };
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        set(Kind::Int);
        out->i = lua_tointeger(L, idx);
      } else {
        set(Kind::Float);
        out->f = lua_tonumber(L, idx);
      }
      return true;
    case LUA_TBOOLEAN:
      set(Kind::Bool);
      out->b = lua_toboolean(L, idx);
      return true;
    case LUA_TUSERDATA: {
      // One tag read decides between the two types (test_object would read twice).
      const void* type = userdata_tag(L, idx);
      if (type == kArrayType) {
        const NDArray& a = object_at<NDArray>(L, idx, kArrayType);
        set(Kind::Array);
        out->array = &a;
        return true;
      }
      if (type == kScalarType) {
        Scalar s = object_at<Scalar>(L, idx, kScalarType);
        set(Kind::Typed);
        out->typed = s;
        return true;
      }
      return false;
    }
    default: return false;
  }
}

}  // namespace luda::lua

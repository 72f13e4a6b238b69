// The Lua bridge of the public API (luda/lua.h): public arrays and values on a lua_State
// where luda is open.
#include "luda/lua.h"

#include "stdlib/bindings.h"

namespace luda {
namespace {

// The metatable of luda's type `tname` is in the registry once luda is open in L.
void require_open(lua_State* L, const char* tname) {
  bool open = lua_getfield(L, LUA_REGISTRYINDEX, tname) == LUA_TTABLE;
  lua_pop(L, 1);
  if (!open)
    fail("luda is not open in this lua_State: open it first with luaL_requiref(L, \"luda\", luaopen_luda, 1) "
         "(or use a luda::Engine)");
}

}  // namespace

void push_array(lua_State* L, const Array& a) {
  if (!a.valid()) fail("push_array: the array is empty (a default-constructed luda::Array); make or wrap one first");
  require_open(L, lua::kArrayType);
  lua::push_array(L, a.ndarray());
}

bool is_array(lua_State* L, int index) { return lua::test_array(L, index) != nullptr; }

Array to_array(lua_State* L, int index) {
  if (NDArray* a = lua::test_array(L, index)) return Array(*a);
  fail("expected an ndarray at stack index {}, got {}", index, lua::describe(L, index));
}

void push_value(lua_State* L, const Value& v) {
  switch (v.type()) {
    case Value::Type::Nil: lua_pushnil(L); break;
    case Value::Type::Boolean: lua_pushboolean(L, v.as_bool()); break;
    case Value::Type::Integer: lua_pushinteger(L, v.as_integer()); break;
    case Value::Type::Number: lua_pushnumber(L, v.as_number()); break;
    case Value::Type::String: lua_pushlstring(L, v.as_string().data(), v.as_string().size()); break;
    case Value::Type::Array: push_array(L, v.as_array()); break;
    case Value::Type::Stream:
      if (!v.as_stream()) fail("push_value: the stream is empty (a default-constructed luda::Stream)");
      require_open(L, lua::kStreamType);
      lua::push_object<Stream>(L, lua::kStreamType, v.as_stream());
      break;
    case Value::Type::Other:
      fail("push_value: a value of type {} read from Lua cannot be pushed back; keep it in Lua", v.type_name());
  }
}

Value to_value(lua_State* L, int index) {
  switch (lua_type(L, index)) {
    case LUA_TNONE:
    case LUA_TNIL: return {};
    case LUA_TBOOLEAN: return Value(lua_toboolean(L, index) != 0);
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) return Value(static_cast<long long>(lua_tointeger(L, index)));
      return Value(static_cast<double>(lua_tonumber(L, index)));
    case LUA_TSTRING: return Value(std::string(lua::string_at(L, index)));
    default:
      if (NDArray* a = lua::test_array(L, index)) return Value(Array(*a));
      if (Stream* s = lua::test_stream(L, index)) return Value(*s);
      return Value::other(lua::type_name(L, index));
  }
}

}  // namespace luda

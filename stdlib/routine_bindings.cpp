// NumPy's array routines (ops/routines.h) for Lua, axes 1-based as luda counts them:
//   luda.concatenate({a, b, ...} [, axis]), luda.stack({...} [, axis]), luda.hstack({...}),
//   luda.vstack({...}), luda.squeeze(x [, axis]), luda.expand_dims(x, axis),
//   luda.flip(x [, axis]), luda.eye(n [, m [, k]] [, dtype] [, {device=}]),
//   luda.identity(n [, dtype] [, {device=}]), luda.diag(v [, k]), luda.tril(x [, k]),
//   luda.triu(x [, k]); x:squeeze, x:flatten() and x:ravel().
#include <optional>
#include <vector>

#include "ops/routines.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

// A 1-based axis among `count` positions (negative from the end) as a 0-based one.
int axis_of(lua_State* L, int idx, int count, const char* who) {
  const std::int64_t a = check_integer(L, idx, who);
  if (a == 0 || a > count || a < -count)
    fail("{}: axis {} is out of range (axes are 1 to {}, or -1 for the last)", who, a, count);
  return static_cast<int>(a > 0 ? a - 1 : count + a);
}

// An axis argument: one axis or a sequence of them, or none.
std::optional<std::vector<int>> axes_of(lua_State* L, int idx, int ndim, const char* who) {
  if (lua_isnoneornil(L, idx)) return std::nullopt;
  std::vector<int> axes;
  if (lua_istable(L, idx)) {
    for (lua_Integer i = 1, n = static_cast<lua_Integer>(lua_rawlen(L, idx)); i <= n; ++i) {
      lua_rawgeti(L, idx, i);
      axes.push_back(axis_of(L, lua_gettop(L), ndim, who));
      lua_pop(L, 1);
    }
  } else {
    axes.push_back(axis_of(L, idx, ndim, who));
  }
  return axes;
}

// The arrays of the sequence at idx.
std::vector<NDArray> arrays_of(lua_State* L, int idx, const char* who) {
  if (!lua_istable(L, idx)) fail("{}: expected a sequence of arrays, got {}", who, describe(L, idx));
  std::vector<NDArray> out;
  for (lua_Integer i = 1, n = static_cast<lua_Integer>(lua_rawlen(L, idx)); i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    NDArray* a = test_array(L, -1);
    if (!a) fail("{}: element {} of the sequence is {}, not an array", who, i, describe(L, -1));
    out.push_back(*a);
    lua_pop(L, 1);
  }
  return out;
}

int l_concatenate(lua_State* L) {
  std::vector<NDArray> arrays = arrays_of(L, 1, "concatenate");
  const int nd = arrays.empty() ? 1 : arrays[0].ndim();
  const int axis = lua_isnoneornil(L, 2) ? 0 : axis_of(L, 2, nd, "concatenate");
  push_array(L, ops::concatenate(arrays, axis));
  return 1;
}

int l_stack(lua_State* L) {
  std::vector<NDArray> arrays = arrays_of(L, 1, "stack");
  const int nd = arrays.empty() ? 0 : arrays[0].ndim();
  const int axis = lua_isnoneornil(L, 2) ? 0 : axis_of(L, 2, nd + 1, "stack");
  push_array(L, ops::stack(arrays, axis));
  return 1;
}

int l_hstack(lua_State* L) {
  push_array(L, ops::hstack(arrays_of(L, 1, "hstack")));
  return 1;
}

int l_vstack(lua_State* L) {
  push_array(L, ops::vstack(arrays_of(L, 1, "vstack")));
  return 1;
}

int l_squeeze(lua_State* L) {
  NDArray& x = check_array(L, 1, "squeeze");
  push_array(L, ops::squeeze(x, axes_of(L, 2, x.ndim(), "squeeze")));
  return 1;
}

int l_expand_dims(lua_State* L) {
  NDArray& x = check_array(L, 1, "expand_dims");
  push_array(L, ops::expand_dims(x, axis_of(L, 2, x.ndim() + 1, "expand_dims")));
  return 1;
}

int l_flip(lua_State* L) {
  NDArray& x = check_array(L, 1, "flip");
  push_array(L, ops::flip(x, axes_of(L, 2, x.ndim(), "flip")));
  return 1;
}

// The dtype and options after `first`: an optional dtype, then an optional {device=}.
DType trailing_dtype(lua_State* L, int first, const char* who, int* options) {
  std::optional<DType> dtype;
  int at = first;
  if (!lua_isnoneornil(L, at) && !lua_istable(L, at)) dtype = check_dtype(L, at++, who);
  else if (lua_isnil(L, at) && !lua_isnone(L, at + 1)) ++at;
  check_options(L, at, who, {"device"});
  *options = at;
  return dtype.value_or(DType::Float64);
}

int l_eye(lua_State* L) {
  const std::int64_t n = check_integer(L, 1, "eye");
  int at = 2;
  std::int64_t m = n, k = 0;
  if (lua_type(L, at) == LUA_TNUMBER) m = check_integer(L, at++, "eye");
  if (lua_type(L, at) == LUA_TNUMBER) k = check_integer(L, at++, "eye");
  int options = 0;
  const DType dtype = trailing_dtype(L, at, "eye", &options);
  push_array(L, ops::eye(n, m, k, dtype, device_option(L, options, "eye")));
  return 1;
}

int l_identity(lua_State* L) {
  const std::int64_t n = check_integer(L, 1, "identity");
  int options = 0;
  const DType dtype = trailing_dtype(L, 2, "identity", &options);
  push_array(L, ops::eye(n, n, 0, dtype, device_option(L, options, "identity")));
  return 1;
}

int l_diag(lua_State* L) {
  NDArray& v = check_array(L, 1, "diag");
  push_array(L, ops::diag(v, lua_isnoneornil(L, 2) ? 0 : check_integer(L, 2, "diag")));
  return 1;
}

template <bool Lower>
int l_triangle(lua_State* L) {
  const char* who = Lower ? "tril" : "triu";
  NDArray& x = check_array(L, 1, who);
  const std::int64_t k = lua_isnoneornil(L, 2) ? 0 : check_integer(L, 2, who);
  push_array(L, Lower ? ops::tril(x, k) : ops::triu(x, k));
  return 1;
}

// x:ravel(): a view when x is contiguous, else a copy; x:flatten(): always a copy.
int l_ravel(lua_State* L) {
  NDArray& x = check_array(L, 1, "ravel");
  push_array(L, x.reshape({x.size()}));
  return 1;
}
int l_flatten(lua_State* L) {
  NDArray& x = check_array(L, 1, "flatten");
  push_array(L, x.copy().reshape({x.size()}));
  return 1;
}

}  // namespace

void open_routines(lua_State* L) {
  static const luaL_Reg functions[] = {
      {"concatenate", trampoline<l_concatenate>}, {"stack", trampoline<l_stack>},
      {"hstack", trampoline<l_hstack>},           {"vstack", trampoline<l_vstack>},
      {"squeeze", trampoline<l_squeeze>},         {"expand_dims", trampoline<l_expand_dims>},
      {"flip", trampoline<l_flip>},               {"eye", trampoline<l_eye>},
      {"identity", trampoline<l_identity>},       {"diag", trampoline<l_diag>},
      {"tril", trampoline<l_triangle<true>>},     {"triu", trampoline<l_triangle<false>>},
      {"ravel", trampoline<l_ravel>},             {nullptr, nullptr},
  };
  luaL_setfuncs(L, functions, 0);
  const int module = lua_gettop(L);
  luaL_getmetatable(L, kArrayType);
  lua_getfield(L, -1, "__index");
  LUDA_INTERNAL_CHECK(lua_getupvalue(L, -1, 1) != nullptr && lua_type(L, -1) == LUA_TTABLE);
  static const luaL_Reg methods[] = {
      {"squeeze", trampoline<l_squeeze>}, {"ravel", trampoline<l_ravel>}, {"flatten", trampoline<l_flatten>},
      {"flip", trampoline<l_flip>},       {nullptr, nullptr},
  };
  luaL_setfuncs(L, methods, 0);
  lua_settop(L, module);
}

}  // namespace luda::lua

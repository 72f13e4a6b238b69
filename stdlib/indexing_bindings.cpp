// NumPy's indexing for Lua (ops/indexing.h): the index items x:slice and x[key] read,
// luda.newaxis and luda.ellipsis, and luda.take, put, nonzero (also luda.where with one
// argument, array_math_bindings.cpp), compress, flatnonzero, argwhere, with the methods
// x:take, x:put, x:nonzero, x:compress.
#include <cctype>
#include <string_view>
#include <vector>

#include "ops/indexing.h"
#include "ops/slice_syntax.h"
#include "runtime/format.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

// luda.newaxis and luda.ellipsis: userdata of one type, told apart by their value.
enum class IndexConstant { NewAxis, Ellipsis };

bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A slice table holds start, stop and step at keys 1 to 3 and nothing else: a fourth
// entry or a named one is a mistake, never silently dropped.
void check_slice_table(lua_State* L, int idx, int argno) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    int isint = 0;
    lua_Integer k = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
    if (!isint || k < 1 || k > 3) {
      std::string key = lua_type(L, -1) == LUA_TSTRING ? describe(L, -1) : "[" + describe(L, -1) + "]";
      fail("slice: a slice table is {{start, stop, step}}, but argument #{} also has key {}", argno, key);
    }
  }
}

Slice slice_of(lua_State* L, int idx, int argno) {
  check_slice_table(L, idx, argno);
  Slice s;
  std::optional<std::int64_t> parts[3];
  for (int k = 0; k < 3; ++k) {
    lua_rawgeti(L, idx, k + 1);
    if (!lua_isnil(L, -1))
      parts[k] = to_integer(L, -1, "slice",
                            fmt::format("{}[{}] of argument #{}",
                                        k == 0   ? "start"
                                        : k == 1 ? "stop"
                                                 : "step",
                                        k + 1, argno));
    lua_pop(L, 1);
  }
  s.start = parts[0];
  s.stop = parts[1];
  if (parts[2]) {
    if (*parts[2] == 0) fail("slice: slice step cannot be zero (argument #{})", argno);
    s.step = *parts[2];
  }
  return s;
}

// One item of x:slice's arguments, at stack index idx; argno numbers it in messages.
ops::Index item_of(lua_State* L, int idx, int argno) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER: {
      int isint = 0;
      lua_Integer i = lua_tointegerx(L, idx, &isint);
      if (!isint) fail("bad argument #{} to 'slice' (number has no integer representation)", argno);
      return std::int64_t{i};
    }
    case LUA_TTABLE: return slice_of(L, idx, argno);
    case LUA_TBOOLEAN: return lua_toboolean(L, idx) != 0;
    case LUA_TSTRING:
      fail("bad argument #{} to 'slice' (a slice string must be the only argument, as in x:slice(\"1:5, ::2\"))",
           argno);
    default: break;
  }
  if (NDArray* a = test_array(L, idx)) return *a;
  if (Scalar* v = test_scalar(L, idx); v && is_integer(v->dtype)) return v->to_int64();  // luda.int32(2)
  if (auto* c = test_object<IndexConstant>(L, idx, kIndexConstantType)) {
    if (*c == IndexConstant::NewAxis) return ops::NewAxis{};
    return ops::Ellipsis{};
  }
  fail("bad argument #{} to 'slice' (integer, {{start, stop, step}} table, array, boolean, luda.newaxis, "
       "luda.ellipsis or slice string expected, got {})",
       argno, type_name(L, idx));
}

// x:slice's arguments at first..last: items, or one string in NumPy's syntax.
std::vector<ops::Index> index_args(lua_State* L, int first, int last, const NDArray& x) {
  if (last == first && lua_type(L, first) == LUA_TSTRING)
    return ops::parse_index_string(string_at(L, first), x.device());  // all of it: a "\0" is an error, not an end
  std::vector<ops::Index> items;
  for (int i = first; i <= last; ++i) items.push_back(item_of(L, i, i - first + 1));
  return items;
}

// Whether a string key of x[key] is an index in NumPy's syntax rather than a field or
// method name: it does not start with a name, or starts with one of the index's words.
bool is_index_string(std::string_view key) {
  if (key.empty() || !word_start(key[0])) return true;
  std::size_t n = 1;
  while (n < key.size() && word_char(key[n])) ++n;
  const std::string_view w = key.substr(0, n);
  return w == "None" || w == "newaxis" || w == "True" || w == "False";
}

// x[key]'s index, for a key that is not a number: an index string, a table holding
// x:slice's arguments, or one item (an array, a boolean, luda.newaxis, luda.ellipsis).
std::vector<ops::Index> key_index(lua_State* L, int idx, const NDArray& x) {
  if (lua_type(L, idx) == LUA_TSTRING) return ops::parse_index_string(string_at(L, idx), x.device());
  if (lua_type(L, idx) == LUA_TTABLE) {
    const auto n = static_cast<int>(lua_rawlen(L, idx));
    if (!lua_checkstack(L, n + 4)) fail("x[{{...}}]: too many index items ({})", n);
    const int first = lua_gettop(L) + 1;
    for (int i = 1; i <= n; ++i) lua_rawgeti(L, idx, i);
    std::vector<ops::Index> items = index_args(L, first, first + n - 1, x);
    lua_settop(L, first - 1);
    return items;
  }
  if (lua_type(L, idx) == LUA_TBOOLEAN || test_array(L, idx) || test_scalar(L, idx) ||
      test_object<IndexConstant>(L, idx, kIndexConstantType))
    return {item_of(L, idx, 1)};
  fail("ndarray index must be an integer (0-based), an array, a boolean, luda.newaxis, luda.ellipsis, a table of "
       "x:slice's items, an index string or a field name, got {}",
       describe(L, idx));
}

// The Lua value at idx as an array of `dtype` on `device` for put's values and x[index] = v:
// an array as it is, a nested table converted, a number, boolean or typed scalar as a 0-d
// array (an integer must fit the dtype).
NDArray value_array(lua_State* L, int idx, DType dtype, Device device, std::string_view fname) {
  if (NDArray* a = test_array(L, idx)) return *a;
  if (lua_type(L, idx) == LUA_TTABLE) return array_from_table(L, idx, dtype, Device::cpu(), fname);
  return NDArray::full({}, to_scalar(L, idx, dtype, fname, ""), dtype, device);
}

// Integer indices for take and put: an array, an integer, or a nested table of integers.
NDArray indices_arg(lua_State* L, int idx, Device device, std::string_view fname) {
  if (NDArray* a = test_array(L, idx)) return *a;
  if (lua_type(L, idx) == LUA_TTABLE) return array_from_table(L, idx, DType::Int64, device, fname);
  if (lua_type(L, idx) == LUA_TNUMBER) {
    const std::int64_t i = check_integer(L, idx, fname);
    return NDArray::full({}, Scalar::of_int(i), DType::Int64, device);
  }
  type_error(L, idx, fname, "array, integer or table of integers");
}

ops::IndexMode mode_of(lua_State* L, int idx, std::string_view fname) {
  if (lua_isnoneornil(L, idx)) return ops::IndexMode::Raise;
  if (lua_type(L, idx) != LUA_TSTRING)
    fail("{}: mode must be 'raise', 'wrap' or 'clip', got {}", fname, describe(L, idx));
  const std::string_view m = string_at(L, idx);
  if (m == "raise") return ops::IndexMode::Raise;
  if (m == "wrap") return ops::IndexMode::Wrap;
  if (m == "clip") return ops::IndexMode::Clip;
  fail("{}: mode must be 'raise', 'wrap' or 'clip', got '{}'", fname, printable(m));
}

// luda.take(a, indices [, axis] [, {out=, mode=}]) and a:take(indices [, axis] [, {...}]).
int l_take(lua_State* L) {
  NDArray& a = check_array(L, 1, "take");
  const NDArray indices = indices_arg(L, 2, a.device(), "take");
  int options = 4;
  std::optional<int> axis;
  if (lua_type(L, 3) == LUA_TTABLE && !test_array(L, 3)) {
    options = 3;
  } else if (!lua_isnoneornil(L, 3)) {
    axis = axis_arg(L, 3, a.ndim(), "take");
  }
  check_options(L, options, "take", {"out", "mode"});
  ops::IndexMode mode = ops::IndexMode::Raise;
  if (push_option(L, options, "mode") != LUA_TNIL) mode = mode_of(L, lua_gettop(L), "take");
  lua_pop(L, 1);
  NDArray result = ops::take(a, indices, axis, mode);
  if (push_option(L, options, "out") != LUA_TNIL) {
    NDArray* out = test_array(L, -1);
    if (!out) fail("take: option 'out' must be an ndarray, got {}", describe(L, -1));
    if (out->shape() != result.shape())
      fail("take: option 'out' has shape {} but the result has shape {}", shape_str(out->shape()),
           shape_str(result.shape()));
    out->assign(result);
    return 1;
  }
  push_array(L, std::move(result));
  return 1;
}

// luda.put(a, indices, values [, mode]) and a:put(indices, values [, mode]); returns a.
int l_put(lua_State* L) {
  NDArray& a = check_array(L, 1, "put");
  const NDArray indices = indices_arg(L, 2, a.device(), "put");
  if (lua_isnone(L, 3)) type_error(L, 3, "put", "values");
  const NDArray values = value_array(L, 3, a.dtype(), a.device(), "put");
  ops::put(a, indices, values, mode_of(L, 4, "put"));
  lua_settop(L, 1);
  return 1;
}

int l_nonzero(lua_State* L) { return push_nonzero(L, check_array(L, 1, "nonzero")); }

int l_flatnonzero(lua_State* L) {
  push_array(L, ops::flatnonzero(check_array(L, 1, "flatnonzero")));
  return 1;
}

int l_argwhere(lua_State* L) {
  push_array(L, ops::argwhere(check_array(L, 1, "argwhere")));
  return 1;
}

// A condition for compress: an array, or a table of booleans (or numbers).
NDArray condition_arg(lua_State* L, int idx, Device device) {
  if (NDArray* c = test_array(L, idx)) return *c;
  if (lua_type(L, idx) == LUA_TTABLE) return array_from_table(L, idx, std::nullopt, device, "compress");
  type_error(L, idx, "compress", "array or table of booleans");
}

// luda.compress(condition, a [, axis]).
int l_compress(lua_State* L) {
  NDArray& a = check_array(L, 2, "compress");
  const NDArray condition = condition_arg(L, 1, a.device());
  std::optional<int> axis;
  if (!lua_isnoneornil(L, 3)) axis = axis_arg(L, 3, a.ndim(), "compress");
  push_array(L, ops::compress(condition, a, axis));
  return 1;
}

// a:compress(condition [, axis]), NumPy's ndarray.compress.
int l_compress_method(lua_State* L) {
  NDArray& a = check_array(L, 1, "compress");
  const NDArray condition = condition_arg(L, 2, a.device());
  std::optional<int> axis;
  if (!lua_isnoneornil(L, 3)) axis = axis_arg(L, 3, a.ndim(), "compress");
  push_array(L, ops::compress(condition, a, axis));
  return 1;
}

int l_constant_tostring(lua_State* L) {
  auto* c = test_object<IndexConstant>(L, 1, kIndexConstantType);
  lua_pushstring(L, !c ? "index_constant" : *c == IndexConstant::NewAxis ? "luda.newaxis" : "luda.ellipsis");
  return 1;
}

}  // namespace

int push_nonzero(lua_State* L, const NDArray& x) {
  std::vector<NDArray> columns = ops::nonzero(x);
  if (!lua_checkstack(L, static_cast<int>(columns.size()) + 2)) fail("nonzero: Lua stack overflow");
  for (NDArray& c : columns) push_array(L, std::move(c));
  return static_cast<int>(columns.size());
}

bool is_field_key(std::string_view key) { return !is_index_string(key); }

std::vector<ops::Index> slice_args(lua_State* L, int first, int last, const NDArray& x) {
  return index_args(L, first, last, x);
}

std::vector<ops::Index> index_key(lua_State* L, int idx, const NDArray& x) { return key_index(L, idx, x); }

NDArray index_value(lua_State* L, int idx, const NDArray& x, std::string_view fname) {
  return value_array(L, idx, x.dtype(), x.device(), fname);
}

void open_indexing(lua_State* L) {
  const int module = lua_gettop(L);
  static const luaL_Reg constant_meta[] = {{"__tostring", trampoline<l_constant_tostring>}, {nullptr, nullptr}};
  new_metatable(L, kIndexConstantType, constant_meta, nullptr);
  lua_pop(L, 1);
  push_object<IndexConstant>(L, kIndexConstantType, IndexConstant::NewAxis);
  lua_setfield(L, module, "newaxis");
  push_object<IndexConstant>(L, kIndexConstantType, IndexConstant::Ellipsis);
  lua_setfield(L, module, "ellipsis");

  static const luaL_Reg functions[] = {
      {"take", trampoline<l_take>},
      {"put", trampoline<l_put>},
      {"nonzero", trampoline<l_nonzero>},
      {"flatnonzero", trampoline<l_flatnonzero>},
      {"argwhere", trampoline<l_argwhere>},
      {"compress", trampoline<l_compress>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, functions, 0);
  luaL_getmetatable(L, kArrayType);
  lua_getfield(L, -1, "__index");
  LUDA_INTERNAL_CHECK(lua_getupvalue(L, -1, 1) != nullptr && lua_type(L, -1) == LUA_TTABLE);
  static const luaL_Reg methods[] = {
      {"take", trampoline<l_take>},
      {"put", trampoline<l_put>},
      {"nonzero", trampoline<l_nonzero>},
      {"compress", trampoline<l_compress_method>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, methods, 0);
  lua_settop(L, module);
}

}  // namespace luda::lua

// NumPy's array routines (ops/routines.h) for Lua, axes 1-based as luda counts them:
//   luda.concatenate({a, b, ...} [, axis]), luda.stack({...} [, axis]), luda.hstack({...}),
//   luda.vstack({...}), luda.squeeze(x [, axis]), luda.expand_dims(x, axis),
//   luda.flip(x [, axis]), luda.eye(n [, m [, k]] [, dtype] [, {device=}]),
//   luda.identity(n [, dtype] [, {device=}]), luda.diag(v [, k]), luda.tril(x [, k]),
//   luda.triu(x [, k]), luda.split, luda["repeat"] (luda.repeat_), luda.tile, luda.roll,
//   luda.diff, luda.isclose, luda.allclose, luda.any, luda.all, luda.count_nonzero,
//   luda.meshgrid, luda.tri; x:squeeze, x:flatten(), x:ravel(), x:flip, x:any, x:all;
//   luda.cumsum, cumprod, nancumsum, nancumprod (ops/cumulative.h), luda.sort, argsort and
//   unique (ops/sorting.h); x:cumsum, x:cumprod, x:sort (in place), x:argsort. Where NumPy
//   takes axis=None for the flattened array, `false` stands for it (nil is the default).
#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ops/cumulative.h"
#include "ops/routines.h"
#include "ops/sorting.h"
#include "stdlib/bindings.h"
#include "stdlib/kind_bindings.h"

namespace luda::lua {
namespace {

// The integers of the sequence at idx.
std::vector<std::int64_t> integers_of(lua_State* L, int idx, const char* who) {
  std::vector<std::int64_t> out;
  for (lua_Integer i = 1, n = static_cast<lua_Integer>(lua_rawlen(L, idx)); i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    out.push_back(check_integer(L, lua_gettop(L), who));
    lua_pop(L, 1);
  }
  return out;
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
  const int axis = lua_isnoneornil(L, 2) ? 0 : axis_arg(L, 2, nd, "concatenate");
  push_array(L, ops::concatenate(arrays, axis));
  return 1;
}

int l_stack(lua_State* L) {
  std::vector<NDArray> arrays = arrays_of(L, 1, "stack");
  const int nd = arrays.empty() ? 0 : arrays[0].ndim();
  const int axis = lua_isnoneornil(L, 2) ? 0 : axis_arg(L, 2, nd + 1, "stack");
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
  push_array(L, ops::squeeze(x, axes_arg(L, 2, x.ndim(), "squeeze")));
  return 1;
}

int l_expand_dims(lua_State* L) {
  NDArray& x = check_array(L, 1, "expand_dims");
  push_array(L, ops::expand_dims(x, axis_arg(L, 2, x.ndim() + 1, "expand_dims")));
  return 1;
}

int l_flip(lua_State* L) {
  NDArray& x = check_array(L, 1, "flip");
  push_array(L, ops::flip(x, axes_arg(L, 2, x.ndim(), "flip")));
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

// The optional integer arguments of eye and tri, NumPy's positional M and k, from `first`
// on: each an integer, or nil for its default (luda.eye(3, nil, 1) is numpy.eye(3, k=1)).
// They end at the first argument that is neither (the dtype or the options, which may come
// early: luda.eye(3, "int32")). Returns the position after them.
int optional_integers(lua_State* L, int first, std::span<std::optional<std::int64_t>> out, const char* who) {
  int at = first;
  for (std::optional<std::int64_t>& v : out) {
    if (lua_type(L, at) == LUA_TNUMBER) v = check_integer(L, at, who);
    else if (!lua_isnil(L, at) || lua_isnone(L, at)) break;
    ++at;
  }
  return at;
}

int l_eye(lua_State* L) {
  const std::int64_t n = check_integer(L, 1, "eye");
  std::array<std::optional<std::int64_t>, 2> mk;
  const int at = optional_integers(L, 2, mk, "eye");
  const std::int64_t m = mk[0].value_or(n), k = mk[1].value_or(0);
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

int l_tri(lua_State* L) {
  const std::int64_t n = check_integer(L, 1, "tri");
  std::array<std::optional<std::int64_t>, 2> mk;
  const int at = optional_integers(L, 2, mk, "tri");
  const std::int64_t m = mk[0].value_or(n), k = mk[1].value_or(0);
  int options = 0;
  const DType dtype = trailing_dtype(L, at, "tri", &options);
  push_array(L, ops::tri(n, m, k, dtype, device_option(L, options, "tri")));
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

// luda.split(x, sections | {indices...} [, axis]): a sequence of views.
int l_split(lua_State* L) {
  NDArray& x = check_array(L, 1, "split");
  const int axis = lua_isnoneornil(L, 3) ? 0 : axis_arg(L, 3, x.ndim(), "split");
  std::vector<NDArray> parts;
  if (lua_istable(L, 2)) {
    parts = ops::split_at(x, integers_of(L, 2, "split"), axis);
  } else {
    parts = ops::split(x, check_integer(L, 2, "split"), axis);
  }
  lua_createtable(L, static_cast<int>(parts.size()), 0);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    push_array(L, std::move(parts[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// luda["repeat"](x, repeats [, axis]) and luda.repeat_ (repeat is a Lua keyword).
int l_repeat(lua_State* L) {
  NDArray& x = check_array(L, 1, "repeat");
  const std::int64_t repeats = check_integer(L, 2, "repeat");
  std::optional<int> axis;
  if (!lua_isnoneornil(L, 3)) axis = axis_arg(L, 3, x.ndim(), "repeat");
  push_array(L, ops::repeat(x, repeats, axis));
  return 1;
}

int l_tile(lua_State* L) {
  NDArray& x = check_array(L, 1, "tile");
  const std::vector<std::int64_t> reps = lua_istable(L, 2) ? integers_of(L, 2, "tile")
                                                           : std::vector<std::int64_t>{check_integer(L, 2, "tile")};
  push_array(L, ops::tile(x, reps));
  return 1;
}

int l_roll(lua_State* L) {
  NDArray& x = check_array(L, 1, "roll");
  const std::int64_t shift = check_integer(L, 2, "roll");
  std::optional<int> axis;
  if (!lua_isnoneornil(L, 3)) axis = axis_arg(L, 3, x.ndim(), "roll");
  push_array(L, ops::roll(x, shift, axis));
  return 1;
}

int l_diff(lua_State* L) {
  NDArray& x = check_array(L, 1, "diff");
  const std::int64_t n = lua_isnoneornil(L, 2) ? 1 : check_integer(L, 2, "diff");
  if (x.ndim() == 0) fail("diff: requires input that is at least one dimensional");
  const int axis = lua_isnoneornil(L, 3) ? x.ndim() - 1 : axis_arg(L, 3, x.ndim(), "diff");
  push_array(L, ops::diff(x, n, axis));
  return 1;
}

// An array or a number, as an operand of isclose.
jit::KernelArg operand_of(lua_State* L, int idx, const char* who) {
  if (NDArray* a = test_array(L, idx)) return jit::KernelArg::of_array(*a);
  if (lua_isinteger(L, idx)) return jit::KernelArg::of_int(lua_tointeger(L, idx));
  if (lua_type(L, idx) == LUA_TNUMBER) return jit::KernelArg::of_float(lua_tonumber(L, idx));
  fail("{}: argument {} must be an array or a number, got {}", who, idx, describe(L, idx));
}

// luda.isclose(a, b [, {rtol=, atol=, equal_nan=}]) and luda.allclose (a Lua boolean).
template <bool All>
int l_isclose(lua_State* L) {
  const char* who = All ? "allclose" : "isclose";
  const jit::KernelArg a = operand_of(L, 1, who), b = operand_of(L, 2, who);
  check_options(L, 3, who, {"rtol", "atol", "equal_nan"});
  double rtol = 1e-5, atol = 1e-8;
  bool equal_nan = false;
  if (push_option(L, 3, "rtol") != LUA_TNIL) rtol = luaL_checknumber(L, -1);
  if (push_option(L, 3, "atol") != LUA_TNIL) atol = luaL_checknumber(L, -1);
  if (push_option(L, 3, "equal_nan") != LUA_TNIL) equal_nan = lua_toboolean(L, -1);
  lua_settop(L, 3);
  NDArray close = ops::isclose(a, b, rtol, atol, equal_nan);
  if (!All) {
    push_array(L, std::move(close));
    return 1;
  }
  lua_pushboolean(L, ops::all(close, std::nullopt, false).get({}).to_int64() != 0);
  return 1;
}

// luda.any/all/count_nonzero(x [, axis] [, {keepdims=}]) and the methods.
template <int Which>
int l_logical_reduce(lua_State* L) {
  const char* who = Which == 0 ? "any" : Which == 1 ? "all" : "count_nonzero";
  NDArray& x = check_array(L, 1, who);
  int options = 3;
  std::optional<std::vector<int>> axes;
  if (lua_istable(L, 2) && !test_array(L, 2) && lua_rawlen(L, 2) == 0) options = 2;
  else axes = axes_arg(L, 2, x.ndim(), who);
  if (axes) std::sort(axes->begin(), axes->end());
  check_options(L, options, who, {"keepdims"});
  const bool keepdims = push_option(L, options, "keepdims") != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 1);
  push_array(L, Which == 0   ? ops::any(x, axes, keepdims)
                : Which == 1 ? ops::all(x, axes, keepdims)
                             : ops::count_nonzero(x, axes, keepdims));
  return 1;
}

// luda.meshgrid(x1, x2, ... [, {indexing = "xy" | "ij"}]): one array per argument.
int l_meshgrid(lua_State* L) {
  int n = lua_gettop(L);
  bool xy = true;
  if (n > 0 && lua_istable(L, n) && !test_array(L, n)) {
    check_options(L, n, "meshgrid", {"indexing"});
    if (push_option(L, n, "indexing") != LUA_TNIL) {
      const std::string_view indexing = string_at(L, -1);
      if (indexing != "xy" && indexing != "ij")
        fail("meshgrid: Valid values for `indexing` are 'xy' and 'ij', got '{}'", indexing);
      xy = indexing == "xy";
    }
    lua_pop(L, 1);
    --n;
  }
  std::vector<NDArray> xs;
  for (int i = 1; i <= n; ++i) xs.push_back(check_array(L, i, "meshgrid"));
  std::vector<NDArray> grids = ops::meshgrid(xs, xy);
  if (!lua_checkstack(L, static_cast<int>(grids.size()) + 2)) fail("meshgrid: Lua stack overflow");
  for (NDArray& g : grids) push_array(L, std::move(g));
  return static_cast<int>(grids.size());
}

// The axis at idx of a routine that takes NumPy's axis=None: an integer (1-based, negative
// from the end), false for the flattened array (None), nil for `fallback`.
std::optional<int> axis_or_flat(lua_State* L, int idx, const NDArray& x, std::string_view who,
                                std::optional<int> fallback) {
  if (lua_isnoneornil(L, idx)) return fallback;
  if (lua_isboolean(L, idx) && !lua_toboolean(L, idx)) return std::nullopt;
  if (x.ndim() == 0 && lua_type(L, idx) == LUA_TNUMBER)
    fail("{}: axis {} is out of range for a 0-d array (it has no axes; axis false takes the flattened array)", who,
         describe(L, idx));
  return axis_arg(L, idx, x.ndim(), who, fmt::format(" for a {}-d array", x.ndim()));
}

// Where a routine's options table is, after the array (1) and an optional axis (2): 2 when
// that is a table, else 3; 0 when there is none. Nothing may follow it.
int options_at(lua_State* L, std::string_view who, std::string_view call) {
  const int at = lua_istable(L, 2) && !test_array(L, 2) ? 2 : 3;
  for (int extra = at + 1; extra <= lua_gettop(L); ++extra)
    if (!lua_isnil(L, extra))
      fail("{}: argument {} ({}) comes after the options table; the call is {}", who, extra, describe(L, extra), call);
  if (lua_isnoneornil(L, at)) return 0;
  check_table(L, at, who);
  return at;
}

// luda.cumsum(x [, axis] [, {dtype=, out=, stream=}]) and cumprod, nancumsum, nancumprod,
// x:cumsum, x:cumprod: the flattened array by default (NumPy's axis=None).
template <ops::Cumulative Op>
int l_cumulative(lua_State* L) {
  const std::string_view who = ops::cumulative_name(Op);
  NDArray& x = check_array(L, 1, who);
  const int options = options_at(L, who, fmt::format("{}(x [, axis] [, {{dtype =, out =, stream =}}])", who));
  const std::optional<int> axis = options == 2 ? std::nullopt : axis_or_flat(L, 2, x, who, std::nullopt);
  const CallOptions o = read_call_options(L, options, who, {"dtype", "out", "stream"});
  std::optional<DType> dtype;
  if (o.dtype) dtype = check_dtype(L, o.dtype, who);
  NDArray out;
  if (o.out) {
    NDArray* given = test_array(L, o.out);
    if (!given) fail("{}: option 'out' must be an ndarray, got {}", who, describe(L, o.out));
    out = *given;
  }
  NDArray result = ops::cumulative(Op, x, axis, dtype, std::move(out), o.stream);
  if (o.out) lua_pushvalue(L, o.out);
  else push_array(L, std::move(result));
  return 1;
}

// luda.sort(x [, axis] [, {stream=}]) (a new array), x:sort (in place; returns x),
// luda.argsort and x:argsort: along the last axis by default, the flattened array for
// false.
enum class SortCall { Sort, InPlace, Argsort };
template <SortCall Which>
int l_sort(lua_State* L) {
  const char* who = Which == SortCall::Argsort ? "argsort" : "sort";
  NDArray& x = check_array(L, 1, who);
  const int options = options_at(L, who,
                                 fmt::format("{}(x [, axis] [, {{stream =}}])",
                                             Which == SortCall::InPlace ? "x:sort" : who));
  std::optional<int> axis = x.ndim() - 1;
  if (options != 2) axis = axis_or_flat(L, 2, x, who, axis);
  const CallOptions o = read_call_options(L, options, who, {"stream"});
  if (axis && *axis < 0) {  // the default axis of a 0-d array
    if (Which == SortCall::Argsort) {
      axis = std::nullopt;  // NumPy's argsort of a 0-d array is [0]
    } else {
      fail("{}: axis -1 is out of range for a 0-d array (it has no axes; axis false sorts the flattened array)", who);
    }
  }
  if (Which == SortCall::InPlace) {
    if (!axis) fail("x:sort: axis false (the flattened array) cannot sort in place; use luda.sort(x, false)");
    ops::sort_in_place(x, *axis, o.stream);
    lua_pushvalue(L, 1);
  } else {
    push_array(L, Which == SortCall::Sort ? ops::sort(x, axis, o.stream) : ops::argsort(x, axis, o.stream));
  }
  return 1;
}

// luda.unique(x [, {return_index=, return_inverse=, return_counts=, equal_nan=, stream=}]):
// the values, then the ones asked for in NumPy's order.
int l_unique(lua_State* L) {
  NDArray& x = check_array(L, 1, "unique");
  const int options = lua_isnoneornil(L, 2) ? 0 : 2;
  if (options) check_table(L, 2, "unique");
  if (lua_gettop(L) > 2)
    fail("unique: argument 3 ({}) comes after the options table; the call is unique(x [, {{return_index =, "
         "return_inverse =, return_counts =, equal_nan =, stream =}}])",
         describe(L, 3));
  const CallOptions o = read_call_options(L, options, "unique",
                                          {"return_index", "return_inverse", "return_counts", "equal_nan", "stream"});
  auto flag = [&](const char* key, bool fallback) {
    if (push_option(L, options, key) == LUA_TNIL) {
      lua_pop(L, 1);
      return fallback;
    }
    if (!lua_isboolean(L, -1)) fail("unique: option '{}' must be a boolean, got {}", key, describe(L, -1));
    const bool on = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return on;
  };
  const bool index = flag("return_index", false), inverse = flag("return_inverse", false);
  const bool counts = flag("return_counts", false), equal_nan = flag("equal_nan", true);
  ops::Unique u = ops::unique(x, index, inverse, counts, equal_nan, o.stream);
  int n = 0;
  for (NDArray* a : {&u.values, &u.index, &u.inverse, &u.counts}) {
    if (!a->valid()) continue;
    push_array(L, std::move(*a));
    ++n;
  }
  return n;
}

}  // namespace

void open_routines(lua_State* L) {
  static const luaL_Reg functions[] = {
      {"concatenate", trampoline<l_concatenate>},
      {"stack", trampoline<l_stack>},
      {"hstack", trampoline<l_hstack>},
      {"vstack", trampoline<l_vstack>},
      {"squeeze", trampoline<l_squeeze>},
      {"expand_dims", trampoline<l_expand_dims>},
      {"flip", trampoline<l_flip>},
      {"eye", trampoline<l_eye>},
      {"identity", trampoline<l_identity>},
      {"diag", trampoline<l_diag>},
      {"tril", trampoline<l_triangle<true>>},
      {"triu", trampoline<l_triangle<false>>},
      {"ravel", trampoline<l_ravel>},
      {"split", trampoline<l_split>},
      {"repeat", trampoline<l_repeat>},
      {"repeat_", trampoline<l_repeat>},
      {"tile", trampoline<l_tile>},
      {"roll", trampoline<l_roll>},
      {"diff", trampoline<l_diff>},
      {"isclose", trampoline<l_isclose<false>>},
      {"allclose", trampoline<l_isclose<true>>},
      {"any", trampoline<l_logical_reduce<0>>},
      {"all", trampoline<l_logical_reduce<1>>},
      {"count_nonzero", trampoline<l_logical_reduce<2>>},
      {"meshgrid", trampoline<l_meshgrid>},
      {"tri", trampoline<l_tri>},
      {"cumsum", trampoline<l_cumulative<ops::Cumulative::Sum>>},
      {"cumprod", trampoline<l_cumulative<ops::Cumulative::Prod>>},
      {"nancumsum", trampoline<l_cumulative<ops::Cumulative::NanSum>>},
      {"nancumprod", trampoline<l_cumulative<ops::Cumulative::NanProd>>},
      {"sort", trampoline<l_sort<SortCall::Sort>>},
      {"argsort", trampoline<l_sort<SortCall::Argsort>>},
      {"unique", trampoline<l_unique>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, functions, 0);
  const int module = lua_gettop(L);
  luaL_getmetatable(L, kArrayType);
  lua_getfield(L, -1, "__index");
  LUDA_INTERNAL_CHECK(lua_getupvalue(L, -1, 1) != nullptr && lua_type(L, -1) == LUA_TTABLE);
  static const luaL_Reg methods[] = {
      {"squeeze", trampoline<l_squeeze>},
      {"ravel", trampoline<l_ravel>},
      {"flatten", trampoline<l_flatten>},
      {"flip", trampoline<l_flip>},
      {"any", trampoline<l_logical_reduce<0>>},
      {"all", trampoline<l_logical_reduce<1>>},
      {"cumsum", trampoline<l_cumulative<ops::Cumulative::Sum>>},
      {"cumprod", trampoline<l_cumulative<ops::Cumulative::Prod>>},
      {"sort", trampoline<l_sort<SortCall::InPlace>>},
      {"argsort", trampoline<l_sort<SortCall::Argsort>>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, methods, 0);
  lua_settop(L, module);
}

}  // namespace luda::lua

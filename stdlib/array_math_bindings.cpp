// Array arithmetic in Lua (ops/array_math.h does the work, on the kernel kinds):
//   x + y, x - 1, 2 * x, x / y, x // y, x % y, x ^ 2, -x      (ndarray metamethods)
//   x < 2, x <= y, x > 2, x >= y of one-element arrays: a Lua boolean (ndarray metamethods)
//   luda.exp(x), luda.log(x [, base]), luda.atan(y [, x]), ... (the kernel language's math set)
//   luda.less(x, y) greater less_equal greater_equal equal not_equal (bool arrays),
//   luda.minimum maximum where add subtract multiply divide floor_divide mod power negative,
//   sign square reciprocal clip fmax fmin, bitwise_* and logical_* (ops/array_math.h),
//   luda.round(x [, decimals]) (around): NumPy's, halves to even, as luda.rint,
//   and NumPy's names for luda's (luda.arcsin is luda.asin), each with an optional last {out = z, stream = s}; all-scalar operands give a Lua value.
//   x:sum([axis] [, {keepdims =, dtype =, initial =, out =, stream =}]), prod max min mean
//   argmax argmin and nansum nanprod nanmax nanmin nanmean nanargmax nanargmin, and
//   luda.sum(x, ...) and friends; luda.dot(x, y [, {out =, stream =}]), luda.matmul and x:matmul;
//   x:clip(lo, hi), which is luda.clip(x, lo, hi).
// Full reductions give 0-d arrays, as CuPy does (no wait for the device; x:sum():item()
// reads the value).
#include <algorithm>
#include <array>

#include "ops/array_math.h"
#include "ops/linalg.h"
#include "runtime/graph/recording.h"
#include "stdlib/kind_bindings.h"

namespace luda::lua {

// Whether the table at idx is a sequence of axes ({1, 2}) rather than options.
bool is_axis_table(lua_State* L, int idx) { return lua_type(L, idx) == LUA_TTABLE && lua_rawlen(L, idx) > 0; }

ReduceArgs read_reduce_args(lua_State* L, int array, int ndim, std::string_view who, std::string_view call,
                            std::initializer_list<std::string_view> allowed) {
  ReduceArgs r;
  int axis = 0, options = 0, next = array + 1;
  if (lua_type(L, next) == LUA_TNUMBER || is_axis_table(L, next)) {
    axis = next;
    options = lua_isnoneornil(L, next + 1) ? 0 : next + 1;
  } else if (lua_type(L, next) == LUA_TTABLE) {
    options = next;
  } else if (!lua_isnoneornil(L, next)) {
    type_error(L, next, who, "axis (integer or table of integers) or options table");
  } else {
    options = lua_isnoneornil(L, next + 1) ? 0 : next + 1;
  }
  if (options && lua_type(L, options) != LUA_TTABLE) type_error(L, options, who, "options table");
  // Nothing may follow the options: x:max({}, {keepdims = true}) would otherwise drop its
  // second table (the first, empty, is the options).
  for (int extra = std::max({options, axis, array}) + 1; extra <= lua_gettop(L); ++extra)
    if (!lua_isnil(L, extra))
      fail("{}: argument {} ({}) comes after the options table; the call is {}, and an axis table lists axes ({{1, "
           "2}})",
           who, extra, describe(L, extra), call);
  r.call = read_call_options(L, options, who, allowed);
  if (!axis) axis = r.call.axis;
  if (axis) {
    std::vector<std::int64_t> given;
    if (lua_type(L, axis) == LUA_TTABLE) {
      auto n = static_cast<int>(lua_rawlen(L, axis));
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, axis, i);
        given.push_back(to_integer(L, -1, who, fmt::format("axis[{}]", i)));
        lua_pop(L, 1);
      }
    } else if (lua_type(L, axis) == LUA_TNUMBER) {
      given.push_back(to_integer(L, axis, who, "axis"));
    } else {
      fail("{}: option 'axis' must be an integer or a table of integers (1 is the first axis, -1 the last), got {}",
           who, describe(L, axis));
    }
    r.axes = ops::normalize_axes(given, ndim, who);
  }
  if (int at = r.call.keepdims) {
    if (lua_type(L, at) != LUA_TBOOLEAN) fail("{}: option 'keepdims' must be a boolean, got {}", who, describe(L, at));
    r.keepdims = lua_toboolean(L, at);
  }
  if (int at = r.call.initial) {
    if (lua_type(L, at) != LUA_TNUMBER && lua_type(L, at) != LUA_TBOOLEAN && !test_scalar(L, at))
      fail("{}: option 'initial' must be a number, a boolean or a typed scalar (luda.int8(3)), got {}", who,
           describe(L, at));
    r.initial = read_operand(L, at, who, 0, "initial");
  }
  if (r.call.out) {
    NDArray* given = test_array(L, r.call.out);
    if (!given) fail("{}: option 'out' must be an ndarray, got {}", who, describe(L, r.call.out));
    r.out = *given;
  }
  return r;
}

namespace {

using ops::Reduce;

struct Operator {
  const char* metamethod;
  const char* ufunc;
};
constexpr Operator kOperators[] = {
    {"__add", "add"},           {"__sub", "subtract"}, {"__mul", "multiply"}, {"__div", "divide"},
    {"__idiv", "floor_divide"}, {"__mod", "mod"},      {"__pow", "power"},    {"__unm", "negative"},
};

// A metamethod: upvalue 1 is the ufunc's name. Lua passes __unm its operand twice.
int l_operator(lua_State* L) {
  std::string_view name = upvalue_string(L, 1);
  int nin = ops::ufunc_inputs(name);
  std::string who = fmt::format("ufunc '{}'", name);
  std::array<jit::KernelArg, 2> in;
  for (int k = 0; k < nin; ++k) in[static_cast<std::size_t>(k)] = read_operand(L, k + 1, who, k + 1, {});
  push_array(L, ops::apply(name, std::span<const jit::KernelArg>(in.data(), static_cast<std::size_t>(nin))));
  return 1;
}

// __lt and __le: Lua's `a < b` (and `b > a`, which Lua turns into it) and `a <= b` (`b >=
// a`) give one boolean, so an array takes part as in NumPy's `if x < y:` (bool() of the
// comparison): when it holds one element, 0-d or size 1. The comparison is luda.less's
// (luda.less_equal's): NumPy 2's by value, on the operands' device; reading its result
// waits for it, as x:item() does. Upvalue 1 is the ufunc's name.
int l_order(lua_State* L) {
  std::string_view name = upvalue_string(L, 1);
  const bool strict = name == "less";
  for (int k = 1; k <= 2; ++k)
    if (const NDArray* a = test_array(L, k); a && a->size() != 1)
      fail("ndarray comparison: Lua's {} give one boolean, so they compare arrays of one element (0-d or size 1), "
           "and this array has shape {}; compare elementwise with {}, then reduce with x:all() or x:any()",
           strict ? "'<' and '>'" : "'<=' and '>='", shape_str(a->shape()),
           strict ? "luda.less or luda.greater" : "luda.less_equal or luda.greater_equal");
  GraphRecording::refuse_if_recording(strict ? "x < y (and x > y) of arrays" : "x <= y (and x >= y) of arrays");
  std::string who = fmt::format("ufunc '{}'", name);
  std::array<jit::KernelArg, 2> in = {read_operand(L, 1, who, 1, {}), read_operand(L, 2, who, 2, {})};
  std::vector<std::byte> bytes = ops::apply(name, in).to_host_bytes();
  LUDA_INTERNAL_CHECK(bytes.size() == 1);
  lua_pushboolean(L, bytes[0] != std::byte{0});
  return 1;
}

// luda.<name>(operands... [, {out =, stream =}]): upvalue 1 is the ufunc's name, 2 the Lua
// name; luda.log and luda.atan take a second operand (log_base, atan2).
int l_function(lua_State* L) {
  std::string_view name = upvalue_string(L, 1);
  std::string_view fname = upvalue_string(L, 2);
  int options = 0;
  int n = split_options(L, 1, &options);
  if (n == 2 && name == "log") name = "log_base";
  if (n == 2 && name == "atan") name = "atan2";
  // luda.where(condition) alone is NumPy's where(condition): nonzero.
  if (name == "where" && n == 1 && !options) return push_nonzero(L, check_array(L, 1, "where"));
  int nin = ops::ufunc_inputs(name);
  if (n != nin) {
    if (fname == "log" || fname == "atan") fail("luda.{} takes 1 or 2 arguments, got {}", fname, n);
    fail("luda.{} takes {} argument{}, got {}", fname, nin, nin == 1 ? "" : "s", n);
  }
  std::string who = fmt::format("luda.{}", fname);
  std::array<int, 3> args = {1, 2, 3};
  // luda.clip(x, nil, hi) and luda.clip(x, lo, nil): one bound, as NumPy's clip with None.
  if (name == "clip" && (lua_isnil(L, 2) || lua_isnil(L, 3))) {
    if (lua_isnil(L, 2) && lua_isnil(L, 3)) fail("{}: give lo, hi or both; nil stands for no bound", who);
    name = lua_isnil(L, 2) ? "minimum" : "maximum";
    args[1] = lua_isnil(L, 2) ? 3 : 2;
    n = 2;
  }
  std::array<jit::KernelArg, 3> in;
  for (int k = 0; k < n; ++k) {
    int arg = args[static_cast<std::size_t>(k)];
    in[static_cast<std::size_t>(k)] = read_operand(L, arg, who, arg, {});
  }
  std::span<const jit::KernelArg> operands(in.data(), static_cast<std::size_t>(n));
  CallOptions o = read_call_options(L, options, who, {"out", "stream"});
  NDArray result;
  NDArray* target = &result;
  if (o.out && !(target = test_array(L, o.out)))
    fail("{}: option 'out' must be an ndarray, got {}", who, describe(L, o.out));
  ops::apply(name, operands, *target, o.stream);
  push_single_result(L, o, std::move(result), any_array(operands));
  return 1;
}

// luda.round(x [, decimals] [, {out =, stream =}]) and luda.around: NumPy's round.
int l_round(lua_State* L) {
  int options = 0;
  int n = split_options(L, 1, &options);
  if (n < 1 || n > 2) fail("luda.round takes 1 or 2 arguments (x [, decimals]), got {}", n);
  jit::KernelArg x = read_operand(L, 1, "luda.round", 1, {});
  std::int64_t decimals = n == 2 ? to_integer(L, 2, "luda.round", "decimals") : 0;
  CallOptions o = read_call_options(L, options, "luda.round", {"out", "stream"});
  NDArray result;
  NDArray* target = &result;
  if (o.out && !(target = test_array(L, o.out)))
    fail("luda.round: option 'out' must be an ndarray, got {}", describe(L, o.out));
  ops::round(x, decimals, *target, o.stream);
  push_single_result(L, o, std::move(result), x.kind == jit::KernelArg::Kind::Array);
  return 1;
}

// x:sum([axis] [, options]) and luda.sum(x [, axis] [, options]): upvalue 1 is the Reduce.
int l_reduce(lua_State* L) {
  auto op = static_cast<Reduce>(upvalue_integer(L, 1, 0, static_cast<int>(Reduce::NanArgmin)));  // ORDER REDUCE
  std::string_view name = ops::reduce_name(op);
  NDArray& x = check_array(L, 1, name);
  // dtype= for sum, prod, mean; initial= for sum, prod, max, min (and their nan forms), as NumPy's.
  bool dtype = ops::takes_dtype(op), initial = ops::takes_initial(op);
  static const auto calls = [] {  // the call's form, for the error of an argument after the options
    std::array<std::string, static_cast<std::size_t>(Reduce::NanArgmin) + 1> c;
    for (std::size_t i = 0; i < c.size(); ++i)
      c[i] = fmt::format("x:{}([axis] [, {{axis =, keepdims =, out =, stream =}}])",
                         ops::reduce_name(static_cast<Reduce>(i)));
    return c;
  }();
  auto read = [&](std::initializer_list<std::string_view> allowed) {
    return read_reduce_args(L, 1, x.ndim(), name, calls[static_cast<std::size_t>(op)], allowed);
  };
  ReduceArgs r = dtype && initial ? read({"axis", "keepdims", "dtype", "initial", "out", "stream"})
                 : dtype          ? read({"axis", "keepdims", "dtype", "out", "stream"})
                 : initial        ? read({"axis", "keepdims", "initial", "out", "stream"})
                                  : read({"axis", "keepdims", "out", "stream"});
  ops::ReduceOptions ro;
  ro.initial = r.initial;
  if (r.call.dtype) ro.dtype = check_dtype(L, r.call.dtype, name);
  NDArray result = ops::reduce(op, x, r.axes, r.keepdims, std::move(r.out), r.call.stream, ro);
  if (r.call.out) lua_pushvalue(L, r.call.out);
  else push_array(L, std::move(result));
  return 1;
}

// x:var([axis] [, {axis =, keepdims =, dtype =, ddof =, out =, stream =}]), std, nanvar,
// nanstd: upvalue 1 is 1 for the std forms (the root), upvalue 2 1 for the nan forms.
int l_moment(lua_State* L) {
  bool root = upvalue_integer(L, 1, 0, 1) == 1, nan = upvalue_integer(L, 2, 0, 1) == 1;
  const char* name = nan ? (root ? "nanstd" : "nanvar") : (root ? "std" : "var");
  NDArray& x = check_array(L, 1, name);
  ReduceArgs r =
      read_reduce_args(L, 1, x.ndim(), name,
                       fmt::format("x:{}([axis] [, {{axis =, keepdims =, dtype =, ddof =, out =, stream =}}])", name),
                       {"axis", "keepdims", "dtype", "ddof", "out", "stream"});
  std::optional<DType> dtype;
  if (r.call.dtype) dtype = check_dtype(L, r.call.dtype, name);
  double ddof = 0;
  if (int at = r.call.ddof) {
    if (lua_type(L, at) != LUA_TNUMBER) fail("{}: option 'ddof' must be a number, got {}", name, describe(L, at));
    ddof = lua_tonumber(L, at);
  }
  NDArray result = ops::moment(root, nan, x, r.axes, r.keepdims, ddof, dtype, std::move(r.out), r.call.stream);
  if (r.call.out) lua_pushvalue(L, r.call.out);
  else push_array(L, std::move(result));
  return 1;
}

// luda.dot(x, y [, {out =, stream =}]), luda.matmul(x, y [, {...}]) and x:matmul(y [, {...}]):
// an operation of two arrays into a new array or `out`.
using Binary = NDArray (*)(const NDArray&, const NDArray&, NDArray, const Stream*);
template <Binary Op, const char* Name>
int l_binary(lua_State* L) {
  NDArray& x = check_array(L, 1, Name);
  NDArray& y = check_array(L, 2, Name);
  int options = lua_isnoneornil(L, 3) ? 0 : 3;
  if (options) check_table(L, 3, Name);
  CallOptions o = read_call_options(L, options, Name, {"out", "stream"});
  NDArray out;
  if (o.out) {
    NDArray* given = test_array(L, o.out);
    if (!given) fail("{}: option 'out' must be an ndarray, got {}", Name, describe(L, o.out));
    out = *given;
  }
  NDArray result = Op(x, y, std::move(out), o.stream);
  if (o.out) lua_pushvalue(L, o.out);
  else push_array(L, std::move(result));
  return 1;
}
constexpr char kDot[] = "dot", kMatmul[] = "matmul", kVdot[] = "vdot", kInner[] = "inner", kOuter[] = "outer";
constexpr lua_CFunction l_dot = trampoline<l_binary<ops::dot, kDot>>;
constexpr lua_CFunction l_matmul = trampoline<l_binary<ops::matmul, kMatmul>>;

// A 1-based axis of an array of `ndim` axes, read as axis_arg reads it.
int array_axis(lua_State* L, int idx, int ndim, const char* who) {
  return axis_arg(L, idx, ndim, who, fmt::format(" for a {}-d array", ndim));
}
std::vector<int> array_axes(lua_State* L, int idx, int ndim, const char* who) {
  return axes_arg(L, idx, ndim, who, fmt::format(" for a {}-d array", ndim)).value_or(std::vector<int>{});
}

// luda.tensordot(x, y [, axes]): axes a count N (the last N of x with the first N of y;
// default 2) or {{x axes...}, {y axes...}} (1-based).
int l_tensordot(lua_State* L) {
  NDArray& x = check_array(L, 1, "tensordot");
  NDArray& y = check_array(L, 2, "tensordot");
  std::vector<int> xa, ya;
  if (lua_istable(L, 3)) {
    for (int side = 1; side <= 2; ++side) {
      if (lua_rawgeti(L, 3, side) != LUA_TTABLE)
        fail("tensordot: axes must be a count or {{{{x axes}}, {{y axes}}}}, got {} for side {}", describe(L, -1),
             side);
      (side == 1 ? xa : ya) = array_axes(L, lua_gettop(L), (side == 1 ? x : y).ndim(), "tensordot");
      lua_pop(L, 1);
    }
  } else {
    const std::int64_t n = lua_isnoneornil(L, 3) ? 2 : check_integer(L, 3, "tensordot");
    if (n < 0 || n > x.ndim() || n > y.ndim())
      fail("tensordot: axes={} sums over more axes than x ({}-d) or y ({}-d) has", n, x.ndim(), y.ndim());
    for (std::int64_t i = 0; i < n; ++i) {
      xa.push_back(static_cast<int>(x.ndim() - n + i));
      ya.push_back(static_cast<int>(i));
    }
  }
  push_array(L, ops::tensordot(x, y, xa, ya));
  return 1;
}

// luda.trace(x [, offset [, axis1 [, axis2]]]) and x:trace(...): axes 1-based, 1 and 2 by default.
int l_trace(lua_State* L) {
  NDArray& x = check_array(L, 1, "trace");
  const std::int64_t offset = lua_isnoneornil(L, 2) ? 0 : check_integer(L, 2, "trace");
  const int a1 = lua_isnoneornil(L, 3) ? 0 : array_axis(L, 3, x.ndim(), "trace");
  const int a2 = lua_isnoneornil(L, 4) ? 1 : array_axis(L, 4, x.ndim(), "trace");
  push_array(L, ops::trace(x, offset, a1, a2));
  return 1;
}

}  // namespace

void open_array_math(lua_State* L) {
  int module = lua_gettop(L);
  luaL_getmetatable(L, kArrayType);
  int meta = lua_gettop(L);
  for (const Operator& op : kOperators) {
    lua_pushstring(L, op.ufunc);
    lua_pushcclosure(L, trampoline<l_operator>, 1);
    lua_setfield(L, meta, op.metamethod);
  }
  for (const Operator& op : {Operator{"__lt", "less"}, Operator{"__le", "less_equal"}}) {
    lua_pushstring(L, op.ufunc);
    lua_pushcclosure(L, trampoline<l_order>, 1);
    lua_setfield(L, meta, op.metamethod);
  }
  // The ndarray's methods table is its __index closure's upvalue (array_bindings.cpp).
  lua_getfield(L, meta, "__index");
  LUDA_INTERNAL_CHECK(lua_getupvalue(L, -1, 1) != nullptr && lua_type(L, -1) == LUA_TTABLE);
  int methods = lua_gettop(L);
  for (int i = 0; i <= static_cast<int>(Reduce::NanArgmin); ++i) {  // ORDER REDUCE
    std::string name(ops::reduce_name(static_cast<Reduce>(i)));
    lua_pushinteger(L, i);
    lua_pushcclosure(L, trampoline<l_reduce>, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, methods, name.c_str());  // x:sum()
    lua_setfield(L, module, name.c_str());   // luda.sum(x)
  }
  for (const char* name : {"var", "std", "nanvar", "nanstd"}) {
    std::string_view n = name;
    lua_pushinteger(L, n.ends_with("std") ? 1 : 0);
    lua_pushinteger(L, n.starts_with("nan") ? 1 : 0);
    lua_pushcclosure(L, trampoline<l_moment>, 2);
    lua_pushvalue(L, -1);
    lua_setfield(L, methods, name);  // x:var()
    lua_setfield(L, module, name);   // luda.var(x)
  }
  lua_settop(L, module);
  for (std::string_view name : ops::ufunc_names()) {
    if (name == "log_base" || name == "atan2") continue;  // luda.log(x, base), luda.atan(y, x): below
    if (ops::is_step(name)) continue;                     // luda.round: below
    std::string n(name);
    lua_pushstring(L, n.c_str());
    lua_pushstring(L, n.c_str());
    lua_pushcclosure(L, trampoline<l_function>, 2);
    lua_setfield(L, module, n.c_str());
  }
  // luda.atan2(y, x) as NumPy's, beside luda.atan(y, x).
  lua_pushstring(L, "atan2");
  lua_pushstring(L, "atan2");
  lua_pushcclosure(L, trampoline<l_function>, 2);
  lua_setfield(L, module, "atan2");
  // NumPy's names where they differ from luda's, as the same functions.
  static constexpr std::array<std::array<const char*, 2>, 18> aliases = {{
      {"arcsin", "asin"},
      {"arccos", "acos"},
      {"arctan", "atan"},
      {"arctan2", "atan2"},
      {"arcsinh", "asinh"},
      {"arccosh", "acosh"},
      {"arctanh", "atanh"},
      {"true_divide", "divide"},
      {"remainder", "mod"},
      {"pow", "power"},
      {"absolute", "abs"},
      {"degrees", "rad2deg"},
      {"radians", "deg2rad"},
      {"bitwise_not", "invert"},
      {"bitwise_invert", "invert"},
      {"bitwise_left_shift", "left_shift"},
      {"bitwise_right_shift", "right_shift"},
      {"conjugate", "conj"},
  }};
  for (const auto& [alias, name] : aliases) {
    LUDA_INTERNAL_CHECK(lua_getfield(L, module, name) == LUA_TFUNCTION);
    lua_setfield(L, module, alias);
  }
  lua_pushcfunction(L, trampoline<l_round>);
  lua_pushvalue(L, -1);
  lua_setfield(L, module, "round");
  lua_setfield(L, module, "around");
  static const luaL_Reg linalg[] = {
      {"dot", l_dot},
      {"matmul", l_matmul},
      {"vdot", trampoline<l_binary<ops::vdot, kVdot>>},
      {"inner", trampoline<l_binary<ops::inner, kInner>>},
      {"outer", trampoline<l_binary<ops::outer, kOuter>>},
      {"tensordot", trampoline<l_tensordot>},
      {"trace", trampoline<l_trace>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, linalg, 0);
  luaL_getmetatable(L, kArrayType);
  lua_getfield(L, -1, "__index");
  LUDA_INTERNAL_CHECK(lua_getupvalue(L, -1, 1) != nullptr && lua_type(L, -1) == LUA_TTABLE);
  static const luaL_Reg array_methods[] = {{"matmul", l_matmul},
                                           {"dot", l_dot},
                                           {"trace", trampoline<l_trace>},
                                           {nullptr, nullptr}};
  luaL_setfuncs(L, array_methods, 0);  // x:matmul(y), x:dot(y), x:trace()
  LUDA_INTERNAL_CHECK(lua_getfield(L, module, "clip") == LUA_TFUNCTION);
  lua_setfield(L, -2, "clip");  // x:clip(lo, hi) is luda.clip(x, lo, hi), as NumPy's ndarray.clip
  lua_settop(L, module);
}

}  // namespace luda::lua

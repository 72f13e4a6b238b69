// Calling a kernel kind from Lua (kind_bindings.cpp makes them), and what array arithmetic
// (array_math_bindings.cpp) shares with it: reading operands and options, pushing results.
//   f(x, y [, {out = z, stream = s}])                 vectorize, fuse
//   k(x, w, b) / k(x, w, b, z) [, {stream =, size =}] elementwise
//   k(x, w, b [, {axis =, keepdims =, out =, stream =}]) reduction, fuse with a reduction
// The hot path, a cached call with outputs given, formats nothing and allocates nothing:
// operands are read in one pass into uninitialized stack storage, the options table in
// one pass (no key interned, no stream copied), axes into a stack array.
#include <algorithm>
#include <array>

#include "jit/kinds/layout.h"
#include "jit/kinds/make.h"
#include "ops/array_math.h"
#include "stdlib/kind_object.h"

namespace luda::lua {

// ---- shared with array_math_bindings.cpp ------------------------------------------------

jit::KernelArg read_operand(lua_State* L, int idx, std::string_view who, int position, std::string_view name) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      return lua_isinteger(L, idx) ? jit::KernelArg::of_int(lua_tointeger(L, idx))
                                   : jit::KernelArg::of_float(lua_tonumber(L, idx));
    case LUA_TBOOLEAN: return jit::KernelArg::of_bool(lua_toboolean(L, idx));
    case LUA_TUSERDATA:
      if (NDArray* a = test_array(L, idx)) return jit::KernelArg::of_array(*a);
      if (Scalar* s = test_scalar(L, idx)) return jit::KernelArg::of_typed(*s);
      break;
    default: break;
  }
  std::string what = lua_isnoneornil(L, idx) ? "nil" : "a " + type_name(L, idx);
  if (name.empty())
    fail("{}: argument {} is {}; pass arrays, numbers, booleans or typed scalars (luda.int32(v))", who, position, what);
  fail("{}: argument {} '{}' is {}; pass arrays, numbers, booleans or typed scalars (luda.int32(v))", who, position,
       name, what);
}

int split_options(lua_State* L, int first, int* options) {
  int top = lua_gettop(L);
  // A table with positional entries is an operand (and an error when read), not options.
  *options = top >= first && lua_type(L, top) == LUA_TTABLE && lua_rawlen(L, top) == 0 ? top : 0;
  return top - first + 1 - (*options ? 1 : 0);
}

CallOptions read_call_options(lua_State* L, int options, std::string_view who,
                              std::initializer_list<std::string_view> allowed) {
  CallOptions o;
  if (!options) return o;
  options = lua_absindex(L, options);
  // One pass over the table (a raw lookup per option would intern each key first): every
  // value stays on the stack, at the index its field records, below the key lua_next
  // goes on from.
  if (!lua_checkstack(L, static_cast<int>(allowed.size()) + 4)) fail("{}: too many values on the Lua stack", who);
  int stream = 0;
  lua_pushnil(L);
  while (lua_next(L, options)) {
    std::string_view key;
    bool known = false;
    if (lua_type(L, -2) == LUA_TSTRING) {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, -2, &len);
      key = std::string_view(s, len);
      for (std::string_view a : allowed) known = known || a == key;
    }
    if (!known) {
      lua_pop(L, 1);
      fail("{}: unknown option {}; expected {}", who, describe(L, -1), option_list(allowed));
    }
    lua_insert(L, -2);
    int at = lua_gettop(L) - 1;
    if (key == "out") o.out = at;
    else if (key == "stream") stream = at;
    else if (key == "axis") o.axis = at;
    else if (key == "keepdims") o.keepdims = at;
    else if (key == "size") o.size = at;
    else if (key == "dtype") o.dtype = at;
    else if (key == "initial") o.initial = at;
    else if (key == "ddof") o.ddof = at;
  }
  if (stream) {  // after the keys, so that an unknown key is reported before a bad stream
    if (Stream* s = test_stream(L, stream)) o.stream = s;
    else if (!(lua_isinteger(L, stream) && lua_tointeger(L, stream) == 0))
      fail("{}: option 'stream' must be a stream (luda.stream()) or 0 for the default stream, got {}", who,
           describe(L, stream));
  }
  return o;
}

void read_outputs(lua_State* L, int out, std::size_t nout, std::string_view who, std::span<NDArray> outs) {
  if (NDArray* a = test_array(L, out)) {
    if (nout != 1) fail("{}: option 'out' must be a table of {} arrays (one per output), got one array", who, nout);
    outs[0] = *a;
    return;
  }
  if (lua_type(L, out) != LUA_TTABLE)
    fail("{}: option 'out' must be an ndarray{}, got {}", who, nout == 1 ? "" : " table", describe(L, out));
  if (lua_rawlen(L, out) != nout)
    fail("{}: option 'out' has {} entries; the kernel has {} output{}", who, lua_rawlen(L, out), nout,
         nout == 1 ? "" : "s");
  for (std::size_t k = 0; k < nout; ++k) {
    lua_rawgeti(L, out, static_cast<lua_Integer>(k + 1));
    NDArray* a = test_array(L, -1);
    if (!a) fail("{}: out[{}] must be an ndarray, got {}", who, k + 1, describe(L, -1));
    outs[k] = *a;
    lua_pop(L, 1);
  }
}

void push_single_result(lua_State* L, const CallOptions& options, NDArray&& result, bool any_array) {
  if (options.out) {
    lua_pushvalue(L, options.out);
  } else if (!any_array) {
    std::vector<std::byte> bytes = result.to_host_bytes();
    push_scalar_value(L, Scalar::load(bytes.data(), result.dtype()));
  } else {
    push_array(L, std::move(result));
  }
}

bool any_array(std::span<const jit::KernelArg> args) {
  for (const jit::KernelArg& a : args)
    if (a.kind == jit::KernelArg::Kind::Array) return true;
  return false;
}

// ---- calls -----------------------------------------------------------------------------------

namespace {

using ArgStorage = KernelArgStorage<kMaxKindArgs>;

// The axes given (1-based, -1 the last) as 0-based, sorted, into axes; returns their count.
// Errors as ops::normalize_axes (which words them).
int normalize_axes(std::span<const std::int64_t> given, int ndim, std::string_view who, int* axes) {
  auto count = static_cast<int>(given.size());
  bool plain = count <= jit::kMaxKindDims;
  for (int i = 0; plain && i < count; ++i) {
    std::int64_t ax = given[static_cast<std::size_t>(i)];
    plain = ax != 0 && ax <= ndim && ax >= -ndim;
    int a = plain ? static_cast<int>(ax > 0 ? ax - 1 : ndim + ax) : 0;
    for (int j = 0; plain && j < i; ++j) plain = axes[j] != a;
    axes[i] = a;
  }
  if (!plain) {  // array_math's error for the axis at fault
    ops::normalize_axes(given, ndim, who);
    LUDA_INTERNAL_CHECK(false);
  }
  std::sort(axes, axes + count);
  return count;
}

// Reads the call's n operands (from stack index 2) into args.
void read_operands(lua_State* L, const KindObject& k, int n, jit::KernelArg* args) {
  for (int i = 0; i < n; ++i) {
    if (to_kernel_arg(L, i + 2, &args[i])) continue;
    auto at = static_cast<std::size_t>(i);  // not an operand: read_operand says why
    args[i] = read_operand(L, i + 2, k.who, i + 1, at < k.in_names.size() ? k.in_names[at] : std::string_view{});
  }
}

void check_count(const KindObject& k, int n) {
  auto nin = static_cast<int>(k.in_names.size());
  if (n == nin) return;
  std::string names;
  for (std::size_t i = 0; i < k.in_names.size(); ++i) names += (i ? ", " : "") + k.in_names[i];
  fail("{} takes {} argument{} ({}), got {}", k.who, nin, nin == 1 ? "" : "s", names, n);
}

// The ndim the operands broadcast to: that of the array with the most axes.
int broadcast_ndim(std::span<const jit::KernelArg> args) {
  int ndim = 0;
  for (const jit::KernelArg& a : args)
    if (a.kind == jit::KernelArg::Kind::Array) ndim = std::max(ndim, a.array->ndim());
  return ndim;
}

// The `axis` option (the value at idx): an integer or a sequence of them (1-based, -1 the
// last), written 0-based and sorted into axes; returns their count.
int read_axes(lua_State* L, int idx, int ndim, std::string_view who, int* axes) {
  std::int64_t given[jit::kMaxKindDims];
  if (lua_type(L, idx) == LUA_TNUMBER) {
    given[0] = lua_isinteger(L, idx) ? lua_tointeger(L, idx) : to_integer(L, idx, who, "option 'axis'");
    return normalize_axes({given, 1}, ndim, who, axes);
  }
  if (lua_type(L, idx) != LUA_TTABLE)
    fail("{}: option 'axis' must be an integer or a table of integers (1 is the first axis, -1 the last), got {}", who,
         describe(L, idx));
  auto n = static_cast<int>(lua_rawlen(L, idx));
  std::vector<std::int64_t> many;  // more axes than any array has: only for the error
  std::int64_t* out = given;
  if (n > jit::kMaxKindDims) {
    many.resize(static_cast<std::size_t>(n));
    out = many.data();
  }
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    out[i - 1] = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : to_integer(L, -1, who, fmt::format("axis[{}]", i));
    lua_pop(L, 1);
  }
  return normalize_axes({out, static_cast<std::size_t>(n)}, ndim, who, axes);
}

bool read_keepdims(lua_State* L, int idx, std::string_view who) {
  if (!idx) return false;
  if (lua_type(L, idx) != LUA_TBOOLEAN) fail("{}: option 'keepdims' must be a boolean, got {}", who, describe(L, idx));
  return lua_toboolean(L, idx);
}

// vectorize and elementwise fuse: f(x, y [, {out = z, stream = s}])
int call_single(lua_State* L, KindObject& k) {
  int options = 0;
  int n = split_options(L, 2, &options);
  check_count(k, n);
  ArgStorage storage;
  read_operands(L, k, n, storage.data());
  CallOptions o = read_call_options(L, options, k.who, {"out", "stream"});
  std::span<const jit::KernelArg> in(storage.data(), static_cast<std::size_t>(n));
  if (k.env) k.env->bind(L);
  if (o.out) {
    NDArray* target = test_array(L, o.out);
    if (!target) fail("{}: option 'out' must be an ndarray, got {}", k.who, describe(L, o.out));
    k.elementwise->call(in, std::span<NDArray>(target, 1), o.stream);
    lua_pushvalue(L, o.out);
    return 1;
  }
  NDArray result;
  k.elementwise->call(in, std::span<NDArray>(&result, 1), o.stream);
  push_single_result(L, o, std::move(result), any_array(in));
  return 1;
}

// elementwise: k(x, w, b) or k(x, w, b, z) [, {stream = s, size = n}]. A raw output
// (CuPy's `raw T y` in out_params) goes to the kind as an input after the inputs: the body
// indexes it, and it takes no part in the loop's shape.
int call_elementwise(lua_State* L, KindObject& k) {
  int options = 0;
  int n = split_options(L, 2, &options);
  auto nin = static_cast<int>(k.in_names.size()), nout = static_cast<int>(k.nout);
  const jit::StringKindState& s = *k.strings;
  if (n != nin && n != nin + nout) {
    std::string ins, outs;
    for (std::size_t i = 0; i < s.in.size(); ++i) ins += (i ? ", " : "") + s.in[i].name;
    for (std::size_t i = 0; i < s.out.size(); ++i) outs += (i ? ", " : "") + s.out[i].name;
    fail("{} takes {} input{} ({}) and optionally {} output{} ({}), got {} argument{}", k.who, nin, nin == 1 ? "" : "s",
         ins, nout, nout == 1 ? "" : "s", outs, n, n == 1 ? "" : "s");
  }
  ArgStorage storage;
  read_operands(L, k, nin, storage.data());
  std::span<const jit::KernelArg> in(storage.data(), static_cast<std::size_t>(nin));
  jit::check_raw_inputs(s, in);
  CallOptions o = read_call_options(L, options, k.who, {"stream", "size"});
  bool given = n > nin;
  jit::check_sizing(s, in, given, o.size != 0);
  for (int j = 0; j < nout && given; ++j)
    if (!test_array(L, 2 + nin + j))
      fail("{}: output {} '{}' must be an ndarray, got {}", k.who, j + 1, s.out[static_cast<std::size_t>(j)].name,
           describe(L, 2 + nin + j));
  if (given && nout == 1 && !s.out[0].raw) {  // the common case, with no copy of the output's handle
    k.elementwise->call(in, std::span<NDArray>(test_array(L, 2 + nin), 1), o.stream);
    lua_pushvalue(L, 2 + nin);
    return 1;
  }
  std::vector<NDArray> outs(k.nout);
  for (int j = 0; j < nout && given; ++j) outs[static_cast<std::size_t>(j)] = *test_array(L, 2 + nin + j);
  std::optional<std::int64_t> size;
  if (o.size) size = to_integer(L, o.size, k.who, "option 'size'");
  jit::run_elementwise(s, *k.elementwise, {storage.data(), static_cast<std::size_t>(nin + nout)},
                       static_cast<std::size_t>(nin), outs, size, o.stream);
  for (int j = 0; j < nout; ++j) {
    if (given) lua_pushvalue(L, 2 + nin + j);
    else push_array(L, std::move(outs[static_cast<std::size_t>(j)]));
  }
  return nout;
}

// fuse in two passes: the reductions' values, kept as size-1 axes so that they broadcast
// back, then the function elementwise over the inputs and them.
int call_fuse_two_passes(lua_State* L, KindObject& k, std::span<const jit::KernelArg> in,
                         std::optional<std::span<const int>> axes, const CallOptions& o) {
  check_two_pass_values(*k.fuse, in);
  std::vector<NDArray> reduced(k.fuse->shape.ops.size());
  k.fuse_first->call(in, reduced, axes, true, o.stream);
  std::vector<jit::KernelArg> args(in.begin(), in.end());
  for (const NDArray& r : reduced) args.push_back(jit::KernelArg::of_array(r));
  std::vector<NDArray> outs(k.nout);
  if (o.out) read_outputs(L, o.out, k.nout, k.who, outs);
  k.fuse_second->call(args, outs, o.stream);
  if (o.out) {
    if (lua_istable(L, o.out)) {
      for (std::size_t j = 0; j < k.nout; ++j) lua_rawgeti(L, o.out, static_cast<lua_Integer>(j + 1));
    } else {
      lua_pushvalue(L, o.out);
    }
    return static_cast<int>(k.nout);
  }
  for (NDArray& a : outs) push_array(L, std::move(a));
  return static_cast<int>(k.nout);
}

// reduction: k(x, w, b [, {axis =, keepdims =, out =, stream =}]); fuse with reductions alike.
int call_reduction(lua_State* L, KindObject& k) {
  int options = 0;
  int n = split_options(L, 2, &options);
  check_count(k, n);
  ArgStorage storage;
  read_operands(L, k, n, storage.data());
  std::span<const jit::KernelArg> in(storage.data(), static_cast<std::size_t>(n));
  const std::string& who = k.who;
  int ndim = broadcast_ndim(in);
  int axis_list[jit::kMaxKindDims];
  int naxes = -1;  // every axis
  bool keepdims = false;
  CallOptions o;
  if (k.fuse) {
    o = read_call_options(L, options, who, {"out", "stream"});
    if (const std::vector<int>& written = k.fuse->shape.axes; k.fuse->shape.axis_given) {
      std::int64_t given[jit::kMaxKindDims];
      std::vector<std::int64_t> many;  // more axes than any array has: only for the error
      std::span<const std::int64_t> axes_given;
      if (written.size() <= jit::kMaxKindDims) {
        std::copy(written.begin(), written.end(), given);
        axes_given = {given, written.size()};
      } else {
        many.assign(written.begin(), written.end());
        axes_given = many;
      }
      naxes = normalize_axes(axes_given, ndim, who, axis_list);
    }
  } else {
    o = read_call_options(L, options, who, {"axis", "keepdims", "out", "stream"});
    if (o.axis) naxes = read_axes(L, o.axis, ndim, who, axis_list);
    keepdims = read_keepdims(L, o.keepdims, who);
  }
  std::optional<std::span<const int>> axes;
  if (naxes >= 0) axes = std::span<const int>(axis_list, static_cast<std::size_t>(naxes));
  if (k.env) k.env->bind(L);
  if (k.fuse_second && fuse_needs_two_passes(*k.fuse, in)) return call_fuse_two_passes(L, k, in, axes, o);
  if (o.out && k.nout == 1) {  // the common case, with no copy of the output's handle
    if (NDArray* target = test_array(L, o.out)) {
      k.reduction->call(in, std::span<NDArray>(target, 1), axes, keepdims, o.stream);
      lua_pushvalue(L, o.out);
      return 1;
    }
  }
  std::vector<NDArray> outs(k.nout);
  if (o.out) read_outputs(L, o.out, k.nout, who, outs);
  k.reduction->call(in, outs, axes, keepdims, o.stream);
  if (o.out) {  // the arrays given, as given
    for (std::size_t j = 0; j < k.nout; ++j) lua_rawgeti(L, o.out, static_cast<lua_Integer>(j + 1));
    return static_cast<int>(k.nout);
  }
  for (NDArray& a : outs) push_array(L, std::move(a));
  return static_cast<int>(k.nout);
}

}  // namespace

KindObject* test_kind(lua_State* L, int idx) {
  const void* t = userdata_tag(L, idx);
  if (!is_kind_tag(t)) return nullptr;
  return &object_at<KindObject>(L, idx, static_cast<const char*>(t));
}

namespace {

// __call.
int call_kind(lua_State* L) {
  KindObject* k = test_kind(L, 1);
  if (!k) type_error(L, 1, "call", "kernel kind (vectorize, elementwise, reduction or fuse)");
  keep_for_graph(L, 1);
  if (k->type == kElementwiseType) return call_elementwise(L, *k);
  // A vectorize function's reduction kernel (made by f:reduce) is for f:reduce alone.
  if (k->reduction && k->type != kVectorizeType) return call_reduction(L, *k);
  return call_single(L, *k);
}

}  // namespace

void set_call_metamethods(lua_State* L) {
  for (const char* type : {kVectorizeType, kElementwiseType, kReductionType, kFuseType}) {
    luaL_getmetatable(L, type);
    lua_pushcfunction(L, trampoline<call_kind>);
    lua_setfield(L, -2, "__call");
    lua_pop(L, 1);
  }
}

}  // namespace luda::lua

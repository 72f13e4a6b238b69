// The kernel kinds in Lua (DESIGN.md "Kernel kinds"), each a userdata over a jit kind:
//   local add = luda.vectorize(function(x, y) return x + y end)          -- per input dtypes
//   local add = luda.vectorize({"float32(float32, float32)", ...}, fn)   -- eager signatures
//   add(x, y), add(x, 2.5), add(1, 2) --> 3, add(x, y, {out = z, stream = s})
//   local layer = luda.elementwise("T x, T w, T b", "T z", "z = x * w + b", "layer")
//   layer(x, w, b) / layer(x, w, b, z) / layer(x, w, b, {stream = s, size = n})
//   local dnn = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnn")
//   dnn(x, w, 0.5, {axis = 1 | {1, 2}, keepdims = true, out = z, stream = s})
//   local f = luda.fuse(function(x, w, b) return luda.sum(x * w + b, -1) end)
// Every object has .lua (the function, or the body text), .name, :inspect("types" |
// "cuda", sig), :stats(); vectorize has :compile(sig).
#include "stdlib/kind_bindings.h"

#include <memory>
#include <new>

#include "dsl/device_function.h"
#include "dsl/kind_source.h"
#include "jit/kinds.h"
#include "stdlib/array_math.h"
#include "stdlib/environment.h"
#include "stdlib/function_source.h"
#include "stdlib/kind_frontend.h"

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
  if (name.empty()) fail("{}: argument {} is {}; pass arrays, numbers, booleans or typed scalars (luda.int32(v))", who, position, what);
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
  std::string bad = unknown_option(L, options, allowed);
  if (!bad.empty()) fail("{}: unknown option {}; expected {}", who, bad, option_list(allowed));
  if (push_option(L, options, "out") != LUA_TNIL) o.out = lua_gettop(L);  // stays on the stack
  else lua_pop(L, 1);
  o.stream = stream_option(L, options, who);
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

namespace {

constexpr const char* kVectorizeType = "vectorize";
constexpr const char* kElementwiseType = "elementwise_kernel";
constexpr const char* kReductionType = "reduction_kernel";
constexpr const char* kFuseType = "fused_function";

// ---- the objects ---------------------------------------------------------------------------

struct KindObject {
  const char* type = kVectorizeType;
  std::string name;
  std::vector<std::string> in_names;
  std::size_t nout = 1;
  std::unique_ptr<LuaEnvironment> env;  // before the kinds: destroyed after them
  std::shared_ptr<VectorizeState> vectorize;
  std::shared_ptr<StringKindState> strings;
  std::shared_ptr<FuseState> fuse;
  std::unique_ptr<jit::ElementwiseKind> elementwise;
  std::unique_ptr<jit::ReductionKind> reduction;
  std::string who;  // "vectorize 'add'": starts messages (made once: calls format nothing)
};

KindObject* test_kind(lua_State* L, int idx) {
  for (const char* t : {kVectorizeType, kElementwiseType, kReductionType, kFuseType})
    if (auto* k = test_object<KindObject>(L, idx, t)) return k;
  return nullptr;
}

KindObject& check_kind(lua_State* L, int idx, std::string_view fname) {
  if (KindObject* k = test_kind(L, idx)) return *k;
  type_error(L, idx, fname, "kernel kind (vectorize, elementwise, reduction or fuse)");
}

// Pushes the object as a userdata whose user value is `lua` (k.lua).
KindObject& push_kind(lua_State* L, KindObject object, int lua) {
  lua = lua_absindex(L, lua);
  const char* type = object.type;
  object.who = fmt::format("{} '{}'", type == kVectorizeType    ? "vectorize"
                                      : type == kElementwiseType ? "elementwise"
                                      : type == kReductionType   ? "reduction"
                                                                 : "fuse",
                           object.name);
  void* mem = lua_newuserdatauv(L, sizeof(Box<KindObject>), 1);
  auto* box = new (mem) Box<KindObject>{std::move(object), true};
  luaL_setmetatable(L, type);
  lua_pushvalue(L, lua);
  lua_setiuservalue(L, -2, 1);
  return box->value;
}

// Releases an environment's registry table when making its object fails (a made object
// releases it in __gc).
struct EnvironmentGuard {
  lua_State* L;
  LuaEnvironment* env;
  ~EnvironmentGuard() {
    if (env) env->release(L);
  }
};

jit::JitOptions read_kind_options(lua_State* L, int idx, std::string_view fname,
                                  std::initializer_list<std::string_view> allowed, std::string* name) {
  check_options(L, idx, fname, allowed);
  jit::JitOptions o;
  for (auto [key, flag] : {std::pair{"fastmath", &o.fastmath}, std::pair{"boundscheck", &o.boundscheck}}) {
    int type = push_option(L, idx, key);
    if (type == LUA_TBOOLEAN) *flag = lua_toboolean(L, -1);
    else if (type != LUA_TNIL) fail("{}: option '{}' must be a boolean, got {}", fname, key, describe(L, -1));
    lua_pop(L, 1);
  }
  if (name) {
    int type = push_option(L, idx, "name");
    if (type == LUA_TSTRING) *name = lua_tostring(L, -1);
    else if (type != LUA_TNIL) fail("{}: option 'name' must be a string, got {}", fname, describe(L, -1));
    lua_pop(L, 1);
  }
  return o;
}

LuaFunction lua_function(lua_State* L, int idx, LuaEnvironment& env, std::string_view fname, std::string name) {
  LuaFunction f;
  f.source = function_source(L, idx);  // first: its error names a C function as such
  lua_Debug ar;
  lua_pushvalue(L, idx);
  lua_getinfo(L, ">u", &ar);
  if (ar.isvararg)
    fail("{}: the function takes ... (a vararg); name each input as a parameter", fname);
  f.handle = env.add_function(idx);
  f.env = &env;
  f.name = name.empty() ? function_name(f.source) : std::move(name);
  if (f.name.empty()) f.name = "fn";
  f.params = parameter_names(L, idx);
  return f;
}

// luda.vectorize(fn [, options]), luda.vectorize(sigs, fn [, options]), luda.vectorize(sigs)(fn)
void make_vectorize(lua_State* L, int sigs, int fn, int opts) {
  std::string name;
  jit::JitOptions options = read_kind_options(L, opts, "vectorize", {"fastmath", "name"}, &name);
  KindObject k;
  k.type = kVectorizeType;
  k.env = std::make_unique<LuaEnvironment>(L);
  EnvironmentGuard guard{L, k.env.get()};
  auto state = std::make_shared<VectorizeState>();
  state->fn = lua_function(L, fn, *k.env, "vectorize", name);
  state->fn.options = options;
  k.name = state->fn.name;
  k.in_names = state->fn.params;
  std::string who = state->who();
  if (sigs) {
    state->dynamic = false;
    if (lua_type(L, sigs) == LUA_TSTRING) {
      add_signature(*state, parse_vectorize_signature(lua_tostring(L, sigs), state->fn, who));
    } else {
      auto n = static_cast<int>(lua_rawlen(L, sigs));
      if (n == 0) fail("{}: the signature table is empty; give signatures (\"float32(float32, float32)\") or none", who);
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, sigs, i);
        if (lua_type(L, -1) != LUA_TSTRING)
          fail("{}: signatures[{}] must be a string such as \"float32(float32, float32)\", got {}", who, i,
               describe(L, -1));
        add_signature(*state, parse_vectorize_signature(lua_tostring(L, -1), state->fn, who));
        lua_pop(L, 1);
      }
    }
  }
  jit::ElementwiseSetup setup;
  setup.kind = "vectorize";
  setup.name = k.name;
  setup.in_names = k.in_names;
  setup.out_names = {"out"};
  setup.raw.assign(k.in_names.size(), false);
  setup.out_read = {false};
  setup.options = options;
  setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                           dsl::Target target) { return vectorize_code(*state, inputs, target); };
  k.elementwise = std::make_unique<jit::ElementwiseKind>(std::move(setup));
  k.vectorize = state;
  guard.env = nullptr;
  KindObject& object = push_kind(L, std::move(k), fn);
  object.env->bind(L);
  for (const dsl::Signature& sig : state->signatures) object.elementwise->compile(sig.params, current_device());
}

int l_vectorize_decorate(lua_State* L) {
  check_function(L, 1, "vectorize");
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  make_vectorize(L, 2, 1, 3);
  return 1;
}

int l_vectorize(lua_State* L) {
  int t1 = lua_type(L, 1);
  if (t1 == LUA_TFUNCTION) {
    make_vectorize(L, 0, 1, 2);
    return 1;
  }
  if (t1 != LUA_TSTRING && t1 != LUA_TTABLE)
    type_error(L, 1, "vectorize", "function, signature string or table of signatures");
  if (lua_isnoneornil(L, 2) || lua_type(L, 2) == LUA_TTABLE) {  // luda.vectorize(sigs [, options])(fn)
    read_kind_options(L, 2, "vectorize", {"fastmath", "name"}, nullptr);
    lua_settop(L, 2);
    lua_pushcclosure(L, trampoline<l_vectorize_decorate>, 2);
    return 1;
  }
  check_function(L, 2, "vectorize");
  make_vectorize(L, 1, 2, 3);
  return 1;
}

// luda.elementwise(in_params, out_params, body [, name] [, options])
int l_elementwise(lua_State* L) {
  std::string_view in = check_string(L, 1, "elementwise");
  std::string_view out = check_string(L, 2, "elementwise");
  std::string_view body = check_string(L, 3, "elementwise");
  int opts = lua_type(L, 4) == LUA_TTABLE ? 4 : 5;
  std::string_view name = opts == 5 && !lua_isnoneornil(L, 4) ? check_string(L, 4, "elementwise") : "kernel";
  auto state = std::make_shared<StringKindState>();
  state->kind = "elementwise";
  state->name = std::string(name);
  state->options = read_kind_options(L, opts, "elementwise", {"fastmath", "boundscheck"}, nullptr);
  state->in = dsl::parse_kind_params(in, "in_params", "elementwise", name, false);
  state->out = dsl::parse_kind_params(out, "out_params", "elementwise", name, false);
  if (state->out.empty()) fail("{}: out_params names no output; an elementwise kernel writes at least one", state->who());
  state->body = std::string(body);
  // The body's syntax and which outputs it reads, known now (any dtypes will do).
  std::vector<dsl::Scalar> any(state->in.size() + state->out.size(), dsl::Scalar::Float64);
  std::vector<bool> out_read = dsl::elementwise_function(state->in, state->out, any, body, name).out_read;
  KindObject k;
  k.type = kElementwiseType;
  k.name = state->name;
  k.nout = state->out.size();
  jit::ElementwiseSetup setup;
  setup.kind = "elementwise";
  setup.name = k.name;
  for (const dsl::KindParam& p : state->in) {
    setup.in_names.push_back(p.name);
    setup.raw.push_back(p.raw);
  }
  for (const dsl::KindParam& p : state->out) setup.out_names.push_back(p.name);
  setup.out_read = out_read;
  setup.index_args = true;
  setup.options = state->options;
  setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>> outputs,
                           dsl::Target target) { return elementwise_code(*state, inputs, outputs, target); };
  k.in_names = setup.in_names;
  k.elementwise = std::make_unique<jit::ElementwiseKind>(std::move(setup));
  k.strings = state;
  push_kind(L, std::move(k), 3);
  return 1;
}

// luda.reduction(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity [, name] [, options])
int l_reduction(lua_State* L) {
  std::string_view text[6];
  for (int i = 0; i < 6; ++i) text[i] = check_string(L, i + 1, "reduction");
  int opts = lua_type(L, 7) == LUA_TTABLE ? 7 : 8;
  std::string_view name = opts == 8 && !lua_isnoneornil(L, 7) ? check_string(L, 7, "reduction") : "kernel";
  auto state = std::make_shared<StringKindState>();
  state->kind = "reduction";
  state->name = std::string(name);
  state->options = read_kind_options(L, opts, "reduction", {"fastmath", "reduce_type"}, nullptr);
  int type = push_option(L, opts, "reduce_type");
  if (type == LUA_TSTRING) state->reduce_type = lua_tostring(L, -1);
  else if (DType d; dtype_of_constructor(L, -1, &d)) state->reduce_type = std::string(dtype_name(d));
  else if (type != LUA_TNIL)
    fail("{}: option 'reduce_type' must be a dtype (\"float32\") or a placeholder, got {}", state->who(), describe(L, -1));
  lua_pop(L, 1);
  state->in = dsl::parse_kind_params(text[0], "in_params", "reduction", name, true);
  state->out = dsl::parse_kind_params(text[1], "out_params", "reduction", name, true);
  if (state->out.empty()) fail("{}: out_params names no output; a reduction writes at least one", state->who());
  state->map = std::string(text[2]);
  state->reduce = std::string(text[3]);
  state->post = std::string(text[4]);
  state->identity = std::string(text[5]);
  if (!state->reduce_type.empty() && !dsl::parse_scalar(state->reduce_type)) {
    bool known = false;
    for (const auto* ps : {&state->in, &state->out})
      for (const dsl::KindParam& p : *ps) known = known || p.placeholder == state->reduce_type;
    if (!known)
      fail("{}: option 'reduce_type' is '{}': neither a dtype nor a placeholder of the parameters", state->who(),
           state->reduce_type);
  }
  // The expressions' syntax, checked now (any dtypes will do).
  std::vector<dsl::Scalar> any(state->in.size() + state->out.size(), dsl::Scalar::Float64);
  dsl::reduction_functions(state->in, state->out, any, dsl::Scalar::Float64,
                           std::vector<bool>(state->in.size(), false), state->map, state->reduce, state->post,
                           state->identity, name);
  KindObject k;
  k.type = kReductionType;
  k.name = state->name;
  k.nout = state->out.size();
  jit::ReductionSetup setup;
  setup.kind = "reduction";
  setup.name = k.name;
  for (const dsl::KindParam& p : state->in) setup.in_names.push_back(p.name);
  for (const dsl::KindParam& p : state->out) setup.out_names.push_back(p.name);
  setup.options = state->options;
  setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>> outputs,
                           dsl::Target target) { return reduction_code(*state, inputs, outputs, target); };
  k.in_names = setup.in_names;
  k.reduction = std::make_unique<jit::ReductionKind>(std::move(setup));
  k.strings = state;
  push_kind(L, std::move(k), 3);
  return 1;
}

// luda.fuse(fn [, {name =, fastmath =}])
int l_fuse(lua_State* L) {
  check_function(L, 1, "fuse");
  std::string name;
  jit::JitOptions options = read_kind_options(L, 2, "fuse", {"fastmath", "name"}, &name);
  KindObject k;
  k.type = kFuseType;
  k.env = std::make_unique<LuaEnvironment>(L);
  EnvironmentGuard guard{L, k.env.get()};
  auto state = std::make_shared<FuseState>();
  state->fn = lua_function(L, 1, *k.env, "fuse", name);
  state->fn.options = options;
  state->shape = dsl::analyze_fuse(state->fn.source);
  k.name = state->fn.name;
  k.in_names = state->fn.params;
  if (!state->shape.reduction) {
    jit::ElementwiseSetup setup;
    setup.kind = "fuse";
    setup.name = k.name;
    setup.in_names = k.in_names;
    setup.out_names = {"out"};
    setup.raw.assign(k.in_names.size(), false);
    setup.out_read = {false};
    setup.options = options;
    setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                             dsl::Target target) {
      std::vector<dsl::Type> params(inputs.begin(), inputs.end());
      return element_code(typed(state->fn, std::move(params), target), state->who());
    };
    k.elementwise = std::make_unique<jit::ElementwiseKind>(std::move(setup));
  } else {
    jit::ReductionSetup setup;
    setup.kind = "fuse";
    setup.name = k.name;
    setup.in_names = k.in_names;
    setup.out_names = {"out"};
    setup.options = options;
    setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                             dsl::Target target) { return fuse_reduction_code(*state, inputs, target); };
    k.reduction = std::make_unique<jit::ReductionKind>(std::move(setup));
  }
  k.fuse = state;
  guard.env = nullptr;
  push_kind(L, std::move(k), 1);
  return 1;
}

// ---- calls -----------------------------------------------------------------------------------

// Reads the call's operands (from stack index 2) into args; returns their count.
std::size_t read_operands(lua_State* L, const KindObject& k, int n, std::array<jit::KernelArg, kMaxKindArgs>& args) {
  for (int i = 0; i < n; ++i) {
    auto at = static_cast<std::size_t>(i);
    args[at] = read_operand(L, i + 2, k.who, i + 1, at < k.in_names.size() ? k.in_names[at] : std::string_view{});
  }
  return static_cast<std::size_t>(n);
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

// `axis` of the options table: nil, an integer, or a sequence of them (1-based).
std::optional<std::vector<int>> read_axes(lua_State* L, int options, int ndim, std::string_view who) {
  if (!options) return std::nullopt;
  int type = push_option(L, options, "axis");
  std::optional<std::vector<int>> axes;
  std::vector<std::int64_t> given;
  if (type == LUA_TNUMBER) {
    given.push_back(to_integer(L, -1, who, "option 'axis'"));
  } else if (type == LUA_TTABLE) {
    auto n = static_cast<int>(lua_rawlen(L, -1));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      given.push_back(to_integer(L, -1, who, fmt::format("axis[{}]", i)));
      lua_pop(L, 1);
    }
  } else if (type != LUA_TNIL) {
    fail("{}: option 'axis' must be an integer or a table of integers (1 is the first axis, -1 the last), got {}", who,
         describe(L, -1));
  }
  lua_pop(L, 1);
  if (type != LUA_TNIL) axes = array_math::normalize_axes(given, ndim, who);
  return axes;
}

bool read_keepdims(lua_State* L, int options, std::string_view who) {
  if (!options) return false;
  int type = push_option(L, options, "keepdims");
  bool keep = type == LUA_TBOOLEAN && lua_toboolean(L, -1);
  if (type != LUA_TNIL && type != LUA_TBOOLEAN)
    fail("{}: option 'keepdims' must be a boolean, got {}", who, describe(L, -1));
  lua_pop(L, 1);
  return keep;
}

// vectorize and elementwise fuse: f(x, y [, {out = z, stream = s}])
int call_single(lua_State* L, KindObject& k) {
  int options = 0;
  int n = split_options(L, 2, &options);
  check_count(k, n);
  std::array<jit::KernelArg, kMaxKindArgs> args;
  read_operands(L, k, n, args);
  CallOptions o = read_call_options(L, options, k.who, {"out", "stream"});
  std::span<const jit::KernelArg> in(args.data(), static_cast<std::size_t>(n));
  NDArray result;
  NDArray* target = &result;
  if (o.out && !(target = test_array(L, o.out)))
    fail("{}: option 'out' must be an ndarray, got {}", k.who, describe(L, o.out));
  if (k.env) k.env->bind(L);
  k.elementwise->call(in, std::span<NDArray>(target, 1), o.stream ? &*o.stream : nullptr);
  push_single_result(L, o, std::move(result), any_array(in));
  return 1;
}

// CuPy's `size` for an elementwise call whose inputs are all raw or scalars: the outputs
// not given become 1-D arrays of `size` elements, where the arrays are, of their bound dtypes.
void allocate_sized_outputs(lua_State* L, KindObject& k, std::span<const jit::KernelArg> in, std::span<NDArray> outs,
                            const Stream* stream) {
  std::int64_t size = to_integer(L, -1, k.who, "option 'size'");
  if (size < 0) fail("{}: option 'size' is {}; it must be 0 or more", k.who, size);
  std::vector<dsl::Type> types;
  std::optional<Device> device;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const jit::KernelArg& a = in[i];
    switch (a.kind) {
      case jit::KernelArg::Kind::Array:
        if (!k.strings->in[i].raw)
          fail("{}: option 'size' is for calls whose inputs are all raw or scalars; here the arrays give the size",
               k.who);
        device = a.array->device();
        types.push_back(dsl::Type::array_of(to_scalar_kind(a.array->dtype()), a.array->ndim()));
        break;
      case jit::KernelArg::Kind::Int: types.push_back(dsl::Type::scalar_of(dsl::Scalar::Int64, true)); break;
      case jit::KernelArg::Kind::Float: types.push_back(dsl::Type::scalar_of(dsl::Scalar::Float64, true)); break;
      case jit::KernelArg::Kind::Bool: types.push_back(dsl::Type::scalar_of(dsl::Scalar::Bool)); break;
      case jit::KernelArg::Kind::Typed: types.push_back(dsl::Type::scalar_of(to_scalar_kind(a.typed.dtype))); break;
    }
  }
  std::vector<std::optional<dsl::Scalar>> given;
  for (const NDArray& a : outs) given.push_back(a.valid() ? std::optional(to_scalar_kind(a.dtype())) : std::nullopt);
  std::vector<dsl::Scalar> bound = bind_types(*k.strings, types, given);
  for (std::size_t j = 0; j < outs.size(); ++j)
    if (!outs[j].valid())
      outs[j] = NDArray::empty({size}, to_dtype(bound[in.size() + j]), device.value_or(current_device()), stream);
}

// elementwise: k(x, w, b) or k(x, w, b, z) [, {stream = s, size = n}]
int call_elementwise(lua_State* L, KindObject& k) {
  int options = 0;
  int n = split_options(L, 2, &options);
  auto nin = static_cast<int>(k.in_names.size()), nout = static_cast<int>(k.nout);
  if (n != nin && n != nin + nout) {
    const StringKindState& s = *k.strings;
    std::string ins, outs;
    for (std::size_t i = 0; i < s.in.size(); ++i) ins += (i ? ", " : "") + s.in[i].name;
    for (std::size_t i = 0; i < s.out.size(); ++i) outs += (i ? ", " : "") + s.out[i].name;
    fail("{} takes {} input{} ({}) and optionally {} output{} ({}), got {} argument{}", k.who, nin,
         nin == 1 ? "" : "s", ins, nout, nout == 1 ? "" : "s", outs, n, n == 1 ? "" : "s");
  }
  std::array<jit::KernelArg, kMaxKindArgs> args;
  read_operands(L, k, nin, args);
  std::span<const jit::KernelArg> in(args.data(), static_cast<std::size_t>(nin));
  bool sized = false;  // a non-raw array input gives the size
  for (std::size_t i = 0; i < in.size(); ++i) {
    bool raw = k.strings->in[i].raw;
    if (raw && in[i].kind != jit::KernelArg::Kind::Array)
      fail("{}: argument {} '{}' is raw: pass an array, got {}", k.who, i + 1, k.strings->in[i].name,
           jit::describe_arg(in[i]));
    sized = sized || (!raw && in[i].kind == jit::KernelArg::Kind::Array);
  }
  CallOptions o = read_call_options(L, options, k.who, {"stream", "size"});
  const Stream* stream = o.stream ? &*o.stream : nullptr;
  bool given = n > nin;
  if (!sized && !given) {
    bool size = options && push_option(L, options, "size") != LUA_TNIL;
    if (!size)
      fail("{}: no array argument gives the size of the loop (raw arrays and scalars do not); pass the outputs or "
           "{{size = n}}",
           k.who);
    lua_pop(L, 1);
  }
  for (int j = 0; j < nout && given; ++j)
    if (!test_array(L, 2 + nin + j))
      fail("{}: output {} '{}' must be an ndarray, got {}", k.who, j + 1,
           k.strings->out[static_cast<std::size_t>(j)].name, describe(L, 2 + nin + j));
  if (given && nout == 1) {  // the common case, with no copy of the output's handle
    k.elementwise->call(in, std::span<NDArray>(test_array(L, 2 + nin), 1), stream);
    lua_pushvalue(L, 2 + nin);
    return 1;
  }
  std::vector<NDArray> outs(k.nout);
  for (int j = 0; j < nout && given; ++j) outs[static_cast<std::size_t>(j)] = *test_array(L, 2 + nin + j);
  if (options) {
    if (push_option(L, options, "size") != LUA_TNIL) allocate_sized_outputs(L, k, in, outs, stream);
    lua_pop(L, 1);
  }
  k.elementwise->call(in, outs, stream);
  for (int j = 0; j < nout; ++j) {
    if (given) lua_pushvalue(L, 2 + nin + j);
    else push_array(L, std::move(outs[static_cast<std::size_t>(j)]));
  }
  return nout;
}

// reduction: k(x, w, b [, {axis =, keepdims =, out =, stream =}]); fuse with a final reduction alike.
int call_reduction(lua_State* L, KindObject& k) {
  int options = 0;
  int n = split_options(L, 2, &options);
  check_count(k, n);
  std::array<jit::KernelArg, kMaxKindArgs> args;
  read_operands(L, k, n, args);
  std::span<const jit::KernelArg> in(args.data(), static_cast<std::size_t>(n));
  const std::string& who = k.who;
  int ndim = broadcast_ndim(in);
  std::optional<std::vector<int>> axes;
  bool keepdims = false;
  CallOptions o;
  if (k.fuse) {
    o = read_call_options(L, options, who, {"out", "stream"});
    if (k.fuse->shape.axis_given) {
      std::vector<std::int64_t> given(k.fuse->shape.axes.begin(), k.fuse->shape.axes.end());
      axes = array_math::normalize_axes(given, ndim, who);
    }
  } else {
    o = read_call_options(L, options, who, {"axis", "keepdims", "out", "stream"});
    axes = read_axes(L, options, ndim, who);
    keepdims = read_keepdims(L, options, who);
  }
  const Stream* stream = o.stream ? &*o.stream : nullptr;
  if (k.env) k.env->bind(L);
  if (o.out && k.nout == 1 && test_array(L, o.out)) {  // the common case, with no copy of the output's handle
    k.reduction->call(in, std::span<NDArray>(test_array(L, o.out), 1), axes, keepdims, stream);
    lua_pushvalue(L, o.out);
    return 1;
  }
  std::vector<NDArray> outs(k.nout);
  if (o.out) read_outputs(L, o.out, k.nout, who, outs);
  k.reduction->call(in, outs, axes, keepdims, stream);
  if (o.out) {  // the arrays given, as given
    for (std::size_t j = 0; j < k.nout; ++j) lua_rawgeti(L, o.out, static_cast<lua_Integer>(j + 1));
    return static_cast<int>(k.nout);
  }
  for (NDArray& a : outs) push_array(L, std::move(a));
  return static_cast<int>(k.nout);
}

int l_call(lua_State* L) {
  KindObject& k = check_kind(L, 1, "call");
  if (k.type == kElementwiseType) return call_elementwise(L, k);
  if (k.reduction) return call_reduction(L, k);
  return call_single(L, k);
}

// ---- methods ---------------------------------------------------------------------------------

// The input types of a signature, for compile and inspect.
std::vector<dsl::Type> signature_inputs(lua_State* L, KindObject& k, int idx, std::string_view fname) {
  if (lua_isnoneornil(L, idx)) {
    if (k.vectorize && k.vectorize->signatures.size() == 1) return k.vectorize->signatures[0].params;
    fail("{}: {} needs the signature of the inputs, as \"float32(float32, float32)\"", k.who, fname);
  }
  std::string_view text = check_string(L, idx, fname);
  dsl::Signature sig = dsl::parse_signature(text);
  if (sig.params.size() != k.in_names.size())
    fail("{}: the signature '{}' has {} parameter{} but the kernel takes {}", k.who, text, sig.params.size(),
         sig.params.size() == 1 ? "" : "s", k.in_names.size());
  return sig.params;
}

// f:compile(sig): vectorize only; the signature joins the object's signatures.
int l_compile(lua_State* L) {
  KindObject& k = check_kind(L, 1, "compile");
  if (!k.vectorize) fail("{}: compile is for vectorize functions; other kinds compile at their first call", k.who);
  std::string_view text = check_string(L, 2, "compile");
  dsl::Signature sig = parse_vectorize_signature(text, k.vectorize->fn, k.who);
  std::vector<dsl::Type> params = sig.params;
  add_signature(*k.vectorize, std::move(sig));
  k.env->bind(L);
  k.elementwise->compile(params, current_device());
  lua_settop(L, 1);
  return 1;
}

// k:inspect("types" | "cuda" [, sig])
int l_inspect(lua_State* L) {
  KindObject& k = check_kind(L, 1, "inspect");
  std::string_view what = check_string(L, 2, "inspect");
  std::vector<dsl::Type> inputs = signature_inputs(L, k, 3, "inspect");
  if (k.env) k.env->bind(L);
  // The CUDA C++ is what "cuda" asks for even where the current device is the cpu (making
  // the text needs no GPU).
  Device device = current_device();
  if (device.is_cpu()) device = Device::cuda(0);
  std::string text = k.elementwise ? k.elementwise->inspect(what, inputs, device)
                                   : k.reduction->inspect(what, inputs, device);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

void set_integer(lua_State* L, const char* key, std::uint64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, key);
}

int l_stats(lua_State* L) {
  KindObject& k = check_kind(L, 1, "stats");
  jit::JitStats s = k.elementwise ? k.elementwise->stats() : k.reduction->stats();
  lua_createtable(L, 0, 10);
  set_integer(L, "calls", s.calls);
  set_integer(L, "memory_hits", s.memory_hits);
  set_integer(L, "specializations", s.specializations);
  set_integer(L, "disk_hits", s.disk_hits);
  set_integer(L, "disk_misses", s.disk_misses);
  set_integer(L, "nvrtc_compiles", s.nvrtc_compiles);
  set_integer(L, "host_compiles", s.host_compiles);
  set_integer(L, "loads", s.loads);
  return 1;
}

// f:signatures(): vectorize's signatures in Numba notation.
int l_signatures(lua_State* L) {
  KindObject& k = check_kind(L, 1, "signatures");
  lua_newtable(L);
  if (!k.vectorize) return 1;
  for (std::size_t i = 0; i < k.vectorize->signatures.size(); ++i) {
    std::string s = k.vectorize->signatures[i].str();
    lua_pushlstring(L, s.data(), s.size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int l_index(lua_State* L) {
  KindObject& k = check_kind(L, 1, "index");
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    std::string_view key = lua_tostring(L, 2);
    if (key == "lua") return lua_getiuservalue(L, 1, 1), 1;
    if (key == "name") return lua_pushlstring(L, k.name.data(), k.name.size()), 1;
  }
  fail("{} has no field {} (fields: lua, name; methods: compile, inspect, signatures, stats)", k.type,
       describe(L, 2));
}

int l_tostring(lua_State* L) {
  KindObject& k = check_kind(L, 1, "tostring");
  std::string text = fmt::format("<{}>", k.who);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_gc(lua_State* L) {
  auto* box = static_cast<Box<KindObject>*>(lua_touserdata(L, 1));
  if (box && box->alive) {
    if (box->value.env) box->value.env->release(L);
    box->alive = false;
    box->value.~KindObject();
  }
  return 0;
}

}  // namespace

void open_kinds(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__call", trampoline<l_call>},
      {"__tostring", trampoline<l_tostring>},
      {"__gc", l_gc},
      {nullptr, nullptr},
  };
  static const luaL_Reg methods[] = {
      {"compile", trampoline<l_compile>},
      {"inspect", trampoline<l_inspect>},
      {"signatures", trampoline<l_signatures>},
      {"stats", trampoline<l_stats>},
      {nullptr, nullptr},
  };
  for (const char* t : {kVectorizeType, kElementwiseType, kReductionType, kFuseType})
    new_metatable_with_index(L, t, meta, methods, trampoline<l_index>);
  static const luaL_Reg funcs[] = {
      {"vectorize", trampoline<l_vectorize>},
      {"elementwise", trampoline<l_elementwise>},
      {"reduction", trampoline<l_reduction>},
      {"fuse", trampoline<l_fuse>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, funcs, 0);
}

}  // namespace luda::lua

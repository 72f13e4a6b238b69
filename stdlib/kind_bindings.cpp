// The kernel kinds in Lua (docs/kinds.md), each a userdata over a jit kind:
//   local add = luda.vectorize(function(x, y) return x + y end)          -- per input dtypes
//   local add = luda.vectorize({"float32(float32, float32)", ...}, fn)   -- eager signatures
//   add(x, y), add(x, 2.5), add(1, 2) --> 3, add(x, y, {out = z, stream = s})
//   local layer = luda.elementwise("T x, T w, T b", "T z", "z = x * w + b", "layer")
//   layer(x, w, b) / layer(x, w, b, z) / layer(x, w, b, {stream = s, size = n})
//   local dnn = luda.reduction("T x, T w, T bias", "T z", "x * w", "a + b", "z = a + bias", "0", "dnn")
//   dnn(x, w, 0.5, {axis = 1 | {1, 2}, keepdims = true, out = z, stream = s})
//   local f = luda.fuse(function(x, w, b) return luda.sum(x * w + b, -1) end)
// Every object has .lua (the function, or the body text), .name, :inspect("types" |
// "cuda", sig), :stats(); vectorize has :compile(sig). Calling them: kind_calls.cpp.
#include "stdlib/kind_bindings.h"

#include <memory>
#include <new>

#include "dsl/device_function.h"
#include "dsl/find_function.h"
#include "dsl/kind_source.h"
#include "dsl/source_text.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/frontend.h"
#include "jit/kinds/make.h"
#include "jit/kinds/reduction.h"
#include "ops/array_math.h"
#include "ops/ufunc_reduce.h"
#include "stdlib/environment.h"
#include "stdlib/function_source.h"
#include "stdlib/kind_object.h"

namespace luda::lua {

const char kVectorizeType[] = "vectorize";
const char kElementwiseType[] = "elementwise_kernel";
const char kReductionType[] = "reduction_kernel";
const char kFuseType[] = "fused_function";

namespace {

// ---- the objects ---------------------------------------------------------------------------

KindObject& check_kind(lua_State* L, int idx, std::string_view fname) {
  if (KindObject* k = test_kind(L, idx)) return *k;
  type_error(L, idx, fname, "kernel kind (vectorize, elementwise, reduction or fuse)");
}

// Pushes the object as a userdata whose user value is `lua` (k.lua).
KindObject& push_kind(lua_State* L, KindObject object, int lua) {
  lua = lua_absindex(L, lua);
  const char* type = object.type;
  object.who = fmt::format("{} '{}'",
                           type == kVectorizeType     ? "vectorize"
                           : type == kElementwiseType ? "elementwise"
                           : type == kReductionType   ? "reduction"
                                                      : "fuse",
                           object.name);
  KindObject& k = push_object<KindObject>(L, type, std::move(object), 1);
  lua_pushvalue(L, lua);
  lua_setiuservalue(L, -2, 1);
  return k;
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
  for (std::string_view key : {"fastmath", "boundscheck"}) {
    int type = push_option(L, idx, key.data());
    if (type == LUA_TBOOLEAN) {
      if (key == "fastmath") o.fastmath = lua_toboolean(L, -1);
      else o.boundscheck = lua_toboolean(L, -1) != 0;
    } else if (type != LUA_TNIL) {
      fail("{}: option '{}' must be a boolean, got {}", fname, key, describe(L, -1));
    }
    lua_pop(L, 1);
  }
  o.boundscheck = jit::boundscheck_with_env(o.boundscheck);
  if (name) {
    int type = push_option(L, idx, "name");
    if (type == LUA_TSTRING) *name = string_at(L, -1);
    else if (type != LUA_TNIL) fail("{}: option 'name' must be a string, got {}", fname, describe(L, -1));
    lua_pop(L, 1);
  }
  return o;
}

// The function at idx: a Lua function, or Lua source text of one ("function(a, b) ... end"),
// whose names are then all globals.
jit::LuaFunction lua_function(lua_State* L, int idx, LuaEnvironment& env, std::string_view fname, std::string name) {
  jit::LuaFunction f;
  bool vararg = false;
  if (lua_type(L, idx) == LUA_TSTRING) {
    f.source = dsl::text_source(std::string(check_string(L, idx, fname)));
    dsl::FoundFunction found = dsl::find_function(f.source);  // its syntax errors, now
    vararg = found.function->is_vararg;
    for (const dsl::Name& p : found.function->params) f.params.push_back(p.text);
  } else {
    f.source = function_source(L, idx);  // first: its error names a C function as such
    lua_Debug ar;
    lua_pushvalue(L, idx);
    lua_getinfo(L, ">u", &ar);
    vararg = ar.isvararg;
    f.handle = env.add_function(idx);
    f.params = parameter_names(L, idx);
  }
  if (vararg) fail("{}: the function takes ... (a vararg); name each input as a parameter", fname);
  f.env = &env;
  f.name = name.empty() ? dsl::function_name(f.source) : std::move(name);
  if (f.name.empty()) f.name = "fn";
  return f;
}

// luda.vectorize(fn [, options]), luda.vectorize(sigs, fn [, options]), luda.vectorize(sigs)(fn);
// fn may be source text.
void make_vectorize(lua_State* L, int sigs, int fn, int opts) {
  std::string name;
  jit::JitOptions options = read_kind_options(L, opts, "vectorize", {"fastmath", "name", "identity"}, &name);
  KindObject k;
  k.type = kVectorizeType;
  k.env = std::make_unique<LuaEnvironment>(L);
  EnvironmentGuard guard{L, k.env.get()};
  auto state = std::make_shared<jit::VectorizeState>();
  state->fn = lua_function(L, fn, *k.env, "vectorize", name);
  state->fn.options = options;
  k.name = state->fn.name;
  k.in_names = state->fn.params;
  std::string who = state->who();
  if (int type = push_option(L, opts, "identity"); type != LUA_TNIL) {
    if (type != LUA_TNUMBER && type != LUA_TBOOLEAN)
      fail("{}: option 'identity' must be a number or a boolean (f(identity, x) is x), got {}", who, describe(L, -1));
    state->identity = read_operand(L, lua_gettop(L), who, 0, "identity");
  }
  lua_pop(L, 1);
  if (sigs) {
    state->dynamic = false;
    if (lua_type(L, sigs) == LUA_TSTRING) {
      jit::add_signature(*state, jit::parse_vectorize_signature(string_at(L, sigs), state->fn, who));
    } else {
      auto n = static_cast<int>(lua_rawlen(L, sigs));
      if (n == 0)
        fail("{}: the signature table is empty; give signatures (\"float32(float32, float32)\") or none", who);
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, sigs, i);
        if (lua_type(L, -1) != LUA_TSTRING)
          fail("{}: signatures[{}] must be a string such as \"float32(float32, float32)\", got {}", who, i,
               describe(L, -1));
        jit::add_signature(*state, jit::parse_vectorize_signature(string_at(L, -1), state->fn, who));
        lua_pop(L, 1);
      }
    }
  }
  k.elementwise = jit::make_vectorize(state);
  k.vectorize = state;
  guard.env = nullptr;
  KindObject& object = push_kind(L, std::move(k), fn);
  object.env->bind(L);
  for (const dsl::Signature& sig : state->signatures) object.elementwise->compile(sig.params, current_device());
}

int l_vectorize_decorate(lua_State* L) {
  check_function_or_text(L, 1, "vectorize");
  int sigs = lua_type(L, lua_upvalueindex(1)), options = lua_type(L, lua_upvalueindex(2));
  if ((sigs != LUA_TSTRING && sigs != LUA_TTABLE) || (options != LUA_TTABLE && options > LUA_TNIL)) replaced_upvalue();
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  make_vectorize(L, 2, 1, 3);
  return 1;
}

// A string first is the function's source text, or a signature: told apart by its first
// word (dsl::is_function_text).
int l_vectorize(lua_State* L) {
  int t1 = lua_type(L, 1);
  if (t1 == LUA_TFUNCTION || (t1 == LUA_TSTRING && dsl::is_function_text(check_string(L, 1, "vectorize")))) {
    make_vectorize(L, 0, 1, 2);
    return 1;
  }
  if (t1 != LUA_TSTRING && t1 != LUA_TTABLE)
    type_error(L, 1, "vectorize", "function, signature string or table of signatures");
  if (lua_isnoneornil(L, 2) || lua_type(L, 2) == LUA_TTABLE) {  // luda.vectorize(sigs [, options])(fn)
    read_kind_options(L, 2, "vectorize", {"fastmath", "name", "identity"}, nullptr);
    lua_settop(L, 2);
    lua_pushcclosure(L, trampoline<l_vectorize_decorate>, 2);
    return 1;
  }
  check_function_or_text(L, 2, "vectorize");
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
  jit::JitOptions options = read_kind_options(L, opts, "elementwise", {"fastmath", "boundscheck"}, nullptr);
  jit::ElementwiseMade made = jit::make_elementwise(in, out, body, name, options);
  KindObject k;
  k.type = kElementwiseType;
  k.name = made.state->name;
  k.nout = made.state->out.size();
  for (const dsl::KindParam& p : made.state->in) k.in_names.push_back(p.name);
  k.elementwise = std::move(made.kind);
  k.strings = std::move(made.state);
  push_kind(L, std::move(k), 3);
  return 1;
}

// luda.reduction(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity [, name] [, options])
int l_reduction(lua_State* L) {
  std::string_view text[6];
  for (int i = 0; i < 6; ++i)
    if (i != 5 || !lua_isnil(L, 6)) text[i] = check_string(L, i + 1, "reduction");
  int opts = lua_type(L, 7) == LUA_TTABLE ? 7 : 8;
  std::string_view name = opts == 8 && !lua_isnoneornil(L, 7) ? check_string(L, 7, "reduction") : "kernel";
  std::string who = fmt::format("reduction '{}'", name);
  // CuPy takes None for "no identity"; luda's reductions start every partial result from
  // the identity, so one is needed.
  if (lua_isnil(L, 6))
    fail("{}: the identity (argument 6) is required: an expression that reduce_expr leaves unchanged ('0' for a + b, "
         "'-math.huge' for a maximum); every partial result starts from it, and an empty reduction gives "
         "post_map_expr of it",
         who);
  jit::JitOptions options = read_kind_options(L, opts, "reduction", {"fastmath", "reduce_type"}, nullptr);
  std::string reduce_type;
  int type = push_option(L, opts, "reduce_type");
  if (type == LUA_TSTRING) reduce_type = string_at(L, -1);
  else if (DType d; dtype_of_constructor(L, -1, &d)) reduce_type = std::string(dtype_name(d));
  else if (type != LUA_TNIL)
    fail("{}: option 'reduce_type' must be a dtype (\"float32\") or a placeholder, got {}", who, describe(L, -1));
  lua_pop(L, 1);
  jit::ReductionMade made = jit::make_reduction(text[0], text[1], text[2], text[3], text[4], text[5], name,
                                                std::move(reduce_type), options);
  KindObject k;
  k.type = kReductionType;
  k.name = made.state->name;
  k.nout = made.state->out.size();
  for (const dsl::KindParam& p : made.state->in) k.in_names.push_back(p.name);
  k.reduction = std::move(made.kind);
  k.strings = std::move(made.state);
  push_kind(L, std::move(k), 3);
  return 1;
}

// luda.fuse(fn_or_source [, {name =, fastmath =}])
int l_fuse(lua_State* L) {
  check_function_or_text(L, 1, "fuse");
  std::string name;
  jit::JitOptions options = read_kind_options(L, 2, "fuse", {"fastmath", "name"}, &name);
  KindObject k;
  k.type = kFuseType;
  k.env = std::make_unique<LuaEnvironment>(L);
  EnvironmentGuard guard{L, k.env.get()};
  auto state = std::make_shared<jit::FuseState>();
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
      return jit::element_code(jit::typed(state->fn, std::move(params), target), *state->fn.env, state->who());
    };
    k.elementwise = std::make_unique<jit::ElementwiseKind>(std::move(setup));
  } else {
    jit::ReductionSetup setup;
    setup.kind = "fuse";
    setup.name = k.name;
    for (const std::string& op : state->shape.ops)  // NumPy raises for the first one with no identity
      if (setup.no_identity.empty()) setup.no_identity = jit::no_identity(*ops::parse_reduce(op));
    setup.in_names = k.in_names;
    setup.out_names = {"out"};
    for (int j = 2; j <= state->shape.nresults; ++j) setup.out_names.push_back(fmt::format("out{}", j));
    k.nout = setup.out_names.size();
    setup.accumulators = static_cast<int>(state->shape.ops.size());
    setup.options = options;
    setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                             dsl::Target target) { return jit::fuse_reduction_code(*state, inputs, target); };
    const jit::ReductionSetup one_pass = setup;
    k.reduction = std::make_unique<jit::ReductionKind>(std::move(setup));
    if (!state->shape.post_params.empty()) {
      // Two passes where the work after the reductions needs every element again: the
      // reductions' values, then the function elementwise over the inputs and them.
      jit::ReductionSetup first = one_pass;
      first.out_names.clear();
      jit::ElementwiseSetup second;
      second.kind = "fuse";
      second.name = k.name;
      second.in_names = k.in_names;
      for (std::size_t j = 1; j <= state->shape.ops.size(); ++j) {
        first.out_names.push_back(fmt::format("luda_r{}", j));
        second.in_names.push_back(first.out_names.back());
      }
      first.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                               dsl::Target target) { return jit::fuse_reduction_code(*state, inputs, target, true); };
      second.out_names = one_pass.out_names;
      second.raw.assign(second.in_names.size(), false);
      second.out_read.assign(second.out_names.size(), false);
      second.options = options;
      second.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                                dsl::Target target) { return jit::fuse_second_pass_code(*state, inputs, target); };
      k.fuse_first = std::make_unique<jit::ReductionKind>(std::move(first));
      k.fuse_second = std::make_unique<jit::ElementwiseKind>(std::move(second));
    }
  }
  k.fuse = state;
  guard.env = nullptr;
  push_kind(L, std::move(k), 1);
  return 1;
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
  std::size_t raw_outputs = 0;  // elementwise: the kind takes them after the inputs
  if (k.strings)
    for (const dsl::KindParam& p : k.strings->out) raw_outputs += p.raw ? 1 : 0;
  if (sig.params.size() != k.in_names.size() + raw_outputs)
    fail("{}: the signature '{}' has {} parameter{} but the kernel takes {}{}", k.who, text, sig.params.size(),
         sig.params.size() == 1 ? "" : "s", k.in_names.size() + raw_outputs,
         raw_outputs ? " (its inputs, then its raw outputs)" : "");
  return sig.params;
}

// f:compile(sig): vectorize only; the signature joins the object's signatures.
int l_compile(lua_State* L) {
  KindObject& k = check_kind(L, 1, "compile");
  if (!k.vectorize) fail("{}: compile is for vectorize functions; other kinds compile at their first call", k.who);
  std::string_view text = check_string(L, 2, "compile");
  dsl::Signature sig = jit::parse_vectorize_signature(text, k.vectorize->fn, k.who);
  std::vector<dsl::Type> params = sig.params;
  jit::add_signature(*k.vectorize, std::move(sig));
  k.env->bind(L);
  k.elementwise->compile(params, current_device());
  lua_settop(L, 1);
  return 1;
}

// k:inspect("types" | "cuda" | "ptx" [, sig] [, {arch=}])
int l_inspect(lua_State* L) {
  KindObject& k = check_kind(L, 1, "inspect");
  std::string_view what = check_string(L, 2, "inspect");
  int sig = lua_type(L, 3) == LUA_TTABLE ? 0 : 3;  // the signature may be left out before the options
  int opts = sig ? 4 : 3;
  std::vector<dsl::Type> inputs = signature_inputs(L, k, sig ? sig : lua_gettop(L) + 1, "inspect");
  check_options(L, opts, "inspect", {"arch"});
  int arch = arch_option(L, opts, "inspect");
  if (k.env) k.env->bind(L);
  // The CUDA C++ is what "cuda" asks for even where the current device is the cpu (making
  // the text needs no GPU).
  Device device = current_device();
  if (device.is_cpu()) device = Device::cuda(0);
  std::string text = k.elementwise ? k.elementwise->inspect(what, inputs, device, arch)
                                   : k.reduction->inspect(what, inputs, device, arch);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_stats(lua_State* L) {
  KindObject& k = check_kind(L, 1, "stats");
  push_jit_stats(L, k.elementwise ? k.elementwise->stats() : k.reduction->stats());
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

// f:reduce(x [, axis] [, {axis =, keepdims =, initial =, out =, stream =}]): NumPy's
// ufunc.reduce for a vectorize function of two arguments; the axis defaults to the first.
int l_reduce(lua_State* L) {
  KindObject& k = check_kind(L, 1, "reduce");
  if (k.type != kVectorizeType || k.in_names.size() != 2 || k.nout != 1)
    fail("{}: reduce is for vectorize functions of two arguments and one result (NumPy's binary ufuncs)", k.who);
  NDArray& x = check_array(L, 2, k.who);
  ReduceArgs r = read_reduce_args(L, 2, x.ndim(), k.who,
                                  "f:reduce(x [, axis] [, {axis =, keepdims =, initial =, out =, stream =}])",
                                  {"axis", "keepdims", "initial", "out", "stream"});
  std::vector<int> axes = r.axes.value_or(std::vector<int>{});
  if (!r.axes) {
    if (x.ndim() == 0)
      fail("{}: reduce takes an array of one or more axes (it reduces the first by default); got a 0-d array", k.who);
    axes = {0};
  }
  if (k.env) k.env->bind(L);
  if (k.vectorize->identity) {  // one reduction kernel, made at the first reduce
    if (!k.reduction) k.reduction = ops::vectorize_reduction(k.vectorize);
    jit::KernelArg initial = r.initial.value_or(*k.vectorize->identity);
    // A boolean identity of a function of numbers is 1 or 0, as a store converts it.
    if (!r.initial && initial.kind == jit::KernelArg::Kind::Bool && x.dtype() != DType::Bool)
      initial = jit::KernelArg::of_int(initial.b ? 1 : 0);
    std::array<jit::KernelArg, 2> in = {jit::KernelArg::of_array(x), initial};
    NDArray result = r.out;
    k.reduction->call(in, std::span<NDArray>(&result, 1), std::span<const int>(axes), r.keepdims, r.call.stream);
    if (r.call.out) lua_pushvalue(L, r.call.out);
    else push_array(L, std::move(result));
    return 1;
  }
  push_array(L, ops::ufunc_reduce(*k.elementwise, k.who, k.name, x, axes, r.keepdims, r.initial, std::move(r.out),
                                  r.call.stream));
  if (r.call.out) lua_pushvalue(L, r.call.out);
  return 1;
}

int l_index(lua_State* L) {
  KindObject& k = check_kind(L, 1, "index");
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (push_method(L, 2)) return 1;
    std::string_view key = string_at(L, 2);
    if (key == "lua") return lua_getiuservalue(L, 1, 1), 1;
    if (key == "name") return lua_pushlstring(L, k.name.data(), k.name.size()), 1;
  }
  fail("{} has no field {} (fields: lua, name; methods: compile, inspect, reduce, signatures, stats)", k.type,
       describe(L, 2));
}

int l_tostring(lua_State* L) {
  KindObject& k = check_kind(L, 1, "tostring");
  std::string text = fmt::format("<{}>", k.who);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_gc(lua_State* L) {
  if (!is_kind_tag(userdata_tag(L, 1))) return 0;  // not a kind: see gc_object
  auto* box = static_cast<Box<KindObject>*>(lua_touserdata(L, 1));
  if (box->alive) {
    if (box->value.env) box->value.env->release(L);
    box->alive = false;
    box->value.~KindObject();
  }
  return 0;
}

}  // namespace

namespace {

// A parameter's declaration as its string gave it: "T x", "raw float32 y".
std::string declaration(const dsl::KindParam& p) {
  return fmt::format("{}{} {}", p.raw ? "raw " : "", p.dtype ? dsl::scalar_name(*p.dtype) : p.placeholder, p.name);
}

void set_declarations(lua_State* L, const std::vector<dsl::KindParam>& params, const char* field) {
  lua_createtable(L, static_cast<int>(params.size()), 0);
  for (std::size_t i = 0; i < params.size(); ++i) {
    std::string d = declaration(params[i]);
    lua_pushlstring(L, d.data(), d.size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, field);
}

void set_string(lua_State* L, const std::string& s, const char* field) {
  lua_pushlstring(L, s.data(), s.size());
  lua_setfield(L, -2, field);
}

// kind_info(k): what luda.chunked.kinds (stdlib/lua/luda/chunked/kinds.lua) needs to run a
// kind block by block: {type = "vectorize" | "elementwise" | "reduction" | "fuse", who =,
// name =, nin =, nout =, raw = (a raw parameter), reduces = (a reduction kind, or fuse with
// reductions)}; an elementwise kernel's also body; a reduction kind's also ins, outs (each
// parameter's declaration), map, reduce, post, identity, reduce_type and fastmath. nil for
// a value that is not a kind.
int l_kind_info(lua_State* L) {
  KindObject* k = test_kind(L, 1);
  if (!k) return 0;
  lua_newtable(L);
  lua_pushstring(L, k->type == kVectorizeType     ? "vectorize"
                    : k->type == kElementwiseType ? "elementwise"
                    : k->type == kReductionType   ? "reduction"
                                                  : "fuse");
  lua_setfield(L, -2, "type");
  set_string(L, k->who, "who");
  set_string(L, k->name, "name");
  lua_pushinteger(L, static_cast<lua_Integer>(k->in_names.size()));
  lua_setfield(L, -2, "nin");
  lua_pushinteger(L, static_cast<lua_Integer>(k->nout));
  lua_setfield(L, -2, "nout");
  bool raw = false;
  if (k->strings) {
    for (const dsl::KindParam& p : k->strings->in) raw = raw || p.raw;
    for (const dsl::KindParam& p : k->strings->out) raw = raw || p.raw;
    if (k->type == kElementwiseType) set_string(L, k->strings->body, "body");
  }
  lua_pushboolean(L, raw);
  lua_setfield(L, -2, "raw");
  lua_pushboolean(L, k->type == kReductionType || (k->fuse && k->fuse->shape.reduction));
  lua_setfield(L, -2, "reduces");
  if (k->type == kReductionType && k->strings) {
    const jit::StringKindState& s = *k->strings;
    set_declarations(L, s.in, "ins");
    set_declarations(L, s.out, "outs");
    set_string(L, s.map, "map");
    set_string(L, s.reduce, "reduce");
    set_string(L, s.post, "post");
    set_string(L, s.identity, "identity");
    set_string(L, s.reduce_type, "reduce_type");
    lua_pushboolean(L, s.options.fastmath);
    lua_setfield(L, -2, "fastmath");
  }
  return 1;
}

}  // namespace

void push_kind_helpers(lua_State* L) {
  lua_pushcfunction(L, trampoline<l_kind_info>);
  lua_setfield(L, -2, "kind_info");
  luaL_getmetatable(L, kVectorizeType);  // the kinds share one __call (set_call_metamethods)
  lua_getfield(L, -1, "__call");
  lua_setfield(L, -3, "kind_call");
  lua_pop(L, 1);
  lua_pushcfunction(L, trampoline<l_reduce>);
  lua_setfield(L, -2, "kind_reduce");
}

void open_kinds(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__tostring", trampoline<l_tostring>},
      {"__gc", l_gc},
      {nullptr, nullptr},
  };
  static const luaL_Reg methods[] = {
      {"compile", trampoline<l_compile>},       {"inspect", trampoline<l_inspect>}, {"reduce", trampoline<l_reduce>},
      {"signatures", trampoline<l_signatures>}, {"stats", trampoline<l_stats>},     {nullptr, nullptr},
  };
  for (const char* t : {kVectorizeType, kElementwiseType, kReductionType, kFuseType})
    new_metatable_with_index(L, t, meta, methods, trampoline<l_index>);
  set_call_metamethods(L);
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

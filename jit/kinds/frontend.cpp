#include "jit/kinds/frontend.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "dsl/diagnostics.h"
#include "dsl/find_function.h"
#include "dsl/source_text.h"
#include "jit/kinds/reduce_rules.h"
#include "runtime/error.h"

namespace luda::jit {
namespace {

class BuiltinEnvironment final : public dsl::Environment {
 public:
  dsl::ExternalValue lookup(dsl::FunctionHandle, const std::string& name) override {
    dsl::ExternalValue v;
    if (name == "math" || name == "luda" || name == "cuda") {
      v.kind = dsl::ExternalValue::Kind::Namespace;
      v.name_space = name;
    }
    return v;
  }
};

}  // namespace

dsl::FunctionSource source_text_function(std::string text) { return dsl::text_source(std::move(text)); }

dsl::Environment& builtin_environment() {
  static BuiltinEnvironment env;
  return env;
}

namespace {

// A mistake of the function as a whole (it returns nothing, calls a barrier) points at its
// `function` keyword when it is a Lua function of the user's chunk; a function made from
// source text (an elementwise body, a builtin operation) has no place of its own to show,
// so its message stays bare, starting with `who`.
[[noreturn]] void fail_at_function(const dsl::FunctionSource* function, std::string_view kind, std::string_view who,
                                   std::string_view what) {
  if (function != nullptr && function->line_defined > 0) {
    dsl::FoundFunction found = dsl::find_function(*function);
    throw dsl::source_error(found.ast->source(), found.function->loc, kind, fmt::format("{} {}", who, what));
  }
  fail("{}: the function {}", who, what);
}

}  // namespace

dsl::DeviceFunction compile_scalar_function(const dsl::DeviceFunctionRequest& request, dsl::Environment& env,
                                            std::string_view who) {
  dsl::DeviceFunction out = dsl::compile_device_function(request, env);
  if (out.needs_fibers)
    fail_at_function(&request.function, dsl::error_kind::unsupported, who,
                     "calls a barrier or a warp function (cuda.syncthreads, shuffles, votes); a kind runs each "
                     "element on its own, so use luda.cuda.jit for cooperating threads");
  return out;
}

std::vector<dsl::Scalar> result_scalars(const dsl::Type& result, std::string_view who,
                                        const dsl::FunctionSource* function) {
  switch (result.kind) {
    case dsl::Type::Kind::Scalar: return {result.scalar};
    case dsl::Type::Kind::Tuple: {
      std::vector<dsl::Scalar> out;
      for (const dsl::Type& t : result.elements) {
        if (t.kind != dsl::Type::Kind::Scalar)
          fail_at_function(function, dsl::error_kind::type, who,
                           fmt::format("returns {}; return scalars", result.str()));
        out.push_back(t.scalar);
      }
      return out;
    }
    case dsl::Type::Kind::Void:
      fail_at_function(function, dsl::error_kind::type, who, "returns no value; return the element's result");
    case dsl::Type::Kind::Array:
      fail_at_function(function, dsl::error_kind::type, who, "returns an array; return a scalar per element");
  }
  fail_at_function(function, dsl::error_kind::type, who, fmt::format("returns {}; return a scalar", result.str()));
}

namespace {

// A fused function's return of `listed` expressions whose last is a call of several values.
void check_listed(std::string_view who, std::size_t got, std::size_t listed) {
  if (got != listed)
    fail("{}: the function returns {} values here but its return lists {}; return one value per expression", who, got,
         listed);
}

}  // namespace

jit::ElementCode element_code(const dsl::DeviceFunctionRequest& request, dsl::Environment& env, std::string_view who,
                              std::size_t listed) {
  dsl::DeviceFunction f = compile_scalar_function(request, env, who);
  jit::ElementCode code;
  code.outputs = result_scalars(f.result, who, &request.function);
  if (listed) check_listed(who, code.outputs.size(), listed);
  if (code.outputs.size() != 1 && !listed)
    fail("{}: the function returns {} values; it must return one (luda.elementwise takes several outputs)", who,
         code.outputs.size());
  code.functions = std::move(f.code);
  code.call = std::move(f.c_name);
  code.params = request.params;
  code.nvrtc_options = std::move(f.nvrtc_options);
  code.typed = std::move(f.typed);
  code.chunks = {request.function.chunk};
  code.bounds_record = f.uses_bounds;
  code.weak_int_uses = std::move(f.weak_int_uses);
  return code;
}

dsl::Type strong(const dsl::Type& t) {
  if (t.kind != dsl::Type::Kind::Scalar || !t.weak) return t;
  if (dsl::is_complex(t.scalar)) return dsl::Type::scalar_of(dsl::Scalar::Complex128);
  return dsl::Type::scalar_of(dsl::is_float(t.scalar) ? dsl::Scalar::Float64 : dsl::Scalar::Int64);
}

dsl::Scalar numpy_result(std::span<const dsl::Type> operands) {
  bool any_strong = false, any_weak = false, weak_float = false, weak_complex = false;
  DType r = DType::Bool;
  for (const dsl::Type& t : operands) {
    if (t.kind != dsl::Type::Kind::Scalar) continue;
    if (t.weak) {
      any_weak = true;
      weak_float = weak_float || dsl::is_float(t.scalar);
      weak_complex = weak_complex || dsl::is_complex(t.scalar);
      continue;
    }
    r = any_strong ? promote_types(r, to_dtype(t.scalar)) : to_dtype(t.scalar);
    any_strong = true;
  }
  if (!any_strong)
    return weak_complex ? dsl::Scalar::Complex128 : weak_float ? dsl::Scalar::Float64 : dsl::Scalar::Int64;
  // A weak complex (Python's complex) keeps a float's precision: float32 and the 16-bit
  // floats give complex64.
  if (weak_complex && !is_complex(r)) return is_float(r) ? dsl::complex_of(to_scalar_kind(r)) : dsl::Scalar::Complex128;
  if (weak_float && !is_inexact(r)) return dsl::Scalar::Float64;
  if (any_weak && r == DType::Bool) return dsl::Scalar::Int64;
  return to_scalar_kind(r);
}

bool can_cast_safe(dsl::Scalar from, dsl::Scalar to) {
  return promote_types(to_dtype(from), to_dtype(to)) == to_dtype(to);
}

bool converts_without_loss(const dsl::Type& from, dsl::Scalar to) {
  if (from.kind != dsl::Type::Kind::Scalar) return false;
  if (!from.weak) return can_cast_safe(from.scalar, to);
  if (dsl::is_complex(from.scalar)) return dsl::is_complex(to);
  if (dsl::is_float(from.scalar)) return dsl::is_float(to) || dsl::is_complex(to);
  return to != dsl::Scalar::Bool;
}

std::string describe_type(const dsl::Type& t) {
  if (t.kind == dsl::Type::Kind::Scalar && t.weak)
    return dsl::is_complex(t.scalar) ? "a complex (luda.complex)"
           : dsl::is_float(t.scalar) ? "a Lua float"
                                     : "a Lua integer";
  if (t.kind == dsl::Type::Kind::Scalar) return std::string(dsl::scalar_name(t.scalar));
  return t.str();
}

dsl::Scalar sum_type(dsl::Scalar s) {
  if (dsl::is_float(s) || dsl::is_complex(s)) return s;
  if (s == dsl::Scalar::Bool || dsl::is_signed(s)) return dsl::Scalar::Int64;
  return dsl::Scalar::UInt64;
}

std::string map_with_index(const std::string& name, const std::string& callee, const std::vector<dsl::Type>& params,
                           const std::string& result, bool convert) {
  std::string decl, args;
  for (std::size_t k = 0; k < params.size(); ++k) {
    decl += fmt::format("{}{} a{}", k ? ", " : "", dsl::scalar_c_type(params[k].scalar), k);
    args += fmt::format("{}a{}", k ? ", " : "", k);
  }
  // One value converts to the accumulator's type (a float16 sum accumulates in float32).
  std::string call = fmt::format("{}({})", callee, args);
  if (convert) call = fmt::format("luda_cvt<{}>({})", result, call);
  return fmt::format("static __device__ {} {}({}{}long long j) {{ (void)j; return {}; }}\n", result, name, decl,
                     params.empty() ? "" : ", ", call);
}

// ---- the kinds' frontends ------------------------------------------------------------------

dsl::DeviceFunctionRequest typed(const LuaFunction& f, std::vector<dsl::Type> params, dsl::Target target) {
  dsl::DeviceFunctionRequest r;
  r.function = f.source;
  r.handle = f.handle;
  r.name = f.name;
  r.params = std::move(params);
  r.options.target = target;
  r.options.fastmath = f.options.fastmath;
  r.options.boundscheck = jit::checks_bounds(f.options.boundscheck, target);  // local arrays
  return r;
}

// The signature a call uses: the exact match, else the first the inputs convert to without
// loss (NumPy's safe casting; Lua numbers are weak).
const dsl::Signature* choose_signature(const VectorizeState& s, std::span<const dsl::Type> inputs) {
  auto all = [&](const dsl::Signature& sig, auto&& ok) {
    if (sig.params.size() != inputs.size()) return false;
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k].kind != dsl::Type::Kind::Scalar || !ok(inputs[k], sig.params[k].scalar)) return false;
    return true;
  };
  for (const dsl::Signature& sig : s.signatures)
    if (all(sig, [](const dsl::Type& t, dsl::Scalar p) { return t.scalar == p; })) return &sig;
  if (s.dynamic) return nullptr;  // other input types get a specialization of their own
  for (const dsl::Signature& sig : s.signatures)
    if (all(sig, converts_without_loss)) return &sig;
  return nullptr;
}

jit::ElementCode vectorize_code(const VectorizeState& s, std::span<const dsl::Type> inputs, dsl::Target target) {
  std::string who = s.who();
  const dsl::Signature* sig = choose_signature(s, inputs);
  if (!sig && !s.dynamic) {
    std::string args, sigs;
    for (std::size_t k = 0; k < inputs.size(); ++k) args += (k ? ", " : "") + describe_type(inputs[k]);
    for (std::size_t k = 0; k < s.signatures.size(); ++k) sigs += (k ? ", " : "") + s.signatures[k].str();
    fail("{}: no signature takes the arguments ({}) without loss; the signatures are {}", who, args, sigs);
  }
  std::vector<dsl::Type> params = sig ? sig->params : std::vector<dsl::Type>(inputs.begin(), inputs.end());
  jit::ElementCode code = element_code(typed(s.fn, std::move(params), target), *s.fn.env, who);
  if (sig) code.outputs = {sig->result.scalar};
  return code;
}

namespace {

std::string param_label(const std::vector<dsl::KindParam>& params, std::size_t k, bool output) {
  return fmt::format("{} {} '{}'", output ? "output" : "argument", k + 1, params[k].name);
}

}  // namespace

// The dtype of each parameter (ins then outs) for one call, CuPy's way: a placeholder
// takes the dtype of the arrays (and typed scalars and bools) passed for it, then of the
// outputs given; a placeholder that only Lua numbers reach takes theirs (int64, float64).
std::vector<dsl::Scalar> bind_types(const StringKindState& s, std::span<const dsl::Type> inputs,
                                    std::span<const std::optional<dsl::Scalar>> outputs) {
  struct Binding {
    dsl::Scalar type;
    std::string from;
  };
  std::map<std::string, Binding> bound;
  auto bind = [&](const std::vector<dsl::KindParam>& params, std::size_t k, dsl::Scalar t, bool output) {
    const dsl::KindParam& p = params[k];
    auto [it, fresh] = bound.try_emplace(p.placeholder, Binding{t, param_label(params, k, output)});
    if (!fresh && it->second.type != t)
      fail("{}: type placeholder {} is {} from {} but {} from {}; pass one dtype ({}:astype(\"{}\") converts)", s.who(),
           p.placeholder, dsl::scalar_name(it->second.type), it->second.from, dsl::scalar_name(t),
           param_label(params, k, output), p.name, dsl::scalar_name(it->second.type));
  };
  for (std::size_t k = 0; k < s.in.size(); ++k)
    if (!s.in[k].placeholder.empty() && !(inputs[k].kind == dsl::Type::Kind::Scalar && inputs[k].weak))
      bind(s.in, k, inputs[k].scalar, false);
  for (std::size_t k = 0; k < s.out.size(); ++k)
    if (!s.out[k].placeholder.empty() && k < outputs.size() && outputs[k]) bind(s.out, k, *outputs[k], true);
  for (std::size_t k = 0; k < s.in.size(); ++k)
    if (!s.in[k].placeholder.empty() && !bound.count(s.in[k].placeholder))
      bound.emplace(s.in[k].placeholder, Binding{inputs[k].scalar, param_label(s.in, k, false)});
  std::vector<dsl::Scalar> types;
  auto resolve = [&](const std::vector<dsl::KindParam>& params, bool output) {
    for (std::size_t k = 0; k < params.size(); ++k) {
      const dsl::KindParam& p = params[k];
      if (p.dtype) {
        types.push_back(*p.dtype);
      } else if (auto it = bound.find(p.placeholder); it != bound.end()) {
        types.push_back(it->second.type);
      } else {
        fail("{}: cannot tell the type of placeholder {} ({}): no argument binds it; pass the output array", s.who(),
             p.placeholder, param_label(params, k, output));
      }
    }
  };
  resolve(s.in, false);
  resolve(s.out, true);
  return types;
}

jit::ElementCode elementwise_code(const StringKindState& s, std::span<const dsl::Type> inputs,
                                  std::span<const std::optional<dsl::Scalar>> outputs, dsl::Target target) {
  std::string who = s.who();
  // The kind's inputs are the in params, then the raw out params (arrays the caller
  // gives); its outputs are the other out params.
  LUDA_INTERNAL_CHECK(inputs.size() >= s.in.size());
  std::span<const dsl::Type> ins = inputs.first(s.in.size());
  std::vector<std::optional<dsl::Scalar>> all_outputs;
  for (std::size_t k = 0, r = s.in.size(), j = 0; k < s.out.size(); ++k)
    all_outputs.push_back(s.out[k].raw ? std::optional(inputs[r++].scalar) : outputs[j++]);
  std::vector<dsl::Scalar> types = bind_types(s, ins, all_outputs);
  dsl::ElementwiseFunction ef = dsl::elementwise_function(s.in, s.out, types, s.body, s.name);
  std::vector<dsl::Type> params;
  auto raw_array = [&](const dsl::Type& given, dsl::Scalar want, const std::string& label) {
    if (given.kind != dsl::Type::Kind::Array)
      fail("{}: {} is raw: pass an array, got {}", who, label, describe_type(given));
    if (given.scalar != want)
      fail("{}: {} is raw {}, got a {} array; pass a {} array", who, label, dsl::scalar_name(want),
           dsl::scalar_name(given.scalar), dsl::scalar_name(want));
    params.push_back(given);
  };
  for (std::size_t k = 0; k < s.in.size(); ++k) {
    if (s.in[k].raw) raw_array(inputs[k], types[k], param_label(s.in, k, false));
    else params.push_back(dsl::Type::scalar_of(types[k]));
  }
  std::vector<dsl::Scalar> element_outputs;
  for (std::size_t k = 0, r = s.in.size(); k < s.out.size(); ++k) {
    if (s.out[k].raw) raw_array(inputs[r++], types[s.in.size() + k], param_label(s.out, k, true));
    else element_outputs.push_back(types[s.in.size() + k]);
  }
  std::vector<dsl::Type> all = params;
  for (std::size_t k = 0; k < s.out.size(); ++k)
    if (ef.out_read[k]) all.push_back(dsl::Type::scalar_of(types[s.in.size() + k]));
  all.push_back(dsl::Type::scalar_of(dsl::Scalar::Int64));  // i
  all.push_back(dsl::Type::scalar_of(dsl::Scalar::Int64));  // n
  LuaFunction fn;
  fn.source = ef.function;
  fn.env = nullptr;
  fn.name = s.name;
  fn.options = s.options;
  dsl::DeviceFunctionRequest t = typed(fn, std::move(all), target);
  t.options.boundscheck = jit::checks_bounds(s.options.boundscheck, target);
  dsl::DeviceFunction df = compile_scalar_function(t, builtin_environment(), who);
  if (!element_outputs.empty()) result_scalars(df.result, who, &t.function);  // checks that it returns values
  jit::ElementCode code;
  code.functions = std::move(df.code);
  code.call = std::move(df.c_name);
  code.params = std::move(params);
  code.outputs = std::move(element_outputs);
  code.nvrtc_options = std::move(df.nvrtc_options);
  code.typed = std::move(df.typed);
  code.chunks = {ef.function.chunk};
  code.bounds_record = df.uses_bounds;
  code.weak_int_uses = std::move(df.weak_int_uses);
  return code;
}

jit::ReductionCode reduction_code(const StringKindState& s, std::span<const dsl::Type> inputs,
                                  std::span<const std::optional<dsl::Scalar>> outputs, dsl::Target target) {
  std::string who = s.who();
  std::vector<dsl::Scalar> types = bind_types(s, inputs, outputs);
  dsl::Scalar rt;
  if (s.reduce_type.empty()) {
    rt = types[s.in.size()];
  } else if (std::optional<dsl::Scalar> t = dsl::parse_scalar(s.reduce_type)) {
    rt = *t;
  } else {
    std::optional<dsl::Scalar> found;
    for (std::size_t k = 0; k < s.in.size() + s.out.size() && !found; ++k) {
      const dsl::KindParam& p = k < s.in.size() ? s.in[k] : s.out[k - s.in.size()];
      if (p.placeholder == s.reduce_type) found = types[k];
    }
    if (!found) fail("{}: reduce_type '{}' is neither a dtype nor a placeholder of the parameters", who, s.reduce_type);
    rt = *found;
  }
  // A weak operand is a Lua number: one value for every element, which post_map may read.
  std::vector<bool> in_is_scalar;
  for (const dsl::Type& t : inputs) in_is_scalar.push_back(t.kind == dsl::Type::Kind::Scalar && t.weak);
  dsl::ReductionFunctions fns = dsl::reduction_functions(s.in, s.out, types, rt, in_is_scalar, s.map, s.reduce, s.post,
                                                         s.identity, s.name);
  jit::ReductionCode code;
  for (std::size_t k = 0; k < s.in.size(); ++k) code.map_params.push_back(dsl::Type::scalar_of(types[k]));
  code.post_inputs = fns.post_inputs;
  code.reduce_type = rt;
  code.outputs.assign(types.begin() + static_cast<std::ptrdiff_t>(s.in.size()), types.end());
  auto compile = [&](const dsl::FunctionSource& src, std::string_view part, std::vector<dsl::Type> params) {
    dsl::DeviceFunctionRequest t;
    t.function = src;
    t.name = fmt::format("{}_{}", s.name, part);
    t.params = std::move(params);
    t.options.target = target;
    t.options.fastmath = s.options.fastmath;
    dsl::DeviceFunction df = compile_scalar_function(t, builtin_environment(), who);
    if (part == "map") code.weak_int_uses = df.weak_int_uses;  // its parameters are the inputs
    code.functions += df.code;
    code.typed += df.typed;
    code.chunks.push_back(src.chunk);
    for (std::string& o : df.nvrtc_options)
      if (std::find(code.nvrtc_options.begin(), code.nvrtc_options.end(), o) == code.nvrtc_options.end())
        code.nvrtc_options.push_back(std::move(o));
    return df.c_name;
  };
  dsl::Type r = dsl::Type::scalar_of(rt);
  std::vector<dsl::Type> map_params = code.map_params;
  map_params.push_back(dsl::Type::scalar_of(dsl::Scalar::Int64));  // _j
  std::vector<dsl::Type> post_params = {r};
  for (int k : fns.post_inputs) post_params.push_back(code.map_params[static_cast<std::size_t>(k)]);
  code.map = compile(fns.map, "map", std::move(map_params));
  code.reduce = compile(fns.reduce, "reduce", {r, r});
  code.post = compile(fns.post, "post", std::move(post_params));
  code.identity = compile(fns.identity, "identity", {});
  return code;
}

namespace {

// A SourceError of a function built from the user's chunk with each reduction a name
// (dsl::fuse_post_function, fuse_second_pass_function), shown on the line as the user
// wrote it: the lines and columns are the user's.
template <class F>
auto as_written(const FuseState& s, F&& compile) {
  try {
    return compile();
  } catch (const dsl::SourceError& e) {
    if (e.file() != s.fn.source.chunk->name || e.line() <= 0) throw;
    const dsl::Chunk& user = *s.fn.source.chunk;
    throw dsl::source_error(dsl::Source(user.name, user.text, user.hidden_prefix), {e.line(), e.column()}, e.kind(),
                            e.message());
  }
}

// Whether any of these parameters is an array at this call.
bool reads_arrays(const std::vector<int>& params, std::span<const jit::KernelArg> args) {
  for (int k : params)
    if (args[static_cast<std::size_t>(k)].kind == jit::KernelArg::Kind::Array) return true;
  return false;
}

}  // namespace

bool fuse_needs_two_passes(const FuseState& s, std::span<const jit::KernelArg> args) {
  return reads_arrays(s.shape.post_params, args);
}

void check_two_pass_values(const FuseState& s, std::span<const jit::KernelArg> args) {
  for (std::size_t v = 0; v < s.shape.value_params.size(); ++v)
    if (!reads_arrays(s.shape.value_params[v], args))
      fail("{}: value {} of the return has the reduced shape, but another is elementwise over the inputs (two "
           "passes); NumPy would give them different shapes: return them from two fused functions",
           s.who(), v + 1);
}

jit::ReductionCode fuse_reduction_code(const FuseState& s, std::span<const dsl::Type> inputs, dsl::Target target,
                                       bool values_only) {
  std::string who = s.who();
  std::vector<dsl::Type> params(inputs.begin(), inputs.end());
  std::vector<std::string> scalar_names;
  std::vector<int> scalar_inputs;
  for (std::size_t k = 0; k < params.size(); ++k) {
    // As in reduction_code: a Lua number (weak) is one value for every element, which the
    // post step may read; an array's element or a typed scalar comes per element.
    if (params[k].kind == dsl::Type::Kind::Scalar && params[k].weak) {
      scalar_names.push_back(s.fn.params.at(k));
      scalar_inputs.push_back(static_cast<int>(k));
    }
  }
  const bool with_post = !values_only && !s.shape.post_text.empty();
  if (with_post)  // no array there (fuse_needs_two_passes): the post step takes them as one value each
    for (int k : s.shape.post_params)
      if (std::find(scalar_inputs.begin(), scalar_inputs.end(), k) == scalar_inputs.end())
        fail("{}: '{}' is read after the reductions, where it must be a Lua number (one value for the reduced "
             "ones) or an array (a second pass, elementwise); pass a Lua number, not a typed scalar or a boolean",
             who, s.fn.params.at(static_cast<std::size_t>(k)));
  dsl::DeviceFunctionRequest t = typed(s.fn, params, target);
  t.fuse_reduction_as_value = true;
  dsl::DeviceFunction value = compile_scalar_function(t, *s.fn.env, who);
  std::vector<dsl::Scalar> results = result_scalars(value.result, who, &t.function);
  const std::size_t nred = s.shape.ops.size();
  if (results.size() != nred)
    fail("{}: luda.{} reduces one value per element, got {}", who, s.shape.ops[0], results.size());
  std::vector<ReduceParts> parts;
  for (std::size_t k = 0; k < nred; ++k) parts.push_back(reduce_parts(*parse_reduce(s.shape.ops[k]), results[k]));
  jit::ReductionCode code;
  code.functions = value.code;
  code.typed = value.typed;
  code.nvrtc_options = value.nvrtc_options;
  code.chunks = {s.fn.source.chunk};
  code.weak_int_uses = value.weak_int_uses;
  code.map = value.c_name + "_j";
  code.functions += map_with_index(code.map, value.c_name, params,
                                   nred == 1 ? dsl::scalar_c_type(parts[0].reduce_type) : value.c_name + "_result",
                                   nred == 1);
  code.map_params = params;
  code.reduce_type = parts[0].reduce_type;
  auto compile = [&](const dsl::FunctionSource& src, const std::string& part, std::vector<dsl::Type> ps) {
    dsl::DeviceFunctionRequest f;
    f.function = src;
    f.name = fmt::format("{}_{}", s.fn.name, part);
    f.params = std::move(ps);
    f.options.target = target;
    dsl::DeviceFunction df = compile_scalar_function(f, builtin_environment(), who);
    code.functions += df.code;
    code.typed += df.typed;
    return df;
  };
  for (std::size_t k = 0; k < nred; ++k) {
    dsl::Type r = dsl::Type::scalar_of(parts[k].reduce_type);
    std::string suffix = nred == 1 ? "" : std::to_string(k + 1);
    std::string reduce = compile(source_text_function(parts[k].reduce), "reduce" + suffix, {r, r}).c_name;
    std::string identity = compile(source_text_function(parts[k].identity), "identity" + suffix, {}).c_name;
    if (nred == 1) {
      code.reduce = reduce;
      code.identity = identity;
    } else {
      code.accumulators.push_back({parts[k].reduce_type, reduce, identity, parts[k].output});
    }
  }
  if (!with_post && nred == 1) {  // the value is the reduction's
    code.post = compile(source_text_function("function(a) return a end"), "post",
                        {dsl::Type::scalar_of(code.reduce_type)})
                    .c_name;
    code.outputs = {parts[0].output};
    return code;
  }
  if (!with_post) {  // the reductions' values, for the second pass
    std::string names;
    std::vector<dsl::Type> types;
    for (std::size_t k = 0; k < nred; ++k) {
      names += fmt::format("{}a{}", k ? ", " : "", k);
      types.push_back(dsl::Type::scalar_of(parts[k].output));
      code.outputs.push_back(parts[k].output);
    }
    code.post =
        compile(source_text_function(fmt::format("function({0}) return {0} end", names)), "values", types).c_name;
    return code;
  }
  // The work after the reductions: a function of the reduced values (in their dtypes, as
  // NumPy's reductions give them) and the scalar inputs, in the user's chunk.
  dsl::FunctionSource post = dsl::fuse_post_function(s.fn.source, s.shape, scalar_names);
  std::vector<dsl::Type> post_params;
  for (const ReduceParts& p : parts) post_params.push_back(dsl::Type::scalar_of(p.output));
  for (int k : scalar_inputs) post_params.push_back(params[static_cast<std::size_t>(k)]);
  dsl::DeviceFunctionRequest f = typed(s.fn, std::move(post_params), target);
  f.function = post;
  f.name = s.fn.name + "_post";
  dsl::DeviceFunction df = as_written(s, [&] { return compile_scalar_function(f, *s.fn.env, who); });
  code.functions += df.code;
  code.typed += df.typed;
  for (std::string& o : df.nvrtc_options)
    if (std::find(code.nvrtc_options.begin(), code.nvrtc_options.end(), o) == code.nvrtc_options.end())
      code.nvrtc_options.push_back(std::move(o));
  code.chunks.push_back(post.chunk);
  for (dsl::WeakIntUse use : df.weak_int_uses) {  // the post's parameters: the reductions, then the scalars
    if (use.param < static_cast<int>(nred)) continue;
    use.param = scalar_inputs[static_cast<std::size_t>(use.param) - nred];
    code.weak_int_uses.push_back(std::move(use));
  }
  code.post = df.c_name;
  code.post_inputs = std::move(scalar_inputs);
  code.outputs = result_scalars(df.result, who);
  check_listed(who, code.outputs.size(), static_cast<std::size_t>(s.shape.nresults));
  return code;
}

jit::ElementCode fuse_second_pass_code(const FuseState& s, std::span<const dsl::Type> inputs, dsl::Target target) {
  dsl::FunctionSource second = dsl::fuse_second_pass_function(s.fn.source, s.shape, s.fn.params);
  dsl::DeviceFunctionRequest t = typed(s.fn, std::vector<dsl::Type>(inputs.begin(), inputs.end()), target);
  t.function = second;
  jit::ElementCode code = as_written(s, [&] { return element_code(t, *s.fn.env, s.who(), s.shape.nresults); });
  code.chunks = {second.chunk, s.fn.source.chunk};
  return code;
}

dsl::Signature parse_vectorize_signature(std::string_view text, const LuaFunction& fn, std::string_view who) {
  dsl::Signature sig = dsl::parse_signature(text);
  if (sig.params.size() != fn.params.size())
    fail("{}: the signature '{}' has {} parameter{} but the function takes {}", who, text, sig.params.size(),
         sig.params.size() == 1 ? "" : "s", fn.params.size());
  for (const dsl::Type& t : sig.params)
    if (t.kind != dsl::Type::Kind::Scalar)
      fail("{}: the signature '{}' takes {}; a vectorize signature names scalar types (\"float32(float32, float32)\")",
           who, text, t.str());
  if (sig.result.kind != dsl::Type::Kind::Scalar)
    fail("{}: the signature '{}' returns {}; a vectorize function returns one scalar", who, text, sig.result.str());
  return sig;
}

void add_signature(VectorizeState& s, dsl::Signature sig) {
  for (const dsl::Signature& have : s.signatures)
    if (have.params == sig.params && have.result == sig.result) return;
  s.signatures.push_back(std::move(sig));
}

}  // namespace luda::jit

#include "jit/kinds/make.h"

#include <algorithm>

#include "dsl/find_function.h"
#include "dsl/kind_source.h"
#include "dsl/source_text.h"
#include "runtime/error.h"

namespace luda::jit {

ElementwiseMade make_elementwise(std::string_view in_params, std::string_view out_params, std::string_view body,
                                 std::string_view name, jit::JitOptions options) {
  auto state = std::make_shared<StringKindState>();
  state->kind = "elementwise";
  state->name = std::string(name);
  state->options = options;
  dsl::KindParams params = dsl::parse_kind_signature(in_params, out_params, "elementwise", name, false);
  state->in = std::move(params.in);
  state->out = std::move(params.out);
  if (state->out.empty())
    fail("{}: out_params names no output; an elementwise kernel writes at least one", state->who());
  state->body = std::string(body);
  // The body's syntax and which outputs it reads, known now (any dtypes will do).
  std::vector<dsl::Scalar> any(state->in.size() + state->out.size(), dsl::Scalar::Float64);
  std::vector<bool> out_read = dsl::elementwise_function(state->in, state->out, any, body, name).out_read;
  jit::ElementwiseSetup setup;
  setup.kind = "elementwise";
  setup.name = state->name;
  for (const dsl::KindParam& p : state->in) {
    setup.in_names.push_back(p.name);
    setup.raw.push_back(p.raw);
  }
  // A raw output is passed whole, as a raw input is: the kind takes it as one (after the
  // inputs), and the body indexes it. The kind's outputs are the others.
  for (const dsl::KindParam& p : state->out)
    if (p.raw) {
      setup.in_names.push_back(p.name);
      setup.raw.push_back(true);
    }
  for (std::size_t j = 0; j < state->out.size(); ++j)
    if (!state->out[j].raw) {
      setup.out_names.push_back(state->out[j].name);
      setup.out_read.push_back(out_read[j]);
    }
  setup.index_args = true;
  setup.options = state->options;
  setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>> outputs,
                           dsl::Target target) { return elementwise_code(*state, inputs, outputs, target); };
  return {state, std::make_unique<jit::ElementwiseKind>(std::move(setup))};
}

ReductionMade make_reduction(std::string_view in_params, std::string_view out_params, std::string_view map_expr,
                             std::string_view reduce_expr, std::string_view post_map_expr, std::string_view identity,
                             std::string_view name, std::string reduce_type, jit::JitOptions options) {
  auto state = std::make_shared<StringKindState>();
  state->kind = "reduction";
  state->name = std::string(name);
  state->options = options;
  state->reduce_type = std::move(reduce_type);
  dsl::KindParams params = dsl::parse_kind_signature(in_params, out_params, "reduction", name, true);
  state->in = std::move(params.in);
  state->out = std::move(params.out);
  if (state->out.empty()) fail("{}: out_params names no output; a reduction writes at least one", state->who());
  state->map = std::string(map_expr);
  state->reduce = std::string(reduce_expr);
  state->post = std::string(post_map_expr);
  state->identity = std::string(identity);
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
  dsl::reduction_functions(state->in, state->out, any, dsl::Scalar::Float64, std::vector<bool>(state->in.size(), false),
                           state->map, state->reduce, state->post, state->identity, name);
  jit::ReductionSetup setup;
  setup.kind = "reduction";
  setup.name = state->name;
  for (const dsl::KindParam& p : state->in) setup.in_names.push_back(p.name);
  for (const dsl::KindParam& p : state->out) setup.out_names.push_back(p.name);
  setup.options = state->options;
  setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>> outputs,
                           dsl::Target target) { return reduction_code(*state, inputs, outputs, target); };
  return {state, std::make_unique<jit::ReductionKind>(std::move(setup))};
}

namespace {

// CuPy's size=: the outputs not given become 1-D arrays of `size` elements, where the
// arrays are, of their bound dtypes.
void allocate_sized_outputs(const StringKindState& s, std::int64_t size, std::span<const jit::KernelArg> in,
                            std::span<NDArray> outs, const Stream* stream) {
  if (size < 0) fail("{}: option 'size' is {}; it must be 0 or more", s.who(), size);
  std::vector<dsl::Type> types;
  std::optional<Device> device;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const jit::KernelArg& a = in[i];
    switch (a.kind) {
      case jit::KernelArg::Kind::Array:
        if (!s.in[i].raw)
          fail("{}: option 'size' is for calls whose inputs are all raw or scalars; here the arrays give the size",
               s.who());
        device = a.array->device();
        types.push_back(dsl::Type::array_of(to_scalar_kind(a.array->dtype()), a.array->ndim()));
        break;
      case jit::KernelArg::Kind::Int: types.push_back(dsl::Type::scalar_of(dsl::Scalar::Int64, true)); break;
      case jit::KernelArg::Kind::Float: types.push_back(dsl::Type::scalar_of(dsl::Scalar::Float64, true)); break;
      case jit::KernelArg::Kind::Bool: types.push_back(dsl::Type::scalar_of(dsl::Scalar::Bool)); break;
      case jit::KernelArg::Kind::Typed:
        types.push_back(dsl::Type::scalar_of(to_scalar_kind(a.typed.dtype), a.typed.weak));
        break;
    }
  }
  std::vector<std::optional<dsl::Scalar>> bound_outputs;
  for (const NDArray& a : outs) {
    bound_outputs.push_back(a.valid() ? std::optional(to_scalar_kind(a.dtype())) : std::nullopt);
    if (a.valid() && !device) device = a.device();
  }
  std::vector<dsl::Scalar> bound = bind_types(s, types, bound_outputs);
  for (std::size_t j = 0; j < outs.size(); ++j)
    if (!outs[j].valid())
      outs[j] = NDArray::empty({size}, to_dtype(bound[in.size() + j]), device.value_or(current_device()), stream);
}

}  // namespace

void check_raw_inputs(const StringKindState& s, std::span<const jit::KernelArg> in) {
  for (std::size_t i = 0; i < in.size(); ++i)
    if (s.in[i].raw && in[i].kind != jit::KernelArg::Kind::Array)
      fail("{}: argument {} '{}' is raw: pass an array, got {}", s.who(), i + 1, s.in[i].name,
           jit::describe_arg(in[i]));
}

void check_sizing(const StringKindState& s, std::span<const jit::KernelArg> in, bool given, bool size) {
  bool sized = false;  // a non-raw array input gives the size
  for (std::size_t i = 0; i < in.size(); ++i)
    sized = sized || (!s.in[i].raw && in[i].kind == jit::KernelArg::Kind::Array);
  std::size_t nout = s.out.size(), raw_outputs = 0, first_raw = nout;
  for (std::size_t j = 0; j < nout; ++j) {
    if (!s.out[j].raw) continue;
    ++raw_outputs;
    first_raw = std::min(first_raw, j);
  }
  bool given_sized = given && raw_outputs < nout;  // a given output that is not raw gives the size
  if (given_sized && size)  // CuPy refuses size= wherever an array that is not raw gives the size
    fail("{}: option 'size' is for calls whose outputs are allocated or all raw; here the outputs given give the size "
         "(pass the outputs or {{size = n}}, not both)",
         s.who());
  if (!sized && !given_sized && !size)
    fail("{}: no array argument gives the size of the loop (raw arrays and scalars do not); pass {}{{size = n}}",
         s.who(), raw_outputs < nout ? "the outputs or " : "");
  if (!given && !size && raw_outputs)  // CuPy: "Output array size is Undecided"
    fail("{}: output {} '{}' is raw, so its shape is the body's to decide: pass the outputs", s.who(), first_raw + 1,
         s.out[first_raw].name);
}

void run_elementwise(const StringKindState& s, jit::ElementwiseKind& kind, std::span<jit::KernelArg> args,
                     std::size_t nin, std::span<NDArray> outs, std::optional<std::int64_t> size, const Stream* stream) {
  std::span<const jit::KernelArg> in = args.first(nin);
  if (size) allocate_sized_outputs(s, *size, in, outs, stream);
  bool raw_outputs = false;
  for (const dsl::KindParam& p : s.out) raw_outputs = raw_outputs || p.raw;
  if (!raw_outputs) {
    kind.call(in, outs, stream, size.value_or(-1));
    return;
  }
  // The kind's operands: the inputs, then the raw outputs; its outputs, the others.
  std::vector<NDArray> plain;
  std::size_t r = nin;
  for (std::size_t j = 0; j < s.out.size(); ++j) {
    if (s.out[j].raw) args[r++] = jit::KernelArg::of_array(outs[j]);
    else plain.push_back(outs[j]);
  }
  kind.call(args.first(r), plain, stream, size.value_or(-1));
  for (std::size_t j = 0, p = 0; j < s.out.size(); ++j)
    if (!s.out[j].raw) outs[j] = plain[p++];
}

void call_elementwise(const StringKindState& s, jit::ElementwiseKind& kind, std::span<jit::KernelArg> args,
                      std::size_t nin, std::span<NDArray> outs, bool given, std::optional<std::int64_t> size,
                      const Stream* stream) {
  check_raw_inputs(s, args.first(nin));
  check_sizing(s, args.first(nin), given, size.has_value());
  run_elementwise(s, kind, args, nin, outs, size, stream);
}

std::unique_ptr<jit::ElementwiseKind> make_vectorize(const std::shared_ptr<VectorizeState>& state) {
  jit::ElementwiseSetup setup;
  setup.kind = "vectorize";
  setup.name = state->fn.name;
  setup.in_names = state->fn.params;
  setup.out_names = {"out"};
  setup.raw.assign(state->fn.params.size(), false);
  setup.out_read = {false};
  setup.options = state->fn.options;
  setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                           dsl::Target target) { return vectorize_code(*state, inputs, target); };
  return std::make_unique<jit::ElementwiseKind>(std::move(setup));
}

std::shared_ptr<VectorizeState> vectorize_of_text(std::string text, const std::vector<std::string>& signatures,
                                                  jit::JitOptions options) {
  auto state = std::make_shared<VectorizeState>();
  LuaFunction& f = state->fn;
  f.source = dsl::text_source(std::move(text));
  dsl::FoundFunction found = dsl::find_function(f.source);  // its syntax errors, now
  if (found.function->is_vararg) fail("vectorize: the function takes ... (a vararg); name each input as a parameter");
  for (const dsl::Name& p : found.function->params) f.params.push_back(p.text);
  f.env = &builtin_environment();
  f.name = dsl::function_name(f.source);
  if (f.name.empty()) f.name = "fn";
  f.options = options;
  for (const std::string& sig : signatures) add_signature(*state, parse_vectorize_signature(sig, f, state->who()));
  state->dynamic = signatures.empty();
  return state;
}

}  // namespace luda::jit

// Kernels from C++ (luda/luda.h): the kinds are made by jit/kinds/make.h, as the Lua module
// makes them, and called on public Arrays; raw kernels are jit/raw/raw_module.h's.
#include <algorithm>
#include <cmath>
#include <memory>

#include "api/internal.h"
#include "jit/kinds/jit_kernel.h"
#include "jit/kinds/make.h"
#include "jit/raw/raw_module.h"
#include "runtime/error.h"
#include "runtime/graph/recording.h"

namespace luda {
namespace {

jit::JitOptions jit_options(const KernelOptions& o) {
  jit::JitOptions j;
  j.fastmath = o.fastmath;
  j.debug = o.debug;
  j.boundscheck = jit::boundscheck_with_env(o.boundscheck);
  return j;
}

// The arrays of `outputs` as the library's, with room for `n` (invalid: to make).
std::vector<NDArray> ndarrays(const std::vector<Array>& outputs, std::size_t n) {
  std::vector<NDArray> out(n);
  for (std::size_t j = 0; j < outputs.size() && j < n; ++j) out[j] = outputs[j].ndarray();
  return out;
}

std::vector<Array> arrays(std::vector<NDArray>& made) {
  std::vector<Array> out;
  out.reserve(made.size());
  for (NDArray& a : made) out.emplace_back(std::move(a));
  return out;
}

const Stream* stream_of(const Stream& s) { return s ? &s : nullptr; }

// A call while this thread records a graph (luda::Graph): the graph's kernel nodes run
// the kernel's code, which lives as long as the kernel object.
void keep_for_graph(const std::shared_ptr<const void>& kernel) {
  if (GraphRecording* r = GraphRecording::active()) [[unlikely]]
    r->keep(kernel);
}

}  // namespace

// ---- arguments ------------------------------------------------------------------------------

Arg Arg::typed(DType dtype, std::int64_t value) {
  Arg a;
  Typed t{dtype, value, static_cast<std::uint64_t>(value), static_cast<double>(value)};
  if (is_integer(dtype) || dtype == DType::Bool) {
    if (!integer_fits(value, dtype)) {
      IntegerRange r = integer_range(dtype);
      fail("Arg::typed: {} does not fit in {} ({} to {})", value, dtype_name(dtype), r.lo, r.hi);
    }
  }
  a.value_ = t;
  return a;
}

Arg Arg::typed(DType dtype, std::uint64_t value) {
  if (dtype == DType::UInt64) {
    Arg a;
    a.value_ = Typed{dtype, static_cast<std::int64_t>(value), value, static_cast<double>(value)};
    return a;
  }
  if (value > static_cast<std::uint64_t>(INT64_MAX) && !is_float(dtype)) {
    IntegerRange r = integer_range(dtype);
    fail("Arg::typed: {} does not fit in {} ({} to {})", value, dtype_name(dtype), r.lo, r.hi);
  }
  if (is_float(dtype)) return typed(dtype, static_cast<double>(value));
  return typed(dtype, static_cast<std::int64_t>(value));
}

Arg Arg::typed(DType dtype, double value) {
  if (is_float(dtype)) {
    Arg a;
    a.value_ = Typed{dtype, 0, 0, value};
    return a;
  }
  if (!(value == std::floor(value)) || value < -9.3e18 || value > 1.85e19)
    fail("Arg::typed: {} is not an integer; a {} scalar takes an integer value", value, dtype_name(dtype));
  if (value >= 9.2e18) return typed(dtype, static_cast<std::uint64_t>(value));
  return typed(dtype, static_cast<std::int64_t>(value));
}

jit::KernelArg api::kernel_arg(const Arg& a) {
  struct Visit {
    jit::KernelArg operator()(const Array& x) const {
      if (!x.valid()) fail("an argument is an empty array (a default-constructed luda::Array); make or wrap one first");
      return jit::KernelArg::of_array(x.ndarray());
    }
    jit::KernelArg operator()(bool b) const { return jit::KernelArg::of_bool(b); }
    jit::KernelArg operator()(std::int64_t i) const { return jit::KernelArg::of_int(i); }
    jit::KernelArg operator()(double f) const { return jit::KernelArg::of_float(f); }
    jit::KernelArg operator()(const Arg::Typed& t) const {
      if (t.dtype == DType::Bool) return jit::KernelArg::of_typed(Scalar::of_bool(t.i != 0));
      if (is_float(t.dtype)) return jit::KernelArg::of_typed(Scalar::of_float(t.f, t.dtype));
      if (is_unsigned_integer(t.dtype)) return jit::KernelArg::of_typed(Scalar::of_uint(t.u, t.dtype));
      return jit::KernelArg::of_typed(Scalar::of_int(t.i, t.dtype));
    }
  };
  return std::visit(Visit{}, a.value());
}

std::vector<jit::KernelArg> api::kernel_args(const std::vector<Arg>& args) {
  std::vector<jit::KernelArg> out;
  out.reserve(args.size());
  for (const Arg& a : args) out.push_back(kernel_arg(a));
  return out;
}

// ---- the kinds ------------------------------------------------------------------------------

struct ElementwiseKernel::Impl {
  jit::ElementwiseMade made;
};

ElementwiseKernel::ElementwiseKernel(std::string in_params, std::string out_params, std::string body, std::string name,
                                     KernelOptions options)
    : impl_(std::make_shared<Impl>(
          Impl{jit::make_elementwise(in_params, out_params, body, name, jit_options(options))})) {}

std::vector<Array> ElementwiseKernel::operator()(const std::vector<Arg>& inputs, std::vector<Array> outputs,
                                                 const Stream& stream, std::int64_t size) const {
  keep_for_graph(impl_);
  const jit::StringKindState& s = *impl_->made.state;
  std::size_t nin = s.in.size(), nout = s.out.size();
  if (inputs.size() != nin)
    fail("{}: {} input{} given; the kernel takes {}", s.who(), inputs.size(), inputs.size() == 1 ? "" : "s", nin);
  if (!outputs.empty() && outputs.size() != nout)
    fail("{}: {} output{} given; the kernel has {}: give them all, or none to have them made", s.who(), outputs.size(),
         outputs.size() == 1 ? "" : "s", nout);
  std::vector<jit::KernelArg> args = api::kernel_args(inputs);
  args.resize(nin + nout);
  std::vector<NDArray> outs = ndarrays(outputs, nout);
  jit::call_elementwise(s, *impl_->made.kind, args, nin, outs, !outputs.empty(),
                        size >= 0 ? std::optional<std::int64_t>(size) : std::nullopt, stream_of(stream));
  return arrays(outs);
}

struct ReductionKernel::Impl {
  jit::ReductionMade made;
};

ReductionKernel::ReductionKernel(std::string in_params, std::string out_params, std::string map_expr,
                                 std::string reduce_expr, std::string post_map_expr, std::string identity,
                                 std::string name, std::string reduce_type, KernelOptions options)
    : impl_(std::make_shared<Impl>(
          Impl{jit::make_reduction(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name,
                                   std::move(reduce_type), jit_options(options))})) {}

std::vector<Array> ReductionKernel::operator()(const std::vector<Arg>& inputs, const ReduceOptions& how) const {
  keep_for_graph(impl_);
  const jit::StringKindState& s = *impl_->made.state;
  std::size_t nout = s.out.size();
  if (!how.out.empty() && how.out.size() != nout)
    fail("{}: {} output arrays given; the kernel has {} output{}", s.who(), how.out.size(), nout, nout == 1 ? "" : "s");
  std::vector<jit::KernelArg> args = api::kernel_args(inputs);
  std::vector<NDArray> outs = ndarrays(how.out, nout);
  std::optional<std::vector<int>> axes;
  if (how.axes) {  // 0-based, negative from the end, as NumPy counts them
    int ndim = 0;
    for (const jit::KernelArg& a : args)
      if (a.kind == jit::KernelArg::Kind::Array) ndim = std::max(ndim, a.array->ndim());
    axes.emplace();
    for (int axis : *how.axes) {
      if (axis < -ndim || axis >= ndim)
        fail("{}: axis {} is out of range for {}-dimensional operands (axes are 0 to {}, or negative from the end)",
             s.who(), axis, ndim, ndim - 1);
      int a = axis < 0 ? axis + ndim : axis;
      if (std::find(axes->begin(), axes->end(), a) != axes->end()) fail("{}: axis {} is given twice", s.who(), axis);
      axes->push_back(a);
    }
    std::sort(axes->begin(), axes->end());
  }
  std::optional<std::span<const int>> span;
  if (axes) span = std::span<const int>(*axes);
  impl_->made.kind->call(args, outs, span, how.keepdims, stream_of(how.stream));
  return arrays(outs);
}

struct Vectorize::Impl {
  std::shared_ptr<jit::VectorizeState> state;
  std::unique_ptr<jit::ElementwiseKind> kind;
};

Vectorize::Vectorize(std::string function_text, std::vector<std::string> signatures, KernelOptions options) {
  auto state = jit::vectorize_of_text(std::move(function_text), signatures, jit_options(options));
  auto kind = jit::make_vectorize(state);
  for (const dsl::Signature& sig : state->signatures) kind->compile(sig.params, current_device());
  impl_ = std::make_shared<Impl>(Impl{std::move(state), std::move(kind)});
}

std::vector<Array> Vectorize::operator()(const std::vector<Arg>& inputs, std::vector<Array> outputs,
                                         const Stream& stream) const {
  keep_for_graph(impl_);
  std::vector<jit::KernelArg> args = api::kernel_args(inputs);
  std::vector<NDArray> outs = ndarrays(outputs, 1);
  impl_->kind->call(args, outs, stream_of(stream));
  return arrays(outs);
}

// ---- raw kernels -----------------------------------------------------------------------------

struct RawKernel::Impl {
  std::shared_ptr<jit::RawKernel> kernel;
};

RawKernel::RawKernel(std::string source, std::string name, std::vector<std::string> options, bool cooperative)
    : impl_(std::make_shared<Impl>(
          Impl{jit::RawModule::create(std::move(source), std::move(options), cooperative)->get_function(name)})) {}

void RawKernel::operator()(Dim3 grid, Dim3 block, const std::vector<Arg>& args, unsigned shared_mem,
                           const Stream& stream) const {
  keep_for_graph(impl_);
  std::vector<jit::KernelArg> a = api::kernel_args(args);
  LaunchConfig config;
  config.grid = grid;
  config.block = block;
  config.shared_mem = shared_mem;
  if (stream) {
    config.stream = stream.handle();
    config.stream_device = stream.device();
  }
  impl_->kernel->launch(config, a);
}

}  // namespace luda

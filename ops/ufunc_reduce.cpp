#include "ops/ufunc_reduce.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dsl/diagnostics.h"
#include "runtime/error.h"

namespace luda::ops {

// The kinds' frontends (jit/kinds/frontend.h, jit/kinds/make.h) that this file builds on.
using jit::VectorizeState;
using jit::builtin_environment;
using jit::compile_scalar_function;
using jit::source_text_function;
using jit::strong;
using jit::to_dtype;
using jit::vectorize_code;

namespace {

// x[..., start:stop:step, ...] with the slice at `axis`.
NDArray slice(const NDArray& x, int axis, std::int64_t start, std::int64_t stop, std::int64_t step) {
  std::vector<IndexItem> items(static_cast<std::size_t>(axis) + 1, IndexItem{Slice{}});
  items.back() = Slice{start, stop, step};
  return x.index(items);
}

NDArray apply2(jit::ElementwiseKind& kind, const jit::KernelArg& a, const jit::KernelArg& b, NDArray out,
               const Stream* stream) {
  std::array<jit::KernelArg, 2> in = {a, b};
  kind.call(in, std::span<NDArray>(&out, 1), stream);
  return out;
}

// The initial value as a typed scalar of the result's dtype (NumPy casts it so).
jit::KernelArg typed_initial(const jit::KernelArg& a, DType dtype) {
  Scalar s;
  switch (a.kind) {
    case jit::KernelArg::Kind::Int: s = Scalar::of_int(a.i); break;
    case jit::KernelArg::Kind::Float: s = Scalar::of_float(a.f); break;
    case jit::KernelArg::Kind::Bool: s = Scalar::of_bool(a.b); break;
    case jit::KernelArg::Kind::Typed: s = a.typed; break;
    case jit::KernelArg::Kind::Array: LUDA_INTERNAL_CHECK(!"initial is a scalar"); break;
  }
  return jit::KernelArg::of_typed(s.cast(dtype));
}

// The error for a function whose result it cannot take again: f(t, t) gives r, and f(r, r)
// gives `again` (nullopt: does not type).
[[noreturn]] void not_reducible(std::string_view who, DType t, DType r, std::optional<DType> again) {
  fail("{}: reduce needs a function whose result has its operands' dtype; f({}, {}) gives {}, and f({}, {}) {}", who,
       dtype_name(t), dtype_name(t), dtype_name(r), dtype_name(r), dtype_name(r),
       again ? fmt::format("gives {}", dtype_name(*again)) : std::string("is not defined"));
}

// A Lua literal of a scalar argument, exactly.
std::string lua_literal(const jit::KernelArg& a) {
  switch (a.kind) {
    case jit::KernelArg::Kind::Int:
      return a.i == std::numeric_limits<std::int64_t>::min() ? "math.mininteger" : std::to_string(a.i);
    case jit::KernelArg::Kind::Float:
      if (std::isnan(a.f)) return "(0 / 0)";
      if (std::isinf(a.f)) return a.f > 0 ? "math.huge" : "-math.huge";
      return fmt::format("{:.17g}", a.f).find_first_of(".eE") == std::string::npos ? fmt::format("{:.17g}.0", a.f)
                                                                                   : fmt::format("{:.17g}", a.f);
    case jit::KernelArg::Kind::Bool: return a.b ? "true" : "false";
    default: break;
  }
  LUDA_INTERNAL_CHECK(!"an identity is a number or a boolean");
  return {};
}

// The identity as a value of the result's dtype, converted as a store converts (NumPy's
// rule): true is 1, a number is true where it is not 0.
std::string identity_value(const jit::KernelArg& a, dsl::Scalar r) {
  if (r == dsl::Scalar::Bool) {
    bool truth = a.kind == jit::KernelArg::Kind::Bool    ? a.b
                 : a.kind == jit::KernelArg::Kind::Float ? a.f != 0 || std::isnan(a.f)
                                                         : a.i != 0;
    return truth ? "true" : "false";
  }
  if (a.kind == jit::KernelArg::Kind::Bool) return fmt::format("luda.{}({})", dsl::scalar_name(r), a.b ? 1 : 0);
  return fmt::format("luda.{}({})", dsl::scalar_name(r), lua_literal(a));
}

jit::ReductionCode vectorize_reduction_code(const VectorizeState& s, std::span<const dsl::Type> inputs,
                                            dsl::Target target) {
  std::string who = s.who();
  dsl::Type t = strong(inputs[0]);
  std::array<dsl::Type, 2> tt = {t, t};
  dsl::Scalar r = vectorize_code(s, tt, target).outputs[0];
  std::array<dsl::Type, 2> rr = {dsl::Type::scalar_of(r), dsl::Type::scalar_of(r)};
  jit::ElementCode f;
  try {
    f = vectorize_code(s, rr, target);
  } catch (const dsl::SourceError&) {  // f does not type for them
    not_reducible(who, to_dtype(t.scalar), to_dtype(r), std::nullopt);
  }
  if (f.outputs[0] != r) not_reducible(who, to_dtype(t.scalar), to_dtype(r), to_dtype(f.outputs[0]));
  jit::ReductionCode code;
  code.functions = f.functions;
  code.typed = f.typed;
  code.nvrtc_options = f.nvrtc_options;
  code.chunks = f.chunks;
  std::string_view rc = dsl::scalar_c_type(r);
  auto arg = [&](std::size_t k, std::string_view v) {
    return fmt::format("luda_cvt<{}>({})", dsl::scalar_c_type(f.params[k].scalar), v);
  };
  // reduce(a, b) = f(a, b); post(a, initial) = f(initial, a); map passes x on.
  code.reduce = f.call + "_reduce";
  code.post = f.call + "_post";
  code.map = f.call + "_map";
  code.functions += fmt::format("static __device__ {0} {1}({0} a, {0} b) {{ return luda_cvt<{0}>({2}({3}, {4})); }}\n",
                                rc, code.reduce, f.call, arg(0, "a"), arg(1, "b"));
  code.functions += fmt::format("static __device__ {0} {1}({0} a, {0} i) {{ return luda_cvt<{0}>({2}({3}, {4})); }}\n",
                                rc, code.post, f.call, arg(0, "i"), arg(1, "a"));
  code.functions += fmt::format(
      "static __device__ {0} {1}({0} a, {0} i, long long j) {{ (void)i; (void)j; return a; }}\n", rc, code.map);
  dsl::FunctionSource identity = source_text_function(
      fmt::format("function() return {} end", identity_value(*s.identity, r)));
  dsl::DeviceFunctionRequest id;
  id.function = identity;
  id.name = s.fn.name + "_identity";
  id.options.target = target;
  dsl::DeviceFunction idf = compile_scalar_function(id, builtin_environment(), who);
  code.functions += idf.code;
  code.identity = idf.c_name;
  code.chunks.push_back(identity.chunk);
  code.map_params = {dsl::Type::scalar_of(r), dsl::Type::scalar_of(r)};
  code.post_inputs = {1};
  code.reduce_type = r;
  code.outputs = {r};
  return code;
}

}  // namespace

std::unique_ptr<jit::ReductionKind> vectorize_reduction(std::shared_ptr<const VectorizeState> state) {
  jit::ReductionSetup setup;
  setup.kind = "vectorize";
  setup.name = state->fn.name;
  setup.in_names = {"x", "initial"};
  setup.out_names = {"out"};
  setup.options = state->fn.options;
  setup.frontend = [state](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                           dsl::Target target) { return vectorize_reduction_code(*state, inputs, target); };
  return std::make_unique<jit::ReductionKind>(std::move(setup));
}

NDArray deliver(NDArray result, NDArray out, std::string_view who, const Stream* stream) {
  if (!out.valid()) return result;
  if (out.shape() != result.shape() || out.dtype() != result.dtype())
    fail("{}: out is a {} array of shape {} but the result is a {} array of shape {}", who, dtype_name(out.dtype()),
         shape_str(out.shape()), dtype_name(result.dtype()), shape_str(result.shape()));
  if (stream) stream->synchronize();  // assign() copies on the default stream, which a luda stream does not wait for
  out.assign(result);
  return out;
}

NDArray ufunc_reduce(jit::ElementwiseKind& kind, std::string_view who, std::string_view name, const NDArray& x,
                     std::span<const int> axes, bool keepdims, const std::optional<jit::KernelArg>& initial,
                     NDArray out, const Stream* stream) {
  if (!x.valid()) fail("{}: the array is an empty handle", who);
  // The result's dtype: f's over two (no) elements of x's.
  NDArray none = NDArray::empty({0}, x.dtype(), x.device(), stream);
  DType dtype = apply2(kind, jit::KernelArg::of_array(none), jit::KernelArg::of_array(none), {}, stream).dtype();
  NDArray cur = x;
  if (dtype != x.dtype()) {
    // NumPy converts the elements to the result's dtype (int64 to float64 for a / b); f
    // must then keep it: a comparison's bools cannot be compared again.
    NDArray converted = none.astype(dtype);
    std::optional<DType> again;
    try {
      again =
          apply2(kind, jit::KernelArg::of_array(converted), jit::KernelArg::of_array(converted), {}, stream).dtype();
    } catch (const dsl::SourceError&) {  // f does not type for them
    }
    if (again != dtype) not_reducible(who, x.dtype(), dtype, again);
    if (stream) stream->synchronize();
    cur = x.astype(dtype);
  }
  Shape kept = x.shape();  // the result's shape with keepdims
  bool empty = false;
  for (int a : axes) {
    empty = empty || x.shape()[static_cast<std::size_t>(a)] == 0;
    kept[static_cast<std::size_t>(a)] = 1;
  }
  Shape shape;  // without
  for (std::size_t d = 0; d < kept.size(); ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<int>(d)) == axes.end()) shape.push_back(kept[d]);
  NDArray result;
  if (empty) {
    // NumPy: an empty reduced axis needs an identity, or initial=, even where the result is empty.
    if (!initial) fail("{}: zero-size array to reduction operation {} which has no identity", who, name);
    Scalar value = typed_initial(*initial, dtype).typed;
    result = NDArray::full(shape, value, dtype, x.device(), stream);
  } else {
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {  // the last first: the others keep their numbers
      int axis = *it;
      std::int64_t n = cur.shape()[static_cast<std::size_t>(axis)];
      while (n > 1) {
        std::int64_t h = n / 2;
        NDArray r = apply2(kind, jit::KernelArg::of_array(slice(cur, axis, 0, 2 * h, 2)),
                           jit::KernelArg::of_array(slice(cur, axis, 1, 2 * h, 2)), {}, stream);
        if (n % 2) {  // the odd last element joins the last pair, in order
          NDArray tail = slice(r, axis, h - 1, h, 1);
          apply2(kind, jit::KernelArg::of_array(tail), jit::KernelArg::of_array(slice(cur, axis, n - 1, n, 1)), tail,
                 stream);
        }
        cur = r;
        n = h;
      }
      std::vector<IndexItem> items(static_cast<std::size_t>(axis) + 1, IndexItem{Slice{}});
      items.back() = std::int64_t{0};
      cur = cur.index(items);
    }
    result = cur;
    if (initial) result = apply2(kind, typed_initial(*initial, dtype), jit::KernelArg::of_array(result), {}, stream);
    else if (result.buffer() == x.buffer()) result = cur.copy(std::nullopt, stream);  // a new array, as NumPy's
  }
  if (keepdims) result = result.reshape(kept);
  return deliver(std::move(result), std::move(out), who, stream);
}

}  // namespace luda::ops

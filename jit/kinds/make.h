// The kernel kinds that have no Lua function behind them, made without a lua_State: CuPy's
// ElementwiseKernel and ReductionKernel from their parameter strings and expressions, and
// Numba's vectorize from a function's source text or from a frontend state the caller made.
// The Lua bindings (stdlib/kind_bindings.cpp) and the C++ API (api/kernels.cpp) both make
// their kinds here, so the two agree on every check and message.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jit/kinds/elementwise.h"
#include "jit/kinds/frontend.h"
#include "jit/kinds/reduction.h"

namespace luda::jit {

// CuPy's ElementwiseKernel. Errors (parameter strings, the body's syntax) point at the
// strings' own lines and columns; "elementwise 'k': out_params names no output; ...".
struct ElementwiseMade {
  std::shared_ptr<StringKindState> state;
  std::unique_ptr<jit::ElementwiseKind> kind;
};
ElementwiseMade make_elementwise(std::string_view in_params, std::string_view out_params, std::string_view body,
                                 std::string_view name, jit::JitOptions options);

// CuPy's ReductionKernel; `reduce_type` is a dtype, a placeholder of the parameters, or ""
// (the first output's type). Every expression's syntax is checked now.
struct ReductionMade {
  std::shared_ptr<StringKindState> state;
  std::unique_ptr<jit::ReductionKind> kind;
};
ReductionMade make_reduction(std::string_view in_params, std::string_view out_params, std::string_view map_expr,
                             std::string_view reduce_expr, std::string_view post_map_expr, std::string_view identity,
                             std::string_view name, std::string reduce_type, jit::JitOptions options);

// A call of CuPy's elementwise kind `kind`, made by make_elementwise for `s`, in three
// steps that the Lua binding takes apart (it reads its options between the first two):
//   check_raw_inputs: a raw input must be an array
//     "elementwise 'k': argument 2 'y' is raw: pass an array, got a float 2.5"
//   check_sizing: which argument gives the loop's size (CuPy's rules for size=)
//     "elementwise 'k': no array argument gives the size of the loop (raw arrays and scalars do not); pass the outputs or {size = n}"
//     "elementwise 'k': output 1 'y' is raw, so its shape is the body's to decide: pass the outputs"
//   run_elementwise: `args` holds the nin inputs, then room for one argument per output: a
//     raw output (CuPy's `raw T y`) goes to the kind as an input after the inputs, since the
//     body indexes it and it takes no part in the loop's shape. `outs` has one entry per
//     out_param: all given (`given`), or none (made, of the broadcast shape, or of `size`
//     elements: CuPy's size=); the outputs made are left there.
// call_elementwise takes the three steps.
void check_raw_inputs(const StringKindState& s, std::span<const jit::KernelArg> in);
void check_sizing(const StringKindState& s, std::span<const jit::KernelArg> in, bool given, bool size);
void run_elementwise(const StringKindState& s, jit::ElementwiseKind& kind, std::span<jit::KernelArg> args,
                     std::size_t nin, std::span<NDArray> outs, std::optional<std::int64_t> size, const Stream* stream);
void call_elementwise(const StringKindState& s, jit::ElementwiseKind& kind, std::span<jit::KernelArg> args,
                      std::size_t nin, std::span<NDArray> outs, bool given, std::optional<std::int64_t> size,
                      const Stream* stream);

// The elementwise kind of a vectorize state (its function, signatures and options set).
std::unique_ptr<jit::ElementwiseKind> make_vectorize(const std::shared_ptr<VectorizeState>& state);

// A vectorize state for a function given as source text, whose names are the builtin
// namespaces only; `signatures` are Numba's ("float32(float32, float32)"), none for a
// function typed per call. Errors start "vectorize '<name>'".
std::shared_ptr<VectorizeState> vectorize_of_text(std::string text, const std::vector<std::string>& signatures,
                                                  jit::JitOptions options);

}  // namespace luda::jit

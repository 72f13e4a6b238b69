// NumPy's ufunc.reduce for a binary elementwise kind (vectorize's f:reduce): the function
// applied along axes, as Numba's and NumPy's `reduce` apply a ufunc. No Lua state.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "jit/call/call_args.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/frontend.h"
#include "jit/kinds/reduction.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops {

// Reduces x over `axes` (0-based, distinct, sorted) with the kind's function f(a, b),
// keeping them as size-1 axes with keepdims, and starting from `initial` when given.
// The function is taken to be associative (NumPy and Numba take a ufunc's reduce so on the
// GPU); reducing over several axes also reorders, so it must commute there. The
// elements are combined in pairs, in order ((x1 f x2) f (x3 f x4) ...), by one launch of
// the kind per halving: log2(n) launches over a reduced axis of n elements, on any layout.
// The result's dtype is f's over two elements of x's; x is converted to it first when it
// differs. `out` receives the result when valid. Errors start with `who`: "vectorize 'f':
// zero-size array to reduction operation f which has no identity" (an empty reduced axis
// with no initial, NumPy's error), "vectorize 'lt': reduce needs a function whose result
// has its operands' dtype; f(int64, int64) gives bool".
NDArray ufunc_reduce(jit::ElementwiseKind& kind, std::string_view who, std::string_view name, const NDArray& x,
                     std::span<const int> axes, bool keepdims, const std::optional<jit::KernelArg>& initial,
                     NDArray out = {}, const Stream* stream = nullptr);

// The reduction kind of a vectorize function of two arguments with an identity (Numba's
// identity=): one kernel whose reduce is the function (typed for two elements of its
// result's dtype), identity() the identity, and post(a, initial) f(initial, a); its inputs
// are x and the initial value (the identity when none is given). Over several axes the
// function must commute as well.
std::unique_ptr<jit::ReductionKind> vectorize_reduction(std::shared_ptr<const jit::VectorizeState> state);

// `result` as the call's result: written into `out` when valid (same shape and dtype, or
// the error "<who>: out is a float64 array of shape (3,) but the result is a float32 array
// of shape (3,)"), else itself.
NDArray deliver(NDArray result, NDArray out, std::string_view who, const Stream* stream);

}  // namespace luda::ops

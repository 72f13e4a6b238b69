// Array arithmetic and reductions, as NumPy and CuPy give them, built on the kernel kinds:
// each operation is one jit::ElementwiseKind or jit::ReductionKind (made once per process)
// whose scalar functions are Lua source text ("function(a, b) return a + b end"), typed
// per call like any vectorize function and compiled through the same caches. No Lua state:
// the Lua bindings (stdlib/array_math_bindings.cpp) and C++ hosts call these.
//
// Dtypes: operands promote by NumPy 2's rules (promote_types; a Lua number is weak and
// takes the arrays' kind), then the operation has the kernel language's meaning on the
// elements: `/` and `^` give floats, `//` and `%` floor as Lua does, math.floor gives int64.
// Reductions: sum and prod accumulate small integers in int64 (uint64), mean of integers is
// float64, max and min propagate NaN, argmax and argmin give the first index of the
// extreme (the first NaN when there is one) as a 0-based int64. The nan forms (nansum ...
// nanargmin) skip NaN as NumPy's do, and are the plain ones on integers and bools.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/types.h"
#include "jit/call/call_args.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/reduce_rules.h"
#include "jit/kinds/reduction.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops {

// The elementwise operations, by NumPy's names: add subtract multiply divide floor_divide
// mod power negative, less greater less_equal greater_equal equal not_equal, minimum
// maximum where, and the kernel language's math set: sqrt exp log sin cos tan asin acos
// atan floor ceil abs fmod exp2 log2 log10 log1p expm1 sinh cosh tanh erf erfc lgamma
// tgamma cbrt rsqrt rint trunc hypot copysign fma isnan isinf isfinite asinh acosh atanh
// nextafter, with log_base (log(x, base)) and atan2 (atan(y, x)); NumPy's deg2rad rad2deg
// sign square reciprocal clip fmax fmin, bitwise_and bitwise_or bitwise_xor invert
// left_shift right_shift (integers and bools), logical_and logical_or logical_xor
// logical_not (any dtype, giving bools).
std::span<const std::string_view> ufunc_names();
// The operation's number of inputs; 0 when there is no such name.
int ufunc_inputs(std::string_view name);
// The operation's kind (made at first use). Error for an unknown name.
jit::ElementwiseKind& ufunc(std::string_view name);

// Applies the operation: `out` receives the result (allocated when invalid: on the
// operands' device, or the current device when all are scalars). Errors start
// "ufunc '<name>'": shapes that do not broadcast, mixed devices, an out of another dtype,
// an operation the dtype lacks ("ufunc 'subtract' is not defined for bool operands"), a
// Lua integer the integer operands' dtype cannot hold (NumPy 2: uint8 + 1000; comparisons
// compare the true values instead).
void apply(std::string_view name, std::span<const jit::KernelArg> inputs, NDArray& out, const Stream* stream = nullptr);
NDArray apply(std::string_view name, std::span<const jit::KernelArg> inputs, const Stream* stream = nullptr);

// NumPy's round(x, decimals) (around): halves to even, as rint; decimals > 0 rounds to that
// many digits after the point, decimals < 0 to a multiple of 10^-decimals. Floats keep
// their dtype, computed as NumPy's three steps (x * 10^d, rint, / 10^d); integers stay
// integers: themselves for decimals >= 0, else the nearest multiple (0 where 10^-decimals
// is past the dtype's range). Errors as apply's, for "ufunc 'round'".
void round(const jit::KernelArg& x, std::int64_t decimals, NDArray& out, const Stream* stream = nullptr);
// Whether `name` is a step of round (round_scaled, round_coarse): not a function of its own.
bool is_step(std::string_view name);

// ---- reductions ----------------------------------------------------------------------

// The reductions' names and kinds' parts (jit/kinds/reduce_rules.h), as ops' own.
using jit::parse_reduce;
using jit::Reduce;
using jit::reduce_name;

// NumPy's dtype= and initial= of a reduction.
struct ReduceOptions {
  // sum, prod, mean and their nan forms: the dtype the elements are converted to, summed
  // in and returned as (NumPy: sum(int8, dtype=int8) wraps in int8). mean takes floats.
  std::optional<DType> dtype;
  // sum, prod, max, min and their nan forms: a value the reduction starts from, once per
  // result (NumPy's initial=); it makes max and min of an empty axis legal. A Lua number
  // (weak: it takes the result's dtype and must fit it) or a typed scalar.
  std::optional<jit::KernelArg> initial;
};
// Whether op takes dtype= and initial=.
bool takes_dtype(Reduce op);
bool takes_initial(Reduce op);

// Reduces x over `axes` (0-based, distinct, sorted; nullopt: all), keeping them as size-1
// axes with keepdims. argmax and argmin take one axis or none (a flat C-order index).
// `out` receives the result when valid (its dtype and shape must be the result's).
// Errors start with the operation's name: "max: zero-size array to reduction operation
// maximum which has no identity", "argmax: attempt to get argmax of an empty sequence",
// "nanargmax: All-NaN slice encountered" (NumPy's ValueError; it waits for the device).
NDArray reduce(Reduce op, const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims = false,
               NDArray out = {}, const Stream* stream = nullptr, const ReduceOptions& options = {});

// NumPy's var and std (root: its square root; nan: nanvar and nanstd, NaN skipped): the mean of |x - mean(x)|^2 over
// `axes` (nullopt: all), the sum divided by max(n - ddof, 0), its square root for std.
// Floats keep their dtype, integers and bools give float64, `dtype` (a float) computes
// and returns in it. An empty axis gives NaN, as NumPy's (which warns).
NDArray moment(bool root, bool nan, const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims,
               double ddof, std::optional<DType> dtype, NDArray out = {}, const Stream* stream = nullptr);

// The inner product of two 1-D arrays of one length, as a 0-d array of their promoted
// dtype (a reduction kind; ops/linalg.h builds NumPy's dot on it). `who` starts errors:
// "dot: shapes (3,) and (4,) not aligned: 3 (axis 1) != 4 (axis 1)".
NDArray vector_dot(const NDArray& x, const NDArray& y, NDArray out = {}, const Stream* stream = nullptr,
                   std::string_view who = "dot");

// The 0-based, sorted axes of 1-based `given` (negative: from the end) for an array of
// `ndim` axes. Errors start with `who`: "sum: axis 3 is out of range for a 2-d array (axes
// are 1 to 2, or -1 for the last)", "sum: axis 2 is repeated".
std::vector<int> normalize_axes(std::span<const std::int64_t> given, int ndim, std::string_view who);

}  // namespace luda::ops

// NumPy's reductions as the kinds see them: their names (sum, prod, max, ... nanargmin),
// and what a kind that reduces (luda.fuse ending in luda.sum/max/min/prod, the array
// reductions of ops/array_math.h) builds from one: the type it accumulates in, its
// output dtype, and its reduce and identity functions as Lua source text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dsl/types.h"

namespace luda::jit {

// ORDER REDUCE: NanArgmin last.
enum class Reduce {
  Sum,
  Prod,
  Max,
  Min,
  Mean,
  Argmax,
  Argmin,
  NanSum,
  NanProd,
  NanMax,
  NanMin,
  NanMean,
  NanArgmax,
  NanArgmin
};
// "sum", "prod", "max", "min", "mean", "argmax", "argmin", "nansum" ... "nanargmin" (and
// back: nullopt otherwise).
std::string_view reduce_name(Reduce op);
std::optional<Reduce> parse_reduce(std::string_view name);

// The reduction of `op` (Sum, Prod, Max, Min) over values of `element`: the type it
// accumulates in (sum_type for Sum and Prod; Max and Min keep the type, bool as uint8),
// the output dtype, and the reduce and identity functions as Lua source text.
struct ReduceParts {
  dsl::Scalar reduce_type = dsl::Scalar::Float64;
  dsl::Scalar output = dsl::Scalar::Float64;
  std::string reduce;    // "function(a, b) return a + b end"
  std::string identity;  // "function() return luda.float32(0) end"
  // NumPy's name of an operation that has no identity ("maximum", "minimum"; "" for sum
  // and prod): its identity() only pads partial results, and an empty reduction raises.
  std::string_view no_identity;
};
// "maximum" for Max, "minimum" for Min, else "".
std::string_view no_identity(Reduce op);
ReduceParts reduce_parts(Reduce op, dsl::Scalar element);

}  // namespace luda::jit

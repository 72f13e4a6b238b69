// NumPy's cumulative sums and products (cumsum, cumprod, nancumsum, nancumprod): along an
// axis, or over the flattened array, on the scan kernels of ops/device/scan.h. Axes are
// 0-based here (the Lua binding takes 1-based ones); errors start with the function's name.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops {

enum class Cumulative { Sum, Prod, NanSum, NanProd };
// "cumsum", "cumprod", "nancumsum", "nancumprod".
std::string_view cumulative_name(Cumulative op);

// The running sums or products of x along `axis` (in range), of x's shape; of the
// flattened array (C order) when nullopt, a 1-D array of x.size() elements. The dtype is
// NumPy 2's: bools and signed integers accumulate in int64, unsigned ones in uint64,
// floats in their own dtype; `dtype` (not bool: "cumsum: dtype bool is not supported;
// use an integer or float dtype") converts each element to it and accumulates in it. The
// nan forms read NaN as 0 (sums) or 1 (products) and are the plain forms on integers and
// bools. `out`, when valid, receives the result and is returned; it must have exactly the
// result's dtype and shape ("cumsum: out is a float32 array of shape (3,), but the result
// is int64 of shape (2, 3); pass an array of that dtype and shape").
NDArray cumulative(Cumulative op, const NDArray& x, std::optional<int> axis, std::optional<DType> dtype = std::nullopt,
                   NDArray out = {}, const Stream* stream = nullptr);

}  // namespace luda::ops

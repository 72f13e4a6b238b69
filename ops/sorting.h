// NumPy's sort, argsort and unique, on the merge sort of ops/device/sort.h: stable, NaN
// after every number, -0.0 equal to 0.0, as NumPy orders them. Axes are 0-based here (the
// Lua binding takes 1-based ones); errors start with the function's name.
#pragma once

#include <optional>

#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops {

// x sorted along `axis` (in range) as a new C-contiguous array of x's shape and dtype; the
// flattened array (C order) sorted when nullopt. Bools, integers and floats.
NDArray sort(const NDArray& x, std::optional<int> axis, const Stream* stream = nullptr);
// NumPy's ndarray.sort: x's elements sorted along `axis` in place (views too).
void sort_in_place(const NDArray& x, int axis, const Stream* stream = nullptr);
// The positions (int64, 0-based along the axis) that sort x along `axis`, as sort orders
// them and equal elements in their order (NumPy's kind='stable'); of the flattened array
// when nullopt (and for a 0-d x, as NumPy gives [0]).
NDArray argsort(const NDArray& x, std::optional<int> axis, const Stream* stream = nullptr);

// NumPy's unique of the flattened array: its distinct elements, sorted; NaNs one element
// when equal_nan (NumPy 2's default), and -0.0 and 0.0 one (the first of them in x). With
// what was asked for: `index`, the position in the flattened x of each one's first
// occurrence; `inverse`, of x's shape, the position in `values` of each element of x;
// `counts`, how many times each occurs (all int64). It reads the number of distinct
// elements back from the device, so it waits for the work before it.
struct Unique {
  NDArray values, index, inverse, counts;  // those not asked for stay invalid
};
Unique unique(const NDArray& x, bool index, bool inverse, bool counts, bool equal_nan = true,
              const Stream* stream = nullptr);

}  // namespace luda::ops

// NumPy's indexing, basic and advanced, to read (x[index]) and to write (x[index] = v), and
// the functions built on it: take, put, nonzero, flatnonzero, argwhere, compress. Basic
// indexing (integers, slices, newaxis, '...') gives a view; an index with an array in it
// (integers, or booleans as a mask) or a boolean gives a new array on x's device, gathered
// by a kernel there (ops/device/index.h), or is written through one. NumPy's rules
// (numpy.org, "Indexing on ndarrays"):
//   - integer arrays broadcast together; their shape takes the place of the axes they
//     index when the advanced items stand next to each other, else it comes first;
//   - an integer counts as an advanced item where there is an array (it is a 0-d one);
//   - a boolean array of k dimensions indexes k axes as its nonzero() coordinates do; a
//     boolean (0-d) adds an axis of extent 1 (true) or 0 (false);
//   - index arrays of any integer dtype, on any device (copied to x's); negative indices
//     count from the end.
// Errors are NumPy's words; axes in them are 0-based as NumPy's (x[i]'s are too):
//   "index 5 is out of bounds for axis 0 with size 3"
//   "boolean index did not match indexed array along axis 0; size of axis is 3 but size of
//    corresponding boolean axis is 4"
//   "too many indices for array: array is 2-dimensional, but 3 were indexed"
//   "shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,)"
//   "arrays used as indices must be of integer (or boolean) type"
//   "an index can only have a single ellipsis ('...')"
// An index with arrays reads the device back (its bounds check, a mask's count): it waits
// for the device, and a graph being recorded refuses it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "ops/device/index.h"
#include "runtime/ndarray.h"

namespace luda::ops {

// NumPy's None (numpy.newaxis) and Ellipsis ('...') as index items.
struct NewAxis {};
struct Ellipsis {};
// One item of an index: an integer, a slice, newaxis, '...', a boolean (a 0-d mask), or an
// array (an integer dtype: indices; bool: a mask).
using Index = std::variant<std::int64_t, Slice, NewAxis, Ellipsis, bool, NDArray>;

// Whether the index is basic (integers, slices, newaxis and '...' only): x[index] is a view.
bool is_basic(std::span<const Index> index);

// x[index]: a view of x for a basic index, else a new C-contiguous array on x's device.
NDArray get_item(const NDArray& x, std::span<const Index> index);

// x[index] = value: value (any dtype, converted as assignments convert; any device)
// broadcast to the shape x[index] has, as NumPy's __setitem__ (leading extent-1 axes of
// value past that shape are dropped). Where an advanced index names an element twice, the
// last write wins on the cpu; on a GPU which one is unspecified (NumPy documents no
// order). Error: "shape mismatch: value array of shape (3,) could not be broadcast to
// indexing result of shape (2,)".
void set_item(const NDArray& x, std::span<const Index> index, const NDArray& value);

using ops::device::IndexMode;

// numpy.take: the elements of x at `indices` (an integer array) along `axis` (0-based;
// nullopt: of x flattened), of shape x.shape[:axis] + indices.shape + x.shape[axis+1:].
// "cannot do a non-empty take from an empty axes." Out of range: the error under Raise.
NDArray take(const NDArray& x, const NDArray& indices, std::optional<int> axis, IndexMode mode);

// numpy.put: the elements of x (in C order, as flattened) at `indices` set to `values`,
// repeated as needed; converted to x's dtype.
void put(const NDArray& x, const NDArray& indices, const NDArray& values, IndexMode mode);

// numpy.argwhere: the coordinates of x's nonzero elements, (count, x.ndim) int64.
NDArray argwhere(const NDArray& x);
// numpy.nonzero: one int64 array per axis (views of argwhere's columns). Error for a 0-d x,
// as NumPy 2: "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero()
// instead." (luda's words name x:reshape(1)).
std::vector<NDArray> nonzero(const NDArray& x);
// numpy.flatnonzero: the C-order positions of x's nonzero elements.
NDArray flatnonzero(const NDArray& x);
// numpy.compress: the slices of x along `axis` (nullopt: of x flattened) where `condition`
// (1-D) is nonzero. "condition must be a 1-d array"; a true condition past the axis is
// take's out-of-bounds error.
NDArray compress(const NDArray& condition, const NDArray& x, std::optional<int> axis);

}  // namespace luda::ops

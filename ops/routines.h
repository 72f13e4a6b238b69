// NumPy's array routines that join, reshape, reorder and make arrays, on luda's views and
// its copies (runtime/ndarray.h: within a GPU a copy is a kernel) and ufuncs: no kernel
// of their own. Axes are 0-based here (the Lua binding takes 1-based ones); errors are
// NumPy's words with the routine's name.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "jit/call/call_args.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops {

// Joins arrays along an existing axis; the dtype is their promoted one. Errors:
//   "concatenate: need at least one array to concatenate"
//   "concatenate: zero-dimensional arrays cannot be concatenated"
//   "concatenate: all the input arrays must have same number of dimensions, but the array
//    at index 0 has 2 dimension(s) and the array at index 1 has 1 dimension(s)"
//   "concatenate: all the input array dimensions except for the concatenation axis must
//    match exactly, but along dimension 1, the array at index 0 has size 2 and the array
//    at index 1 has size 3"   (indices and dimensions 1-based, as luda counts)
NDArray concatenate(std::span<const NDArray> arrays, int axis, const Stream* stream = nullptr);
// Joins arrays of one shape along a new axis `axis` (0..ndim). "stack: all input arrays
// must have the same shape".
NDArray stack(std::span<const NDArray> arrays, int axis, const Stream* stream = nullptr);
// NumPy's hstack (1-D arrays end to end, else along axis 1) and vstack (1-D arrays as rows).
NDArray hstack(std::span<const NDArray> arrays, const Stream* stream = nullptr);
NDArray vstack(std::span<const NDArray> arrays, const Stream* stream = nullptr);

// Views: x without its extent-1 axes (those of `axes`: "squeeze: cannot select an axis to
// squeeze out which has size not equal to one"); with a new extent-1 axis at `axis`
// (0..ndim); with the order of `axes` (all when none) reversed.
NDArray squeeze(const NDArray& x, const std::optional<std::vector<int>>& axes);
NDArray expand_dims(const NDArray& x, int axis);
NDArray flip(const NDArray& x, const std::optional<std::vector<int>>& axes);
// NumPy's moveaxis for one axis: a view of x with axis `from` at position `to` (both
// 0-based, in range), the other axes in their order.
NDArray moveaxis(const NDArray& x, int from, int to);

// n x m with ones on the k-th diagonal (above the main one when k > 0).
NDArray eye(std::int64_t n, std::int64_t m, std::int64_t k, DType dtype, Device device);
// n x m with ones at and below the k-th diagonal, zeros above it (NumPy's tri).
NDArray tri(std::int64_t n, std::int64_t m, std::int64_t k, DType dtype, Device device);
// NumPy's diag: a 1-D v as the k-th diagonal of a square matrix; the k-th diagonal of a
// 2-D v, as a new array. "diag: Input must be 1- or 2-d."
NDArray diag(const NDArray& v, std::int64_t k, const Stream* stream = nullptr);
// x (at least 2-D) with the elements above the k-th diagonal zeroed (tril), or those below
// it (triu). "tril: x must be at least 2-dimensional, got a 1-d array".
NDArray tril(const NDArray& x, std::int64_t k, const Stream* stream = nullptr);
NDArray triu(const NDArray& x, std::int64_t k, const Stream* stream = nullptr);

// NumPy's split: views of x cut along `axis` into `sections` equal parts ("split: array
// split does not result in an equal division: 7 elements into 3 sections"), or at the
// given indices (each part [previous, index), clamped to the axis).
std::vector<NDArray> split(const NDArray& x, std::int64_t sections, int axis);
std::vector<NDArray> split_at(const NDArray& x, const std::vector<std::int64_t>& indices, int axis);
// Each element `repeats` times along `axis` (the flattened array's when none).
NDArray repeat(const NDArray& x, std::int64_t repeats, std::optional<int> axis, const Stream* stream = nullptr);
// x repeated reps[k] times along each axis (NumPy's tile: the shorter of x's shape and
// reps is padded with leading 1s).
NDArray tile(const NDArray& x, const std::vector<std::int64_t>& reps, const Stream* stream = nullptr);
// The elements moved `shift` places along `axis` (of the flattened array when none),
// those past the end coming back at the start.
NDArray roll(const NDArray& x, std::int64_t shift, std::optional<int> axis, const Stream* stream = nullptr);
// The n-th difference along `axis`: x[1:] - x[:-1], n times (!= for bools).
NDArray diff(const NDArray& x, std::int64_t n, int axis, const Stream* stream = nullptr);
// NumPy's isclose: |a - b| <= atol + rtol * |b| elementwise, infinities equal only to
// themselves, NaNs equal when equal_nan; bools. allclose: whether all are (waits for the
// device).
NDArray isclose(const jit::KernelArg& a, const jit::KernelArg& b, double rtol, double atol, bool equal_nan,
                const Stream* stream = nullptr);
// NumPy's any and all over `axes` (0-based; all when none), and count_nonzero (int64).
NDArray any(const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims,
            const Stream* stream = nullptr);
NDArray all(const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims,
            const Stream* stream = nullptr);
NDArray count_nonzero(const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims,
                      const Stream* stream = nullptr);
// NumPy's meshgrid of 1-D arrays (others flattened): N arrays of N axes, each varying along
// its own axis; with `xy` indexing the first two axes swap (the default, as NumPy's).
std::vector<NDArray> meshgrid(std::span<const NDArray> xs, bool xy, const Stream* stream = nullptr);

}  // namespace luda::ops

// The kernels of NumPy's indexing with arrays (ops/indexing.h plans it): index arrays
// turned into element offsets (bounds checked, or wrapped or clipped as numpy.take's
// modes), a gather and a scatter through those offsets, and the two passes of nonzero.
// One CUDA C++ module holds them all, compiled at first use on each device that runs it:
// NVRTC for a GPU, the host compiler against the cpu prelude for the cpu device (a raw
// module's two targets, jit/raw/raw_module.h), both through the disk cache. Layouts (extents
// and strides, in elements) travel as one small int64 array per launch.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/ndarray.h"

namespace luda::ops::device {}  // namespace luda::ops::device
namespace luda::jit {
class RawModule;
}  // namespace luda::jit
namespace luda::ops::device {

// What an index outside [-n, n) does: an error (NumPy's IndexError), wrap around (modulo
// n), or clip to [0, n - 1] (numpy.take's mode=).
enum class IndexMode { Raise, Wrap, Clip };

// For each position p of `off` (int64, C-contiguous): the offset in elements of the element
// that index[p] names in a target of extents `target_shape` and strides `target_strides`,
// where index[p] counts the target's elements in C order (one axis: the index along it;
// several: a flat index, as numpy.put's). `index` (an integer dtype) is read with
// `index_strides` (elements; 0 where it broadcasts) over off's shape. With `accumulate`, the
// offset is added to what off holds. Under Raise, an index out of [-n, n) (n the target's
// size) is not written: the least such p goes to bad[0] (int64, set to INT64_MAX by the
// caller), which the caller reads back. Wrap and Clip need n > 0. A uint64 index is read
// as the int64 of its bits, as NumPy casts index arrays to intp.
void index_offsets(const NDArray& off, const NDArray& index, std::span<const std::int64_t> index_strides,
                   std::span<const std::int64_t> target_shape, std::span<const std::int64_t> target_strides,
                   IndexMode mode, bool accumulate, const NDArray& bad);

// out (C-contiguous, of `shape`) [c] = element (sum c[k] * src_strides[k]) + off[sum c[k] *
// off_strides[k]] of `src`, counted from src's first element: src is a view at the base of
// the elements read (its own shape does not matter). Strides in elements. out and src have
// one dtype.
void gather(const NDArray& out, const NDArray& src, const NDArray& off, std::span<const std::int64_t> shape,
            std::span<const std::int64_t> src_strides, std::span<const std::int64_t> off_strides);

// The reverse: element (sum c[k] * dst_strides[k]) + off[...] of `dst` (counted from dst's
// first element) = value[sum c[k] * value_strides[k]], for each c in `shape`; value has
// dst's dtype. On the cpu the positions are written in C order by one thread, so where an
// element is named twice the last write wins; on a GPU which one wins is unspecified.
void scatter(const NDArray& dst, const NDArray& value, const NDArray& off, std::span<const std::int64_t> shape,
             std::span<const std::int64_t> dst_strides, std::span<const std::int64_t> off_strides,
             std::span<const std::int64_t> value_strides);

// The module that holds the kernels (made at first use; tests compile it for an arch).
jit::RawModule& index_module();

// NumPy's argwhere: the coordinates of x's nonzero elements in C order, an int64 array of
// shape (count, x.ndim). Two passes with one wait between them: counts per chunk of
// elements, then each chunk's coordinates from its start (the counts' running sum).
NDArray argwhere(const NDArray& x);

}  // namespace luda::ops::device

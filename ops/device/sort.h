// The stable sort of each row of an array by kernels, carrying each element's position in
// its row for argsort: what NumPy's sort, argsort and unique run (ops/sorting.h). One raw
// module per dtype, compiled at its first use (NVRTC through the disk cache on a GPU, the
// host compiler on the cpu device, where the executor runs the same source), as the copy
// kernel is (ops/device/copy.h).
//
// How: a merge sort. Rows are cut into tiles of kSortTile elements (rows no longer than a
// tile packed several to a block); a block sorts its tile in shared memory by merging runs
// of 1, 2, 4, ... elements, each element finding its place in the merged run from its own
// position and a binary search of the neighbouring run. A row longer than a tile then
// takes one launch per doubling of the run (each element's place found the same way, in
// global memory), ping-ponging between two buffers. Work O(n log^2 n), depth O(log^2 n);
// stable, since an element of a left run goes before the equal ones of its right run.
// The order is NumPy's: NaN after every number (NaNs keep their order), -0.0 equal to 0.0.
#pragma once

#include <memory>

#include "jit/raw/raw_module.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops::device {

inline constexpr long long kSortTile = 1024;

// Sorts each row of `keys`, a C-contiguous 2-D array (rows, length) of a bool, integer or
// float dtype, in place, on `stream` (null: the device's default stream). With `index`
// (valid: an int64 array of keys' shape, C-contiguous), index[r][j] receives the position
// in row r of the element that ends at j: NumPy's argsort(kind='stable').
void sort_rows(const NDArray& keys, const NDArray& index = {}, const Stream* stream = nullptr);

// The module of one dtype's sorts (made once per process; compiled where it first runs),
// for tests that compile it for an architecture with no GPU (RawModule::compile_for).
std::shared_ptr<jit::RawModule> sort_module(DType t);

}  // namespace luda::ops::device

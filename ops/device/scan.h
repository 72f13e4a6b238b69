// The inclusive scan (running sum or product) of each row of an array by kernels: the one
// NumPy's cumsum and cumprod run (ops/cumulative.h). One raw module per dtype, compiled
// at its first use (NVRTC through the disk cache on a GPU, the host compiler on the cpu
// device, where the executor runs the same source), as the copy kernel is
// (ops/device/copy.h).
//
// How: the rows are cut into tiles of kScanTile elements, one block a tile. A block scans
// its tile in shared memory (each thread its own run of elements, then the threads' totals
// by a segmented Kogge-Stone scan, then each thread adds what comes before it); rows
// shorter than a tile are packed several to a block, with the scan restarting at each
// row's first element. A row longer than a tile leaves each tile's total behind; those
// totals, a row of tiles per row, are scanned the same way (recursively), and a last pass
// adds each tile's prefix to its elements. So a long row takes three passes over the data
// whatever its length, and many short rows one.
#pragma once

#include <memory>

#include "jit/raw/raw_module.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops::device {

inline constexpr long long kScanTile = 1024;

enum class ScanOp { Sum, Prod };

// Scans each row of `data`, a C-contiguous 2-D array (rows, length) of an integer or float
// dtype, in place, on `stream` (null: the device's default stream), on the device `data`
// is on. Integers wrap on overflow, as NumPy's do (they are combined as unsigned, whose
// wrapping C++ defines); floats are combined in a tree order within each tile, so their
// rounding differs from a sequential sum's in the last bits.
void scan_rows(const NDArray& data, ScanOp op, const Stream* stream = nullptr);

// The module of one dtype's scans (made once per process; compiled where it first runs),
// for tests that compile it for an architecture with no GPU (RawModule::compile_for).
std::shared_ptr<jit::RawModule> scan_module(DType t);

}  // namespace luda::ops::device

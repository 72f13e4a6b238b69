#include "ops/device/scan.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ops/device/grid.h"
#include "runtime/error.h"

namespace luda::ops::device {

namespace {

constexpr int kThreads = 256;  // a block; each thread scans kScanTile / kThreads elements

// The module of one dtype: the tile scans and the pass that adds the tiles' prefixes, for
// sums and products. Integers are combined as unsigned long long, where overflow wraps
// (signed overflow is undefined in C++), and converted back, which wraps to the dtype.
// Complex values combine by the prelude's operators (NumPy's schoolbook product), which
// their module gets for naming luda's complex types (jit/raw/reflection.h).
std::string source(DType t) {
  const std::string name(dtype_name(t));
  return fmt::format(
      R"(typedef {0} T;
typedef {1} W;
#define LUDA_TILE {2}
#define LUDA_THREADS {3}
#define LUDA_ITEMS (LUDA_TILE / LUDA_THREADS)

template <int Op> __device__ __forceinline__ T luda_combine(T a, T b) {{
  return Op == 0 ? (T)((W)a + (W)b) : (T)((W)a * (W)b);
}}

// Scans the tiles of rows (rows, len) of `in` into `out` (the same array may be both).
// Rows of at most a tile are packed whole, LUDA_TILE / len to a block; longer rows are cut
// into tiles, whose totals go to sums[row][tile].
template <int Op>
__device__ void luda_scan_tiles(const T* in, T* out, T* sums, long long rows, long long len) {{
  __shared__ T tile[LUDA_TILE];
  __shared__ T part[LUDA_THREADS];    // each thread's total, then their scan
  __shared__ int head[LUDA_THREADS];  // whether a row starts within the thread's elements, then before them
  const long long total = rows * len;
  const bool packed = len <= LUDA_TILE;
  const long long per_block = packed ? LUDA_TILE / len : 1;
  const long long per_row = packed ? 1 : (len + LUDA_TILE - 1) / LUDA_TILE;
  const long long blocks = packed ? (rows + per_block - 1) / per_block : rows * per_row;
  const int t = threadIdx.x;
  for (long long b = blockIdx.x; b < blocks; b += gridDim.x) {{
    long long start, count;
    if (packed) {{
      start = b * per_block * len;
      count = min(per_block * len, total - start);
    }} else {{
      const long long c = b % per_row;
      start = (b / per_row) * len + c * LUDA_TILE;
      count = min((long long)LUDA_TILE, len - c * LUDA_TILE);
    }}
    for (int i = t; i < count; i += LUDA_THREADS) tile[i] = in[start + i];
    __syncthreads();
    // The thread's own elements, scanned in order; a row's first element starts over.
    const int first = t * LUDA_ITEMS;
    const int last = (int)min((long long)(first + LUDA_ITEMS), count);
    T acc{{}};
    int starts = 0;
    for (int i = first; i < last; ++i) {{
      const bool row_start = (start + i) % len == 0;
      acc = i == first || row_start ? tile[i] : luda_combine<Op>(acc, tile[i]);
      starts |= row_start;
      tile[i] = acc;
    }}
    part[t] = acc;
    head[t] = starts;
    __syncthreads();
    // The threads' totals, scanned by the segmented operator
    // (a, fa) then (b, fb) = (fb ? b : a op b, fa | fb).
    for (int d = 1; d < LUDA_THREADS; d <<= 1) {{
      T v = part[t];
      int f = head[t];
      if (t >= d) {{
        if (!f) v = luda_combine<Op>(part[t - d], v);
        f |= head[t - d];
      }}
      __syncthreads();
      part[t] = v;
      head[t] = f;
      __syncthreads();
    }}
    // What comes before the thread's elements in their row, up to the next row's start.
    if (t > 0) {{
      const T before = part[t - 1];
      for (int i = first; i < last && (start + i) % len != 0; ++i) tile[i] = luda_combine<Op>(before, tile[i]);
    }}
    if (!packed && t == 0) sums[b] = part[(count - 1) / LUDA_ITEMS];
    __syncthreads();
    for (int i = t; i < count; i += LUDA_THREADS) out[start + i] = tile[i];
    __syncthreads();
  }}
}}

// Adds to each element of a row longer than a tile the scanned total of the tiles before
// its own (sums[row][tile - 1]).
template <int Op>
__device__ void luda_add_prefix(T* out, const T* sums, long long rows, long long len) {{
  const long long per_row = (len + LUDA_TILE - 1) / LUDA_TILE;
  const long long total = rows * len;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < total; g += step) {{
    const long long row = g / len, c = (g - row * len) / LUDA_TILE;
    if (c > 0) out[g] = luda_combine<Op>(sums[row * per_row + c - 1], out[g]);
  }}
}}

extern "C" __global__ void cumsum_tiles_{4}(const T* in, T* out, T* sums, long long rows, long long len) {{
  luda_scan_tiles<0>(in, out, sums, rows, len);
}}
extern "C" __global__ void cumprod_tiles_{4}(const T* in, T* out, T* sums, long long rows, long long len) {{
  luda_scan_tiles<1>(in, out, sums, rows, len);
}}
extern "C" __global__ void cumsum_carry_{4}(T* out, const T* sums, long long rows, long long len) {{
  luda_add_prefix<0>(out, sums, rows, len);
}}
extern "C" __global__ void cumprod_carry_{4}(T* out, const T* sums, long long rows, long long len) {{
  luda_add_prefix<1>(out, sums, rows, len);
}}
)",
      dtype_c_type(t), is_float(t) || is_complex(t) ? dtype_c_type(t) : "unsigned long long", kScanTile, kThreads,
      name);
}

DTypeModules& modules() {
  static DTypeModules m(&source);
  return m;
}
jit::RawKernel& function(DType t, std::string_view name) { return modules().function(t, name); }

}  // namespace

std::shared_ptr<jit::RawModule> scan_module(DType t) { return modules().module(t); }

void scan_rows(const NDArray& data, ScanOp op, const Stream* stream) {
  LUDA_INTERNAL_CHECK(data.valid() && data.ndim() == 2 && data.is_c_contiguous());
  LUDA_INTERNAL_CHECK(is_integer(data.dtype()) || is_float(data.dtype()) || is_complex(data.dtype()));
  const long long rows = data.shape()[0], len = data.shape()[1];
  if (rows == 0 || len == 0) return;
  const DType t = data.dtype();
  const char* what = op == ScanOp::Sum ? "cumsum" : "cumprod";
  const bool packed = len <= kScanTile;
  const long long per_row = (len + kScanTile - 1) / kScanTile;
  const long long blocks = packed ? (rows + kScanTile / len - 1) / (kScanTile / len) : rows * per_row;
  const NDArray sums = packed ? data : NDArray::empty({rows, per_row}, t, data.device(), stream);
  const std::vector<jit::KernelArg> tiles{jit::KernelArg::of_array(data), jit::KernelArg::of_array(data),
                                          jit::KernelArg::of_array(sums), jit::KernelArg::of_int(rows),
                                          jit::KernelArg::of_int(len)};
  const bool tiles_write[] = {false, true, true};
  function(t, fmt::format("{}_tiles", what))
      .launch(grid_config(data.device(), blocks, kThreads, stream), tiles, tiles_write);
  if (packed) return;
  scan_rows(sums, op, stream);
  const std::vector<jit::KernelArg> carry{jit::KernelArg::of_array(data), jit::KernelArg::of_array(sums),
                                          jit::KernelArg::of_int(rows), jit::KernelArg::of_int(len)};
  const bool carry_write[] = {true, false};
  function(t, fmt::format("{}_carry", what))
      .launch(grid_config(data.device(), (rows * len + kThreads - 1) / kThreads, kThreads, stream), carry, carry_write);
}

}  // namespace luda::ops::device

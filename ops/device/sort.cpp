#include "ops/device/sort.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ops/device/grid.h"
#include "runtime/error.h"

namespace luda::ops::device {

namespace {

constexpr int kThreads = 256;

// The module of one dtype: the tile sorts and the merge passes, with and without the
// positions. E is the arrays' element type, K the key compared: a bool as its byte, read
// as true for any nonzero one (whoever wrote it), as the host reads it.
std::string source(DType t) {
  const bool boolean = t == DType::Bool;
  // float16 and bfloat16 compare by their float32 values, NaN last as for the other
  // floats; complex values as NumPy's CLT: lexicographically, with those holding a NaN
  // last (R + Rj, R + nanj, nan + Rj, nan + nanj). The new dtypes' C types are luda's
  // own, which their module's prelude defines (jit/raw/reflection.h, names_luda_types).
  const bool half = is_float(t) && itemsize(t) == 2;
  const char* less =
      half ? "luda_h2f(a) < luda_h2f(b) || (luda_h2f(a) == luda_h2f(a) && luda_h2f(b) != luda_h2f(b))"
      : is_complex(t)
          ? "a.re < b.re ? a.im == a.im || b.im != b.im\n"
            "       : a.re > b.re ? b.im != b.im && a.im == a.im\n"
            "       : a.re == b.re || (a.re != a.re && b.re != b.re) ? a.im < b.im || (b.im != b.im && a.im == a.im)\n"
            "       : b.re != b.re"
      : is_float(t) ? "a < b || (a == a && b != b)"
                    : "a < b";
  return fmt::format(
      R"(typedef {0} E;
typedef {1} K;
#define LUDA_TILE {2}
#define LUDA_THREADS {3}

__device__ __forceinline__ K luda_key(K k) {{ return {4}; }}
// NumPy's order: NaN after every number, -0.0 equal to 0.0.
__device__ __forceinline__ bool luda_less(K a, K b) {{ return {5}; }}

// How many of the n sorted keys at `run` go before k: those less than k (Strict, for an
// element of the left run), or not greater (for one of the right run, which goes after
// the equal ones of the left).
template <bool Strict>
__device__ __forceinline__ long long luda_rank(const K* run, long long n, K k) {{
  long long lo = 0, hi = n;
  while (lo < hi) {{
    const long long mid = lo + ((hi - lo) >> 1);
    if (Strict ? luda_less(run[mid], k) : !luda_less(k, run[mid])) lo = mid + 1;
    else hi = mid;
  }}
  return lo;
}}

// Where key k at position p of a row of n keys, sorted in runs of w, goes when each run
// merges with its neighbour.
__device__ __forceinline__ long long luda_merged_at(const K* row, long long n, long long p, long long w, K k) {{
  const long long run = p / w, base = (run & ~1LL) * w;
  if ((run & 1) == 0) {{
    const long long lo = base + w;
    if (lo >= n) return p;
    return p + luda_rank<true>(row + lo, min(base + 2 * w, n) - lo, k);
  }}
  return p - w + luda_rank<false>(row + base, w, k);
}}

// Sorts the tiles of rows (rows, len) in place: rows of at most a tile packed whole,
// LUDA_TILE / len to a block; longer rows cut into tiles of LUDA_TILE.
template <bool Index>
__device__ void luda_sort_tiles(K* keys, long long* index, long long rows, long long len) {{
  __shared__ K k[2][LUDA_TILE];
  __shared__ long long at[2][Index ? LUDA_TILE : 1];
  const long long total = rows * len;
  const bool packed = len <= LUDA_TILE;
  const long long per_block = packed ? LUDA_TILE / len : 1;
  const long long per_row = packed ? 1 : (len + LUDA_TILE - 1) / LUDA_TILE;
  const long long blocks = packed ? (rows + per_block - 1) / per_block : rows * per_row;
  const long long seg = packed ? len : LUDA_TILE;  // the tile's rows, or the tile
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
    for (int i = t; i < count; i += LUDA_THREADS) {{
      k[0][i] = luda_key(keys[start + i]);
      if constexpr (Index) at[0][i] = (start + i) % len;
    }}
    __syncthreads();
    int cur = 0;
    for (long long w = 1; w < seg; w <<= 1) {{
      for (int i = t; i < count; i += LUDA_THREADS) {{
        const long long s0 = i / seg * seg;
        const long long to = s0 + luda_merged_at(&k[cur][s0], min(seg, count - s0), i - s0, w, k[cur][i]);
        k[cur ^ 1][to] = k[cur][i];
        if constexpr (Index) at[cur ^ 1][to] = at[cur][i];
      }}
      cur ^= 1;
      __syncthreads();
    }}
    for (int i = t; i < count; i += LUDA_THREADS) {{
      keys[start + i] = k[cur][i];
      if constexpr (Index) index[start + i] = at[cur][i];
    }}
    __syncthreads();
  }}
}}

// One merge of the runs of w of every row: from kin (and iin) to kout (and iout).
template <bool Index>
__device__ void luda_merge(const K* kin, K* kout, const long long* iin, long long* iout, long long rows,
                           long long len, long long w) {{
  const long long total = rows * len;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < total; g += step) {{
    const long long row = g / len;
    const long long to = row * len + luda_merged_at(kin + row * len, len, g - row * len, w, kin[g]);
    kout[to] = kin[g];
    if constexpr (Index) iout[to] = iin[g];
  }}
}}

extern "C" __global__ void sort_tiles_{6}(E* keys, long long rows, long long len) {{
  luda_sort_tiles<false>((K*)keys, nullptr, rows, len);
}}
extern "C" __global__ void argsort_tiles_{6}(E* keys, long long* index, long long rows, long long len) {{
  luda_sort_tiles<true>((K*)keys, index, rows, len);
}}
extern "C" __global__ void sort_merge_{6}(const E* kin, E* kout, long long rows, long long len, long long w) {{
  luda_merge<false>((const K*)kin, (K*)kout, nullptr, nullptr, rows, len, w);
}}
extern "C" __global__ void argsort_merge_{6}(const E* kin, E* kout, const long long* iin, long long* iout,
                                             long long rows, long long len, long long w) {{
  luda_merge<true>((const K*)kin, (K*)kout, iin, iout, rows, len, w);
}}
)",
      dtype_c_type(t), boolean ? "unsigned char" : dtype_c_type(t), kSortTile, kThreads, boolean ? "(K)(k != 0)" : "k",
      less, dtype_name(t));
}

DTypeModules& modules() {
  static DTypeModules m(&source);
  return m;
}
jit::RawKernel& function(DType t, std::string_view name) { return modules().function(t, name); }

}  // namespace

std::shared_ptr<jit::RawModule> sort_module(DType t) { return modules().module(t); }

void sort_rows(const NDArray& keys, const NDArray& index, const Stream* stream) {
  LUDA_INTERNAL_CHECK(keys.valid() && keys.ndim() == 2 && keys.is_c_contiguous());
  LUDA_INTERNAL_CHECK(keys.dtype() == DType::Bool || is_integer(keys.dtype()) || is_float(keys.dtype()) ||
                      is_complex(keys.dtype()));
  const bool with_index = index.valid();
  LUDA_INTERNAL_CHECK(!with_index ||
                      (index.dtype() == DType::Int64 && index.shape() == keys.shape() && index.is_c_contiguous()));
  const long long rows = keys.shape()[0], len = keys.shape()[1];
  if (rows == 0 || len == 0) return;
  const DType t = keys.dtype();
  const Device device = keys.device();
  const bool packed = len <= kSortTile;
  const long long per_row = (len + kSortTile - 1) / kSortTile;
  const long long blocks = packed ? (rows + kSortTile / len - 1) / (kSortTile / len) : rows * per_row;
  const LaunchConfig tiles_config = grid_config(device, blocks, kThreads, stream);
  const jit::KernelArg r = jit::KernelArg::of_int(rows), n = jit::KernelArg::of_int(len);
  if (with_index) {
    const std::vector<jit::KernelArg> args{jit::KernelArg::of_array(keys), jit::KernelArg::of_array(index), r, n};
    const bool written[] = {true, true};
    function(t, "argsort_tiles").launch(tiles_config, args, written);
  } else {
    const std::vector<jit::KernelArg> args{jit::KernelArg::of_array(keys), r, n};
    const bool written[] = {true};
    function(t, "sort_tiles").launch(tiles_config, args, written);
  }
  if (packed) return;
  // Runs of a tile and longer, merged in global memory: keys (and index) to the spares
  // and back.
  NDArray from_keys = keys, from_index = index;
  NDArray to_keys = NDArray::empty(keys.shape(), t, device, stream);
  NDArray to_index = with_index ? NDArray::empty(keys.shape(), DType::Int64, device, stream) : NDArray();
  const LaunchConfig merge_config = grid_config(device, (rows * len + kThreads - 1) / kThreads, kThreads, stream);
  for (long long w = kSortTile; w < len; w *= 2) {
    const jit::KernelArg step = jit::KernelArg::of_int(w);
    if (with_index) {
      const std::vector<jit::KernelArg> args{jit::KernelArg::of_array(from_keys),
                                             jit::KernelArg::of_array(to_keys),
                                             jit::KernelArg::of_array(from_index),
                                             jit::KernelArg::of_array(to_index),
                                             r,
                                             n,
                                             step};
      const bool written[] = {false, true, false, true};
      function(t, "argsort_merge").launch(merge_config, args, written);
    } else {
      const std::vector<jit::KernelArg> args{jit::KernelArg::of_array(from_keys), jit::KernelArg::of_array(to_keys), r,
                                             n, step};
      const bool written[] = {false, true};
      function(t, "sort_merge").launch(merge_config, args, written);
    }
    std::swap(from_keys, to_keys);
    std::swap(from_index, to_index);
  }
  if (from_keys.data() != keys.data()) {
    const CUstream s = stream ? stream->handle() : nullptr;
    NDArray(keys).assign_on(from_keys, s);
    if (with_index) NDArray(index).assign_on(from_index, s);
  }
}

}  // namespace luda::ops::device

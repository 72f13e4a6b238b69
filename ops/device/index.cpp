#include "ops/device/index.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/raw/raw_module.h"
#include "runtime/error.h"

namespace luda::ops::device {

namespace {

// The index dtypes, each with its C type: the offsets kernel is instantiated for each.
struct IndexType {
  DType dtype;
  const char* c_type;
};
constexpr std::array<IndexType, 8> kIndexTypes = {{
    {DType::Int8, "signed char"},
    {DType::Int16, "short"},
    {DType::Int32, "int"},
    {DType::Int64, "long long"},
    {DType::UInt8, "unsigned char"},
    {DType::UInt16, "unsigned short"},
    {DType::UInt32, "unsigned int"},
    {DType::UInt64, "unsigned long long"},
}};
// Gather and scatter move elements as words of their itemsize, whatever the dtype.
constexpr std::array<int, 5> kWordSizes = {1, 2, 4, 8, 16};

// ORDER INDEX MODE: IndexMode's values in the kernels' `mode`.
constexpr const char* kSource = R"cuda(
typedef long long i64;
struct luda_word16 { unsigned long long lo, hi; };
template <int N> struct luda_word;
template <> struct luda_word<1> { typedef unsigned char type; };
template <> struct luda_word<2> { typedef unsigned short type; };
template <> struct luda_word<4> { typedef unsigned int type; };
template <> struct luda_word<8> { typedef unsigned long long type; };
template <> struct luda_word<16> { typedef luda_word16 type; };

__device__ __forceinline__ i64 luda_first() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 luda_step() { return (i64)gridDim.x * blockDim.x; }

// layout: shape[ndim], index strides[ndim], target shape[tn], target strides[tn], target size
template <class I>
__device__ void luda_offsets(i64* off, const void* index_v, i64 count, int ndim, const i64* layout, int tn,
                             int mode, int accumulate, i64* bad) {
  const I* index = (const I*)index_v;
  const i64* shape = layout;
  const i64* strides = layout + ndim;
  const i64* tshape = layout + 2 * ndim;
  const i64* tstrides = tshape + tn;
  const i64 n = tstrides[tn];
  for (i64 i = luda_first(); i < count; i += luda_step()) {
    i64 rest = i, at = 0;
    for (int k = ndim - 1; k >= 0; --k) {
      const i64 c = rest % shape[k];
      rest /= shape[k];
      at += c * strides[k];
    }
    const I v = index[at];
    i64 j;
    bool ok = true;
    if ((I)-1 > (I)0 && sizeof(I) < 8) {  // unsigned: never negative (uint64 is read as int64, NumPy's cast)
      const unsigned long long u = (unsigned long long)v;
      if (u < (unsigned long long)n) j = (i64)u;
      else if (mode == 1) j = (i64)(u % (unsigned long long)n);
      else if (mode == 2) j = n - 1;
      else { ok = false; j = 0; }
    } else {
      j = (i64)v;
      if (mode == 1) {
        j %= n;
        if (j < 0) j += n;
      } else if (mode == 2) {
        j = j < 0 ? 0 : j >= n ? n - 1 : j;
      } else {
        if (j < 0) j += n;
        ok = j >= 0 && j < n;
      }
    }
    if (!ok) {
      atomicMin(bad, i);
      continue;
    }
    i64 o = 0;
    for (int t = tn - 1; t >= 0; --t) {
      const i64 c = j % tshape[t];
      j /= tshape[t];
      o += c * tstrides[t];
    }
    off[i] = (accumulate ? off[i] : 0) + o;
  }
}

// layout: shape[ndim], source strides[ndim], offset strides[ndim]
template <int W>
__device__ void luda_gather(void* out_v, const void* src_v, const i64* off, i64 count, int ndim, const i64* layout) {
  typedef typename luda_word<W>::type T;
  T* out = (T*)out_v;
  const T* src = (const T*)src_v;
  for (i64 i = luda_first(); i < count; i += luda_step()) {
    i64 rest = i, a = 0, o = 0;
    for (int k = ndim - 1; k >= 0; --k) {
      const i64 c = rest % layout[k];
      rest /= layout[k];
      a += c * layout[ndim + k];
      o += c * layout[2 * ndim + k];
    }
    out[i] = src[a + off[o]];
  }
}

// layout: shape[ndim], destination strides[ndim], offset strides[ndim], value strides[ndim]
template <int W>
__device__ void luda_scatter(void* dst_v, const void* value_v, const i64* off, i64 count, int ndim, const i64* layout) {
  typedef typename luda_word<W>::type T;
  T* dst = (T*)dst_v;
  const T* value = (const T*)value_v;
  for (i64 i = luda_first(); i < count; i += luda_step()) {
    i64 rest = i, a = 0, o = 0, v = 0;
    for (int k = ndim - 1; k >= 0; --k) {
      const i64 c = rest % layout[k];
      rest /= layout[k];
      a += c * layout[ndim + k];
      o += c * layout[2 * ndim + k];
      v += c * layout[3 * ndim + k];
    }
    dst[a + off[o]] = value[v];
  }
}

// x: n bytes, nonzero for true (a bool array, C-contiguous), in tiles of `tile`.
extern "C" __global__ void luda_nonzero_count(const void* x_v, i64 n, i64 tile, i64 tiles, i64* counts) {
  const unsigned char* x = (const unsigned char*)x_v;
  for (i64 t = luda_first(); t < tiles; t += luda_step()) {
    const i64 lo = t * tile, hi = lo + tile < n ? lo + tile : n;
    i64 c = 0;
    for (i64 i = lo; i < hi; ++i) c += x[i] != 0;
    counts[t] = c;
  }
}

// layout: starts[tiles], shape[ndim]; out: (count, ndim) int64, C-contiguous.
extern "C" __global__ void luda_nonzero_write(const void* x_v, i64 n, i64 tile, i64 tiles, int ndim,
                                              const i64* layout, i64* out) {
  const unsigned char* x = (const unsigned char*)x_v;
  const i64* shape = layout + tiles;
  for (i64 t = luda_first(); t < tiles; t += luda_step()) {
    const i64 lo = t * tile, hi = lo + tile < n ? lo + tile : n;
    i64 at = layout[t];
    for (i64 i = lo; i < hi; ++i) {
      if (x[i] == 0) continue;
      i64 rest = i;
      for (int k = ndim - 1; k >= 0; --k) {
        out[at * ndim + k] = rest % shape[k];
        rest /= shape[k];
      }
      ++at;
    }
  }
}
)cuda";

std::string offsets_entry(DType t) { return fmt::format("luda_index_offsets_{}", dtype_name(t)); }
std::string gather_entry(int w) { return fmt::format("luda_gather_{}", w); }
std::string scatter_entry(int w) { return fmt::format("luda_scatter_{}", w); }

std::string module_source() {
  std::string s = kSource;
  for (const IndexType& t : kIndexTypes)
    s += fmt::format(
        "extern \"C\" __global__ void {}(i64* off, const void* index, i64 count, int ndim, const i64* layout, int tn, "
        "int mode, int accumulate, i64* bad) {{\n"
        "  luda_offsets<{}>(off, index, count, ndim, layout, tn, mode, accumulate, bad);\n}}\n",
        offsets_entry(t.dtype), t.c_type);
  for (int w : kWordSizes) {
    s += fmt::format("extern \"C\" __global__ void {}(void* out, const void* src, const i64* off, i64 count, int ndim, "
                     "const i64* layout) {{\n  luda_gather<{}>(out, src, off, count, ndim, layout);\n}}\n",
                     gather_entry(w), w);
    s += fmt::format(
        "extern \"C\" __global__ void {}(void* dst, const void* value, const i64* off, i64 count, int ndim, "
        "const i64* layout) {{\n  luda_scatter<{}>(dst, value, off, count, ndim, layout);\n}}\n",
        scatter_entry(w), w);
  }
  return s;
}

// The module and its kernels, every one asked for before the first launch, so that a
// device compiles the module once with all of them.
struct Kernels {
  std::shared_ptr<jit::RawModule> module;
  std::map<std::string, std::shared_ptr<jit::RawKernel>> by_name;
};
const Kernels& kernels() {
  static const Kernels kernels = [] {
    Kernels k;
    k.module = jit::RawModule::create(module_source());
    std::vector<std::string> names = {"luda_nonzero_count", "luda_nonzero_write"};
    for (const IndexType& t : kIndexTypes) names.push_back(offsets_entry(t.dtype));
    for (int w : kWordSizes) {
      names.push_back(gather_entry(w));
      names.push_back(scatter_entry(w));
    }
    for (const std::string& n : names) k.by_name[n] = k.module->get_function(n);
    return k;
  }();
  return kernels;
}

jit::RawKernel& kernel(const std::string& name) {
  auto found = kernels().by_name.find(name);
  LUDA_INTERNAL_CHECK(found != kernels().by_name.end());
  return *found->second;
}

// An int64 array on `device` holding the lists one after another.
NDArray layout_array(Device device, std::initializer_list<std::span<const std::int64_t>> lists) {
  std::vector<std::int64_t> all;
  for (std::span<const std::int64_t> l : lists) all.insert(all.end(), l.begin(), l.end());
  if (all.empty()) all.push_back(0);  // no zero-size upload
  return NDArray::from_host(all.data(), {static_cast<std::int64_t>(all.size())}, DType::Int64, device);
}

// A grid-stride loop over `count` positions: blocks of 256 threads, at most 65536 blocks.
LaunchConfig config_for(std::int64_t count) {
  constexpr long long kBlock = 256;
  LaunchConfig config;
  config.block = Dim3{kBlock, 1, 1};
  config.grid = Dim3{std::clamp<long long>((count + kBlock - 1) / kBlock, 1, 1 << 16), 1, 1};
  return config;
}

std::int64_t word_size(DType t) {
  const auto w = static_cast<std::int64_t>(itemsize(t));
  LUDA_INTERNAL_CHECK(std::find(kWordSizes.begin(), kWordSizes.end(), w) != kWordSizes.end());
  return w;
}

jit::KernelArg as_int(std::int64_t v) { return jit::KernelArg::of_int(v); }

}  // namespace

jit::RawModule& index_module() { return *kernels().module; }

void index_offsets(const NDArray& off, const NDArray& index, std::span<const std::int64_t> index_strides,
                   std::span<const std::int64_t> target_shape, std::span<const std::int64_t> target_strides,
                   IndexMode mode, bool accumulate, const NDArray& bad) {
  const std::int64_t count = off.size();
  if (count == 0) return;
  std::int64_t n = 1;
  for (std::int64_t e : target_shape) n *= e;
  const std::int64_t total[] = {n};
  const NDArray layout = layout_array(off.device(), {off.shape(), index_strides, target_shape, target_strides, total});
  const jit::KernelArg args[] = {jit::KernelArg::of_array(off),
                                 jit::KernelArg::of_array(index),
                                 as_int(count),
                                 as_int(off.ndim()),
                                 jit::KernelArg::of_array(layout),
                                 as_int(static_cast<std::int64_t>(target_shape.size())),
                                 as_int(static_cast<int>(mode)),  // ORDER INDEX MODE
                                 as_int(accumulate ? 1 : 0),
                                 jit::KernelArg::of_array(bad)};
  const bool written[] = {true, false, false, false, false, false, false, false, true};
  kernel(offsets_entry(index.dtype())).launch(config_for(count), args, written);
}

void gather(const NDArray& out, const NDArray& src, const NDArray& off, std::span<const std::int64_t> shape,
            std::span<const std::int64_t> src_strides, std::span<const std::int64_t> off_strides) {
  const std::int64_t count = out.size();
  if (count == 0) return;
  const NDArray layout = layout_array(out.device(), {shape, src_strides, off_strides});
  const jit::KernelArg args[] = {jit::KernelArg::of_array(out),
                                 jit::KernelArg::of_array(src),
                                 jit::KernelArg::of_array(off),
                                 as_int(count),
                                 as_int(static_cast<std::int64_t>(shape.size())),
                                 jit::KernelArg::of_array(layout)};
  const bool written[] = {true, false, false, false, false, false};
  kernel(gather_entry(static_cast<int>(word_size(out.dtype())))).launch(config_for(count), args, written);
}

void scatter(const NDArray& dst, const NDArray& value, const NDArray& off, std::span<const std::int64_t> shape,
             std::span<const std::int64_t> dst_strides, std::span<const std::int64_t> off_strides,
             std::span<const std::int64_t> value_strides) {
  std::int64_t count = 1;
  for (std::int64_t e : shape) count *= e;
  if (count == 0) return;
  const NDArray layout = layout_array(dst.device(), {shape, dst_strides, off_strides, value_strides});
  const jit::KernelArg args[] = {jit::KernelArg::of_array(dst),
                                 jit::KernelArg::of_array(value),
                                 jit::KernelArg::of_array(off),
                                 as_int(count),
                                 as_int(static_cast<std::int64_t>(shape.size())),
                                 jit::KernelArg::of_array(layout)};
  const bool written[] = {true, false, false, false, false, false};
  LaunchConfig config = config_for(count);
  // One thread on the cpu: positions in C order, so the last of repeated ones wins there.
  if (dst.device().is_cpu()) config.grid = config.block = Dim3{1, 1, 1};
  kernel(scatter_entry(static_cast<int>(word_size(dst.dtype())))).launch(config, args, written);
}

NDArray argwhere(const NDArray& x) {
  LUDA_INTERNAL_CHECK(x.dtype() == DType::Bool);
  const NDArray flat = x.contiguous();
  const std::int64_t n = flat.size();
  const Shape& shape = x.shape();
  if (n == 0) return NDArray::empty({0, x.ndim()}, DType::Int64, x.device());
  // Tiles of at least 64 elements, at most 65536 of them.
  const std::int64_t tiles = std::min<std::int64_t>((n + 63) / 64, 1 << 16);
  const std::int64_t tile = (n + tiles - 1) / tiles;
  const NDArray counts = NDArray::empty({tiles}, DType::Int64, x.device());
  {
    const jit::KernelArg args[] = {jit::KernelArg::of_array(flat), as_int(n), as_int(tile), as_int(tiles),
                                   jit::KernelArg::of_array(counts)};
    const bool written[] = {false, false, false, false, true};
    kernel("luda_nonzero_count").launch(config_for(tiles), args, written);
  }
  std::vector<std::byte> bytes = counts.to_host_bytes();  // the one wait
  std::vector<std::int64_t> starts(static_cast<std::size_t>(tiles));
  std::int64_t total = 0;
  for (std::int64_t t = 0; t < tiles; ++t) {
    std::int64_t c = 0;
    std::memcpy(&c, bytes.data() + t * 8, 8);
    starts[static_cast<std::size_t>(t)] = total;
    total += c;
  }
  NDArray out = NDArray::empty({total, x.ndim()}, DType::Int64, x.device());
  if (total == 0) return out;
  const NDArray layout = layout_array(x.device(), {starts, shape});
  const jit::KernelArg args[] = {jit::KernelArg::of_array(flat),
                                 as_int(n),
                                 as_int(tile),
                                 as_int(tiles),
                                 as_int(x.ndim()),
                                 jit::KernelArg::of_array(layout),
                                 jit::KernelArg::of_array(out)};
  const bool written[] = {false, false, false, false, false, false, true};
  kernel("luda_nonzero_write").launch(config_for(tiles), args, written);
  return out;
}

}  // namespace luda::ops::device

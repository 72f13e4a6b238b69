#include "runtime/ndarray.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/ranges.h>

#include "runtime/error.h"
#include "runtime/format.h"
#include "runtime/graph/recording.h"

namespace luda {
namespace {

// ---- element conversion -------------------------------------------------------------

// Room for any one element: complex128's 16 bytes are the most.
constexpr std::size_t kElementBytes = 16;
static_assert(kElementBytes >= itemsize(DType::Complex128) && kNumDTypes == 15,
              "a new dtype: check that kElementBytes holds its elements");

// Converts n elements, `dst_step`/`src_step` bytes apart.
using RunFn = void (*)(std::byte* dst, std::int64_t dst_step, const std::byte* src, std::int64_t src_step,
                       std::int64_t n);

template <class To, class From>
void convert_run(std::byte* dst, std::int64_t dst_step, const std::byte* src, std::int64_t src_step, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i, dst += dst_step, src += src_step) {
    To y = convert_element<To>(load_element<From>(src));
    std::memcpy(dst, &y, sizeof y);
  }
}

// ORDER DTYPE
using CTypes =
    std::tuple<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t,
               std::uint64_t, float, double, Float16, BFloat16, std::complex<float>, std::complex<double>>;
static_assert(std::tuple_size_v<CTypes> == kNumDTypes);

template <std::size_t To, std::size_t... From>
constexpr std::array<RunFn, kNumDTypes> run_row(std::index_sequence<From...>) {
  return {&convert_run<std::tuple_element_t<To, CTypes>, std::tuple_element_t<From, CTypes>>...};
}
template <std::size_t... To>
constexpr std::array<std::array<RunFn, kNumDTypes>, kNumDTypes> run_table(std::index_sequence<To...>) {
  return {run_row<To>(std::make_index_sequence<kNumDTypes>{})...};
}
constexpr auto kRunTable = run_table(std::make_index_sequence<kNumDTypes>{});

RunFn run_fn(DType to, DType from) { return kRunTable[static_cast<int>(to)][static_cast<int>(from)]; }

// ---- strided iteration on the host ----------------------------------------------------

// Converts every element of a src view into a dst view of the same shape, both in host
// memory (strides in elements of each one's dtype).
void convert_host(const Shape& shape, DType dst_type, std::byte* dst, const Strides& dst_strides, DType src_type,
                  const std::byte* src, const Strides& src_strides) {
  for (std::int64_t n : shape)
    if (n == 0) return;
  CopyLayout l = copy_layout(shape, dst_strides, static_cast<std::int64_t>(itemsize(dst_type)), src_strides,
                             static_cast<std::int64_t>(itemsize(src_type)));
  RunFn fn = run_fn(dst_type, src_type);
  if (l.shape.empty()) {
    fn(dst, 0, src, 0, 1);
    return;
  }
  const int outer = static_cast<int>(l.shape.size()) - 1;
  const std::int64_t inner = l.shape.back();
  std::vector<std::int64_t> pos(outer, 0);
  for (;;) {
    fn(dst, l.dst.back(), src, l.src.back(), inner);
    int k = outer - 1;
    for (; k >= 0; --k) {
      dst += l.dst[k];
      src += l.src[k];
      if (++pos[k] < l.shape[k]) break;
      dst -= l.dst[k] * l.shape[k];
      src -= l.src[k] * l.shape[k];
      pos[k] = 0;
    }
    if (k < 0) return;
  }
}

// The lowest and highest element offsets a non-empty view touches.
std::pair<std::int64_t, std::int64_t> element_span(const Shape& shape, const Strides& strides, std::int64_t offset) {
  std::int64_t lo = offset, hi = offset;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    std::int64_t reach = (shape[k] - 1) * strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

// The element count. The nonzero extents must multiply to less than 2^63 even when another
// is 0 (as NumPy checks): the strides of an empty array are products of them.
std::int64_t checked_size(const Shape& shape) {
  check_ndim(shape.size());
  std::int64_t n = 1;
  for (std::int64_t e : shape) {
    if (e < 0) fail("negative dimensions are not allowed (shape {})", shape_str(shape));
  }
  bool empty = false;
  for (std::int64_t e : shape) {
    if (e == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(n, e, &n)) {
      too_big_error(shape);
    }
  }
  return empty ? 0 : n;
}

CUstream handle_of(const Stream* stream) { return stream ? stream->handle() : nullptr; }

std::string index_error(std::int64_t i, int axis, std::int64_t n) {
  return fmt::format("index {} is out of bounds for axis {} with size {}", i, axis, n);
}

void check_index_count(std::size_t count, int ndim) {
  if (count > static_cast<std::size_t>(ndim))
    fail("too many indices for array: array is {}-dimensional, but {} were indexed", ndim, count);
}

}  // namespace

CopyLayout copy_layout(const Shape& shape, const Strides& dst, std::int64_t dst_item, const Strides& src,
                       std::int64_t src_item) {
  CopyLayout l;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    std::int64_t ds = dst[k] * dst_item, ss = src[k] * src_item;
    if (!l.shape.empty() && l.dst.back() == ds * shape[k] && l.src.back() == ss * shape[k]) {
      l.shape.back() *= shape[k];
      l.dst.back() = ds;
      l.src.back() = ss;
    } else {
      l.shape.push_back(shape[k]);
      l.dst.push_back(ds);
      l.src.push_back(ss);
    }
  }
  return l;
}

Strides broadcast_strides(const NDArray& src, const Shape& to) {
  Strides out(to.size(), 0);
  const std::size_t lead = to.size() - src.shape().size();
  for (std::size_t k = 0; k < src.shape().size(); ++k)
    if (src.shape()[k] != 1) out[lead + k] = src.strides()[k];
  return out;
}

namespace {
std::atomic<DeviceAssign> g_device_assign{nullptr};

// dst = src within one GPU by the copy kernel on the default stream; a source over dst's
// own memory is copied whole first.
void copy_within_device(DeviceAssign by_kernel, const NDArray& dst, const NDArray& src) {
  if (!may_share_memory(src, dst)) return by_kernel(dst, src, nullptr);
  NDArray between = NDArray::empty(src.shape(), src.dtype(), src.device());
  by_kernel(between, src, nullptr);
  by_kernel(dst, between, nullptr);
}
}  // namespace

void set_device_assign(DeviceAssign f) noexcept { g_device_assign.store(f); }

// ---- shapes ---------------------------------------------------------------------------

void check_ndim(std::size_t ndim) {
  if (ndim > static_cast<std::size_t>(kMaxNdim))
    fail("maximum supported dimension for an ndarray is currently {}, found {}", kMaxNdim, ndim);
}

void too_big_error(const Shape& shape) {
  fail("array is too big: the extents of shape {} multiply to more than 2^63", shape_str(shape));
}

std::string shape_str(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

Strides c_strides(const Shape& shape) {
  Strides s(shape.size());
  std::int64_t step = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    s[k] = step;
    step *= std::max<std::int64_t>(shape[k], 1);
  }
  return s;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
    std::int64_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1)
      fail("operands could not be broadcast together with shapes {} {}", shape_str(a), shape_str(b));
    out[out.size() - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

// ---- construction ---------------------------------------------------------------------

NDArray NDArray::empty(const Shape& shape, DType dtype, Device device, const Stream* stream) {
  std::int64_t n = checked_size(shape);
  if (static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / itemsize(dtype))
    fail("array is too big: shape {} of {} needs more bytes than memory can address", shape_str(shape),
         dtype_name(dtype));
  NDArray a;
  const std::size_t bytes = static_cast<std::size_t>(n) * itemsize(dtype);
  GraphRecording* g = GraphRecording::active();
  a.buffer_ = g ? allocate_for_graph(g->device(), device, bytes, stream) : Buffer::allocate(device, bytes, stream);
  a.dtype_ = dtype;
  a.shape_ = shape;
  a.strides_ = c_strides(shape);
  if (g) [[unlikely]]
    g->made(a.buffer_);
  return a;
}

namespace {

// While a graph is recorded: `a`'s bytes (contiguous) zeroed, as a node.
void record_zero(GraphRecording& g, const NDArray& a) {
  g.fill(FillWork{a.device(), reinterpret_cast<std::uintptr_t>(a.data()), a.nbytes()}, {g.of(a, true)});
}

// While a graph is recorded: host bytes (kept by the node) copied into contiguous `a`.
void record_upload(GraphRecording& g, const NDArray& a, const void* bytes) {
  auto kept = std::make_shared<std::vector<std::byte>>(static_cast<const std::byte*>(bytes),
                                                       static_cast<const std::byte*>(bytes) + a.nbytes());
  CopyWork w{a.device(),
             Device::cpu(),
             reinterpret_cast<std::uintptr_t>(a.data()),
             reinterpret_cast<std::uintptr_t>(kept->data()),
             a.nbytes(),
             kept};
  g.copy(std::move(w), {g.of(a, true)});
}

}  // namespace

NDArray NDArray::zeros(const Shape& shape, DType dtype, Device device, const Stream* stream) {
  NDArray a = empty(shape, dtype, device, stream);
  if (a.nbytes() == 0) return a;
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]]
    record_zero(*g, a);
  else zero_bytes(device, a.data(), a.nbytes(), handle_of(stream));
  return a;
}

NDArray NDArray::full(const Shape& shape, Scalar value, DType dtype, Device device, const Stream* stream) {
  NDArray a = empty(shape, dtype, device, stream);
  a.fill(value);
  return a;
}

NDArray NDArray::from_host(const void* data, const Shape& shape, DType dtype, Device device) {
  NDArray a = empty(shape, dtype, device);
  if (a.nbytes() == 0) return a;
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]]
    record_upload(*g, a, data);
  else copy_bytes(device, a.data(), Device::cpu(), data, a.nbytes());
  return a;
}

NDArray NDArray::view(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape, Strides strides, std::int64_t offset) {
  if (!buffer) fail("cannot make an array view of a null buffer");
  if (strides.size() != shape.size())
    fail("array view: shape {} has {} axes but {} strides were given", shape_str(shape), shape.size(), strides.size());
  std::int64_t n = checked_size(shape);
  const auto item = static_cast<std::int64_t>(itemsize(dtype));
  const auto bytes = static_cast<std::int64_t>(buffer->size());
  if (n > 0) {
    auto [lo, hi] = element_span(shape, strides, offset);
    if (lo < 0 || (hi + 1) > bytes / item)
      fail("array view reaches outside its buffer: shape {}, strides {}, offset {} touch {} "
           "elements [{}, {}] but the buffer holds {} bytes ({} elements)",
           shape_str(shape), shape_str(strides), offset, dtype_name(dtype), lo, hi, bytes, bytes / item);
  } else if (offset < 0 || offset > bytes / item) {
    fail("array view offset {} lies outside its buffer of {} bytes", offset, bytes);
  }
  NDArray a;
  a.buffer_ = std::move(buffer);
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.strides_ = std::move(strides);
  a.offset_ = offset;
  return a;
}

// ---- properties -----------------------------------------------------------------------

bool NDArray::is_c_contiguous() const {
  if (size() == 0) return true;
  std::int64_t step = 1;
  for (std::size_t k = shape_.size(); k-- > 0;) {
    if (shape_[k] == 1) continue;
    if (strides_[k] != step) return false;
    step *= shape_[k];
  }
  return true;
}

bool NDArray::is_f_contiguous() const {
  if (size() == 0) return true;
  std::int64_t step = 1;
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    if (shape_[k] == 1) continue;
    if (strides_[k] != step) return false;
    step *= shape_[k];
  }
  return true;
}

namespace {
void require_valid(const NDArray& a, const char* what) {
  if (!a.valid())
    fail("{}: this NDArray holds no buffer (it was default-constructed); "
         "make it with NDArray::empty, zeros, full, from_host or view",
         what);
}
}  // namespace

// ---- views ----------------------------------------------------------------------------

NDArray NDArray::index(std::span<const IndexItem> items) const {
  check_index_count(items.size(), ndim());
  NDArray out;
  out.buffer_ = buffer_;
  out.dtype_ = dtype_;
  out.offset_ = offset_;
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    const std::int64_t n = shape_[k], stride = strides_[k];
    if (k >= items.size()) {
      out.shape_.push_back(n);
      out.strides_.push_back(stride);
    } else if (const auto* i = std::get_if<std::int64_t>(&items[k])) {
      std::int64_t j = *i < 0 ? *i + n : *i;
      if (j < 0 || j >= n) throw Error(index_error(*i, static_cast<int>(k), n));
      out.offset_ += j * stride;
    } else {
      // PySlice_AdjustIndices: clamp the bounds into range for the step's direction.
      const Slice& s = std::get<Slice>(items[k]);
      if (s.step == 0) fail("slice step cannot be zero");
      // Python clamps the step into [-max, max] as well; -INT64_MIN would overflow.
      const std::int64_t step = std::max(s.step, -std::numeric_limits<std::int64_t>::max());
      auto clamp = [&](std::optional<std::int64_t> b, std::int64_t absent) {
        if (!b) return absent;
        std::int64_t v = *b;
        if (v < 0) {
          v += n;
          if (v < 0) v = step < 0 ? -1 : 0;
        } else if (v >= n) {
          v = step < 0 ? n - 1 : n;
        }
        return v;
      };
      std::int64_t start = clamp(s.start, step < 0 ? n - 1 : 0);
      std::int64_t stop = clamp(s.stop, step < 0 ? -1 : n);
      std::int64_t len = 0;
      if (step < 0 && stop < start) len = (start - stop - 1) / (-step) + 1;
      if (step > 0 && start < stop) len = (stop - start - 1) / step + 1;
      if (len > 0) out.offset_ += start * stride;  // an empty view keeps an offset in range
      std::int64_t new_stride;
      if (__builtin_mul_overflow(stride, step, &new_stride)) new_stride = stride;  // len <= 1 then
      out.shape_.push_back(len);
      out.strides_.push_back(new_stride);
    }
  }
  return out;
}

NDArray NDArray::at(std::int64_t i) const {
  IndexItem item = i;
  return index(std::span<const IndexItem>(&item, 1));
}

NDArray NDArray::reshape(const Shape& requested) const {
  require_valid(*this, "reshape");
  check_ndim(requested.size());
  Shape shape = requested;
  int unknown = -1;
  std::int64_t known = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == -1) {
      if (unknown >= 0) fail("can only specify one unknown dimension");
      unknown = static_cast<int>(k);
    } else if (shape[k] < 0) {
      fail("negative dimensions are not allowed (shape {})", shape_str(requested));
    } else if (__builtin_mul_overflow(known, shape[k], &known)) {
      fail("cannot reshape array of size {} into shape {}", size(), shape_str(requested));
    }
  }
  const std::int64_t n = size();
  if (unknown >= 0) {
    if (known == 0 || n % known != 0) fail("cannot reshape array of size {} into shape {}", n, shape_str(requested));
    shape[unknown] = n / known;
  }
  if (checked_size(shape) != n) fail("cannot reshape array of size {} into shape {}", n, shape_str(requested));

  NDArray out;
  out.buffer_ = buffer_;
  out.dtype_ = dtype_;
  out.offset_ = offset_;
  out.shape_ = shape;
  if (n == 0) {  // no element is ever addressed: any strides do
    out.strides_ = c_strides(shape);
    return out;
  }
  // NumPy's _attempt_nocopy_reshape (C order): walk groups of old and new axes with equal
  // products; a group of old axes can be merged when it steps evenly in memory.
  Shape old_dims;
  Strides old_strides;
  for (std::size_t k = 0; k < shape_.size(); ++k)
    if (shape_[k] != 1) {
      old_dims.push_back(shape_[k]);
      old_strides.push_back(strides_[k]);
    }
  const std::size_t old_nd = old_dims.size(), new_nd = shape.size();
  Strides new_strides(new_nd, 0);
  std::size_t oi = 0, oj = 1, ni = 0, nj = 1;
  bool viewable = true;
  while (ni < new_nd && oi < old_nd && viewable) {
    std::int64_t np = shape[ni], op = old_dims[oi];
    while (np != op) {
      if (np < op) np *= shape[nj++];
      else op *= old_dims[oj++];
    }
    for (std::size_t ok = oi; ok + 1 < oj; ++ok)
      if (old_strides[ok] != old_dims[ok + 1] * old_strides[ok + 1]) viewable = false;
    new_strides[nj - 1] = old_strides[oj - 1];
    for (std::size_t nk = nj - 1; nk > ni; --nk) new_strides[nk - 1] = new_strides[nk] * shape[nk];
    ni = nj++;
    oi = oj++;
  }
  if (viewable) {
    std::int64_t last = ni >= 1 ? new_strides[ni - 1] : 1;
    for (std::size_t nk = ni; nk < new_nd; ++nk) new_strides[nk] = last;
    out.strides_ = std::move(new_strides);
    return out;
  }
  NDArray c = copy();
  c.shape_ = shape;
  c.strides_ = c_strides(shape);
  return c;
}

NDArray NDArray::transpose(std::span<const int> axes) const {
  const int nd = ndim();
  std::vector<int> perm(nd);
  if (axes.empty()) {
    for (int k = 0; k < nd; ++k) perm[k] = nd - 1 - k;
  } else {
    if (static_cast<int>(axes.size()) != nd) fail("axes don't match array");
    std::vector<bool> seen(nd, false);
    for (int k = 0; k < nd; ++k) {
      int a = axes[k];
      if (a < -nd || a >= nd) fail("axis {} is out of bounds for array of dimension {}", a, nd);
      if (a < 0) a += nd;
      if (seen[a]) fail("repeated axis in transpose");
      seen[a] = true;
      perm[k] = a;
    }
  }
  NDArray out = *this;
  for (int k = 0; k < nd; ++k) {
    out.shape_[k] = shape_[perm[k]];
    out.strides_[k] = strides_[perm[k]];
  }
  return out;
}

// ---- host staging ---------------------------------------------------------------------
//
// This layer has no kernels (they are jit/'s), so strided device arrays and conversions
// between dtypes go through the host here: reads copy the smallest byte span covering the
// view, writes send each contiguous run on its own (never a read-modify-write of bytes
// outside the view, which another stream may be writing).

namespace {

// A host array with a's shape and values: a itself on cpu, else a download of a's
// covering byte span viewed with a's strides.
NDArray host_view(const NDArray& a, CUstream stream) {
  if (a.device().is_cpu()) return a;
  if (a.size() == 0) return NDArray::empty(a.shape(), a.dtype(), Device::cpu());
  const auto item = static_cast<std::int64_t>(itemsize(a.dtype()));
  auto [lo, hi] = element_span(a.shape(), a.strides(), a.offset());
  auto host = Buffer::allocate(Device::cpu(), static_cast<std::size_t>((hi - lo + 1) * item));
  copy_bytes(Device::cpu(), host->data(), a.device(), static_cast<const std::byte*>(a.buffer()->data()) + lo * item,
             host->size(), stream);
  return NDArray::view(host, a.dtype(), a.shape(), a.strides(), a.offset() - lo);
}

// Writes a C-contiguous host array `h` (dst's shape and dtype) into a CUDA array.
void upload(const NDArray& dst, const NDArray& h, CUstream stream) {
  if (dst.is_c_contiguous()) {
    copy_bytes(dst.device(), dst.data(), Device::cpu(), h.data(), dst.nbytes(), stream);
    return;
  }
  // The longest trailing block of axes that is C-contiguous in dst is one run.
  const Shape& shape = dst.shape();
  const Strides& strides = dst.strides();
  int split = dst.ndim();
  std::int64_t run = 1;
  while (split > 0) {
    int k = split - 1;
    if (shape[k] != 1 && strides[k] != run) break;
    run *= shape[k];
    split = k;
  }
  const auto item = static_cast<std::int64_t>(itemsize(dst.dtype()));
  const std::size_t run_bytes = static_cast<std::size_t>(run * item);
  const auto* src = static_cast<const std::byte*>(h.data());
  std::vector<std::int64_t> pos(split, 0);
  std::int64_t off = 0;  // elements from dst.data()
  for (;;) {
    copy_bytes(dst.device(), static_cast<std::byte*>(dst.data()) + off * item, Device::cpu(), src, run_bytes, stream);
    src += run_bytes;
    int k = split - 1;
    for (; k >= 0; --k) {
      off += strides[k];
      if (++pos[k] < shape[k]) break;
      off -= strides[k] * shape[k];
      pos[k] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace

// ---- copies and writes ----------------------------------------------------------------

NDArray NDArray::copy(std::optional<Device> device, const Stream* stream) const {
  require_valid(*this, "copy");
  NDArray out = empty(shape_, dtype_, device.value_or(this->device()), stream);
  out.assign_on(*this, handle_of(stream));
  return out;
}

NDArray NDArray::to(Device device, const Stream* stream) const {
  require_valid(*this, "to");
  if (device == this->device()) return *this;
  return copy(device, stream);
}

NDArray NDArray::contiguous(const Stream* stream) const {
  require_valid(*this, "contiguous");
  if (is_c_contiguous()) return *this;
  return copy(std::nullopt, stream);
}

NDArray NDArray::astype(DType dtype, const Stream* stream) const {
  require_valid(*this, "astype");
  NDArray out = empty(shape_, dtype, device(), stream);
  out.assign_on(*this, handle_of(stream));
  return out;
}

void NDArray::assign(const NDArray& src) { assign_on(src, nullptr); }

void NDArray::assign_on(const NDArray& src, CUstream stream) {
  require_valid(*this, "assign");
  require_valid(src, "assign");
  if (src.shape_ != shape_) {
    bool ok = src.shape_.size() <= shape_.size();
    for (std::size_t k = 0; ok && k < src.shape_.size(); ++k) {
      std::int64_t s = src.shape_[src.shape_.size() - 1 - k], d = shape_[shape_.size() - 1 - k];
      ok = s == d || s == 1;
    }
    if (!ok)
      fail("could not broadcast input array from shape {} into shape {}", shape_str(src.shape_), shape_str(shape_));
  }
  if (size() == 0) return;
  const bool bytes_alike = src.dtype_ == dtype_ && src.shape_ == shape_ && is_c_contiguous() && src.is_c_contiguous() &&
                           !may_share_memory(src, *this);
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]] {
    record_assign(*g, src, bytes_alike);
    return;
  }
  if (bytes_alike) {
    copy_bytes(device(), data(), src.device(), src.data(), nbytes(), stream);  // also peer
    return;
  }
  // Within one GPU: the device's copy kernel, when luda has set it. Over its own memory
  // only on the default stream, where the copy read first is allocated.
  if (const DeviceAssign by_kernel = g_device_assign.load();
      by_kernel && !device().is_cpu() && device() == src.device()) {
    if (!may_share_memory(src, *this)) return by_kernel(*this, src, stream);
    if (!stream) return copy_within_device(by_kernel, *this, src);
  }
  NDArray h = host_view(src, stream);
  if (may_share_memory(h, *this)) {  // a[1:] = a[:-1]: read everything first
    NDArray c = empty(h.shape_, h.dtype_, Device::cpu());
    convert_host(h.shape_, h.dtype_, static_cast<std::byte*>(c.data()), c.strides_, h.dtype_,
                 static_cast<const std::byte*>(h.data()), h.strides_);
    h = c;
  }
  const Strides bstrides = broadcast_strides(h, shape_);
  const auto* from = static_cast<const std::byte*>(h.data());
  if (device().is_cpu()) {
    convert_host(shape_, dtype_, static_cast<std::byte*>(data()), strides_, h.dtype_, from, bstrides);
    return;
  }
  NDArray staged = empty(shape_, dtype_, Device::cpu());
  convert_host(shape_, dtype_, static_cast<std::byte*>(staged.data()), staged.strides_, h.dtype_, from, bstrides);
  upload(*this, staged, stream);
}

// While a graph is recorded. A copy of the same bytes is a copy node; anything else (a
// conversion, a strided copy, a broadcast) the host does on the cpu device, as a node that
// finds both arrays where the replay moved them. On a CUDA device those go through the
// host, which a graph cannot: the error says what to use instead.
void NDArray::record_assign(GraphRecording& g, const NDArray& src, bool bytes_alike) {
  auto copy_node = [&g](const NDArray& to, const NDArray& from) {
    g.copy(CopyWork{to.device(), from.device(), reinterpret_cast<std::uintptr_t>(to.data()),
                    reinterpret_cast<std::uintptr_t>(from.data()), to.nbytes(), nullptr},
           {g.of(from, false), g.of(to, true)});
  };
  if (bytes_alike) return copy_node(*this, src);
  if (src.dtype_ == dtype_ && src.shape_ == shape_ && is_c_contiguous() && src.is_c_contiguous() &&
      device() == src.device()) {
    // Over its own bytes: through a temporary of the graph, read whole before any is written.
    NDArray between = empty(shape_, dtype_, device());
    copy_node(between, src);
    return copy_node(*this, between);
  }
  if (!device().is_cpu() || !src.device().is_cpu()) {
    // On a CUDA device: the device's copy kernel, a kernel node; between that device and
    // host memory, the kernel on the device's side of a copy node.
    const DeviceAssign by_kernel = g_device_assign.load();
    if (!by_kernel)
      fail("a copy between dtypes, or of a strided or broadcast array, cannot be recorded in a graph: no "
           "copy kernel is loaded (luda is not open)");
    if (device() == src.device()) {
      copy_within_device(by_kernel, *this, src);
    } else if (device().is_cpu() && is_c_contiguous()) {
      NDArray between = empty(shape_, dtype_, src.device());
      by_kernel(between, src, nullptr);
      copy_node(*this, between);
    } else if (src.device().is_cpu() && src.is_c_contiguous()) {
      NDArray between = empty(src.shape_, src.dtype_, device());
      copy_node(between, src);
      by_kernel(*this, between, nullptr);
    } else {
      fail("a copy from a {} array on {} to a {} array on {} cannot be recorded in a graph: the host's side of a copy "
           "between devices must be contiguous; copy it with x:copy() first",
           src.is_c_contiguous() ? "contiguous" : "strided", src.device().str(),
           is_c_contiguous() ? "contiguous" : "strided", device().str());
    }
    return;
  }
  std::vector<Access> accesses{g.of(src, false), g.of(*this, true)};
  NDArray dst = *this, from = src;
  const bool overlap = may_share_memory(src, *this);
  g.host(fmt::format("copy of {} {} elements", size(), dtype_name(dtype_)),
         HostWork{[dst, from, overlap](const Remap& remap) {
           // The arrays' views, over where their memory is in this run.
           auto moved = [&](const NDArray& a) {
             auto b = Buffer::wrap(Device::cpu(), remap(a.buffer()->data()), a.buffer()->size());
             return NDArray::view(std::move(b), a.dtype(), a.shape(), a.strides(), a.offset());
           };
           NDArray d = moved(dst), s = moved(from);
           if (overlap) s = s.copy();  // every element read before any is written
           d.assign(s);
         }},
         std::move(accesses));
}

void NDArray::fill(Scalar value) {
  require_valid(*this, "fill");
  if (size() == 0) return;
  std::array<std::byte, kElementBytes> bytes{};
  value.cast(dtype_).store(bytes.data());
  const bool zero = std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]] {
    if (zero && is_c_contiguous()) return record_zero(*g, *this);
    // The value as an array of one element, broadcast by a recorded assignment; on a
    // CUDA device, every element's bytes, uploaded by a copy node.
    NDArray one, whole;
    {
      GraphRecording::Paused now;
      one = empty(Shape{}, dtype_, Device::cpu());
      std::memcpy(one.data(), bytes.data(), itemsize(dtype_));
      if (!device().is_cpu() && is_c_contiguous()) whole = full(shape_, value, dtype_, Device::cpu());
    }
    if (whole.valid()) return record_upload(*g, *this, whole.data());
    return record_assign(*g, one, false);
  }
  if (zero && is_c_contiguous()) {
    zero_bytes(device(), data(), nbytes());
    return;
  }
  const Strides repeat(shape_.size(), 0);
  if (device().is_cpu()) {
    convert_host(shape_, dtype_, static_cast<std::byte*>(data()), strides_, dtype_, bytes.data(), repeat);
    return;
  }
  NDArray staged = empty(shape_, dtype_, Device::cpu());
  convert_host(shape_, dtype_, static_cast<std::byte*>(staged.data()), staged.strides_, dtype_, bytes.data(), repeat);
  upload(*this, staged, nullptr);
}

void* NDArray::element_address(std::span<const std::int64_t> index) const {
  require_valid(*this, "element access");
  check_index_count(index.size(), ndim());
  if (index.size() < shape_.size())
    fail("an element of a {}-dimensional array needs {} indices, but {} were given", ndim(), ndim(), index.size());
  std::int64_t off = 0;
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    std::int64_t i = index[k], n = shape_[k];
    std::int64_t j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) throw Error(index_error(i, static_cast<int>(k), n));
    off += j * strides_[k];
  }
  return static_cast<std::byte*>(data()) + off * static_cast<std::int64_t>(itemsize(dtype_));
}

Scalar NDArray::get(std::span<const std::int64_t> index) const {
  GraphRecording::refuse_if_recording("reading an element of an array");
  void* p = element_address(index);
  if (device().is_cpu()) return Scalar::load(p, dtype_);
  std::array<std::byte, kElementBytes> bytes{};
  copy_bytes(Device::cpu(), bytes.data(), device(), p, itemsize(dtype_));
  return Scalar::load(bytes.data(), dtype_);
}

void NDArray::set(std::span<const std::int64_t> index, Scalar value) {
  void* p = element_address(index);
  std::array<std::byte, kElementBytes> bytes{};
  value.cast(dtype_).store(bytes.data());
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]] {
    const auto item = static_cast<std::int64_t>(itemsize(dtype_));
    const std::int64_t at = (static_cast<std::byte*>(p) - static_cast<std::byte*>(buffer_->data())) / item;
    return record_upload(*g, view(buffer_, dtype_, Shape{}, Strides{}, at), bytes.data());
  }
  if (device().is_cpu()) std::memcpy(p, bytes.data(), itemsize(dtype_));
  else copy_bytes(device(), p, Device::cpu(), bytes.data(), itemsize(dtype_));
}

std::vector<std::byte> NDArray::to_host_bytes() const {
  require_valid(*this, "to_host_bytes");
  GraphRecording::refuse_if_recording("reading an array's values");
  std::vector<std::byte> out(nbytes());
  if (out.empty()) return out;
  if (is_c_contiguous()) {
    copy_bytes(Device::cpu(), out.data(), device(), data(), out.size());
    return out;
  }
  NDArray h = host_view(*this, nullptr);
  convert_host(shape_, dtype_, out.data(), c_strides(shape_), dtype_, static_cast<const std::byte*>(h.data()),
               h.strides_);
  return out;
}

std::string NDArray::repr(const PrintOptions& options) const {
  require_valid(*this, "repr");
  GraphRecording::refuse_if_recording("printing an array");
  return format_repr(*this, options);
}

std::string NDArray::str(const PrintOptions& options) const {
  require_valid(*this, "str");
  GraphRecording::refuse_if_recording("printing an array");
  return format_str(*this, options);
}

}  // namespace luda

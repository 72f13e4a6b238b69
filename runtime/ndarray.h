// ndarray: dtype, shape, element strides and offset over a shared Buffer on one device.
// Views (index, slice, transpose, reshape where strides allow) share the buffer.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "runtime/device.h"
#include "runtime/dtype.h"
#include "runtime/memory.h"
#include "runtime/stream.h"

namespace luda {

class GraphRecording;  // runtime/graph/recording.h

using Shape = std::vector<std::int64_t>;    // extents
using Strides = std::vector<std::int64_t>;  // in elements, may be negative or zero

// The most axes an array may have: NumPy 2's NPY_MAXDIMS. Every way of making an array
// (empty and the constructors over it, view, reshape) checks it, so the fixed-size
// layout and argument arrays of the kernel kinds and kernels (sized by it) never overflow.
// ORDER MAXDIMS: dsl::kMaxArrayDims is the same number.
inline constexpr int kMaxNdim = 64;
// Error "maximum supported dimension for an ndarray is currently 64, found 65" (NumPy's
// words) when `ndim` exceeds kMaxNdim.
void check_ndim(std::size_t ndim);

// start:stop:step as in NumPy; absent bounds take the ends for the step's direction.
struct Slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;  // nonzero
};
// One position of an index: an integer (drops the axis; negative counts from the end)
// or a slice (keeps it).
using IndexItem = std::variant<std::int64_t, Slice>;

// Printing options, as numpy.set_printoptions.
struct PrintOptions {
  int precision = 8;
  std::int64_t threshold = 1000;  // elide when size > threshold
  int edgeitems = 3;
  int linewidth = 75;
};

class NDArray {
 public:
  NDArray() = default;  // a 0-d float64 array with no buffer; valid() is false

  // New C-contiguous arrays. Element values of `empty` are unspecified.
  static NDArray empty(const Shape& shape, DType dtype, Device device, const Stream* stream = nullptr);
  static NDArray zeros(const Shape& shape, DType dtype, Device device, const Stream* stream = nullptr);
  static NDArray full(const Shape& shape, Scalar value, DType dtype, Device device, const Stream* stream = nullptr);
  // A C-contiguous array on `device` holding `data` (host memory, C order, dtype's layout).
  static NDArray from_host(const void* data, const Shape& shape, DType dtype, Device device);
  // A view of an existing buffer. Error when the view reaches outside it.
  static NDArray view(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape, Strides strides,
                      std::int64_t offset = 0);

  bool valid() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }  // elements from the buffer's start
  int ndim() const { return static_cast<int>(shape_.size()); }
  // size, device and data are inline: the launch paths ask them of every operand.
  std::int64_t size() const {  // product of shape (1 for 0-d)
    std::int64_t n = 1;
    for (std::int64_t e : shape_) n *= e;
    return n;
  }
  std::size_t nbytes() const { return static_cast<std::size_t>(size()) * itemsize(dtype_); }
  Device device() const { return buffer_ ? buffer_->device() : Device::cpu(); }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  void* data() const {  // address of element [0,...,0]
    if (!buffer_) return nullptr;
    return static_cast<std::byte*>(buffer_->data()) + offset_ * static_cast<std::int64_t>(itemsize(dtype_));
  }
  bool is_c_contiguous() const;
  bool is_f_contiguous() const;

  // Views. Fewer items than ndim leave the trailing axes whole. Errors say the axis and
  // extent, as NumPy: "index 10 is out of bounds for axis 0 with size 10",
  // "too many indices for array: array is 2-dimensional, but 3 were indexed",
  // "slice step cannot be zero".
  NDArray index(std::span<const IndexItem> items) const;
  NDArray at(std::int64_t i) const;  // index({i})
  // -1 for one inferred extent. A view when the strides allow it, else a C-order copy.
  // Error: "cannot reshape array of size 6 into shape (4, 2)".
  NDArray reshape(const Shape& shape) const;
  // Reverses the axes when `axes` is empty; else a permutation (negative axes from the end).
  NDArray transpose(std::span<const int> axes = {}) const;

  // A C-contiguous copy on `device` (this device when not given).
  NDArray copy(std::optional<Device> device = std::nullopt, const Stream* stream = nullptr) const;
  // This array when it is already on `device`, else a C-contiguous copy there (peer copy
  // between CUDA devices).
  NDArray to(Device device, const Stream* stream = nullptr) const;
  // This array when C-contiguous, else a C-contiguous copy on the same device.
  NDArray contiguous(const Stream* stream = nullptr) const;
  // A C-contiguous copy with C conversion of each element, ordered on `stream` for CUDA.
  NDArray astype(DType dtype, const Stream* stream = nullptr) const;

  // Writes src's elements into this array (views included): same shape, or src
  // broadcastable to it; any dtype (converted); any devices. Error as NumPy: "could not
  // broadcast input array from shape (4,) into shape (2, 3)". A source that may share
  // memory with this array (may_share_memory) is read whole before anything is
  // written. Within one GPU a kernel copies (DeviceAssign, below); between devices the
  // bytes go through the host, and a strided CUDA destination is written run by run,
  // never touching bytes outside the view.
  void assign(const NDArray& src);
  // assign, ordered on `stream` for CUDA work (null: the default stream).
  void assign_on(const NDArray& src, CUstream stream);
  void fill(Scalar value);

  // One element; `index` has exactly ndim entries (negative from the end). Errors as
  // index(), and "an element of a 2-dimensional array needs 2 indices, but 1 were given".
  Scalar get(std::span<const std::int64_t> index) const;
  void set(std::span<const std::int64_t> index, Scalar value);

  // The elements in C order as host bytes (itemsize each).
  std::vector<std::byte> to_host_bytes() const;

  // NumPy's repr: "array([[0., 1.],\n       [2., 3.]], dtype=float32)" (runtime/format.h).
  std::string repr(const PrintOptions& options = {}) const;
  // NumPy's str: "[[0. 1.]\n [2. 3.]]".
  std::string str(const PrintOptions& options = {}) const;

 private:
  void record_assign(GraphRecording& g, const NDArray& src, bool bytes_alike);
  // The address of one element (any device); errors as index().
  void* element_address(std::span<const std::int64_t> index) const;

  std::shared_ptr<Buffer> buffer_;
  DType dtype_ = DType::Float64;
  Shape shape_;
  Strides strides_;
  std::int64_t offset_ = 0;
};

// The bytes [lo, hi) that an array's elements span: from its first element each axis
// reaches (extent - 1) * stride elements, back for a negative stride. An array with no
// elements (or no buffer) spans nothing: an extent that overlaps none.
struct ByteExtent {
  std::uintptr_t lo, hi;  // no initializers: launches keep arrays of them on the stack
  bool overlaps(const ByteExtent& o) const { return lo < o.hi && o.lo < hi; }
};
inline ByteExtent byte_extent(const NDArray& x) {
  constexpr ByteExtent kNothing{UINTPTR_MAX, 0};
  const std::int64_t* shape = x.shape().data();
  const std::int64_t* strides = x.strides().data();
  std::int64_t lo = 0, hi = 0;
  for (int k = 0; k < x.ndim(); ++k) {
    if (shape[k] == 0) return kNothing;
    std::int64_t reach = (shape[k] - 1) * strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  auto base = reinterpret_cast<std::uintptr_t>(x.data());
  if (base == 0) return kNothing;
  auto size = static_cast<std::int64_t>(itemsize(x.dtype()));
  return {base + static_cast<std::uintptr_t>(lo * size), base + static_cast<std::uintptr_t>((hi + 1) * size)};
}
// Whether two arrays may share memory (NumPy's may_share_memory): their byte extents
// overlap, so views that interleave without touching (the even and the odd elements)
// count as sharing. Every overlap rule of luda is this test: an assignment's, a kernel
// kind's inputs and outputs, cuda.jit's restricted pointers. Inline: launches ask it of
// pairs of operands.
inline bool may_share_memory(const NDArray& a, const NDArray& b) { return byte_extent(a).overlaps(byte_extent(b)); }

// A copy's iteration space: the shape with axes of extent 1 dropped and neighbours that
// step evenly in both operands merged, with each operand's strides in bytes. The host's
// conversions and the device's copy kernel (ops/device/copy.h) walk the same layout.
struct CopyLayout {
  Shape shape;
  Strides dst, src;  // bytes
};
CopyLayout copy_layout(const Shape& shape, const Strides& dst, std::int64_t dst_item, const Strides& src,
                       std::int64_t src_item);
// `src`'s strides (elements) read as an array of shape `to` that it broadcasts to:
// leading axes added and extent-1 axes repeated, with stride 0.
Strides broadcast_strides(const NDArray& src, const Shape& to);

// A copy of `src` into `dst` on one CUDA device by a kernel on `stream` (any dtypes,
// strides and broadcast, converted as the host converts): how assign copies within a GPU
// without the host, and the only way a graph being recorded can. The jit layer provides
// it and sets it (ops/device/copy.h, install_device_assign) before a host holds an array;
// unset, such copies go through the host, and are refused in a recording.
using DeviceAssign = void (*)(const NDArray& dst, const NDArray& src, CUstream stream);
void set_device_assign(DeviceAssign f) noexcept;

// "(2, 3)", "(5,)", "()" as NumPy prints shapes.
std::string shape_str(const Shape& shape);
// NumPy's error for a shape whose nonzero extents multiply to 2^63 or more (an array's,
// or one that operands broadcast to: the strides of an empty array are such products).
[[noreturn]] void too_big_error(const Shape& shape);
// C-order strides in elements for a shape.
Strides c_strides(const Shape& shape);
// NumPy broadcasting of two shapes; Error "operands could not be broadcast together with
// shapes (2, 3) (4,)".
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace luda

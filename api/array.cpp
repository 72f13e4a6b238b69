// luda::Array: the public face of NDArray (runtime/ndarray.h). An Array holds its NDArray
// behind a shared pointer to const: an NDArray is a view (buffer, dtype, shape, strides,
// offset) that never changes once made, so copies of an Array may share it.
#include <cstring>
#include <limits>

#include "api/internal.h"
#include "ops/device/copy.h"
#include "runtime/error.h"
#include "runtime/ndarray.h"

namespace luda {
namespace {

const NDArray& invalid_array() {
  static const NDArray a;
  return a;
}

// The lowest and highest element offsets, from element [0, ..., 0], that `shape` and
// `strides` reach (both 0 for an empty array). Error when they overflow.
std::pair<std::int64_t, std::int64_t> reach(const Shape& shape, const Strides& strides, std::string_view who) {
  std::int64_t lo = 0, hi = 0;
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (shape[k] == 0) return {0, 0};
  for (std::size_t k = 0; k < shape.size(); ++k) {
    std::int64_t step = 0;
    if (__builtin_mul_overflow(shape[k] - 1, strides[k], &step) ||
        __builtin_add_overflow(step < 0 ? lo : hi, step, step < 0 ? &lo : &hi))
      fail("{}: shape {} with strides {} reaches past 2^63 elements", who, shape_str(shape), shape_str(strides));
  }
  return {lo, hi};
}

}  // namespace

NDArray api::wrap_memory(void* data, Shape shape, DType dtype, Device device, Strides strides,
                         std::shared_ptr<void> owner, bool pinned, std::string_view who) {
  check_ndim(shape.size());
  for (std::int64_t e : shape)
    if (e < 0) fail("{}: negative dimensions are not allowed (shape {})", who, shape_str(shape));
  if (strides.empty()) strides = c_strides(shape);
  if (strides.size() != shape.size())
    fail("{}: shape {} has {} axes but {} strides were given", who, shape_str(shape), shape.size(), strides.size());
  auto [lo, hi] = reach(shape, strides, who);
  const auto item = static_cast<std::int64_t>(itemsize(dtype));
  std::int64_t elements = 0;
  bool empty = false;
  for (std::int64_t e : shape) empty = empty || e == 0;
  if (!empty &&
      (__builtin_sub_overflow(hi, lo, &elements) || elements > std::numeric_limits<std::int64_t>::max() / item - 1))
    fail("{}: shape {} with strides {} reaches past 2^63 bytes", who, shape_str(shape), shape_str(strides));
  if (!data && !empty)
    fail("{}: a null pointer for an array of shape {}; pass the memory's address", who, shape_str(shape));
  std::size_t bytes = empty ? 0 : static_cast<std::size_t>((elements + 1) * item);
  void* base = empty ? data : static_cast<std::byte*>(data) + lo * item;
  std::function<void()> release;
  if (owner) release = [owner = std::move(owner)]() mutable { owner.reset(); };
  auto buffer = Buffer::wrap(device, base, bytes, std::move(release), pinned);
  return NDArray::view(std::move(buffer), dtype, std::move(shape), std::move(strides), empty ? 0 : -lo);
}

Array::Array() = default;
Array::~Array() = default;
Array::Array(const Array&) = default;
Array& Array::operator=(const Array&) = default;
Array::Array(Array&&) noexcept = default;
Array& Array::operator=(Array&&) noexcept = default;

// Every array of the C++ API is made here: before a host holds one, NDArray::assign gets
// the GPU's copy kernel (ops/device/copy.h says why a call).
Array::Array(NDArray a) : impl_(a.valid() ? std::make_shared<const NDArray>(std::move(a)) : nullptr) {
  ops::device::install_device_assign();
}

const NDArray& Array::ndarray() const { return impl_ ? *impl_ : invalid_array(); }

Array Array::empty(Shape shape, DType dtype, std::optional<Device> device) {
  return Array(NDArray::empty(shape, dtype, device.value_or(current_device())));
}

Array Array::zeros(Shape shape, DType dtype, std::optional<Device> device) {
  return Array(NDArray::zeros(shape, dtype, device.value_or(current_device())));
}

Array Array::copy_of(const void* data, Shape shape, DType dtype, std::optional<Device> device) {
  return Array(NDArray::from_host(data, shape, dtype, device.value_or(current_device())));
}

Array Array::wrap(void* data, Shape shape, DType dtype, Device device, Strides strides, std::shared_ptr<void> owner) {
  return Array(api::wrap_memory(data, std::move(shape), dtype, device, std::move(strides), std::move(owner), false,
                                "Array::wrap"));
}

Array Array::wrap_pinned(void* data, Shape shape, DType dtype, Strides strides, std::shared_ptr<void> owner) {
  return Array(api::wrap_memory(data, std::move(shape), dtype, Device::cpu(), std::move(strides), std::move(owner),
                                true, "Array::wrap_pinned"));
}

bool Array::valid() const { return impl_ != nullptr; }
DType Array::dtype() const { return ndarray().dtype(); }
const Shape& Array::shape() const { return ndarray().shape(); }
const Strides& Array::strides() const { return ndarray().strides(); }
int Array::ndim() const { return ndarray().ndim(); }
std::int64_t Array::size() const { return ndarray().size(); }
std::size_t Array::nbytes() const { return ndarray().nbytes(); }
Device Array::device() const { return ndarray().device(); }
void* Array::data() const { return ndarray().data(); }
bool Array::is_c_contiguous() const { return ndarray().is_c_contiguous(); }

void Array::check_type(DType t) const {
  if (!impl_) fail("the array is empty (a default-constructed luda::Array); make or wrap one first");
  if (t != impl_->dtype())
    fail("the array holds {} elements, not {}; read it as its dtype, or convert it first", dtype_name(impl_->dtype()),
         dtype_name(t));
}

namespace {
const NDArray& valid_array(const std::shared_ptr<const NDArray>& impl, std::string_view what) {
  if (!impl) fail("{}: the array is empty (a default-constructed luda::Array); make or wrap one first", what);
  return *impl;
}
}  // namespace

Array Array::to(Device device) const { return Array(valid_array(impl_, "Array::to").to(device)); }
Array Array::copy() const { return Array(valid_array(impl_, "Array::copy").copy()); }
Array Array::reshape(Shape shape) const { return Array(valid_array(impl_, "Array::reshape").reshape(shape)); }

void Array::assign(const Array& src) const {
  NDArray dst = valid_array(impl_, "Array::assign");  // a view of the same elements
  dst.assign(valid_array(src.impl_, "Array::assign"));
}

void Array::copy_to_host(void* dst, std::size_t bytes) const {
  const NDArray& a = valid_array(impl_, "Array::copy_to_host");
  if (bytes != a.nbytes())
    fail("Array::copy_to_host: the array has {} bytes but the destination {}", a.nbytes(), bytes);
  std::vector<std::byte> host = a.to_host_bytes();
  if (!host.empty()) std::memcpy(dst, host.data(), host.size());
}

std::string Array::repr() const { return impl_ ? impl_->repr() : "luda::Array()"; }
std::string Array::str() const { return impl_ ? impl_->str() : "luda::Array()"; }

}  // namespace luda

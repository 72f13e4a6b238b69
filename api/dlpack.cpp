// DLPack import and export (dlpack/dlpack.h, Debian's libdlpack-dev): tensors of other
// libraries as luda arrays and back, without a copy. DLPack's strides count elements, as
// luda's do; a missing strides array means C order.
#include <dlpack/dlpack.h>

#include <memory>
#include <string>

#include "api/internal.h"
#include "runtime/error.h"
#include "runtime/memory.h"
#include "runtime/ndarray.h"

namespace luda {
namespace {

// DLPack 0.8's kDLBool: Debian's 0.6 header predates it, but producers (PyTorch, CuPy, JAX)
// send it for bool tensors, and the code is part of DLPack's ABI.
constexpr std::uint8_t kDLBoolCode = 6;

std::string device_type_name(int type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    default: return "device type " + std::to_string(type);
  }
}

std::string dl_dtype_name(DLDataType t) {
  const char* code = t.code == kDLInt        ? "int"
                     : t.code == kDLUInt     ? "uint"
                     : t.code == kDLFloat    ? "float"
                     : t.code == kDLBfloat   ? "bfloat"
                     : t.code == kDLComplex  ? "complex"
                     : t.code == kDLBoolCode ? "bool"
                                             : "code ";
  std::string name = code;
  if (std::string_view(code) == "code ") name += std::to_string(t.code) + " of ";
  name += std::to_string(t.bits);
  if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
  return name;
}

std::optional<DType> dtype_of(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  auto sized = [&](DType b8, DType b16, DType b32, DType b64) -> std::optional<DType> {
    switch (t.bits) {
      case 8: return b8;
      case 16: return b16;
      case 32: return b32;
      case 64: return b64;
      default: return std::nullopt;
    }
  };
  switch (t.code) {
    case kDLInt: return sized(DType::Int8, DType::Int16, DType::Int32, DType::Int64);
    case kDLUInt: return sized(DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64);
    case kDLFloat:
      if (t.bits == 16) return DType::Float16;
      if (t.bits == 32) return DType::Float32;
      if (t.bits == 64) return DType::Float64;
      return std::nullopt;
    case kDLBfloat:
      if (t.bits == 16) return DType::BFloat16;
      return std::nullopt;
    case kDLComplex:
      if (t.bits == 64) return DType::Complex64;
      if (t.bits == 128) return DType::Complex128;
      return std::nullopt;
    case kDLBoolCode:
      if (t.bits == 8) return DType::Bool;
      return std::nullopt;
    default: return std::nullopt;
  }
}

DLDataType dl_dtype(DType t) {
  DLDataType d;
  d.lanes = 1;
  d.bits = static_cast<std::uint8_t>(itemsize(t) * 8);
  switch (t) {
    case DType::Bool: d.code = kDLBoolCode; break;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: d.code = kDLInt; break;
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: d.code = kDLUInt; break;
    case DType::Float16:
    case DType::Float32:
    case DType::Float64: d.code = kDLFloat; break;
    case DType::BFloat16: d.code = kDLBfloat; break;
    case DType::Complex64:
    case DType::Complex128: d.code = kDLComplex; break;
  }
  return d;
}

// What an exported tensor owns: the array (its memory), and the shape and strides that
// the DLTensor points at.
struct Exported {
  DLManagedTensor tensor{};
  Array array;
  std::vector<std::int64_t> shape, strides;
};

}  // namespace

Array Array::from_dlpack(DLManagedTensor* tensor) {
  if (!tensor) fail("Array::from_dlpack: the tensor is null; pass the DLManagedTensor* a producer exported");
  const DLTensor& t = tensor->dl_tensor;
  Device device;
  bool pinned = false;
  switch (t.device.device_type) {
    case kDLCPU: device = Device::cpu(); break;
    case kDLCUDAHost:
      device = Device::cpu();
      pinned = true;
      break;
    case kDLCUDA:
    case kDLCUDAManaged: device = Device::cuda(t.device.device_id); break;
    default:
      fail("Array::from_dlpack: the tensor is on {} (device {}); luda takes tensors of kDLCPU, kDLCUDAHost and "
           "kDLCUDA: copy it to one of those first",
           device_type_name(t.device.device_type), t.device.device_id);
  }
  std::optional<DType> dtype = dtype_of(t.dtype);
  if (!dtype)
    fail("Array::from_dlpack: luda has no dtype for DLPack's {}; it takes bool, int8-64, uint8-64, float16-64, "
         "bfloat16, complex64 and complex128 with one lane",
         dl_dtype_name(t.dtype));
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    fail("Array::from_dlpack: the tensor's ndim is {} with {} shape", t.ndim, t.shape ? "a" : "no");
  Shape shape(t.shape, t.shape + t.ndim);
  Strides strides = t.strides ? Strides(t.strides, t.strides + t.ndim) : Strides{};
  void* data = t.data ? static_cast<std::byte*>(t.data) + t.byte_offset : nullptr;
  // The owner runs the producer's deleter once the last array viewing the memory is gone.
  // It is armed only when the array is made: an error (a shape the strides cannot hold)
  // leaves the tensor with the caller.
  auto armed = std::make_shared<bool>(false);
  std::shared_ptr<void> owner(static_cast<void*>(tensor), [armed](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (*armed && m->deleter) m->deleter(m);
  });
  Array a(api::wrap_memory(data, std::move(shape), *dtype, device, std::move(strides), std::move(owner), pinned,
                           "Array::from_dlpack"));
  *armed = true;
  return a;
}

DLManagedTensor* Array::to_dlpack() const {
  if (!impl_) fail("Array::to_dlpack: the array is empty (a default-constructed luda::Array); make or wrap one first");
  auto exported = std::make_unique<Exported>();
  exported->array = *this;
  exported->shape = shape();
  exported->strides = strides();
  DLTensor& t = exported->tensor.dl_tensor;
  Device d = device();
  if (d.is_cuda()) t.device = {kDLCUDA, d.index};
  else t.device = {impl_->buffer()->pinned() ? kDLCUDAHost : kDLCPU, 0};
  t.data = data();
  t.byte_offset = 0;
  t.ndim = ndim();
  t.dtype = dl_dtype(dtype());
  t.shape = exported->shape.data();
  t.strides = exported->strides.data();
  exported->tensor.manager_ctx = exported.get();
  exported->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
  return &exported.release()->tensor;
}

}  // namespace luda

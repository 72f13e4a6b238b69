// Memory. Device memory comes from the CUDA stream-ordered allocator (cuMemAllocAsync on
// the device's default pool, whose release threshold keeps freed memory for reuse);
// cpu memory is 64-byte aligned host memory, optionally pinned for fast transfers.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <memory>

#include "runtime/device.h"

namespace luda {

// Bytes on one device, shared by every array that views them.
class Buffer {
 public:
  // Allocates `bytes` on `device` (ordered on `stream` for CUDA; 0 = default stream).
  // Zero bytes gives a valid empty buffer. Errors: NoDeviceError; CudaError
  // "cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY: out of memory (asked for 8.0 GiB, 2.1 GiB free)".
  static std::shared_ptr<Buffer> allocate(Device device, std::size_t bytes, CUstream stream = nullptr);
  // Page-locked host memory (cuMemHostAlloc); its device is cpu. Needs the driver.
  static std::shared_ptr<Buffer> allocate_pinned(std::size_t bytes);
  // Memory the caller owns (a host application's buffer): luda never frees it; `release`
  // (if given) runs when the last array viewing it is gone.
  static std::shared_ptr<Buffer> wrap(Device device, void* data, std::size_t bytes,
                                      std::function<void()> release = {});

  ~Buffer();  // never throws; frees on the stream it was allocated on
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  Device device() const { return device_; }
  bool pinned() const { return kind_ == Kind::Pinned; }

 private:
  enum class Kind { Host, Pinned, Cuda, Foreign };
  Buffer(Device device, void* data, std::size_t size, Kind kind, CUstream stream)
      : device_(device), data_(data), size_(size), kind_(kind), stream_(stream) {}

  Device device_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  Kind kind_ = Kind::Host;
  CUstream stream_ = nullptr;
  std::function<void()> release_;
};

// Copies n contiguous bytes between any two devices (host<->host memcpy, host<->device,
// device<->device, peer). Ordered on `stream` (0 = default stream of the CUDA side);
// waits for completion unless `async` (async needs pinned or device memory on the host
// side to be truly asynchronous, as in CUDA).
void copy_bytes(Device dst_device, void* dst, Device src_device, const void* src,
                std::size_t n, CUstream stream = nullptr, bool async = false);

// Sets n bytes to zero on any device.
void zero_bytes(Device device, void* dst, std::size_t n, CUstream stream = nullptr);

}  // namespace luda

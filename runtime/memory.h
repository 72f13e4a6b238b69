// Memory. Device memory comes from the CUDA stream-ordered allocator (cuMemAllocAsync on
// the device's default pool, whose release threshold keeps freed memory for reuse);
// cpu memory (every cpu device's) is 64-byte aligned host memory, optionally pinned for
// fast transfers.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

#include "runtime/device.h"
#include "runtime/stream.h"

namespace luda {

// Bytes on one device, shared by every array that views them.
class Buffer {
 public:
  // Allocates `bytes` on `device`, ordered on `stream` for CUDA (null: the device's default
  // stream). The buffer keeps the stream alive, since it is freed on it.
  // Zero bytes gives a valid empty buffer whose data() is null. cpu sizes are rounded up
  // to 64 bytes internally. CUDA memory may be used on other streams only after work on
  // the allocating stream has been waited for (as with cuMemAllocAsync). On
  // CUDA_ERROR_OUT_OF_MEMORY the device is synchronized, the pool trimmed and the
  // allocation retried once before the error. Errors: NoDeviceError; CudaError
  // "cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY: out of memory (asked for 8.0 GiB, 2.1 GiB free)".
  static std::shared_ptr<Buffer> allocate(Device device, std::size_t bytes, const Stream* stream = nullptr);
  // Page-locked host memory (cuMemHostAlloc); its device is cpu. Needs the driver.
  static std::shared_ptr<Buffer> allocate_pinned(std::size_t bytes);
  // Memory the caller owns (a host application's buffer): luda never frees it; `release`
  // (if given) runs when the last array viewing it is gone. `pinned`: page-locked host
  // memory that the caller made so (cpu only).
  static std::shared_ptr<Buffer> wrap(Device device, void* data, std::size_t bytes, std::function<void()> release = {},
                                      bool pinned = false);

  ~Buffer();  // never throws; frees on the stream it was allocated on

  // Bytes of the buffers luda allocated (host, pinned and device memory, not wrapped
  // memory) that are not yet freed, over every device and thread.
  static std::uint64_t live_bytes();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  Device device() const { return device_; }
  bool pinned() const { return pinned_; }

 private:
  enum class Kind { Host, Pinned, Cuda, Foreign };
  Buffer(Device device, void* data, std::size_t size, Kind kind);  // counts live_bytes

  Device device_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  Kind kind_ = Kind::Host;
  bool pinned_ = false;
  std::optional<Stream> stream_;  // the stream a CUDA allocation is ordered on
  std::function<void()> release_;
};

// Copies n contiguous bytes between any two devices (host<->host memcpy, host<->device,
// device<->device, peer). Ordered on `stream`, a stream of the CUDA side (of the source
// for device-to-device and peer copies; 0 = that device's default stream); peer copies
// enable peer access once when the hardware allows it (cuMemcpyPeerAsync); waits for completion unless `async` (async needs pinned or device memory on the host
// side to be truly asynchronous, as in CUDA).
void copy_bytes(Device dst_device, void* dst, Device src_device, const void* src, std::size_t n,
                CUstream stream = nullptr, bool async = false);

// The bytes the device's pool holds from the driver now (in use, or kept for reuse): this
// process's own, unlike the device's free memory, which other processes move.
std::uint64_t pool_reserved_bytes(int ordinal);

// Sets n bytes to zero on any device: memset on cpu; cuMemsetD8Async on `stream` for CUDA,
// ordered on it but not waited for.
void zero_bytes(Device device, void* dst, std::size_t n, CUstream stream = nullptr);

}  // namespace luda

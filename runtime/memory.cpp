#include "runtime/memory.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace luda {

namespace {

constexpr std::size_t kHostAlignment = 64;  // a cache line; enough for any vector load

CUdeviceptr device_ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// The device's default memory pool, set up once: its release threshold is the maximum,
// so that memory freed with cuMemFreeAsync stays in the pool for the next allocation
// instead of going back to the driver at every synchronization (as CuPy's pool keeps it).
CUmemoryPool default_pool(int ordinal) {
  struct PoolSlot {
    std::once_flag once;
    CUmemoryPool pool = nullptr;
  };
  static std::unique_ptr<PoolSlot[]> slots = std::make_unique<PoolSlot[]>(cuda_device_count());
  require_cuda_device(ordinal);
  PoolSlot& s = slots[ordinal];
  std::call_once(s.once, [&] {
    CUdevice device = 0;
    LUDA_CU(cuDeviceGet, &device, ordinal);
    CUmemoryPool pool = nullptr;
    LUDA_CU(cuDeviceGetDefaultMemPool, &pool, device);
    cuuint64_t threshold = UINT64_MAX;
    LUDA_CU(cuMemPoolSetAttribute, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
    s.pool = pool;
  });
  return s.pool;
}

}  // namespace

std::uint64_t pool_reserved_bytes(int ordinal) {
  ContextScope scope(ordinal);
  cuuint64_t bytes = 0;
  LUDA_CU(cuMemPoolGetAttribute, default_pool(ordinal), CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &bytes);
  return bytes;
}

namespace {

void* allocate_cuda(int ordinal, std::size_t bytes, const Stream& stream) {
  ContextScope scope(ordinal);
  CUmemoryPool pool = default_pool(ordinal);
  const driver::Api& cu = driver::api();
  CUdeviceptr ptr = 0;
  CUresult r = cu.cuMemAllocAsync(&ptr, bytes, stream.handle());
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // Frees still pending on any stream return to the pool once the device is idle;
    // trimming then hands unused pool memory back, so that a large block can be mapped.
    LUDA_CU(cuCtxSynchronize);
    LUDA_CU(cuMemPoolTrimTo, pool, 0);
    r = cu.cuMemAllocAsync(&ptr, bytes, stream.handle());
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    std::size_t free = 0, total = 0;
    std::string detail = fmt::format("asked for {}", driver::format_bytes(bytes));
    if (cu.cuMemGetInfo(&free, &total) == CUDA_SUCCESS) detail += fmt::format(", {} free", driver::format_bytes(free));
    driver::check(r, "cuMemAllocAsync", detail);
  }
  driver::check(r, "cuMemAllocAsync", fmt::format("asked for {}", driver::format_bytes(bytes)));
  return reinterpret_cast<void*>(ptr);
}

}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(Device device, std::size_t bytes, const Stream* stream) {
  if (device.is_cpu()) {
    require_cpu_device(device.index);
    if (bytes == 0) return std::shared_ptr<Buffer>(new Buffer(device, nullptr, 0, Kind::Host));
    // aligned_alloc needs a multiple of the alignment.
    std::size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    void* p = rounded < bytes ? nullptr : std::aligned_alloc(kHostAlignment, rounded);
    if (!p) fail("cpu: out of memory (asked for {})", driver::format_bytes(bytes));
    try {
      return std::shared_ptr<Buffer>(new Buffer(device, p, bytes, Kind::Host));
    } catch (...) {
      std::free(p);
      throw;
    }
  }
  require_cuda_device(device.index);
  Stream on = stream ? *stream : Stream::default_stream(device);
  if (on.device() != device)
    fail("cannot allocate on {} with a stream of {}: pass a stream of {}", device.str(), on.device().str(),
         device.str());
  std::shared_ptr<Buffer> buffer(new Buffer(device, nullptr, bytes, Kind::Cuda));
  buffer->stream_ = on;
  // cuMemAllocAsync rejects a size of 0: an empty buffer has no memory at all.
  if (bytes > 0) buffer->data_ = allocate_cuda(device.index, bytes, on);
  return buffer;
}

std::shared_ptr<Buffer> Buffer::allocate_pinned(std::size_t bytes) {
  if (bytes == 0) return std::shared_ptr<Buffer>(new Buffer(Device::cpu(), nullptr, 0, Kind::Pinned));
  // cuMemHostAlloc needs a current context; PORTABLE makes the memory pinned for all.
  ContextScope scope(0);
  void* p = nullptr;
  driver::check(driver::api().cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
                fmt::format("asked for {}", driver::format_bytes(bytes)));
  try {
    return std::shared_ptr<Buffer>(new Buffer(Device::cpu(), p, bytes, Kind::Pinned));
  } catch (...) {
    (void)driver::api().cuMemFreeHost(p);
    throw;
  }
}

std::shared_ptr<Buffer> Buffer::wrap(Device device, void* data, std::size_t bytes, std::function<void()> release,
                                     bool pinned) {
  require_device(device);
  if (pinned && device.is_cuda()) fail("pinned memory is host memory: wrap it as a cpu array");
  std::shared_ptr<Buffer> buffer(new Buffer(device, data, bytes, Kind::Foreign));
  buffer->release_ = std::move(release);
  buffer->pinned_ = pinned;
  return buffer;
}

namespace {
std::atomic<std::uint64_t> g_live_bytes{0};
}  // namespace

std::uint64_t Buffer::live_bytes() { return g_live_bytes.load(std::memory_order_relaxed); }

Buffer::Buffer(Device device, void* data, std::size_t size, Kind kind)
    : device_(device), data_(data), size_(size), kind_(kind), pinned_(kind == Kind::Pinned) {
  if (kind_ != Kind::Foreign) g_live_bytes.fetch_add(size_, std::memory_order_relaxed);
}

Buffer::~Buffer() {
  if (kind_ != Kind::Foreign) g_live_bytes.fetch_sub(size_, std::memory_order_relaxed);
  try {
    switch (kind_) {
      case Kind::Host: std::free(data_); break;
      case Kind::Pinned:
        if (data_) {
          ContextScope scope(0);
          (void)driver::api().cuMemFreeHost(data_);
        }
        break;
      case Kind::Cuda:
        if (data_) {
          ContextScope scope(device_.index);
          // Errors are ignored: at process exit the driver may already be shut down
          // (CUDA_ERROR_DEINITIALIZED), and the memory goes with the process then.
          (void)driver::api().cuMemFreeAsync(device_ptr(data_), stream_->handle());
        }
        break;
      case Kind::Foreign:
        if (release_) release_();
        break;
    }
  } catch (...) {
    // Destructors never throw.
  }
}

void copy_bytes(Device dst_device, void* dst, Device src_device, const void* src, std::size_t n, CUstream stream,
                bool async) {
  if (n == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, n);
    return;
  }
  // The context of the CUDA side (the source's for device-to-device), whose stream orders
  // the copy.
  int ordinal = src_device.is_cuda() ? src_device.index : dst_device.index;
  if (src_device.is_cuda()) require_cuda_device(src_device.index);
  if (dst_device.is_cuda()) require_cuda_device(dst_device.index);
  ContextScope scope(ordinal);
  const char* call = nullptr;
  CUresult r = CUDA_SUCCESS;
  const driver::Api& cu = driver::api();
  if (src_device.is_cpu()) {
    call = "cuMemcpyHtoDAsync";
    r = cu.cuMemcpyHtoDAsync(device_ptr(dst), src, n, stream);
  } else if (dst_device.is_cpu()) {
    // A copy into pageable memory returns only when it is done, after the work queued
    // before it: wait for that work first, where a stop request can end the wait (no
    // copy is then left to land in `dst` later).
    if (!async) wait_for_stream(stream, "cuStreamSynchronize", ordinal);
    call = "cuMemcpyDtoHAsync";
    r = cu.cuMemcpyDtoHAsync(dst, device_ptr(src), n, stream);
  } else if (src_device.index == dst_device.index) {
    call = "cuMemcpyDtoDAsync";
    r = cu.cuMemcpyDtoDAsync(device_ptr(dst), device_ptr(src), n, stream);
  } else {
    // Direct over NVLink/PCIe when the hardware allows; the driver stages it otherwise.
    (void)enable_peer_access(src_device.index, dst_device.index);
    call = "cuMemcpyPeerAsync";
    r = cu.cuMemcpyPeerAsync(device_ptr(dst), primary_context(dst_device.index), device_ptr(src),
                             primary_context(src_device.index), n, stream);
  }
  driver::check(r, call, fmt::format("{} from {} to {}", driver::format_bytes(n), src_device.str(), dst_device.str()));
  if (!async) wait_for_stream(stream, "cuStreamSynchronize", ordinal);
}

void zero_bytes(Device device, void* dst, std::size_t n, CUstream stream) {
  if (n == 0) return;
  if (device.is_cpu()) {
    std::memset(dst, 0, n);
    return;
  }
  ContextScope scope(device.index);
  driver::check(driver::api().cuMemsetD8Async(device_ptr(dst), 0, n, stream), "cuMemsetD8Async",
                fmt::format("{} on {}", driver::format_bytes(n), device.str()));
}

}  // namespace luda

// Devices: `cpu` and `cuda:N`; the properties and primary context of each CUDA device;
// the current device of each thread.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "luda/core.h"

namespace luda {

// Device, cuda_device_count, default_device, current_device, use_device, synchronize and
// set_cpu_fallback_notice are public (luda/core.h).

// The notice the Lua module installs when it opens, unless the host chose its own with
// set_cpu_fallback_notice (nullptr included): a host's choice stands whenever it was made.
void offer_cpu_fallback_notice(CpuFallbackNotice notice);

struct DeviceProperties {
  std::string name;
  int ordinal = 0;
  int major = 0, minor = 0;          // compute capability
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  int max_block_dim[3] = {0, 0, 0};
  int max_grid_dim[3] = {0, 0, 0};
  int warp_size = 0;
  std::size_t shared_memory_per_block = 0;        // default limit
  std::size_t shared_memory_per_block_optin = 0;  // with cuFuncSetAttribute
  std::size_t total_memory = 0;
  std::size_t l2_cache_bytes = 0;
  int clock_khz = 0, memory_clock_khz = 0, memory_bus_width = 0;
  std::string arch() const;  // "sm_90"
};

// Throws NoDeviceError unless `ordinal` names a CUDA device: "no CUDA device: <why>"
// without a driver, "no CUDA device cuda:7: this machine has 1 (cuda:0)" past the count.
void require_cuda_device(int ordinal);
// Cached per device (queried once). Throws as require_cuda_device.
const DeviceProperties& cuda_properties(int ordinal);

// The device's primary context, retained once per process and kept.
CUcontext primary_context(int ordinal);

// Makes the device's primary context current on this thread for a scope, restoring the
// previous one after. Cheap when it is already current. When no context was current
// before, the device's stays current after (as the CUDA runtime leaves it), so that
// repeated scopes on one thread cost one cuCtxGetCurrent each.
class ContextScope {
 public:
  explicit ContextScope(int ordinal);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool changed_ = false;
};


struct MemoryInfo {
  std::size_t free = 0, total = 0;
};
MemoryInfo memory_info(int ordinal);

// Peer access from `from` to `to` enabled once (no-op when already on, or the same device).
// Returns false when the hardware cannot.
bool enable_peer_access(int from, int to);

namespace detail {
// "no CUDA device cuda:7: this machine has 1 (cuda:0)"; "... has 3 (cuda:0 to cuda:2)".
std::string missing_device_message(int ordinal, int count);
}  // namespace detail

}  // namespace luda

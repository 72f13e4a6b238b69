// Devices: `cpu:N` and `cuda:N`; the properties and primary context of each CUDA device;
// the number of cpu devices ($LUDA_CPU_DEVICES); the current device of each thread.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "luda/core.h"

namespace luda {

// Device, cuda_device_count, cpu_device_count, default_device, current_device, use_device,
// synchronize and set_cpu_fallback_notice are public (luda/core.h).

// The most cpu devices LUDA_CPU_DEVICES may ask for.
inline constexpr int kMaxCpuDevices = 1024;

// The notice the Lua module installs when it opens, unless the host chose its own with
// set_cpu_fallback_notice (nullptr included): a host's choice stands whenever it was made.
void offer_cpu_fallback_notice(CpuFallbackNotice notice);

struct DeviceProperties {
  std::string name;
  int ordinal = 0;
  int major = 0, minor = 0;  // compute capability
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
  // The device's PCI address, "0000:1b:00": which GPU it is among the processes of a host
  // (ordinals differ with CUDA_VISIBLE_DEVICES).
  std::string pci_bus_id;
  std::string arch() const;  // "sm_90"
};

// Throws NoDeviceError unless `ordinal` names a CUDA device: "no CUDA device: <why>"
// without a driver, "no CUDA device cuda:7: this machine has 1 (cuda:0)" past the count.
void require_cuda_device(int ordinal);
// Throws NoDeviceError unless `index` names a cpu device (cpu:0 always does): "no cpu
// device cpu:5: LUDA_CPU_DEVICES gives 2 (cpu:0, cpu:1); start the process with
// LUDA_CPU_DEVICES=6"; Error when LUDA_CPU_DEVICES is malformed (cpu_device_count's).
void require_cpu_device(int index);
// require_cuda_device or require_cpu_device, by the device's kind.
void require_device(Device d);
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

// Peer access from `from` to `to` enabled once (no-op when already on, or the same device):
// `from`'s context, and its kernels and copies, reach memory of `to`, arrays' pool included.
// Returns false when the hardware cannot.
bool enable_peer_access(int from, int to);

namespace detail {
// "no CUDA device cuda:7: this machine has 1 (cuda:0)"; "... has 3 (cuda:0 to cuda:2)".
std::string missing_device_message(int ordinal, int count);
// The count LUDA_CPU_DEVICES's text gives (whole, 1 to kMaxCpuDevices), else Error naming
// the variable and the fix.
int parse_cpu_device_count(std::string_view text);
// "no cpu device cpu:5: LUDA_CPU_DEVICES gives 2 (cpu:0, cpu:1); start the process with
// LUDA_CPU_DEVICES=6"; `set`: whether the variable was set (count is 1 when not).
std::string missing_cpu_device_message(int index, int count, bool set);
}  // namespace detail

}  // namespace luda

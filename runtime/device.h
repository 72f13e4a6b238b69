// Devices: `cpu` and `cuda:N`; the properties and primary context of each CUDA device;
// the current device of each thread.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace luda {

struct Device {
  enum class Kind : unsigned char { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  int index = 0;  // CUDA ordinal; 0 for cpu

  static Device cpu() { return {Kind::Cpu, 0}; }
  static Device cuda(int ordinal) { return {Kind::Cuda, ordinal}; }
  bool is_cpu() const { return kind == Kind::Cpu; }
  bool is_cuda() const { return kind == Kind::Cuda; }
  std::string str() const;  // "cpu", "cuda:0"
  // "cpu", "cuda" (= cuda:0), "cuda:N"; Error on anything else. Does not check that the
  // device exists: use_device / cuda_properties do.
  static Device parse(std::string_view text);
  bool operator==(const Device&) const = default;
};

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

// Number of CUDA devices; 0 when the driver is missing or has none. Never throws.
int cuda_device_count();
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

// The device new arrays and kernels use on this thread: set by use_device, else
// default_device().
Device current_device();
void use_device(Device d);  // checks that a CUDA device exists
// $LUDA_DEVICE when set ("cpu", "cuda", "cuda:N"; read once per process; an Error naming
// the variable when it is malformed or names a missing CUDA device), else cuda:0 when a
// CUDA device is usable, else cpu.
Device default_device();
// Called once per process, with the reason no CUDA device is usable, the first time
// default_device() falls back to cpu (never when $LUDA_DEVICE chose cpu). The Lua module
// installs one that writes a note on stderr; a C++ host may install its own, or none
// (nullptr uninstalls).
using CpuFallbackNotice = void (*)(const std::string& reason);
void set_cpu_fallback_notice(CpuFallbackNotice notice);

// Waits for all work on the device (cuCtxSynchronize); no-op for cpu.
void synchronize(Device d);

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

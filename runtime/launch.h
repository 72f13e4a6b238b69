// Launch configuration: checked before the driver sees it, with the fix in the error.
#pragma once

#include <cuda.h>

#include <optional>
#include <string>
#include <string_view>

#include "runtime/device.h"
#include "runtime/driver.h"

namespace luda {

struct DeviceProperties;

struct LaunchConfig {
  Dim3 grid, block;
  unsigned shared_mem = 0;  // dynamic shared memory, bytes
  CUstream stream = nullptr;
  // The device of the stream given; none for the default stream of the launch's device.
  // A CUDA launch refuses a stream of another device (validate); a cpu launch runs when
  // it is submitted, so it is in order on any stream.
  std::optional<Device> stream_device = std::nullopt;

  // Error when a dimension is < 1 or past the device's limits, or block threads > max:
  // "grid dimension x is 0: each grid and block dimension must be at least 1",
  // "block of (2048,) has 2048 threads; cuda:0 (NVIDIA H100 80GB HBM3) allows at most 1024
  // per block", "grid dimension y is 70000; cuda:0 (...) allows at most 65535 in y",
  // "dynamic shared memory of N bytes (...) is more than cuda:0 (...) allows per block (M bytes)",
  // "the stream is on cpu but the launch is on cuda:0; use a stream of cuda:0".
  void validate(const DeviceProperties& props) const;
};

// Dynamic shared memory past this needs the kernel's opt-in (all architectures since sm_70).
inline constexpr unsigned kDefaultSharedLimit = 48 * 1024;

// The launches that need more than cuLaunchKernel (launch's rare cases), and the error of
// one the driver refused.
void launch_opted_in(CUfunction f, const LaunchConfig& config, void** args, bool cooperative, std::string_view who);
[[noreturn]] void launch_failed(CUresult r, const LaunchConfig& config, bool cooperative, std::string_view who);

// cuLaunchKernel with the config; the caller has made the device's context current and
// validated the config. Dynamic shared memory past 48 KiB opts the function in first
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). CudaError names grid and block.
// `cooperative`: cuLaunchCooperativeKernel, for a kernel that calls the grid barrier
// (cooperative_groups::this_grid().sync()); every block of the grid must then be resident
// at once, else CudaError CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.
// `who` ("kernel 'add'"), when given, leads the failure's details. Inline: the hot path
// of every dispatch, which formats nothing unless the driver refuses.
inline void launch(CUfunction f, const LaunchConfig& config, void** args, bool cooperative = false,
                   std::string_view who = {}) {
  if (cooperative || config.shared_mem > kDefaultSharedLimit) [[unlikely]] {
    launch_opted_in(f, config, args, cooperative, who);
    return;
  }
  CUresult r = driver::api().cuLaunchKernel(f, static_cast<unsigned>(config.grid.x),
                                            static_cast<unsigned>(config.grid.y), static_cast<unsigned>(config.grid.z),
                                            static_cast<unsigned>(config.block.x),
                                            static_cast<unsigned>(config.block.y),
                                            static_cast<unsigned>(config.block.z), config.shared_mem, config.stream,
                                            args, nullptr);
  if (r != CUDA_SUCCESS) [[unlikely]]
    launch_failed(r, config, false, who);
}

// The most blocks of `block` threads (with `shared_mem` bytes of dynamic shared memory)
// of `f` that the device holds at once: blocks a multiprocessor holds
// (cuOccupancyMaxActiveBlocksPerMultiprocessor) times its multiprocessors. The caller has
// made the device's context current. Numba's max_cooperative_grid_blocks.
long long max_cooperative_blocks(CUfunction f, const Dim3& block, unsigned shared_mem, const DeviceProperties& props);

// The error for a cooperative grid past that limit:
// "a cooperative grid of 500 blocks of 1024 threads is more than cuda:0 (NVIDIA H100 80GB HBM3)
// holds at once: at most 264 blocks of 1024 threads (2 a multiprocessor x 132 multiprocessors,
// for this kernel's registers and shared memory); launch at most
// k:max_cooperative_grid_blocks(1024) blocks and loop over the rest of the work (a grid-stride loop)".
[[noreturn]] void cooperative_grid_too_large(CUfunction f, const LaunchConfig& config, const DeviceProperties& props);

}  // namespace luda

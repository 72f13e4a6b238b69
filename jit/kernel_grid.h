// The launch configuration of luda's own raw kernels whose blocks stride over their work
// (the scans and sorts of jit/device_scan.h and jit/device_sort.h).
#pragma once

#include <algorithm>

#include "runtime/cpu_executor.h"
#include "runtime/launch.h"
#include "runtime/stream.h"

namespace luda::jit {

// `blocks` blocks of `threads` wanted, on `device`, ordered on `stream` (null: the
// device's default stream): on a GPU at most 65536 blocks, the kernels' loops covering the
// rest; on the cpu device one block per executor thread, since a block's threads there run
// as fibers, which cost more to start than the work of one GPU block.
inline LaunchConfig grid_config(Device device, long long blocks, int threads, const Stream* stream) {
  const long long most = device.is_cpu() ? static_cast<long long>(cpu_thread_count()) : 1LL << 16;
  LaunchConfig config;
  config.block = Dim3{threads, 1, 1};
  config.grid = Dim3{std::max(1LL, std::min(blocks, most)), 1, 1};
  if (stream) {
    config.stream = stream->handle();
    config.stream_device = stream->device();
  }
  return config;
}

}  // namespace luda::jit

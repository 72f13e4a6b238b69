// The launch configuration of luda's own raw kernels whose blocks stride over their work
// (the scans and sorts of ops/device/scan.h and ops/device/sort.h), and the modules that
// hold them.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "jit/raw/raw_module.h"

#include "runtime/cpu_executor.h"
#include "runtime/launch.h"
#include "runtime/stream.h"

namespace luda::ops::device {

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

// One raw module per dtype, compiled at first use from `source(t)` and kept for the
// process, and its kernels, each named "<name>_<dtype>".
class DTypeModules {
 public:
  using Source = std::string (*)(DType);
  explicit DTypeModules(Source source) : source_(source) {}

  std::shared_ptr<jit::RawModule> module(DType t) {
    std::lock_guard lock(mutex_);
    return module_locked(t);
  }
  jit::RawKernel& function(DType t, std::string_view name) {
    const std::string entry = fmt::format("{}_{}", name, dtype_name(t));
    std::lock_guard lock(mutex_);
    auto& k = kernels_[entry];
    if (!k) k = module_locked(t)->get_function(entry);
    return *k;
  }

 private:
  std::shared_ptr<jit::RawModule> module_locked(DType t) {
    auto& m = modules_[t];
    if (!m) m = jit::RawModule::create(source_(t));
    return m;
  }
  Source source_;
  std::mutex mutex_;
  std::map<DType, std::shared_ptr<jit::RawModule>> modules_;
  std::map<std::string, std::shared_ptr<jit::RawKernel>> kernels_;
};

}  // namespace luda::ops::device

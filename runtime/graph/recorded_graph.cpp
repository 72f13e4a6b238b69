#include "runtime/graph/recorded_graph.h"

namespace luda {

void RecordedGraph::run(const Remap& remap, CUstream stream) {
  std::lock_guard lock(mutex_);
  if (device.is_cpu()) run_cpu(remap);
  else run_cuda(remap, stream);
}

std::shared_ptr<Buffer> allocate_for_graph(Device graph_device, Device device, std::size_t bytes,
                                           const Stream* stream) {
  if (device.is_cpu() && !graph_device.is_cpu() && bytes) return Buffer::allocate_pinned(bytes);
  return Buffer::allocate(device, bytes, stream);
}

}  // namespace luda

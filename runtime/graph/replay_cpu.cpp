// A recorded graph's replay on the cpu device (runtime/graph/recorded_graph.h): each node
// on the executor's threads once the nodes it waits for are done.
#include <atomic>
#include <cstring>

#include "runtime/graph/recorded_graph.h"

namespace luda {
namespace {

// One node's work on the cpu device, its addresses moved by `remap`. Returns whether a
// kernel's arguments moved.
bool run_cpu_node(const NodeWork& work, const Remap& remap) {
  if (const auto* k = std::get_if<KernelWork>(&work)) {
    std::vector<std::uint64_t> words = node_addresses(work, remap, nullptr);
    const bool moved = words != k->words;
    std::vector<void*> args(k->slots.size());
    for (std::size_t i = 0; i < args.size(); ++i) args[i] = &words[k->slots[i]];
    cpu_launch(k->cpu, k->config, args.data(), k->who);
    return moved;
  }
  if (const auto* c = std::get_if<CopyWork>(&work)) {
    void* dst = remap(reinterpret_cast<const void*>(c->dst));
    const void* src = c->source ? static_cast<const void*>(c->source->data())
                                : remap(reinterpret_cast<const void*>(c->src));
    std::memmove(dst, src, c->n);
    return false;
  }
  if (const auto* f = std::get_if<FillWork>(&work)) {
    std::memset(remap(reinterpret_cast<const void*>(f->dst)), 0, f->n);
    return false;
  }
  std::get<HostWork>(work).run(remap);
  return false;
}

}  // namespace

void RecordedGraph::run_cpu(const Remap& remap) {
  const std::size_t n = work.size();
  std::atomic<std::uint64_t> moved{0};
  std::vector<std::vector<std::size_t>> after(n);
  for (std::size_t i = 0; i < n; ++i) after[i] = graph.predecessors(i);
  cpu_run_graph(after, [&](std::size_t i) { moved += run_cpu_node(work[i], remap); });
  ++replays;
  updates += moved;
}

}  // namespace luda

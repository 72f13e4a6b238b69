#include "runtime/graph/recording.h"

#include <utility>

#include <fmt/format.h>

#include "runtime/error.h"

namespace luda {

thread_local GraphRecording* GraphRecording::t_active = nullptr;

GraphRecording::GraphRecording(Device device, std::function<std::string()> where)
    : device_(device), where_(std::move(where)), graph_(std::make_shared<RecordedGraph>()), outer_(t_active) {
  graph_->device = device;
  t_active = this;
}

GraphRecording::~GraphRecording() { t_active = outer_; }

void GraphRecording::refuse(std::string_view what) {
  throw Error(fmt::format("{} needs a result on the host, but a graph is being recorded and its work has not run; "
                          "return the arrays from the recorded function and read them after the graph runs",
                          what));
}

void GraphRecording::refuse_nested(std::string_view who) {
  fail("{}: a graph is being recorded on this thread already; a recorded function cannot record or replay another "
       "graph (call that graph's function directly)",
       who);
}

std::size_t GraphRecording::add_buffer(const Buffer* buffer, const std::shared_ptr<Buffer>& owner) {
  auto [it, added] = index_.try_emplace(buffer, graph_->buffers.size());
  if (added) {
    RecordedBuffer b;
    b.buffer = buffer;
    b.owner = owner;
    b.name = fmt::format("array {}", graph_->buffers.size() + 1);
    graph_->buffers.push_back(std::move(b));
  } else if (owner && !graph_->buffers[it->second].owner) {
    graph_->buffers[it->second].owner = owner;
  }
  return it->second;
}

int GraphRecording::buffer_index(const Buffer* buffer) const {
  auto it = index_.find(buffer);
  return it == index_.end() ? -1 : static_cast<int>(it->second);
}

void GraphRecording::argument(int k, const std::shared_ptr<Buffer>& buffer) {
  RecordedBuffer& b = graph_->buffers[add_buffer(buffer.get(), buffer)];
  if (b.argument < 0) {
    b.argument = k;
    b.name = fmt::format("argument {}", k + 1);
  }
}

void GraphRecording::made(const std::shared_ptr<Buffer>& buffer) {
  const std::size_t i = add_buffer(buffer.get(), buffer);
  RecordedBuffer& b = graph_->buffers[i];
  b.made = true;
  b.name = fmt::format("new array {}", i + 1);
}

Access GraphRecording::of(const NDArray& a, bool write) {
  const ByteExtent e = byte_extent(a);
  if (e.lo >= e.hi || !a.buffer()) return Access{};
  return Access{e.lo, e.hi, write, add_buffer(a.buffer().get(), a.buffer())};
}

Access GraphRecording::of(const Buffer& buffer, std::uintptr_t lo, std::uintptr_t hi, bool write) {
  if (lo >= hi) return Access{};
  return Access{lo, hi, write, add_buffer(&buffer, nullptr)};
}

Access GraphRecording::of(const std::shared_ptr<Buffer>& buffer, std::uintptr_t lo, std::uintptr_t hi, bool write) {
  if (lo >= hi) return Access{};
  return Access{lo, hi, write, add_buffer(buffer.get(), buffer)};
}

void GraphRecording::add(NodeKind kind, std::string name, NodeWork work, std::vector<Access> accesses) {
  GraphNode node;
  node.kind = kind;
  node.name = std::move(name);
  node.where = where_ ? where_() : std::string();
  node.accesses = std::move(accesses);
  graph_->graph.add(std::move(node));
  graph_->work.push_back(std::move(work));
}

void GraphRecording::kernel(KernelWork w) {
  std::string name = w.who;
  std::vector<Access> accesses = std::move(pending_);
  pending_.clear();
  add(NodeKind::Kernel, std::move(name), std::move(w), std::move(accesses));
}

void GraphRecording::copy(CopyWork w, std::vector<Access> accesses) {
  const Device from = w.source ? Device::cpu() : w.src_device;
  // A graph of a CUDA device copies within it, and between it and host memory; a graph of
  // the cpu, within host memory.
  auto reaches = [&](Device d) { return d == device_ || d.is_cpu(); };
  if (!reaches(w.dst_device) || !reaches(from))
    fail("a copy from {} to {} cannot be recorded in a graph whose work is on {}; a graph's copies stay on its device "
         "and the host: copy between devices before or after the graph runs",
         from.str(), w.dst_device.str(), device_.str());
  std::string name = from == w.dst_device || w.source
                         ? fmt::format("copy of {} bytes", w.n)
                         : fmt::format("copy of {} bytes from {} to {}", w.n, from.str(), w.dst_device.str());
  add(NodeKind::Copy, std::move(name), std::move(w), std::move(accesses));
}

void GraphRecording::fill(FillWork w, std::vector<Access> accesses) {
  if (w.device != device_)
    fail("an array on {} cannot be filled in a graph whose work is on {}; a graph's work is on one device",
         w.device.str(), device_.str());
  std::string name = fmt::format("zero {} bytes", w.n);
  add(NodeKind::Fill, std::move(name), std::move(w), std::move(accesses));
}

void GraphRecording::host(std::string name, HostWork w, std::vector<Access> accesses) {
  add(NodeKind::Host, std::move(name), std::move(w), std::move(accesses));
}

std::shared_ptr<RecordedGraph> GraphRecording::finish() {
  std::vector<std::string> names;
  for (const RecordedBuffer& b : graph_->buffers) names.push_back(b.name);
  graph_->graph.set_buffer_names(std::move(names));
  pending_.clear();
  return std::exchange(graph_, std::make_shared<RecordedGraph>());
}

}  // namespace luda

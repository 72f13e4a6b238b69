#include "runtime/graph.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <optional>

#include <fmt/format.h>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/memory.h"

namespace luda {

const char* hazard_name(Hazard h) {
  switch (h) {
    case Hazard::ReadAfterWrite: return "read after write";
    case Hazard::WriteAfterRead: return "write after read";
    case Hazard::WriteAfterWrite: return "write after write";
  }
  return "?";
}

const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Kernel: return "kernel";
    case NodeKind::Copy: return "copy";
    case NodeKind::Fill: return "fill";
    case NodeKind::Alloc: return "alloc";
    case NodeKind::Free: return "free";
    case NodeKind::Host: return "host";
  }
  return "?";
}

namespace {

struct Found {
  Hazard hazard;
  std::size_t buffer;
};

// The first hazard of `later` on `earlier`: an access of each on common bytes, one a write.
std::optional<Found> hazard_between(const GraphNode& earlier, const GraphNode& later) {
  for (const Access& a : later.accesses) {
    if (a.begin >= a.end) continue;
    for (const Access& b : earlier.accesses) {
      if (b.begin >= b.end || !(a.write || b.write)) continue;
      if (a.begin < b.end && b.begin < a.end) {
        Hazard h = !a.write ? Hazard::ReadAfterWrite : b.write ? Hazard::WriteAfterWrite : Hazard::WriteAfterRead;
        return Found{h, a.buffer};
      }
    }
  }
  return std::nullopt;
}

// Graphviz's quoted-string escapes.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

}  // namespace

std::size_t TaskGraph::add(GraphNode node) {
  const std::size_t i = nodes_.size();
  std::vector<bool> reach(i + 1, false);
  std::vector<std::size_t> preds;
  std::size_t level = 1;
  // Latest first: a node reached through a later predecessor needs no edge of its own.
  for (std::size_t j = i; j-- > 0;) {
    if (reach[j]) continue;
    std::optional<Found> h = hazard_between(nodes_[j], node);
    if (!h) continue;
    edges_.push_back(GraphEdge{j, i, h->hazard, h->buffer});
    preds.push_back(j);
    reach[j] = true;
    const std::vector<bool>& up = ancestors_[j];
    for (std::size_t k = 0; k < up.size(); ++k)
      if (up[k]) reach[k] = true;
    level = std::max(level, level_[j] + 1);
  }
  std::sort(preds.begin(), preds.end());
  nodes_.push_back(std::move(node));
  preds_.push_back(std::move(preds));
  ancestors_.push_back(std::move(reach));
  level_.push_back(level);
  return i;
}

std::string TaskGraph::buffer_name(std::size_t buffer) const {
  if (buffer < buffer_names_.size() && !buffer_names_[buffer].empty()) return buffer_names_[buffer];
  return fmt::format("buffer {}", buffer);
}

bool TaskGraph::ordered(std::size_t from, std::size_t to) const {
  return to < ancestors_.size() && from < ancestors_[to].size() && ancestors_[to][from];
}

std::size_t TaskGraph::depth() const {
  std::size_t d = 0;
  for (std::size_t l : level_) d = std::max(d, l);
  return d;
}

std::string TaskGraph::dot(const std::string& title) const {
  std::string out = fmt::format("digraph {} {{\n  node [shape=box];\n", quoted(title));
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const GraphNode& n = nodes_[i];
    std::string label = n.where.empty() ? n.name : n.name + "\n" + n.where;
    out += fmt::format("  n{} [label={}];\n", i, quoted(label));
  }
  for (const GraphEdge& e : edges_)
    out += fmt::format("  n{} -> n{} [label={}];\n", e.from, e.to,
                       quoted(fmt::format("{} ({})", buffer_name(e.buffer), hazard_name(e.hazard))));
  return out + "}\n";
}

// ---- replay --------------------------------------------------------------------------

void Remap::add(std::uintptr_t lo, std::uintptr_t hi, std::intptr_t delta) {
  if (lo >= hi) return;
  // Ranges that overlap or touch this one become one (views of one buffer move together).
  std::vector<Range> kept;
  for (const Range& r : ranges_) {
    if (r.hi < lo || hi < r.lo) {
      kept.push_back(r);
      continue;
    }
    if (r.delta != delta && r.hi != lo && hi != r.lo)
      throw InternalError("a graph's replay moves overlapping memory by two distances");
    if (r.delta != delta) {
      kept.push_back(r);
      continue;
    }
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
  }
  auto at = std::lower_bound(kept.begin(), kept.end(), lo, [](const Range& r, std::uintptr_t x) { return r.lo < x; });
  kept.insert(at, Range{lo, hi, delta});
  ranges_ = std::move(kept);
}

std::uintptr_t Remap::operator()(std::uintptr_t address) const {
  // The last range that starts at or below the address.
  auto at = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](std::uintptr_t x, const Range& r) { return x < r.lo; });
  if (at == ranges_.begin()) return address;
  --at;
  if (address >= at->hi) return address;
  return address + static_cast<std::uintptr_t>(at->delta);
}

namespace {

// A node's addresses moved by `move` (a Remap, or one with graph memory besides), in the
// form RecordedGraph::Cuda::now keeps: a kernel's argument words, a copy's destination and
// source (`pinned`'s bytes for bytes that came from the host), a fill's destination.
template <class Move>
std::vector<std::uint64_t> addresses(const NodeWork& work, const Move& move, const Buffer* pinned) {
  if (const auto* k = std::get_if<KernelWork>(&work)) {
    std::vector<std::uint64_t> words = k->words;
    for (std::size_t w : k->pointers) words[w] = move(static_cast<std::uintptr_t>(words[w]));
    return words;
  }
  if (const auto* c = std::get_if<CopyWork>(&work))
    return {move(c->dst), pinned ? reinterpret_cast<std::uintptr_t>(pinned->data()) : move(c->src)};
  if (const auto* f = std::get_if<FillWork>(&work)) return {move(f->dst)};
  return {};
}

// One node's work on the cpu device, its addresses moved by `remap`. Returns whether a
// kernel's arguments moved.
bool run_cpu_node(const NodeWork& work, const Remap& remap) {
  if (const auto* k = std::get_if<KernelWork>(&work)) {
    std::vector<std::uint64_t> words = addresses(work, remap, nullptr);
    const bool moved = words != k->words;
    std::vector<void*> args(k->slots.size());
    for (std::size_t i = 0; i < args.size(); ++i) args[i] = &words[k->slots[i]];
    cpu_launch(k->cpu, k->config, args.data(), k->who);
    return moved;
  }
  if (const auto* c = std::get_if<CopyWork>(&work)) {
    void* dst = remap(reinterpret_cast<const void*>(c->dst));
    const void* src = c->source ? static_cast<const void*>(c->source->data()) : remap(reinterpret_cast<const void*>(c->src));
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

// ---- the driver's graph ---------------------------------------------------------------

struct RecordedGraph::Cuda {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::vector<CUgraphNode> nodes;
  // Each node's addresses as the instantiated graph has them: a kernel's argument words,
  // a copy's destination and source, a fill's destination.
  std::vector<std::vector<std::uint64_t>> now;
  std::vector<std::shared_ptr<Buffer>> pinned;  // host bytes of copy nodes, page-locked
  // The temporaries' recorded addresses moved to their graph memory (mem-alloc nodes'
  // addresses, which stay the same from launch to launch).
  Remap memory;
  CUcontext context = nullptr;

  ~Cuda() {
    if (!driver::available()) return;
    const driver::Api& d = driver::api();
    if (exec) d.cuGraphExecDestroy(exec);
    if (graph) d.cuGraphDestroy(graph);
  }
};

namespace {

// A kernel node's parameters over `words` (which hold the arguments; `args` is filled
// with the pointers to them).
CUDA_KERNEL_NODE_PARAMS kernel_params(const KernelWork& k, std::vector<std::uint64_t>& words, std::vector<void*>& args) {
  args.resize(k.slots.size());
  for (std::size_t i = 0; i < args.size(); ++i) args[i] = &words[k.slots[i]];
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = k.function;
  p.gridDimX = static_cast<unsigned>(k.config.grid.x);
  p.gridDimY = static_cast<unsigned>(k.config.grid.y);
  p.gridDimZ = static_cast<unsigned>(k.config.grid.z);
  p.blockDimX = static_cast<unsigned>(k.config.block.x);
  p.blockDimY = static_cast<unsigned>(k.config.block.y);
  p.blockDimZ = static_cast<unsigned>(k.config.block.z);
  p.sharedMemBytes = k.config.shared_mem;
  p.kernelParams = args.data();
  return p;
}

// A 1-D copy of n bytes: device memory by its unified address, host memory (an
// argument's, or page-locked memory of the graph) as host memory.
CUDA_MEMCPY3D copy_params(const CopyWork& w, std::uintptr_t dst, std::uintptr_t src) {
  CUDA_MEMCPY3D c{};
  if (w.src_device.is_cpu() && !w.source) {
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = reinterpret_cast<const void*>(src);
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = static_cast<CUdeviceptr>(src);
  }
  if (w.dst_device.is_cpu()) {
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = reinterpret_cast<void*>(dst);
  } else {
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = static_cast<CUdeviceptr>(dst);
  }
  c.WidthInBytes = w.n;
  c.Height = 1;
  c.Depth = 1;
  return c;
}

CUDA_MEMSET_NODE_PARAMS zero_params(std::uintptr_t dst, std::size_t n) {
  CUDA_MEMSET_NODE_PARAMS m{};
  m.dst = static_cast<CUdeviceptr>(dst);
  m.value = 0;
  m.elementSize = 1;
  m.width = n;
  m.height = 1;
  return m;
}

// A temporary of a graph on a CUDA device: its recorded bytes and the nodes that use them.
struct Temporary {
  std::size_t buffer = 0;  // in RecordedGraph::buffers
  std::uintptr_t lo = 0, hi = 0;
  std::vector<std::size_t> users;  // in node order
};

// Whether node `work` touches [lo, hi): an access of the buffer, or an address among its
// parameters (a check of the accesses: graph memory is gone after the free node).
bool uses(const GraphNode& node, const NodeWork& work, std::size_t buffer, std::uintptr_t lo, std::uintptr_t hi) {
  for (const Access& a : node.accesses)
    if (a.buffer == buffer && a.begin < a.end) return true;
  const Remap none;
  for (std::uint64_t x : addresses(work, none, nullptr))
    if (x >= lo && x < hi) return true;
  return false;
}

// The users of a temporary that no other user precedes (they wait for its alloc node),
// or that precede no other user (its free node waits for them).
std::vector<std::size_t> first_users(const TaskGraph& g, const std::vector<std::size_t>& users) {
  std::vector<std::size_t> out;
  for (std::size_t u : users)
    if (std::none_of(users.begin(), users.end(), [&](std::size_t v) { return v != u && g.ordered(v, u); }))
      out.push_back(u);
  return out;
}
std::vector<std::size_t> last_users(const TaskGraph& g, const std::vector<std::size_t>& users) {
  std::vector<std::size_t> out;
  for (std::size_t u : users)
    if (std::none_of(users.begin(), users.end(), [&](std::size_t v) { return v != u && g.ordered(u, v); }))
      out.push_back(u);
  return out;
}

}  // namespace

void RecordedGraph::run_cuda(const Remap& remap, CUstream stream) {
  const driver::Api& d = driver::api();
  ContextScope scope(device.index);
  const std::size_t n = work.size();
  std::vector<std::uint64_t> words;
  std::vector<void*> args;
  if (!cuda_) {
    auto c = std::make_shared<Cuda>();
    driver::check(d.cuCtxGetCurrent(&c->context), "cuCtxGetCurrent");
    driver::check(d.cuGraphCreate(&c->graph, 0), "cuGraphCreate");
    c->nodes.resize(n);
    c->now.resize(n);
    c->pinned.resize(n);
    // The temporaries, each a mem-alloc node that its first users wait for.
    std::vector<Temporary> temps;
    std::vector<std::vector<CUgraphNode>> waits_for(n);  // alloc nodes each node waits for
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      const RecordedBuffer& rb = buffers[b];
      if (!rb.made || rb.result || !rb.owner || rb.buffer->device() != device || rb.buffer->size() == 0) continue;
      Temporary t;
      t.buffer = b;
      t.lo = reinterpret_cast<std::uintptr_t>(rb.buffer->data());
      t.hi = t.lo + rb.buffer->size();
      for (std::size_t i = 0; i < n; ++i)
        if (uses(graph.nodes()[i], work[i], b, t.lo, t.hi)) t.users.push_back(i);
      if (t.users.empty()) continue;
      CUDA_MEM_ALLOC_NODE_PARAMS p{};
      p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      p.poolProps.location.id = device.index;
      p.bytesize = rb.buffer->size();
      CUgraphNode node;
      driver::check(d.cuGraphAddMemAllocNode(&node, c->graph, nullptr, 0, &p), "cuGraphAddMemAllocNode",
                    fmt::format("{} bytes of graph memory for {}", p.bytesize, rb.name));
      c->memory.add(t.lo, t.hi, static_cast<std::intptr_t>(p.dptr - t.lo));
      for (std::size_t u : first_users(graph, t.users)) waits_for[u].push_back(node);
      temps.push_back(std::move(t));
    }
    const Remap& memory = c->memory;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<CUgraphNode> deps = waits_for[i];
      for (std::size_t p : graph.predecessors(i)) deps.push_back(c->nodes[p]);
      const NodeWork& w = work[i];
      if (const auto* cw = std::get_if<CopyWork>(&w); cw && cw->source) {
        c->pinned[i] = Buffer::allocate_pinned(cw->n);
        std::memcpy(c->pinned[i]->data(), cw->source->data(), cw->n);
      }
      c->now[i] = addresses(w, memory, c->pinned[i].get());
      const std::vector<std::uint64_t>& a = c->now[i];
      if (const auto* k = std::get_if<KernelWork>(&w)) {
        if (k->config.shared_mem > kDefaultSharedLimit)
          driver::check(d.cuFuncSetAttribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             static_cast<int>(k->config.shared_mem)),
                        "cuFuncSetAttribute", k->who);
        words = a;
        CUDA_KERNEL_NODE_PARAMS p = kernel_params(*k, words, args);
        driver::check(d.cuGraphAddKernelNode(&c->nodes[i], c->graph, deps.data(), deps.size(), &p),
                      "cuGraphAddKernelNode", k->who);
        if (k->cooperative) {
          CUkernelNodeAttrValue v{};
          v.cooperative = 1;
          driver::check(d.cuGraphKernelNodeSetAttribute(c->nodes[i], CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v),
                        "cuGraphKernelNodeSetAttribute", k->who);
        }
      } else if (const auto* cw = std::get_if<CopyWork>(&w)) {
        CUDA_MEMCPY3D p = copy_params(*cw, a[0], a[1]);
        driver::check(d.cuGraphAddMemcpyNode(&c->nodes[i], c->graph, deps.data(), deps.size(), &p, c->context),
                      "cuGraphAddMemcpyNode");
      } else if (const auto* f = std::get_if<FillWork>(&w)) {
        CUDA_MEMSET_NODE_PARAMS p = zero_params(a[0], f->n);
        driver::check(d.cuGraphAddMemsetNode(&c->nodes[i], c->graph, deps.data(), deps.size(), &p, c->context),
                      "cuGraphAddMemsetNode");
      } else {
        throw InternalError("a host node in a graph of a CUDA device");
      }
    }
    // Each temporary freed once its last users are done.
    for (const Temporary& t : temps) {
      std::vector<CUgraphNode> deps;
      for (std::size_t u : last_users(graph, t.users)) deps.push_back(c->nodes[u]);
      CUgraphNode node;
      driver::check(d.cuGraphAddMemFreeNode(&node, c->graph, deps.data(), deps.size(),
                                            static_cast<CUdeviceptr>(memory(t.lo))),
                    "cuGraphAddMemFreeNode");
    }
    driver::check(d.cuGraphInstantiate(&c->exec, c->graph, 0), "cuGraphInstantiate");
    allocs = temps.size();
    // The temporaries' recording memory is not used again: their addresses stay only as
    // the keys of `memory`, which no other buffer of the graph shares while it keeps its own.
    for (const Temporary& t : temps) {
      buffers[t.buffer].owner.reset();
      buffers[t.buffer].buffer = nullptr;
    }
    cuda_ = std::move(c);
  }
  Cuda& c = *cuda_;
  // A temporary's address moves to its graph memory, an argument's where `remap` says.
  auto move = [&](std::uintptr_t x) {
    const std::uintptr_t m = c.memory(x);
    return m != x ? m : remap(x);
  };
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint64_t> a = addresses(work[i], move, c.pinned[i].get());
    if (a == c.now[i]) continue;
    const NodeWork& w = work[i];
    if (const auto* k = std::get_if<KernelWork>(&w)) {
      words = a;
      CUDA_KERNEL_NODE_PARAMS p = kernel_params(*k, words, args);
      driver::check(d.cuGraphExecKernelNodeSetParams(c.exec, c.nodes[i], &p), "cuGraphExecKernelNodeSetParams", k->who);
      ++updates;
    } else if (const auto* cw = std::get_if<CopyWork>(&w)) {
      CUDA_MEMCPY3D p = copy_params(*cw, a[0], a[1]);
      driver::check(d.cuGraphExecMemcpyNodeSetParams(c.exec, c.nodes[i], &p, c.context),
                    "cuGraphExecMemcpyNodeSetParams");
    } else if (const auto* f = std::get_if<FillWork>(&w)) {
      CUDA_MEMSET_NODE_PARAMS p = zero_params(a[0], f->n);
      driver::check(d.cuGraphExecMemsetNodeSetParams(c.exec, c.nodes[i], &p, c.context),
                    "cuGraphExecMemsetNodeSetParams");
    }
    c.now[i] = std::move(a);
  }
  driver::check(d.cuGraphLaunch(c.exec, stream), "cuGraphLaunch");
  ++replays;
}

void RecordedGraph::run(const Remap& remap, CUstream stream) {
  std::lock_guard lock(mutex_);
  if (!device.is_cpu()) return run_cuda(remap, stream);
  const std::size_t n = work.size();
  std::atomic<std::uint64_t> moved{0};
  // Each node on the cpu device's threads once the nodes it waits for are done.
  std::vector<std::vector<std::size_t>> after(n);
  for (std::size_t i = 0; i < n; ++i) after[i] = graph.predecessors(i);
  cpu_run_graph(after, [&](std::size_t i) { moved += run_cpu_node(work[i], remap); });
  ++replays;
  updates += moved;
}

std::shared_ptr<Buffer> allocate_for_graph(Device graph_device, Device device, std::size_t bytes,
                                           const Stream* stream) {
  if (device.is_cpu() && !graph_device.is_cpu() && bytes) return Buffer::allocate_pinned(bytes);
  return Buffer::allocate(device, bytes, stream);
}

// ---- recording -------------------------------------------------------------------------

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

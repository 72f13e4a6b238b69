// A recorded graph's replay on a CUDA device (runtime/graph/recorded_graph.h): one driver
// graph of kernel, memcpy and memset nodes with the task graph's edges, and a mem-alloc
// and a mem-free node around the users of each temporary; instantiated at the first run,
// its nodes given new parameters where a replay moves their addresses.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/graph/recorded_graph.h"

namespace luda {

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
CUDA_KERNEL_NODE_PARAMS kernel_params(const KernelWork& k, std::vector<std::uint64_t>& words,
                                      std::vector<void*>& args) {
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
  for (std::uint64_t x : node_addresses(work, none, nullptr))
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
      c->now[i] = node_addresses(w, memory, c->pinned[i].get());
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
    std::vector<std::uint64_t> a = node_addresses(work[i], move, c.pinned[i].get());
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

}  // namespace luda

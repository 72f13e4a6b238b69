// A task graph of recorded work (docs/architecture.md, Graphs): nodes that each read and
// write byte ranges of memory, joined by an edge only where two of them touch the same
// bytes and at least one writes (a read after a write, a write after a read, a write after
// a write). Independent work is left on independent branches, so that replaying the graph
// runs it side by side.
//
// TaskGraph is the graph's shape alone: its nodes, their accesses and the hazard edges,
// and its Graphviz text. GraphRecording turns what the layers issue while it is active on
// a thread (launches, copies, fills, allocations) into nodes instead of running them;
// RecordedGraph runs the nodes again, with arguments moved to new memory.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "runtime/cpu_executor.h"
#include "runtime/launch.h"
#include "runtime/ndarray.h"

namespace luda {

// Bytes [begin, end) that a node reads or writes, in buffer `buffer` of the graph's
// buffer table (names for edges and Graphviz labels). Ranges are compared by address: a
// recording keeps every buffer it touched alive until it ends, so two buffers of one
// graph never share an address. An empty range touches nothing.
struct Access {
  std::uintptr_t begin = 0, end = 0;
  bool write = false;
  std::size_t buffer = 0;
};

enum class Hazard : unsigned char { ReadAfterWrite, WriteAfterRead, WriteAfterWrite };
const char* hazard_name(Hazard h);  // "read after write", ...

// Host: work the host does on cpu memory (a conversion between dtypes, a bounds check).
enum class NodeKind : unsigned char { Kernel, Copy, Fill, Alloc, Free, Host };
const char* node_kind_name(NodeKind k);  // "kernel", "copy", "fill", "alloc", "free", "host"

struct GraphNode {
  NodeKind kind = NodeKind::Kernel;
  std::string name;   // "kernel 'add'", "copy of 4096 bytes", ...
  std::string where;  // the Lua line that issued it ("sobel.lua:12"), or empty
  std::vector<Access> accesses;
};

// An edge from node `from` to node `to` (from < to): `to` waits for `from`, because of
// `hazard` on buffer `buffer`.
struct GraphEdge {
  std::size_t from = 0, to = 0;
  Hazard hazard = Hazard::ReadAfterWrite;
  std::size_t buffer = 0;
};

class TaskGraph {
 public:
  // Adds a node after every node so far, and the edges it needs: one from each earlier
  // node it has a hazard with, except where that node is already an ancestor through
  // another edge (the edges are the transitive reduction of the hazards). Returns its index.
  std::size_t add(GraphNode node);

  // Names the buffers of the accesses, index by index ("a", "tmp 1", ...): Graphviz
  // labels and nodes() text. A buffer with no name is shown as "buffer N".
  void set_buffer_names(std::vector<std::string> names) { buffer_names_ = std::move(names); }
  std::string buffer_name(std::size_t buffer) const;

  const std::vector<GraphNode>& nodes() const { return nodes_; }
  const std::vector<GraphEdge>& edges() const { return edges_; }
  // The nodes node i waits for, in increasing order.
  const std::vector<std::size_t>& predecessors(std::size_t i) const { return preds_.at(i); }
  // Whether node `from` must finish before node `to` starts (a path of edges joins them).
  bool ordered(std::size_t from, std::size_t to) const;
  // The longest chain of nodes (1 for independent nodes; 0 for no nodes).
  std::size_t depth() const;

  // Graphviz text: a digraph with one box per node ("kernel 'add'\nsobel.lua:12") and
  // each edge labelled with its buffer and hazard.
  std::string dot(const std::string& title) const;

 private:
  std::vector<GraphNode> nodes_;
  std::vector<GraphEdge> edges_;
  std::vector<std::vector<std::size_t>> preds_;
  std::vector<std::vector<bool>> ancestors_;  // ancestors_[i][j]: node j reaches node i
  std::vector<std::size_t> level_;            // 1 + the deepest predecessor's level
  std::vector<std::string> buffer_names_;
};

// ---- recording and replay ----------------------------------------------------------

// Where a replay puts the memory of a recording: each range [lo, hi) of recorded
// addresses moves by `delta` bytes (an argument's view, a result's buffer). Addresses in
// no range stay as they are (the graph's own temporaries, arrays it closes over).
// Overlapping ranges (two arguments that view one buffer) must move by one distance, and
// become one range; InternalError otherwise.
class Remap {
 public:
  void add(std::uintptr_t lo, std::uintptr_t hi, std::intptr_t delta);
  std::uintptr_t operator()(std::uintptr_t address) const;
  void* operator()(const void* p) const {
    return reinterpret_cast<void*>((*this)(reinterpret_cast<std::uintptr_t>(p)));
  }
  bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    std::uintptr_t lo, hi;
    std::intptr_t delta;
  };
  std::vector<Range> ranges_;  // sorted by lo, disjoint
};

// A kernel launch as recorded: the loaded code, its configuration (no stream: a replay
// gives one) and its argument bytes, with the words that hold data pointers.
struct KernelWork {
  Device device;                   // where it runs
  CpuKernel cpu;                   // on the cpu device
  CUfunction function = nullptr;   // on a CUDA device
  bool cooperative = false;
  LaunchConfig config;
  std::vector<std::uint64_t> words;     // the arguments, each 8-byte aligned
  std::vector<std::size_t> slots;       // each argument's first word
  std::vector<std::size_t> pointers;    // the words that hold data pointers
  std::string who;                      // "kernel 'add'", for errors
};
// n bytes from src to dst; `source` keeps bytes that came from the host at recording
// (a table made into an array), src then pointing into it.
struct CopyWork {
  Device dst_device, src_device;
  std::uintptr_t dst = 0, src = 0;
  std::size_t n = 0;
  std::shared_ptr<const std::vector<std::byte>> source;
};
// n zero bytes at dst.
struct FillWork {
  Device device;
  std::uintptr_t dst = 0;
  std::size_t n = 0;
};
// Work the host does on cpu memory (a conversion between dtypes, a strided copy, a bounds
// check), given where the recorded addresses are now.
struct HostWork {
  std::function<void(const Remap&)> run;
};
using NodeWork = std::variant<KernelWork, CopyWork, FillWork, HostWork>;

// What a recording knows of a buffer it touched.
struct RecordedBuffer {
  const Buffer* buffer = nullptr;
  std::shared_ptr<Buffer> owner;   // kept alive as long as the graph (null: its owner keeps it)
  bool made = false;               // allocated while recording (a temporary or a result)
  bool result = false;             // made, and returned by the recorded function
  int argument = -1;               // the argument whose buffer it is, or -1
  std::string name;                // "argument 1", "new array 3", "array 2"
};

// A recorded graph: its nodes' work and the buffers they touch. Runs with run(); a run
// holds the graph's lock, so replays of one graph from several threads take turns (its
// temporaries are one set of memory).
class RecordedGraph {
 public:
  TaskGraph graph;
  std::vector<NodeWork> work;  // work[i] is node i's
  std::vector<RecordedBuffer> buffers;
  Device device;  // where its work runs

  // Runs every node with `remap` applied to its addresses: on the cpu, each node on a
  // thread of its own once the nodes it waits for are done (their errors end the run,
  // the first one is thrown); on a CUDA device, as one driver graph (kernel, memcpy and
  // memset nodes with the same edges), instantiated at the first run and launched on
  // `stream`; nodes whose addresses moved since the last run get their new parameters in
  // the instantiated graph, which is never rebuilt.
  //
  // On a CUDA device the temporaries (buffers made while recording on that device and
  // not returned) live in graph memory: a mem-alloc node ahead of the first node that
  // uses one, a mem-free node after the last, so that no replay reads memory another
  // replay or allocation reuses, and branches that never overlap in time can share
  // memory. The buffers they had while recording are released once the graph is built.
  void run(const Remap& remap, CUstream stream);

  std::uint64_t replays = 0;  // runs
  std::uint64_t updates = 0;  // kernel nodes whose arguments moved, over all runs
  std::size_t allocs = 0;     // mem-alloc nodes of the driver's graph (each with its free)

  // Checks a CUDA graph's run is followed by, in the order they were recorded: reads of
  // what its kernels left on the device (bounds records) that throw the error they find.
  // A driver graph has no host step that can raise, so the caller makes them once the
  // run is waited for (check_after_run).
  std::vector<std::function<void()>> after_run;
  void check_after_run() const {
    for (const auto& check : after_run) check();
  }

  struct Cuda;  // the driver's graph, instantiated at the first run (graph.cpp)

 private:
  void run_cuda(const Remap& remap, CUstream stream);
  std::mutex mutex_;
  std::shared_ptr<Cuda> cuda_;
};

// Memory for `bytes` on `device` that a graph whose work is on `graph_device` may copy to
// or from: page-locked host memory for a GPU graph's host side (a copy node needs it),
// else an ordinary allocation on `stream`.
std::shared_ptr<Buffer> allocate_for_graph(Device graph_device, Device device, std::size_t bytes,
                                           const Stream* stream = nullptr);

// The recording of a thread: while one is alive, the layers below ask active() before
// issuing work and record it instead. Made on the thread that records; one at a time.
class GraphRecording {
 public:
  // `where` gives the place that issues an operation (the Lua line, "s.lua:12"), or "".
  GraphRecording(Device device, std::function<std::string()> where);
  ~GraphRecording();
  GraphRecording(const GraphRecording&) = delete;
  GraphRecording& operator=(const GraphRecording&) = delete;

  // This thread's recording, or null: the one test on every eager path.
  static GraphRecording* active() { return t_active; }

  // The buffer of argument k (before the recorded function runs).
  void argument(int k, const std::shared_ptr<Buffer>& buffer);
  // A buffer allocated while recording.
  void made(const std::shared_ptr<Buffer>& buffer);
  // The bytes of `a` that a node reads or writes; its buffer is kept with the graph.
  Access of(const NDArray& a, bool write);
  // Bytes [lo, hi) of `buffer` (a kernel's scratch, a bounds record): memory its owner
  // keeps alive as long as the graph.
  Access of(const Buffer& buffer, std::uintptr_t lo, std::uintptr_t hi, bool write);
  // The same for a buffer the graph keeps alive itself (a recorded launch's scratch).
  Access of(const std::shared_ptr<Buffer>& buffer, std::uintptr_t lo, std::uintptr_t hi, bool write);
  // Notes an access of the next kernel node (the call path knows its arrays before the
  // launch step that records it).
  void access(const Access& a) { pending_.push_back(a); }

  // Nodes: a kernel with the accesses noted since the last kernel; the others with theirs.
  void kernel(KernelWork w);
  void copy(CopyWork w, std::vector<Access> accesses);
  void fill(FillWork w, std::vector<Access> accesses);
  void host(std::string name, HostWork w, std::vector<Access> accesses);
  // A check made after each run of a graph on a CUDA device (RecordedGraph::after_run).
  void after_run(std::function<void()> check) { graph_->after_run.push_back(std::move(check)); }

  // The error for an operation that needs a result on the host, which a graph being
  // recorded does not have: "x:get() needs the array's values on the host, but a graph
  // is being recorded: its work has not run yet; return the array from the function and
  // read it after the graph runs". `what` names the operation ("x:get()").
  [[noreturn]] static void refuse(std::string_view what);
  // refuse(what) when this thread records.
  static void refuse_if_recording(std::string_view what) {
    if (t_active) [[unlikely]] refuse(what);
  }

  // While one lives, this thread does not record: work the recording needs done now (the
  // bytes a fill node will copy).
  class Paused {
   public:
    Paused() : saved_(t_active) { t_active = nullptr; }
    ~Paused() { t_active = saved_; }
    Paused(const Paused&) = delete;
    Paused& operator=(const Paused&) = delete;

   private:
    GraphRecording* saved_;
  };

  // The bounds record of the launch being recorded: each recorded launch gets one of its
  // own (kept by the graph), so that launches of one kernel are not ordered through the
  // kernel's single record. Set where the record is zeroed, read where it is checked.
  std::shared_ptr<Buffer> bounds_record;

  Device device() const { return device_; }
  // The recording so far, which the recording no longer holds.
  std::shared_ptr<RecordedGraph> finish();
  // The recorded buffer of `buffer`, or -1.
  int buffer_index(const Buffer* buffer) const;

 private:
  std::size_t add_buffer(const Buffer* buffer, const std::shared_ptr<Buffer>& owner);
  void add(NodeKind kind, std::string name, NodeWork work, std::vector<Access> accesses);

  static thread_local GraphRecording* t_active;
  Device device_;
  std::function<std::string()> where_;
  std::shared_ptr<RecordedGraph> graph_;
  std::unordered_map<const Buffer*, std::size_t> index_;
  std::vector<Access> pending_;
  GraphRecording* outer_ = nullptr;
};

}  // namespace luda

// A recorded graph (docs/architecture.md, Graphs): the task graph of what a recording saw
// (runtime/graph/task_graph.h), each node's work (runtime/graph/node_work.h) and the
// buffers they touch, run again with the recorded addresses moved to new memory: on a
// CUDA device as one instantiated driver graph (replay_cuda.cpp), on the cpu on the
// executor's threads (replay_cpu.cpp).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/graph/node_work.h"
#include "runtime/graph/remap.h"
#include "runtime/graph/task_graph.h"
#include "runtime/memory.h"

namespace luda {

// What a recording knows of a buffer it touched.
struct RecordedBuffer {
  const Buffer* buffer = nullptr;
  std::shared_ptr<Buffer> owner;  // kept alive as long as the graph (null: its owner keeps it)
  bool made = false;              // allocated while recording (a temporary or a result)
  bool result = false;            // made, and returned by the recorded function
  int argument = -1;              // the argument whose buffer it is, or -1
  std::string name;               // "argument 1", "new array 3", "array 2"
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
  // What the nodes' code needs alive as long as the graph: the kernel objects of a C++
  // host that the recorded function called (their modules hold the nodes' functions).
  std::vector<std::shared_ptr<const void>> kept;

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

  struct Cuda;  // the driver's graph, instantiated at the first run (replay_cuda.cpp)

 private:
  void run_cpu(const Remap& remap);
  void run_cuda(const Remap& remap, CUstream stream);
  std::mutex mutex_;
  std::shared_ptr<Cuda> cuda_;
};

// Memory for `bytes` on `device` that a graph whose work is on `graph_device` may copy to
// or from: page-locked host memory for a GPU graph's host side (a copy node needs it),
// else an ordinary allocation on `stream`.
std::shared_ptr<Buffer> allocate_for_graph(Device graph_device, Device device, std::size_t bytes,
                                           const Stream* stream = nullptr);

}  // namespace luda

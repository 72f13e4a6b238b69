// The recording of a graph on a thread (docs/architecture.md, Graphs): while one is
// active, the layers ask active() before they issue work, and record it as nodes of a
// RecordedGraph (runtime/graph/recorded_graph.h) instead of running it: launches (jit/'s
// launch step), copies, fills and allocations (NDArray's own); operations that need a
// result on the host refuse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/graph/node_work.h"
#include "runtime/graph/recorded_graph.h"
#include "runtime/graph/task_graph.h"
#include "runtime/ndarray.h"

namespace luda {

// Made on the thread that records; one at a time.
class GraphRecording {
 public:
  // `where` gives the place that issues an operation (the Lua line, "s.lua:12"), or ""
  // (also when it is empty).
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
  // Keeps `object` alive as long as the graph (RecordedGraph::kept): a kernel whose code
  // a node runs.
  void keep(std::shared_ptr<const void> object) { graph_->kept.push_back(std::move(object)); }

  // The error for an operation that needs a result on the host, which a graph being
  // recorded does not have: "x:get() needs a result on the host, but a graph is being
  // recorded and its work has not run; return the arrays from the recorded function and
  // read them after the graph runs". `what` names the operation ("x:get()").
  [[noreturn]] static void refuse(std::string_view what);
  // refuse(what) when this thread records.
  static void refuse_if_recording(std::string_view what) {
    if (t_active) [[unlikely]]
      refuse(what);
  }
  // The error for recording or replaying a graph while this thread records one; `who`
  // starts it ("luda.graph").
  [[noreturn]] static void refuse_nested(std::string_view who);

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

// A task graph (docs/architecture.md, Graphs): nodes that each read and write byte ranges
// of memory, joined by an edge only where two of them touch the same bytes and at least
// one writes (a read after a write, a write after a read, a write after a write).
// Independent work is left on independent branches, so that replaying the graph runs it
// side by side. TaskGraph is the graph's shape alone: its nodes, their accesses, the
// hazard edges and its Graphviz text; what each node does is the recorded graph's
// (runtime/graph/recorded_graph.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace luda

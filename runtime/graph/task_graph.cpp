#include "runtime/graph/task_graph.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

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

}  // namespace luda

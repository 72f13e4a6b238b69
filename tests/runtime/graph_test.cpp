// The task graph's edges against the hazards computed another way: for random nodes over
// a few buffers, node j must finish before node i exactly when a chain of hazards (two
// accesses to common bytes, one a write) leads from j to i; every edge is a hazard; no
// edge is implied by the others.
#include "runtime/graph/remap.h"
#include "runtime/graph/task_graph.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "runtime/error.h"

namespace luda {
namespace {

GraphNode node(std::string name, std::vector<Access> accesses) {
  GraphNode n;
  n.name = std::move(name);
  n.accesses = std::move(accesses);
  return n;
}

Access reads(std::size_t buffer, std::uintptr_t begin, std::uintptr_t end) { return {begin, end, false, buffer}; }
Access writes(std::size_t buffer, std::uintptr_t begin, std::uintptr_t end) { return {begin, end, true, buffer}; }

bool hazard(const GraphNode& a, const GraphNode& b) {
  for (const Access& x : a.accesses)
    for (const Access& y : b.accesses)
      if ((x.write || y.write) && std::max(x.begin, y.begin) < std::min(x.end, y.end)) return true;
  return false;
}

TEST(TaskGraph, IndependentWorkHasNoEdges) {
  TaskGraph g;
  g.add(node("a", {reads(0, 0, 100), writes(1, 1000, 1100)}));
  g.add(node("b", {reads(0, 0, 100), writes(2, 2000, 2100)}));      // reads what a reads
  g.add(node("c", {writes(1, 1100, 1200)}));                        // next to a's bytes, not on them
  g.add(node("d", {writes(3, 3000, 3000), reads(1, 1000, 1000)}));  // empty ranges touch nothing
  EXPECT_TRUE(g.edges().empty());
  EXPECT_EQ(1u, g.depth());
}

TEST(TaskGraph, EachHazardIsAnEdgeNamedByItsBuffer) {
  TaskGraph g;
  g.set_buffer_names({"x", "y"});
  g.add(node("write x", {writes(0, 0, 64)}));
  g.add(node("read x", {reads(0, 32, 40), writes(1, 100, 164)}));
  g.add(node("write x's end", {writes(0, 60, 70)}));         // on the first write's bytes, not the read's
  g.add(node("write under the read", {writes(0, 30, 35)}));  // after the read, hence after the first write
  ASSERT_EQ(3u, g.edges().size());
  auto check = [&](std::size_t k, std::size_t from, std::size_t to, Hazard h) {
    EXPECT_EQ(from, g.edges()[k].from) << k;
    EXPECT_EQ(to, g.edges()[k].to) << k;
    EXPECT_EQ(h, g.edges()[k].hazard) << k;
    EXPECT_EQ(0u, g.edges()[k].buffer) << k;
  };
  check(0, 0, 1, Hazard::ReadAfterWrite);
  check(1, 0, 2, Hazard::WriteAfterWrite);
  check(2, 1, 3, Hazard::WriteAfterRead);  // node 0 is reached through node 1: no edge of its own
  EXPECT_TRUE(g.ordered(0, 3));
  EXPECT_FALSE(g.ordered(2, 3));
  EXPECT_FALSE(g.ordered(1, 2));
  EXPECT_EQ(3u, g.depth());
  EXPECT_EQ((std::vector<std::size_t>{1}), g.predecessors(3));
  EXPECT_EQ("x", g.buffer_name(0));
  EXPECT_EQ("buffer 7", g.buffer_name(7));
}

TEST(TaskGraph, DotNamesNodesLinesBuffersAndHazards) {
  TaskGraph g;
  g.set_buffer_names({"a \"tmp\""});
  GraphNode w = node("kernel 'fill'", {writes(0, 0, 8)});
  w.where = "s.lua:3";
  g.add(w);
  g.add(node("copy of 8 bytes", {reads(0, 0, 8)}));
  EXPECT_EQ("digraph \"g\" {\n"
            "  node [shape=box];\n"
            "  n0 [label=\"kernel 'fill'\\ns.lua:3\"];\n"
            "  n1 [label=\"copy of 8 bytes\"];\n"
            "  n0 -> n1 [label=\"a \\\"tmp\\\" (read after write)\"];\n"
            "}\n",
            g.dot("g"));
}

// Random programs: 1 to 40 nodes, each with up to 4 accesses of up to 3 buffers' bytes.
TEST(TaskGraph, RandomNodesAreOrderedExactlyByChainsOfHazards) {
  std::mt19937 rng(20261128);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 40);
    std::vector<GraphNode> made;
    TaskGraph g;
    for (int i = 0; i < n; ++i) {
      std::vector<Access> acc;
      const int k = static_cast<int>(rng() % 5);
      for (int a = 0; a < k; ++a) {
        std::size_t buffer = rng() % 3;
        std::uintptr_t base = 4096 * (buffer + 1), lo = base + rng() % 64, hi = lo + rng() % 24;
        acc.push_back(Access{lo, hi, rng() % 2 == 0, buffer});
      }
      made.push_back(node("n" + std::to_string(i), acc));
      g.add(made.back());
    }
    // must[j][i]: j reaches i through hazards (the reference: closure of the relation).
    std::vector<std::vector<bool>> must(n, std::vector<bool>(n, false));
    for (int i = 0; i < n; ++i)
      for (int j = i - 1; j >= 0; --j)
        if (hazard(made[j], made[i])) {
          must[j][i] = true;
          for (int k = 0; k < j; ++k)
            if (must[k][j]) must[k][i] = true;
        }
    // reach[j][i] through the graph's edges alone.
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    std::set<std::pair<std::size_t, std::size_t>> edges;
    for (const GraphEdge& e : g.edges()) {
      ASSERT_LT(e.from, e.to);
      ASSERT_TRUE(hazard(made[e.from], made[e.to])) << "edge " << e.from << "->" << e.to << " is no hazard";
      ASSERT_TRUE(edges.insert({e.from, e.to}).second) << "edge twice";
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j)
        if (edges.count({j, i})) {
          reach[j][i] = true;
          for (int k = 0; k < j; ++k)
            if (reach[k][j]) reach[k][i] = true;
        }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j) {
        ASSERT_EQ(must[j][i], reach[j][i]) << "trial " << trial << ": " << j << " before " << i;
        ASSERT_EQ(must[j][i], g.ordered(j, i));
      }
    // No edge is implied by a longer path.
    for (const auto& [from, to] : edges)
      for (std::size_t m = from + 1; m < to; ++m)
        ASSERT_FALSE(reach[from][m] && reach[m][to]) << "edge " << from << "->" << to << " is redundant";
  }
}

TEST(Remap, MovesAddressesInTheirRangeAndJoinsOverlappingOnes) {
  Remap r;
  r.add(100, 200, 1000);  // an argument's view
  r.add(150, 160, 1000);  // a view inside it, moved with it
  r.add(300, 310, -50);   // a result's buffer
  r.add(400, 400, 7);     // nothing
  EXPECT_EQ(1100u, r(100));
  EXPECT_EQ(1170u, r(170));  // past the inner view, still in the outer one
  EXPECT_EQ(1199u, r(199));
  EXPECT_EQ(200u, r(200));
  EXPECT_EQ(99u, r(99));
  EXPECT_EQ(250u, r(300));
  EXPECT_EQ(400u, r(400));
  r.add(190, 250, 1000);  // overlapping the end: joined
  EXPECT_EQ(1240u, r(240));
  EXPECT_THROW(r.add(305, 320, 5), InternalError);
}

}  // namespace
}  // namespace luda

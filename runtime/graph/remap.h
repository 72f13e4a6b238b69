// Where a replay of a recorded graph puts the memory of its recording (runtime/graph/
// recorded_graph.h): each range [lo, hi) of recorded addresses moves by `delta` bytes (an
// argument's view, a result's buffer). Addresses in no range stay as they are (the graph's
// own temporaries, arrays it closes over).
#pragma once

#include <cstdint>
#include <vector>

namespace luda {

class Remap {
 public:
  // Overlapping ranges (two arguments that view one buffer) must move by one distance, and
  // become one range; InternalError otherwise.
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

}  // namespace luda

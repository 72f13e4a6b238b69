#include "runtime/graph/remap.h"

#include <algorithm>

#include "runtime/error.h"

namespace luda {

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

}  // namespace luda

#include "runtime/graph/variants.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/error.h"

namespace luda {

std::optional<std::size_t> GraphVariants::find(const std::vector<ArgKey>& key, std::span<const NDArray> args) const {
  const SharedArguments shared = shared_arguments(args);
  for (std::size_t i = 0; i < variants_.size(); ++i)
    if (variants_[i].key() == key && variants_[i].shared() == shared) return i;
  return std::nullopt;
}

void GraphVariants::check_room(const std::vector<ArgKey>& key) const {
  if (variants_.size() < kMaxVariants) return;
  std::vector<std::string> known;
  for (const Variant& v : variants_) known.push_back("(" + describe(v.key()) + ")");
  fail("{}: these arguments ({}) match none of the {} variants it has recorded ({}), and a graph records at most "
       "{}; make another luda.graph for these shapes",
       name_, describe(key), variants_.size(), fmt::join(known, ", "), kMaxVariants);
}

std::size_t GraphVariants::add(Variant v) {
  variants_.push_back(std::move(v));
  ++recordings_;
  return variants_.size() - 1;
}

const Variant& GraphVariants::last() const {
  if (variants_.empty()) fail("{}: nothing was recorded", name_);
  return variants_[last_];
}

std::uint64_t GraphVariants::replays() const {
  std::uint64_t n = 0;
  for (const Variant& v : variants_) n += v.graph().replays;
  return n;
}

std::uint64_t GraphVariants::updates() const {
  std::uint64_t n = 0;
  for (const Variant& v : variants_) n += v.graph().updates;
  return n;
}

std::string GraphVariants::str() const {
  if (variants_.empty()) return fmt::format("<{}: nothing recorded>", name_);
  const TaskGraph& t = variants_[last_].graph().graph;
  return fmt::format("<{}: {} node{}, {} edge{}, {} variant{}>", name_, t.nodes().size(),
                     t.nodes().size() == 1 ? "" : "s", t.edges().size(), t.edges().size() == 1 ? "" : "s",
                     variants_.size(), variants_.size() == 1 ? "" : "s");
}

}  // namespace luda

// The variants of a graph (docs/graphs.md, Replaying): one recording of its function for
// each kind of call it has had, up to kMaxVariants; a call that matches none records
// another, and past the limit is refused with the ones the graph has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/graph/variant.h"

namespace luda {

class GraphVariants {
 public:
  static constexpr std::size_t kMaxVariants = 8;

  // `name` starts its errors and its summary ("graph (step.lua:3)").
  explicit GraphVariants(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // The variant a call with `key` and `args` replays, if one was recorded.
  std::optional<std::size_t> find(const std::vector<ArgKey>& key, std::span<const NDArray> args) const;
  // Error when the graph has all the variants it may: "graph (s.lua:3): these arguments
  // (...) match none of the 8 variants it has recorded (...), and a graph records at
  // most 8; make another luda.graph for these shapes".
  void check_room(const std::vector<ArgKey>& key) const;
  // Adds a recorded variant; returns its index.
  std::size_t add(Variant v);

  std::size_t size() const { return variants_.size(); }
  Variant& operator[](std::size_t i) { return variants_.at(i); }
  const Variant& operator[](std::size_t i) const { return variants_.at(i); }

  // The variant the last call ran (the first one until a call runs); `last()` raises
  // "<name>: nothing was recorded" when there is none.
  void set_last(std::size_t i) { last_ = i; }
  const Variant& last() const;

  std::uint64_t recordings() const { return recordings_; }
  std::uint64_t replays() const;  // over every variant
  std::uint64_t updates() const;
  // "<graph (step.lua:3): 6 nodes, 5 edges, 1 variant>", of the last variant run.
  std::string str() const;

 private:
  std::string name_;
  std::vector<Variant> variants_;
  std::size_t last_ = 0;
  std::uint64_t recordings_ = 0;
};

}  // namespace luda

// The specializations of one kernel object: the code its frontend made for each set of
// argument types and target, made once and kept as long as the object. Every kernel
// object (a cuda.jit kernel, an elementwise or a reduction kind) keeps one beside its call
// cache (jit/call/call_cache.h), under that cache's mutex: the call cache maps a call's
// whole key to loaded code; this maps the key's types to the frontend's code, so that a
// new layout, vector width or device of known types reuses the frontend's work.
#pragma once

#include <chrono>
#include <deque>
#include <unordered_map>
#include <utility>

#include "jit/call/call_key.h"
#include "jit/compile/program.h"

namespace luda::jit {

template <class Key, class Spec>
class SpecCache {
 public:
  // The specialization of `types`; when there is none, the one `make()` returns, its
  // time and count added to `stats` (frontend_seconds, specializations). An exception
  // from `make` leaves the cache as it was.
  template <class Make>
  Spec& get(const Key& types, JitStats& stats, Make&& make) {
    if (Spec* s = find(types)) return *s;
    auto t0 = std::chrono::steady_clock::now();
    Spec made = std::forward<Make>(make)();
    stats.frontend_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++stats.specializations;
    Spec& s = specs_.emplace_back(std::move(made));
    by_types_.emplace(types, &s);
    return s;
  }
  Spec* find(const Key& types) {
    auto it = by_types_.find(types);
    return it == by_types_.end() ? nullptr : it->second;
  }

  // In the order they were made.
  auto begin() { return specs_.begin(); }
  auto end() { return specs_.end(); }
  auto begin() const { return specs_.begin(); }
  auto end() const { return specs_.end(); }
  bool empty() const { return specs_.empty(); }

 private:
  std::deque<Spec> specs_;  // stable addresses: loaded entries point at their Spec
  std::unordered_map<Key, Spec*, CallKeyHash> by_types_;
};

}  // namespace luda::jit

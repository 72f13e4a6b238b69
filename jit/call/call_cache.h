// The lookup step of every call, for every kind of kernel: its key (jit/call/call_key.h) to
// the code loaded for it. A loop calls with one key, so the last call's entry is tried
// first, with no lock and no hashing; then the table, under the cache's mutex; then the
// kind's load, which compiles (or finds on disk) and loads, under the same mutex. Entries
// live as long as the cache, so what a call got stays valid while another thread loads.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "jit/call/call_key.h"
#include "jit/call/launch.h"
#include "jit/compile/program.h"

namespace luda::jit {

template <class Entry, std::size_t MaxOperands>
class CallCache {
 public:
  using Key = CallKey<MaxOperands>;

  CallCache() = default;
  CallCache(const CallCache&) = delete;
  CallCache& operator=(const CallCache&) = delete;

  // The entry of `key`, counted as a call: the last call's when it had this key, else the
  // table's, else `load(key)`'s, run under mutex(): an Entry& that add() made, or one that
  // an earlier key has (the same code serves both). Inline: every call comes here.
  template <class Load>
  Entry& find(const Key& key, Load&& load) {
    calls_.fetch_add(1, std::memory_order_relaxed);
    const Slot* last = last_.load(std::memory_order_acquire);
    if (last && last->first == key) [[likely]]
      return *last->second;
    std::lock_guard lock(mutex_);
    const Slot* slot = find_slot(key, load, true);
    last_.store(slot, std::memory_order_release);
    return *slot->second;
  }
  // The same with mutex() held and no call counted (compile(), ahead of any call).
  template <class Load>
  Entry& find_locked(const Key& key, Load&& load) {
    return *find_slot(key, load, false)->second;
  }

  std::mutex& mutex() const { return mutex_; }
  // With mutex() held: a new entry, kept as long as the cache; the entries so far; what
  // loading counts (specializations, disk hits, compiles, loads, times).
  template <class... Args>
  Entry& add(Args&&... args) {
    return entries_.emplace_back(std::forward<Args>(args)...);
  }
  std::deque<Entry>& entries() { return entries_; }
  const std::deque<Entry>& entries() const { return entries_; }
  JitStats& counters() { return counters_; }

  // The counters, with the calls and those that found their key loaded (memory hits).
  // Exact while no call is in flight.
  JitStats stats() const {
    std::lock_guard lock(mutex_);
    JitStats s = counters_;
    s.calls = calls_.load(std::memory_order_relaxed);
    s.memory_hits = s.calls > misses_ ? s.calls - misses_ : 0;
    return s;
  }

 private:
  using Table = std::unordered_map<Key, Entry*, CallKeyHash>;
  using Slot = typename Table::value_type;  // a table's node: its address never changes

  template <class Load>
  const Slot* find_slot(const Key& key, Load& load, bool call) {
    if (auto it = table_.find(key); it != table_.end()) return &*it;
    misses_ += call;
    Entry& entry = load(key);
    return &*table_.emplace(key, &entry).first;
  }

  mutable std::mutex mutex_;
  std::atomic<const Slot*> last_{nullptr};
  Table table_;
  std::deque<Entry> entries_;
  std::atomic<std::uint64_t> calls_{0};
  std::uint64_t misses_ = 0;  // calls whose key was not in the table
  JitStats counters_;
};

}  // namespace luda::jit

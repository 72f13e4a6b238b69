// What a node of a recorded graph does (runtime/graph/recorded_graph.h): a kernel launch,
// a copy, a fill of zeros, or work the host does; each with the recorded addresses that a
// replay moves to its own memory.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "runtime/cpu_executor.h"
#include "runtime/graph/remap.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace luda {

// A kernel launch as recorded: the loaded code, its configuration (no stream: a replay
// gives one) and its argument bytes, with the words that hold data pointers.
struct KernelWork {
  Device device;                  // where it runs
  CpuKernel cpu;                  // on the cpu device
  CUfunction function = nullptr;  // on a CUDA device
  bool cooperative = false;
  LaunchConfig config;
  std::vector<std::uint64_t> words;   // the arguments, each 8-byte aligned
  std::vector<std::size_t> slots;     // each argument's first word
  std::vector<std::size_t> pointers;  // the words that hold data pointers
  std::string who;                    // "kernel 'add'", for errors
};
// n bytes from src to dst; `source` keeps bytes that came from the host at recording
// (a table made into an array), src then pointing into it.
struct CopyWork {
  Device dst_device, src_device;
  std::uintptr_t dst = 0, src = 0;
  std::size_t n = 0;
  std::shared_ptr<const std::vector<std::byte>> source;
};
// n zero bytes at dst.
struct FillWork {
  Device device;
  std::uintptr_t dst = 0;
  std::size_t n = 0;
};
// Work the host does on cpu memory (a conversion between dtypes, a strided copy, a bounds
// check), given where the recorded addresses are now.
struct HostWork {
  std::function<void(const Remap&)> run;
};
using NodeWork = std::variant<KernelWork, CopyWork, FillWork, HostWork>;

// A node's addresses moved by `move` (a Remap, or one with graph memory besides): a
// kernel's argument words, a copy's destination and source (`pinned`'s bytes for bytes
// that came from the host), a fill's destination; nothing for host work.
template <class Move>
std::vector<std::uint64_t> node_addresses(const NodeWork& work, const Move& move, const Buffer* pinned) {
  if (const auto* k = std::get_if<KernelWork>(&work)) {
    std::vector<std::uint64_t> words = k->words;
    for (std::size_t w : k->pointers) words[w] = move(static_cast<std::uintptr_t>(words[w]));
    return words;
  }
  if (const auto* c = std::get_if<CopyWork>(&work))
    return {move(c->dst), pinned ? reinterpret_cast<std::uintptr_t>(pinned->data()) : move(c->src)};
  if (const auto* f = std::get_if<FillWork>(&work)) return {move(f->dst)};
  return {};
}

}  // namespace luda

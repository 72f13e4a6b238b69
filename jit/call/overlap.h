// The overlap step of a call: which of its arrays may share memory (runtime/ndarray.h,
// may_share_memory: byte extents), and what follows from it.
//   cuda.jit kernels: arrays that share no byte get restricted pointers (noalias).
//   kernel kinds: outputs must not share memory; an input that shares memory with an
//     output is copied first (NumPy's rule: the result is as if every input were read
//     before any output was written), unless the kind reads it safely in place.
// Allocation-free unless something overlaps: every call asks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "jit/call/call_args.h"
#include "runtime/graph/recording.h"
#include "runtime/ndarray.h"

namespace luda::jit {

// Whether no two array arguments may share memory (the same array twice does).
bool arrays_disjoint(std::span<const KernelArg> args);

// The inputs (bit k for input k, at most 64 of them) that may share memory with one of
// the given outputs (invalid ones are not given; at most 64 of them). Inline: a kind's
// every call asks it of every operand, each extent once.
inline std::uint64_t inputs_over_outputs(std::span<const KernelArg> inputs, std::span<const NDArray> outs) {
  constexpr std::size_t kMost = 64;
  ByteExtent given[kMost];
  std::size_t n = 0;
  for (std::size_t o = 0; o < outs.size() && o < kMost; ++o) {
    given[n] = byte_extent(outs[o]);
    n += given[n].lo < given[n].hi;  // no elements, or not given: nothing to overlap
  }
  std::uint64_t mask = 0;
  for (std::size_t k = 0; n > 0 && k < inputs.size() && k < kMost; ++k) {
    if (inputs[k].kind != KernelArg::Kind::Array) continue;
    const ByteExtent e = byte_extent(*inputs[k].array);
    for (std::size_t j = 0; j < n; ++j)
      if (e.overlaps(given[j])) {
        mask |= std::uint64_t{1} << k;
        break;
      }
  }
  return mask;
}

// While this thread records a graph (runtime/graph/recording.h): the launch about to be recorded
// reads the arrays of `inputs` (and writes them when `inputs_written`: code that may write
// any array it is given) and writes `outs`. Inline: every launch asks whether it records.
void note_operands_recorded(GraphRecording& g, std::span<const KernelArg> inputs, std::span<const NDArray> outs,
                            bool inputs_written);
inline void note_operands(std::span<const KernelArg> inputs, std::span<const NDArray> outs, bool inputs_written) {
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]]
    note_operands_recorded(*g, inputs, outs, inputs_written);
}

// The first pair of given outputs that may share memory, if any.
std::optional<std::pair<std::size_t, std::size_t>> shared_outputs(std::span<const NDArray> outs);

// The arguments with each input in `copy` (a mask as above) replaced by a C-contiguous
// copy on its device, made on `stream` (null: the default stream); `copies` keeps them.
std::vector<KernelArg> with_copies(std::span<const KernelArg> inputs, std::uint64_t copy, std::vector<NDArray>& copies,
                                   const Stream* stream);

}  // namespace luda::jit

#include "jit/call/overlap.h"

namespace luda::jit {

bool arrays_disjoint(std::span<const KernelArg> args) {
  // Each extent once, then pairwise: a call has a few arrays. Past 64 of them, pairwise
  // from the arrays.
  constexpr std::size_t kMost = 64;
  ByteExtent extents[kMost];
  std::size_t n = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != KernelArg::Kind::Array) continue;
    const ByteExtent e = byte_extent(*args[i].array);
    if (e.lo >= e.hi) continue;  // no elements
    if (n == kMost) {
      for (std::size_t a = 0; a < args.size(); ++a)
        for (std::size_t b = a + 1; b < args.size(); ++b)
          if (args[a].kind == KernelArg::Kind::Array && args[b].kind == KernelArg::Kind::Array &&
              may_share_memory(*args[a].array, *args[b].array))
            return false;
      return true;
    }
    extents[n++] = e;
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (extents[i].overlaps(extents[j])) return false;
  return true;
}

std::optional<std::pair<std::size_t, std::size_t>> shared_outputs(std::span<const NDArray> outs) {
  for (std::size_t i = 0; i < outs.size(); ++i)
    for (std::size_t j = i + 1; j < outs.size(); ++j)
      if (may_share_memory(outs[i], outs[j])) return std::pair{i, j};
  return std::nullopt;
}

std::vector<KernelArg> with_copies(std::span<const KernelArg> inputs, std::uint64_t copy, std::vector<NDArray>& copies,
                                   const Stream* stream) {
  std::vector<KernelArg> args(inputs.begin(), inputs.end());
  copies.reserve(copies.size() + inputs.size());  // the arguments point into it
  for (std::size_t k = 0; k < inputs.size() && k < 64; ++k) {
    if (!(copy >> k & 1)) continue;
    copies.push_back(inputs[k].array->copy(std::nullopt, stream));
    args[k] = KernelArg::of_array(copies.back());
  }
  return args;
}

void note_operands_recorded(GraphRecording& g, std::span<const KernelArg> inputs, std::span<const NDArray> outs,
                            bool inputs_written) {
  for (const KernelArg& a : inputs)
    if (a.kind == KernelArg::Kind::Array && a.array) g.access(g.of(*a.array, inputs_written));
  for (const NDArray& o : outs) g.access(g.of(o, true));
}

}  // namespace luda::jit

// How the operands of one kernel-kind call lie in memory, worked out on the host before
// the launch: NumPy broadcasting, then the iteration space collapsed to as few axes as the
// strides allow (size-1 axes dropped; neighbouring axes merged where every operand steps
// through them as one). The collapsed form picks the template (jit/kinds/templates.h):
// one flat contiguous loop, or a general strided loop specialized by its ndim; for
// reductions, a strategy by shape. Pure and allocation-free (fixed-size arrays on the
// caller's stack): it runs on every call.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "runtime/ndarray.h"

namespace luda::jit {

inline constexpr int kMaxKindDims = kMaxNdim;  // no array has more axes
inline constexpr int kMaxKindOperands = 32;    // inputs plus outputs

// An operand as the layout sees it: an array's shape and element strides. A scalar (or a
// raw input, which is not broadcast) does not take part.
struct LayoutOperand {
  const std::int64_t* shape = nullptr;
  const std::int64_t* strides = nullptr;
  int ndim = 0;
};
inline LayoutOperand layout_operand(const NDArray& a) { return {a.shape().data(), a.strides().data(), a.ndim()}; }

// The broadcast shape of the operands: false when two extents differ and neither is 1 (or
// more than kMaxKindDims axes).
struct BroadcastShape {
  int ndim = 0;
  std::array<std::int64_t, kMaxKindDims> shape;  // filled up to ndim only
  std::int64_t size() const;
};
bool broadcast(std::span<const LayoutOperand> operands, BroadcastShape& out);

// The elementwise iteration space: `ndim` collapsed axes (C order), each operand's element
// strides along them (0 where it is broadcast). ndim 0 means one element.
struct ElementwiseLayout {
  int ndim = 0;
  std::int64_t size = 0;
  // Filled up to ndim (and the operand count) only: a call zeroes nothing it does not use.
  std::array<std::int64_t, kMaxKindDims> shape;
  std::array<std::array<std::int64_t, kMaxKindDims>, kMaxKindOperands> strides;
  // Every operand steps through the elements in C order with stride 1: one flat loop.
  int operands = 0;
  bool contiguous() const;
};
// The operands must broadcast to `shape` (checked by broadcast()).
void elementwise_layout(std::span<const LayoutOperand> operands, const BroadcastShape& shape, ElementwiseLayout& out);

// How a reduction's threads meet the data (jit/kinds/templates.h, ReductionTemplate).
enum class ReductionStrategy : std::uint8_t {
  Rows,     // the reduced axes are one contiguous run per output (stride 1, or 0 where an
            // input is broadcast along it): a warp or a block per output row
  Columns,  // the kept axes are one contiguous run (stride 1 or 0): threads take
            // neighbouring outputs and walk the reduced axis together (coalesced)
  General,  // anything else: a warp or a block per output, offsets from the index
};

// The reduction's iteration space: the kept axes (outputs) and the reduced axes, each
// group collapsed on its own, in the order of the input's axes. Both groups have at least
// one axis (an extent of 1 where there is nothing). Operand k's strides are
// kept_strides[k] and reduced_strides[k] (inputs first, then outputs, whose reduced
// strides are 0).
struct ReductionLayout {
  int kept_ndim = 1, reduced_ndim = 1;
  std::int64_t rows = 1, len = 1;                                    // outputs, and elements reduced into each
  std::array<std::int64_t, kMaxKindDims> kept_shape, reduced_shape;  // filled up to the ndims
  std::array<std::array<std::int64_t, kMaxKindDims>, kMaxKindOperands> kept_strides, reduced_strides;
  int inputs = 0, outputs = 0;
  ReductionStrategy strategy = ReductionStrategy::General;
};
// `inputs` broadcast to `shape`; `reduced[a]` says whether axis a of it is reduced.
// `outputs` have the result's shape: `shape` without the reduced axes, or with them as
// size-1 axes when `keepdims`. Picks the strategy from the inputs' strides.
void reduction_layout(std::span<const LayoutOperand> inputs, std::span<const LayoutOperand> outputs,
                      const BroadcastShape& shape, std::span<const bool> reduced, bool keepdims, ReductionLayout& out);

}  // namespace luda::jit

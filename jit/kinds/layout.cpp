#include "jit/kinds/layout.h"

namespace luda::jit {
namespace {

using Axes = std::array<std::int64_t, kMaxKindDims>;

// Operand strides along the broadcast axes: NumPy aligns shapes at the right; a missing or
// size-1 axis is broadcast (stride 0).
void aligned_strides(const LayoutOperand& op, const BroadcastShape& b, Axes& out) {
  int lead = b.ndim - op.ndim;
  for (int a = 0; a < b.ndim; ++a) {
    int k = a - lead;
    out[static_cast<std::size_t>(a)] = (k < 0 || op.shape[k] == 1) ? 0 : op.strides[k];
  }
}

// Collapses `axes` (outer to inner) of an iteration space whose operands step by
// `in[k][axis]`: an axis of extent 1 is dropped; an axis merges into the one before it
// when every operand's stride there is the inner stride times the inner extent (then one
// index runs through both in C order). Returns the collapsed axis count.
int collapse(const int* axes, int count, const BroadcastShape& b, int nops, const Axes* in, Axes& shape,
             std::array<Axes, kMaxKindOperands>& strides) {
  int n = 0;
  for (int i = 0; i < count; ++i) {
    auto a = static_cast<std::size_t>(axes[i]);
    std::int64_t extent = b.shape[a];
    if (extent == 1) continue;
    if (n > 0) {
      auto last = static_cast<std::size_t>(n - 1);
      bool merge = true;
      for (int k = 0; k < nops && merge; ++k) merge = strides[static_cast<std::size_t>(k)][last] == in[k][a] * extent;
      if (merge) {
        shape[last] *= extent;
        for (int k = 0; k < nops; ++k) strides[static_cast<std::size_t>(k)][last] = in[k][a];
        continue;
      }
    }
    shape[static_cast<std::size_t>(n)] = extent;
    for (int k = 0; k < nops; ++k) strides[static_cast<std::size_t>(k)][static_cast<std::size_t>(n)] = in[k][a];
    ++n;
  }
  return n;
}

// A group with no axis left becomes one axis of extent 1 (templates index at least one).
void at_least_one_axis(int& ndim, Axes& shape, std::array<Axes, kMaxKindOperands>& strides, int nops) {
  if (ndim > 0) return;
  ndim = 1;
  shape[0] = 1;
  for (int k = 0; k < nops; ++k) strides[static_cast<std::size_t>(k)][0] = 1;
}

bool unit_or_zero(std::int64_t s) { return s == 0 || s == 1; }

}  // namespace

std::int64_t BroadcastShape::size() const {
  std::int64_t n = 1;
  for (int a = 0; a < ndim; ++a) n *= shape[static_cast<std::size_t>(a)];
  return n;
}

bool broadcast(std::span<const LayoutOperand> operands, BroadcastShape& out) {
  out.ndim = 0;
  for (const LayoutOperand& op : operands)
    if (op.ndim > out.ndim) out.ndim = op.ndim;
  if (out.ndim > kMaxKindDims) return false;
  for (int a = 0; a < out.ndim; ++a) out.shape[static_cast<std::size_t>(a)] = 1;
  for (const LayoutOperand& op : operands) {
    int lead = out.ndim - op.ndim;
    for (int k = 0; k < op.ndim; ++k) {
      std::int64_t& b = out.shape[static_cast<std::size_t>(k + lead)];
      std::int64_t e = op.shape[k];
      if (e == b || e == 1) continue;
      if (b != 1) return false;
      b = e;
    }
  }
  // The nonzero extents must multiply to less than 2^63, as an array's do: every product
  // of extents taken later (sizes, strides of the outputs) then stays in range.
  std::int64_t n = 1;
  for (int a = 0; a < out.ndim; ++a) {
    std::int64_t e = out.shape[static_cast<std::size_t>(a)];
    if (e != 0 && __builtin_mul_overflow(n, e, &n))
      too_big_error(Shape(out.shape.begin(), out.shape.begin() + out.ndim));
  }
  return true;
}

bool ElementwiseLayout::contiguous() const {
  if (ndim == 0) return true;
  if (ndim > 1) return false;
  for (int k = 0; k < operands; ++k)
    if (strides[static_cast<std::size_t>(k)][0] != 1) return false;
  return true;
}

void elementwise_layout(std::span<const LayoutOperand> operands, const BroadcastShape& shape, ElementwiseLayout& out) {
  Axes in[kMaxKindOperands];
  int nops = static_cast<int>(operands.size());
  for (int k = 0; k < nops; ++k) aligned_strides(operands[static_cast<std::size_t>(k)], shape, in[k]);
  int axes[kMaxKindDims];
  for (int a = 0; a < shape.ndim; ++a) axes[a] = a;
  out.operands = nops;
  out.size = shape.size();
  out.ndim = collapse(axes, shape.ndim, shape, nops, in, out.shape, out.strides);
}

void reduction_layout(std::span<const LayoutOperand> inputs, std::span<const LayoutOperand> outputs,
                      const BroadcastShape& shape, std::span<const bool> reduced, bool keepdims, ReductionLayout& out) {
  int nin = static_cast<int>(inputs.size()), nout = static_cast<int>(outputs.size());
  int nops = nin + nout;
  out.inputs = nin;
  out.outputs = nout;
  Axes st[kMaxKindOperands];
  for (int k = 0; k < nin; ++k) aligned_strides(inputs[static_cast<std::size_t>(k)], shape, st[k]);
  int kept[kMaxKindDims], red[kMaxKindDims], nk = 0, nr = 0;
  for (int a = 0; a < shape.ndim; ++a) (reduced[static_cast<std::size_t>(a)] ? red[nr++] : kept[nk++]) = a;
  // An output's axes are the kept ones (keepdims: every axis, the reduced ones of size 1).
  for (int o = 0; o < nout; ++o) {
    const LayoutOperand& op = outputs[static_cast<std::size_t>(o)];
    Axes& s = st[nin + o];
    for (int a = 0; a < shape.ndim; ++a) s[static_cast<std::size_t>(a)] = 0;
    for (int p = 0; p < nk; ++p) {
      int axis = keepdims ? kept[p] : p;
      s[static_cast<std::size_t>(kept[p])] = op.shape[axis] == 1 ? 0 : op.strides[axis];
    }
  }
  out.rows = 1;
  for (int p = 0; p < nk; ++p) out.rows *= shape.shape[static_cast<std::size_t>(kept[p])];
  out.len = 1;
  for (int p = 0; p < nr; ++p) out.len *= shape.shape[static_cast<std::size_t>(red[p])];
  out.kept_ndim = collapse(kept, nk, shape, nops, st, out.kept_shape, out.kept_strides);
  at_least_one_axis(out.kept_ndim, out.kept_shape, out.kept_strides, nops);
  if (out.len == 0) {  // nothing to read: one empty axis
    out.reduced_ndim = 1;
    out.reduced_shape[0] = 0;
    for (int k = 0; k < nops; ++k) out.reduced_strides[static_cast<std::size_t>(k)][0] = 1;
  } else {
    out.reduced_ndim = collapse(red, nr, shape, nops, st, out.reduced_shape, out.reduced_strides);
    at_least_one_axis(out.reduced_ndim, out.reduced_shape, out.reduced_strides, nops);
  }

  auto inputs_unit = [&](const std::array<Axes, kMaxKindOperands>& strides) {
    for (int k = 0; k < nin; ++k)
      if (!unit_or_zero(strides[static_cast<std::size_t>(k)][0])) return false;
    return true;
  };
  bool rows = out.reduced_ndim == 1 && inputs_unit(out.reduced_strides);
  bool columns = out.kept_ndim == 1 && out.reduced_ndim == 1 && out.rows > 1 && inputs_unit(out.kept_strides);
  if (rows && (out.len > 1 || out.rows == 1)) out.strategy = ReductionStrategy::Rows;
  else if (columns) out.strategy = ReductionStrategy::Columns;
  else if (rows) out.strategy = ReductionStrategy::Rows;
  else out.strategy = ReductionStrategy::General;
}

}  // namespace luda::jit

#include "ops/routines.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "jit/call/call_args.h"
#include "ops/array_math.h"
#include "runtime/error.h"

namespace luda::ops {
namespace {

CUstream handle(const Stream* stream) { return stream ? stream->handle() : nullptr; }

// The view of x whose axis `axis` keeps [from, from + n).
NDArray part(const NDArray& x, int axis, std::int64_t from, std::int64_t n) {
  Shape shape = x.shape();
  shape[static_cast<std::size_t>(axis)] = n;
  const std::int64_t start = n > 0 ? x.offset() + from * x.strides()[static_cast<std::size_t>(axis)] : x.offset();
  return NDArray::view(x.buffer(), x.dtype(), shape, x.strides(), start);
}

// The k-th diagonal of the last two axes of x as a view (its last axis), and its length.
NDArray diagonal_view(const NDArray& x, std::int64_t k) {
  const int nd = x.ndim();
  const std::int64_t rows = x.shape()[static_cast<std::size_t>(nd - 2)],
                     cols = x.shape()[static_cast<std::size_t>(nd - 1)];
  const std::int64_t sr = x.strides()[static_cast<std::size_t>(nd - 2)],
                     sc = x.strides()[static_cast<std::size_t>(nd - 1)];
  const std::int64_t length = std::max<std::int64_t>(0, k >= 0 ? std::min(rows, cols - k) : std::min(rows + k, cols));
  Shape shape(x.shape().begin(), x.shape().end() - 2);
  Strides strides(x.strides().begin(), x.strides().end() - 2);
  shape.push_back(length);
  strides.push_back(sr + sc);
  std::int64_t start = x.offset();
  if (length > 0) start += k >= 0 ? k * sc : -k * sr;
  return NDArray::view(x.buffer(), x.dtype(), shape, strides, start);
}

// A rows x cols bool array: whether each element's column minus row passes `keep` (a
// comparison ufunc) against k.
NDArray diagonal_mask(std::int64_t rows, std::int64_t cols, std::int64_t k, const char* keep, Device device,
                      const Stream* stream) {
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) offsets[static_cast<std::size_t>(i * cols + j)] = j - i;
  const NDArray d = NDArray::from_host(offsets.data(), {rows, cols}, DType::Int64, device);
  std::array<jit::KernelArg, 2> compare = {jit::KernelArg::of_array(d), jit::KernelArg::of_int(k)};
  return apply(keep, compare, stream);
}

// x with the elements whose column minus row fails `keep` against k replaced by zeros.
NDArray triangle(const NDArray& x, std::int64_t k, const char* keep, std::string_view who, const Stream* stream) {
  if (!x.valid()) fail("{}: an empty handle", who);
  if (x.ndim() < 2) fail("{}: x must be at least 2-dimensional, got a {}-d array", who, x.ndim());
  const std::int64_t rows = x.shape()[x.shape().size() - 2], cols = x.shape().back();
  const NDArray mask = diagonal_mask(rows, cols, k, keep, x.device(), stream);
  // A zero of x's dtype (a typed scalar, which promotes as x does): a bool x stays bool.
  std::array<jit::KernelArg, 3> pick = {jit::KernelArg::of_array(mask), jit::KernelArg::of_array(x),
                                        jit::KernelArg::of_typed(Scalar::of_int(0).cast(x.dtype()))};
  return apply("where", pick, stream);
}

}  // namespace

NDArray concatenate(std::span<const NDArray> arrays, int axis, const Stream* stream) {
  if (arrays.empty()) fail("concatenate: need at least one array to concatenate");
  const NDArray& first = arrays[0];
  if (first.ndim() == 0) fail("concatenate: zero-dimensional arrays cannot be concatenated");
  if (axis < 0 || axis >= first.ndim())
    fail("concatenate: axis {} is out of range for {}-d arrays", axis + 1, first.ndim());
  DType dtype = first.dtype();
  std::int64_t total = 0;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& a = arrays[i];
    if (!a.valid()) fail("concatenate: the array at index {} is an empty handle", i + 1);
    if (a.ndim() != first.ndim())
      fail("concatenate: all the input arrays must have same number of dimensions, but the array at index 1 has {} "
           "dimension(s) and the array at index {} has {} dimension(s)",
           first.ndim(), i + 1, a.ndim());
    for (int d = 0; d < a.ndim(); ++d)
      if (d != axis && a.shape()[static_cast<std::size_t>(d)] != first.shape()[static_cast<std::size_t>(d)])
        fail("concatenate: all the input array dimensions except for the concatenation axis must match exactly, but "
             "along dimension {}, the array at index 1 has size {} and the array at index {} has size {}",
             d + 1, first.shape()[static_cast<std::size_t>(d)], i + 1, a.shape()[static_cast<std::size_t>(d)]);
    if (a.device() != first.device())
      fail("concatenate: the arrays are on {} and {}; join arrays of one device (move them with x:to(device))",
           first.device().str(), a.device().str());
    dtype = promote_types(dtype, a.dtype());
    total += a.shape()[static_cast<std::size_t>(axis)];
  }
  Shape shape = first.shape();
  shape[static_cast<std::size_t>(axis)] = total;
  NDArray out = NDArray::empty(shape, dtype, first.device(), stream);
  std::int64_t at = 0;
  for (const NDArray& a : arrays) {
    const std::int64_t n = a.shape()[static_cast<std::size_t>(axis)];
    if (n > 0 && a.size() > 0) part(out, axis, at, n).assign_on(a, handle(stream));
    at += n;
  }
  return out;
}

NDArray stack(std::span<const NDArray> arrays, int axis, const Stream* stream) {
  if (arrays.empty()) fail("stack: need at least one array to stack");
  std::vector<NDArray> expanded;
  for (const NDArray& a : arrays) {
    if (!a.valid()) fail("stack: an array is an empty handle");
    if (a.shape() != arrays[0].shape()) fail("stack: all input arrays must have the same shape");
    if (axis < 0 || axis > a.ndim())
      fail("stack: axis {} is out of range for stacking {}-d arrays (axes are 1 to {})", axis + 1, a.ndim(),
           a.ndim() + 1);
    expanded.push_back(expand_dims(a, axis));
  }
  return concatenate(expanded, axis, stream);
}

NDArray hstack(std::span<const NDArray> arrays, const Stream* stream) {
  if (arrays.empty()) fail("hstack: need at least one array to concatenate");
  std::vector<NDArray> at_least_1d;
  for (const NDArray& a : arrays) at_least_1d.push_back(a.valid() && a.ndim() == 0 ? a.reshape({1}) : a);
  return concatenate(at_least_1d, at_least_1d[0].ndim() == 1 ? 0 : 1, stream);
}

NDArray vstack(std::span<const NDArray> arrays, const Stream* stream) {
  if (arrays.empty()) fail("vstack: need at least one array to concatenate");
  std::vector<NDArray> at_least_2d;
  for (const NDArray& a : arrays) {
    if (a.valid() && a.ndim() == 0) at_least_2d.push_back(a.reshape({1, 1}));
    else if (a.valid() && a.ndim() == 1) at_least_2d.push_back(expand_dims(a, 0));
    else at_least_2d.push_back(a);
  }
  return concatenate(at_least_2d, 0, stream);
}

NDArray squeeze(const NDArray& x, const std::optional<std::vector<int>>& axes) {
  if (!x.valid()) fail("squeeze: an empty handle");
  Shape shape;
  Strides strides;
  for (int d = 0; d < x.ndim(); ++d) {
    const auto k = static_cast<std::size_t>(d);
    const bool chosen = !axes || std::find(axes->begin(), axes->end(), d) != axes->end();
    if (chosen && axes && x.shape()[k] != 1)
      fail("squeeze: cannot select an axis to squeeze out which has size not equal to one (axis {} has size {})", d + 1,
           x.shape()[k]);
    if (chosen && x.shape()[k] == 1) continue;
    shape.push_back(x.shape()[k]);
    strides.push_back(x.strides()[k]);
  }
  return NDArray::view(x.buffer(), x.dtype(), shape, strides, x.offset());
}

NDArray expand_dims(const NDArray& x, int axis) {
  if (!x.valid()) fail("expand_dims: an empty handle");
  if (axis < 0 || axis > x.ndim())
    fail("expand_dims: axis {} is out of range for a {}-d array (axes are 1 to {}, or negative from the end)", axis + 1,
         x.ndim(), x.ndim() + 1);
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape.insert(shape.begin() + axis, 1);
  strides.insert(strides.begin() + axis, 0);
  return NDArray::view(x.buffer(), x.dtype(), shape, strides, x.offset());
}

NDArray flip(const NDArray& x, const std::optional<std::vector<int>>& axes) {
  if (!x.valid()) fail("flip: an empty handle");
  Strides strides = x.strides();
  std::int64_t start = x.offset();
  for (int d = 0; d < x.ndim(); ++d) {
    const auto k = static_cast<std::size_t>(d);
    if (axes && std::find(axes->begin(), axes->end(), d) == axes->end()) continue;
    if (x.shape()[k] > 0) start += (x.shape()[k] - 1) * strides[k];
    strides[k] = -strides[k];
  }
  if (x.size() == 0) start = x.offset();
  return NDArray::view(x.buffer(), x.dtype(), x.shape(), strides, start);
}

NDArray moveaxis(const NDArray& x, int from, int to) {
  LUDA_INTERNAL_CHECK(x.valid() && from >= 0 && from < x.ndim() && to >= 0 && to < x.ndim());
  std::vector<int> order;
  for (int d = 0; d < x.ndim(); ++d)
    if (d != from) order.push_back(d);
  order.insert(order.begin() + to, from);
  return x.transpose(order);
}

NDArray eye(std::int64_t n, std::int64_t m, std::int64_t k, DType dtype, Device device) {
  if (n < 0 || m < 0) fail("eye: negative dimensions are not allowed ({} x {})", n, m);
  NDArray out = NDArray::zeros({n, m}, dtype, device);
  NDArray d = diagonal_view(out, k);
  if (d.size() > 0) d.fill(Scalar::of_int(1, dtype));
  return out;
}

NDArray tri(std::int64_t n, std::int64_t m, std::int64_t k, DType dtype, Device device) {
  if (n < 0 || m < 0) fail("tri: negative dimensions are not allowed ({} x {})", n, m);
  const NDArray mask = diagonal_mask(n, m, k, "less_equal", device, nullptr);
  return dtype == DType::Bool ? mask : mask.astype(dtype);
}

NDArray diag(const NDArray& v, std::int64_t k, const Stream* stream) {
  if (!v.valid()) fail("diag: an empty handle");
  if (v.ndim() == 1) {
    const std::int64_t n = v.shape()[0] + (k < 0 ? -k : k);
    NDArray out = NDArray::zeros({n, n}, v.dtype(), v.device(), stream);
    NDArray d = diagonal_view(out, k);
    if (d.size() > 0) d.assign_on(v, handle(stream));
    return out;
  }
  if (v.ndim() == 2) return diagonal_view(v, k).copy(std::nullopt, stream);
  fail("diag: Input must be 1- or 2-d.");
}

NDArray tril(const NDArray& x, std::int64_t k, const Stream* stream) {
  return triangle(x, k, "less_equal", "tril", stream);
}
NDArray triu(const NDArray& x, std::int64_t k, const Stream* stream) {
  return triangle(x, k, "greater_equal", "triu", stream);
}

namespace {

NDArray apply2(std::string_view name, const jit::KernelArg& a, const jit::KernelArg& b, const Stream* stream) {
  std::array<jit::KernelArg, 2> in = {a, b};
  return apply(name, in, stream);
}
NDArray apply1(std::string_view name, const jit::KernelArg& a, const Stream* stream) {
  std::array<jit::KernelArg, 1> in = {a};
  return apply(name, in, stream);
}
jit::KernelArg arg(const NDArray& a) { return jit::KernelArg::of_array(a); }

NDArray nonzero(const NDArray& x, const Stream* stream) {
  return apply2("not_equal", arg(x), jit::KernelArg::of_int(0), stream);
}

void require_axis(const NDArray& x, int axis, std::string_view who) {
  if (!x.valid()) fail("{}: an empty handle", who);
  if (axis < 0 || axis >= x.ndim()) fail("{}: axis {} is out of range for a {}-d array", who, axis + 1, x.ndim());
}

}  // namespace

std::vector<NDArray> split_at(const NDArray& x, const std::vector<std::int64_t>& indices, int axis) {
  require_axis(x, axis, "split");
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  std::vector<NDArray> parts;
  std::int64_t from = 0;
  for (std::size_t i = 0; i <= indices.size(); ++i) {
    std::int64_t to = i < indices.size() ? indices[i] : n;
    if (to < 0) to += n;
    to = std::clamp<std::int64_t>(to, 0, n);
    const std::int64_t start = std::min(from, n);
    parts.push_back(part(x, axis, start, std::max<std::int64_t>(0, to - start)));
    from = std::max(from, to);
  }
  return parts;
}

std::vector<NDArray> split(const NDArray& x, std::int64_t sections, int axis) {
  require_axis(x, axis, "split");
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  if (sections <= 0) fail("split: number sections must be larger than 0, got {}", sections);
  if (n % sections != 0)
    fail("split: array split does not result in an equal division: {} elements into {} sections", n, sections);
  std::vector<std::int64_t> cuts;
  for (std::int64_t i = 1; i < sections; ++i) cuts.push_back(i * (n / sections));
  return split_at(x, cuts, axis);
}

NDArray repeat(const NDArray& x, std::int64_t repeats, std::optional<int> axis, const Stream* stream) {
  if (!x.valid()) fail("repeat: an empty handle");
  if (repeats < 0) fail("repeat: negative dimensions are not allowed (repeats {})", repeats);
  const NDArray src = axis ? x : x.reshape({x.size()});
  const int a = axis.value_or(0);
  require_axis(src, a, "repeat");
  // Each element followed by a new axis of `repeats` copies (stride 0), copied and merged.
  Shape shape = src.shape();
  Strides strides = src.strides();
  shape.insert(shape.begin() + a + 1, repeats);
  strides.insert(strides.begin() + a + 1, 0);
  const NDArray wide = NDArray::view(src.buffer(), src.dtype(), shape, strides, src.offset());
  Shape merged = src.shape();
  merged[static_cast<std::size_t>(a)] *= repeats;
  return wide.copy(std::nullopt, stream).reshape(merged);
}

NDArray tile(const NDArray& x, const std::vector<std::int64_t>& reps, const Stream* stream) {
  if (!x.valid()) fail("tile: an empty handle");
  for (std::int64_t r : reps)
    if (r < 0) fail("tile: negative dimensions are not allowed (reps {})", r);
  const std::size_t nd = std::max(reps.size(), static_cast<std::size_t>(x.ndim()));
  Shape xs(nd - static_cast<std::size_t>(x.ndim()), 1);
  xs.insert(xs.end(), x.shape().begin(), x.shape().end());
  Strides xt(nd - static_cast<std::size_t>(x.ndim()), 0);
  xt.insert(xt.end(), x.strides().begin(), x.strides().end());
  std::vector<std::int64_t> r(nd - reps.size(), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  // Axes (r0, n0, r1, n1, ...): each repetition a stride-0 axis before its axis.
  Shape shape, result;
  Strides strides;
  for (std::size_t k = 0; k < nd; ++k) {
    shape.push_back(r[k]);
    strides.push_back(0);
    shape.push_back(xs[k]);
    strides.push_back(xt[k]);
    result.push_back(r[k] * xs[k]);
  }
  const NDArray wide = NDArray::view(x.buffer(), x.dtype(), shape, strides, x.offset());
  return wide.copy(std::nullopt, stream).reshape(result);
}

NDArray roll(const NDArray& x, std::int64_t shift, std::optional<int> axis, const Stream* stream) {
  if (!x.valid()) fail("roll: an empty handle");
  if (!axis) return roll(x.reshape({x.size()}), shift, 0, stream).reshape(x.shape());
  require_axis(x, *axis, "roll");
  const std::int64_t n = x.shape()[static_cast<std::size_t>(*axis)];
  if (n == 0) return x.copy(std::nullopt, stream);
  const std::int64_t s = ((shift % n) + n) % n;
  const std::array<NDArray, 2> halves = {part(x, *axis, n - s, s), part(x, *axis, 0, n - s)};
  return concatenate(halves, *axis, stream);
}

NDArray diff(const NDArray& x, std::int64_t n, int axis, const Stream* stream) {
  if (n < 0) fail("diff: order must be non-negative but got {}", n);
  require_axis(x, axis, "diff");
  NDArray out = x;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t len = out.shape()[static_cast<std::size_t>(axis)];
    if (len == 0) break;
    const NDArray later = part(out, axis, 1, len - 1), earlier = part(out, axis, 0, len - 1);
    out = apply2(out.dtype() == DType::Bool ? "not_equal" : "subtract", arg(later), arg(earlier), stream);
  }
  return n == 0 ? x.copy(std::nullopt, stream) : out;
}

NDArray isclose(const jit::KernelArg& a, const jit::KernelArg& b, double rtol, double atol, bool equal_nan,
                const Stream* stream) {
  // equal (infinities of one sign included), or both finite and within the tolerance
  const NDArray same = apply2("equal", a, b, stream);
  const NDArray gap = apply1("abs", arg(apply2("subtract", a, b, stream)), stream);
  const NDArray allowed =
      apply2("add", jit::KernelArg::of_float(atol),
             arg(apply2("multiply", jit::KernelArg::of_float(rtol), arg(apply1("abs", b, stream)), stream)), stream);
  const NDArray near = apply2("logical_and", arg(apply2("less_equal", arg(gap), arg(allowed), stream)),
                              arg(apply2("logical_and", arg(apply1("isfinite", a, stream)),
                                         arg(apply1("isfinite", b, stream)), stream)),
                              stream);
  NDArray close = apply2("logical_or", arg(same), arg(near), stream);
  if (equal_nan)
    close = apply2("logical_or", arg(close),
                   arg(apply2("logical_and", arg(apply1("isnan", a, stream)), arg(apply1("isnan", b, stream)), stream)),
                   stream);
  return close;
}

NDArray any(const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims, const Stream* stream) {
  if (!x.valid()) fail("any: an empty handle");
  // any: some nonzero among them (false for none), counted
  const NDArray count = reduce(Reduce::Sum, nonzero(x, stream), axes, keepdims, {}, stream);
  return apply2("not_equal", arg(count), jit::KernelArg::of_int(0), stream);
}

NDArray all(const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims, const Stream* stream) {
  if (!x.valid()) fail("all: an empty handle");
  // all: no zero among them (true for none), counted
  const NDArray zeros = apply2("equal", arg(x), jit::KernelArg::of_int(0), stream);
  const NDArray count = reduce(Reduce::Sum, zeros, axes, keepdims, {}, stream);
  return apply2("equal", arg(count), jit::KernelArg::of_int(0), stream);
}

NDArray count_nonzero(const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims,
                      const Stream* stream) {
  if (!x.valid()) fail("count_nonzero: an empty handle");
  ReduceOptions o;
  o.dtype = DType::Int64;
  return reduce(Reduce::Sum, nonzero(x, stream), axes, keepdims, {}, stream, o);
}

std::vector<NDArray> meshgrid(std::span<const NDArray> xs, bool xy, const Stream* stream) {
  const std::size_t n = xs.size();
  Shape shape;
  for (const NDArray& x : xs) {
    if (!x.valid()) fail("meshgrid: an empty handle");
    shape.push_back(x.size());
  }
  if (xy && n >= 2) std::swap(shape[0], shape[1]);
  std::vector<NDArray> out;
  for (std::size_t i = 0; i < n; ++i) {
    const NDArray flat = xs[i].reshape({xs[i].size()});
    std::size_t along = i;
    if (xy && n >= 2 && i < 2) along = 1 - i;
    Strides strides(n, 0);
    strides[along] = flat.strides()[0];
    const NDArray wide = NDArray::view(flat.buffer(), flat.dtype(), shape, strides, flat.offset());
    out.push_back(wide.copy(std::nullopt, stream));
  }
  return out;
}

}  // namespace luda::ops

#include "ops/routines.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "jit/kernel_args.h"
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
  const std::int64_t rows = x.shape()[static_cast<std::size_t>(nd - 2)], cols = x.shape()[static_cast<std::size_t>(nd - 1)];
  const std::int64_t sr = x.strides()[static_cast<std::size_t>(nd - 2)], sc = x.strides()[static_cast<std::size_t>(nd - 1)];
  const std::int64_t length = std::max<std::int64_t>(0, k >= 0 ? std::min(rows, cols - k) : std::min(rows + k, cols));
  Shape shape(x.shape().begin(), x.shape().end() - 2);
  Strides strides(x.strides().begin(), x.strides().end() - 2);
  shape.push_back(length);
  strides.push_back(sr + sc);
  std::int64_t start = x.offset();
  if (length > 0) start += k >= 0 ? k * sc : -k * sr;
  return NDArray::view(x.buffer(), x.dtype(), shape, strides, start);
}

// x with the elements whose column minus row fails `keep` against k replaced by zeros.
NDArray triangle(const NDArray& x, std::int64_t k, const char* keep, std::string_view who, const Stream* stream) {
  if (!x.valid()) fail("{}: an empty handle", who);
  if (x.ndim() < 2) fail("{}: x must be at least 2-dimensional, got a {}-d array", who, x.ndim());
  const std::int64_t rows = x.shape()[x.shape().size() - 2], cols = x.shape().back();
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) offsets[static_cast<std::size_t>(i * cols + j)] = j - i;
  const NDArray d = NDArray::from_host(offsets.data(), {rows, cols}, DType::Int64, x.device());
  std::array<jit::KernelArg, 2> compare = {jit::KernelArg::of_array(d), jit::KernelArg::of_int(k)};
  const NDArray mask = apply(keep, compare, stream);
  std::array<jit::KernelArg, 3> pick = {jit::KernelArg::of_array(mask), jit::KernelArg::of_array(x),
                                        jit::KernelArg::of_int(0)};
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

NDArray eye(std::int64_t n, std::int64_t m, std::int64_t k, DType dtype, Device device) {
  if (n < 0 || m < 0) fail("eye: negative dimensions are not allowed ({} x {})", n, m);
  NDArray out = NDArray::zeros({n, m}, dtype, device);
  NDArray d = diagonal_view(out, k);
  if (d.size() > 0) d.fill(Scalar::of_int(1, dtype));
  return out;
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

}  // namespace luda::ops

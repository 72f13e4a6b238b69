#include "ops/sorting.h"

#include <array>
#include <string_view>

#include "jit/call/call_args.h"
#include "jit/kinds/make.h"
#include "ops/cumulative.h"
#include "ops/device/sort.h"
#include "ops/routines.h"
#include "runtime/error.h"

namespace luda::ops {

// The kinds' frontends (jit/kinds/frontend.h, jit/kinds/make.h) that this file builds on.
using jit::ElementwiseMade;
using jit::call_elementwise;
using jit::make_elementwise;

namespace {

CUstream handle(const Stream* stream) { return stream ? stream->handle() : nullptr; }

void require_sortable(const NDArray& x, std::string_view who) {
  if (!x.valid()) fail("{}: the array is an empty handle", who);
  const DType t = x.dtype();
  if (t != DType::Bool && !is_integer(t) && !is_float(t) && !is_complex(t))
    fail("{}: {} arrays are not supported", who, dtype_name(t));
}

// x's elements as the rows the sort kernels take: a C-contiguous copy with `axis` moved
// last (`data`), and the same as a 2-D view (rows, length) (`rows`); the flattened array
// is one row.
struct Rows {
  NDArray data, rows;
};
Rows rows_of(const NDArray& x, std::optional<int> axis, const Stream* stream) {
  const NDArray ordered = axis ? moveaxis(x, *axis, x.ndim() - 1) : x;
  NDArray data = ordered.copy(std::nullopt, stream);
  const std::int64_t len = axis ? x.shape()[static_cast<std::size_t>(*axis)] : x.size();
  const NDArray rows = data.reshape({len == 0 ? 0 : x.size() / len, len});
  return {std::move(data), rows};
}

// An array laid out as rows_of's `data` (axis last), in x's order: C-contiguous.
NDArray put_back(const NDArray& data, const NDArray& x, std::optional<int> axis, const Stream* stream) {
  if (!axis) return data.reshape({x.size()});
  if (*axis == x.ndim() - 1) return data;
  return moveaxis(data, x.ndim() - 1, *axis).copy(std::nullopt, stream);
}

// unique's steps, as elementwise kinds made once per process. `starts`: whether each
// sorted key begins a run of equal ones (NaNs equal when e, NumPy 2's equal_nan).
const ElementwiseMade& run_starts() {
  static const ElementwiseMade k = make_elementwise(
      "raw T s, bool e", "bool f",
      "f = i == 0 or (s[i] ~= s[i - 1] and (not e or s[i] == s[i] or s[i - 1] == s[i - 1]))", "unique_starts", {});
  return k;
}
// The element of each run's first key, to its run's place (p: the run's 1-based number).
const ElementwiseMade& run_firsts() {
  static const ElementwiseMade k = make_elementwise("T v, bool f, int64 p", "raw T u", "if f then u[p - 1] = v end",
                                                    "unique_firsts", {});
  return k;
}
// The position in the sorted keys of each run's first key, to its run's place.
const ElementwiseMade& run_bounds() {
  static const ElementwiseMade k = make_elementwise("bool f, int64 p", "raw int64 b", "if f then b[p - 1] = i end",
                                                    "unique_bounds", {});
  return k;
}
// For each sorted key, its run's 0-based place, to its position j in x.
const ElementwiseMade& run_places() {
  static const ElementwiseMade k = make_elementwise("int64 j, int64 p", "raw int64 v", "v[j] = p - 1", "unique_inverse",
                                                    {});
  return k;
}

void call(const ElementwiseMade& k, std::span<jit::KernelArg> args, const NDArray& out, const Stream* stream) {
  std::array<NDArray, 1> outs = {out};
  call_elementwise(*k.state, *k.kind, args, args.size() - 1, outs, true, std::nullopt, stream);
}

}  // namespace

NDArray sort(const NDArray& x, std::optional<int> axis, const Stream* stream) {
  require_sortable(x, "sort");
  LUDA_INTERNAL_CHECK(!axis || (*axis >= 0 && *axis < x.ndim()));
  const Rows r = rows_of(x, axis, stream);
  ops::device::sort_rows(r.rows, {}, stream);
  return put_back(r.data, x, axis, stream);
}

void sort_in_place(const NDArray& x, int axis, const Stream* stream) {
  NDArray(x).assign_on(sort(x, axis, stream), handle(stream));
}

NDArray argsort(const NDArray& x, std::optional<int> axis, const Stream* stream) {
  require_sortable(x, "argsort");
  LUDA_INTERNAL_CHECK(!axis || (*axis >= 0 && *axis < x.ndim()));
  const Rows r = rows_of(x, axis, stream);
  const NDArray index = NDArray::empty(r.data.shape(), DType::Int64, x.device(), stream);
  ops::device::sort_rows(r.rows, index.reshape(r.rows.shape()), stream);
  return put_back(index, x, axis, stream);
}

Unique unique(const NDArray& x, bool index, bool inverse, bool counts, bool equal_nan, const Stream* stream) {
  require_sortable(x, "unique");
  const std::int64_t n = x.size();
  const Device device = x.device();
  const NDArray keys = x.copy(std::nullopt, stream).reshape({n});
  // Where each sorted key came from, when asked for.
  const NDArray order = index || inverse ? NDArray::empty({n}, DType::Int64, device, stream) : NDArray();
  Unique u;
  if (n == 0) {
    u.values = keys;
    if (index) u.index = order;
    if (inverse) u.inverse = NDArray::empty(x.shape(), DType::Int64, device, stream);
    if (counts) u.counts = NDArray::empty({0}, DType::Int64, device, stream);
    return u;
  }
  ops::device::sort_rows(keys.reshape({1, n}), order.valid() ? order.reshape({1, n}) : NDArray(), stream);
  const NDArray starts = NDArray::empty({n}, DType::Bool, device, stream);
  {
    std::array<jit::KernelArg, 3> args = {jit::KernelArg::of_array(keys), jit::KernelArg::of_bool(equal_nan)};
    call(run_starts(), args, starts, stream);
  }
  const NDArray place = cumulative(Cumulative::Sum, starts, 0, std::nullopt, {}, stream);
  if (stream) stream->synchronize();  // the count is read through the default stream
  const std::int64_t distinct = place.get(std::array<std::int64_t, 1>{n - 1}).to_int64();
  u.values = NDArray::empty({distinct}, x.dtype(), device, stream);
  {
    std::array<jit::KernelArg, 4> args = {jit::KernelArg::of_array(keys), jit::KernelArg::of_array(starts),
                                          jit::KernelArg::of_array(place)};
    call(run_firsts(), args, u.values, stream);
  }
  if (index) {
    u.index = NDArray::empty({distinct}, DType::Int64, device, stream);
    std::array<jit::KernelArg, 4> args = {jit::KernelArg::of_array(order), jit::KernelArg::of_array(starts),
                                          jit::KernelArg::of_array(place)};
    call(run_firsts(), args, u.index, stream);
  }
  if (inverse) {
    const NDArray flat = NDArray::empty({n}, DType::Int64, device, stream);
    std::array<jit::KernelArg, 3> args = {jit::KernelArg::of_array(order), jit::KernelArg::of_array(place)};
    call(run_places(), args, flat, stream);
    u.inverse = flat.reshape(x.shape());
  }
  if (counts) {
    // Each run's first position, and n after the last: their differences.
    NDArray bounds = NDArray::empty({distinct + 1}, DType::Int64, device, stream);
    if (stream) stream->synchronize();  // set() writes through the default stream
    bounds.set(std::array<std::int64_t, 1>{distinct}, Scalar::of_int(n));
    std::array<jit::KernelArg, 3> args = {jit::KernelArg::of_array(starts), jit::KernelArg::of_array(place)};
    call(run_bounds(), args, bounds, stream);
    u.counts = diff(bounds, 1, 0, stream);
  }
  return u;
}

}  // namespace luda::ops

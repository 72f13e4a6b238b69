#include "ops/indexing.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>

#include "jit/call/call_args.h"
#include "ops/array_math.h"
#include "ops/routines.h"
#include "runtime/error.h"
#include "runtime/graph/recording.h"

namespace luda::ops {
namespace {

constexpr std::int64_t kNoBadIndex = std::numeric_limits<std::int64_t>::max();

// One index array of an advanced index, and the axis of x it indexes.
struct IndexArray {
  NDArray index;  // an integer dtype, on x's device
  int axis;       // x's axis, 0-based (messages)
  std::int64_t extent, stride;
};

// What x[index] reads: the basic dimensions (slices, newaxis, '...', axes not reached)
// from a first element, and the advanced index's broadcast dimensions placed among them.
struct Plan {
  NDArray x;
  NDArray view;  // the basic index applied, advanced axes whole: its offset is the first element
  Shape shape;   // the basic dimensions in order
  Strides strides;
  bool advanced = false;
  std::vector<IndexArray> arrays;
  std::vector<Shape> shapes;  // the shapes NumPy broadcasts together, in order (for the message)
  std::size_t insert_at = 0;  // where the broadcast dimensions go among the basic ones ...
  bool adjacent = true;       // ... when the advanced items stand next to each other
  Shape broadcast;
  // The result: its shape, and per dimension the stride in x and in the offsets.
  Shape result;
  Strides x_strides, off_strides;
  NDArray off;  // int64 of `broadcast` (or one 0 when there is no index array)
};

// An index as the error names it: uint64 as the int64 it is read as.
std::string value_text(const Scalar& s) { return fmt::format("{}", s.to_int64()); }

Shape unravel(std::int64_t flat, const Shape& shape) {
  Shape c(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    c[k] = flat % shape[k];
    flat /= shape[k];
  }
  return c;
}

// NumPy's broadcast of the index arrays' shapes, with its message.
Shape broadcast_all(const std::vector<Shape>& shapes, std::string_view who) {
  Shape out;
  for (const Shape& s : shapes) {
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    const std::size_t lead = out.size() - s.size();
    for (std::size_t k = 0; k < s.size(); ++k) {
      std::int64_t& o = out[lead + k];
      if (o == s[k] || s[k] == 1) continue;
      if (o == 1) {
        o = s[k];
        continue;
      }
      std::string listed;
      for (const Shape& t : shapes) listed += (listed.empty() ? "" : " ") + shape_str(t);
      fail("{}shape mismatch: indexing arrays could not be broadcast together with shapes {}", who, listed);
    }
  }
  return out;
}

// Checks the items and reads x's basic part: everything up to the offsets.
Plan plan_index(const NDArray& x, std::span<const Index> given, IndexMode mode, std::string_view who) {
  if (!x.valid()) fail("{}an empty array handle cannot be indexed", who);
  Plan p;
  p.x = x;
  // A 0-d integer array is an integer that makes the index advanced, as NumPy reads it:
  // checked against its axis even where the result has no elements (take's other modes
  // leave it to the kernel, which wraps or clips).
  std::vector<Index> index(given.begin(), given.end());
  for (Index& item : index) {
    if (mode != IndexMode::Raise) break;
    const auto* a = std::get_if<NDArray>(&item);
    if (!a || !a->valid() || a->ndim() != 0 || !is_integer(a->dtype())) continue;
    GraphRecording::refuse_if_recording("indexing with an array");
    item = a->get({}).to_int64();  // uint64 as the int64 of its bits, as the kernel reads it
    p.advanced = true;
  }
  int consumed = 0, ellipses = 0;
  for (const Index& item : index) {
    if (std::holds_alternative<std::int64_t>(item) || std::holds_alternative<Slice>(item)) {
      ++consumed;
    } else if (std::holds_alternative<Ellipsis>(item)) {
      ++ellipses;
    } else if (std::holds_alternative<bool>(item)) {
      p.advanced = true;
    } else if (const auto* a = std::get_if<NDArray>(&item)) {
      if (!a->valid()) fail("{}an empty array handle cannot be an index", who);
      if (a->dtype() == DType::Bool) consumed += a->ndim();
      else if (is_integer(a->dtype())) ++consumed;
      else fail("{}arrays used as indices must be of integer (or boolean) type", who);
      p.advanced = true;
    }
  }
  if (ellipses > 1) fail("{}an index can only have a single ellipsis ('...')", who);
  if (consumed > x.ndim())
    fail("{}too many indices for array: array is {}-dimensional, but {} were indexed", who, x.ndim(), consumed);
  const int whole = x.ndim() - consumed;  // the axes '...' stands for

  // Masks against the axes they index, before the integers are checked (NumPy's order).
  int at = 0;
  for (const Index& item : index) {
    if (std::holds_alternative<std::int64_t>(item) || std::holds_alternative<Slice>(item)) ++at;
    else if (std::holds_alternative<Ellipsis>(item)) at += whole;
    if (const auto* a = std::get_if<NDArray>(&item)) {
      if (a->dtype() != DType::Bool) {
        ++at;
        continue;
      }
      for (int j = 0; j < a->ndim(); ++j) {
        const std::int64_t have = x.shape()[static_cast<std::size_t>(at + j)];
        const std::int64_t got = a->shape()[static_cast<std::size_t>(j)];
        if (have != got)
          fail("{}boolean index did not match indexed array along axis {}; size of axis is {} but size of "
               "corresponding boolean axis is {}",
               who, at + j, have, got);
      }
      at += a->ndim();
    }
  }

  // The basic index over x's axes (advanced ones whole), which checks the integers.
  std::vector<IndexItem> basic;
  for (const Index& item : index) {
    if (const auto* i = std::get_if<std::int64_t>(&item)) basic.emplace_back(*i);
    else if (const auto* s = std::get_if<Slice>(&item)) basic.emplace_back(*s);
    else if (std::holds_alternative<Ellipsis>(item))
      basic.insert(basic.end(), static_cast<std::size_t>(whole), Slice{});
    else if (const auto* a = std::get_if<NDArray>(&item))
      basic.insert(basic.end(), a->dtype() == DType::Bool ? static_cast<std::size_t>(a->ndim()) : 1, Slice{});
  }
  if (who.empty()) {
    p.view = x.index(basic);
  } else {
    try {
      p.view = x.index(basic);
    } catch (const Error& e) {
      fail("{}{}", who, e.what());
    }
  }
  const NDArray& v = p.view;

  int ax = 0, vax = 0;  // the next axis of x, and of the view
  bool seen = false, separated = false;
  auto basic_dim = [&](std::int64_t extent, std::int64_t stride) {
    p.shape.push_back(extent);
    p.strides.push_back(stride);
    if (seen) separated = true;
  };
  auto advanced_item = [&] {
    if (!seen) p.insert_at = p.shape.size();
    else if (separated) p.adjacent = false;
    seen = true;
  };
  auto view_dim = [&] {
    basic_dim(v.shape()[static_cast<std::size_t>(vax)], v.strides()[static_cast<std::size_t>(vax)]);
    ++vax;
    ++ax;
  };
  for (const Index& item : index) {
    if (std::holds_alternative<std::int64_t>(item)) {
      if (p.advanced) advanced_item();  // a 0-d index array among arrays
      ++ax;
    } else if (std::holds_alternative<Slice>(item)) {
      view_dim();
    } else if (std::holds_alternative<NewAxis>(item)) {
      basic_dim(1, 0);
    } else if (std::holds_alternative<Ellipsis>(item)) {
      if (seen) separated = true;  // even standing for no axis, as NumPy counts it
      for (int k = 0; k < whole; ++k) view_dim();
    } else if (const bool* b = std::get_if<bool>(&item)) {
      advanced_item();
      p.shapes.push_back({*b ? 1 : 0});
    } else {
      const NDArray& a = std::get<NDArray>(item);
      advanced_item();
      if (a.dtype() == DType::Bool && a.ndim() == 0) {
        GraphRecording::refuse_if_recording("indexing with a boolean array");
        p.shapes.push_back({a.get({}).to_int64() != 0 ? 1 : 0});
        continue;
      }
      if (a.dtype() == DType::Bool) {
        const std::vector<NDArray> columns = nonzero(a.to(x.device()));
        for (int j = 0; j < a.ndim(); ++j) {
          const auto at = static_cast<std::size_t>(vax + j);
          p.arrays.push_back({columns[static_cast<std::size_t>(j)], ax + j, v.shape()[at], v.strides()[at]});
          p.shapes.push_back(columns[static_cast<std::size_t>(j)].shape());
        }
        ax += a.ndim();
        vax += a.ndim();
      } else {
        const auto at = static_cast<std::size_t>(vax);
        p.arrays.push_back({a.to(x.device()), ax, v.shape()[at], v.strides()[at]});
        if (a.ndim() > 0) p.shapes.push_back(a.shape());  // a 0-d one, as an integer, goes unnamed
        ++ax;
        ++vax;
      }
    }
  }
  while (vax < v.ndim()) view_dim();
  return p;
}

// The result's layout (NumPy's placement of the broadcast dimensions), then the offsets
// of the index arrays, bounds checked (or wrapped or clipped) on the device.
void place_and_offset(Plan& p, IndexMode mode, std::string_view who) {
  GraphRecording::refuse_if_recording("indexing with an array");
  p.broadcast = broadcast_all(p.shapes, who);
  const Shape& b = p.broadcast;
  const Strides bs = c_strides(b);
  const std::size_t at = p.adjacent ? p.insert_at : 0;
  for (std::size_t k = 0; k <= p.shape.size(); ++k) {
    if (k == at) {
      for (std::size_t j = 0; j < b.size(); ++j) {
        p.result.push_back(b[j]);
        p.x_strides.push_back(0);
        p.off_strides.push_back(bs[j]);
      }
    }
    if (k == p.shape.size()) break;
    p.result.push_back(p.shape[k]);
    p.x_strides.push_back(p.strides[k]);
    p.off_strides.push_back(0);
  }
  const Device device = p.x.device();
  if (p.arrays.empty()) {
    p.off = NDArray::zeros({}, DType::Int64, device);
    std::fill(p.off_strides.begin(), p.off_strides.end(), 0);
    return;
  }
  p.off = NDArray::empty(b, DType::Int64, device);
  std::int64_t count = 1;
  for (std::int64_t e : b) count *= e;
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(p.arrays.size());
  const NDArray bad = NDArray::full({n}, Scalar::of_int(kNoBadIndex), DType::Int64, device);
  for (std::int64_t k = 0; k < n; ++k) {
    const IndexArray& a = p.arrays[static_cast<std::size_t>(k)];
    const std::int64_t extent[] = {a.extent}, stride[] = {a.stride};
    ops::device::index_offsets(p.off, a.index, broadcast_strides(a.index, b), extent, stride, mode, k > 0,
                               NDArray::view(bad.buffer(), DType::Int64, {1}, {1}, bad.offset() + k));
  }
  if (mode != IndexMode::Raise) return;
  const std::vector<std::byte> found = bad.to_host_bytes();  // waits for the device
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t position = 0;
    std::memcpy(&position, found.data() + k * 8, 8);
    if (position == kNoBadIndex) continue;
    const IndexArray& a = p.arrays[static_cast<std::size_t>(k)];
    const NDArray spread = NDArray::view(a.index.buffer(), a.index.dtype(), b, broadcast_strides(a.index, b),
                                         a.index.offset());
    fail("{}index {} is out of bounds for axis {} with size {}", who, value_text(spread.get(unravel(position, b))),
         a.axis, a.extent);
  }
}

// The first element the plan reads, as a 0-d view.
NDArray base_of(const Plan& p) { return NDArray::view(p.view.buffer(), p.view.dtype(), {}, {}, p.view.offset()); }

NDArray gather(Plan& p, IndexMode mode, std::string_view who) {
  place_and_offset(p, mode, who);
  NDArray out = NDArray::empty(p.result, p.x.dtype(), p.x.device());
  if (out.size() == 0) return out;
  ops::device::gather(out, base_of(p), p.off, p.result, p.x_strides, p.off_strides);
  return out;
}

// An integer array for take and put: bools count as 0 and 1, as NumPy's cast gives them.
NDArray integer_indices(const NDArray& indices, std::string_view who) {
  if (!indices.valid()) fail("{}: indices is an empty array handle", who);
  if (indices.dtype() == DType::Bool) return indices.astype(DType::Int64);
  if (!is_integer(indices.dtype()))
    fail("{}: indices must be integers, got a {} array", who, dtype_name(indices.dtype()));
  return indices;
}

// The view a basic index gives. One with no elements starts at the buffer's start: the
// offset the slices reached may lie past an empty buffer.
NDArray basic_view(const Plan& p) {
  std::int64_t n = 1;
  for (std::int64_t e : p.shape) n *= e;
  return NDArray::view(p.view.buffer(), p.view.dtype(), p.shape, p.strides, n > 0 ? p.view.offset() : 0);
}

}  // namespace

bool is_basic(std::span<const Index> index) {
  for (const Index& item : index)
    if (std::holds_alternative<bool>(item) || std::holds_alternative<NDArray>(item)) return false;
  return true;
}

NDArray get_item(const NDArray& x, std::span<const Index> index) {
  Plan p = plan_index(x, index, IndexMode::Raise, "");
  if (!p.advanced) return basic_view(p);
  return gather(p, IndexMode::Raise, "");
}

void set_item(const NDArray& x, std::span<const Index> index, const NDArray& value) {
  Plan p = plan_index(x, index, IndexMode::Raise, "");
  if (!p.advanced) {
    basic_view(p).assign(value);
    return;
  }
  place_and_offset(p, IndexMode::Raise, "");
  NDArray v = value;
  if (!v.valid()) fail("cannot assign an empty array handle");
  // Leading extent-1 axes past the result's rank go, as NumPy drops them.
  while (v.ndim() > static_cast<int>(p.result.size()) && v.shape()[0] == 1)
    v = NDArray::view(v.buffer(), v.dtype(), Shape(v.shape().begin() + 1, v.shape().end()),
                      Strides(v.strides().begin() + 1, v.strides().end()), v.offset());
  bool fits = v.ndim() <= static_cast<int>(p.result.size());
  for (int k = 1; fits && k <= v.ndim(); ++k) {
    const std::int64_t e = v.shape()[static_cast<std::size_t>(v.ndim() - k)];
    fits = e == 1 || e == p.result[p.result.size() - static_cast<std::size_t>(k)];
  }
  if (!fits)
    fail("shape mismatch: value array of shape {} could not be broadcast to indexing result of shape {}",
         shape_str(v.shape()), shape_str(p.result));
  std::int64_t count = 1;
  for (std::int64_t e : p.result) count *= e;
  if (count == 0) return;
  if (v.device() != x.device()) v = v.to(x.device());
  if (v.dtype() != x.dtype()) v = v.astype(x.dtype());
  else if (may_share_memory(v, x)) v = v.copy();  // read whole before any write
  ops::device::scatter(base_of(p), v, p.off, p.result, p.x_strides, p.off_strides, broadcast_strides(v, p.result));
}

NDArray take(const NDArray& x, const NDArray& indices, std::optional<int> axis, IndexMode mode) {
  if (!x.valid()) fail("take: an empty array handle");
  const NDArray idx = integer_indices(indices, "take");
  const NDArray src = axis ? x : x.reshape({x.size()});
  const int ax = axis.value_or(0);
  if (src.shape()[static_cast<std::size_t>(ax)] == 0 && idx.size() > 0)
    fail("take: cannot do a non-empty take from an empty axes.");
  std::vector<Index> items(static_cast<std::size_t>(ax), Slice{});
  items.emplace_back(idx);
  Plan p = plan_index(src, items, mode, "take: ");
  return gather(p, mode, "take: ");
}

void put(const NDArray& x, const NDArray& indices, const NDArray& values, IndexMode mode) {
  if (!x.valid()) fail("put: an empty array handle");
  if (!values.valid()) fail("put: values is an empty array handle");
  GraphRecording::refuse_if_recording("put");
  const NDArray idx = integer_indices(indices, "put").to(x.device());
  const std::int64_t count = idx.size();
  if (count == 0) return;
  if (x.size() == 0) fail("put: cannot replace elements of an empty array");
  const Shape& b = idx.shape();
  const NDArray off = NDArray::empty(b, DType::Int64, x.device());
  const NDArray bad = NDArray::full({1}, Scalar::of_int(kNoBadIndex), DType::Int64, x.device());
  ops::device::index_offsets(off, idx, idx.strides(), x.shape(), x.strides(), mode, false, bad);
  if (mode == IndexMode::Raise) {
    std::int64_t position = 0;
    std::memcpy(&position, bad.to_host_bytes().data(), 8);
    if (position != kNoBadIndex)
      fail("put: index {} is out of bounds for axis 0 with size {}", value_text(idx.get(unravel(position, b))),
           x.size());
  }
  if (values.size() == 0) return;
  // values flattened, converted, and repeated to the indices' count.
  NDArray v = values.to(x.device()).astype(x.dtype()).reshape({values.size()});
  if (v.size() != count) {
    v = tile(v, {(count + v.size() - 1) / v.size()});
    v = NDArray::view(v.buffer(), v.dtype(), {count}, {1}, v.offset());
  }
  v = v.reshape(b);
  const Strides none(b.size(), 0);
  ops::device::scatter(NDArray::view(x.buffer(), x.dtype(), {}, {}, x.offset()), v, off, b, none, c_strides(b),
                       v.strides());
}

NDArray argwhere(const NDArray& x) {
  if (!x.valid()) fail("argwhere: an empty array handle");
  GraphRecording::refuse_if_recording("nonzero (and argwhere, flatnonzero, compress, a boolean index)");
  if (x.dtype() == DType::Bool) return ops::device::argwhere(x);
  const std::array<jit::KernelArg, 2> compare = {jit::KernelArg::of_array(x), jit::KernelArg::of_int(0)};
  return ops::device::argwhere(ops::apply("not_equal", compare));
}

std::vector<NDArray> nonzero(const NDArray& x) {
  if (x.valid() && x.ndim() == 0)
    fail("nonzero: Calling nonzero on 0d arrays is not allowed. Use x:reshape(1) (NumPy's "
         "np.atleast_1d(scalar).nonzero()) instead.");
  const NDArray where = argwhere(x);
  const std::int64_t n = where.shape()[0], nd = x.ndim();
  std::vector<NDArray> columns;
  for (std::int64_t k = 0; k < nd; ++k)
    columns.push_back(NDArray::view(where.buffer(), DType::Int64, {n}, {nd}, where.offset() + (n > 0 ? k : 0)));
  return columns;
}

NDArray flatnonzero(const NDArray& x) {
  if (!x.valid()) fail("flatnonzero: an empty array handle");
  const NDArray where = argwhere(x.reshape({x.size()}));
  return NDArray::view(where.buffer(), DType::Int64, {where.shape()[0]}, {1}, where.offset());
}

NDArray compress(const NDArray& condition, const NDArray& x, std::optional<int> axis) {
  if (!condition.valid() || !x.valid()) fail("compress: an empty array handle");
  if (condition.ndim() != 1) fail("compress: condition must be a 1-d array");
  return take(x, flatnonzero(condition), axis, IndexMode::Raise);
}

}  // namespace luda::ops

#include "ops/cumulative.h"

#include <array>

#include "jit/call/call_args.h"
#include "ops/array_math.h"
#include "ops/device/scan.h"
#include "ops/routines.h"
#include "runtime/error.h"

namespace luda::ops {

std::string_view cumulative_name(Cumulative op) {
  switch (op) {
    case Cumulative::Sum: return "cumsum";
    case Cumulative::Prod: return "cumprod";
    case Cumulative::NanSum: return "nancumsum";
    case Cumulative::NanProd: return "nancumprod";
  }
  throw InternalError("bad cumulative op");
}

NDArray cumulative(Cumulative op, const NDArray& x, std::optional<int> axis, std::optional<DType> dtype, NDArray out,
                   const Stream* stream) {
  const std::string_view name = cumulative_name(op);
  if (!x.valid()) fail("{}: the array is an empty handle", name);
  LUDA_INTERNAL_CHECK(!axis || (*axis >= 0 && *axis < x.ndim()));
  const DType t = x.dtype();
  if (t != DType::Bool && !is_integer(t) && !is_float(t) && !is_complex(t))
    fail("{}: {} arrays are not supported", name, dtype_name(t));
  if (dtype && *dtype == DType::Bool) fail("{}: dtype bool is not supported; use an integer or float dtype", name);
  const DType acc = dtype                          ? *dtype
                    : is_float(t) || is_complex(t) ? t
                    : is_unsigned_integer(t)       ? DType::UInt64
                                                   : DType::Int64;
  const bool sum = op == Cumulative::Sum || op == Cumulative::NanSum;
  // NumPy's nancumsum and nancumprod: NaN replaced by the operation's identity first.
  NDArray source = x;
  if ((op == Cumulative::NanSum || op == Cumulative::NanProd) && (is_float(t) || is_complex(t))) {
    const std::array<jit::KernelArg, 1> element = {jit::KernelArg::of_array(x)};
    const NDArray nan = apply("isnan", element, stream);
    const std::array<jit::KernelArg, 3> pick = {jit::KernelArg::of_array(nan), jit::KernelArg::of_int(sum ? 0 : 1),
                                                jit::KernelArg::of_array(x)};
    source = apply("where", pick, stream);
  }
  // The elements in the scan's order, converted: C order, with `axis` moved last.
  const int last = x.ndim() - 1;
  const NDArray ordered = axis ? moveaxis(source, *axis, last) : source;
  // float16 and bfloat16 scan in float32, each result rounded once (as their sums are).
  const DType scan = is_float(acc) && itemsize(acc) == 2 ? DType::Float32 : acc;
  NDArray work = NDArray::empty(ordered.shape(), scan, x.device(), stream);
  work.assign_on(ordered, stream ? stream->handle() : nullptr);
  const std::int64_t len = axis ? x.shape()[static_cast<std::size_t>(*axis)] : x.size();
  if (x.size() > 0)
    ops::device::scan_rows(work.reshape({x.size() / len, len}),
                           sum ? ops::device::ScanOp::Sum : ops::device::ScanOp::Prod, stream);
  NDArray result = axis ? moveaxis(work, last, *axis) : work.reshape({x.size()});
  if (scan != acc) {
    NDArray rounded = NDArray::empty(result.shape(), acc, x.device(), stream);
    rounded.assign_on(result, stream ? stream->handle() : nullptr);
    result = rounded;
  }
  if (out.valid()) {
    if (out.dtype() != acc || out.shape() != result.shape())
      fail("{}: out is a {} array of shape {}, but the result is {} of shape {}; pass an array of that dtype and shape",
           name, dtype_name(out.dtype()), shape_str(out.shape()), dtype_name(acc), shape_str(result.shape()));
    out.assign_on(result, stream ? stream->handle() : nullptr);
    return out;
  }
  return result.is_c_contiguous() ? result : result.copy(std::nullopt, stream);
}

}  // namespace luda::ops

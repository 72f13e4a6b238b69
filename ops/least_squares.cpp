// numpy.linalg's routines built on the SVD (ops/linalg.h): lstsq, pinv and matrix_rank.
// lstsq runs LAPACKE's gelsd on the cpu, as NumPy does; on a GPU it is the SVD of a
// (ops/orthogonal.cpp) and three products. pinv and matrix_rank are the SVD and luda's
// array functions on any device.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "jit/call/call_args.h"
#include "ops/array_math.h"
#include "ops/linalg.h"
#include "ops/routines.h"
#include "ops/solver_libraries.h"

namespace luda::ops {
namespace {

using namespace solvers;
using jit::KernelArg;

CUstream handle(const Stream* stream) { return stream ? stream->handle() : nullptr; }

NDArray apply2(std::string_view name, const KernelArg& x, const KernelArg& y, const Stream* stream) {
  std::array<KernelArg, 2> in = {x, y};
  return apply(name, in, stream);
}
KernelArg arg(const NDArray& x) { return KernelArg::of_array(x); }

// The machine epsilon of t's real parts.
double epsilon(DType t) {
  return real_dtype(t) == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                         : std::numeric_limits<double>::epsilon();
}

// The conjugate transpose of each matrix of x: the view with the last two axes swapped,
// conjugated (a new array) when complex.
NDArray adjoint(const NDArray& x, const Stream* stream) {
  const NDArray swapped = swap_last(x);
  if (!is_complex(x.dtype())) return swapped;
  std::array<KernelArg, 1> in = {KernelArg::of_array(swapped)};  // the argument refers to it
  return apply("conj", in, stream);
}

// x with a size-1 axis appended (a view of a C-contiguous x).
NDArray column(const NDArray& x) {
  Shape shape = x.shape();
  shape.push_back(1);
  Strides strides = x.strides();
  strides.push_back(0);
  return NDArray::view(x.buffer(), x.dtype(), shape, strides, x.offset());
}

// The sum over axis 0 of x's squared magnitudes, real for a complex x (|x| |x|, which is
// x x exactly for a real x).
NDArray squares_down(const NDArray& x, const Stream* stream) {
  std::array<KernelArg, 1> in = {arg(x)};
  const NDArray mag = is_complex(x.dtype()) ? apply("abs", in, stream) : x;
  return reduce(Reduce::Sum, apply2("multiply", arg(mag), arg(mag), stream), std::vector<int>{0}, false, {}, stream);
}

// LAPACKE's gelsd: x (n x k), the rank and the singular values, for one matrix.
template <class T>
LstsqResult lstsq_lapacke(const NDArray& a, const NDArray& b2, double rcond, DType t) {
  const std::int64_t m = a.shape()[0], n = a.shape()[1], k = b2.shape()[1];
  const std::int64_t rows = std::max(m, n), cols = std::max<std::int64_t>(k, 1);  // gelsd takes no 0 columns
  NDArray w = working_copy(a, t, nullptr);
  NDArray bx = NDArray::zeros({rows, cols}, t, a.device());
  NDArray::view(bx.buffer(), t, {m, k}, {cols, 1}, bx.offset()).assign(b2);
  LstsqResult r;
  r.s = NDArray::empty({std::min(m, n)}, real_dtype(t), a.device());
  lapack_int rank = 0;
  const int info = (lapacke().*LapackeTyped<T>::gelsd)(kRowMajor, as_lapack_int(m, "lstsq"), as_lapack_int(n, "lstsq"),
                                                       as_lapack_int(cols, "lstsq"), static_cast<T*>(w.data()),
                                                       as_lapack_int(n, "lstsq"), static_cast<T*>(bx.data()),
                                                       as_lapack_int(cols, "lstsq"), static_cast<Real<T>*>(r.s.data()),
                                                       static_cast<Real<T>>(rcond), &rank);
  if (info > 0 || lapacke_found_nan(info, {5, 7})) fail("lstsq: SVD did not converge in Linear Least Squares");
  if (info < 0) fail("lstsq: LAPACKE gelsd: argument {} is invalid", -info);
  r.rank = rank;
  r.x = NDArray::view(bx.buffer(), t, {n, k}, {cols, 1}, bx.offset()).contiguous();
  if (rank == n && m > n)
    r.residuals = squares_down(NDArray::view(bx.buffer(), t, {m - n, k}, {cols, 1}, bx.offset() + n * cols), nullptr);
  return r;
}

}  // namespace

LstsqResult lstsq(const NDArray& a, const NDArray& b, std::optional<double> rcond, const Stream* stream) {
  if (!a.valid() || !b.valid()) fail("lstsq: an empty handle");
  if (a.ndim() != 2) fail("lstsq: {}-dimensional array given. Array must be two-dimensional", a.ndim());
  if (b.ndim() != 1 && b.ndim() != 2)
    fail("lstsq: {}-dimensional array given. Array must be two-dimensional", b.ndim());
  if (a.device() != b.device())
    fail("lstsq: a is on {} and b on {}; both must be on one device", a.device().str(), b.device().str());
  const std::int64_t m = a.shape()[0], n = a.shape()[1];
  if (b.shape()[0] != m)
    fail("lstsq: Incompatible dimensions: a of shape {} has {} rows, b of shape {} has {}", shape_str(a.shape()), m,
         shape_str(b.shape()), b.shape()[0]);
  refuse_recording("lstsq");
  const bool vector = b.ndim() == 1;
  const std::int64_t k = vector ? 1 : b.shape()[1];
  const DType t = solve_dtype(promote_types(a.dtype(), b.dtype()), "lstsq", true);
  const Device dev = a.device();
  double cut = rcond.value_or(epsilon(t) * static_cast<double>(std::max(m, n)));
  if (cut < 0) cut = epsilon(t);  // LAPACK's meaning of a negative rcond: the machine precision
  const NDArray b2 = (vector ? b.reshape({m, 1}) : b).astype(t, stream);

  LstsqResult r;
  if (m == 0 || n == 0) {
    r.rank = 0;
    r.s = NDArray::empty({0}, real_dtype(t), dev, stream);
    r.x = NDArray::zeros({n, k}, t, dev, stream);
    if (n == 0 && m > 0) r.residuals = squares_down(b2, stream);
  } else if (dev.is_cpu()) {
    r = with_solver_type<true>(t, [&](auto zero) { return lstsq_lapacke<decltype(zero)>(a, b2, cut, t); });
  } else {
    SvdResult f;
    try {
      f = svd(a, false, true, stream, "lstsq");
    } catch (const Error& e) {
      if (std::string_view(e.what()) == "lstsq: SVD did not converge")
        fail("lstsq: SVD did not converge in Linear Least Squares");
      throw;
    }
    const std::vector<double> s = read_doubles(f.s, stream);
    std::vector<double> inverse(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      const bool kept = s[i] > cut * s[0];
      inverse[i] = kept ? 1 / s[i] : 0;
      r.rank += kept;
    }
    NDArray scale = NDArray::from_host(inverse.data(), {static_cast<std::int64_t>(s.size())}, DType::Float64, dev);
    if (real_dtype(t) != DType::Float64) scale = scale.astype(real_dtype(t), stream);
    r.s = f.s;
    // x = V diag(1/s) U^H b over the singular values kept (U^T, V = vh^T when real).
    const NDArray utb = matmul(adjoint(f.u, stream), b2, {}, stream);
    r.x = matmul(adjoint(f.vh, stream), apply2("multiply", arg(utb), arg(column(scale)), stream), {}, stream);
    if (r.rank == n && m > n)
      r.residuals = squares_down(apply2("subtract", arg(b2), arg(matmul(a.astype(t, stream), r.x, {}, stream)), stream),
                                 stream);
  }
  if (!r.residuals.valid()) r.residuals = NDArray::empty({0}, real_dtype(t), dev, stream);
  if (vector) r.x = r.x.reshape({n});
  return r;
}

NDArray pinv(const NDArray& a, std::optional<double> rcond, std::optional<double> rtol, const Stream* stream) {
  require_matrices(a, "pinv");
  if (rcond && rtol) fail("pinv: `rtol` and `rcond` can't be both set.");
  const double cut = rcond ? *rcond : rtol ? *rtol : 1e-15;
  const std::int64_t m = a.shape()[a.shape().size() - 2], n = a.shape().back();
  const DType t = solve_dtype(a.dtype(), "pinv", true);
  if (m == 0 || n == 0) return NDArray::zeros(stacked(stack_shape(a), {n, m}), t, a.device(), stream);
  const SvdResult f = svd(a, false, true, stream, "pinv");
  const int last = f.s.ndim() - 1;
  const NDArray largest = reduce(Reduce::Max, f.s, std::vector<int>{last}, true, {}, stream);
  const NDArray kept = apply2("greater", arg(f.s),
                              arg(apply2("multiply", arg(largest), KernelArg::of_float(cut), stream)), stream);
  const NDArray reciprocal = apply2("divide", KernelArg::of_int(1), arg(f.s), stream);
  std::array<KernelArg, 3> pick = {arg(kept), arg(reciprocal), KernelArg::of_int(0)};
  const NDArray inverse = apply("where", pick, stream);
  // V diag(1/s) U^H (U^T when real)
  return matmul(adjoint(f.vh, stream), apply2("multiply", arg(column(inverse)), arg(adjoint(f.u, stream)), stream), {},
                stream);
}

NDArray matrix_rank(const NDArray& a, std::optional<double> tol, std::optional<double> rtol, const Stream* stream) {
  if (!a.valid()) fail("matrix_rank: an empty handle");
  if (tol && rtol) fail("matrix_rank: `tol` and `rtol` can't be both set.");
  if (a.ndim() < 2)  // 1 unless every element is 0
    return any(apply2("not_equal", arg(a), KernelArg::of_int(0), stream), std::nullopt, false, stream)
        .astype(DType::Int64, stream);
  const NDArray s = svd(a, false, false, stream, "matrix_rank").s;
  const int last = s.ndim() - 1;
  NDArray above;
  if (tol) {
    above = apply2("greater", arg(s), KernelArg::of_float(*tol), stream);
  } else {
    const std::int64_t m = a.shape()[a.shape().size() - 2], n = a.shape().back();
    const double r = rtol.value_or(static_cast<double>(std::max(m, n)) * epsilon(s.dtype()));
    ReduceOptions from_zero;
    from_zero.initial = KernelArg::of_int(0);
    const NDArray largest = reduce(Reduce::Max, s, std::vector<int>{last}, true, {}, stream, from_zero);
    above = apply2("greater", arg(s), arg(apply2("multiply", arg(largest), KernelArg::of_float(r), stream)), stream);
  }
  return count_nonzero(above, std::vector<int>{last}, false, stream);
}

}  // namespace luda::ops

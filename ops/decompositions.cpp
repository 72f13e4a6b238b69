// numpy.linalg's factorizations (ops/linalg.h): cuSOLVER on CUDA devices and LAPACKE on
// the cpu, both loaded with dlopen at their first use. LAPACKE takes row-major matrices;
// cuSOLVER column-major ones, where a row-major matrix is its transpose, which the calls
// below use instead of copying (an LU of a^T solves with a by the transposed solve, and a
// Hermitian matrix's transpose is its conjugate, whose Cholesky factor, read by rows, is
// the matrix's own: for a^T = U^H U, a = U^T conj(U) = L L^H with L = U^T).
#include <cusolverDn.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "jit/call/call_args.h"
#include "ops/array_math.h"
#include "ops/linalg.h"
#include "ops/routines.h"
#include "ops/solver_libraries.h"
#include "runtime/device.h"
#include "runtime/error.h"

namespace luda::ops {
namespace {

using namespace solvers;

// LAPACKE's row-major getrf, gesv and potrf of n x n matrices of dtype t (float32,
// float64, complex64, complex128).
int lapacke_getrf(DType t, lapack_int n, void* m, lapack_int* piv) {
  const Lapacke& l = lapacke();
  switch (t) {
    case DType::Float32: return l.sgetrf(kRowMajor, n, n, static_cast<float*>(m), n, piv);
    case DType::Float64: return l.dgetrf(kRowMajor, n, n, static_cast<double*>(m), n, piv);
    case DType::Complex64: return l.cgetrf(kRowMajor, n, n, static_cast<ComplexFloat*>(m), n, piv);
    case DType::Complex128: return l.zgetrf(kRowMajor, n, n, static_cast<ComplexDouble*>(m), n, piv);
    default: break;
  }
  throw InternalError(fmt::format("internal error: no getrf for {}", dtype_name(t)));
}

int lapacke_gesv(DType t, lapack_int n, lapack_int k, void* a, lapack_int* piv, void* b) {
  const Lapacke& l = lapacke();
  switch (t) {
    case DType::Float32: return l.sgesv(kRowMajor, n, k, static_cast<float*>(a), n, piv, static_cast<float*>(b), k);
    case DType::Float64: return l.dgesv(kRowMajor, n, k, static_cast<double*>(a), n, piv, static_cast<double*>(b), k);
    case DType::Complex64:
      return l.cgesv(kRowMajor, n, k, static_cast<ComplexFloat*>(a), n, piv, static_cast<ComplexFloat*>(b), k);
    case DType::Complex128:
      return l.zgesv(kRowMajor, n, k, static_cast<ComplexDouble*>(a), n, piv, static_cast<ComplexDouble*>(b), k);
    default: break;
  }
  throw InternalError(fmt::format("internal error: no gesv for {}", dtype_name(t)));
}

// LAPACKE converts the row-major matrix to LAPACK's layout itself, so 'L' is a's lower
// triangle and the factor L with a = L L^H (L L^T when real).
int lapacke_potrf_lower(DType t, lapack_int n, void* m) {
  const Lapacke& l = lapacke();
  switch (t) {
    case DType::Float32: return l.spotrf(kRowMajor, 'L', n, static_cast<float*>(m), n);
    case DType::Float64: return l.dpotrf(kRowMajor, 'L', n, static_cast<double*>(m), n);
    case DType::Complex64: return l.cpotrf(kRowMajor, 'L', n, static_cast<ComplexFloat*>(m), n);
    case DType::Complex128: return l.zpotrf(kRowMajor, 'L', n, static_cast<ComplexDouble*>(m), n);
    default: break;
  }
  throw InternalError(fmt::format("internal error: no potrf for {}", dtype_name(t)));
}

// LU of each matrix of the C-contiguous stack `lu` (n x n each), in place; pivots (1-based,
// int64 on a GPU, int32 on the cpu) into `pivots` (..., n). Returns the first info.
int lu_in_place(NDArray& lu, NDArray& pivots, const Stream* stream, std::string_view who) {
  const std::int64_t n = lu.shape().back(), count = stack_count(lu, 2);
  const DType t = lu.dtype();
  const auto size = static_cast<std::int64_t>(itemsize(t));
  auto* base = static_cast<std::byte*>(lu.data());
  if (lu.device().is_cpu()) {
    auto* piv = static_cast<lapack_int*>(pivots.data());
    int first = 0;
    for (std::int64_t i = 0; i < count; ++i) {
      void* m = base + i * n * n * size;
      const int info = lapacke_getrf(t, static_cast<lapack_int>(n), m, piv + i * n);
      if (info < 0) fail("{}: LAPACKE getrf: argument {} is invalid", who, -info);
      if (!first) first = info;
    }
    return first;
  }
  const Cusolver& cs = cusolver();
  SolverSession s(lu.device(), stream, who);
  NDArray infos = infos_for(count, lu.device(), stream);
  std::size_t dev_bytes = 0, host_bytes = 0;
  check(cs.cusolverDnXgetrf_bufferSize(s.handle(), s.params(), n, n, cuda_type(t), base, n, cuda_type(t), &dev_bytes,
                                       &host_bytes),
        "cusolverDnXgetrf_bufferSize", who);
  Workspace w;
  w.reserve(lu.device(), dev_bytes, host_bytes, stream);
  for (std::int64_t i = 0; i < count; ++i)
    check(cs.cusolverDnXgetrf(s.handle(), s.params(), n, n, cuda_type(t), base + i * n * n * size, n,
                              static_cast<std::int64_t*>(pivots.data()) + i * n, cuda_type(t), w.device->data(),
                              dev_bytes, w.host.data(), host_bytes, static_cast<int*>(infos.data()) + i),
          "cusolverDnXgetrf", who);
  return first_info(infos, stream);
}

DType pivot_dtype(Device d) { return d.is_cpu() ? DType::Int32 : DType::Int64; }

}  // namespace

NDArray solve(const NDArray& a, const NDArray& b, const Stream* stream) {
  require_square(a, "solve");
  if (!b.valid()) fail("solve: an empty handle");
  if (a.device() != b.device())
    fail("solve: a is on {} and b on {}; both must be on one device", a.device().str(), b.device().str());
  refuse_recording("solve");
  const std::int64_t n = a.shape().back();
  // b: a vector when 1-D (NumPy 2), else a stack of n x k matrices.
  const bool vector = b.ndim() == 1;
  if (b.ndim() == 0 || (vector ? b.shape()[0] : b.shape()[b.ndim() - 2]) != n)
    fail("solve: b of shape {} does not fit a of shape {}: it needs {} rows", shape_str(b.shape()),
         shape_str(a.shape()), n);
  const DType t = solve_dtype(promote_types(a.dtype(), b.dtype()), "solve", true);
  const Shape stack_a(a.shape().begin(), a.shape().end() - 2);
  const Shape stack_b = vector ? Shape{} : Shape(b.shape().begin(), b.shape().end() - 2);
  Shape stack;
  try {
    stack = broadcast_shapes(stack_a, stack_b);
  } catch (const Error&) {
    fail("solve: the stacks of shapes {} and {} do not broadcast together", shape_str(a.shape()), shape_str(b.shape()));
  }
  const std::int64_t k = vector ? 1 : b.shape().back();
  Shape sa = stack, sb = stack;
  sa.insert(sa.end(), {n, n});
  sb.insert(sb.end(), {n, k});
  // Broadcast copies: a stack of LUs and of right-hand sides, one per result.
  NDArray lu = NDArray::empty(sa, t, a.device(), stream);
  lu.assign_on(a, stream ? stream->handle() : nullptr);
  const NDArray bm = vector ? NDArray::view(b.buffer(), b.dtype(), {n, 1}, {b.strides()[0], 0}, b.offset()) : b;
  Shape result_shape = vector ? Shape{n} : sb;
  if (vector && !stack.empty()) {
    result_shape = stack;
    result_shape.push_back(n);
  }
  if (lu.size() == 0 || k == 0) return NDArray::zeros(result_shape, t, a.device(), stream);
  const std::int64_t count = stack_count(lu, 2);
  const auto size = static_cast<std::int64_t>(itemsize(t));
  NDArray pivots = NDArray::empty(
      [&] {
        Shape p = stack;
        p.push_back(n);
        return p;
      }(),
      pivot_dtype(a.device()), a.device(), stream);
  NDArray x;
  if (a.device().is_cpu()) {
    x = NDArray::empty(sb, t, a.device(), stream);  // row-major n x k each
    x.assign(bm);
    auto* pa = static_cast<std::byte*>(lu.data());
    auto* px = static_cast<std::byte*>(x.data());
    auto* piv = static_cast<lapack_int*>(pivots.data());
    for (std::int64_t i = 0; i < count; ++i) {
      const auto N = static_cast<lapack_int>(n), K = static_cast<lapack_int>(k);
      const int info = lapacke_gesv(t, N, K, pa + i * n * n * size, piv + i * n, px + i * n * k * size);
      if (info > 0) fail("solve: Singular matrix");
      if (info < 0) fail("solve: LAPACKE gesv: argument {} is invalid", -info);
    }
  } else {
    // The row-major LU is the LU of a^T to cuSOLVER: the transposed solve undoes it.
    if (lu_in_place(lu, pivots, stream, "solve") > 0) fail("solve: Singular matrix");
    x = empty_by_columns(sb, t, a.device(), stream);
    x.assign_on(bm, stream ? stream->handle() : nullptr);
    const Cusolver& cs = cusolver();
    SolverSession s(a.device(), stream, "solve");
    NDArray infos = infos_for(count, a.device(), stream);
    auto* pa = static_cast<std::byte*>(lu.data());
    auto* px = static_cast<std::byte*>(x.data());
    for (std::int64_t i = 0; i < count; ++i)
      check(cs.cusolverDnXgetrs(s.handle(), s.params(), CUBLAS_OP_T, n, k, cuda_type(t), pa + i * n * n * size, n,
                                static_cast<const std::int64_t*>(pivots.data()) + i * n, cuda_type(t),
                                px + i * n * k * size, n, static_cast<int*>(infos.data()) + i),
            "cusolverDnXgetrs", "solve");
    if (const int info = first_info(infos, stream); info < 0)
      fail("solve: cusolverDnXgetrs: argument {} is invalid", -info);
  }
  if (!vector) return x;
  NDArray out = NDArray::empty(result_shape, t, a.device(), stream);
  Shape squeezed = result_shape;
  out.assign_on(x.reshape(squeezed), stream ? stream->handle() : nullptr);
  return out;
}

NDArray inv(const NDArray& a, const Stream* stream) {
  require_square(a, "inv");
  const std::int64_t n = a.shape().back();
  const DType t = solve_dtype(a.dtype(), "inv", true);
  NDArray eye = NDArray::zeros({n, n}, t, a.device(), stream);
  if (n > 0) {
    // The identity: ones on the diagonal, a view one element apart down each row.
    NDArray diagonal = NDArray::view(eye.buffer(), t, {n}, {n + 1}, eye.offset());
    diagonal.fill(Scalar::of_int(1, t));
  }
  try {
    return solve(a, eye, stream);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what == "solve: Singular matrix") fail("inv: Singular matrix");
    throw;
  }
}

NDArray det(const NDArray& a, const Stream* stream) {
  require_square(a, "det");
  refuse_recording("det");
  const std::int64_t n = a.shape().back();
  const DType t = solve_dtype(a.dtype(), "det", true);
  const Shape stack(a.shape().begin(), a.shape().end() - 2);
  if (n == 0) return NDArray::full(stack, Scalar::of_int(1, t), t, a.device(), stream);
  NDArray lu = a.astype(t, stream);  // the factorization overwrites it
  Shape ps = stack;
  ps.push_back(n);
  NDArray pivots = NDArray::empty(ps, pivot_dtype(a.device()), a.device(), stream);
  if (stack_count(lu, 2) > 0) lu_in_place(lu, pivots, stream, "det");  // a singular matrix: a zero on the diagonal
  // The product of U's diagonal, negated for each row the pivoting swapped.
  Shape ds = stack;
  ds.push_back(n);
  Strides dstrides(lu.strides().begin(), lu.strides().end() - 2);
  dstrides.push_back(n + 1);
  const NDArray diagonal = NDArray::view(lu.buffer(), t, ds, dstrides, lu.offset());
  const int last = static_cast<int>(ds.size()) - 1;
  NDArray product = reduce(Reduce::Prod, diagonal, std::vector<int>{last}, false, {}, stream);
  NDArray rows = NDArray::empty({n}, pivots.dtype(), a.device(), stream);
  {
    std::vector<std::int64_t> one_based(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) one_based[static_cast<std::size_t>(i)] = i + 1;
    rows.assign(NDArray::from_host(one_based.data(), {n}, DType::Int64, Device::cpu()));
  }
  std::array<jit::KernelArg, 2> moved = {jit::KernelArg::of_array(pivots), jit::KernelArg::of_array(rows)};
  NDArray swaps = reduce(Reduce::Sum, apply("not_equal", moved, stream), std::vector<int>{last}, false, {}, stream);
  // (-1)^swaps as 1 - 2 * (swaps % 2)
  std::array<jit::KernelArg, 2> parity_in = {jit::KernelArg::of_array(swaps), jit::KernelArg::of_int(2)};
  NDArray parity = apply("mod", parity_in, stream);
  std::array<jit::KernelArg, 2> twice_in = {jit::KernelArg::of_array(parity), jit::KernelArg::of_int(-2)};
  NDArray twice = apply("multiply", twice_in, stream);
  std::array<jit::KernelArg, 2> sign_in = {jit::KernelArg::of_array(twice), jit::KernelArg::of_int(1)};
  NDArray sign = apply("add", sign_in, stream);
  std::array<jit::KernelArg, 2> det_in = {jit::KernelArg::of_array(product), jit::KernelArg::of_array(sign)};
  NDArray signed_product = apply("multiply", det_in, stream);  // float64 for float32 products
  if (signed_product.dtype() == t) return signed_product;
  NDArray out = NDArray::empty(product.shape(), t, a.device(), stream);
  out.assign_on(signed_product, stream ? stream->handle() : nullptr);
  return out;
}

NDArray cholesky(const NDArray& a, const Stream* stream) {
  require_square(a, "cholesky");
  refuse_recording("cholesky");
  const std::int64_t n = a.shape().back();
  const DType t = solve_dtype(a.dtype(), "cholesky", true);
  NDArray l = a.astype(t, stream);  // the factorization overwrites it
  const std::int64_t count = stack_count(l, 2);
  if (l.size() == 0) return l;
  const auto size = static_cast<std::int64_t>(itemsize(t));
  auto* base = static_cast<std::byte*>(l.data());
  int failed = 0;
  if (a.device().is_cpu()) {
    for (std::int64_t i = 0; i < count && !failed; ++i) {
      const auto N = static_cast<lapack_int>(n);
      failed = lapacke_potrf_lower(t, N, base + i * n * n * size);
    }
  } else {
    // Row-major memory read by columns is a^T, whose upper triangle is a's lower one: the
    // upper factor U of it, read by rows, is L. For a complex a, a^T is conj(a) = U^H U,
    // so a = U^T conj(U) = L L^H with the same L = U^T: no conjugation is needed.
    const Cusolver& cs = cusolver();
    SolverSession s(a.device(), stream, "cholesky");
    NDArray infos = infos_for(count, a.device(), stream);
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cs.cusolverDnXpotrf_bufferSize(s.handle(), s.params(), CUBLAS_FILL_MODE_UPPER, n, cuda_type(t), base, n,
                                         cuda_type(t), &dev_bytes, &host_bytes),
          "cusolverDnXpotrf_bufferSize", "cholesky");
    Workspace w;
    w.reserve(a.device(), dev_bytes, host_bytes, stream);
    for (std::int64_t i = 0; i < count; ++i)
      check(cs.cusolverDnXpotrf(s.handle(), s.params(), CUBLAS_FILL_MODE_UPPER, n, cuda_type(t),
                                base + i * n * n * size, n, cuda_type(t), w.device->data(), dev_bytes, w.host.data(),
                                host_bytes, static_cast<int*>(infos.data()) + i),
            "cusolverDnXpotrf", "cholesky");
    failed = first_info(infos, stream);
  }
  if (failed > 0) fail("cholesky: Matrix is not positive definite");
  if (failed < 0) fail("cholesky: potrf: argument {} is invalid", -failed);
  // Above the diagonal is what the input had there.
  return tril(l, 0, stream);
}

}  // namespace luda::ops

// numpy.linalg's orthogonal factorizations (ops/linalg.h): qr, eigh and svd, on cuSOLVER
// (CUDA devices) and LAPACKE (the cpu) through ops/solver_libraries.h.
//
// LAPACKE takes the row-major stacks as they are. cuSOLVER reads column-major matrices: a
// C-contiguous stack of shape (..., c, r) holds r x c column-major matrices, so the calls
// below keep their operands in such stacks ("by columns") and hand their results back as
// views with the last two axes swapped, without a copy. Complex matrices take conjugate
// transposes where the real ones take transposes (V^H for V^T), and a row-major
// Hermitian matrix read by columns is conj(a): eigh and svd conjugate what they read
// back so.
//
// The SVD of a tall matrix on a GPU (m >= 2n, after transposing a wide one) is a QR first,
// A = Q R, then the SVD of the small n x n R = U_R S V^T, and U = Q U_R: Householder QR
// and its application are matrix-multiply speed, which the SVD routines are not.
// LUDA_SVD_SMALL picks the routine for the small SVD, LUDA_SVD_TALL how U is formed
// (docs/linalg.md).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "jit/call/call_args.h"
#include "ops/array_math.h"
#include "ops/linalg.h"
#include "ops/solver_libraries.h"

namespace luda::ops {
namespace {

using namespace solvers;

CUstream handle(const Stream* stream) { return stream ? stream->handle() : nullptr; }

// The view x[..., :rows, :cols] (a corner of each matrix of a stack).
NDArray corner(const NDArray& x, std::int64_t rows, std::int64_t cols) {
  Shape shape = x.shape();
  shape[shape.size() - 2] = rows;
  shape[shape.size() - 1] = cols;
  return NDArray::view(x.buffer(), x.dtype(), shape, x.strides(), x.offset());
}

// The view of the diagonal elements [i, i] of each matrix of a C-contiguous stack of
// r x c matrices, for i from `from` to min(r, c) - 1.
NDArray diagonal_from(const NDArray& x, std::int64_t from) {
  const std::int64_t r = x.shape()[x.shape().size() - 2], c = x.shape().back();
  Shape shape(x.shape().begin(), x.shape().end() - 2);
  Strides strides(x.strides().begin(), x.strides().end() - 2);
  shape.push_back(std::max<std::int64_t>(0, std::min(r, c) - from));
  strides.push_back(c + 1);
  return NDArray::view(x.buffer(), x.dtype(), shape, strides, x.offset() + (shape.back() > 0 ? from * (c + 1) : 0));
}

// routines.h's tril (lower) or triu of each matrix of x as a new C-contiguous array, its
// mask made from two broadcast index vectors rather than a table of r x c offsets.
NDArray triangle(const NDArray& x, bool lower, const Stream* stream) {
  const std::int64_t r = x.shape()[x.shape().size() - 2], c = x.shape().back();
  std::vector<std::int64_t> index(static_cast<std::size_t>(std::max(r, c)));
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<std::int64_t>(i);
  const NDArray i = NDArray::from_host(index.data(), {static_cast<std::int64_t>(index.size())}, DType::Int64,
                                       x.device());
  const NDArray rows = NDArray::view(i.buffer(), DType::Int64, {r, 1}, {1, 0}, i.offset());
  const NDArray cols = NDArray::view(i.buffer(), DType::Int64, {1, c}, {0, 1}, i.offset());
  std::array<jit::KernelArg, 2> compare = {jit::KernelArg::of_array(rows), jit::KernelArg::of_array(cols)};
  const NDArray keep = apply(lower ? "greater_equal" : "less_equal", compare, stream);
  std::array<jit::KernelArg, 3> pick = {jit::KernelArg::of_array(keep), jit::KernelArg::of_array(x),
                                        jit::KernelArg::of_int(0)};
  return apply("where", pick, stream).contiguous(stream);
}

// Writes `value` into every element of x (any view), on the stream.
void fill_on(NDArray x, double value, const Stream* stream) {
  if (x.size() == 0) return;
  x.assign_on(NDArray::full({}, Scalar::of_float(value, x.dtype()), x.dtype(), x.device(), stream), handle(stream));
}

// A zeroed stack with the identity in each matrix's leading square.
NDArray identities(const Shape& shape, DType t, Device device, const Stream* stream) {
  NDArray out = NDArray::zeros(shape, t, device, stream);
  fill_on(diagonal_from(out, 0), 1, stream);
  return out;
}

// The address of matrix i of a C-contiguous stack whose matrices are `elements` apart.
template <class T>
T* matrix(const NDArray& x, std::int64_t i, std::int64_t elements) {
  return static_cast<T*>(x.data()) + i * elements;
}

// The matrix of a C-contiguous stack as a flat view, to fill it with NaN (LAPACKE's check
// found one in its input).
void nan_matrix(const NDArray& x, std::int64_t i, std::int64_t elements) {
  if (!x.valid() || elements == 0) return;
  NDArray::view(x.buffer(), x.dtype(), {elements}, {1}, x.offset() + i * elements)
      .fill(Scalar::of_float(std::numeric_limits<double>::quiet_NaN(), x.dtype()));
}

std::string_view env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// ---- the SVD's plan on a GPU ------------------------------------------------------------

enum class SmallSvd { Gesvdp, Gesvdj, Gesvd };
enum class TallSvd { Ormqr, Orgqr, None };

struct SvdPlan {
  SmallSvd small = SmallSvd::Gesvdp;
  bool small_given = false;  // LUDA_SVD_SMALL named it
  TallSvd tall = TallSvd::Ormqr;
  bool debug = false;
  // The routine for matrices of n columns: without LUDA_SVD_SMALL, the Jacobi SVD below
  // 32 columns, where its sweeps are cheap (and cuSOLVER's polar decomposition gains
  // nothing).
  SmallSvd small_for(std::int64_t n) const { return small_given || n >= 32 ? small : SmallSvd::Gesvdj; }
};

const char* name_of(SmallSvd s) {
  return s == SmallSvd::Gesvdp ? "gesvdp" : s == SmallSvd::Gesvdj ? "gesvdj" : "gesvd";
}
const char* name_of(TallSvd t) { return t == TallSvd::Ormqr ? "ormqr" : t == TallSvd::Orgqr ? "orgqr" : "none"; }

// Read at each call, so that a process can be timed under each.
SvdPlan svd_plan() {
  SvdPlan p;
  const std::string_view small = env("LUDA_SVD_SMALL"), tall = env("LUDA_SVD_TALL");
  p.small_given = !small.empty();
  if (small == "gesvdj") p.small = SmallSvd::Gesvdj;
  else if (small == "gesvd") p.small = SmallSvd::Gesvd;
  else if (!small.empty() && small != "gesvdp")
    fail("svd: LUDA_SVD_SMALL is '{}'; it names cuSOLVER's SVD for square matrices: gesvdp (the default), gesvdj "
         "or gesvd",
         small);
  if (tall == "orgqr") p.tall = TallSvd::Orgqr;
  else if (tall == "none") p.tall = TallSvd::None;
  else if (!tall.empty() && tall != "ormqr")
    fail("svd: LUDA_SVD_TALL is '{}'; it says how a tall matrix's U is formed after its QR: ormqr (the default), "
         "orgqr, or none for no QR first",
         tall);
  const std::string_view debug = env("LUDA_SVD_DEBUG");
  p.debug = !debug.empty() && debug != "0";
  return p;
}

// The factors of the SVD B = U_B S V_B^T of a stack of column-major M x N matrices
// (M >= N): S (..., N) descending, U_B (..., M, Ku) and V_B^T (..., N, N), as arrays of any
// strides (views of what cuSOLVER wrote). No U_B or V_B^T without vectors.
struct ColumnSvd {
  NDArray s, ub, vbt;
};

// A cuSOLVER Jacobi SVD's parameters: tolerance the dtype's machine epsilon, sorted.
class GesvdjParams {
 public:
  GesvdjParams(double tolerance, std::string_view who) {
    const Cusolver& cs = cusolver();
    check(cs.cusolverDnCreateGesvdjInfo(&info_), "cusolverDnCreateGesvdjInfo", who);
    check(cs.cusolverDnXgesvdjSetTolerance(info_, tolerance), "cusolverDnXgesvdjSetTolerance", who);
    check(cs.cusolverDnXgesvdjSetMaxSweeps(info_, 100), "cusolverDnXgesvdjSetMaxSweeps", who);
    check(cs.cusolverDnXgesvdjSetSortEig(info_, 1), "cusolverDnXgesvdjSetSortEig", who);
  }
  ~GesvdjParams() { cusolver().cusolverDnDestroyGesvdjInfo(info_); }
  GesvdjParams(const GesvdjParams&) = delete;
  GesvdjParams& operator=(const GesvdjParams&) = delete;
  gesvdjInfo_t get() const { return info_; }

 private:
  gesvdjInfo_t info_ = nullptr;
};

// The SVD of the stack `b` ((..., N, M) C-contiguous: column-major M x N matrices, M >= N,
// N > 0; overwritten) by one of cuSOLVER's SVD routines. `full`: U_B is M x M, else M x N.
template <class T>
ColumnSvd svd_by_routine(NDArray& b, std::int64_t M, std::int64_t N, bool full, bool uv, SmallSvd routine,
                         const SvdPlan& plan, const Stream* stream, std::string_view who) {
  const Device dev = b.device();
  const DType t = b.dtype(), rt = real_dtype(t);
  const Shape stack = stack_shape(b);
  full = full && uv;  // singular values alone: the thin problem
  const std::int64_t count = stack_count(b, 2), ku = full ? M : N;
  // The polar-decomposition SVD is for the thin factors: a full U is the Jacobi SVD's.
  if (routine == SmallSvd::Gesvdp && full && M > N) routine = SmallSvd::Gesvdj;
  ColumnSvd out;
  out.s = NDArray::empty(stacked(stack, {N}), rt, dev, stream);
  // Column-major U_B (M x ku) and V_B or V_B^T (N x N). Made for the singular values alone
  // too: cuSOLVER's Jacobi SVD asked for no vectors and given no U and V faulted on an
  // H200 (CUDA 13), so every routine gets both.
  NDArray u_rows = NDArray::empty(stacked(stack, {ku, M}), t, dev, stream);
  NDArray v_rows = NDArray::empty(stacked(stack, {N, N}), t, dev, stream);
  using E = typename CusolverTyped<T>::element;
  auto U = [&](std::int64_t i) { return reinterpret_cast<E*>(matrix<T>(u_rows, i, ku * M)); };
  auto V = [&](std::int64_t i) { return reinterpret_cast<E*>(matrix<T>(v_rows, i, N * N)); };
  auto A = [&](std::int64_t i) { return reinterpret_cast<E*>(matrix<T>(b, i, M * N)); };
  auto S = [&](std::int64_t i) { return matrix<Real<T>>(out.s, i, N); };
  const cusolverEigMode_t jobz = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int econ = full ? 0 : 1;
  const cudaDataType ct = cuda_type(t), crt = cuda_type(rt);
  const Cusolver& cs = cusolver();
  NDArray infos = infos_for(count, dev, stream);
  int* info = static_cast<int*>(infos.data());
  Workspace w;
  std::int64_t fallbacks = 0;
  double worst_err = 0;

  // The Jacobi SVD of matrix i (also gesvdp's fallback).
  std::optional<GesvdjParams> jacobi;
  int jacobi_lwork = -1;
  auto gesvdj = [&](SolverSession& s, std::int64_t i) {
    const int m = as_lapack_int(M, who), n = as_lapack_int(N, who);
    if (!jacobi) jacobi.emplace(std::numeric_limits<Real<T>>::epsilon(), who);
    if (jacobi_lwork < 0) {
      check((cs.*CusolverTyped<T>::gesvdj_bufferSize)(s.handle(), jobz, econ, m, n, A(0), m, S(0), U(0), m, V(0), n,
                                                      &jacobi_lwork, jacobi->get()),
            "cusolverDn<t>gesvdj_bufferSize", who);
      w.reserve(dev, static_cast<std::size_t>(jacobi_lwork) * sizeof(T), 0, stream);
    }
    check((cs.*CusolverTyped<T>::gesvdj)(s.handle(), jobz, econ, m, n, A(i), m, S(i), U(i), m, V(i), n,
                                         static_cast<E*>(w.device->data()), jacobi_lwork, info + i, jacobi->get()),
          "cusolverDn<t>gesvdj", who);
  };

  {
    SolverSession s(dev, stream, who);
    if (routine == SmallSvd::Gesvdj) {
      for (std::int64_t i = 0; i < count; ++i) gesvdj(s, i);
    } else if (routine == SmallSvd::Gesvd) {
      const signed char jobu = uv ? (full ? 'A' : 'S') : 'N', jobvt = uv ? 'A' : 'N';
      std::size_t dev_bytes = 0, host_bytes = 0;
      check(cs.cusolverDnXgesvd_bufferSize(s.handle(), s.params(), jobu, jobvt, M, N, ct, A(0), M, crt, S(0), ct, U(0),
                                           M, ct, V(0), N, ct, &dev_bytes, &host_bytes),
            "cusolverDnXgesvd_bufferSize", who);
      w.reserve(dev, dev_bytes, host_bytes, stream);
      for (std::int64_t i = 0; i < count; ++i)
        check(cs.cusolverDnXgesvd(s.handle(), s.params(), jobu, jobvt, M, N, ct, A(i), M, crt, S(i), ct, U(i), M, ct,
                                  V(i), N, ct, w.device->data(), dev_bytes, w.host.data(), host_bytes, info + i),
              "cusolverDnXgesvd", who);
    } else {
      // The polar-decomposition SVD adds a perturbation where a singular value is near
      // zero, which shifts the singular values by h_err_sigma: a matrix where that is more
      // than N rounding errors of the largest is done again by the Jacobi SVD, from a copy
      // kept of it.
      std::size_t dev_bytes = 0, host_bytes = 0;
      check(cs.cusolverDnXgesvdp_bufferSize(s.handle(), s.params(), jobz, econ, M, N, ct, A(0), M, crt, S(0), ct, U(0),
                                            M, ct, V(0), N, ct, &dev_bytes, &host_bytes),
            "cusolverDnXgesvdp_bufferSize", who);
      Workspace wp;
      wp.reserve(dev, dev_bytes, host_bytes, stream);
      NDArray kept = NDArray::empty(b.shape(), t, dev, stream);
      kept.assign_on(b, handle(stream));
      for (std::int64_t i = 0; i < count; ++i) {
        double err = 0;
        check(cs.cusolverDnXgesvdp(s.handle(), s.params(), jobz, econ, M, N, ct, A(i), M, crt, S(i), ct, U(i), M, ct,
                                   V(i), N, ct, wp.device->data(), dev_bytes, wp.host.data(), host_bytes, info + i,
                                   &err),
              "cusolverDnXgesvdp", who);
        worst_err = std::max(worst_err, err);
        if (!(err > 0)) continue;
        const NDArray largest = NDArray::view(out.s.buffer(), rt, {1}, {1}, out.s.offset() + i * N);
        const double bound = static_cast<double>(N) * std::numeric_limits<Real<T>>::epsilon() *
                             read_doubles(largest, stream)[0];
        if (err <= bound) continue;
        NDArray::view(b.buffer(), t, {M * N}, {1}, b.offset() + i * M * N)
            .assign_on(NDArray::view(kept.buffer(), t, {M * N}, {1}, kept.offset() + i * M * N), handle(stream));
        gesvdj(s, i);
        ++fallbacks;
      }
    }
  }
  const int failed = first_info(infos, stream);
  if (plan.debug) {
    std::string detail;
    if (routine == SmallSvd::Gesvdp)
      detail = fmt::format(", largest h_err_sigma {:g}, {} of {} redone by gesvdj", worst_err, fallbacks, count);
    if (jacobi) {
      int sweeps = 0;
      cs.cusolverDnXgesvdjGetSweeps(SolverSession(dev, stream, who).handle(), jacobi->get(), &sweeps);
      detail += fmt::format(", gesvdj sweeps (last matrix) {}", sweeps);
    }
    fmt::print(stderr, "luda svd: {} {} x {} matrices, {} {}{}\n", count, M, N, dtype_name(t), name_of(routine),
               detail);
  }
  if (failed > 0) fail("{}: SVD did not converge", who);
  if (failed < 0) fail("{}: cusolverDn {}: argument {} is invalid", who, name_of(routine), -failed);
  if (uv) {
    out.ub = swap_last(u_rows);
    // gesvdj and gesvdp give V, whose columns are V^T's rows (conjugated, V^H's); gesvd
    // gives V^T (V^H).
    out.vbt = routine == SmallSvd::Gesvd ? swap_last(v_rows) : v_rows;
    if (routine != SmallSvd::Gesvd && is_complex(t)) {
      std::array<jit::KernelArg, 1> in = {jit::KernelArg::of_array(v_rows)};
      out.vbt = apply("conj", in, stream);
    }
  }
  return out;
}

// The SVD of a stack of tall column-major M x N matrices (M > N > 0): QR, the SVD of
// R, then U_B = Q [U_R 0; 0 I].
template <class T>
ColumnSvd svd_after_qr(NDArray& b, std::int64_t M, std::int64_t N, bool full, bool uv, const SvdPlan& plan,
                       const Stream* stream, std::string_view who) {
  const Device dev = b.device();
  const DType t = b.dtype();
  const Shape stack = stack_shape(b);
  const std::int64_t count = stack_count(b, 2);
  const cudaDataType ct = cuda_type(t);
  const Cusolver& cs = cusolver();
  using E = typename CusolverTyped<T>::element;
  auto at = [](const NDArray& x, std::int64_t i, std::int64_t elements) {
    return reinterpret_cast<E*>(matrix<T>(x, i, elements));
  };
  NDArray tau = NDArray::empty(stacked(stack, {N}), t, dev, stream);
  NDArray infos = infos_for(count, dev, stream);
  int* info = static_cast<int*>(infos.data());
  {
    SolverSession s(dev, stream, who);
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cs.cusolverDnXgeqrf_bufferSize(s.handle(), s.params(), M, N, ct, b.data(), M, ct, tau.data(), ct, &dev_bytes,
                                         &host_bytes),
          "cusolverDnXgeqrf_bufferSize", who);
    Workspace w;
    w.reserve(dev, dev_bytes, host_bytes, stream);
    for (std::int64_t i = 0; i < count; ++i)
      check(cs.cusolverDnXgeqrf(s.handle(), s.params(), M, N, ct, matrix<T>(b, i, M * N), M, ct, matrix<T>(tau, i, N),
                                ct, w.device->data(), dev_bytes, w.host.data(), host_bytes, info + i),
            "cusolverDnXgeqrf", who);
  }
  // R, upper triangular, column-major: its rows-of-storage are b's first N columns' first
  // N elements, kept on and below their diagonal.
  NDArray r = triangle(corner(b, N, N), true, stream);
  const TallSvd how = full ? TallSvd::Ormqr : plan.tall;
  if (plan.debug)
    fmt::print(stderr, "luda svd: {} {} x {} matrices, QR first, U by {}\n", count, M, N,
               uv ? name_of(how) : "(no vectors)");
  ColumnSvd small = svd_by_routine<T>(r, N, N, false, uv, plan.small_for(N), plan, stream, who);
  if (const int failed = first_info(infos, stream); failed < 0)
    fail("{}: cusolverDnXgeqrf: argument {} is invalid", who, -failed);
  if (!uv) return small;
  ColumnSvd out{small.s, {}, small.vbt};
  const int m = as_lapack_int(M, who), n = as_lapack_int(N, who);
  if (how == TallSvd::Orgqr) {
    SolverSession s(dev, stream, who);
    int lwork = 0;
    check((cs.*CusolverTyped<T>::orgqr_bufferSize)(s.handle(), m, n, n, at(b, 0, 0), m, at(tau, 0, 0), &lwork),
          "cusolverDn<t>orgqr_bufferSize", who);
    Workspace w;
    w.reserve(dev, static_cast<std::size_t>(lwork) * sizeof(T), 0, stream);
    for (std::int64_t i = 0; i < count; ++i)
      check((cs.*CusolverTyped<T>::orgqr)(s.handle(), m, n, n, at(b, i, M * N), m, at(tau, i, N),
                                          static_cast<E*>(w.device->data()), lwork, info + i),
            "cusolverDn<t>orgqr", who);
  } else {
    // C = [U_R 0; 0 I] (M x ku, column-major), then C = Q C.
    const std::int64_t ku = full ? M : N;
    NDArray c = NDArray::zeros(stacked(stack, {ku, M}), t, dev, stream);
    corner(c, N, N).assign_on(swap_last(small.ub), handle(stream));
    if (full) fill_on(diagonal_from(c, N), 1, stream);
    SolverSession s(dev, stream, who);
    const int k = as_lapack_int(ku, who);
    int lwork = 0;
    check((cs.*CusolverTyped<T>::ormqr_bufferSize)(s.handle(), CUBLAS_SIDE_LEFT, CUBLAS_OP_N, m, k, n, at(b, 0, 0), m,
                                                   at(tau, 0, 0), at(c, 0, 0), m, &lwork),
          "cusolverDn<t>ormqr_bufferSize", who);
    Workspace w;
    w.reserve(dev, static_cast<std::size_t>(lwork) * sizeof(T), 0, stream);
    for (std::int64_t i = 0; i < count; ++i)
      check((cs.*CusolverTyped<T>::ormqr)(s.handle(), CUBLAS_SIDE_LEFT, CUBLAS_OP_N, m, k, n, at(b, i, M * N), m,
                                          at(tau, i, N), at(c, i, ku * M), m, static_cast<E*>(w.device->data()), lwork,
                                          info + i),
            "cusolverDn<t>ormqr", who);
    out.ub = swap_last(c);
  }
  if (const int failed = first_info(infos, stream); failed != 0)
    fail("{}: cusolverDn<t>{}: argument {} is invalid", who, name_of(how), -failed);
  if (how == TallSvd::Orgqr) out.ub = matmul(swap_last(b), small.ub, {}, stream);  // Q U_R
  return out;
}

// The SVD of the stack `b` of column-major M x N matrices (M >= N > 0), overwritten.
ColumnSvd svd_by_columns(NDArray& b, std::int64_t M, std::int64_t N, bool full, bool uv, const Stream* stream,
                         std::string_view who) {
  const SvdPlan plan = svd_plan();
  return with_solver_type<true>(b.dtype(), [&](auto zero) {
    using T = decltype(zero);
    // A full U of a matrix that is not square comes from the QR too (Q's other columns).
    if ((M >= 2 * N || (full && M > N)) && plan.tall != TallSvd::None)
      return svd_after_qr<T>(b, M, N, full, uv, plan, stream, who);
    if (plan.debug) fmt::print(stderr, "luda svd: {} x {}, no QR first\n", M, N);
    return svd_by_routine<T>(b, M, N, full, uv, plan.small_for(N), plan, stream, who);
  });
}

// LAPACKE's gesdd on each matrix of the C-contiguous stack `a` (m x n), overwritten.
template <class T>
SvdResult svd_lapacke(NDArray& a, std::int64_t m, std::int64_t n, bool full, bool uv, std::string_view who) {
  const std::int64_t k = std::min(m, n), count = stack_count(a, 2);
  const Shape stack = stack_shape(a);
  const std::int64_t ucols = full ? m : k, vrows = full ? n : k;
  SvdResult r;
  r.s = NDArray::empty(stacked(stack, {k}), real_dtype(a.dtype()), a.device());
  if (uv) {
    r.u = NDArray::empty(stacked(stack, {m, ucols}), a.dtype(), a.device());
    r.vh = NDArray::empty(stacked(stack, {vrows, n}), a.dtype(), a.device());
  }
  const char jobz = uv ? (full ? 'A' : 'S') : 'N';
  const int M = as_lapack_int(m, who), N = as_lapack_int(n, who);
  T unused[1] = {};
  for (std::int64_t i = 0; i < count; ++i) {
    const int info = (lapacke().*LapackeTyped<T>::gesdd)(kRowMajor, jobz, M, N, matrix<T>(a, i, m * n), N,
                                                         matrix<Real<T>>(r.s, i, k),
                                                         uv ? matrix<T>(r.u, i, m * ucols) : unused,
                                                         uv ? as_lapack_int(ucols, who) : 1,
                                                         uv ? matrix<T>(r.vh, i, vrows * n) : unused,
                                                         N);  // LAPACKE checks ldvt >= n even without vectors
    if (info > 0 || lapacke_found_nan(info, {5})) fail("{}: SVD did not converge", who);
    if (info < 0) fail("{}: LAPACKE gesdd: argument {} is invalid", who, -info);
  }
  return r;
}

// Whether any element of x is NaN (waits for the device).
bool any_nan(const NDArray& x, const Stream* stream) {
  if (x.size() == 0) return false;
  std::array<jit::KernelArg, 1> in = {jit::KernelArg::of_array(x)};
  const NDArray found = reduce(Reduce::Max, apply("isnan", in, stream), std::nullopt, false, {}, stream);
  if (stream) stream->synchronize();
  return found.get({}).to_int64() != 0;
}

}  // namespace

// ---- qr -------------------------------------------------------------------------------

QrResult qr(const NDArray& a, std::string_view mode, const Stream* stream) {
  require_matrices(a, "qr");
  if (mode != "reduced" && mode != "complete" && mode != "r") {
    if (mode == "raw")
      fail(
          "qr: mode 'raw' (LAPACK's Householder reflectors) is not supported; the modes are 'reduced', 'complete' and 'r'");
    fail("qr: Unrecognized mode '{}'", mode);
  }
  refuse_recording("qr");
  const bool complete = mode == "complete", q_wanted = mode != "r";
  const std::int64_t m = a.shape()[a.shape().size() - 2], n = a.shape().back(), k = std::min(m, n);
  const DType t = solve_dtype(a.dtype(), "qr", true);
  const Device dev = a.device();
  const Shape stack = stack_shape(a);
  const std::int64_t count = stack_count(a, 2);
  const std::int64_t rrows = complete ? m : k, qcols = complete ? m : k;
  QrResult out;
  if (count == 0 || k == 0) {
    out.r = NDArray::zeros(stacked(stack, {rrows, n}), t, dev, stream);
    if (q_wanted) out.q = identities(stacked(stack, {m, qcols}), t, dev, stream);
    return out;
  }
  // A complex a needs no conjugation here: both libraries factor a itself (LAPACKE
  // converts the layout, cuSOLVER gets a copy by columns), and ungqr forms a unitary Q.
  with_solver_type<true>(t, [&](auto zero) {
    using T = decltype(zero);
    using E = typename CusolverTyped<T>::element;
    NDArray tau = NDArray::empty(stacked(stack, {k}), t, dev, stream);
    if (dev.is_cpu()) {
      NDArray f = working_copy(a, t, stream);  // row-major m x n each
      const int M = as_lapack_int(m, "qr"), N = as_lapack_int(n, "qr"), K = static_cast<int>(k);
      std::vector<bool> nan(static_cast<std::size_t>(count));
      for (std::int64_t i = 0; i < count; ++i) {
        const int info = (lapacke().*LapackeTyped<T>::geqrf)(kRowMajor, M, N, matrix<T>(f, i, m * n), N,
                                                             matrix<T>(tau, i, k));
        nan[static_cast<std::size_t>(i)] = lapacke_found_nan(info, {4});
        if (info < 0 && !nan[static_cast<std::size_t>(i)]) fail("qr: LAPACKE geqrf: argument {} is invalid", -info);
      }
      out.r = triangle(corner(f, rrows, n), false, stream);
      if (q_wanted) {
        out.q = NDArray::zeros(stacked(stack, {m, qcols}), t, dev, stream);  // LAPACKE reads every column
        corner(out.q, m, std::min(n, qcols)).assign(corner(f, m, std::min(n, qcols)));
        const int Q = as_lapack_int(qcols, "qr");
        for (std::int64_t i = 0; i < count; ++i) {
          if (nan[static_cast<std::size_t>(i)]) continue;
          const int info = (lapacke().*LapackeTyped<T>::orgqr)(kRowMajor, M, Q, K, matrix<T>(out.q, i, m * qcols), Q,
                                                               matrix<T>(tau, i, k));
          nan[static_cast<std::size_t>(i)] = lapacke_found_nan(info, {5});
          if (info < 0 && !nan[static_cast<std::size_t>(i)]) fail("qr: LAPACKE orgqr: argument {} is invalid", -info);
        }
      }
      // A NaN in a matrix: NaN factors, as LAPACK's own arithmetic gives NumPy.
      for (std::int64_t i = 0; i < count; ++i)
        if (nan[static_cast<std::size_t>(i)]) {
          nan_matrix(out.r, i, rrows * n);
          if (q_wanted) nan_matrix(out.q, i, m * qcols);
        }
      return;
    }
    // Column-major m x n: rows of storage are a's columns.
    NDArray f = working_copy(swap_last(a), t, stream);
    const cudaDataType ct = cuda_type(t);
    const Cusolver& cs = cusolver();
    NDArray infos = infos_for(count, dev, stream);
    int* info = static_cast<int*>(infos.data());
    {
      SolverSession s(dev, stream, "qr");
      std::size_t dev_bytes = 0, host_bytes = 0;
      check(cs.cusolverDnXgeqrf_bufferSize(s.handle(), s.params(), m, n, ct, f.data(), m, ct, tau.data(), ct,
                                           &dev_bytes, &host_bytes),
            "cusolverDnXgeqrf_bufferSize", "qr");
      Workspace w;
      w.reserve(dev, dev_bytes, host_bytes, stream);
      for (std::int64_t i = 0; i < count; ++i)
        check(cs.cusolverDnXgeqrf(s.handle(), s.params(), m, n, ct, matrix<T>(f, i, m * n), m, ct, matrix<T>(tau, i, k),
                                  ct, w.device->data(), dev_bytes, w.host.data(), host_bytes, info + i),
              "cusolverDnXgeqrf", "qr");
    }
    out.r = triangle(corner(swap_last(f), rrows, n), false, stream);
    if (q_wanted) {
      // Q from the reflectors, in f itself when it has Q's shape.
      NDArray q = f;
      if (qcols != n) {
        q = NDArray::empty(stacked(stack, {qcols, m}), t, dev, stream);
        corner(q, std::min(n, qcols), m).assign_on(corner(f, std::min(n, qcols), m), handle(stream));
      }
      const int M = as_lapack_int(m, "qr"), Q = as_lapack_int(qcols, "qr"), K = static_cast<int>(k);
      SolverSession s(dev, stream, "qr");
      int lwork = 0;
      check((cs.*CusolverTyped<T>::orgqr_bufferSize)(s.handle(), M, Q, K, reinterpret_cast<E*>(matrix<T>(q, 0, 0)), M,
                                                     reinterpret_cast<E*>(matrix<T>(tau, 0, 0)), &lwork),
            "cusolverDn<t>orgqr_bufferSize", "qr");
      Workspace w;
      w.reserve(dev, static_cast<std::size_t>(lwork) * sizeof(T), 0, stream);
      for (std::int64_t i = 0; i < count; ++i)
        check((cs.*CusolverTyped<T>::orgqr)(s.handle(), M, Q, K, reinterpret_cast<E*>(matrix<T>(q, i, m * qcols)), M,
                                            reinterpret_cast<E*>(matrix<T>(tau, i, k)),
                                            static_cast<E*>(w.device->data()), lwork, info + i),
              "cusolverDn<t>orgqr", "qr");
      out.q = swap_last(q);
    }
    // geqrf and orgqr set info only for an invalid argument, which the checks above rule
    // out; it is not read back, so that qr stays asynchronous (as CuPy's, whose devInfo
    // check is off by default) and QRs on several GPUs (chunked TSQR) run at once.
  });
  return out;
}

std::vector<QrResult> qr_each(const std::vector<NDArray>& arrays, std::string_view mode) {
  std::vector<QrResult> out(arrays.size());
  std::vector<Device> devices;
  std::vector<std::vector<std::size_t>> groups;  // array indices, per device
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const Device d = arrays[i].device();
    const auto at = std::find(devices.begin(), devices.end(), d);
    if (at == devices.end()) {
      devices.push_back(d);
      groups.push_back({i});
    } else {
      groups[static_cast<std::size_t>(at - devices.begin())].push_back(i);
    }
  }
  std::vector<std::exception_ptr> errors(arrays.size());
  auto run = [&](const std::vector<std::size_t>& group) {
    for (std::size_t i : group) {
      try {
        out[i] = qr(arrays[i], mode);
      } catch (...) {
        errors[i] = std::current_exception();
        return;  // the group's later arrays are not factored
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    for (std::size_t g = 1; g < groups.size(); ++g) threads.emplace_back(run, std::cref(groups[g]));
    if (!groups.empty()) run(groups[0]);
  }  // joined
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

// ---- eigh -----------------------------------------------------------------------------

EighResult eigh(const NDArray& a, std::string_view uplo, bool vectors, const Stream* stream) {
  const char* who = vectors ? "eigh" : "eigvalsh";
  require_square(a, who);
  if (uplo != "L" && uplo != "U") fail("{}: UPLO argument must be 'L' or 'U', got '{}'", who, uplo);
  refuse_recording(who);
  const std::int64_t n = a.shape().back(), count = stack_count(a, 2);
  const DType t = solve_dtype(a.dtype(), who, true), rt = real_dtype(t);
  const Device dev = a.device();
  const Shape stack = stack_shape(a);
  EighResult out;
  out.w = NDArray::empty(stacked(stack, {n}), rt, dev, stream);
  NDArray v = working_copy(a, t, stream);  // the routine overwrites it with the eigenvectors
  if (count == 0 || n == 0) {
    if (vectors) out.v = v;
    return out;
  }
  // A complex a is Hermitian: heevd on the cpu, Xsyevd with CUDA_C types on a GPU, the
  // eigenvalues real (rt) either way.
  with_solver_type<true>(t, [&](auto zero) {
    using T = decltype(zero);
    if (dev.is_cpu()) {
      const int N = as_lapack_int(n, who);
      for (std::int64_t i = 0; i < count; ++i) {
        const int info = (lapacke().*LapackeTyped<T>::syevd)(kRowMajor, vectors ? 'V' : 'N', uplo[0], N,
                                                             matrix<T>(v, i, n * n), N, matrix<Real<T>>(out.w, i, n));
        if (info > 0) fail("{}: Eigenvalues did not converge", who);
        if (lapacke_found_nan(info, {5})) {
          nan_matrix(out.w, i, n);
          nan_matrix(v, i, n * n);
        } else if (info < 0) {
          fail("{}: LAPACKE syevd: argument {} is invalid", who, -info);
        }
      }
      if (vectors) out.v = v;
      return;
    }
    // Row-major a is a^T to cuSOLVER: its lower triangle is the upper one there. The
    // eigenvectors come back as columns, which are rows of storage. A Hermitian a's a^T is
    // conj(a), with the same eigenvalues and the conjugate eigenvectors: conjugated back.
    const cublasFillMode_t fill = uplo == "L" ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const cudaDataType ct = cuda_type(t), crt = cuda_type(rt);
    const Cusolver& cs = cusolver();
    NDArray infos = infos_for(count, dev, stream);
    {
      SolverSession s(dev, stream, who);
      std::size_t dev_bytes = 0, host_bytes = 0;
      check(cs.cusolverDnXsyevd_bufferSize(s.handle(), s.params(), jobz, fill, n, ct, v.data(), n, crt, out.w.data(),
                                           ct, &dev_bytes, &host_bytes),
            "cusolverDnXsyevd_bufferSize", who);
      Workspace w;
      w.reserve(dev, dev_bytes, host_bytes, stream);
      for (std::int64_t i = 0; i < count; ++i)
        check(cs.cusolverDnXsyevd(s.handle(), s.params(), jobz, fill, n, ct, matrix<T>(v, i, n * n), n, crt,
                                  matrix<Real<T>>(out.w, i, n), ct, w.device->data(), dev_bytes, w.host.data(),
                                  host_bytes, static_cast<int*>(infos.data()) + i),
              "cusolverDnXsyevd", who);
    }
    const int failed = first_info(infos, stream);
    if (failed > 0) fail("{}: Eigenvalues did not converge", who);
    if (failed < 0) fail("{}: cusolverDnXsyevd: argument {} is invalid", who, -failed);
    if (vectors) {
      out.v = swap_last(v);
      if (is_complex(t)) {
        std::array<jit::KernelArg, 1> in = {jit::KernelArg::of_array(out.v)};
        out.v = apply("conj", in, stream);
      }
    }
  });
  return out;
}

// ---- svd ------------------------------------------------------------------------------

SvdResult svd(const NDArray& a, bool full_matrices, bool compute_uv, const Stream* stream, std::string_view who) {
  require_matrices(a, who);
  refuse_recording(who);
  const std::int64_t m = a.shape()[a.shape().size() - 2], n = a.shape().back(), k = std::min(m, n);
  const DType t = solve_dtype(a.dtype(), who, true);
  const Device dev = a.device();
  const Shape stack = stack_shape(a);
  const std::int64_t count = stack_count(a, 2);
  const bool full = full_matrices && compute_uv;
  SvdResult out;
  if (count == 0 || k == 0) {
    out.s = NDArray::zeros(stacked(stack, {k}), real_dtype(t), dev, stream);
    if (compute_uv) {
      out.u = identities(stacked(stack, {m, full ? m : k}), t, dev, stream);
      out.vh = identities(stacked(stack, {full ? n : k, n}), t, dev, stream);
    }
    return out;
  }
  if (dev.is_cpu()) {
    NDArray w = working_copy(a, t, stream);
    out = with_solver_type<true>(t, [&](auto zero) {
      return svd_lapacke<decltype(zero)>(w, m, n, full, compute_uv, who);
    });
  } else {
    // B = A (tall) or A^T (wide), M x N with M >= N, column-major; A^T's columns are A's
    // rows, so a wide A is already stored so.
    const bool tall = m >= n;
    NDArray b = working_copy(tall ? swap_last(a) : a, t, stream);
    ColumnSvd f = svd_by_columns(b, std::max(m, n), k, full, compute_uv, stream, who);
    out.s = f.s;
    if (compute_uv) {
      // A = U_B S V_B^T, or A = B^T = V_B S U_B^T. Complex: B = U_B S V_B^H, and B^T =
      // conj(V_B) S U_B^T, conj(V_B) being (V_B^H)^T: the same views.
      out.u = tall ? f.ub : swap_last(f.vbt);
      out.vh = tall ? f.vbt : swap_last(f.ub);
    }
  }
  if (any_nan(out.s, stream)) fail("{}: SVD did not converge", who);
  return out;
}

}  // namespace luda::ops

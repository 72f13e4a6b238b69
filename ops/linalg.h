// Linear algebra as NumPy defines it, on the libraries that do it best: cuBLAS on CUDA
// devices and OpenBLAS on the cpu, both loaded with dlopen at their first use
// (runtime/shared_library.h), so that luda links neither and a missing one is an error
// naming it only when a routine needs it. No GEMM is written here for float dtypes;
// integer and bool products are luda's own kernels (a broadcast product and a reduction).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::ops {

// NumPy's matmul: 2-D operands are matrices; stacks of them (more axes) broadcast over the
// leading axes; a 1-D first operand is a row (its axis removed from the result), a 1-D
// second a column. The result has the operands' promoted dtype; float32 and float64 go to
// the BLAS, other dtypes to luda's kernels (int sums wrap in their dtype as NumPy's do;
// bools give any(a and b)). `out`, when valid, receives it (its dtype and shape must be
// the result's). Errors, NumPy's with both shapes:
//   "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature
//    (n?,k),(k,m?)->(n?,m?) (size 3 is different from 2); the shapes are (4, 2) and (3, 5)"
//   "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core with
//    signature (n?,k),(k,m?)->(n?,m?) requires 1)"
//   "matmul: the stacks of matrices of shapes (2, 3, 4) and (5, 4, 1) do not broadcast together"
NDArray matmul(const NDArray& a, const NDArray& b, NDArray out = {}, const Stream* stream = nullptr);

// NumPy's dot: a 0-d operand multiplies; two 1-D arrays give their inner product (0-d);
// otherwise the sum over x's last axis and y's second-to-last (y's only, when 1-D): a
// result of shape x.shape[:-1] + y.shape[:-2] + y.shape[-1:]. On the BLAS as matmul.
// Error: "dot: shapes (2, 3) and (4, 5) not aligned: 3 (axis 2) != 4 (axis 1)".
NDArray dot(const NDArray& x, const NDArray& y, NDArray out = {}, const Stream* stream = nullptr);
// NumPy's vdot: the inner product of the two arrays' elements in C order (as many in
// each: "vdot: x has 6 elements and y 5; vdot needs as many in each").
NDArray vdot(const NDArray& x, const NDArray& y, NDArray out = {}, const Stream* stream = nullptr);
// NumPy's inner: the sum over both last axes, of shape x.shape[:-1] + y.shape[:-1]
// ("inner: shapes (2, 3) and (4, 5) not aligned: 3 (axis 2) != 5 (axis 2)").
NDArray inner(const NDArray& x, const NDArray& y, NDArray out = {}, const Stream* stream = nullptr);
// NumPy's outer: every element of x (in C order) times every element of y, of shape (x.size, y.size).
NDArray outer(const NDArray& x, const NDArray& y, NDArray out = {}, const Stream* stream = nullptr);
// NumPy's tensordot: the sum over x's axes `xa` and y's axes `ya` (0-based, as many each,
// of matching extents), of shape x's other axes then y's. Errors: "tensordot: shape-mismatch
// for sum: axis 2 of (2, 3) is 3, axis 1 of (4, 5) is 4", "tensordot: 2 axes of x and 1 of y".
NDArray tensordot(const NDArray& x, const NDArray& y, const std::vector<int>& xa, const std::vector<int>& ya,
                  const Stream* stream = nullptr);
// NumPy's trace: the sums of the diagonals of axes `axis1` and `axis2` (0-based, distinct)
// `offset` above the main one (below, when negative), with sum's dtype rules.
NDArray trace(const NDArray& x, std::int64_t offset, int axis1, int axis2, const Stream* stream = nullptr);

// numpy.linalg's solve, inv, det and cholesky on stacks of square matrices (the last two
// axes), on cuSOLVER (GPU) and LAPACKE (cpu), loaded like the BLAS. float32 stays
// float32; every other dtype computes in float64. Errors, NumPy's LinAlgError texts:
//   "solve: Singular matrix", "inv: Singular matrix",
//   "cholesky: Matrix is not positive definite",
//   "det: 1-dimensional array given. Array must be at least two-dimensional",
//   "inv: Last 2 dimensions of the array must be square, got shape (2, 3)".
// solve(a, b): b a vector (1-D, NumPy 2's rule) or a stack of n x k matrices; stacks
// broadcast. cholesky reads a's lower triangle and gives L (zeros above the diagonal).
NDArray solve(const NDArray& a, const NDArray& b, const Stream* stream = nullptr);
NDArray inv(const NDArray& a, const Stream* stream = nullptr);
NDArray det(const NDArray& a, const Stream* stream = nullptr);
NDArray cholesky(const NDArray& a, const Stream* stream = nullptr);

// numpy.linalg's orthogonal factorizations of stacks of matrices (the last two axes),
// on cuSOLVER (GPU) and LAPACKE (cpu): float32 stays float32, every other dtype computes in
// float64. Empty matrices give NumPy's shapes (full_matrices and "complete" give
// identities where the factor is square). Errors, NumPy's texts after the routine's name:
//   "svd: 1-dimensional array given. Array must be at least two-dimensional",
//   "svd: SVD did not converge" (also for a NaN in the input),
//   "eigh: Last 2 dimensions of the array must be square, got shape (2, 3)",
//   "eigh: Eigenvalues did not converge", "qr: Unrecognized mode 'raw2'".
//
// qr: mode "reduced" (Q m x k, R k x n, k = min(m, n)), "complete" (Q m x m, R m x n) or
// "r" (R alone, k x n; q is left invalid). A NaN gives NaN factors, as NumPy's.
struct QrResult {
  NDArray q, r;
};
QrResult qr(const NDArray& a, std::string_view mode, const Stream* stream = nullptr);
// qr of each array (mode as qr's, on each array's device's default stream), the arrays of
// each device on a host thread of their own where they are on several devices: cuSOLVER
// and LAPACK hold the calling thread until a factorization ends, so one thread would run
// the devices' QRs one after another. The first error, in array order, is raised once
// every thread has ended.
std::vector<QrResult> qr_each(const std::vector<NDArray>& arrays, std::string_view mode);
// eigh (vectors) and eigvalsh: the eigenvalues in ascending order and the eigenvectors as
// columns, of the symmetric matrices whose lower ("L") or upper ("U") triangle a holds.
struct EighResult {
  NDArray w, v;
};
EighResult eigh(const NDArray& a, std::string_view uplo, bool vectors, const Stream* stream = nullptr);
// svd: a = u @ diag(s) @ vh, s descending; with compute_uv, u is m x m and vh n x n when
// full_matrices, else m x k and k x n. Without compute_uv only s is valid. `who` names
// the routine in errors (norm, pinv and matrix_rank call it too). On a GPU a tall matrix
// (m >= 2n, or a wide one's transpose) is factored by QR first; LUDA_SVD_SMALL and
// LUDA_SVD_TALL choose the cuSOLVER routines (docs/linalg.md).
struct SvdResult {
  NDArray u, s, vh;
};
SvdResult svd(const NDArray& a, bool full_matrices, bool compute_uv, const Stream* stream = nullptr,
              std::string_view who = "svd");

// numpy.linalg.lstsq: x minimizing |b - a x| (the least-norm one where a is rank
// deficient), for one m x n matrix a and b of shape (m,) or (m, k); singular values at
// most rcond times the largest count as zero (default: the dtype's epsilon times
// max(m, n)). residuals: the squared norm of each column of b - a x when the rank is n
// and m > n, else empty; rank; s, a's singular values. On the cpu LAPACKE's gelsd; on a
// GPU the SVD above. Errors: "lstsq: 3-dimensional array given. Array must be
// two-dimensional", "lstsq: Incompatible dimensions", "lstsq: SVD did not converge in
// Linear Least Squares".
struct LstsqResult {
  NDArray x, residuals;
  std::int64_t rank = 0;
  NDArray s;
};
LstsqResult lstsq(const NDArray& a, const NDArray& b, std::optional<double> rcond, const Stream* stream = nullptr);
// numpy.linalg.pinv: the pseudo-inverse of each matrix of a stack, from its SVD, with
// singular values at most rcond times the largest taken as zero (NumPy 2's default 1e-15;
// rtol, NumPy's newer name, instead; not both: "pinv: `rtol` and `rcond` can't be both set.").
NDArray pinv(const NDArray& a, std::optional<double> rcond, std::optional<double> rtol, const Stream* stream = nullptr);
// numpy.linalg.matrix_rank: the count of singular values above tol (default: the largest
// times rtol, whose default is max(m, n) times the dtype's epsilon), per matrix of a stack,
// as int64; for a 0-d or 1-D a, 1 unless every element is 0.
NDArray matrix_rank(const NDArray& a, std::optional<double> tol, std::optional<double> rtol,
                    const Stream* stream = nullptr);

// numpy.linalg.norm: over `axes` (0-based; one axis: a vector norm, two: a matrix norm;
// none: every element as one vector, or the matrix norm of a 2-D x when `ord` is given).
// Vector ords: 2 (the default), 1, inf, -inf, 0 (the count of nonzeros), any p. Matrix
// ords: "fro" (the default), 1, -1, inf, -inf, and from the singular values 2 (the
// largest), -2 (the smallest) and "nuc" (their sum).
// Floats keep float32; other dtypes give float64.
struct NormOrd {
  enum class Kind { Default, Number, Fro, Nuc } kind = Kind::Default;
  double p = 2;
};
NDArray norm(const NDArray& x, NormOrd ord, const std::optional<std::vector<int>>& axes, bool keepdims,
             const Stream* stream = nullptr);

// The file each library was loaded from, loading it now (tests, luda.linalg_info).
// Errors: "cuBLAS not found; tried: ..." and "OpenBLAS not found; tried: ...", ending with
// the fix.
std::string cublas_path();
std::string openblas_path();

}  // namespace luda::ops

// Linear algebra as NumPy defines it, on the libraries that do it best: cuBLAS on CUDA
// devices and OpenBLAS on the cpu, both loaded with dlopen at their first use
// (runtime/shared_library.h), so that luda links neither and a missing one is an error
// naming it only when a routine needs it. No GEMM is written here for float dtypes;
// integer and bool products are luda's own kernels (a broadcast product and a reduction).
#pragma once

#include <string>

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

// The file each library was loaded from, loading it now (tests, luda.linalg_info).
// Errors: "cuBLAS not found; tried: ..." and "OpenBLAS not found; tried: ...", ending with
// the fix.
std::string cublas_path();
std::string openblas_path();

}  // namespace luda::ops

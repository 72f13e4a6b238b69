#include "ops/linalg.h"

#include <cublas_api.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <complex>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "jit/call/call_args.h"
#include "ops/array_math.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/graph/recording.h"
#include "runtime/shared_library.h"

namespace luda::ops {
namespace {

// ---- the libraries ------------------------------------------------------------------

// cuBLAS's entry points that luda calls: the GEMM of any element type, one matrix or a
// strided batch.
// clang-format off
#define LUDA_CUBLAS_FUNCTIONS(X)                                                 \
  X(cublasCreate_v2) X(cublasSetStream_v2) X(cublasGetStatusString) X(cublasGemmEx) \
  X(cublasGemmStridedBatchedEx)
// clang-format on

// The GEMMs' C signatures (C++ code also sees cuBLAS's inline overloads of these names
// that take a cudaDataType compute type, so decltype(&::cublasGemmEx) would be ambiguous).
using cublasGemmEx_type = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                             const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                                             int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                                             cublasGemmAlgo_t);
using cublasGemmStridedBatchedEx_type = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                                           int, int, const void*, const void*, cudaDataType, int,
                                                           long long, const void*, cudaDataType, int, long long,
                                                           const void*, void*, cudaDataType, int, long long, int,
                                                           cublasComputeType_t, cublasGemmAlgo_t);
using cublasCreate_v2_type = decltype(&::cublasCreate_v2);
using cublasSetStream_v2_type = decltype(&::cublasSetStream_v2);
using cublasGetStatusString_type = decltype(&::cublasGetStatusString);

struct Cublas {
  SharedLibrary lib;
#define LUDA_CUBLAS_MEMBER(name) name##_type name = nullptr;
  LUDA_CUBLAS_FUNCTIONS(LUDA_CUBLAS_MEMBER)
#undef LUDA_CUBLAS_MEMBER
};

Cublas load_cublas() {
  static constexpr const char* kSymbols[] = {
#define LUDA_CUBLAS_NAME(name) #name,
      LUDA_CUBLAS_FUNCTIONS(LUDA_CUBLAS_NAME)
#undef LUDA_CUBLAS_NAME
  };
  Cublas c;
  c.lib = open_library(
      "cuBLAS",
      library_candidates({"LUDA_CUBLAS", "libcublas.so", true, {"libcublas.so", "libcublas.so.13", "libcublas.so.12"}}),
      kSymbols,
      "set LUDA_CUBLAS to the path of libcublas.so (from the CUDA toolkit, version 12 or 13), or install the "
      "toolkit's libraries");
  std::size_t k = 0;
#define LUDA_CUBLAS_SET(name) c.name = reinterpret_cast<name##_type>(c.lib.symbols[k++]);
  LUDA_CUBLAS_FUNCTIONS(LUDA_CUBLAS_SET)
#undef LUDA_CUBLAS_SET
  return c;
}
const Cublas& cublas() { return load_once(&load_cublas); }

void check(cublasStatus_t s, const char* call, std::string_view who) {
  if (s != CUBLAS_STATUS_SUCCESS) fail("{}: {}: {}", who, call, cublas().cublasGetStatusString(s));
}

// A device's handle, made in its primary context at first use and kept for the process;
// calls on one handle take turns (a handle is not for two threads at once).
struct Handle {
  std::mutex mutex;
  cublasHandle_t handle = nullptr;
};
Handle& handle_for(int ordinal, std::string_view who) {
  static std::mutex mutex;
  static std::map<int, Handle> handles;
  std::lock_guard lock(mutex);
  Handle& h = handles[ordinal];
  if (!h.handle) {
    ContextScope scope(ordinal);
    check(cublas().cublasCreate_v2(&h.handle), "cublasCreate", who);
  }
  return h;
}

// CBLAS's row-major GEMMs (the reference CBLAS interface: enums passed as ints).
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                       int);
// cblas_cgemm and cblas_zgemm: alpha and beta by address, matrices untyped.
using ComplexGemm = void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*,
                             void*, int);
struct Openblas {
  SharedLibrary lib;
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  ComplexGemm cgemm = nullptr, zgemm = nullptr;
};
Openblas load_openblas() {
  static constexpr const char* kSymbols[] = {"cblas_sgemm", "cblas_dgemm", "cblas_cgemm", "cblas_zgemm"};
  Openblas o;
  o.lib = open_library("OpenBLAS",
                       library_candidates(
                           {"LUDA_OPENBLAS", "libopenblas.so", false, {"libopenblas.so.0", "libopenblas.so"}}),
                       kSymbols,
                       "install Debian's OpenBLAS (apt-get install libopenblas0), or set LUDA_OPENBLAS to the path "
                       "of libopenblas.so.0");
  o.sgemm = reinterpret_cast<Sgemm>(o.lib.symbols[0]);
  o.dgemm = reinterpret_cast<Dgemm>(o.lib.symbols[1]);
  o.cgemm = reinterpret_cast<ComplexGemm>(o.lib.symbols[2]);
  o.zgemm = reinterpret_cast<ComplexGemm>(o.lib.symbols[3]);
  return o;
}
const Openblas& openblas() { return load_once(&load_openblas); }

// ---- operands -------------------------------------------------------------------------

constexpr char kSignature[] = "(n?,k),(k,m?)->(n?,m?)";

// A stack of matrices as a GEMM reads it: the last two axes, stored by rows (row-major:
// each row `ld` elements after the last) or by columns, with the stack's leading axes
// broadcast to the result's.
struct Operand {
  NDArray a;            // its elements (a copy when the original's layout does not do)
  bool rows = true;     // stored by rows
  std::int64_t ld = 1;  // elements between rows (by rows) or columns (by columns)
  Strides batch;        // strides of the result's stack axes (0 where broadcast)
};

// Whether the last two axes of x are a matrix a GEMM reads in place, and how.
bool gemm_layout(const NDArray& x, bool* rows, std::int64_t* ld) {
  const int n = x.ndim();
  const std::int64_t r = x.shape()[n - 2], c = x.shape()[n - 1];
  const std::int64_t sr = x.strides()[n - 2], sc = x.strides()[n - 1];
  if ((sc == 1 || c == 1) && (r == 1 || sr >= std::max<std::int64_t>(1, c))) {
    *rows = true;
    *ld = r == 1 ? std::max<std::int64_t>(1, c) : sr;
    return true;
  }
  if ((sr == 1 || r == 1) && (c == 1 || sc >= std::max<std::int64_t>(1, r))) {
    *rows = false;
    *ld = c == 1 ? std::max<std::int64_t>(1, r) : sc;
    return true;
  }
  return false;
}

Operand operand(const NDArray& x, DType dtype, const Shape& stack, const Stream* stream) {
  Operand o;
  o.a = x;
  if (x.dtype() != dtype || !gemm_layout(x, &o.rows, &o.ld)) {
    o.a = x.astype(dtype, stream);
    gemm_layout(o.a, &o.rows, &o.ld);
  }
  // The stack's strides, broadcast to the result's stack.
  const std::size_t lead = stack.size() - (static_cast<std::size_t>(o.a.ndim()) - 2);
  o.batch.assign(stack.size(), 0);
  for (std::size_t k = 0; k + 2 < static_cast<std::size_t>(o.a.ndim()); ++k)
    if (o.a.shape()[k] != 1) o.batch[lead + k] = o.a.strides()[k];
  return o;
}

// The one distance between consecutive matrices of a stack, when there is one (0 for a
// stack that repeats one matrix).
std::optional<std::int64_t> uniform(const Shape& stack, const Strides& strides) {
  std::optional<std::int64_t> step;
  std::int64_t expect = 0;
  for (std::size_t k = stack.size(); k-- > 0;) {
    if (stack[k] == 1) continue;
    if (!step) {
      step = strides[k];
      expect = strides[k] * stack[k];
      continue;
    }
    if (strides[k] != expect) return std::nullopt;
    expect *= stack[k];
  }
  return step.value_or(0);
}

[[noreturn]] void too_large(std::string_view what, std::int64_t n) {
  fail("matmul: {} of {} is more than the BLAS takes (at most {})", what, n, INT_MAX);
}
int as_int(std::int64_t n, std::string_view what) {
  if (n > INT_MAX) too_large(what, n);
  return static_cast<int>(n);
}

// count GEMMs of m x k by k x n, C row-major m x n; a and b at their first matrices,
// `a_step`/`b_step` elements apart, C's matrices m * n apart.
void gemm(const Operand& a, const Operand& b, std::int64_t a_off, std::int64_t b_off, std::int64_t a_step,
          std::int64_t b_step, NDArray& c, std::int64_t c_off, std::int64_t count, std::int64_t m, std::int64_t n,
          std::int64_t k, const Stream* stream) {
  const DType t = c.dtype();
  const auto size = static_cast<std::int64_t>(itemsize(t));
  const auto* pa = static_cast<const std::byte*>(a.a.data()) + a_off * size;
  const auto* pb = static_cast<const std::byte*>(b.a.data()) + b_off * size;
  auto* pc = static_cast<std::byte*>(c.data()) + c_off * size;
  const int M = as_int(m, "a dimension"), N = as_int(n, "a dimension"), K = as_int(k, "a dimension");
  const int lda = as_int(a.ld, "a leading dimension"), ldb = as_int(b.ld, "a leading dimension");
  if (c.device().is_cpu()) {
    const Openblas& blas = openblas();
    const int ta = a.rows ? kNoTrans : kTrans, tb = b.rows ? kNoTrans : kTrans;
    const std::complex<double> one(1), zero(0);
    const std::complex<float> one32(1), zero32(0);
    for (std::int64_t i = 0; i < count; ++i) {
      const std::byte *ai = pa + i * a_step * size, *bi = pb + i * b_step * size;
      std::byte* ci = pc + i * m * n * size;
      switch (t) {
        case DType::Float32:
          blas.sgemm(kRowMajor, ta, tb, M, N, K, 1.0f, reinterpret_cast<const float*>(ai), lda,
                     reinterpret_cast<const float*>(bi), ldb, 0.0f, reinterpret_cast<float*>(ci), N);
          break;
        case DType::Float64:
          blas.dgemm(kRowMajor, ta, tb, M, N, K, 1.0, reinterpret_cast<const double*>(ai), lda,
                     reinterpret_cast<const double*>(bi), ldb, 0.0, reinterpret_cast<double*>(ci), N);
          break;
        case DType::Complex64: blas.cgemm(kRowMajor, ta, tb, M, N, K, &one32, ai, lda, bi, ldb, &zero32, ci, N); break;
        case DType::Complex128: blas.zgemm(kRowMajor, ta, tb, M, N, K, &one, ai, lda, bi, ldb, &zero, ci, N); break;
        default: throw InternalError("gemm: no CBLAS routine for " + std::string(dtype_name(t)));
      }
    }
    return;
  }
  // Column-major cuBLAS computes C^T = B^T A^T: a matrix stored by rows is its transpose
  // stored by columns. 16-bit floats multiply into float32 sums (CUBLAS_COMPUTE_32F, as
  // CuPy and PyTorch ask); alpha and beta are of the compute type.
  const Cublas& cb = cublas();
  Handle& h = handle_for(c.device().index, "matmul");
  std::lock_guard lock(h.mutex);
  ContextScope scope(c.device().index);
  check(cb.cublasSetStream_v2(h.handle, reinterpret_cast<cudaStream_t>(stream ? stream->handle() : nullptr)),
        "cublasSetStream", "matmul");
  const cublasOperation_t ob = b.rows ? CUBLAS_OP_N : CUBLAS_OP_T, oa = a.rows ? CUBLAS_OP_N : CUBLAS_OP_T;
  cudaDataType type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (t) {
    case DType::Float16: type = CUDA_R_16F; break;
    case DType::BFloat16: type = CUDA_R_16BF; break;
    case DType::Float32: type = CUDA_R_32F; break;
    case DType::Float64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    case DType::Complex64: type = CUDA_C_32F; break;
    case DType::Complex128:
      type = CUDA_C_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    default: throw InternalError("gemm: no cuBLAS type for " + std::string(dtype_name(t)));
  }
  // 1 and 0 as the compute type reads them: a float, a double, or a complex's two parts.
  const double one64[2] = {1, 0}, zero64[2] = {0, 0};
  const float one32[2] = {1, 0}, zero32[2] = {0, 0};
  const void* one = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(one64) : one32;
  const void* zero = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(zero64) : zero32;
  // One call for a matrix, strided batches for a stack (at most INT_MAX matrices a call).
  if (count == 1) {
    check(cb.cublasGemmEx(h.handle, ob, oa, N, M, K, one, pb, type, ldb, pa, type, lda, zero, pc, type, N, compute,
                          CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx", "matmul");
    return;
  }
  for (std::int64_t done = 0; done < count;) {
    const std::int64_t now = std::min<std::int64_t>(count - done, INT_MAX);
    check(cb.cublasGemmStridedBatchedEx(h.handle, ob, oa, N, M, K, one, pb + done * b_step * size, type, ldb, b_step,
                                        pa + done * a_step * size, type, lda, a_step, zero, pc + done * m * n * size,
                                        type, N, m * n, static_cast<int>(now), compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx", "matmul");
    done += now;
  }
}

// A view of x with its 1-D operand made a matrix: a row (first operand) or a column.
NDArray as_matrix(const NDArray& x, bool first) {
  if (x.ndim() != 1) return x;
  const std::int64_t n = x.shape()[0], s = x.strides()[0];
  return first ? NDArray::view(x.buffer(), x.dtype(), {1, n}, {n * s, s}, x.offset())
               : NDArray::view(x.buffer(), x.dtype(), {n, 1}, {s, 1}, x.offset());
}

// Integer and bool operands: each product formed by a broadcast multiply over (..., m, k,
// n), reduced over k (ints wrap in their dtype, as NumPy's sums do; bools: any of and).
void matmul_kernels(const NDArray& a, const NDArray& b, NDArray& c, const Stream* stream) {
  const int na = a.ndim(), nb = b.ndim();
  Shape sa = a.shape(), sb = b.shape();
  Strides ta = a.strides(), tb = b.strides();
  sa.push_back(1);
  ta.push_back(0);
  sb.insert(sb.end() - 2, 1);
  tb.insert(tb.end() - 2, 0);
  const NDArray wa = NDArray::view(a.buffer(), a.dtype(), sa, ta, a.offset());
  const NDArray wb = NDArray::view(b.buffer(), b.dtype(), sb, tb, b.offset());
  std::array<jit::KernelArg, 2> in = {jit::KernelArg::of_array(wa), jit::KernelArg::of_array(wb)};
  const int axis = std::max(na + 1, nb + 1) - 2;  // k, in the product's axes
  Shape cs = c.shape();                           // c's view as (..., m, n)
  if (c.dtype() == DType::Bool) {
    NDArray both = apply("logical_and", in, stream);
    NDArray r = reduce(Reduce::Max, both, std::vector<int>{axis}, false, {}, stream);
    c.assign_on(r.reshape(cs), stream ? stream->handle() : nullptr);
    return;
  }
  NDArray product = apply("multiply", in, stream);
  ReduceOptions o;
  o.dtype = c.dtype();
  NDArray r = reduce(Reduce::Sum, product, std::vector<int>{axis}, false, {}, stream, o);
  c.assign_on(r.reshape(cs), stream ? stream->handle() : nullptr);
}

}  // namespace

NDArray matmul(const NDArray& a, const NDArray& b, NDArray out, const Stream* stream) {
  if (!a.valid() || !b.valid()) fail("matmul: an array is an empty handle");
  for (int k = 0; k < 2; ++k) {
    const NDArray& x = k == 0 ? a : b;
    if (x.ndim() == 0)
      fail("matmul: Input operand {} does not have enough dimensions (has 0, gufunc core with signature {} "
           "requires 1)",
           k, kSignature);
  }
  if (a.device() != b.device())
    fail("matmul: the operands are on {} and {}; both must be on one device (move one with x:to(device))",
         a.device().str(), b.device().str());
  if (GraphRecording::active())
    fail("matmul: a call of the BLAS cannot be recorded in a graph yet; multiply before or after the graph runs");
  const NDArray A = as_matrix(a, true), B = as_matrix(b, false);
  const std::int64_t m = A.shape()[A.ndim() - 2], k = A.shape()[A.ndim() - 1];
  const std::int64_t k2 = B.shape()[B.ndim() - 2], n = B.shape()[B.ndim() - 1];
  if (k != k2)
    fail("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature {} (size {} is "
         "different from {}); the shapes are {} and {}",
         kSignature, k2, k, shape_str(a.shape()), shape_str(b.shape()));
  const Shape stack_a(A.shape().begin(), A.shape().end() - 2), stack_b(B.shape().begin(), B.shape().end() - 2);
  Shape stack;
  try {
    stack = broadcast_shapes(stack_a, stack_b);
  } catch (const Error&) {
    fail("matmul: the stacks of matrices of shapes {} and {} do not broadcast together", shape_str(a.shape()),
         shape_str(b.shape()));
  }
  Shape shape = stack;
  if (a.ndim() > 1) shape.push_back(m);
  if (b.ndim() > 1) shape.push_back(n);
  const DType dtype = promote_types(a.dtype(), b.dtype());
  if (out.valid()) {
    if (out.dtype() != dtype || out.shape() != shape)
      fail("matmul: out is a {} array of shape {}; the result is a {} array of shape {}", dtype_name(out.dtype()),
           shape_str(out.shape()), dtype_name(dtype), shape_str(shape));
    if (out.device() != a.device())
      fail("matmul: out is on {}, the operands on {}", out.device().str(), a.device().str());
  } else {
    out = NDArray::empty(shape, dtype, a.device(), stream);
  }
  if (out.size() == 0) return out;
  // The result as a C-contiguous stack of m x n matrices (out itself when it is one).
  Shape full = stack;
  full.push_back(m);
  full.push_back(n);
  NDArray c = out.is_c_contiguous() ? NDArray::view(out.buffer(), dtype, full, c_strides(full), out.offset())
                                    : NDArray::empty(full, dtype, a.device(), stream);
  if (k == 0) {
    c.fill(Scalar::of_int(0, dtype));
  } else if (a.device().is_cpu() && (dtype == DType::Float16 || dtype == DType::BFloat16)) {
    // CBLAS has no 16-bit GEMM: float32 products, rounded once at the end (as NumPy's
    // float16 matmul sums in float32).
    c.assign(matmul(A.astype(DType::Float32, stream), B.astype(DType::Float32, stream), {}, stream));
  } else if (!is_inexact(dtype)) {
    matmul_kernels(A.dtype() == dtype ? A : A.astype(dtype, stream), B.dtype() == dtype ? B : B.astype(dtype, stream),
                   c, stream);
  } else {
    const Operand oa = operand(A, dtype, stack, stream), ob = operand(B, dtype, stack, stream);
    std::int64_t count = 1;
    for (std::int64_t s : stack) count *= s;
    const auto step_a = uniform(stack, oa.batch), step_b = uniform(stack, ob.batch);
    if (step_a && step_b) {
      gemm(oa, ob, 0, 0, *step_a, *step_b, c, 0, count, m, n, k, stream);
    } else {  // stacks broadcast unevenly: one product at a time
      std::vector<std::int64_t> at(stack.size(), 0);
      for (std::int64_t i = 0; i < count; ++i) {
        std::int64_t off_a = 0, off_b = 0;
        for (std::size_t d = 0; d < stack.size(); ++d) off_a += at[d] * oa.batch[d], off_b += at[d] * ob.batch[d];
        gemm(oa, ob, off_a, off_b, 0, 0, c, i * m * n, 1, m, n, k, stream);
        for (std::size_t d = stack.size(); d-- > 0;) {
          if (++at[d] < stack[d]) break;
          at[d] = 0;
        }
      }
    }
  }
  if (c.data() != out.data() || !out.is_c_contiguous())
    out.assign_on(c.reshape(shape), stream ? stream->handle() : nullptr);
  return out;
}

namespace {

// x as a C-contiguous array of `shape` (a view when x is contiguous, else of a copy on
// its device).
NDArray as_shape(const NDArray& x, const Shape& shape, const Stream* stream) {
  return x.contiguous(stream).reshape(shape);
}

// x without the extent-1 axes `axes` (a view).
NDArray squeeze_axes(const NDArray& x, const std::vector<int>& axes) {
  Shape shape;
  Strides strides;
  for (int d = 0; d < x.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end())
      shape.push_back(x.shape()[static_cast<std::size_t>(d)]),
          strides.push_back(x.strides()[static_cast<std::size_t>(d)]);
  return NDArray::view(x.buffer(), x.dtype(), shape, strides, x.offset());
}

// The result, or `out` holding it (of the result's dtype and shape; any strides).
NDArray deliver(const NDArray& result, NDArray out, std::string_view who, const Stream* stream) {
  if (!out.valid()) return result;
  if (out.dtype() != result.dtype() || out.shape() != result.shape())
    fail("{}: out is a {} array of shape {}; the result is a {} array of shape {}", who, dtype_name(out.dtype()),
         shape_str(out.shape()), dtype_name(result.dtype()), shape_str(result.shape()));
  out.assign_on(result, stream ? stream->handle() : nullptr);
  return out;
}

// x * y, NumPy's product with a 0-d operand.
NDArray times(const NDArray& x, const NDArray& y, NDArray out, const Stream* stream) {
  std::array<jit::KernelArg, 2> in = {jit::KernelArg::of_array(x), jit::KernelArg::of_array(y)};
  if (!out.valid()) return apply("multiply", in, stream);
  apply("multiply", in, out, stream);
  return out;
}

void require(const NDArray& x, const NDArray& y, std::string_view who) {
  if (!x.valid() || !y.valid()) fail("{}: an array is an empty handle", who);
}

std::int64_t product(const Shape& shape, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t k = from; k < to; ++k) n *= shape[k];
  return n;
}

}  // namespace

NDArray dot(const NDArray& x, const NDArray& y, NDArray out, const Stream* stream) {
  require(x, y, "dot");
  if (x.ndim() == 0 || y.ndim() == 0) return times(x, y, std::move(out), stream);
  if (x.ndim() == 1 && y.ndim() == 1) return vector_dot(x, y, std::move(out), stream, "dot");
  const int ky = y.ndim() == 1 ? 0 : y.ndim() - 2;
  const std::int64_t k = x.shape().back(), k2 = y.shape()[static_cast<std::size_t>(ky)];
  if (k != k2)
    fail("dot: shapes {} and {} not aligned: {} (axis {}) != {} (axis {})", shape_str(x.shape()), shape_str(y.shape()),
         k, x.ndim(), k2, ky + 1);
  // Where matmul's broadcasting gives dot's result: a matrix or vector y, or a vector x.
  if (y.ndim() <= 2 || x.ndim() == 1) return deliver(matmul(x, y, {}, stream), std::move(out), "dot", stream);
  // x's rows against y's matrices, y's contracted axis moved first.
  const Shape& sx = x.shape();
  const Shape& sy = y.shape();
  std::vector<int> perm{ky};
  for (int d = 0; d < y.ndim(); ++d)
    if (d != ky) perm.push_back(d);
  const NDArray a2 = as_shape(x, {product(sx, 0, sx.size() - 1), k}, stream);
  const auto at = static_cast<std::size_t>(ky);
  const NDArray b2 = as_shape(y.transpose(perm), {k, product(sy, 0, at) * product(sy, at + 1, sy.size())}, stream);
  Shape shape(sx.begin(), sx.end() - 1);
  shape.insert(shape.end(), sy.begin(), sy.end() - 2);
  shape.push_back(sy.back());
  return deliver(matmul(a2, b2, {}, stream).reshape(shape), std::move(out), "dot", stream);
}

NDArray vdot(const NDArray& x, const NDArray& y, NDArray out, const Stream* stream) {
  require(x, y, "vdot");
  if (x.size() != y.size()) fail("vdot: x has {} elements and y {}; vdot needs as many in each", x.size(), y.size());
  // NumPy's vdot conjugates its first operand when that is complex.
  NDArray flat = as_shape(x, {x.size()}, stream);
  if (is_complex(flat.dtype())) {
    std::array<jit::KernelArg, 1> in = {jit::KernelArg::of_array(flat)};
    flat = apply("conj", in, stream);
  }
  return vector_dot(flat, as_shape(y, {y.size()}, stream), std::move(out), stream, "vdot");
}

NDArray inner(const NDArray& x, const NDArray& y, NDArray out, const Stream* stream) {
  require(x, y, "inner");
  if (x.ndim() == 0 || y.ndim() == 0) return times(x, y, std::move(out), stream);
  if (x.ndim() == 1 && y.ndim() == 1) return vector_dot(x, y, std::move(out), stream, "inner");
  const std::int64_t k = x.shape().back(), k2 = y.shape().back();
  if (k != k2)
    fail("inner: shapes {} and {} not aligned: {} (axis {}) != {} (axis {})", shape_str(x.shape()),
         shape_str(y.shape()), k, x.ndim(), k2, y.ndim());
  const Shape& sx = x.shape();
  const Shape& sy = y.shape();
  const NDArray a2 = as_shape(x, {product(sx, 0, sx.size() - 1), k}, stream);
  const NDArray b2 = as_shape(y, {product(sy, 0, sy.size() - 1), k}, stream);
  Shape shape(sx.begin(), sx.end() - 1);
  shape.insert(shape.end(), sy.begin(), sy.end() - 1);
  return deliver(matmul(a2, b2.transpose(), {}, stream).reshape(shape), std::move(out), "inner", stream);
}

NDArray outer(const NDArray& x, const NDArray& y, NDArray out, const Stream* stream) {
  require(x, y, "outer");
  const NDArray a = as_shape(x, {x.size()}, stream), b = as_shape(y, {y.size()}, stream);
  const NDArray column = NDArray::view(a.buffer(), a.dtype(), {a.size(), 1}, {1, 0}, a.offset());
  const NDArray row = NDArray::view(b.buffer(), b.dtype(), {1, b.size()}, {0, 1}, b.offset());
  return times(column, row, std::move(out), stream);
}

NDArray tensordot(const NDArray& x, const NDArray& y, const std::vector<int>& xa, const std::vector<int>& ya,
                  const Stream* stream) {
  require(x, y, "tensordot");
  if (xa.size() != ya.size())
    fail("tensordot: {} axes of x and {} of y; the axes summed over pair up, as many of each", xa.size(), ya.size());
  auto check_axes = [](const NDArray& a, const std::vector<int>& axes, const char* name) {
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] < 0 || axes[i] >= a.ndim())
        fail("tensordot: axis {} is out of range for {}, a {}-d array", axes[i] + 1, name, a.ndim());
      for (std::size_t j = 0; j < i; ++j)
        if (axes[j] == axes[i]) fail("tensordot: axis {} of {} is repeated", axes[i] + 1, name);
    }
  };
  check_axes(x, xa, "x");
  check_axes(y, ya, "y");
  std::int64_t k = 1;
  for (std::size_t i = 0; i < xa.size(); ++i) {
    const std::int64_t ex = x.shape()[static_cast<std::size_t>(xa[i])], ey = y.shape()[static_cast<std::size_t>(ya[i])];
    if (ex != ey)
      fail("tensordot: shape-mismatch for sum: axis {} of {} is {}, axis {} of {} is {}", xa[i] + 1,
           shape_str(x.shape()), ex, ya[i] + 1, shape_str(y.shape()), ey);
    k *= ex;
  }
  // x as (its other axes, the summed ones), y as (the summed ones, its other axes).
  std::vector<int> px, py(ya.begin(), ya.end());
  Shape shape;
  std::int64_t p = 1, q = 1;
  for (int d = 0; d < x.ndim(); ++d)
    if (std::find(xa.begin(), xa.end(), d) == xa.end()) {
      px.push_back(d);
      shape.push_back(x.shape()[static_cast<std::size_t>(d)]);
      p *= x.shape()[static_cast<std::size_t>(d)];
    }
  px.insert(px.end(), xa.begin(), xa.end());
  for (int d = 0; d < y.ndim(); ++d)
    if (std::find(ya.begin(), ya.end(), d) == ya.end()) {
      py.push_back(d);
      shape.push_back(y.shape()[static_cast<std::size_t>(d)]);
      q *= y.shape()[static_cast<std::size_t>(d)];
    }
  const NDArray a2 = as_shape(x.transpose(px), {p, k}, stream), b2 = as_shape(y.transpose(py), {k, q}, stream);
  return matmul(a2, b2, {}, stream).reshape(shape);
}

NDArray trace(const NDArray& x, std::int64_t offset, int axis1, int axis2, const Stream* stream) {
  if (!x.valid()) fail("trace: an empty handle");
  if (x.ndim() < 2) fail("trace: diag requires an array of at least two dimensions, got a {}-d array", x.ndim());
  if (axis1 == axis2) fail("trace: axis1 and axis2 cannot be the same (axis {})", axis1 + 1);
  const auto a1 = static_cast<std::size_t>(axis1), a2 = static_cast<std::size_t>(axis2);
  const std::int64_t n1 = x.shape()[a1], n2 = x.shape()[a2];
  const std::int64_t length = std::max<std::int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset)
                                                                    : std::min(n1 + offset, n2));
  // The diagonals as the last axis of a view: each step one along both axes.
  Shape shape;
  Strides strides;
  for (std::size_t d = 0; d < x.shape().size(); ++d)
    if (d != a1 && d != a2) shape.push_back(x.shape()[d]), strides.push_back(x.strides()[d]);
  shape.push_back(length);
  strides.push_back(x.strides()[a1] + x.strides()[a2]);
  std::int64_t start = x.offset();
  if (length > 0) start += offset >= 0 ? offset * x.strides()[a2] : -offset * x.strides()[a1];
  const NDArray diagonals = NDArray::view(x.buffer(), x.dtype(), shape, strides, start);
  return reduce(Reduce::Sum, diagonals, std::vector<int>{static_cast<int>(shape.size()) - 1}, false, {}, stream);
}

NDArray norm(const NDArray& x, NormOrd ord, const std::optional<std::vector<int>>& axes, bool keepdims,
             const Stream* stream) {
  if (!x.valid()) fail("norm: an empty handle");
  using Kind = NormOrd::Kind;
  // A complex array's norms are of its magnitudes, in its parts' dtype (complex64: float32).
  const bool complex = is_complex(x.dtype());
  const DType t = real_dtype(x.dtype()) == DType::Float32 ? DType::Float32 : DType::Float64;
  auto un = [&](std::string_view f, const NDArray& a) {
    std::array<jit::KernelArg, 1> in = {jit::KernelArg::of_array(a)};
    return apply(f, in, stream);
  };
  auto bin = [&](std::string_view f, const jit::KernelArg& a, const jit::KernelArg& b) {
    std::array<jit::KernelArg, 2> in = {a, b};
    return apply(f, in, stream);
  };
  const NDArray mag = un("abs", x.dtype() == t || complex ? x : x.astype(t, stream));
  auto sum = [&](const NDArray& a, std::vector<int> over, bool keep) {
    return reduce(Reduce::Sum, a, over, keep, {}, stream);
  };
  std::vector<int> over;
  if (axes) {
    over = *axes;
  } else if (ord.kind == Kind::Default || x.ndim() == 1) {
    for (int d = 0; d < x.ndim(); ++d) over.push_back(d);
    if (ord.kind == Kind::Default || x.ndim() == 0) {  // every element as one vector
      return un("sqrt",
                sum(bin("multiply", jit::KernelArg::of_array(mag), jit::KernelArg::of_array(mag)), over, keepdims));
    }
  } else if (x.ndim() == 2) {
    over = {0, 1};
  } else {
    fail("norm: Improper number of dimensions to norm: an ord needs a 1-D or 2-D array, or axis, got a {}-d array",
         x.ndim());
  }
  for (int a : over)
    if (a < 0 || a >= x.ndim()) fail("norm: axis {} is out of range for a {}-d array", a + 1, x.ndim());
  if (over.size() == 1) {
    if (ord.kind == Kind::Fro || ord.kind == Kind::Nuc)
      fail("norm: Invalid norm order '{}' for vectors", ord.kind == Kind::Fro ? "fro" : "nuc");
    const double p = ord.kind == Kind::Default ? 2 : ord.p;
    if (std::isinf(p)) return reduce(p > 0 ? Reduce::Max : Reduce::Min, mag, over, keepdims, {}, stream);
    if (p == 0) {
      NDArray count = sum(bin("not_equal", jit::KernelArg::of_array(mag), jit::KernelArg::of_int(0)), over, keepdims);
      return count.astype(t, stream);
    }
    if (p == 1) return sum(mag, over, keepdims);
    if (p == 2)
      return un("sqrt",
                sum(bin("multiply", jit::KernelArg::of_array(mag), jit::KernelArg::of_array(mag)), over, keepdims));
    const NDArray powered = bin("power", jit::KernelArg::of_array(mag), jit::KernelArg::of_float(p));
    return bin("power", jit::KernelArg::of_array(sum(powered, over, keepdims)), jit::KernelArg::of_float(1 / p));
  }
  if (over.size() != 2 || over[0] == over[1]) fail("norm: Improper number of dimensions to norm");
  const int rows = over[0], cols = over[1];
  if (ord.kind == Kind::Default || ord.kind == Kind::Fro)
    return un("sqrt", sum(bin("multiply", jit::KernelArg::of_array(mag), jit::KernelArg::of_array(mag)),
                          {std::min(rows, cols), std::max(rows, cols)}, keepdims));
  if (ord.kind == Kind::Nuc || std::abs(ord.p) == 2) {
    // The largest singular value (2), the smallest (-2) or their sum ("nuc"), of the
    // matrices in axes rows and cols moved last.
    std::vector<int> perm;
    for (int d = 0; d < x.ndim(); ++d)
      if (d != rows && d != cols) perm.push_back(d);
    perm.push_back(rows);
    perm.push_back(cols);
    const NDArray s = svd(x.transpose(perm), false, false, stream, "norm").s;
    const std::vector<int> last{s.ndim() - 1};
    ReduceOptions from_zero;  // NumPy's max of no singular values is 0
    from_zero.initial = jit::KernelArg::of_int(0);
    NDArray r = ord.kind == Kind::Nuc ? reduce(Reduce::Sum, s, last, false, {}, stream)
                : ord.p > 0           ? reduce(Reduce::Max, s, last, false, {}, stream, from_zero)
                                      : reduce(Reduce::Min, s, last, false, {}, stream);
    if (!keepdims) return r;
    Shape shape = x.shape();
    shape[static_cast<std::size_t>(rows)] = shape[static_cast<std::size_t>(cols)] = 1;
    return r.reshape(shape);
  }
  if (std::isinf(ord.p) || std::abs(ord.p) == 1) {
    // 1: the largest column sum of |x| (sum over the rows); inf: the largest row sum.
    const int summed = std::isinf(ord.p) ? cols : rows;
    const int across = std::isinf(ord.p) ? rows : cols;
    NDArray sums = sum(mag, {summed}, true);
    NDArray extreme = reduce(ord.p > 0 ? Reduce::Max : Reduce::Min, sums, std::vector<int>{across}, true, {}, stream);
    if (keepdims) return extreme;
    return squeeze_axes(extreme, {rows, cols});
  }
  fail("norm: Invalid norm order {} for matrices", ord.p);
}

std::string cublas_path() { return cublas().lib.path; }
std::string openblas_path() { return openblas().lib.path; }

}  // namespace luda::ops

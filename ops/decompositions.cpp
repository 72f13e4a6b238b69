// numpy.linalg's factorizations (ops/linalg.h): cuSOLVER on CUDA devices and LAPACKE on
// the cpu, both loaded with dlopen at their first use. LAPACKE takes row-major matrices;
// cuSOLVER column-major ones, where a row-major matrix is its transpose, which the calls
// below use instead of copying (an LU of a^T solves with a by the transposed solve, and a
// symmetric matrix is its own transpose).
#include <cusolverDn.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "jit/kernel_args.h"
#include "ops/array_math.h"
#include "ops/linalg.h"
#include "ops/routines.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/shared_library.h"

namespace luda::ops {
namespace {


// ---- cuSOLVER ---------------------------------------------------------------------

#define LUDA_CUSOLVER_FUNCTIONS(X)                                                          \
  X(cusolverDnCreate) X(cusolverDnSetStream) X(cusolverDnCreateParams) X(cusolverDnXgetrf_bufferSize) \
  X(cusolverDnXgetrf) X(cusolverDnXgetrs) X(cusolverDnXpotrf_bufferSize) X(cusolverDnXpotrf)

struct Cusolver {
  SharedLibrary lib;
#define LUDA_CUSOLVER_MEMBER(name) decltype(&::name) name = nullptr;
  LUDA_CUSOLVER_FUNCTIONS(LUDA_CUSOLVER_MEMBER)
#undef LUDA_CUSOLVER_MEMBER
};

Cusolver load_cusolver() {
  static constexpr const char* kSymbols[] = {
#define LUDA_CUSOLVER_NAME(name) #name,
      LUDA_CUSOLVER_FUNCTIONS(LUDA_CUSOLVER_NAME)
#undef LUDA_CUSOLVER_NAME
  };
  Cusolver c;
  c.lib = open_library("cuSOLVER",
                       library_candidates({"LUDA_CUSOLVER", "libcusolver.so", true,
                                           {"libcusolver.so", "libcusolver.so.12", "libcusolver.so.11"}}),
                       kSymbols,
                       "set LUDA_CUSOLVER to the path of libcusolver.so (from the CUDA toolkit, version 12 or 13), "
                       "or install the toolkit's libraries");
  std::size_t k = 0;
#define LUDA_CUSOLVER_SET(name) c.name = reinterpret_cast<decltype(&::name)>(c.lib.symbols[k++]);
  LUDA_CUSOLVER_FUNCTIONS(LUDA_CUSOLVER_SET)
#undef LUDA_CUSOLVER_SET
  return c;
}
const Cusolver& cusolver() { return load_once(&load_cusolver); }

void check(cusolverStatus_t s, const char* call, std::string_view who) {
  if (s != CUSOLVER_STATUS_SUCCESS) fail("{}: {} failed (cusolverStatus_t {})", who, call, static_cast<int>(s));
}

// A device's handle and parameters, made at first use and kept; calls take turns.
struct Solver {
  std::mutex mutex;
  cusolverDnHandle_t handle = nullptr;
  cusolverDnParams_t params = nullptr;
};
Solver& solver_for(int ordinal, std::string_view who) {
  static std::mutex mutex;
  static std::map<int, Solver> solvers;
  std::lock_guard lock(mutex);
  Solver& s = solvers[ordinal];
  if (!s.handle) {
    ContextScope scope(ordinal);
    check(cusolver().cusolverDnCreate(&s.handle), "cusolverDnCreate", who);
    check(cusolver().cusolverDnCreateParams(&s.params), "cusolverDnCreateParams", who);
  }
  return s;
}

// ---- LAPACKE ----------------------------------------------------------------------

constexpr int kRowMajor = 101;  // LAPACK_ROW_MAJOR
using lapack_int = int;         // Debian's LAPACKE: 32-bit integers (LP64)
template <class T>
using Gesv = lapack_int (*)(int, lapack_int, lapack_int, T*, lapack_int, lapack_int*, T*, lapack_int);
template <class T>
using Getrf = lapack_int (*)(int, lapack_int, lapack_int, T*, lapack_int, lapack_int*);
template <class T>
using Potrf = lapack_int (*)(int, char, lapack_int, T*, lapack_int);

struct Lapacke {
  SharedLibrary lib;
  Gesv<float> sgesv = nullptr;
  Gesv<double> dgesv = nullptr;
  Getrf<float> sgetrf = nullptr;
  Getrf<double> dgetrf = nullptr;
  Potrf<float> spotrf = nullptr;
  Potrf<double> dpotrf = nullptr;
};

Lapacke load_lapacke() {
  static constexpr const char* kSymbols[] = {"LAPACKE_sgesv",  "LAPACKE_dgesv",  "LAPACKE_sgetrf",
                                             "LAPACKE_dgetrf", "LAPACKE_spotrf", "LAPACKE_dpotrf"};
  Lapacke l;
  l.lib = open_library("LAPACKE",
                       library_candidates({"LUDA_LAPACKE", "liblapacke.so", false, {"liblapacke.so.3", "liblapacke.so"}}),
                       kSymbols,
                       "install Debian's LAPACKE (apt-get install liblapacke), or set LUDA_LAPACKE to the path of "
                       "liblapacke.so.3");
  l.sgesv = reinterpret_cast<Gesv<float>>(l.lib.symbols[0]);
  l.dgesv = reinterpret_cast<Gesv<double>>(l.lib.symbols[1]);
  l.sgetrf = reinterpret_cast<Getrf<float>>(l.lib.symbols[2]);
  l.dgetrf = reinterpret_cast<Getrf<double>>(l.lib.symbols[3]);
  l.spotrf = reinterpret_cast<Potrf<float>>(l.lib.symbols[4]);
  l.dpotrf = reinterpret_cast<Potrf<double>>(l.lib.symbols[5]);
  return l;
}
const Lapacke& lapacke() { return load_once(&load_lapacke); }

// ---- operands -----------------------------------------------------------------------

// The dtype numpy.linalg computes in: float32 stays, anything else is float64. Complex
// arrays are refused: only the real routines of cuSOLVER and LAPACKE are called.
DType solve_dtype(DType t, std::string_view who) {
  if (is_complex(t))
    fail("{}: {} arrays are not supported: luda's linear algebra calls the real cuSOLVER and LAPACKE routines only",
         who, dtype_name(t));
  return t == DType::Float32 ? DType::Float32 : DType::Float64;
}

void require_square(const NDArray& a, std::string_view who) {
  if (!a.valid()) fail("{}: an empty handle", who);
  if (a.ndim() < 2)
    fail("{}: {}-dimensional array given. Array must be at least two-dimensional", who, a.ndim());
  if (a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    fail("{}: Last 2 dimensions of the array must be square, got shape {}", who, shape_str(a.shape()));
}

// A Fortran-order array of `shape`: the last two axes stored by columns.
NDArray empty_by_columns(const Shape& shape, DType dtype, Device device, const Stream* stream) {
  Shape swapped = shape;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  const int n = static_cast<int>(shape.size());
  std::vector<int> perm(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) perm[static_cast<std::size_t>(k)] = k;
  std::swap(perm[static_cast<std::size_t>(n - 1)], perm[static_cast<std::size_t>(n - 2)]);
  return NDArray::empty(swapped, dtype, device, stream).transpose(perm);
}

std::int64_t stack_count(const NDArray& a, int matrix_axes) {
  std::int64_t n = 1;
  for (int k = 0; k + matrix_axes < a.ndim(); ++k) n *= a.shape()[static_cast<std::size_t>(k)];
  return n;
}

cudaDataType cuda_type(DType t) { return t == DType::Float32 ? CUDA_R_32F : CUDA_R_64F; }

// Device and host workspace of one cuSOLVER call, grown as needed.
struct Workspace {
  std::shared_ptr<Buffer> device;
  std::vector<std::byte> host;
  void reserve(Device d, std::size_t device_bytes, std::size_t host_bytes, const Stream* stream) {
    if (!device || device->size() < device_bytes) device = Buffer::allocate(d, std::max<std::size_t>(device_bytes, 1), stream);
    if (host.size() < host_bytes) host.resize(host_bytes);
  }
};

// The first nonzero of n device ints (cuSOLVER's info per matrix), read after the work.
int first_info(const NDArray& infos) {
  const std::vector<std::byte> bytes = infos.to_host_bytes();
  for (std::size_t k = 0; k + sizeof(int) <= bytes.size(); k += sizeof(int)) {
    int v;
    std::memcpy(&v, bytes.data() + k, sizeof v);
    if (v != 0) return v;
  }
  return 0;
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
      const int info = t == DType::Float32
                           ? lapacke().sgetrf(kRowMajor, static_cast<lapack_int>(n), static_cast<lapack_int>(n),
                                              static_cast<float*>(m), static_cast<lapack_int>(n), piv + i * n)
                           : lapacke().dgetrf(kRowMajor, static_cast<lapack_int>(n), static_cast<lapack_int>(n),
                                              static_cast<double*>(m), static_cast<lapack_int>(n), piv + i * n);
      if (info < 0) fail("{}: LAPACKE getrf: argument {} is invalid", who, -info);
      if (!first) first = info;
    }
    return first;
  }
  const Cusolver& cs = cusolver();
  Solver& s = solver_for(lu.device().index, who);
  std::lock_guard lock(s.mutex);
  ContextScope scope(lu.device().index);
  check(cs.cusolverDnSetStream(s.handle, reinterpret_cast<cudaStream_t>(stream ? stream->handle() : nullptr)),
        "cusolverDnSetStream", who);
  NDArray infos = NDArray::zeros({count}, DType::Int32, lu.device(), stream);
  std::size_t dev_bytes = 0, host_bytes = 0;
  check(cs.cusolverDnXgetrf_bufferSize(s.handle, s.params, n, n, cuda_type(t), base, n, cuda_type(t), &dev_bytes,
                                       &host_bytes),
        "cusolverDnXgetrf_bufferSize", who);
  Workspace w;
  w.reserve(lu.device(), dev_bytes, host_bytes, stream);
  for (std::int64_t i = 0; i < count; ++i)
    check(cs.cusolverDnXgetrf(s.handle, s.params, n, n, cuda_type(t), base + i * n * n * size, n,
                              static_cast<std::int64_t*>(pivots.data()) + i * n, cuda_type(t), w.device->data(),
                              dev_bytes, w.host.data(), host_bytes, static_cast<int*>(infos.data()) + i),
          "cusolverDnXgetrf", who);
  return first_info(infos);
}

DType pivot_dtype(Device d) { return d.is_cpu() ? DType::Int32 : DType::Int64; }

}  // namespace

NDArray solve(const NDArray& a, const NDArray& b, const Stream* stream) {
  require_square(a, "solve");
  if (!b.valid()) fail("solve: an empty handle");
  if (a.device() != b.device())
    fail("solve: a is on {} and b on {}; both must be on one device", a.device().str(), b.device().str());
  if (GraphRecording::active()) fail("solve: a call of LAPACK cannot be recorded in a graph yet");
  const std::int64_t n = a.shape().back();
  // b: a vector when 1-D (NumPy 2), else a stack of n x k matrices.
  const bool vector = b.ndim() == 1;
  if (b.ndim() == 0 || (vector ? b.shape()[0] : b.shape()[b.ndim() - 2]) != n)
    fail("solve: b of shape {} does not fit a of shape {}: it needs {} rows", shape_str(b.shape()),
         shape_str(a.shape()), n);
  const DType t = solve_dtype(promote_types(a.dtype(), b.dtype()), "solve");
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
  NDArray pivots = NDArray::empty([&] { Shape p = stack; p.push_back(n); return p; }(), pivot_dtype(a.device()),
                                  a.device(), stream);
  NDArray x;
  if (a.device().is_cpu()) {
    x = NDArray::empty(sb, t, a.device(), stream);  // row-major n x k each
    x.assign(bm);
    auto* pa = static_cast<std::byte*>(lu.data());
    auto* px = static_cast<std::byte*>(x.data());
    auto* piv = static_cast<lapack_int*>(pivots.data());
    for (std::int64_t i = 0; i < count; ++i) {
      const auto N = static_cast<lapack_int>(n), K = static_cast<lapack_int>(k);
      const int info = t == DType::Float32
                           ? lapacke().sgesv(kRowMajor, N, K, reinterpret_cast<float*>(pa + i * n * n * size), N,
                                             piv + i * n, reinterpret_cast<float*>(px + i * n * k * size), K)
                           : lapacke().dgesv(kRowMajor, N, K, reinterpret_cast<double*>(pa + i * n * n * size), N,
                                             piv + i * n, reinterpret_cast<double*>(px + i * n * k * size), K);
      if (info > 0) fail("solve: Singular matrix");
      if (info < 0) fail("solve: LAPACKE gesv: argument {} is invalid", -info);
    }
  } else {
    // The row-major LU is the LU of a^T to cuSOLVER: the transposed solve undoes it.
    if (lu_in_place(lu, pivots, stream, "solve") > 0) fail("solve: Singular matrix");
    x = empty_by_columns(sb, t, a.device(), stream);
    x.assign_on(bm, stream ? stream->handle() : nullptr);
    const Cusolver& cs = cusolver();
    Solver& s = solver_for(a.device().index, "solve");
    std::lock_guard lock(s.mutex);
    ContextScope scope(a.device().index);
    NDArray infos = NDArray::zeros({count}, DType::Int32, a.device(), stream);
    auto* pa = static_cast<std::byte*>(lu.data());
    auto* px = static_cast<std::byte*>(x.data());
    for (std::int64_t i = 0; i < count; ++i)
      check(cs.cusolverDnXgetrs(s.handle, s.params, CUBLAS_OP_T, n, k, cuda_type(t), pa + i * n * n * size, n,
                                static_cast<const std::int64_t*>(pivots.data()) + i * n, cuda_type(t),
                                px + i * n * k * size, n, static_cast<int*>(infos.data()) + i),
            "cusolverDnXgetrs", "solve");
    if (const int info = first_info(infos); info < 0) fail("solve: cusolverDnXgetrs: argument {} is invalid", -info);
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
  const DType t = solve_dtype(a.dtype(), "inv");
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
  if (GraphRecording::active()) fail("det: a call of LAPACK cannot be recorded in a graph yet");
  const std::int64_t n = a.shape().back();
  const DType t = solve_dtype(a.dtype(), "det");
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
  if (GraphRecording::active()) fail("cholesky: a call of LAPACK cannot be recorded in a graph yet");
  const std::int64_t n = a.shape().back();
  const DType t = solve_dtype(a.dtype(), "cholesky");
  NDArray l = a.astype(t, stream);  // the factorization overwrites it
  const std::int64_t count = stack_count(l, 2);
  if (l.size() == 0) return l;
  const auto size = static_cast<std::int64_t>(itemsize(t));
  auto* base = static_cast<std::byte*>(l.data());
  int failed = 0;
  if (a.device().is_cpu()) {
    for (std::int64_t i = 0; i < count && !failed; ++i) {
      const auto N = static_cast<lapack_int>(n);
      failed = t == DType::Float32 ? lapacke().spotrf(kRowMajor, 'L', N, reinterpret_cast<float*>(base + i * n * n * size), N)
                                   : lapacke().dpotrf(kRowMajor, 'L', N, reinterpret_cast<double*>(base + i * n * n * size), N);
    }
  } else {
    // Row-major memory read by columns is a^T, whose upper triangle is a's lower one: the
    // upper factor U of it, read by rows, is L.
    const Cusolver& cs = cusolver();
    Solver& s = solver_for(a.device().index, "cholesky");
    std::lock_guard lock(s.mutex);
    ContextScope scope(a.device().index);
    check(cs.cusolverDnSetStream(s.handle, reinterpret_cast<cudaStream_t>(stream ? stream->handle() : nullptr)),
          "cusolverDnSetStream", "cholesky");
    NDArray infos = NDArray::zeros({count}, DType::Int32, a.device(), stream);
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cs.cusolverDnXpotrf_bufferSize(s.handle, s.params, CUBLAS_FILL_MODE_UPPER, n, cuda_type(t), base, n,
                                         cuda_type(t), &dev_bytes, &host_bytes),
          "cusolverDnXpotrf_bufferSize", "cholesky");
    Workspace w;
    w.reserve(a.device(), dev_bytes, host_bytes, stream);
    for (std::int64_t i = 0; i < count; ++i)
      check(cs.cusolverDnXpotrf(s.handle, s.params, CUBLAS_FILL_MODE_UPPER, n, cuda_type(t), base + i * n * n * size,
                                n, cuda_type(t), w.device->data(), dev_bytes, w.host.data(), host_bytes,
                                static_cast<int*>(infos.data()) + i),
            "cusolverDnXpotrf", "cholesky");
    failed = first_info(infos);
  }
  if (failed > 0) fail("cholesky: Matrix is not positive definite");
  if (failed < 0) fail("cholesky: potrf: argument {} is invalid", -failed);
  // Above the diagonal is what the input had there.
  return tril(l, 0, stream);
}

}  // namespace luda::ops

// The libraries numpy.linalg's factorizations run on (ops/linalg.h): cuSOLVER on CUDA
// devices and LAPACKE on the cpu, both loaded with dlopen at their first use
// (runtime/shared_library.h), so that luda links neither. Here: one table of entry points
// for each, a handle per device, the workspace and status reads the routines share, and
// the element type a dtype's matrices have in the libraries' calls.
//
// A dtype the routines compute in is one case of with_solver_type and one specialization
// of CusolverTyped and LapackeTyped (ORDER SOLVER DTYPES): the X routines of cuSOLVER take
// the dtype as a cudaDataType (cuda_type), the older ones and LAPACKE have a function per
// element type (S/D/C/Z), which the Typed tables name.
#pragma once

#include <cusolverDn.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/memory.h"
#include "runtime/ndarray.h"
#include "runtime/shared_library.h"
#include "runtime/stream.h"

namespace luda::ops::solvers {

// ---- cuSOLVER ---------------------------------------------------------------------

// Every entry point luda calls; a library without one of them is not used.
// clang-format off
#define LUDA_CUSOLVER_FUNCTIONS(X)                                                                     \
  X(cusolverDnCreate) X(cusolverDnSetStream) X(cusolverDnCreateParams)                                 \
  X(cusolverDnXgetrf_bufferSize) X(cusolverDnXgetrf) X(cusolverDnXgetrs)                               \
  X(cusolverDnXpotrf_bufferSize) X(cusolverDnXpotrf)                                                   \
  X(cusolverDnXgeqrf_bufferSize) X(cusolverDnXgeqrf)                                                   \
  X(cusolverDnSorgqr_bufferSize) X(cusolverDnSorgqr) X(cusolverDnDorgqr_bufferSize) X(cusolverDnDorgqr) \
  X(cusolverDnSormqr_bufferSize) X(cusolverDnSormqr) X(cusolverDnDormqr_bufferSize) X(cusolverDnDormqr) \
  X(cusolverDnCungqr_bufferSize) X(cusolverDnCungqr) X(cusolverDnZungqr_bufferSize) X(cusolverDnZungqr) \
  X(cusolverDnCunmqr_bufferSize) X(cusolverDnCunmqr) X(cusolverDnZunmqr_bufferSize) X(cusolverDnZunmqr) \
  X(cusolverDnCgesvdj_bufferSize) X(cusolverDnCgesvdj) X(cusolverDnZgesvdj_bufferSize) X(cusolverDnZgesvdj) \
  X(cusolverDnXsyevd_bufferSize) X(cusolverDnXsyevd)                                                   \
  X(cusolverDnXgesvd_bufferSize) X(cusolverDnXgesvd)                                                   \
  X(cusolverDnXgesvdp_bufferSize) X(cusolverDnXgesvdp)                                                 \
  X(cusolverDnCreateGesvdjInfo) X(cusolverDnDestroyGesvdjInfo) X(cusolverDnXgesvdjSetTolerance)        \
  X(cusolverDnXgesvdjSetMaxSweeps) X(cusolverDnXgesvdjSetSortEig) X(cusolverDnXgesvdjGetSweeps)        \
  X(cusolverDnSgesvdj_bufferSize) X(cusolverDnSgesvdj) X(cusolverDnDgesvdj_bufferSize) X(cusolverDnDgesvdj)
// clang-format on

struct Cusolver {
  SharedLibrary lib;
#define LUDA_CUSOLVER_MEMBER(name) decltype(&::name) name = nullptr;
  LUDA_CUSOLVER_FUNCTIONS(LUDA_CUSOLVER_MEMBER)
#undef LUDA_CUSOLVER_MEMBER
};
// The table, loading the library at the first call. Error: "cuSOLVER not found; tried: ...".
const Cusolver& cusolver();

// Throws "<who>: <call> failed (cusolverStatus_t <s>)" unless s is success.
void check(cusolverStatus_t s, const char* call, std::string_view who);

// cuSOLVER's typed routines that have no 64-bit X form, for element type T (ORDER SOLVER
// DTYPES), which take pointers to `element` (cuComplex, cuDoubleComplex for the complex
// types, laid out as std::complex). Called as (cusolver().*CusolverTyped<T>::orgqr)(...).
// The complex rows' orgqr and ormqr are ungqr and unmqr (a unitary Q).
template <class T>
struct CusolverTyped;
template <>
struct CusolverTyped<float> {
  using element = float;
  static constexpr auto orgqr_bufferSize = &Cusolver::cusolverDnSorgqr_bufferSize;
  static constexpr auto orgqr = &Cusolver::cusolverDnSorgqr;
  static constexpr auto ormqr_bufferSize = &Cusolver::cusolverDnSormqr_bufferSize;
  static constexpr auto ormqr = &Cusolver::cusolverDnSormqr;
  static constexpr auto gesvdj_bufferSize = &Cusolver::cusolverDnSgesvdj_bufferSize;
  static constexpr auto gesvdj = &Cusolver::cusolverDnSgesvdj;
};
template <>
struct CusolverTyped<double> {
  using element = double;
  static constexpr auto orgqr_bufferSize = &Cusolver::cusolverDnDorgqr_bufferSize;
  static constexpr auto orgqr = &Cusolver::cusolverDnDorgqr;
  static constexpr auto ormqr_bufferSize = &Cusolver::cusolverDnDormqr_bufferSize;
  static constexpr auto ormqr = &Cusolver::cusolverDnDormqr;
  static constexpr auto gesvdj_bufferSize = &Cusolver::cusolverDnDgesvdj_bufferSize;
  static constexpr auto gesvdj = &Cusolver::cusolverDnDgesvdj;
};
template <>
struct CusolverTyped<std::complex<float>> {
  using element = cuComplex;
  static constexpr auto orgqr_bufferSize = &Cusolver::cusolverDnCungqr_bufferSize;
  static constexpr auto orgqr = &Cusolver::cusolverDnCungqr;
  static constexpr auto ormqr_bufferSize = &Cusolver::cusolverDnCunmqr_bufferSize;
  static constexpr auto ormqr = &Cusolver::cusolverDnCunmqr;
  static constexpr auto gesvdj_bufferSize = &Cusolver::cusolverDnCgesvdj_bufferSize;
  static constexpr auto gesvdj = &Cusolver::cusolverDnCgesvdj;
};
template <>
struct CusolverTyped<std::complex<double>> {
  using element = cuDoubleComplex;
  static constexpr auto orgqr_bufferSize = &Cusolver::cusolverDnZungqr_bufferSize;
  static constexpr auto orgqr = &Cusolver::cusolverDnZungqr;
  static constexpr auto ormqr_bufferSize = &Cusolver::cusolverDnZunmqr_bufferSize;
  static constexpr auto ormqr = &Cusolver::cusolverDnZunmqr;
  static constexpr auto gesvdj_bufferSize = &Cusolver::cusolverDnZgesvdj_bufferSize;
  static constexpr auto gesvdj = &Cusolver::cusolverDnZgesvdj;
};

// A device's handle and parameters, made at first use and kept for the process.
struct Solver {
  std::mutex mutex;
  cusolverDnHandle_t handle = nullptr;
  cusolverDnParams_t params = nullptr;
};

// The device's handle, locked (calls on one handle take turns), its context current and
// its stream set to `stream` for as long as the session lives. Nothing that takes the
// same session may run inside one: the lock is not recursive.
class SolverSession {
 public:
  SolverSession(Device device, const Stream* stream, std::string_view who);
  cusolverDnHandle_t handle() const { return solver_.handle; }
  cusolverDnParams_t params() const { return solver_.params; }

 private:
  Solver& solver_;
  std::lock_guard<std::mutex> lock_;
  ContextScope scope_;
};

// The cudaDataType of a dtype's elements.
cudaDataType cuda_type(DType t);

// ---- LAPACKE ----------------------------------------------------------------------

constexpr int kRowMajor = 101;  // LAPACK_ROW_MAJOR
using lapack_int = int;         // Debian's LAPACKE: 32-bit integers (LP64)

// The real type of element type T's magnitudes (singular values, eigenvalues): T itself
// for the real types, the parts' type for std::complex (ORDER SOLVER DTYPES).
template <class T>
struct RealOf {
  using type = T;
};
template <class T>
struct RealOf<std::complex<T>> {
  using type = T;
};
template <class T>
using Real = typename RealOf<T>::type;

// LAPACKE's lapack_complex_float and lapack_complex_double are C's float _Complex and
// double _Complex, laid out as std::complex<float> and std::complex<double>, which the
// declarations below take in their place.
using ComplexFloat = std::complex<float>;
using ComplexDouble = std::complex<double>;

// LAPACKE's row-major interfaces, declared here since luda includes no LAPACK header.
template <class T>
using Gesv = lapack_int (*)(int, lapack_int, lapack_int, T*, lapack_int, lapack_int*, T*, lapack_int);
template <class T>
using Getrf = lapack_int (*)(int, lapack_int, lapack_int, T*, lapack_int, lapack_int*);
template <class T>
using Potrf = lapack_int (*)(int, char, lapack_int, T*, lapack_int);
template <class T>
using Geqrf = lapack_int (*)(int, lapack_int, lapack_int, T*, lapack_int, T*);
template <class T>
using Orgqr = lapack_int (*)(int, lapack_int, lapack_int, lapack_int, T*, lapack_int, const T*);
template <class T>
using Syevd = lapack_int (*)(int, char, char, lapack_int, T*, lapack_int, Real<T>*);
template <class T>
using Gesdd = lapack_int (*)(int, char, lapack_int, lapack_int, T*, lapack_int, Real<T>*, T*, lapack_int, T*,
                             lapack_int);
template <class T>
using Gelsd = lapack_int (*)(int, lapack_int, lapack_int, lapack_int, T*, lapack_int, T*, lapack_int, Real<T>*, Real<T>,
                             lapack_int*);

// Every entry point luda calls: the name after LAPACKE_ and its type.
// clang-format off
#define LUDA_LAPACKE_FUNCTIONS(X)                                                                  \
  X(sgesv, Gesv<float>) X(dgesv, Gesv<double>) X(sgetrf, Getrf<float>) X(dgetrf, Getrf<double>)    \
  X(spotrf, Potrf<float>) X(dpotrf, Potrf<double>) X(sgeqrf, Geqrf<float>) X(dgeqrf, Geqrf<double>) \
  X(sorgqr, Orgqr<float>) X(dorgqr, Orgqr<double>) X(ssyevd, Syevd<float>) X(dsyevd, Syevd<double>) \
  X(sgesdd, Gesdd<float>) X(dgesdd, Gesdd<double>) X(sgelsd, Gelsd<float>) X(dgelsd, Gelsd<double>)   \
  X(cgesv, Gesv<ComplexFloat>) X(zgesv, Gesv<ComplexDouble>)                                       \
  X(cgetrf, Getrf<ComplexFloat>) X(zgetrf, Getrf<ComplexDouble>)                                   \
  X(cpotrf, Potrf<ComplexFloat>) X(zpotrf, Potrf<ComplexDouble>)                                   \
  X(cgeqrf, Geqrf<ComplexFloat>) X(zgeqrf, Geqrf<ComplexDouble>)                                   \
  X(cungqr, Orgqr<ComplexFloat>) X(zungqr, Orgqr<ComplexDouble>)                                   \
  X(cheevd, Syevd<ComplexFloat>) X(zheevd, Syevd<ComplexDouble>)                                   \
  X(cgesdd, Gesdd<ComplexFloat>) X(zgesdd, Gesdd<ComplexDouble>)                                   \
  X(cgelsd, Gelsd<ComplexFloat>) X(zgelsd, Gelsd<ComplexDouble>)
// clang-format on

struct Lapacke {
  SharedLibrary lib;
#define LUDA_LAPACKE_MEMBER(name, type) type name = nullptr;
  LUDA_LAPACKE_FUNCTIONS(LUDA_LAPACKE_MEMBER)
#undef LUDA_LAPACKE_MEMBER
};
// The table, loading the library at the first call. Error: "LAPACKE not found; tried: ...".
const Lapacke& lapacke();
// Whether a LAPACKE routine's `info` is its check of the input for NaN failing: LAPACKE
// answers a NaN in a matrix argument as an invalid argument, -(its position), and luda's
// other arguments are always valid. `matrix_args` are the positions of the matrices read.
bool lapacke_found_nan(int info, std::initializer_list<int> matrix_args);

// LAPACKE's routines for element type T (ORDER SOLVER DTYPES), called as
// (lapacke().*LapackeTyped<T>::geqrf)(...). The complex rows' orgqr is ungqr (a unitary
// Q) and their syevd heevd (Hermitian).
template <class T>
struct LapackeTyped;
template <>
struct LapackeTyped<float> {
  static constexpr auto geqrf = &Lapacke::sgeqrf;
  static constexpr auto orgqr = &Lapacke::sorgqr;
  static constexpr auto syevd = &Lapacke::ssyevd;
  static constexpr auto gesdd = &Lapacke::sgesdd;
  static constexpr auto gelsd = &Lapacke::sgelsd;
};
template <>
struct LapackeTyped<double> {
  static constexpr auto geqrf = &Lapacke::dgeqrf;
  static constexpr auto orgqr = &Lapacke::dorgqr;
  static constexpr auto syevd = &Lapacke::dsyevd;
  static constexpr auto gesdd = &Lapacke::dgesdd;
  static constexpr auto gelsd = &Lapacke::dgelsd;
};
template <>
struct LapackeTyped<ComplexFloat> {
  static constexpr auto geqrf = &Lapacke::cgeqrf;
  static constexpr auto orgqr = &Lapacke::cungqr;
  static constexpr auto syevd = &Lapacke::cheevd;
  static constexpr auto gesdd = &Lapacke::cgesdd;
  static constexpr auto gelsd = &Lapacke::cgelsd;
};
template <>
struct LapackeTyped<ComplexDouble> {
  static constexpr auto geqrf = &Lapacke::zgeqrf;
  static constexpr auto orgqr = &Lapacke::zungqr;
  static constexpr auto syevd = &Lapacke::zheevd;
  static constexpr auto gesdd = &Lapacke::zgesdd;
  static constexpr auto gelsd = &Lapacke::zgelsd;
};

// ---- dtypes -----------------------------------------------------------------------

// The dtype numpy.linalg's routines compute in: float32 and float64 stay, bools and
// integers are float64, and complex64 and complex128 stay where `complex` (the routine
// computes in them). Any other dtype is refused as NumPy refuses float16: "<who>: array
// type float16 is unsupported in linalg".
DType solve_dtype(DType t, std::string_view who, bool complex = false);

// f(T{}) with T the element type of dtype t's matrices (ORDER SOLVER DTYPES): float and
// double, and with `Complex` (for a routine whose Typed rows have complex entries)
// std::complex<float> and std::complex<double> too.
template <bool Complex = false, class F>
decltype(auto) with_solver_type(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default: break;
  }
  if constexpr (Complex) {
    if (t == DType::Complex64) return f(ComplexFloat{});
    if (t == DType::Complex128) return f(ComplexDouble{});
  }
  throw InternalError(fmt::format("internal error: no solver element type for {}", dtype_name(t)));
}

// ---- operands and results -----------------------------------------------------------

// "<who>: <n>-dimensional array given. Array must be at least two-dimensional" for an
// array of fewer than two axes (NumPy's LinAlgError), and an invalid handle's error.
void require_matrices(const NDArray& a, std::string_view who);
// require_matrices, and "<who>: Last 2 dimensions of the array must be square, got shape (2, 3)".
void require_square(const NDArray& a, std::string_view who);
// "<who>: a call of LAPACK cannot be recorded in a graph yet" while a graph records.
void refuse_recording(std::string_view who);

// The count of matrices in a's leading axes (all but the last `matrix_axes`).
std::int64_t stack_count(const NDArray& a, int matrix_axes);
// a's leading axes (all but the last two).
Shape stack_shape(const NDArray& a);
// `stack` followed by `tail`.
Shape stacked(const Shape& stack, std::initializer_list<std::int64_t> tail);

// A Fortran-order array of `shape`: the last two axes stored by columns.
NDArray empty_by_columns(const Shape& shape, DType dtype, Device device, const Stream* stream);
// The view of x with its last two axes swapped.
NDArray swap_last(const NDArray& x);
// x converted to `t`, C-contiguous and owned by the caller (a copy even when x is already
// so), for a routine that overwrites it.
NDArray working_copy(const NDArray& x, DType t, const Stream* stream);

// Device and host workspace of cuSOLVER calls, grown as needed.
struct Workspace {
  std::shared_ptr<Buffer> device;
  std::vector<std::byte> host;
  void reserve(Device d, std::size_t device_bytes, std::size_t host_bytes, const Stream* stream);
};

// An int per matrix on the device, zeroed, for cuSOLVER's info outputs.
NDArray infos_for(std::int64_t count, Device device, const Stream* stream);
// The first nonzero of cuSOLVER's info per matrix, read once `stream`'s work is done.
int first_info(const NDArray& infos, const Stream* stream);
// x's elements as doubles on the host (x of a float dtype), read once `stream`'s work is
// done.
std::vector<double> read_doubles(const NDArray& x, const Stream* stream);

// The int argument of a routine that takes 32-bit sizes (LAPACKE, cuSOLVER's older
// routines). Error: "<who>: a dimension of 3000000000 is more than LAPACK takes (at most 2147483647)".
int as_lapack_int(std::int64_t n, std::string_view who);

// The library files, loading them now (tests).
std::string cusolver_path();
std::string lapacke_path();

}  // namespace luda::ops::solvers

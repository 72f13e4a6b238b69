#include "ops/solver_libraries.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "runtime/graph/recording.h"

namespace luda::ops::solvers {
namespace {

Cusolver load_cusolver() {
  static constexpr const char* kSymbols[] = {
#define LUDA_CUSOLVER_NAME(name) #name,
      LUDA_CUSOLVER_FUNCTIONS(LUDA_CUSOLVER_NAME)
#undef LUDA_CUSOLVER_NAME
  };
  Cusolver c;
  c.lib = open_library(
      "cuSOLVER",
      library_candidates(
          {"LUDA_CUSOLVER", "libcusolver.so", true, {"libcusolver.so", "libcusolver.so.12", "libcusolver.so.11"}}),
      kSymbols,
      "set LUDA_CUSOLVER to the path of libcusolver.so (from the CUDA toolkit, version 12 or 13), "
      "or install the toolkit's libraries");
  std::size_t k = 0;
#define LUDA_CUSOLVER_SET(name) c.name = reinterpret_cast<decltype(&::name)>(c.lib.symbols[k++]);
  LUDA_CUSOLVER_FUNCTIONS(LUDA_CUSOLVER_SET)
#undef LUDA_CUSOLVER_SET
  return c;
}

Lapacke load_lapacke() {
  static constexpr const char* kSymbols[] = {
#define LUDA_LAPACKE_NAME(name, type) "LAPACKE_" #name,
      LUDA_LAPACKE_FUNCTIONS(LUDA_LAPACKE_NAME)
#undef LUDA_LAPACKE_NAME
  };
  Lapacke l;
  l.lib = open_library("LAPACKE",
                       library_candidates(
                           {"LUDA_LAPACKE", "liblapacke.so", false, {"liblapacke.so.3", "liblapacke.so"}}),
                       kSymbols,
                       "install Debian's LAPACKE (apt-get install liblapacke), or set LUDA_LAPACKE to the path of "
                       "liblapacke.so.3");
  std::size_t k = 0;
#define LUDA_LAPACKE_SET(name, type) l.name = reinterpret_cast<type>(l.lib.symbols[k++]);
  LUDA_LAPACKE_FUNCTIONS(LUDA_LAPACKE_SET)
#undef LUDA_LAPACKE_SET
  return l;
}

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

}  // namespace

const Cusolver& cusolver() { return load_once(&load_cusolver); }
const Lapacke& lapacke() { return load_once(&load_lapacke); }

bool lapacke_found_nan(int info, std::initializer_list<int> matrix_args) {
  return std::find(matrix_args.begin(), matrix_args.end(), -info) != matrix_args.end();
}

void check(cusolverStatus_t s, const char* call, std::string_view who) {
  if (s != CUSOLVER_STATUS_SUCCESS) fail("{}: {} failed (cusolverStatus_t {})", who, call, static_cast<int>(s));
}

SolverSession::SolverSession(Device device, const Stream* stream, std::string_view who)
    : solver_(solver_for(device.index, who)), lock_(solver_.mutex), scope_(device.index) {
  check(cusolver().cusolverDnSetStream(solver_.handle,
                                       reinterpret_cast<cudaStream_t>(stream ? stream->handle() : nullptr)),
        "cusolverDnSetStream", who);
}

cudaDataType cuda_type(DType t) {
  switch (t) {
    case DType::Float32: return CUDA_R_32F;
    case DType::Float64: return CUDA_R_64F;
    case DType::Complex64: return CUDA_C_32F;
    case DType::Complex128: return CUDA_C_64F;
    default: break;
  }
  throw InternalError(fmt::format("internal error: no cudaDataType for {}", dtype_name(t)));
}

DType solve_dtype(DType t, std::string_view who, bool complex) {
  if (t == DType::Float32 || t == DType::Float64 || (complex && is_complex(t))) return t;
  if (t == DType::Bool || is_integer(t)) return DType::Float64;
  fail("{}: array type {} is unsupported in linalg", who, dtype_name(t));
}

void require_matrices(const NDArray& a, std::string_view who) {
  if (!a.valid()) fail("{}: an empty handle", who);
  if (a.ndim() < 2) fail("{}: {}-dimensional array given. Array must be at least two-dimensional", who, a.ndim());
}

void require_square(const NDArray& a, std::string_view who) {
  require_matrices(a, who);
  if (a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    fail("{}: Last 2 dimensions of the array must be square, got shape {}", who, shape_str(a.shape()));
}

void refuse_recording(std::string_view who) {
  if (GraphRecording::active()) fail("{}: a call of LAPACK cannot be recorded in a graph yet", who);
}

std::int64_t stack_count(const NDArray& a, int matrix_axes) {
  std::int64_t n = 1;
  for (int k = 0; k + matrix_axes < a.ndim(); ++k) n *= a.shape()[static_cast<std::size_t>(k)];
  return n;
}

Shape stack_shape(const NDArray& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

Shape stacked(const Shape& stack, std::initializer_list<std::int64_t> tail) {
  Shape s = stack;
  s.insert(s.end(), tail);
  return s;
}

NDArray swap_last(const NDArray& x) {
  const int n = x.ndim();
  std::vector<int> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<std::size_t>(n - 1)], perm[static_cast<std::size_t>(n - 2)]);
  return x.transpose(perm);
}

NDArray empty_by_columns(const Shape& shape, DType dtype, Device device, const Stream* stream) {
  Shape swapped = shape;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  return swap_last(NDArray::empty(swapped, dtype, device, stream));
}

NDArray working_copy(const NDArray& x, DType t, const Stream* stream) {
  NDArray out = NDArray::empty(x.shape(), t, x.device(), stream);
  if (out.size() > 0) out.assign_on(x, stream ? stream->handle() : nullptr);
  return out;
}

void Workspace::reserve(Device d, std::size_t device_bytes, std::size_t host_bytes, const Stream* stream) {
  if (!device || device->size() < device_bytes)
    device = Buffer::allocate(d, std::max<std::size_t>(device_bytes, 1), stream);
  if (host.size() < host_bytes) host.resize(host_bytes);
}

NDArray infos_for(std::int64_t count, Device device, const Stream* stream) {
  return NDArray::zeros({count}, DType::Int32, device, stream);
}

int first_info(const NDArray& infos, const Stream* stream) {
  if (stream) stream->synchronize();
  const std::vector<std::byte> bytes = infos.to_host_bytes();
  for (std::size_t k = 0; k + sizeof(int) <= bytes.size(); k += sizeof(int)) {
    int v;
    std::memcpy(&v, bytes.data() + k, sizeof v);
    if (v != 0) return v;
  }
  return 0;
}

std::vector<double> read_doubles(const NDArray& x, const Stream* stream) {
  if (stream) stream->synchronize();
  const NDArray wide = x.dtype() == DType::Float64 ? x : x.astype(DType::Float64, stream);
  if (stream && wide.data() != x.data()) stream->synchronize();
  const std::vector<std::byte> bytes = wide.to_host_bytes();
  std::vector<double> out(bytes.size() / sizeof(double));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

int as_lapack_int(std::int64_t n, std::string_view who) {
  if (n > INT_MAX) fail("{}: a dimension of {} is more than LAPACK takes (at most {})", who, n, INT_MAX);
  return static_cast<int>(n);
}

std::string cusolver_path() { return cusolver().lib.path; }
std::string lapacke_path() { return lapacke().lib.path; }

}  // namespace luda::ops::solvers

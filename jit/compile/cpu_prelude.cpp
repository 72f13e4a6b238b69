#include "jit/compile/cpu_prelude.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "dsl/prelude.h"
#include "jit/compile/cpu_abi_text.h"  // generated from runtime/cpu_abi.h by CMake
#include "jit/compile/cuda_scanner.h"

namespace luda::jit {
namespace {

// Headers first: the macros below (printf, __shared__, ...) must not rename anything in
// them. <math.h> from libstdc++/libc++ also gives the float overloads (sqrt(float)).
constexpr std::string_view kIncludes = R"cpu(#line 1 "luda_cpu_includes"
// luda cpu prelude: the CUDA C++ subset for kernels compiled by the host C++ compiler.
#include <assert.h>
#include <cxxabi.h>
#include <exception>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <typeinfo>
)cpu";

constexpr std::string_view kSubset = R"cpu(#line 1 "luda_cpu_prelude"
#define __global__ __attribute__((visibility("hidden")))
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __constant__
// Static shared storage is per block: a block's CUDA threads all run on one OS thread.
#define __shared__ static thread_local
#define LUDA_CPU_VISIBLE __attribute__((visibility("default")))
#define LUDA_CPU_EXPORT extern "C" LUDA_CPU_VISIBLE  // functions; data: extern "C" { LUDA_CPU_VISIBLE int x = 1; }
// The executor may switch CUDA threads (fibers) inside these calls: memory is reread.
#define LUDA_CPU_MEMORY_BARRIER() __asm__ __volatile__("" ::: "memory")

static const luda_cpu_runtime* luda_cpu_rt;
static thread_local luda_cpu_thread* luda_cpu_current_thread;
LUDA_CPU_EXPORT void luda_cpu_bind(const luda_cpu_runtime* rt) { luda_cpu_rt = rt; }
LUDA_CPU_EXPORT luda_cpu_thread** luda_cpu_current_slot(void) { return &luda_cpu_current_thread; }
static inline luda_cpu_thread* luda_cpu_self() { return luda_cpu_current_thread; }
// Thrown to end the calling CUDA thread (a failed bounds check); <entry>_cpu catches it.
struct luda_cpu_exit {};

// ---- what would end the process ends the kernel instead (runtime/cpu_abi.h fail)
[[noreturn]] static void luda_cpu_fail(const char* message) {
  luda_cpu_rt->fail(luda_cpu_current_thread, message);
  __builtin_unreachable();
}
[[noreturn]] static void luda_cpu_exit_(int code) {
  char m[96];
  snprintf(m, sizeof m, "called exit(%d); a kernel cannot end the process, so luda stopped the kernel", code);
  luda_cpu_fail(m);
}
[[noreturn]] static void luda_cpu_quick_exit_(int code) { luda_cpu_exit_(code); }
[[noreturn]] static void luda_cpu__Exit_(int code) { luda_cpu_exit_(code); }
[[noreturn]] static void luda_cpu_abort_() { luda_cpu_fail("called abort(); luda stopped the kernel instead of the process"); }
[[noreturn]] static void __trap() { luda_cpu_fail("called __trap(); luda stopped the kernel"); }
// assert's failure path (glibc's <assert.h>, here or included again by the kernel).
extern "C" __attribute__((visibility("hidden"), noreturn)) void luda_cpu_assert_fail(
    const char* expression, const char* file, unsigned int line, const char* function) noexcept {
  char m[512];
  snprintf(m, sizeof m, "failed an assertion: %s (%s:%u, in %s)", expression, file, line, function);
  luda_cpu_fail(m);
}
// An exception that leaves a raw kernel, described while it is being handled.
static void luda_cpu_describe_exception(char* out, size_t size) {
  const std::type_info* type = abi::__cxa_current_exception_type();
  int status = 0;
  char* name = type ? abi::__cxa_demangle(type->name(), nullptr, nullptr, &status) : nullptr;
  const char* shown = name ? name : type ? type->name() : "unknown";
  try {
    throw;
  } catch (const std::exception& e) {
    snprintf(out, size, "threw %s: %s", shown, e.what());
  } catch (...) {
    snprintf(out, size, "threw an exception of type %s", shown);
  }
  free(name);
}
namespace std {
using ::luda_cpu_exit_;
using ::luda_cpu_quick_exit_;
using ::luda_cpu__Exit_;
using ::luda_cpu_abort_;
}
#define exit luda_cpu_exit_
#define quick_exit luda_cpu_quick_exit_
#define _Exit luda_cpu__Exit_
#define abort luda_cpu_abort_
#define __assert_fail luda_cpu_assert_fail

// Open-loop back-edges of generated kernels whose threads may wait for one another
// (dsl/codegen_cuda.h): the block's other threads run.
static inline void luda_yield() { luda_cpu_rt->yield(luda_cpu_current_thread); }

typedef luda_cpu_dim3 uint3;
struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
static const int warpSize = 32;
// For <entry>_cpu_block (runtime/cpu_abi.h), which cannot name these fields once the
// macros below exist.
static inline luda_cpu_dim3 luda_cpu_block_dim(const luda_cpu_thread* t) { return t->blockDim; }
static inline void luda_cpu_enter(luda_cpu_thread* t, unsigned int x, unsigned int y, unsigned int z, unsigned int linear) {
  t->threadIdx.x = x; t->threadIdx.y = y; t->threadIdx.z = z;
  t->lane = linear % 32;
}

// ---- barriers and fences
static inline void __syncthreads() {
  LUDA_CPU_MEMORY_BARRIER();
  luda_cpu_rt->syncthreads(luda_cpu_self());
  LUDA_CPU_MEMORY_BARRIER();
}
// The block's threads share one OS thread and switch only inside runtime calls, so the
// counter needs no atomics; the first barrier keeps a reset from racing the last read.
static thread_local int luda_cpu_block_count;
static inline int __syncthreads_count(int predicate) {
  luda_cpu_thread* t = luda_cpu_self();
  __syncthreads();
  if (t->threadIdx.x == 0 && t->threadIdx.y == 0 && t->threadIdx.z == 0) luda_cpu_block_count = 0;
  __syncthreads();
  if (predicate) ++luda_cpu_block_count;
  __syncthreads();
  return luda_cpu_block_count;
}
static inline int __syncthreads_and(int predicate) {
  luda_cpu_thread* t = luda_cpu_self();
  return __syncthreads_count(predicate != 0) == (int)(t->blockDim.x * t->blockDim.y * t->blockDim.z);
}
static inline int __syncthreads_or(int predicate) { return __syncthreads_count(predicate != 0) != 0; }
static inline void __syncwarp(unsigned int mask = 0xffffffffu) {
  LUDA_CPU_MEMORY_BARRIER();
  luda_cpu_rt->syncwarp(luda_cpu_self(), mask);
  LUDA_CPU_MEMORY_BARRIER();
}
// The grid barrier of a cooperative launch (runtime/cpu_executor.h): every block is resident.
namespace cooperative_groups {
struct grid_group {
  void sync() const {
    LUDA_CPU_MEMORY_BARRIER();
    luda_cpu_rt->grid_sync(luda_cpu_self());
    LUDA_CPU_MEMORY_BARRIER();
  }
};
static inline grid_group this_grid() { return grid_group(); }
}  // namespace cooperative_groups
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- warp functions: any type of up to 8 bytes travels as its bits
template <class luda_T> static inline luda_T luda_cpu_shfl(unsigned int mask, luda_T value, int mode, int arg, int width) {
  static_assert(sizeof(luda_T) <= 8, "warp shuffles move values of at most 8 bytes");
  unsigned long long bits = 0;
  memcpy(&bits, &value, sizeof(luda_T));
  LUDA_CPU_MEMORY_BARRIER();
  bits = luda_cpu_rt->shfl(luda_cpu_self(), mask, bits, mode, arg, width);
  LUDA_CPU_MEMORY_BARRIER();
  luda_T r;
  memcpy(&r, &bits, sizeof(luda_T));
  return r;
}
template <class luda_T> static inline luda_T __shfl_sync(unsigned int mask, luda_T v, int lane, int width = 32) { return luda_cpu_shfl(mask, v, 0, lane, width); }
template <class luda_T> static inline luda_T __shfl_up_sync(unsigned int mask, luda_T v, unsigned int delta, int width = 32) { return luda_cpu_shfl(mask, v, 1, (int)delta, width); }
template <class luda_T> static inline luda_T __shfl_down_sync(unsigned int mask, luda_T v, unsigned int delta, int width = 32) { return luda_cpu_shfl(mask, v, 2, (int)delta, width); }
template <class luda_T> static inline luda_T __shfl_xor_sync(unsigned int mask, luda_T v, int lane_mask, int width = 32) { return luda_cpu_shfl(mask, v, 3, lane_mask, width); }
static inline unsigned int __ballot_sync(unsigned int mask, int predicate) {
  LUDA_CPU_MEMORY_BARRIER();
  unsigned int r = luda_cpu_rt->ballot(luda_cpu_self(), mask, predicate != 0);
  LUDA_CPU_MEMORY_BARRIER();
  return r;
}
static inline int __all_sync(unsigned int mask, int predicate) { return __ballot_sync(mask, predicate == 0) == 0; }
static inline int __any_sync(unsigned int mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
// The lanes in mask whose value has the same bits as the caller's: one shuffle from each
// lane of mask, in lane order, which every lane of mask makes alike.
template <class luda_T> static inline unsigned int __match_any_sync(unsigned int mask, luda_T value) {
  unsigned int same = 0;
  for (int lane = 0; lane < 32; ++lane) {
    if (!((mask >> lane) & 1u)) continue;
    luda_T theirs = luda_cpu_shfl(mask, value, 0, lane, 32);
    if (memcmp(&value, &theirs, sizeof(luda_T)) == 0) same |= 1u << lane;
  }
  return same;
}
template <class luda_T> static inline unsigned int __match_all_sync(unsigned int mask, luda_T value, int* pred) {
  unsigned int same = __match_any_sync(mask, value);
  *pred = same == mask;
  return same == mask ? mask : 0u;
}
// The warp's lanes that exist (a block's last warp may be partial). The block's threads
// reach every warp function together here, so none has diverged away; on a GPU lanes
// that took another branch or exited are absent.
static inline unsigned int __activemask() {
  const luda_cpu_thread* t = luda_cpu_self();
  unsigned int linear = t->threadIdx.x + t->blockDim.x * (t->threadIdx.y + t->blockDim.y * t->threadIdx.z);
  unsigned int rest = t->blockDim.x * t->blockDim.y * t->blockDim.z - (linear - t->lane);
  return rest >= 32 ? 0xffffffffu : (1u << rest) - 1u;
}

// ---- atomics: CUDA's signatures, relaxed as CUDA's are (fences order them), old value back
#define LUDA_CPU_RELAXED __ATOMIC_RELAXED
template <class luda_T, class luda_F> static inline luda_T luda_cpu_atomic_update(luda_T* p, luda_F next) {
  luda_T old, desired;
  __atomic_load(p, &old, LUDA_CPU_RELAXED);
  do desired = next(old);
  while (!__atomic_compare_exchange(p, &old, &desired, true, LUDA_CPU_RELAXED, LUDA_CPU_RELAXED));
  return old;
}
#define LUDA_CPU_FETCH(name, builtin, luda_T) static inline luda_T name(luda_T* p, luda_T v) { return builtin(p, v, LUDA_CPU_RELAXED); }
#define LUDA_CPU_FETCH_INTS(name, builtin) LUDA_CPU_FETCH(name, builtin, int) LUDA_CPU_FETCH(name, builtin, unsigned int) LUDA_CPU_FETCH(name, builtin, unsigned long long)
LUDA_CPU_FETCH_INTS(atomicAdd, __atomic_fetch_add)
LUDA_CPU_FETCH(atomicSub, __atomic_fetch_sub, int) LUDA_CPU_FETCH(atomicSub, __atomic_fetch_sub, unsigned int)
LUDA_CPU_FETCH_INTS(atomicExch, __atomic_exchange_n)
LUDA_CPU_FETCH_INTS(atomicAnd, __atomic_fetch_and)
LUDA_CPU_FETCH_INTS(atomicOr, __atomic_fetch_or)
LUDA_CPU_FETCH_INTS(atomicXor, __atomic_fetch_xor)
static inline float atomicAdd(float* p, float v) { return luda_cpu_atomic_update(p, [v](float o) { return o + v; }); }
static inline double atomicAdd(double* p, double v) { return luda_cpu_atomic_update(p, [v](double o) { return o + v; }); }
static inline float atomicExch(float* p, float v) { float r; __atomic_exchange(p, &v, &r, LUDA_CPU_RELAXED); return r; }
#define LUDA_CPU_MINMAX(luda_T)                                                                              \
  static inline luda_T atomicMin(luda_T* p, luda_T v) { return luda_cpu_atomic_update(p, [v](luda_T o) { return v < o ? v : o; }); } \
  static inline luda_T atomicMax(luda_T* p, luda_T v) { return luda_cpu_atomic_update(p, [v](luda_T o) { return o < v ? v : o; }); }
LUDA_CPU_MINMAX(int) LUDA_CPU_MINMAX(unsigned int) LUDA_CPU_MINMAX(long long) LUDA_CPU_MINMAX(unsigned long long)
#define LUDA_CPU_CAS(luda_T)                                                                      \
  static inline luda_T atomicCAS(luda_T* p, luda_T compare, luda_T v) {                                          \
    __atomic_compare_exchange_n(p, &compare, v, false, LUDA_CPU_RELAXED, LUDA_CPU_RELAXED);  \
    return compare; /* the value found: equal to compare when the swap happened */          \
  }
LUDA_CPU_CAS(int) LUDA_CPU_CAS(unsigned int) LUDA_CPU_CAS(unsigned long long) LUDA_CPU_CAS(unsigned short)
static inline unsigned int atomicInc(unsigned int* p, unsigned int v) { return luda_cpu_atomic_update(p, [v](unsigned int o) { return o >= v ? 0u : o + 1; }); }
static inline unsigned int atomicDec(unsigned int* p, unsigned int v) { return luda_cpu_atomic_update(p, [v](unsigned int o) { return (o == 0 || o > v) ? v : o - 1; }); }

// ---- bit casts and integer intrinsics
static inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
static inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned int x) { float r; memcpy(&r, &x, 4); return r; }
static inline unsigned int __float_as_uint(float x) { unsigned int r; memcpy(&r, &x, 4); return r; }
static inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
static inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
static inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
static inline int __double2loint(double x) { return (int)__double_as_longlong(x); }
static inline double __hiloint2double(int hi, int lo) { return __longlong_as_double((long long)(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo)); }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) { return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32)); }
// PTX's fns.b32, as the PTX ISA states it (a base past 31 never reaches it: luda_fns).
static inline unsigned int __fns(unsigned int mask, unsigned int base, int offset) {
  if (base > 31u) return 0xffffffffu;
  if (offset == 0) return (mask >> base) & 1u ? base : 0xffffffffu;
  int count = offset > 0 ? offset - 1 : -(offset + 1);
  int step = offset > 0 ? 1 : -1;
  for (int pos = (int)base; pos >= 0 && pos < 32; pos += step)
    if ((mask >> pos) & 1u) {
      if (count == 0) return (unsigned int)pos;
      --count;
    }
  return 0xffffffffu;
}
static inline int __mul24(int a, int b) { return (int)((unsigned int)((int)((unsigned int)a << 8) >> 8) * (unsigned int)((int)((unsigned int)b << 8) >> 8)); }
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return (unsigned long long)(((unsigned __int128)a * b) >> 64); }
template <class luda_T> static inline luda_T __ldg(const luda_T* p) { return *p; }

// ---- math beyond <math.h>; the __ fast versions compute the accurate result here
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
// (macros: glibc declares some of these names itself)
#define __expf expf
#define __logf logf
#define __log2f log2f
#define __log10f log10f
#define __sinf sinf
#define __cosf cosf
#define __tanf tanf
#define __powf powf
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }
// Float to integer as a GPU's cvt.rni / cvt.rzi convert (C++ leaves a value out of range
// undefined): saturated at the type's range; NaN gives 0 from a float to 32 bits, and the
// value with only the top bit set from a double to 32 bits and from either to 64 bits, as
// an H100 does. The generated code's luda_ftoi takes NaN to 0 itself. NaN is told by its
// bits: -ffast-math (fastmath=true) folds x != x to false, and the GPU converts NaN the
// same with --use_fast_math.
static inline bool luda_cpu_is_nan(float x) { uint32_t u; memcpy(&u, &x, 4); return (u & 0x7fffffffu) > 0x7f800000u; }
static inline bool luda_cpu_is_nan(double x) { uint64_t u; memcpy(&u, &x, 8); return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
template <class luda_I, class luda_F> static inline luda_I luda_cpu_f2i(luda_F x, luda_I lo, luda_I hi, luda_I nan) {
  if (luda_cpu_is_nan(x)) return nan;
  if (x <= (luda_F)lo) return lo;  // lo is 0 or -2^(n-1): exact
  if (x >= (luda_F)hi) return hi;  // (luda_F)hi is hi, or 2^n when luda_F cannot hold hi
  return (luda_I)x;
}
#define LUDA_CPU_TOP32 0x80000000u
#define LUDA_CPU_TOP64 0x8000000000000000ull
static inline int __float2int_rn(float x) { return luda_cpu_f2i<int>(nearbyintf(x), INT32_MIN, INT32_MAX, 0); }
static inline int __float2int_rz(float x) { return luda_cpu_f2i<int>(x, INT32_MIN, INT32_MAX, 0); }
static inline unsigned int __float2uint_rz(float x) { return luda_cpu_f2i<unsigned int>(x, 0u, UINT32_MAX, 0u); }
static inline long long __float2ll_rz(float x) { return luda_cpu_f2i<long long>(x, INT64_MIN, INT64_MAX, INT64_MIN); }
static inline unsigned long long __float2ull_rz(float x) { return luda_cpu_f2i<unsigned long long>(x, 0ull, UINT64_MAX, LUDA_CPU_TOP64); }
static inline int __double2int_rz(double x) { return luda_cpu_f2i<int>(x, INT32_MIN, INT32_MAX, INT32_MIN); }
static inline unsigned int __double2uint_rz(double x) { return luda_cpu_f2i<unsigned int>(x, 0u, UINT32_MAX, LUDA_CPU_TOP32); }
static inline long long __double2ll_rz(double x) { return luda_cpu_f2i<long long>(x, INT64_MIN, INT64_MAX, INT64_MIN); }
static inline unsigned long long __double2ull_rz(double x) { return luda_cpu_f2i<unsigned long long>(x, 0ull, UINT64_MAX, LUDA_CPU_TOP64); }
static inline float __int2float_rn(int x) { return (float)x; }
// CUDA's min/max: float ones as fminf/fmaxf, the rest in the usual arithmetic conversions.
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
template <class luda_A, class luda_B> static inline decltype(luda_A() + luda_B()) min(luda_A a, luda_B b) { typedef decltype(luda_A() + luda_B()) luda_R; return (luda_R)b < (luda_R)a ? (luda_R)b : (luda_R)a; }
template <class luda_A, class luda_B> static inline decltype(luda_A() + luda_B()) max(luda_A a, luda_B b) { typedef decltype(luda_A() + luda_B()) luda_R; return (luda_R)a < (luda_R)b ? (luda_R)b : (luda_R)a; }

// ---- printf: formatted here, written by the runtime in one piece per call
static int luda_cpu_printf(const char* format, ...) {
  char small[512];
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(small, sizeof small, format, ap);
  va_end(ap);
  if (n < 0) return n;
  if ((size_t)n < sizeof small) {
    luda_cpu_rt->print(small, (unsigned long long)n);
    return n;
  }
  char* big = (char*)malloc((size_t)n + 1);
  if (!big) return -1;
  va_start(ap, format);
  vsnprintf(big, (size_t)n + 1, format, ap);
  va_end(ap);
  luda_cpu_rt->print(big, (unsigned long long)n);
  free(big);
  return n;
}
#define printf luda_cpu_printf
// Last: the prelude's own code reads these fields of luda_cpu_thread by name.
#define threadIdx (luda_cpu_self()->threadIdx)
#define blockIdx (luda_cpu_self()->blockIdx)
#define blockDim (luda_cpu_self()->blockDim)
#define gridDim (luda_cpu_self()->gridDim)
)cpu";

// The cpu versions of the generated-kernel prelude's GPU-only pieces (dsl/prelude.h).
constexpr std::string_view kBoundsFail =
    R"cpu(static __attribute__((noinline)) void luda_fail(luda_BoundsRecord* r, int what, int line, int axis, long long index, long long extent) {
  if (atomicCAS(&r->hit, 0, what) == 0) {
    r->line = line; r->axis = axis; r->index = index; r->extent = extent;
    __threadfence();
  }
  throw luda_cpu_exit();  // ends this CUDA thread, as PTX's exit does
}
)cpu";

constexpr std::string_view kLaneAndShared = R"cpu(LUDA_INLINE int luda_laneid() { return (int)luda_cpu_self()->lane; }
LUDA_INLINE long long luda_dynamic_shared_bytes() { return (long long)luda_cpu_self()->dynamic_shared_bytes; }
LUDA_INLINE unsigned luda_lanemask_lt() { return (1u << luda_cpu_self()->lane) - 1u; }
#define luda_dynamic_shared ((unsigned char*)luda_cpu_self()->dynamic_shared)

)cpu";

std::string subset_text() {
  std::string out(kIncludes);
  out += "#line 1 \"luda_cpu_abi.h\"\n";
  out += detail::kCpuAbiText;
  if (out.back() != '\n') out += '\n';
  out += kSubset;
  return out;
}

// extern-shared -> 'extern' '__shared__' { NAME | '*' | ('__align__' | 'alignas') '(' ... ')' }
//                  NAME '[' ']' ';'
// A dynamic shared memory declaration, `extern __shared__ __align__(16) float s[];`.
struct DynamicShared {
  std::string type, name;  // "float", "s"
  std::size_t semicolon;   // the index of its ';'
};

// The declaration that t[i] starts, if any. A try never reads past the next `extern`, so
// that tries from every `extern` of a source read each token once or twice.
std::optional<DynamicShared> dynamic_shared(const std::vector<CudaToken>& t, std::size_t i, std::string_view source) {
  using Kind = CudaToken::Kind;
  auto identifier = [&](std::size_t k, std::string_view w) {
    return k < t.size() && t[k].kind == Kind::Identifier && t[k].spells(source, w);
  };
  auto punctuator = [&](std::size_t k, std::string_view p) {
    return k < t.size() && t[k].kind == Kind::Punctuator && t[k].spells(source, p);
  };
  if (!identifier(i, "extern") || !identifier(i + 1, "__shared__")) return std::nullopt;
  std::vector<std::string> words;  // the type's words and stars, then the name
  std::size_t k = i + 2;
  for (; !punctuator(k, "["); ++k) {
    if (punctuator(k, "*")) {
      words.emplace_back("*");
      continue;
    }
    if (k >= t.size() || t[k].kind != Kind::Identifier || identifier(k, "extern")) return std::nullopt;
    std::string word = t[k].spelling(source);
    if (word == "__align__" || word == "alignas") {  // (n): dropped, the dynamic memory is aligned
      if (!punctuator(++k, "(")) return std::nullopt;
      for (int depth = 0;; ++k) {
        if (k >= t.size() || punctuator(k, ";") || punctuator(k, "{") || punctuator(k, "}") || identifier(k, "extern"))
          return std::nullopt;
        if (punctuator(k, "(")) ++depth;
        if (punctuator(k, ")") && --depth == 0) break;
      }
      continue;
    }
    words.push_back(std::move(word));
  }
  if (!punctuator(k + 1, "]") || !punctuator(k + 2, ";") || words.size() < 2 || words.back() == "*" ||
      words.front() == "*")
    return std::nullopt;
  DynamicShared d;
  d.name = words.back();
  for (std::size_t w = 0; w + 1 < words.size(); ++w) {
    if (w > 0 && words[w] != "*") d.type += ' ';
    d.type += words[w];
  }
  d.semicolon = k + 2;
  return d;
}

// include-cooperative-groups -> '#' 'include' ('<cooperative_groups.h>' | '"cooperative_groups.h"') END
bool includes_cooperative_groups(const std::vector<CudaToken>& t, std::size_t i, std::string_view source) {
  using Kind = CudaToken::Kind;
  return i + 3 < t.size() && t[i + 1].kind == Kind::Identifier && t[i + 1].spells(source, "include") &&
         ((t[i + 2].kind == Kind::HeaderName && t[i + 2].spells(source, "<cooperative_groups.h>")) ||
          (t[i + 2].kind == Kind::String && t[i + 2].spells(source, "\"cooperative_groups.h\""))) &&
         t[i + 3].kind == Kind::DirectiveEnd;
}

}  // namespace

std::string_view cpu_cuda_subset() {
  static const std::string text = subset_text();
  return text;
}

std::string_view cpu_generated_prelude() {
  static const std::string text = std::string(cpu_cuda_subset()) + dsl::prelude_with(kBoundsFail, kLaneAndShared);
  return text;
}

std::string cpu_raw_source(std::string_view source, std::string_view file_name) {
  using Kind = CudaToken::Kind;
  const std::vector<CudaToken> t = scan_cuda(source);
  auto punctuator = [&](std::size_t i, std::string_view p) {
    return i < t.size() && t[i].kind == Kind::Punctuator && t[i].spells(source, p);
  };
  std::string out = fmt::format("#line 1 \"{}\"\n", file_name);
  std::size_t done = 0;             // source up to here is in out, or replaced there
  int line = 1;                     // the line `done` is on
  auto pass = [&](std::size_t p) {  // the source up to p is replaced
    line += static_cast<int>(
        std::count(source.begin() + static_cast<long>(done), source.begin() + static_cast<long>(p), '\n'));
    done = p;
  };
  auto copy = [&](std::size_t p) {  // the source up to p is kept
    out.append(source, done, p - done);
    pass(p);
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == Kind::Identifier && t[i].spells(source, "__noinline__") &&
        !(punctuator(i - 1, "(") || punctuator(i - 1, ",") || punctuator(i - 1, "::"))) {
      // CUDA's keyword as GCC's attribute; not in an attribute's list (GCC's form
      // __attribute__((__noinline__)), which libstdc++'s headers write) nor a qualified name.
      copy(t[i].begin);
      out += "__attribute__((noinline))";
      pass(t[i].end);
    } else if (t[i].kind == Kind::DirectiveStart && includes_cooperative_groups(t, i, source)) {
      // CUDA's header would not compile here; the prelude has its cpu subset (this_grid).
      copy(t[i].begin);
      out += "/* #include <cooperative_groups.h>: the cpu prelude's subset */";
      pass(t[i + 2].end);
      i += 2;
    } else if (std::optional<DynamicShared> d = dynamic_shared(t, i, source)) {
      copy(t[i].begin);
      pass(t[d->semicolon].end);
      out += fmt::format("\n#define {} (({}*)luda_cpu_self()->dynamic_shared)\n#line {} \"{}\"\n", d->name, d->type,
                         line, file_name);
      i = d->semicolon;
    }
  }
  copy(source.size());
  if (out.empty() || out.back() != '\n') out += '\n';
  return out;
}

bool raw_source_needs_fibers(std::string_view source) {
  // Names in code or in a directive (a macro that calls a barrier), not in comments nor
  // literals; any name that holds one (__shfl in __shfl_down_sync, a user's wrapper name).
  CudaScanner scanner(source);
  for (CudaToken t = scanner.next(); t.kind != CudaToken::Kind::End; t = scanner.next()) {
    if (t.kind != CudaToken::Kind::Identifier) continue;
    std::string spelled;
    std::string_view name = t.text(source);
    if (t.spliced) name = spelled = t.spelling(source);
    for (std::string_view barrier : {"__syncthreads", "__syncwarp", "__shfl", "__ballot_sync", "__all_sync",
                                     "__any_sync", "__match_any_sync", "__match_all_sync"})
      if (name.find(barrier) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace luda::jit

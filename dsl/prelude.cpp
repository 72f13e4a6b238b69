#include "dsl/prelude.h"

namespace luda::dsl {

// Kept small on purpose: parsing it is part of every kernel's compile time. Functions
// are `static` or templates so that NVRTC drops what a kernel does not use.
// ORDER PRELUDE: the pieces below, in this order, are the prelude (prelude_with).
namespace {

constexpr std::string_view kHead = R"prelude(#line 1 "luda_prelude"
// luda prelude: what generated kernels use, instead of CUDA's headers.
template <class T, int N> struct luda_Array { T* data; long long shape[N]; long long strides[N]; };
struct luda_BoundsRecord { int hit; int line; int axis; int pad; long long index; long long extent; };
struct luda_i64x2 { long long v0, v1; };
struct luda_i64x3 { long long v0, v1, v2; };

// unsigned_type: same width (logical shifts); arith_type: where + - * wrap without UB
// (8- and 16-bit values would be promoted to int, which can overflow).
template <class T> struct luda_traits { typedef T unsigned_type; typedef T arith_type; enum { is_signed_int = 0, is_int = 0, is_float = 0 }; };
template <> struct luda_traits<signed char> { typedef unsigned char unsigned_type; typedef unsigned arith_type; enum { is_signed_int = 1, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<short> { typedef unsigned short unsigned_type; typedef unsigned arith_type; enum { is_signed_int = 1, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<int> { typedef unsigned unsigned_type; typedef unsigned arith_type; enum { is_signed_int = 1, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<long long> { typedef unsigned long long unsigned_type; typedef unsigned long long arith_type; enum { is_signed_int = 1, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<unsigned char> { typedef unsigned char unsigned_type; typedef unsigned arith_type; enum { is_signed_int = 0, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<unsigned short> { typedef unsigned short unsigned_type; typedef unsigned arith_type; enum { is_signed_int = 0, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<unsigned> { typedef unsigned unsigned_type; typedef unsigned arith_type; enum { is_signed_int = 0, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<unsigned long long> { typedef unsigned long long unsigned_type; typedef unsigned long long arith_type; enum { is_signed_int = 0, is_int = 1, is_float = 0 }; };
template <> struct luda_traits<float> { typedef float unsigned_type; typedef float arith_type; enum { is_signed_int = 0, is_int = 0, is_float = 1 }; };
template <> struct luda_traits<double> { typedef double unsigned_type; typedef double arith_type; enum { is_signed_int = 0, is_int = 0, is_float = 1 }; };
#define LUDA_INLINE static __device__ __forceinline__

)prelude";

constexpr std::string_view kGpuBoundsFail = R"prelude(static __device__ __noinline__ void luda_fail(luda_BoundsRecord* r, int what, int line, int axis, long long index, long long extent) {
  if (atomicCAS(&r->hit, 0, what) == 0) {
    r->line = line; r->axis = axis; r->index = index; r->extent = extent;
    __threadfence();
  }
  asm volatile("exit;");
}
)prelude";

// ORDER RECORD: what = 1 an index out of range, 2 a 'for' step of zero, 3 an index into
// a.shape out of range (dsl/compile.h).
constexpr std::string_view kCommonArithmetic = R"prelude(LUDA_INLINE long long luda_check(long long i, long long n, luda_BoundsRecord* r, int line, int axis) {
  if ((unsigned long long)i >= (unsigned long long)n) luda_fail(r, 1, line, axis, i, n);
  return i;
}
static __device__ __attribute__((noinline)) void luda_step_zero(luda_BoundsRecord* r, int line) { luda_fail(r, 2, line, 0, 0, 0); }

// Arrays: a[i] of an N-d array is an (N-1)-d view; a.size.
template <class T, int N> static __device__ __forceinline__ luda_Array<T, N - 1> luda_row(const luda_Array<T, N>& a, long long i) {
  luda_Array<T, N - 1> r;
  r.data = a.data + i * a.strides[0];
  for (int k = 1; k < N; ++k) { r.shape[k - 1] = a.shape[k]; r.strides[k - 1] = a.strides[k]; }
  return r;
}
// a.shape[k] for an axis k known only at run time: 0 when k is not in 1..N (the array has
// no such dimension; reading past shape[] would be undefined).
template <class T, int N> static __device__ __forceinline__ long long luda_shape_at(const luda_Array<T, N>& a, long long k) {
  return (unsigned long long)(k - 1) < (unsigned long long)N ? a.shape[k - 1] : 0;
}
// The same with boundscheck: an axis outside 1..N stops the kernel, as an index does.
template <class T, int N> static __device__ __forceinline__ long long luda_shape_checked(const luda_Array<T, N>& a, long long k, luda_BoundsRecord* r, int line) {
  if ((unsigned long long)(k - 1) >= (unsigned long long)N) luda_fail(r, 3, line, 0, k, N);
  return a.shape[k - 1];
}
template <class T, int N> static __device__ __forceinline__ long long luda_size(const luda_Array<T, N>& a) {
  long long n = 1;
  for (int k = 0; k < N; ++k) n *= a.shape[k];
  return n;
}

// Lua integer arithmetic: signed overflow wraps (done in unsigned, where C++ defines it).
// luda_negative is false for unsigned types without a "pointless comparison" warning.
template <class T> LUDA_INLINE bool luda_negative(T x) { return luda_traits<T>::is_signed_int && (long long)x < 0; }
template <class T> LUDA_INLINE T luda_add(T a, T b) { typedef typename luda_traits<T>::arith_type U; return (T)((U)a + (U)b); }
template <class T> LUDA_INLINE T luda_sub(T a, T b) { typedef typename luda_traits<T>::arith_type U; return (T)((U)a - (U)b); }
template <class T> LUDA_INLINE T luda_mul(T a, T b) { typedef typename luda_traits<T>::arith_type U; return (T)((U)a * (U)b); }
template <class T> LUDA_INLINE T luda_neg(T a) { typedef typename luda_traits<T>::arith_type U; return (T)((U)0 - (U)a); }
// Floor division and modulo (Lua's luaV_idiv / luaV_mod): the result takes the divisor's sign.
// An integer divisor of 0 gives 0, as NumPy does, for every integer type: the GPU does not
// trap, but the cpu target would take the host process down with SIGFPE; x // -1 is -x
// (wrapping, so INT_MIN // -1 is INT_MIN, where C's division traps).
template <class T> LUDA_INLINE T luda_floordiv(T a, T b) {
  if (b == (T)0) return (T)0;
  if (!luda_traits<T>::is_signed_int) return a / b;
  if (b == (T)-1) return luda_neg(a);
  T q = a / b;
  return (a % b != 0 && luda_negative((T)(a ^ b))) ? (T)(q - 1) : q;
}
template <class T> LUDA_INLINE T luda_mod(T a, T b) {
  if (b == (T)0) return (T)0;
  if (!luda_traits<T>::is_signed_int) return a % b;
  if (b == (T)-1) return 0;
  T m = a % b;
  return (m != 0 && luda_negative((T)(m ^ b))) ? (T)(m + b) : m;
}
// A signed integer against a uint64 (no C++ type holds both): compared by value, where C++
// would convert the signed one to unsigned (-1 < 1ull is false there).
LUDA_INLINE bool luda_lt(long long a, unsigned long long b) { return a < 0 || (unsigned long long)a < b; }
LUDA_INLINE bool luda_lt(unsigned long long a, long long b) { return b >= 0 && a < (unsigned long long)b; }
LUDA_INLINE bool luda_eq(long long a, unsigned long long b) { return a >= 0 && (unsigned long long)a == b; }
LUDA_INLINE bool luda_eq(unsigned long long a, long long b) { return b >= 0 && a == (unsigned long long)b; }
LUDA_INLINE float luda_floordiv(float a, float b) { return floorf(a / b); }
LUDA_INLINE double luda_floordiv(double a, double b) { return floor(a / b); }
// Float `%`: the divisor's sign, a zero too (NumPy's remainder: -4.0 % 2.0 is 0.0, where
// Lua's fmod-based one gives -0.0); a zero divisor gives NaN.
LUDA_INLINE float luda_mod(float a, float b) { float m = fmodf(a, b); if (m == 0.0f) return copysignf(0.0f, b); return ((m > 0) ? b < 0 : (m < 0 && b > 0)) ? m + b : m; }
LUDA_INLINE double luda_mod(double a, double b) { double m = fmod(a, b); if (m == 0.0) return copysign(0.0, b); return ((m > 0) ? b < 0 : (m < 0 && b > 0)) ? m + b : m; }
// math.fmod on integers: C's truncated remainder, with x % -1 = 0 and x % 0 = 0 (no trap).
template <class T> LUDA_INLINE T luda_fmod(T a, T b) { return (b == (T)0 || (luda_traits<T>::is_signed_int && b == (T)-1)) ? (T)0 : (T)(a % b); }
LUDA_INLINE float luda_fmod(float a, float b) { return fmodf(a, b); }
LUDA_INLINE double luda_fmod(double a, double b) { return fmod(a, b); }
// Lua's shifts: logical, a count past the width gives 0, a negative count shifts the other way.
template <class T> LUDA_INLINE T luda_shl(T x, long long n) {
  typedef typename luda_traits<T>::unsigned_type U;
  typedef typename luda_traits<T>::arith_type A;
  const long long bits = 8 * (long long)sizeof(T);
  if (n <= -bits || n >= bits) return 0;
  return n >= 0 ? (T)((A)(U)x << n) : (T)((U)x >> -n);
}
template <class T> LUDA_INLINE T luda_shr(T x, long long n) { return luda_shl(x, (long long)(0ull - (unsigned long long)n)); }
// Float to integer: towards zero, saturated to T's range (as the GPU's __float2*_rz /
// __double2*_rz intrinsics convert, and the cpu prelude's give them; C++ leaves a value
// out of range undefined), and NaN to 0, which luda_ftoi checks itself: the GPU's
// intrinsics give the most negative value of 32 or 64 bits for NaN.
LUDA_INLINE int luda_f2i(float x) { return __float2int_rz(x); }
LUDA_INLINE int luda_f2i(double x) { return __double2int_rz(x); }
LUDA_INLINE unsigned luda_f2u(float x) { return __float2uint_rz(x); }
LUDA_INLINE unsigned luda_f2u(double x) { return __double2uint_rz(x); }
LUDA_INLINE long long luda_f2ll(float x) { return __float2ll_rz(x); }
LUDA_INLINE long long luda_f2ll(double x) { return __double2ll_rz(x); }
LUDA_INLINE unsigned long long luda_f2ull(float x) { return __float2ull_rz(x); }
LUDA_INLINE unsigned long long luda_f2ull(double x) { return __double2ull_rz(x); }
template <class T> LUDA_INLINE T luda_max_of() { return luda_traits<T>::is_signed_int ? (T)((1ull << (8 * sizeof(T) - 1)) - 1) : (T)~0ull; }
template <class T> LUDA_INLINE T luda_min_of() { return luda_traits<T>::is_signed_int ? (T)(-(long long)luda_max_of<T>() - 1) : (T)0; }
// NaN told by its bits: fastmath compiles the cpu target with -ffast-math, which folds
// x != x to false.
LUDA_INLINE bool luda_is_nan(float x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }
LUDA_INLINE bool luda_is_nan(double x) { return ((unsigned long long)__double_as_longlong(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
template <class T, class F> LUDA_INLINE T luda_ftoi(F x) {
  if (luda_is_nan(x)) return (T)0;
  if (sizeof(T) == 8) return luda_traits<T>::is_signed_int ? (T)luda_f2ll(x) : (T)luda_f2ull(x);
  if (sizeof(T) == 4) return luda_traits<T>::is_signed_int ? (T)luda_f2i(x) : (T)luda_f2u(x);
  const int v = luda_f2i(x), lo = (int)luda_min_of<T>(), hi = (int)luda_max_of<T>();
  return (T)(v < lo ? lo : v > hi ? hi : v);
}
// A conversion as the kernel language makes it (stores, arguments, the kinds' operands and
// results): C++'s, except floats to integers as luda_ftoi and floats to bool as luda_ftob.
template <class T, class F, bool = luda_traits<F>::is_float && luda_traits<T>::is_int> struct luda_convert {
  static __device__ __forceinline__ T run(F x) { return (T)x; }
};
template <class T, class F> struct luda_convert<T, F, true> {
  static __device__ __forceinline__ T run(F x) { return luda_ftoi<T>(x); }
};
// A float to bool: true when not 0, NaN included (NumPy's), NaN told by its bits.
LUDA_INLINE bool luda_ftob(float x) { return luda_is_nan(x) || x != 0.0f; }
LUDA_INLINE bool luda_ftob(double x) { return luda_is_nan(x) || x != 0.0; }
template <> struct luda_convert<bool, float, false> {
  static __device__ __forceinline__ bool run(float x) { return luda_ftob(x); }
};
template <> struct luda_convert<bool, double, false> {
  static __device__ __forceinline__ bool run(double x) { return luda_ftob(x); }
};
template <class T, class F> LUDA_INLINE T luda_cvt(F x) { return luda_convert<T, F>::run(x); }
// An integer for loop's float limit as Lua's forlimit takes it: floored (ceiled counting
// down), clipped to the counter type's range; false when the loop cannot run (a limit
// beyond the range on the side the loop leaves from; NaN counts as below every integer).
template <class T> LUDA_INLINE bool luda_for_limit_of(double v, double limit, int down, T* out) {
  const double lo = (double)luda_min_of<T>();
  const double hi = luda_traits<T>::is_signed_int ? -lo : 2.0 * (double)((luda_max_of<T>() >> 1) + 1);
  if (v >= lo && v < hi) { *out = (T)v; return true; }
  if (0 < limit) { *out = luda_max_of<T>(); return !down; }
  *out = luda_min_of<T>();
  return down;
}
template <class T> LUDA_INLINE bool luda_for_limit(float limit, int down, T* out) { return luda_for_limit_of<T>(down ? ceilf(limit) : floorf(limit), limit, down, out); }
template <class T> LUDA_INLINE bool luda_for_limit(double limit, int down, T* out) { return luda_for_limit_of<T>(down ? ceil(limit) : floor(limit), limit, down, out); }
// math.log(x, base) as Lua computes it.
LUDA_INLINE float luda_log_base(float x, float b) { return b == 2.0f ? log2f(x) : b == 10.0f ? log10f(x) : logf(x) / logf(b); }
LUDA_INLINE double luda_log_base(double x, double b) { return b == 2.0 ? log2(x) : b == 10.0 ? log10(x) : log(x) / log(b); }
template <class T> LUDA_INLINE T luda_pow2(T x) { return x * x; }
template <class T> LUDA_INLINE T luda_pow3(T x) { return x * x * x; }
// math.min / math.max compare as Lua does (`b < a`), math.abs wraps at the minimum.
template <class T> LUDA_INLINE T luda_min(T a, T b) { return b < a ? b : a; }
template <class T> LUDA_INLINE T luda_max(T a, T b) { return a < b ? b : a; }
template <class T> LUDA_INLINE T luda_abs(T a) { return luda_negative(a) ? luda_neg(a) : a; }

// Bit intrinsics as numba.cuda's: popc and clz count within the operand's own width
// (int8 -1 has 8 set bits), the CUDA intrinsics do the work.
template <class T> LUDA_INLINE unsigned long long luda_bits_of(T x) { return (unsigned long long)x & (~0ull >> (64 - 8 * sizeof(T))); }
template <class T> LUDA_INLINE T luda_popc(T x) { return (T)(sizeof(T) == 8 ? __popcll(luda_bits_of(x)) : __popc((unsigned)luda_bits_of(x))); }
template <class T> LUDA_INLINE T luda_clz(T x) { return (T)(sizeof(T) == 8 ? __clzll((long long)x) : __clz((int)luda_bits_of(x)) - 8 * (4 - (int)sizeof(T))); }
template <class T> LUDA_INLINE unsigned luda_ffs(T x) { return (unsigned)(sizeof(T) == 8 ? __ffsll((long long)x) : __ffs((int)x)); }
LUDA_INLINE unsigned luda_brev(unsigned x) { return __brev(x); }
LUDA_INLINE unsigned long long luda_brev(unsigned long long x) { return __brevll(x); }
// __fns leaves a base past 31 undefined; here it finds nothing.
LUDA_INLINE unsigned luda_fns(unsigned mask, unsigned base, int offset) { return base > 31u ? 0xffffffffu : __fns(mask, base, offset); }

// cuda.match_all_sync's two values, as numba.cuda gives them: (mask, true) when every lane
// of mask holds the same bits, else (0, false).
struct luda_match_all_result { unsigned v0; bool v1; };
template <class T> LUDA_INLINE luda_match_all_result luda_match_all(unsigned mask, T value) {
  int pred = 0;
  unsigned same = __match_all_sync(mask, value, &pred);
  luda_match_all_result r = {same, pred != 0};
  return r;
}

// Thread geometry.
LUDA_INLINE long long luda_grid1() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
LUDA_INLINE luda_i64x2 luda_grid2() { luda_i64x2 r = {(long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)blockIdx.y * blockDim.y + threadIdx.y}; return r; }
LUDA_INLINE luda_i64x3 luda_grid3() { luda_i64x3 r = {(long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)blockIdx.y * blockDim.y + threadIdx.y, (long long)blockIdx.z * blockDim.z + threadIdx.z}; return r; }
LUDA_INLINE long long luda_gridsize1() { return (long long)blockDim.x * gridDim.x; }
LUDA_INLINE luda_i64x2 luda_gridsize2() { luda_i64x2 r = {(long long)blockDim.x * gridDim.x, (long long)blockDim.y * gridDim.y}; return r; }
LUDA_INLINE luda_i64x3 luda_gridsize3() { luda_i64x3 r = {(long long)blockDim.x * gridDim.x, (long long)blockDim.y * gridDim.y, (long long)blockDim.z * gridDim.z}; return r; }
)prelude";

constexpr std::string_view kGpuLaneAndShared = R"prelude(LUDA_INLINE int luda_laneid() { unsigned r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); return (int)r; }
LUDA_INLINE long long luda_dynamic_shared_bytes() { unsigned r; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r)); return r; }
LUDA_INLINE unsigned luda_lanemask_lt() { unsigned r; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r)); return r; }
extern __shared__ __align__(16) unsigned char luda_dynamic_shared[];

)prelude";

constexpr std::string_view kCommonAtomics = R"prelude(// Atomics, each returning the old value, for int32, uint32, int64, uint64, float32 and
// float64 (the types the builtin table lets through; inc/dec: uint32 and uint64).
#define LUDA_ULL(p) ((unsigned long long*)(p))
#define LUDA_ATOMIC_NATIVE(name, fn, T) LUDA_INLINE T name(T* p, T v) { return fn(p, v); }
#define LUDA_ATOMIC_VIA_ULL(name, fn) LUDA_INLINE long long name(long long* p, long long v) { return (long long)fn(LUDA_ULL(p), (unsigned long long)v); }
LUDA_ATOMIC_NATIVE(luda_atomic_add, atomicAdd, int) LUDA_ATOMIC_NATIVE(luda_atomic_add, atomicAdd, unsigned)
LUDA_ATOMIC_NATIVE(luda_atomic_add, atomicAdd, unsigned long long) LUDA_ATOMIC_NATIVE(luda_atomic_add, atomicAdd, float)
LUDA_ATOMIC_NATIVE(luda_atomic_add, atomicAdd, double) LUDA_ATOMIC_VIA_ULL(luda_atomic_add, atomicAdd)
LUDA_ATOMIC_NATIVE(luda_atomic_sub, atomicSub, int) LUDA_ATOMIC_NATIVE(luda_atomic_sub, atomicSub, unsigned)
LUDA_INLINE unsigned long long luda_atomic_sub(unsigned long long* p, unsigned long long v) { return atomicAdd(p, 0ull - v); }
LUDA_INLINE long long luda_atomic_sub(long long* p, long long v) { return (long long)atomicAdd(LUDA_ULL(p), 0ull - (unsigned long long)v); }
LUDA_INLINE float luda_atomic_sub(float* p, float v) { return atomicAdd(p, -v); }
LUDA_INLINE double luda_atomic_sub(double* p, double v) { return atomicAdd(p, -v); }
LUDA_ATOMIC_NATIVE(luda_atomic_min, atomicMin, int) LUDA_ATOMIC_NATIVE(luda_atomic_min, atomicMin, unsigned)
LUDA_ATOMIC_NATIVE(luda_atomic_min, atomicMin, long long) LUDA_ATOMIC_NATIVE(luda_atomic_min, atomicMin, unsigned long long)
LUDA_ATOMIC_NATIVE(luda_atomic_max, atomicMax, int) LUDA_ATOMIC_NATIVE(luda_atomic_max, atomicMax, unsigned)
LUDA_ATOMIC_NATIVE(luda_atomic_max, atomicMax, long long) LUDA_ATOMIC_NATIVE(luda_atomic_max, atomicMax, unsigned long long)
// Floating min/max: a compare-and-swap loop on the bits, storing only when v wins.
#define LUDA_ATOMIC_FLOAT_MINMAX(name, T, I, to_bits, from_bits, wins)            \
  LUDA_INLINE T name(T* p, T v) {                                                 \
    I* ip = (I*)p; I old = *ip, assumed;                                          \
    do { assumed = old; if (!(wins)) break; old = atomicCAS(ip, assumed, to_bits(v)); } \
    while (old != assumed);                                                       \
    return from_bits(old);                                                        \
  }
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_min, float, int, __float_as_int, __int_as_float, v < __int_as_float(assumed))
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_max, float, int, __float_as_int, __int_as_float, __int_as_float(assumed) < v)
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_min, double, unsigned long long, (unsigned long long)__double_as_longlong, __longlong_as_double, v < __longlong_as_double(assumed))
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_max, double, unsigned long long, (unsigned long long)__double_as_longlong, __longlong_as_double, __longlong_as_double(assumed) < v)
// nanmin/nanmax as numba.cuda's: NaN is a missing value. On integers, min and max; on
// floats v is stored when it is a number and a[i] is NaN or loses to it.
#define LUDA_ATOMIC_NAN_INTS(name, fn) LUDA_ATOMIC_NATIVE(name, fn, int) LUDA_ATOMIC_NATIVE(name, fn, unsigned) \
  LUDA_ATOMIC_NATIVE(name, fn, long long) LUDA_ATOMIC_NATIVE(name, fn, unsigned long long)
LUDA_ATOMIC_NAN_INTS(luda_atomic_nanmin, atomicMin) LUDA_ATOMIC_NAN_INTS(luda_atomic_nanmax, atomicMax)
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_nanmin, float, int, __float_as_int, __int_as_float, v == v && !(__int_as_float(assumed) <= v))
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_nanmax, float, int, __float_as_int, __int_as_float, v == v && !(__int_as_float(assumed) >= v))
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_nanmin, double, unsigned long long, (unsigned long long)__double_as_longlong, __longlong_as_double, v == v && !(__longlong_as_double(assumed) <= v))
LUDA_ATOMIC_FLOAT_MINMAX(luda_atomic_nanmax, double, unsigned long long, (unsigned long long)__double_as_longlong, __longlong_as_double, v == v && !(__longlong_as_double(assumed) >= v))
LUDA_ATOMIC_NATIVE(luda_atomic_exch, atomicExch, int) LUDA_ATOMIC_NATIVE(luda_atomic_exch, atomicExch, unsigned)
LUDA_ATOMIC_NATIVE(luda_atomic_exch, atomicExch, unsigned long long) LUDA_ATOMIC_NATIVE(luda_atomic_exch, atomicExch, float)
LUDA_ATOMIC_VIA_ULL(luda_atomic_exch, atomicExch)
LUDA_INLINE double luda_atomic_exch(double* p, double v) { return __longlong_as_double((long long)atomicExch(LUDA_ULL(p), (unsigned long long)__double_as_longlong(v))); }
LUDA_INLINE int luda_atomic_cas(int* p, int c, int v) { return atomicCAS(p, c, v); }
LUDA_INLINE unsigned luda_atomic_cas(unsigned* p, unsigned c, unsigned v) { return atomicCAS(p, c, v); }
LUDA_INLINE unsigned long long luda_atomic_cas(unsigned long long* p, unsigned long long c, unsigned long long v) { return atomicCAS(p, c, v); }
LUDA_INLINE long long luda_atomic_cas(long long* p, long long c, long long v) { return (long long)atomicCAS(LUDA_ULL(p), (unsigned long long)c, (unsigned long long)v); }
LUDA_INLINE float luda_atomic_cas(float* p, float c, float v) { return __int_as_float(atomicCAS((int*)p, __float_as_int(c), __float_as_int(v))); }
LUDA_INLINE double luda_atomic_cas(double* p, double c, double v) { return __longlong_as_double((long long)atomicCAS(LUDA_ULL(p), (unsigned long long)__double_as_longlong(c), (unsigned long long)__double_as_longlong(v))); }
#define LUDA_ATOMIC_BITS(name, fn) LUDA_ATOMIC_NATIVE(name, fn, int) LUDA_ATOMIC_NATIVE(name, fn, unsigned) LUDA_ATOMIC_NATIVE(name, fn, unsigned long long) LUDA_ATOMIC_VIA_ULL(name, fn)
LUDA_ATOMIC_BITS(luda_atomic_and, atomicAnd) LUDA_ATOMIC_BITS(luda_atomic_or, atomicOr) LUDA_ATOMIC_BITS(luda_atomic_xor, atomicXor)
// inc/dec as numba.cuda: inc stores (old >= v) ? 0 : old + 1; dec stores (old == 0 || old > v) ? v : old - 1.
LUDA_INLINE unsigned luda_atomic_inc(unsigned* p, unsigned v) { return atomicInc(p, v); }
LUDA_INLINE unsigned luda_atomic_dec(unsigned* p, unsigned v) { return atomicDec(p, v); }
LUDA_INLINE unsigned long long luda_atomic_inc(unsigned long long* p, unsigned long long v) {
  unsigned long long old = *p, assumed;
  do { assumed = old; old = atomicCAS(p, assumed, assumed >= v ? 0ull : assumed + 1); } while (old != assumed);
  return old;
}
LUDA_INLINE unsigned long long luda_atomic_dec(unsigned long long* p, unsigned long long v) {
  unsigned long long old = *p, assumed;
  do { assumed = old; old = atomicCAS(p, assumed, (assumed == 0 || assumed > v) ? v : assumed - 1); } while (old != assumed);
  return old;
}
)prelude";

constexpr std::string_view kTail = R"prelude(#line 1 "luda_generated"
)prelude";

}  // namespace

std::string prelude_with(std::string_view bounds_fail, std::string_view lane_and_shared) {
  std::string out;
  out.reserve(kHead.size() + bounds_fail.size() + kCommonArithmetic.size() + lane_and_shared.size() +
              kCommonAtomics.size() + kTail.size() + 160);
  out += kHead;
  out += "// Run-time errors (an index out of range, a 'for' step of zero): the first thread to\n"
         "// meet one fills the record, then every such thread exits (the host raises the error\n"
         "// after the launch).\n";
  out += bounds_fail;
  out += kCommonArithmetic;
  out += lane_and_shared;
  out += kCommonAtomics;
  out += kTail;
  return out;
}

std::string_view cuda_prelude() {
  static const std::string text = prelude_with(kGpuBoundsFail, kGpuLaneAndShared);
  return text;
}

}  // namespace luda::dsl

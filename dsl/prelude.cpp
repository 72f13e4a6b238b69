#include "dsl/prelude.h"

#include "luda_float16_text.h"  // runtime/float16.h's text (generated)

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

// float16, bfloat16, complex64 and complex128, in NumPy's layouts: a 16-bit float's bits;
// the real part, then the imaginary part. Plain aggregates, so that they live in arrays,
// in __shared__ memory and in unions (the reductions' shuffles). The 16-bit floats compute
// in float32 and round each result back, as NumPy computes them; their conversions are
// runtime/float16.h's (below), which the host's copies use too, so that every device and
// the host round alike.
constexpr std::string_view kDtypes = R"prelude(struct luda_half { unsigned short bits; };
struct luda_bfloat16 { unsigned short bits; };
struct alignas(8) luda_complex64 { float re, im; };
struct alignas(16) luda_complex128 { double re, im; };
template <class T> struct luda_kind { enum { half = 0, complex = 0 }; };
template <> struct luda_kind<luda_half> { enum { half = 1, complex = 0 }; };
template <> struct luda_kind<luda_bfloat16> { enum { half = 1, complex = 0 }; };
template <> struct luda_kind<luda_complex64> { enum { half = 0, complex = 1 }; };
template <> struct luda_kind<luda_complex128> { enum { half = 0, complex = 1 }; };
template <class A, class B> struct luda_same { enum { value = 0 }; };
template <class A> struct luda_same<A, A> { enum { value = 1 }; };
#define LUDA_F16_FN static __device__ __forceinline__
)prelude";

constexpr std::string_view kHalfConversions = R"prelude(#line 1 "luda_prelude_dtypes"
LUDA_INLINE float luda_h2f(luda_half x) { return __uint_as_float(luda_f16_bits_to_f32_bits(x.bits)); }
LUDA_INLINE float luda_h2f(luda_bfloat16 x) { return __uint_as_float(luda_bf16_bits_to_f32_bits(x.bits)); }
// A 16-bit float from a real value: float32 and float64 round once, directly; integers
// and bools go through float64, as the host converts them (runtime/dtype.h).
template <class H, class F> LUDA_INLINE H luda_to_half(F x) {
  H r;
  if constexpr (luda_same<F, float>::value) {
    r.bits = luda_same<H, luda_half>::value ? luda_f32_bits_to_f16_bits(__float_as_uint(x)) : luda_f32_bits_to_bf16_bits(__float_as_uint(x));
  } else {
    const unsigned long long d = (unsigned long long)__double_as_longlong((double)x);
    r.bits = luda_same<H, luda_half>::value ? luda_f64_bits_to_f16_bits(d) : luda_f64_bits_to_bf16_bits(d);
  }
  return r;
}
)prelude";

// The 16-bit floats' arithmetic and order: float32's, each result rounded back (NumPy's);
// -x flips the sign bit, as NumPy's negative does.
constexpr std::string_view kHalfOps = R"prelude(#line 1 "luda_prelude_halves"
#define LUDA_HALF_OPS(H)                                                                   \
  LUDA_INLINE H operator+(H a, H b) { return luda_to_half<H>(luda_h2f(a) + luda_h2f(b)); } \
  LUDA_INLINE H operator-(H a, H b) { return luda_to_half<H>(luda_h2f(a) - luda_h2f(b)); } \
  LUDA_INLINE H operator*(H a, H b) { return luda_to_half<H>(luda_h2f(a) * luda_h2f(b)); } \
  LUDA_INLINE H operator/(H a, H b) { return luda_to_half<H>(luda_h2f(a) / luda_h2f(b)); } \
  LUDA_INLINE H operator-(H a) { a.bits ^= 0x8000u; return a; }                            \
  LUDA_INLINE bool operator==(H a, H b) { return luda_h2f(a) == luda_h2f(b); }             \
  LUDA_INLINE bool operator!=(H a, H b) { return luda_h2f(a) != luda_h2f(b); }             \
  LUDA_INLINE bool operator<(H a, H b) { return luda_h2f(a) < luda_h2f(b); }               \
  LUDA_INLINE bool operator<=(H a, H b) { return luda_h2f(a) <= luda_h2f(b); }             \
  LUDA_INLINE bool operator>(H a, H b) { return luda_h2f(a) > luda_h2f(b); }               \
  LUDA_INLINE bool operator>=(H a, H b) { return luda_h2f(a) >= luda_h2f(b); }             \
  LUDA_INLINE H luda_floordiv(H a, H b) { return luda_to_half<H>(floorf(luda_h2f(a) / luda_h2f(b))); } \
  LUDA_INLINE H luda_mod(H a, H b) { return luda_to_half<H>(luda_mod(luda_h2f(a), luda_h2f(b))); }    \
  LUDA_INLINE H luda_fmod(H a, H b) { return luda_to_half<H>(fmodf(luda_h2f(a), luda_h2f(b))); }       \
  LUDA_INLINE H luda_pow(H a, H b) { return luda_to_half<H>(powf(luda_h2f(a), luda_h2f(b))); }         \
  template <class T> LUDA_INLINE bool luda_for_limit(H limit, int down, T* out) { return luda_for_limit<T>(luda_h2f(limit), down, out); }
LUDA_HALF_OPS(luda_half)
LUDA_HALF_OPS(luda_bfloat16)
// The neighbour of x towards y: one step of the bits (sign and magnitude), as NumPy's
// nextafter of float16.
template <class H> LUDA_INLINE H luda_nextafter_half(H x, H y) {
  const float fx = luda_h2f(x), fy = luda_h2f(y);
  if (luda_is_nan(fx) || luda_is_nan(fy)) return luda_to_half<H>(fx + fy);
  if (fx == fy) return y;
  H r = x;
  if (fx == 0) r.bits = (unsigned short)((fy > 0 ? 0u : 0x8000u) | 1u);
  else if ((fx < fy) == (fx > 0)) ++r.bits;
  else --r.bits;
  return r;
}
LUDA_INLINE luda_half luda_nextafter(luda_half x, luda_half y) { return luda_nextafter_half(x, y); }
LUDA_INLINE luda_bfloat16 luda_nextafter(luda_bfloat16 x, luda_bfloat16 y) { return luda_nextafter_half(x, y); }
LUDA_INLINE float luda_nextafter(float x, float y) { return nextafterf(x, y); }
LUDA_INLINE double luda_nextafter(double x, double y) { return nextafter(x, y); }
// An element read through a volatile pointer (the reductions' partials, written by other
// blocks): the new dtypes' structs field by field (C++ copies no volatile struct).
template <class T> LUDA_INLINE T luda_volatile_load(const volatile T* p) {
  if constexpr (luda_kind<T>::complex) {
    T r;
    r.re = p->re;
    r.im = p->im;
    return r;
  } else if constexpr (luda_kind<T>::half) {
    T r;
    r.bits = p->bits;
    return r;
  } else {
    return *p;
  }
}
LUDA_INLINE float luda_pow(float a, float b) { return powf(a, b); }
LUDA_INLINE double luda_pow(double a, double b) { return pow(a, b); }
)prelude";

// Complex arithmetic, order and functions. The operators compute as NumPy's loops do:
// products by the schoolbook formula, quotients by Smith's algorithm (a zero divisor gives
// inf or NaN), order by the real parts and then the imaginary ones (NumPy 2's; a NaN part
// orders with nothing). The functions follow C99's branch cuts (Kahan's formulas, as
// CPython's cmath writes them); complex64's compute in double and round, so that they are
// as accurate as NumPy's complex64 (glibc's, in extended precision).
constexpr std::string_view kComplex = R"prelude(#line 1 "luda_prelude_complex"
template <class C> struct luda_cpart;
template <> struct luda_cpart<luda_complex64> { typedef float type; };
template <> struct luda_cpart<luda_complex128> { typedef double type; };
template <class C> LUDA_INLINE C luda_cmake(typename luda_cpart<C>::type re, typename luda_cpart<C>::type im) { C r; r.re = re; r.im = im; return r; }
LUDA_INLINE luda_complex128 luda_c128(double re, double im) { luda_complex128 r; r.re = re; r.im = im; return r; }
LUDA_INLINE float luda_m_abs(float x) { return fabsf(x); }
LUDA_INLINE double luda_m_abs(double x) { return fabs(x); }
LUDA_INLINE bool luda_is_inf(float x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }
LUDA_INLINE bool luda_is_inf(double x) { return ((unsigned long long)__double_as_longlong(x) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }
#define LUDA_COMPLEX_OPS(C, T)                                                                                  \
  LUDA_INLINE C operator+(C a, C b) { return luda_cmake<C>(a.re + b.re, a.im + b.im); }                       \
  LUDA_INLINE C operator-(C a, C b) { return luda_cmake<C>(a.re - b.re, a.im - b.im); }                       \
  LUDA_INLINE C operator*(C a, C b) { return luda_cmake<C>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); } \
  LUDA_INLINE C operator/(C a, C b) {                                                                         \
    const T br = luda_m_abs(b.re), bi = luda_m_abs(b.im);                                                      \
    if (br >= bi) {                                                                                            \
      if (br == 0 && bi == 0) return luda_cmake<C>(a.re / br, a.im / br);                                      \
      const T rat = b.im / b.re, scl = (T)1 / (b.re + b.im * rat);                                             \
      return luda_cmake<C>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);                              \
    }                                                                                                          \
    const T rat = b.re / b.im, scl = (T)1 / (b.im + b.re * rat);                                               \
    return luda_cmake<C>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);                                \
  }                                                                                                            \
  LUDA_INLINE C operator-(C a) { return luda_cmake<C>(-a.re, -a.im); }                                        \
  LUDA_INLINE bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; }                               \
  LUDA_INLINE bool operator!=(C a, C b) { return !(a == b); }                                                  \
  LUDA_INLINE bool luda_ordered(C a, C b) { return !luda_is_nan(a.im) && !luda_is_nan(b.im); }                 \
  LUDA_INLINE bool operator<(C a, C b) { return (a.re < b.re && luda_ordered(a, b)) || (a.re == b.re && a.im < b.im); }   \
  LUDA_INLINE bool operator<=(C a, C b) { return (a.re < b.re && luda_ordered(a, b)) || (a.re == b.re && a.im <= b.im); } \
  LUDA_INLINE bool operator>(C a, C b) { return (a.re > b.re && luda_ordered(a, b)) || (a.re == b.re && a.im > b.im); }   \
  LUDA_INLINE bool operator>=(C a, C b) { return (a.re > b.re && luda_ordered(a, b)) || (a.re == b.re && a.im >= b.im); } \
  LUDA_INLINE T luda_cabs(C z) { return luda_m_hypot(z.re, z.im); }                                          \
  LUDA_INLINE T luda_carg(C z) { return luda_m_atan2(z.im, z.re); }                                          \
  LUDA_INLINE C luda_cconj(C z) { return luda_cmake<C>(z.re, -z.im); }                                        \
  LUDA_INLINE bool luda_cisnan(C z) { return luda_is_nan(z.re) || luda_is_nan(z.im); }                        \
  LUDA_INLINE bool luda_cisinf(C z) { return luda_is_inf(z.re) || luda_is_inf(z.im); }                        \
  LUDA_INLINE bool luda_cisfinite(C z) { return !luda_cisnan(z) && !luda_cisinf(z); }
LUDA_INLINE float luda_m_hypot(float x, float y) { return hypotf(x, y); }
LUDA_INLINE double luda_m_hypot(double x, double y) { return hypot(x, y); }
LUDA_INLINE float luda_m_atan2(float y, float x) { return atan2f(y, x); }
LUDA_INLINE double luda_m_atan2(double y, double x) { return atan2(y, x); }
LUDA_COMPLEX_OPS(luda_complex64, float)
LUDA_COMPLEX_OPS(luda_complex128, double)

// The functions, on complex128.
#define LUDA_LN2 0.6931471805599453
#define LUDA_LARGE 4.49423283715579e307        // DBL_MAX / 4: past it, |z| is scaled
#define LUDA_SQRT_LARGE 6.703903964971299e153
LUDA_INLINE double luda_inf() { return __longlong_as_double(0x7ff0000000000000LL); }
LUDA_INLINE luda_complex128 luda_csqrt(luda_complex128 z) {
  double a = z.re, b = z.im;
  if (a == 0 && b == 0) return luda_c128(0.0, b);
  if (luda_is_inf(b)) return luda_c128(luda_inf(), b);
  if (luda_is_nan(a)) return luda_c128(a, a);
  if (luda_is_inf(a)) return a < 0 ? luda_c128(fabs(b - b), copysign(a, b)) : luda_c128(a, copysign(b - b, b));
  if (luda_is_nan(b)) return luda_c128(b, b);
  double scale = 1;
  if (fabs(a) >= LUDA_LARGE || fabs(b) >= LUDA_LARGE) { a *= 0.25; b *= 0.25; scale = 2; }
  if (a >= 0) {
    const double t = sqrt((a + hypot(a, b)) * 0.5);
    return luda_c128(scale * t, scale * (b / (2 * t)));
  }
  const double t = sqrt((-a + hypot(a, b)) * 0.5);
  return luda_c128(scale * (fabs(b) / (2 * t)), scale * copysign(t, b));
}
LUDA_INLINE luda_complex128 luda_cexp(luda_complex128 z) {
  const double a = z.re, b = z.im;
  if (b == 0) return luda_c128(exp(a), b);
  if (luda_is_inf(b) || luda_is_nan(b)) {
    if (luda_is_inf(a) && a < 0) return luda_c128(0.0, 0.0);
    if (luda_is_inf(a)) return luda_c128(a, b - b);
  }
  if (a > 700) {  // e^a overflows where e^a cos b may not
    const double h = exp(0.5 * a);
    return luda_c128(h * cos(b) * h, h * sin(b) * h);
  }
  const double e = exp(a);
  return luda_c128(e * cos(b), e * sin(b));
}
LUDA_INLINE luda_complex128 luda_clog(luda_complex128 z) {
  const double ax = fabs(z.re), ay = fabs(z.im);
  double re;
  if (ax > LUDA_LARGE || ay > LUDA_LARGE) {
    re = log(hypot(ax * 0.5, ay * 0.5)) + LUDA_LN2;
  } else if (ax < 2.2250738585072014e-308 && ay < 2.2250738585072014e-308) {
    re = ax > 0 || ay > 0 ? log(hypot(ax * 9007199254740992.0, ay * 9007199254740992.0)) - 53 * LUDA_LN2 : -luda_inf();
  } else {
    const double h = hypot(ax, ay);
    if (0.71 <= h && h <= 1.73) {  // log1p near |z| = 1, where log(h) would lose the small result
      const double am = ax > ay ? ax : ay, an = ax > ay ? ay : ax;
      re = log1p((am - 1) * (am + 1) + an * an) / 2;
    } else {
      re = log(h);
    }
  }
  return luda_c128(re, atan2(z.im, z.re));
}
LUDA_INLINE luda_complex128 luda_clog10(luda_complex128 z) { luda_complex128 r = luda_clog(z); return luda_c128(r.re * 0.4342944819032518, r.im * 0.4342944819032518); }
LUDA_INLINE luda_complex128 luda_clog2(luda_complex128 z) { luda_complex128 r = luda_clog(z); return luda_c128(r.re * 1.4426950408889634, r.im * 1.4426950408889634); }
LUDA_INLINE luda_complex128 luda_cexp2(luda_complex128 z) { return luda_cexp(luda_c128(z.re * LUDA_LN2, z.im * LUDA_LN2)); }
// NumPy's expm1 and log1p of a complex (nc_expm1, nc_log1p).
LUDA_INLINE luda_complex128 luda_cexpm1(luda_complex128 z) {
  const double s = sin(z.im / 2);
  return luda_c128(expm1(z.re) * cos(z.im) - 2 * s * s, exp(z.re) * sin(z.im));
}
LUDA_INLINE luda_complex128 luda_clog1p(luda_complex128 z) { return luda_c128(log(hypot(z.re + 1, z.im)), atan2(z.im, z.re + 1)); }
LUDA_INLINE luda_complex128 luda_csinh(luda_complex128 z) {
  if (z.im == 0) return luda_c128(sinh(z.re), z.im);
  return luda_c128(sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im));
}
LUDA_INLINE luda_complex128 luda_ccosh(luda_complex128 z) {
  if (z.im == 0) return luda_c128(cosh(z.re), copysign(0.0, z.re) * z.im);
  return luda_c128(cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im));
}
LUDA_INLINE luda_complex128 luda_csin(luda_complex128 z) { luda_complex128 s = luda_csinh(luda_c128(-z.im, z.re)); return luda_c128(s.im, -s.re); }
LUDA_INLINE luda_complex128 luda_ccos(luda_complex128 z) { return luda_ccosh(luda_c128(-z.im, z.re)); }
// Kahan's tanh (as FreeBSD's ctanh): no overflow in sinh and cosh for large |re|.
LUDA_INLINE luda_complex128 luda_ctanh(luda_complex128 z) {
  const double x = z.re, y = z.im;
  if (luda_is_nan(x)) return luda_c128(x, y == 0 ? y : x * y);
  if (luda_is_inf(x)) return luda_c128(copysign(1.0, x), copysign(0.0, luda_is_inf(y) ? y : sin(y) * cos(y)));
  if (luda_is_inf(y) || luda_is_nan(y)) return luda_c128(y - y, y - y);
  if (fabs(x) >= 22) {
    const double e = exp(-fabs(x));
    return luda_c128(copysign(1.0, x), 4 * sin(y) * cos(y) * e * e);
  }
  const double t = tan(y), beta = 1 + t * t, s = sinh(x), rho = sqrt(1 + s * s), denom = 1 + beta * s * s;
  return luda_c128(beta * rho * s / denom, t / denom);
}
LUDA_INLINE luda_complex128 luda_ctan(luda_complex128 z) { luda_complex128 t = luda_ctanh(luda_c128(-z.im, z.re)); return luda_c128(t.im, -t.re); }
LUDA_INLINE luda_complex128 luda_casinh(luda_complex128 z) {
  if (fabs(z.re) > LUDA_LARGE || fabs(z.im) > LUDA_LARGE) {
    const double l = log(hypot(z.re / 2, z.im / 2)) + 2 * LUDA_LN2;
    return luda_c128(z.im >= 0 ? copysign(l, z.re) : -copysign(l, -z.re), atan2(z.im, fabs(z.re)));
  }
  const luda_complex128 s1 = luda_csqrt(luda_c128(1 + z.im, -z.re)), s2 = luda_csqrt(luda_c128(1 - z.im, z.re));
  return luda_c128(asinh(s1.re * s2.im - s2.re * s1.im), atan2(z.im, s1.re * s2.re - s1.im * s2.im));
}
LUDA_INLINE luda_complex128 luda_casin(luda_complex128 z) { luda_complex128 s = luda_casinh(luda_c128(-z.im, z.re)); return luda_c128(s.im, -s.re); }
LUDA_INLINE luda_complex128 luda_cacos(luda_complex128 z) {
  if (fabs(z.re) > LUDA_LARGE || fabs(z.im) > LUDA_LARGE) {
    const double l = log(hypot(z.re / 2, z.im / 2)) + 2 * LUDA_LN2;
    return luda_c128(atan2(fabs(z.im), z.re), z.re < 0 ? -copysign(l, z.im) : copysign(l, -z.im));
  }
  const luda_complex128 s1 = luda_csqrt(luda_c128(1 - z.re, -z.im)), s2 = luda_csqrt(luda_c128(1 + z.re, z.im));
  return luda_c128(2 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}
LUDA_INLINE luda_complex128 luda_cacosh(luda_complex128 z) {
  if (fabs(z.re) > LUDA_LARGE || fabs(z.im) > LUDA_LARGE)
    return luda_c128(log(hypot(z.re / 2, z.im / 2)) + 2 * LUDA_LN2, atan2(z.im, z.re));
  const luda_complex128 s1 = luda_csqrt(luda_c128(z.re - 1, z.im)), s2 = luda_csqrt(luda_c128(z.re + 1, z.im));
  return luda_c128(asinh(s1.re * s2.re + s1.im * s2.im), 2 * atan2(s1.im, s2.re));
}
// atanh(-z) = -atanh(z): computed for Re z >= 0.
LUDA_INLINE luda_complex128 luda_catanh_right(luda_complex128 z) {
  const double ay = fabs(z.im);
  if (z.re > LUDA_SQRT_LARGE || ay > LUDA_SQRT_LARGE) {
    const double h = hypot(z.re / 2, z.im / 2);
    return luda_c128(z.re / 4 / h / h, -copysign(1.5707963267948966, -z.im));
  }
  if (z.re == 1 && ay < 1.4916681462400413e-154) {
    if (ay == 0) return luda_c128(luda_inf(), z.im);
    return luda_c128(-log(sqrt(ay) / sqrt(hypot(ay, 2.0))), copysign(atan2(2.0, -ay) / 2, z.im));
  }
  return luda_c128(log1p(4 * z.re / ((1 - z.re) * (1 - z.re) + ay * ay)) / 4,
                   -atan2(-2 * z.im, (1 - z.re) * (1 + z.re) - ay * ay) / 2);
}
LUDA_INLINE luda_complex128 luda_catanh(luda_complex128 z) {
  if (!(z.re < 0)) return luda_catanh_right(z);
  const luda_complex128 r = luda_catanh_right(luda_c128(-z.re, -z.im));
  return luda_c128(-r.re, -r.im);
}
LUDA_INLINE luda_complex128 luda_catan(luda_complex128 z) { luda_complex128 s = luda_catanh(luda_c128(-z.im, z.re)); return luda_c128(s.im, -s.re); }
// complex64's: computed in complex128, rounded.
#define LUDA_C64_VIA_C128(f) \
  LUDA_INLINE luda_complex64 f(luda_complex64 z) { return luda_cvt<luda_complex64>(f(luda_cvt<luda_complex128>(z))); }
LUDA_C64_VIA_C128(luda_csqrt) LUDA_C64_VIA_C128(luda_cexp) LUDA_C64_VIA_C128(luda_clog) LUDA_C64_VIA_C128(luda_clog10)
LUDA_C64_VIA_C128(luda_clog2) LUDA_C64_VIA_C128(luda_cexp2) LUDA_C64_VIA_C128(luda_cexpm1) LUDA_C64_VIA_C128(luda_clog1p)
LUDA_C64_VIA_C128(luda_csinh) LUDA_C64_VIA_C128(luda_ccosh) LUDA_C64_VIA_C128(luda_ctanh) LUDA_C64_VIA_C128(luda_csin)
LUDA_C64_VIA_C128(luda_ccos) LUDA_C64_VIA_C128(luda_ctan) LUDA_C64_VIA_C128(luda_casinh) LUDA_C64_VIA_C128(luda_casin)
LUDA_C64_VIA_C128(luda_cacos) LUDA_C64_VIA_C128(luda_cacosh) LUDA_C64_VIA_C128(luda_catanh) LUDA_C64_VIA_C128(luda_catan)
// a ^ b, as NumPy's power: 1 for b = 0; 0 for a = 0 and a real b > 0 (else NaN); an
// integer b of magnitude below 100 by repeated products in a's precision; else
// exp(b log a) (C's cpow), complex64's in complex128.
template <class C> LUDA_INLINE C luda_pow(C a, C b) {
  typedef typename luda_cpart<C>::type T;
  if (b.re == 0 && b.im == 0) return luda_cmake<C>((T)1, (T)0);
  if (a.re == 0 && a.im == 0) {
    if (b.re > 0 && b.im == 0) return luda_cmake<C>((T)0, (T)0);
    const T nan = (T)__longlong_as_double(0x7ff8000000000000LL);
    return luda_cmake<C>(nan, nan);
  }
  if (b.im == 0 && b.re > -100 && b.re < 100 && (T)(long long)b.re == b.re) {
    long long n = (long long)b.re;
    if (n == 1) return a;
    if (n == 2) return a * a;
    if (n == 3) return a * (a * a);
    C r = luda_cmake<C>((T)1, (T)0), p = a;
    for (long long m = n < 0 ? -n : n;; p = p * p) {
      if (m & 1) r = r * p;
      m >>= 1;
      if (m == 0) break;
    }
    return n < 0 ? luda_cmake<C>((T)1, (T)0) / r : r;
  }
  const luda_complex128 a2 = luda_cvt<luda_complex128>(a), b2 = luda_cvt<luda_complex128>(b);
  return luda_cvt<C>(luda_cexp(b2 * luda_clog(a2)));
}
)prelude";

constexpr std::string_view kGpuBoundsFail =
    R"prelude(static __device__ __noinline__ void luda_fail(luda_BoundsRecord* r, int what, int line, int axis, long long index, long long extent) {
  if (atomicCAS(&r->hit, 0, what) == 0) {
    r->line = line; r->axis = axis; r->index = index; r->extent = extent;
    __threadfence();
  }
  asm volatile("exit;");
}
)prelude";

// ORDER RECORD: what = 1 an index out of range, 2 a 'for' step of zero, 3 an index into
// a.shape out of range, 4 an index from a float with no integer representation
// (dsl/compile.h).
constexpr std::string_view kCommonArithmetic =
    R"prelude(LUDA_INLINE long long luda_check(long long i, long long n, luda_BoundsRecord* r, int line, int axis) {
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
// An index converted from a float, with bounds checks: NaN, an infinity or a value beyond
// int64 stops the kernel (Lua: "number has no integer representation") instead of
// saturating to an index that may exist.
template <class T, class F> LUDA_INLINE T luda_ftoi_at(luda_BoundsRecord* r, int line, F x) {
  const double v = (double)x;
  if (luda_is_nan(v) || !(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    luda_fail(r, 4, line, 0, __double_as_longlong(v), 0);
  return luda_ftoi<T>(x);
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
// The new dtypes: a complex to a real keeps its real part (NumPy's astype), to bool it
// is true when either part is not 0; a real to a complex has 0 for its imaginary part; a
// 16-bit float converts as its float32 value does, and to it as luda_to_half rounds.
template <class T, class F> LUDA_INLINE T luda_cvt(F x) {
  if constexpr (luda_same<T, F>::value) {
    return x;
  } else if constexpr (luda_kind<F>::complex) {
    if constexpr (luda_kind<T>::complex) {
      T r;
      r.re = (decltype(r.re))x.re;
      r.im = (decltype(r.im))x.im;
      return r;
    } else if constexpr (luda_same<T, bool>::value) {
      return luda_ftob(x.re) || luda_ftob(x.im);
    } else {
      return luda_cvt<T>(x.re);
    }
  } else if constexpr (luda_kind<T>::complex) {
    T r;
    r.re = luda_cvt<decltype(r.re)>(x);
    r.im = 0;
    return r;
  } else if constexpr (luda_kind<F>::half) {
    return luda_cvt<T>(luda_h2f(x));
  } else if constexpr (luda_kind<T>::half) {
    return luda_to_half<T>(x);
  } else {
    return luda_convert<T, F>::run(x);
  }
}
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

// cuda.random: numba.cuda.random's xoroshiro128+ generators (Blackman and Vigna), the two
// state words of one generator at a and b. Uniform draws are exact integer arithmetic and
// one exact scaling, the same bits on every target; float32 takes the top 24 bits, so that
// it stays below 1. Normals are Box-Muller of (1 - u1, u2), so that log never sees 0.
LUDA_INLINE unsigned long long luda_xoro_next(unsigned long long* a, unsigned long long* b) {
  const unsigned long long s0 = *a, s1 = *b ^ s0, result = s0 + *b;
  *a = ((s0 << 55) | (s0 >> 9)) ^ s1 ^ (s1 << 14);
  *b = (s1 << 36) | (s1 >> 28);
  return result;
}
LUDA_INLINE double luda_xoro_uniform_f64(unsigned long long* a, unsigned long long* b) {
  return (double)(luda_xoro_next(a, b) >> 11) * (1.0 / 9007199254740992.0);
}
LUDA_INLINE float luda_xoro_uniform_f32(unsigned long long* a, unsigned long long* b) {
  return (float)(luda_xoro_next(a, b) >> 40) * (1.0f / 16777216.0f);
}
LUDA_INLINE double luda_xoro_normal_f64(unsigned long long* a, unsigned long long* b) {
  const double u1 = 1.0 - luda_xoro_uniform_f64(a, b), u2 = luda_xoro_uniform_f64(a, b);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
LUDA_INLINE float luda_xoro_normal_f32(unsigned long long* a, unsigned long long* b) {
  const float u1 = 1.0f - luda_xoro_uniform_f32(a, b), u2 = luda_xoro_uniform_f32(a, b);
  return sqrtf(-2.0f * logf(u1)) * cosf(6.2831855f * u2);
}
// The lanes of this thread's warp that exist: all 32, but in a block whose size is not a
// multiple of 32 its last warp has fewer. The warp functions that compare lanes (match_any,
// match_all) look at these alone, whatever the mask names, as a GPU's hardware does.
LUDA_INLINE unsigned luda_warp_lanes() {
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned rest = threads - (linear & ~31u);
  return rest >= 32u ? 0xffffffffu : (1u << rest) - 1u;
}
template <class T> LUDA_INLINE unsigned luda_match_any(unsigned mask, T value) {
  return __match_any_sync(mask & luda_warp_lanes(), value);
}
// cuda.match_all_sync's two values, as numba.cuda gives them: (mask, true) when every lane
// of mask (that exists) holds the same bits, else (0, false).
struct luda_match_all_result { unsigned v0; bool v1; };
template <class T> LUDA_INLINE luda_match_all_result luda_match_all(unsigned mask, T value) {
  int pred = 0;
  unsigned same = __match_all_sync(mask & luda_warp_lanes(), value, &pred);
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

constexpr std::string_view kGpuLaneAndShared =
    R"prelude(LUDA_INLINE int luda_laneid() { unsigned r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); return (int)r; }
LUDA_INLINE long long luda_dynamic_shared_bytes() { unsigned r; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r)); return r; }
LUDA_INLINE unsigned luda_lanemask_lt() { unsigned r; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r)); return r; }
extern __shared__ __align__(16) unsigned char luda_dynamic_shared[];

)prelude";

constexpr std::string_view kCommonAtomics =
    R"prelude(// Atomics, each returning the old value, for int32, uint32, int64, uint64, float32 and
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
  out.reserve(kHead.size() + kDtypes.size() + detail::kFloat16Text.size() + kHalfConversions.size() +
              bounds_fail.size() + kCommonArithmetic.size() + kHalfOps.size() + kComplex.size() +
              lane_and_shared.size() + kCommonAtomics.size() + kTail.size() + 240);
  out += kHead;
  out += kDtypes;
  out += "#line 1 \"luda_float16.h\"\n";
  out += detail::kFloat16Text;
  if (out.back() != '\n') out += '\n';
  out += kHalfConversions;
  out += "#line 1 \"luda_prelude_arithmetic\"\n"
         "// Run-time errors (an index out of range, a 'for' step of zero): the first thread to\n"
         "// meet one fills the record, then every such thread exits (the host raises the error\n"
         "// after the launch).\n";
  out += bounds_fail;
  out += kCommonArithmetic;
  out += kHalfOps;
  out += kComplex;
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

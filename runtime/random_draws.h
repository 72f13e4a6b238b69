// luda.random's distributions, drawn from Philox4x32-10 (runtime/philox.h) one element at
// a time: each element of a draw owns a sub-stream, the Philox blocks of the counter
// (element, j) for j = 0, 1, 2, ..., so an element's value depends on the key and its
// position only, and a rejection loop takes as many blocks as it needs.
//
// One text, two users, as runtime/philox.h (which must come first): generated kernels
// embed it (ops/random.cpp) and host tests compile it. Every value is a function of
// integer arithmetic and IEEE 754 operations that round correctly (+ - * / sqrt, floor,
// conversions), with no contraction into fused multiply-adds (the kernels are compiled
// with --fmad=false, and -ffp-contract=off on the host): each device computes the same
// bits. The one transcendental function the distributions need, the logarithm, is
// luda_rng_log below (fdlibm's algorithm, from the same operations), not the device's.
// LUDA_RNG_FN qualifies each function (a kernel: `static __device__ __forceinline__`).
#ifndef LUDA_RANDOM_DRAWS_H
#define LUDA_RANDOM_DRAWS_H

#ifndef LUDA_RNG_FN
#define LUDA_RNG_FN static inline
#endif

// One element's sub-stream: its counter's low half `element`, the next block `block`
// (the counter's high half), and the second 64-bit word of the last block, not used yet.
struct luda_rng_stream {
  unsigned int k0, k1;
  unsigned long long element, block, spare;
  int has_spare;
};

LUDA_RNG_FN luda_rng_stream luda_rng_substream(unsigned long long key, unsigned long long element) {
  luda_rng_stream s;
  s.k0 = (unsigned int)key;
  s.k1 = (unsigned int)(key >> 32);
  s.element = element;
  s.block = 0;
  s.spare = 0;
  s.has_spare = 0;
  return s;
}

// The sub-stream's 64-bit words in order: block j's words v0 | v1 << 32, then v2 | v3 << 32.
LUDA_RNG_FN unsigned long long luda_rng_next64(luda_rng_stream* s) {
  if (s->has_spare) {
    s->has_spare = 0;
    return s->spare;
  }
  luda_philox4x32 c;
  c.v[0] = (unsigned int)s->element;
  c.v[1] = (unsigned int)(s->element >> 32);
  c.v[2] = (unsigned int)s->block;
  c.v[3] = (unsigned int)(s->block >> 32);
  s->block += 1;
  c = luda_philox4x32_10(c, s->k0, s->k1);
  s->spare = ((unsigned long long)c.v[3] << 32) | c.v[2];
  s->has_spare = 1;
  return ((unsigned long long)c.v[1] << 32) | c.v[0];
}

// Uniform in [0, 1): the next word's top 53 bits times 2^-53 (NumPy's next_double).
LUDA_RNG_FN double luda_rng_double(luda_rng_stream* s) {
  return (double)(luda_rng_next64(s) >> 11) * 1.1102230246251565404236316680908203125e-16;
}
// Uniform in [0, 1) as float32: the next word's top 24 bits times 2^-24 (NumPy's next_float).
LUDA_RNG_FN float luda_rng_float(luda_rng_stream* s) {
  return (float)(luda_rng_next64(s) >> 40) * 5.9604644775390625e-08f;
}

// The natural logarithm for x >= 0 (0 gives -infinity), within one ulp: fdlibm's e_log.c
// (Sun Microsystems, 1993): x = 2^k m with m in [sqrt(2)/2, sqrt(2)), f = m - 1,
// log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with s = f / (2 + f). The scaling by powers
// of two is exact, so no bit casts are needed.
LUDA_RNG_FN double luda_rng_log(double x) {
  if (!(x > 0.0)) {
    double big = 1e300;
    return x == 0.0 ? -(big * big) : (x - x) / (x - x);
  }
  if (x > 1.7976931348623157e308) return x;  // infinity
  int k = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: scale by 2^64 first
    x *= 18446744073709551616.0;
    k -= 64;
  }
  while (x >= 4294967296.0) {
    x *= 2.3283064365386962890625e-10;
    k += 32;
  }
  while (x < 2.3283064365386962890625e-10) {
    x *= 4294967296.0;
    k -= 32;
  }
  while (x >= 1.4142135623730951) {
    x *= 0.5;
    k += 1;
  }
  while (x < 0.70710678118654757) {
    x *= 2.0;
    k -= 1;
  }
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01, Lg3 = 2.857142874366239149e-01,
               Lg4 = 2.222219843214978396e-01, Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
               Lg7 = 1.479819860511658591e-01;
  const double f = x - 1.0;
  const double s = f / (2.0 + f);
  const double dk = (double)k;
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  const double hfsq = 0.5 * f * f;
  return dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
}

// log(k!) for an integral k >= 0: a table below 16, else Stirling's series for
// log Gamma(k + 1) to the x^-7 term (relative error below 1e-16 there).
LUDA_RNG_FN double luda_rng_logfact(double k) {
  const double table[16] = {0.0,
                            0.0,
                            0.69314718055994530942,
                            1.7917594692280550008,
                            3.1780538303479456196,
                            4.7874917427820459943,
                            6.5792512120101009951,
                            8.5251613610654143002,
                            10.604602902745250228,
                            12.801827480081469611,
                            15.104412573075515295,
                            17.502307845873885839,
                            19.987214495661886150,
                            22.552163853123422886,
                            25.191221182738681500,
                            27.899271383840891566};
  if (k < 16.0) return table[(int)k];
  const double x = k + 1.0;
  const double r = 1.0 / x;
  const double r2 = r * r;
  const double series = r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (1.0 / 1680.0))));
  return (x - 0.5) * luda_rng_log(x) - x + 0.91893853320467274178 + series;
}

// Standard normal: Marsaglia's polar method (NumPy's legacy gauss), one value per element.
LUDA_RNG_FN double luda_rng_normal(luda_rng_stream* s) {
  double u, v, r2;
  do {
    u = 2.0 * luda_rng_double(s) - 1.0;
    v = 2.0 * luda_rng_double(s) - 1.0;
    r2 = u * u + v * v;
  } while (r2 >= 1.0 || r2 == 0.0);
  return v * sqrt(-2.0 * luda_rng_log(r2) / r2);
}

// Standard exponential: -log(1 - U), U in [0, 1) (1 - U is exact).
LUDA_RNG_FN double luda_rng_exponential(luda_rng_stream* s) { return -luda_rng_log(1.0 - luda_rng_double(s)); }

// The 128-bit product of a and b: its high word, and its low word in *lo.
LUDA_RNG_FN unsigned long long luda_rng_mul128(unsigned long long a, unsigned long long b, unsigned long long* lo) {
  const unsigned long long a0 = a & 0xffffffffull, a1 = a >> 32, b0 = b & 0xffffffffull, b1 = b >> 32;
  const unsigned long long p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const unsigned long long mid = (p00 >> 32) + (p01 & 0xffffffffull) + (p10 & 0xffffffffull);
  *lo = (mid << 32) | (p00 & 0xffffffffull);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

// Uniform on the integers [0, range]: Lemire's multiply-and-reject method (NumPy's
// bounded_lemire_uint64), unbiased.
LUDA_RNG_FN unsigned long long luda_rng_bounded(luda_rng_stream* s, unsigned long long range) {
  if (range == 0) return 0;
  if (range == 0xffffffffffffffffull) return luda_rng_next64(s);
  const unsigned long long m = range + 1;
  unsigned long long lo;
  unsigned long long hi = luda_rng_mul128(luda_rng_next64(s), m, &lo);
  if (lo < m) {
    const unsigned long long threshold = (0 - m) % m;
    while (lo < threshold) hi = luda_rng_mul128(luda_rng_next64(s), m, &lo);
  }
  return hi;
}

// Poisson for lam < 10: the product of uniforms against enlam = exp(-lam) (NumPy's
// random_poisson_mult).
LUDA_RNG_FN long long luda_rng_poisson_mult(luda_rng_stream* s, double enlam) {
  long long x = 0;
  double prod = 1.0;
  for (;;) {
    prod *= luda_rng_double(s);
    if (prod > enlam) x += 1;
    else return x;
  }
}

// Poisson for lam >= 10: Hoermann's PTRS (transformed rejection with squeeze, 1993), as
// NumPy's random_poisson_ptrs; the constants that depend on lam alone come computed.
LUDA_RNG_FN long long luda_rng_poisson_ptrs(luda_rng_stream* s, double lam, double loglam, double a, double b,
                                            double vr, double log_invalpha) {
  for (;;) {
    const double u = luda_rng_double(s) - 0.5;
    const double v = luda_rng_double(s);
    const double us = 0.5 - (u < 0 ? -u : u);
    const double k = floor((2.0 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return (long long)k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (luda_rng_log(v) + log_invalpha - luda_rng_log(a / (us * us) + b) <= -lam + k * loglam - luda_rng_logfact(k))
      return (long long)k;
  }
}

// Binomial(n, p) for n p <= 30, p <= 1/2: inversion (NumPy's random_binomial_inversion);
// qn = q^n, bound = min(n, n p + 10 sqrt(n p q + 1)) come computed.
LUDA_RNG_FN long long luda_rng_binomial_inversion(luda_rng_stream* s, long long n, double p, double q, double qn,
                                                  double bound) {
  long long x = 0;
  double px = qn;
  double u = luda_rng_double(s);
  while (u > px) {
    x += 1;
    if ((double)x > bound) {
      x = 0;
      px = qn;
      u = luda_rng_double(s);
    } else {
      u -= px;
      px = ((double)(n - x + 1) * p * px) / ((double)x * q);
    }
  }
  return x;
}

// Binomial(n, p) for n p > 30, p <= 1/2: Hoermann's BTRS (transformed rejection with
// squeeze, "The generation of binomial random variates", 1993). c[] holds what depends on
// n and p alone: b, a, c, alpha, vr, m, log(p / q), h = log(m!) + log((n - m)!).
LUDA_RNG_FN long long luda_rng_binomial_btrs(luda_rng_stream* s, double n, const double* c) {
  const double b = c[0], a = c[1], cc = c[2], alpha = c[3], vr = c[4], m = c[5], lpq = c[6], h = c[7];
  for (;;) {
    const double u = luda_rng_double(s) - 0.5;
    const double v = luda_rng_double(s);
    const double us = 0.5 - (u < 0 ? -u : u);
    const double k = floor((2.0 * a / us + b) * u + cc);
    if (k < 0 || k > n) continue;
    if (us >= 0.07 && v <= vr) return (long long)k;
    const double lv = luda_rng_log(v * alpha / (a / (us * us) + b));
    if (lv <= h - luda_rng_logfact(k) - luda_rng_logfact(n - k) + (k - m) * lpq) return (long long)k;
  }
}

#endif  // LUDA_RANDOM_DRAWS_H

// Conversions between float16/bfloat16 and float32/float64, on bit patterns only.
//
// One text, three users: the runtime compiles it (host copies, typed scalars, printing),
// and the kernel preludes embed it verbatim (generated/luda_float16_text.h), so that the
// cpu device, the GPU and the host round every value to the same bits. Plain integer
// C++ that NVRTC and any host compiler accept: no headers, no bit casts (the caller moves
// a float's bits in and out its own way). LUDA_F16_FN qualifies each function; a user
// defines it first (the GPU prelude: `static __device__ __forceinline__`).
//
// Rounding is to nearest, ties to even, as NumPy's float16 and IEEE 754 round; a value
// past the largest finite one rounds to infinity. A NaN stays a NaN of the same sign,
// quiet, keeping the top bits of its payload. float64 converts directly (no double
// rounding through float32), as NumPy converts float64 to float16.
#ifndef LUDA_FLOAT16_H
#define LUDA_FLOAT16_H

#ifndef LUDA_F16_FN
#define LUDA_F16_FN static inline
#endif

// Rounds the magnitude `m` (a subnormal's significand with its leading 1) right by
// `shift` bits, ties to even.
LUDA_F16_FN unsigned long long luda_round_shift(unsigned long long m, int shift) {
  unsigned long long r = m >> shift;
  unsigned long long rem = m & ((1ull << shift) - 1ull);
  unsigned long long half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (r & 1ull))) ++r;
  return r;
}

LUDA_F16_FN unsigned short luda_f32_bits_to_f16_bits(unsigned f) {
  unsigned sign = (f >> 16) & 0x8000u;
  unsigned a = f & 0x7fffffffu;
  if (a >= 0x7f800000u)  // infinity or NaN
    return (unsigned short)(a == 0x7f800000u ? sign | 0x7c00u : sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // >= 65520 rounds past 65504
  if (a >= 0x38800000u) {                                         // a normal float16
    unsigned r = a - 0x38000000u;                                 // exponent bias 127 -> 15
    r += 0xfffu + ((r >> 13) & 1u);
    return (unsigned short)(sign | (r >> 13));
  }
  if (a < 0x33000000u) return (unsigned short)sign;  // below half the least subnormal
  int e = (int)(a >> 23);
  unsigned long long m = (a & 0x7fffffu) | 0x800000u;
  return (unsigned short)(sign | (unsigned)luda_round_shift(m, 126 - e));
}

LUDA_F16_FN unsigned short luda_f64_bits_to_f16_bits(unsigned long long d) {
  unsigned sign = (unsigned)(d >> 48) & 0x8000u;
  unsigned long long a = d & 0x7fffffffffffffffull;
  if (a >= 0x7ff0000000000000ull)
    return (unsigned short)(a == 0x7ff0000000000000ull ? sign | 0x7c00u
                                                       : sign | 0x7e00u | (unsigned)((a >> 42) & 0x3ffu));
  if (a >= 0x40effe0000000000ull) return (unsigned short)(sign | 0x7c00u);  // >= 65520
  if (a >= 0x3f10000000000000ull) {                                         // >= 2^-14
    unsigned long long r = a - 0x3f00000000000000ull;                       // bias 1023 -> 15
    r += 0x1ffffffffffull + ((r >> 42) & 1ull);
    return (unsigned short)(sign | (unsigned)(r >> 42));
  }
  if (a < 0x3e60000000000000ull) return (unsigned short)sign;  // below 2^-25
  int e = (int)(a >> 52);
  unsigned long long m = (a & 0xfffffffffffffull) | 0x10000000000000ull;
  return (unsigned short)(sign | (unsigned)luda_round_shift(m, 1051 - e));
}

LUDA_F16_FN unsigned luda_f16_bits_to_f32_bits(unsigned short h) {
  unsigned sign = ((unsigned)h & 0x8000u) << 16;
  unsigned e = ((unsigned)h >> 10) & 0x1fu;
  unsigned m = (unsigned)h & 0x3ffu;
  if (e == 0x1fu) return sign | 0x7f800000u | (m << 13);
  if (e == 0) {
    if (m == 0) return sign;
    e = 113;  // a subnormal: normalise its significand
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    return sign | (e << 23) | ((m & 0x3ffu) << 13);
  }
  return sign | ((e + 112u) << 23) | (m << 13);
}

LUDA_F16_FN unsigned short luda_f32_bits_to_bf16_bits(unsigned f) {
  if ((f & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((f >> 16) | 0x40u);  // NaN
  return (unsigned short)((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

LUDA_F16_FN unsigned short luda_f64_bits_to_bf16_bits(unsigned long long d) {
  unsigned sign = (unsigned)(d >> 48) & 0x8000u;
  unsigned long long a = d & 0x7fffffffffffffffull;
  if (a >= 0x7ff0000000000000ull)
    return (unsigned short)(a == 0x7ff0000000000000ull ? sign | 0x7f80u
                                                       : sign | 0x7fc0u | (unsigned)((a >> 45) & 0x7fu));
  if (a >= 0x47eff00000000000ull) return (unsigned short)(sign | 0x7f80u);  // past the largest
  if (a >= 0x3810000000000000ull) {                                         // >= 2^-126
    unsigned long long r = a - 0x3800000000000000ull;                       // bias 1023 -> 127
    r += 0xfffffffffffull + ((r >> 45) & 1ull);
    return (unsigned short)(sign | (unsigned)(r >> 45));
  }
  if (a < 0x3790000000000000ull) return (unsigned short)sign;  // below 2^-134
  int e = (int)(a >> 52);
  unsigned long long m = (a & 0xfffffffffffffull) | 0x10000000000000ull;
  return (unsigned short)(sign | (unsigned)luda_round_shift(m, 942 - e));
}

LUDA_F16_FN unsigned luda_bf16_bits_to_f32_bits(unsigned short b) { return (unsigned)b << 16; }

#endif  // LUDA_FLOAT16_H

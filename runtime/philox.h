// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw ("Parallel
// random numbers: as easy as 1, 2, 3", SC 2011; Random123), which cuRAND and JAX use:
// four 32-bit words of output are a keyed bijection of a 128-bit counter, so any element
// of a stream is computed from its position alone, on any thread, in any order.
//
// One text, two users: host code and tests include it, and generated kernels embed it
// verbatim (generated/luda_random_text.h, through ops/random.cpp), so that every device
// computes the same words. Plain integer C++ that NVRTC and any host compiler accept: no
// headers; a 32x32 -> 64-bit product gives the high and low halves exactly.
// LUDA_PHILOX_FN qualifies each function; a user defines it first (a kernel:
// `static __device__ __forceinline__`). Everything here starts with luda_philox, so that
// kernels of any kind can use it by that name.
#ifndef LUDA_PHILOX_H
#define LUDA_PHILOX_H

#ifndef LUDA_PHILOX_FN
#define LUDA_PHILOX_FN static inline
#endif

// Four 32-bit words: a counter, or the output for one.
struct luda_philox4x32 {
  unsigned int v[4];
};

// Random123's philox4x32_10(ctr, key): ten rounds, each two 32x32 -> 64 products
// (multipliers 0xD2511F53, 0xCD9E8D57), the key bumped by the Weyl constants 0x9E3779B9
// and 0xBB67AE85 between rounds.
LUDA_PHILOX_FN luda_philox4x32 luda_philox4x32_10(luda_philox4x32 ctr, unsigned int k0, unsigned int k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned long long p0 = (unsigned long long)0xD2511F53u * ctr.v[0];
    const unsigned long long p1 = (unsigned long long)0xCD9E8D57u * ctr.v[2];
    luda_philox4x32 next;
    next.v[0] = (unsigned int)(p1 >> 32) ^ ctr.v[1] ^ k0;
    next.v[1] = (unsigned int)p1;
    next.v[2] = (unsigned int)(p0 >> 32) ^ ctr.v[3] ^ k1;
    next.v[3] = (unsigned int)p0;
    ctr = next;
  }
  return ctr;
}

#endif  // LUDA_PHILOX_H

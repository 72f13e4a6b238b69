// Philox4x32-10 (runtime/philox.h) against Random123's known-answer vectors
// (Random123-1.14 tests/kat_vectors, the three "philox4x32 10" lines: counter, key,
// expected output), and the exact-arithmetic helpers of runtime/random_draws.h against the
// host's libm: what luda.random's kernels compute, here compiled for the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "runtime/philox.h"
#include "runtime/random_draws.h"

namespace {

struct Kat {
  unsigned ctr[4];
  unsigned key[2];
  unsigned expected[4];
};

TEST(Philox, Random123KnownAnswers) {
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    luda_philox4x32 c;
    for (int i = 0; i < 4; ++i) c.v[i] = k.ctr[i];
    const luda_philox4x32 out = luda_philox4x32_10(c, k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.v[i], k.expected[i]) << "word " << i << " of counter " << k.ctr[0];
  }
}

// A sub-stream's words are its blocks' words in order: block j of element e is Philox of
// counter (e, j) under the key's halves.
TEST(Philox, SubstreamWordsAreTheBlocksInOrder) {
  const unsigned long long key = 0x0123456789abcdefull, element = 0xfedcba9876543210ull;
  luda_rng_stream s = luda_rng_substream(key, element);
  for (unsigned j = 0; j < 3; ++j) {
    luda_philox4x32 c = {{(unsigned)element, (unsigned)(element >> 32), j, 0}};
    c = luda_philox4x32_10(c, 0x89abcdefu, 0x01234567u);
    EXPECT_EQ(luda_rng_next64(&s), ((unsigned long long)c.v[1] << 32) | c.v[0]);
    EXPECT_EQ(luda_rng_next64(&s), ((unsigned long long)c.v[3] << 32) | c.v[2]);
  }
}

std::int64_t ulps_apart(double a, double b) {
  std::int64_t ia, ib;
  std::memcpy(&ia, &a, 8);
  std::memcpy(&ib, &b, 8);
  if (ia < 0) ia = std::numeric_limits<std::int64_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<std::int64_t>::min() - ib;
  return ia > ib ? ia - ib : ib - ia;
}

// luda_rng_log is within one ulp of the host's log (glibc's, itself within one ulp of the
// exact value) on the uniforms' range, on magnitudes across the exponents, and at the edges.
TEST(Philox, LogWithinOneUlpOfLibm) {
  std::mt19937_64 gen(20240611);
  std::int64_t worst = 0;
  for (int i = 0; i < 400000; ++i) {
    const double u = static_cast<double>(gen() >> 11) * 0x1p-53;
    const double x = i % 2 ? u : std::ldexp(0.5 + u, static_cast<int>(gen() % 2000) - 1000);
    if (x == 0) continue;
    worst = std::max(worst, ulps_apart(luda_rng_log(x), std::log(x)));
  }
  EXPECT_LE(worst, 1);
  for (double x : {1.0, 2.0, 0.5, 0x1p-53, 1 - 0x1p-53, 1 + 0x1p-52, 4.9406564584124654e-324, 2.2250738585072014e-308,
                   1.7976931348623157e308, 0.70710678118654757, 1.4142135623730951})
    EXPECT_LE(ulps_apart(luda_rng_log(x), std::log(x)), 1) << x;
  EXPECT_EQ(luda_rng_log(1.0), 0.0);
  EXPECT_TRUE(std::isinf(luda_rng_log(0.0)) && luda_rng_log(0.0) < 0);
}

TEST(Philox, LogFactorialMatchesLgamma) {
  for (int k = 0; k < 5000; ++k) {
    const double want = std::lgamma(k + 1.0), got = luda_rng_logfact(k);
    EXPECT_NEAR(got, want, 4e-15 * std::max(1.0, want)) << k;
  }
  EXPECT_NEAR(luda_rng_logfact(1e12), std::lgamma(1e12 + 1), 1e-15 * std::lgamma(1e12 + 1));
}

TEST(Philox, Mul128AndBoundedIntegers) {
  unsigned long long lo;
  EXPECT_EQ(luda_rng_mul128(~0ull, ~0ull, &lo), ~0ull - 1);
  EXPECT_EQ(lo, 1ull);
  EXPECT_EQ(luda_rng_mul128(1ull << 63, 4, &lo), 2ull);
  EXPECT_EQ(lo, 0ull);
  // every value of [0, 6] comes, none past it; range 0 gives 0
  luda_rng_stream s = luda_rng_substream(7, 0);
  int seen[7] = {};
  for (int i = 0; i < 7000; ++i) {
    const unsigned long long v = luda_rng_bounded(&s, 6);
    ASSERT_LE(v, 6ull);
    seen[v] += 1;
  }
  for (int v = 0; v < 7; ++v) EXPECT_GT(seen[v], 850) << v;
  EXPECT_EQ(luda_rng_bounded(&s, 0), 0ull);
}

}  // namespace

// NumPy's random distributions drawn on the kinds (an elementwise kind over the element
// index, jit/kinds/elementwise.h) from Philox4x32-10 (runtime/philox.h), so that arrays are
// drawn where they live and a seed gives the same bits on every device, thread count and
// block split.
//
// The stream of a key: element g of it is the Philox sub-stream of counter (g, j), j = 0,
// 1, ... (runtime/random_draws.h); element i of a draw (the output's C order) is stream
// element `first + i`, or, with a RandomPlacement, the element at its place in a larger
// array (a chunked array's block drawn as part of the whole). The distributions' rules and
// the bound on their parameters are NumPy's Generator's; each function checks them and
// fails with NumPy's message after `who` ("normal: scale < 0").
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/ndarray.h"

namespace luda::ops {

// Where a draw's element i sits in the stream, for a block of a larger array: at
// first + offset + sum over the axes a of idx_a(i) * strides[a], idx(i) the multi-index of i
// in `extents` (C order; the product of extents is the output's size). At most
// kMaxPlacementAxes axes (merge the axes along which the block spans the whole array).
struct RandomPlacement {
  std::int64_t offset = 0;
  std::vector<std::int64_t> extents, strides;
};
inline constexpr std::size_t kMaxPlacementAxes = 4;

// Where a draw reads: the key and the stream element of the output's first element.
struct RandomSource {
  std::uint64_t key = 0;
  std::uint64_t first = 0;
  const RandomPlacement* placement = nullptr;  // null: the output's elements in order
};

// Each fills `out` (any shape, its dtype one the distribution allows, on any device).
// Uniform in [0, 1): float64 (top 53 bits of the element's first word) or float32 (24).
void random_uniform01(const RandomSource& src, NDArray& out);
// low + (high - low) U, float64.
void random_uniform(const RandomSource& src, double low, double high, NDArray& out, std::string_view who);
// loc + scale Z, Z standard normal (Marsaglia's polar method); float64 or float32 (the
// float64 value rounded).
void random_normal(const RandomSource& src, double loc, double scale, NDArray& out, std::string_view who);
// scale E, E standard exponential (-log(1 - U)); float64 or float32.
void random_exponential(const RandomSource& src, double scale, NDArray& out, std::string_view who);
// Integers in [low, high] (inclusive): any integer dtype or bool; the bounds must fit it.
void random_integers(const RandomSource& src, std::int64_t low, std::int64_t high, NDArray& out);
// Poisson(lam), int64.
void random_poisson(const RandomSource& src, double lam, NDArray& out, std::string_view who);
// Binomial(n, p), int64.
void random_binomial(const RandomSource& src, std::int64_t n, double p, NDArray& out, std::string_view who);
// 64 random bits per element as int64: sort keys for permutations.
void random_bits(const RandomSource& src, NDArray& out);

}  // namespace luda::ops

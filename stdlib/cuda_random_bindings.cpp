// luda.cuda.random: numba.cuda.random's generators for cuda.jit kernels.
//   local states = luda.cuda.random.create_xoroshiro128p_states(n, seed [, {subsequence_start=, device=}])
//   -- in a kernel: cuda.random.xoroshiro128p_uniform_float32(states, i), ..._float64,
//   --              cuda.random.xoroshiro128p_normal_float32(states, i), ..._float64
// The states are a uint64 array of shape {n, 2}: generator i's two words of xoroshiro128+
// (Blackman and Vigna). Generator 0 starts from splitmix64 of the seed, jumped ahead
// subsequence_start times by 2^64 steps; generator i is generator i - 1 jumped once, so no
// two overlap unless one draws 2^64 numbers. That is numba.cuda.random's seeding, so the
// states are the same words Numba makes for the same n, seed and subsequence_start. The
// draws themselves are in dsl/prelude.cpp (luda_xoro_*).
#include <array>
#include <cstdint>
#include <vector>

#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

constexpr std::string_view kCreate = "create_xoroshiro128p_states";

using State = std::array<std::uint64_t, 2>;

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t next(State& s) {
  const std::uint64_t s0 = s[0], s1 = s[1] ^ s0, result = s0 + s[1];
  s[0] = rotl(s0, 55) ^ s1 ^ (s1 << 14);
  s[1] = rotl(s1, 36);
  return result;
}

// 2^64 steps ahead: the jump polynomial of xoroshiro128+.
void jump(State& s) {
  constexpr std::uint64_t kJump[2] = {0xbeac0467eba5facbULL, 0xd86b048b86aa9922ULL};
  State out = {0, 0};
  for (std::uint64_t word : kJump) {
    for (int b = 0; b < 64; ++b) {
      if (word & (std::uint64_t{1} << b)) {
        out[0] ^= s[0];
        out[1] ^= s[1];
      }
      next(s);
    }
  }
  s = out;
}

// splitmix64's first output for the seed, in both words (numba.cuda.random's start).
State seeded(std::uint64_t seed) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return {z, z};
}

// The largest n: the states of 2^31 generators are 32 GiB, more than any device holds.
constexpr long long kMaxGenerators = 1LL << 31;
// The largest subsequence_start: each step is a jump of 128 generator steps on the host,
// so larger starts would take seconds (a start of s is s * 2^64 draws ahead).
constexpr long long kMaxSubsequenceStart = 1LL << 24;

int l_create_states(lua_State* L) {
  const long long n = luaL_checkinteger(L, 1);
  if (n < 0 || n > kMaxGenerators) fail("{}: n must be 0 to 2^31 generators, got {}", kCreate, n);
  // A seed is any Lua integer, taken as its 64 bits (Numba's uint64 seed).
  const auto seed = static_cast<std::uint64_t>(luaL_checkinteger(L, 2));
  check_options(L, 3, kCreate, {"subsequence_start", "device"});
  long long start = 0;
  if (push_option(L, 3, "subsequence_start") != LUA_TNIL) {
    start = to_integer(L, -1, kCreate, "option 'subsequence_start'");
    if (start < 0 || start > kMaxSubsequenceStart)
      fail("{}: subsequence_start must be 0 to 2^24, got {}", kCreate, start);
  }
  lua_pop(L, 1);
  const Device device = device_option(L, 3, kCreate);
  std::vector<std::uint64_t> words(static_cast<std::size_t>(2 * n));
  if (n > 0) {
    State s = seeded(seed);
    for (long long k = 0; k < start; ++k) jump(s);
    for (long long i = 0; i < n; ++i) {
      if (i > 0) jump(s);
      words[static_cast<std::size_t>(2 * i)] = s[0];
      words[static_cast<std::size_t>(2 * i + 1)] = s[1];
    }
  }
  push_array(L, NDArray::from_host(words.data(), {n, 2}, DType::UInt64, device));
  return 1;
}

}  // namespace

void open_cuda_random(lua_State* L) {
  static const luaL_Reg funcs[] = {
      {"create_xoroshiro128p_states", trampoline<l_create_states>},
      {nullptr, nullptr},
  };
  lua_getfield(L, -1, "cuda");
  lua_newtable(L);
  luaL_setfuncs(L, funcs, 0);
  lua_setfield(L, -2, "random");
  lua_pop(L, 1);
}

}  // namespace luda::lua

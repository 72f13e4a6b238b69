#include "ops/random.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "jit/kinds/elementwise.h"
#include "jit/kinds/frontend.h"
#include "luda_random_text.h"  // runtime/philox.h's and runtime/random_draws.h's texts (generated)
#include "runtime/error.h"

namespace luda::ops {
namespace {

// The distributions, each one kind. ORDER DISTRIBUTION: kDraws below follows it.
enum class Draw { Uniform01, Uniform, Normal, Exponential, Integers, Poisson, Binomial, Bits, Count };

// What every element function takes (the kind's inputs, then its index and size): the key,
// the stream element of index 0 (base), eight float64 and two int64 parameters of the
// distribution, and the placement: extents e1..e3 of the inner axes, strides s0..s3.
constexpr const char* kInNames[] = {"key", "base", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7",
                                    "q0",  "q1",   "e1", "e2", "e3", "s0", "s1", "s2", "s3"};
constexpr std::size_t kInputs = std::size(kInNames);
constexpr std::size_t kDoubles = 8;

constexpr std::string_view kCommon = R"(
#define LUDA_RNG_ARGS long long key, long long base, double d0, double d1, double d2, double d3, double d4, \
  double d5, double d6, double d7, long long q0, long long q1, long long e1, long long e2, long long e3, \
  long long s0, long long s1, long long s2, long long s3, long long i, long long n
// The stream element of index i: base + sum of i's multi-index in (.., e1, e2, e3) times the strides.
LUDA_RNG_FN luda_rng_stream luda_rng_start(long long key, long long base, long long e1, long long e2, long long e3,
                                          long long s0, long long s1, long long s2, long long s3, long long i) {
  unsigned long long r = (unsigned long long)i;
  const unsigned long long i3 = r % (unsigned long long)e3;
  r /= (unsigned long long)e3;
  const unsigned long long i2 = r % (unsigned long long)e2;
  r /= (unsigned long long)e2;
  const unsigned long long i1 = r % (unsigned long long)e1;
  r /= (unsigned long long)e1;
  const unsigned long long g = (unsigned long long)base + r * (unsigned long long)s0 + i1 * (unsigned long long)s1 +
                               i2 * (unsigned long long)s2 + i3 * (unsigned long long)s3;
  return luda_rng_substream((unsigned long long)key, g);
}
#define LUDA_RNG_START luda_rng_stream s = luda_rng_start(key, base, e1, e2, e3, s0, s1, s2, s3, i)
)";

struct DrawText {
  const char* name;
  const char* result;  // the element function's C type
  const char* body;    // after LUDA_RNG_START
};

// ORDER DISTRIBUTION
constexpr DrawText kDraws[] = {
    {"uniform01", "double", "return luda_rng_double(&s);"},
    {"uniform", "double", "return d0 + d1 * luda_rng_double(&s);"},
    {"normal", "double", "return d0 + d1 * luda_rng_normal(&s);"},
    {"exponential", "double", "return d0 * luda_rng_exponential(&s);"},
    {"integers", "long long",
     "return (long long)((unsigned long long)q0 + luda_rng_bounded(&s, (unsigned long long)q1));"},
    {"poisson", "long long",
     "return q1 == 0 ? luda_rng_poisson_mult(&s, d0) : luda_rng_poisson_ptrs(&s, d0, d1, d2, d3, d4, d5);"},
    {"binomial", "long long",
     "const double c[8] = {d0, d1, d2, d3, d4, d5, d6, d7};\n"
     "  const long long k = (q1 & 2) ? luda_rng_binomial_btrs(&s, (double)q0, c)\n"
     "                               : luda_rng_binomial_inversion(&s, q0, d0, d1, d2, d3);\n"
     "  return (q1 & 1) ? q0 - k : k;"},
    {"bits", "long long", "return (long long)luda_rng_next64(&s);"},
};
static_assert(std::size(kDraws) == static_cast<std::size_t>(Draw::Count));

jit::ElementCode draw_code(Draw d, dsl::Scalar out) {
  const DrawText& t = kDraws[static_cast<int>(d)];
  std::string name = fmt::format("luda_draw_{}_{}", t.name, dsl::scalar_name(out));
  std::string result = t.result;
  std::string body = t.body;
  if (d == Draw::Uniform01 && out == dsl::Scalar::Float32) {  // 24 bits, as NumPy's float32
    result = "float";
    body = "return luda_rng_float(&s);";
  }
  jit::ElementCode code;
  code.functions = "#line 1 \"luda_random\"\n#define LUDA_PHILOX_FN static __device__ __forceinline__\n";
  code.functions += detail::kPhiloxText;
  code.functions += "\n#define LUDA_RNG_FN static __device__ __forceinline__\n";
  code.functions += detail::kRandomDrawsText;
  code.functions += kCommon;
  code.functions += fmt::format("static __device__ {} {}(LUDA_RNG_ARGS) {{\n  LUDA_RNG_START;\n  (void)n;\n  {}\n}}\n",
                                result, name, body);
  code.call = name;
  dsl::Type i64 = dsl::Type::scalar_of(dsl::Scalar::Int64), f64 = dsl::Type::scalar_of(dsl::Scalar::Float64);
  code.params = {i64, i64};
  for (std::size_t k = 0; k < kDoubles; ++k) code.params.push_back(f64);
  for (std::size_t k = 2 + kDoubles; k < kInputs; ++k) code.params.push_back(i64);
  code.outputs = {out};
  // Products and sums stay two correctly rounded operations on every device (no fused
  // multiply-add the host compiler or NVRTC might form in one place and not the other).
  code.nvrtc_options = {"--fmad=false"};
  code.typed = fmt::format("{}: random {} -> {}", name, t.name, dsl::scalar_name(out));
  return code;
}

// One kind per distribution for the process, never destroyed (it may outlive the driver
// at exit, as array_math's kinds do).
jit::ElementwiseKind& draw_kind(Draw d) {
  static std::array<jit::ElementwiseKind*, static_cast<std::size_t>(Draw::Count)> kinds = [] {
    std::array<jit::ElementwiseKind*, static_cast<std::size_t>(Draw::Count)> all{};
    for (std::size_t k = 0; k < all.size(); ++k) {
      const Draw d = static_cast<Draw>(k);
      jit::ElementwiseSetup setup;
      setup.kind = "random";
      setup.name = kDraws[k].name;
      setup.in_names.assign(std::begin(kInNames), std::end(kInNames));
      setup.out_names = {"out"};
      setup.raw.assign(kInputs, false);
      setup.out_read = {false};
      setup.index_args = true;
      setup.frontend = [d](std::span<const dsl::Type>, std::span<const std::optional<dsl::Scalar>> outputs,
                           dsl::Target) {
        LUDA_INTERNAL_CHECK(outputs.size() == 1 && outputs[0]);  // draw() always passes its output
        return draw_code(d, *outputs[0]);
      };
      all[k] = new jit::ElementwiseKind(std::move(setup));
    }
    return all;
  }();
  return *kinds[static_cast<std::size_t>(d)];
}

struct DrawParams {
  std::array<double, kDoubles> d{};
  std::int64_t q0 = 0, q1 = 0;
};

void draw(Draw d, const RandomSource& src, const DrawParams& p, NDArray& out) {
  if (out.size() == 0) return;
  std::array<std::int64_t, 3> e = {1, 1, 1};
  std::array<std::int64_t, 4> s = {1, 0, 0, 0};
  std::int64_t base = static_cast<std::int64_t>(src.first);
  if (src.placement) {
    const RandomPlacement& pl = *src.placement;
    LUDA_INTERNAL_CHECK(pl.extents.size() == pl.strides.size() && !pl.extents.empty());
    if (pl.extents.size() > kMaxPlacementAxes)
      fail("random: a block's place in its array needs {} axes, more than {}", pl.extents.size(), kMaxPlacementAxes);
    const std::size_t skip = kMaxPlacementAxes - pl.extents.size();  // leading axes of extent 1
    s = {0, 0, 0, 0};
    for (std::size_t a = 0; a < pl.extents.size(); ++a) {
      if (a + skip > 0) e[a + skip - 1] = std::max<std::int64_t>(pl.extents[a], 1);
      s[a + skip] = pl.strides[a];
    }
    base = static_cast<std::int64_t>(src.first + static_cast<std::uint64_t>(pl.offset));
  }
  std::vector<jit::KernelArg> in;
  in.reserve(kInputs);
  in.push_back(jit::KernelArg::of_typed(Scalar::of_int(static_cast<std::int64_t>(src.key))));
  in.push_back(jit::KernelArg::of_typed(Scalar::of_int(base)));
  for (double v : p.d) in.push_back(jit::KernelArg::of_typed(Scalar::of_float(v)));
  in.push_back(jit::KernelArg::of_typed(Scalar::of_int(p.q0)));
  in.push_back(jit::KernelArg::of_typed(Scalar::of_int(p.q1)));
  for (std::int64_t v : e) in.push_back(jit::KernelArg::of_typed(Scalar::of_int(v)));
  for (std::int64_t v : s) in.push_back(jit::KernelArg::of_typed(Scalar::of_int(v)));
  draw_kind(d).call(in, std::span<NDArray>(&out, 1));
}

void check_float_out(const NDArray& out, std::string_view who) {
  if (out.dtype() != DType::Float32 && out.dtype() != DType::Float64)
    fail("Unsupported dtype {} for {}", dtype_name(out.dtype()), who);
}

}  // namespace

void random_uniform01(const RandomSource& src, NDArray& out) {
  check_float_out(out, "random");
  draw(Draw::Uniform01, src, {}, out);
}

void random_uniform(const RandomSource& src, double low, double high, NDArray& out, std::string_view who) {
  check_float_out(out, who);
  const double range = high - low;
  if (!std::isfinite(range)) fail("{}: high - low range exceeds valid bounds", who);
  DrawParams p;
  p.d[0] = low;
  p.d[1] = range;
  draw(Draw::Uniform, src, p, out);
}

void random_normal(const RandomSource& src, double loc, double scale, NDArray& out, std::string_view who) {
  check_float_out(out, who);
  if (scale < 0) fail("{}: scale < 0", who);
  DrawParams p;
  p.d[0] = loc;
  p.d[1] = scale;
  draw(Draw::Normal, src, p, out);
}

void random_exponential(const RandomSource& src, double scale, NDArray& out, std::string_view who) {
  check_float_out(out, who);
  if (scale < 0) fail("{}: scale < 0", who);
  DrawParams p;
  p.d[0] = scale;
  draw(Draw::Exponential, src, p, out);
}

void random_integers(const RandomSource& src, std::int64_t low, std::int64_t high, NDArray& out) {
  const DType t = out.dtype();
  if (!is_integer(t) && t != DType::Bool) fail("Unsupported dtype {} for integers", dtype_name(t));
  if (low > high) fail("integers: low > high");
  // The bounds of the dtype, as NumPy checks them (a Lua integer is at most int64's).
  std::int64_t lo = 0, hi = 1;
  switch (t) {
    case DType::Int8: lo = INT8_MIN, hi = INT8_MAX; break;
    case DType::Int16: lo = INT16_MIN, hi = INT16_MAX; break;
    case DType::Int32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DType::Int64: lo = INT64_MIN, hi = INT64_MAX; break;
    case DType::UInt8: hi = UINT8_MAX; break;
    case DType::UInt16: hi = UINT16_MAX; break;
    case DType::UInt32: hi = UINT32_MAX; break;
    case DType::UInt64: hi = INT64_MAX; break;
    default: break;  // bool: [0, 1]
  }
  if (low < lo || low > hi) fail("integers: low is out of bounds for {}", dtype_name(t));
  if (high < lo || high > hi) fail("integers: high is out of bounds for {}", dtype_name(t));
  DrawParams p;
  p.q0 = low;
  p.q1 = static_cast<std::int64_t>(static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low));
  draw(Draw::Integers, src, p, out);
}

void random_poisson(const RandomSource& src, double lam, NDArray& out, std::string_view who) {
  // NumPy's POISSON_LAM_MAX: int64's largest less ten of its square roots.
  const double lam_max = 9.223372036854775807e18 - std::sqrt(9.223372036854775807e18) * 10;
  if (!(lam >= 0)) fail("{}: lam < 0 or lam is NaN", who);
  if (lam > lam_max) fail("{}: lam value too large", who);
  if (out.dtype() != DType::Int64) fail("Unsupported dtype {} for {}", dtype_name(out.dtype()), who);
  DrawParams p;
  if (lam < 10) {
    p.d[0] = std::exp(-lam);
  } else {
    const double slam = std::sqrt(lam), b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    p.d = {lam, std::log(lam), a, b, vr, std::log(invalpha), 0, 0};
    p.q1 = 1;
  }
  draw(Draw::Poisson, src, p, out);
}

void random_binomial(const RandomSource& src, std::int64_t n, double prob, NDArray& out, std::string_view who) {
  if (n < 0) fail("{}: n < 0", who);
  if (!(prob >= 0 && prob <= 1)) fail("{}: p < 0, p > 1 or p is NaN", who);
  if (out.dtype() != DType::Int64) fail("Unsupported dtype {} for {}", dtype_name(out.dtype()), who);
  DrawParams params;
  params.q0 = n;
  double p = prob;
  if (p > 0.5) {
    p = 1 - p;
    params.q1 |= 1;
  }
  const double q = 1 - p, dn = static_cast<double>(n), np = dn * p;
  if (np <= 30) {
    const double bound = std::min(dn, np + 10 * std::sqrt(np * q + 1));
    params.d[0] = p;
    params.d[1] = q;
    params.d[2] = std::exp(dn * std::log(q));
    params.d[3] = bound;
  } else {
    const double spq = std::sqrt(np * q), b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p;
    const double m = std::floor((dn + 1) * p);
    params.d = {b,
                a,
                np + 0.5,
                (2.83 + 5.1 / b) * spq,
                0.92 - 4.2 / b,
                m,
                std::log(p / q),
                std::lgamma(m + 1) + std::lgamma(dn - m + 1)};
    params.q1 |= 2;
  }
  draw(Draw::Binomial, src, params, out);
}

void random_bits(const RandomSource& src, NDArray& out) {
  LUDA_INTERNAL_CHECK(out.dtype() == DType::Int64);
  draw(Draw::Bits, src, {}, out);
}

}  // namespace luda::ops

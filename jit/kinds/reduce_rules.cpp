#include "jit/kinds/reduce_rules.h"

#include <array>
#include <climits>
#include <cstdint>

#include <fmt/format.h>

#include "jit/kinds/frontend.h"
#include "runtime/error.h"

namespace luda::jit {
namespace {

// The lowest or highest value of `t` as Lua source text.
std::string literal(dsl::Scalar t, bool highest) {
  std::string_view name = dsl::scalar_name(t);
  if (dsl::is_float(t)) return fmt::format("luda.{}({}math.huge)", name, highest ? "" : "-");
  // Complex numbers order by the real part, then the imaginary one: both parts infinite.
  if (dsl::is_complex(t)) return fmt::format("luda.{0}({1}math.huge, {1}math.huge)", name, highest ? "" : "-");
  switch (t) {
    case dsl::Scalar::Int64: return highest ? "math.maxinteger" : "math.mininteger";
    case dsl::Scalar::UInt64: return highest ? "luda.uint64(-1)" : "luda.uint64(0)";
    case dsl::Scalar::Bool: return highest ? "true" : "false";
    default: break;
  }
  long long lo = 0, hi = 0;
  switch (t) {
    case dsl::Scalar::Int8: lo = INT8_MIN, hi = INT8_MAX; break;
    case dsl::Scalar::Int16: lo = INT16_MIN, hi = INT16_MAX; break;
    case dsl::Scalar::Int32: lo = INT32_MIN, hi = INT32_MAX; break;
    case dsl::Scalar::UInt8: hi = UINT8_MAX; break;
    case dsl::Scalar::UInt16: hi = UINT16_MAX; break;
    case dsl::Scalar::UInt32: hi = UINT32_MAX; break;
    default: break;
  }
  return fmt::format("luda.{}({})", name, highest ? hi : lo);
}

std::string returns(const std::string& expr) { return fmt::format("function() return {} end", expr); }
std::string zero(dsl::Scalar t, int v = 0) { return returns(fmt::format("luda.{}({})", dsl::scalar_name(t), v)); }

constexpr std::string_view kSum = "function(a, b) return a + b end";

}  // namespace

std::string_view reduce_name(Reduce op) {
  // ORDER REDUCE
  static constexpr std::array<std::string_view, 14> names = {"sum",    "prod",    "max",       "min",      "mean",
                                                             "argmax", "argmin",  "nansum",    "nanprod",  "nanmax",
                                                             "nanmin", "nanmean", "nanargmax", "nanargmin"};
  return names[static_cast<std::size_t>(op)];
}

std::optional<Reduce> parse_reduce(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Reduce::NanArgmin); ++i)
    if (reduce_name(static_cast<Reduce>(i)) == name) return static_cast<Reduce>(i);
  return std::nullopt;
}

std::string_view no_identity(Reduce op) { return op == Reduce::Max ? "maximum" : op == Reduce::Min ? "minimum" : ""; }

ReduceParts reduce_parts(Reduce op, dsl::Scalar element) {
  ReduceParts p;
  switch (op) {
    case Reduce::Sum:
    case Reduce::Prod:
      // float16 and bfloat16 accumulate in float32 and round once at the end, as NumPy's
      // half reductions do.
      p.output = sum_type(element);
      p.reduce_type = dsl::compute_type(p.output);
      p.reduce = op == Reduce::Sum ? kSum : "function(a, b) return a * b end";
      p.identity = zero(p.reduce_type, op == Reduce::Sum ? 0 : 1);
      return p;
    case Reduce::Max:
    case Reduce::Min: {
      bool max = op == Reduce::Max;
      p.output = element;
      p.reduce_type = element == dsl::Scalar::Bool ? dsl::Scalar::UInt8 : element;
      // NaN propagates (see minimum/maximum above).
      p.reduce = fmt::format("function(a, b) if a {} b or a ~= a then return a end return b end", max ? ">" : "<");
      // The identity only pads the partial results; an empty reduction raises
      // (ReductionSetup::no_identity).
      p.identity = returns(literal(p.reduce_type, !max));
      p.no_identity = no_identity(op);
      return p;
    }
    default: break;
  }
  LUDA_INTERNAL_CHECK(!"reduce_parts takes sum, prod, max or min");
  return p;
}

}  // namespace luda::jit

#include "ops/array_math.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "jit/kinds/frontend.h"
#include "ops/ufunc_reduce.h"
#include "runtime/error.h"

namespace luda::ops {

// The kinds' frontends (jit/kinds/frontend.h, jit/kinds/make.h) that this file builds on.
using jit::ReduceParts;
using jit::builtin_environment;
using jit::compile_scalar_function;
using jit::element_code;
using jit::no_identity;
using jit::numpy_result;
using jit::reduce_parts;
using jit::source_text_function;
using jit::strong;
using jit::to_dtype;
using jit::to_scalar_kind;
using jit::typed;

namespace {

// How an operation treats bool operands. The kernel language has no order on bools and
// of arithmetic only NumPy's bool + (or) and * (and); comparisons and minimum/maximum of
// bools are computed on 0/1 as uint8, converted inside the function (a Lua boolean
// operand cannot be passed as a uint8). Allowed: where's condition. Own: bools take the
// def's `on_bools` text (bitwise and logical operations: and, or, not). Text: bools take
// the def's text as the kernel language types it (add, multiply).
enum class Bools : unsigned char { Refused, AsUInt8, Allowed, Own, Text };

struct UfuncDef {
  std::string_view name;
  int nin;
  std::string_view text;
  Bools bools;
  // The text for integer operands, where it differs (reciprocal truncates 1 / x).
  std::string_view on_ints = {};
  // The text for bool operands (Bools::Own).
  std::string_view on_bools = {};
  // Bitwise operations: integers and bools only, as NumPy's.
  bool integral = false;
  // The name messages and the kernel use, where it differs (the steps of round).
  std::string_view shown = {};
  // The text for complex operands, where it differs (sign is z / |z|, as NumPy 2's).
  std::string_view on_complex = {};
  // Why bools are refused and what to use, where NumPy says so (subtract, negative).
  std::string_view bools_refused = {};
  std::string_view who() const { return shown.empty() ? name : shown; }
};

// The operations NumPy does not define for complex numbers (floor_divide, remainder, the
// rounding functions, atan2, hypot, ...); the bitwise ones (`integral`) neither.
constexpr std::array<std::string_view, 22> kRealOnly = {"floor_divide", "mod",          "fmod",  "atan2",
                                                        "floor",        "ceil",         "trunc", "rint",
                                                        "round_scaled", "round_coarse", "hypot", "copysign",
                                                        "nextafter",    "erf",          "erfc",  "lgamma",
                                                        "tgamma",       "cbrt",         "rsqrt", "deg2rad",
                                                        "rad2deg",      "fma"};

// The texts of the bitwise and logical operations, on integers and on bools.
constexpr std::string_view kAnd = "function(a, b) return a and b end";
constexpr std::string_view kOr = "function(a, b) return a or b end";
constexpr std::string_view kXor = "function(a, b) return a ~= b end";
constexpr std::string_view kNot = "function(a) return not a end";

// ORDER UFUNC: kNames follows this table.
constexpr std::array kUfuncs = {
    // On bools, add is or and multiply and (the kernel language's bool + and *, NumPy's).
    UfuncDef{"add", 2, "function(a, b) return a + b end", Bools::Text},
    UfuncDef{.name = "subtract",
             .nin = 2,
             .text = "function(a, b) return a - b end",
             .bools = Bools::Refused,
             .bools_refused = "boolean subtract, the `-` operator, is not supported (as in NumPy); use "
                              "luda.logical_xor or luda.bitwise_xor instead"},
    UfuncDef{"multiply", 2, "function(a, b) return a * b end", Bools::Text},
    UfuncDef{"divide", 2, "function(a, b) return a / b end", Bools::Refused},
    UfuncDef{"floor_divide", 2, "function(a, b) return a // b end", Bools::Refused},
    UfuncDef{"mod", 2, "function(a, b) return a % b end", Bools::Refused},
    UfuncDef{"power", 2, "function(a, b) return a ^ b end", Bools::Refused},
    UfuncDef{.name = "negative",
             .nin = 1,
             .text = "function(a) return -a end",
             .bools = Bools::Refused,
             .bools_refused = "boolean negative, the unary `-` operator, is not supported (as in NumPy); use "
                              "luda.logical_not or luda.invert instead"},
    UfuncDef{"less", 2, "function(a, b) return a < b end", Bools::AsUInt8},
    UfuncDef{"greater", 2, "function(a, b) return a > b end", Bools::AsUInt8},
    UfuncDef{"less_equal", 2, "function(a, b) return a <= b end", Bools::AsUInt8},
    UfuncDef{"greater_equal", 2, "function(a, b) return a >= b end", Bools::AsUInt8},
    UfuncDef{"equal", 2, "function(a, b) return a == b end", Bools::AsUInt8},
    UfuncDef{"not_equal", 2, "function(a, b) return a ~= b end", Bools::AsUInt8},
    // NaN propagates, as NumPy's minimum and maximum: `a ~= a` holds only for NaN, and
    // when b is NaN both comparisons are false and b is returned.
    UfuncDef{"minimum", 2, "function(a, b) if a < b or a ~= a then return a end return b end", Bools::AsUInt8},
    UfuncDef{"maximum", 2, "function(a, b) if a > b or a ~= a then return a end return b end", Bools::AsUInt8},
    UfuncDef{"where", 3, "function(c, a, b) if c then return a end return b end", Bools::Allowed},
    UfuncDef{"sqrt", 1, "function(a) return math.sqrt(a) end", Bools::Refused},
    UfuncDef{"exp", 1, "function(a) return math.exp(a) end", Bools::Refused},
    UfuncDef{"log", 1, "function(a) return math.log(a) end", Bools::Refused},
    UfuncDef{"log_base", 2, "function(a, b) return math.log(a, b) end", Bools::Refused},
    UfuncDef{"sin", 1, "function(a) return math.sin(a) end", Bools::Refused},
    UfuncDef{"cos", 1, "function(a) return math.cos(a) end", Bools::Refused},
    UfuncDef{"tan", 1, "function(a) return math.tan(a) end", Bools::Refused},
    UfuncDef{"asin", 1, "function(a) return math.asin(a) end", Bools::Refused},
    UfuncDef{"acos", 1, "function(a) return math.acos(a) end", Bools::Refused},
    UfuncDef{"atan", 1, "function(a) return math.atan(a) end", Bools::Refused},
    UfuncDef{"atan2", 2, "function(a, b) return math.atan(a, b) end", Bools::Refused},
    // NumPy's floor and ceil keep the dtype (NaN, infinities and 1e300 as they are), where
    // the kernel language's math.floor, Lua's, gives an integer.
    UfuncDef{"floor", 1, "function(a) return luda.math.floor(a) end", Bools::Refused},
    UfuncDef{"ceil", 1, "function(a) return luda.math.ceil(a) end", Bools::Refused},
    UfuncDef{"abs", 1, "function(a) return math.abs(a) end", Bools::Refused},
    UfuncDef{"fmod", 2, "function(a, b) return math.fmod(a, b) end", Bools::Refused},
    UfuncDef{"exp2", 1, "function(a) return luda.math.exp2(a) end", Bools::Refused},
    UfuncDef{"log2", 1, "function(a) return luda.math.log2(a) end", Bools::Refused},
    UfuncDef{"log10", 1, "function(a) return luda.math.log10(a) end", Bools::Refused},
    UfuncDef{"log1p", 1, "function(a) return luda.math.log1p(a) end", Bools::Refused},
    UfuncDef{"expm1", 1, "function(a) return luda.math.expm1(a) end", Bools::Refused},
    UfuncDef{"sinh", 1, "function(a) return luda.math.sinh(a) end", Bools::Refused},
    UfuncDef{"cosh", 1, "function(a) return luda.math.cosh(a) end", Bools::Refused},
    UfuncDef{"tanh", 1, "function(a) return luda.math.tanh(a) end", Bools::Refused},
    UfuncDef{"erf", 1, "function(a) return luda.math.erf(a) end", Bools::Refused},
    UfuncDef{"erfc", 1, "function(a) return luda.math.erfc(a) end", Bools::Refused},
    UfuncDef{"lgamma", 1, "function(a) return luda.math.lgamma(a) end", Bools::Refused},
    UfuncDef{"tgamma", 1, "function(a) return luda.math.tgamma(a) end", Bools::Refused},
    UfuncDef{"cbrt", 1, "function(a) return luda.math.cbrt(a) end", Bools::Refused},
    UfuncDef{"rsqrt", 1, "function(a) return luda.math.rsqrt(a) end", Bools::Refused},
    UfuncDef{"rint", 1, "function(a) return luda.math.rint(a) end", Bools::Refused},
    // NumPy's round(x, decimals), f = 10^|decimals| (ops::round): rint(x * f) / f for
    // decimals > 0 and rint(x / f) * f for decimals < 0, in x's float dtype, as NumPy's three
    // steps compute it. An integer stays as it is for decimals >= 0, else goes to the nearest
    // multiple of f, a half to the even multiple, computed exactly in its dtype.
    UfuncDef{"round_scaled",
             2,
             "function(a, f) return luda.math.rint(a * f) / f end",
             Bools::Refused,
             "function(a, f) return a end",
             {},
             false,
             "round"},
    UfuncDef{"round_coarse",
             2,
             "function(a, f) return luda.math.rint(a / f) * f end",
             Bools::Refused,
             "function(a, f) local q = a // f local r = a - q * f "
             "if r > f - r or (r == f - r and q % 2 ~= 0) then q = q + 1 end return q * f end",
             {},
             false,
             "round"},
    UfuncDef{"trunc", 1, "function(a) return luda.math.trunc(a) end", Bools::Refused},
    UfuncDef{"hypot", 2, "function(a, b) return luda.math.hypot(a, b) end", Bools::Refused},
    UfuncDef{"copysign", 2, "function(a, b) return luda.math.copysign(a, b) end", Bools::Refused},
    UfuncDef{"fma", 3, "function(a, b, c) return luda.math.fma(a, b, c) end", Bools::Refused},
    UfuncDef{"isnan", 1, "function(a) return luda.math.isnan(a) end", Bools::Refused},
    UfuncDef{"isinf", 1, "function(a) return luda.math.isinf(a) end", Bools::Refused},
    UfuncDef{"isfinite", 1, "function(a) return luda.math.isfinite(a) end", Bools::Refused},
    UfuncDef{"asinh", 1, "function(a) return luda.math.asinh(a) end", Bools::Refused},
    UfuncDef{"acosh", 1, "function(a) return luda.math.acosh(a) end", Bools::Refused},
    UfuncDef{"atanh", 1, "function(a) return luda.math.atanh(a) end", Bools::Refused},
    UfuncDef{"nextafter", 2, "function(a, b) return luda.math.nextafter(a, b) end", Bools::Refused},
    UfuncDef{"deg2rad", 1, "function(a) return math.rad(a) end", Bools::Refused},
    UfuncDef{"rad2deg", 1, "function(a) return math.deg(a) end", Bools::Refused},
    // NumPy's sign: -1, 0 or 1 in the operand's dtype; NaN stays NaN, -0.0 gives 0.0.
    UfuncDef{.name = "sign",
             .nin = 1,
             .text = "function(a) if a > 0 then return 1 elseif a < 0 then return -1 elseif a == 0 then return 0 end "
                     "return a end",
             .bools = Bools::Refused,
             .on_complex = "function(a) if a == 0 then return a end return a / math.abs(a) end"},
    UfuncDef{"square", 1, "function(a) return a * a end", Bools::Refused},
    // NumPy's integer reciprocal is C's 1 / x: 1 and -1 are their own, every other integer
    // gives 0 (0 too, where NumPy's is undefined).
    UfuncDef{"reciprocal", 1, "function(a) return 1 / a end", Bools::Refused,
             "function(a) if a == 1 then return a end if a < 0 then if a + 1 == 0 then return a end end "
             "return 0 end"},
    // minimum(maximum(x, lo), hi), as NumPy's clip: NaN in any operand propagates.
    UfuncDef{"clip", 3,
             "function(a, lo, hi) local m = lo if a > lo or a ~= a then m = a end "
             "if m < hi or m ~= m then return m end return hi end",
             Bools::Refused},
    // NaN is ignored unless both are NaN, as NumPy's fmax and fmin.
    UfuncDef{"fmax", 2, "function(a, b) if a > b or b ~= b then return a end return b end", Bools::AsUInt8},
    UfuncDef{"fmin", 2, "function(a, b) if a < b or b ~= b then return a end return b end", Bools::AsUInt8},
    UfuncDef{"bitwise_and", 2, "function(a, b) return a & b end", Bools::Own, {}, kAnd, true},
    UfuncDef{"bitwise_or", 2, "function(a, b) return a | b end", Bools::Own, {}, kOr, true},
    UfuncDef{"bitwise_xor", 2, "function(a, b) return a ~ b end", Bools::Own, {}, kXor, true},
    UfuncDef{"invert", 1, "function(a) return ~a end", Bools::Own, {}, kNot, true},
    // Lua's shifts: a count of the width or more gives 0, a negative count shifts the other
    // way. A negative integer shifts right arithmetically, as NumPy's (-8 >> 1 is -4).
    UfuncDef{"left_shift", 2, "function(a, b) return a << b end", Bools::Refused, {}, {}, true},
    UfuncDef{"right_shift",
             2,
             "function(a, b) if a < 0 then return ~(~a >> b) end return a >> b end",
             Bools::Refused,
             {},
             {},
             true},
    UfuncDef{"logical_and", 2, "function(a, b) return a ~= 0 and b ~= 0 end", Bools::Own, {}, kAnd},
    UfuncDef{"logical_or", 2, "function(a, b) return a ~= 0 or b ~= 0 end", Bools::Own, {}, kOr},
    UfuncDef{"logical_xor", 2, "function(a, b) return (a ~= 0) ~= (b ~= 0) end", Bools::Own, {}, kXor},
    UfuncDef{"logical_not", 1, "function(a) return a == 0 end", Bools::Own, {}, kNot},
    // A complex's parts, conjugate and argument; a real number is its own real part and
    // conjugate, with an imaginary part of 0 and an angle of 0 or pi (NumPy's).
    UfuncDef{"real", 1, "function(a) return luda.real(a) end", Bools::Refused},
    UfuncDef{"imag", 1, "function(a) return luda.imag(a) end", Bools::Refused},
    UfuncDef{"conj", 1, "function(a) return luda.conj(a) end", Bools::Refused},
    UfuncDef{"angle", 1, "function(a) return luda.angle(a) end", Bools::Refused},
};

constexpr auto kNames = [] {
  std::array<std::string_view, kUfuncs.size()> names{};
  for (std::size_t i = 0; i < kUfuncs.size(); ++i) names[i] = kUfuncs[i].name;
  return names;
}();

const UfuncDef* find_ufunc(std::string_view name) {
  for (const UfuncDef& d : kUfuncs)
    if (d.name == name) return &d;
  return nullptr;
}

// The kernel-language type of one operand, as the kinds type it: arrays and typed scalars
// strong, Lua numbers weak.
dsl::Type operand_type(const jit::KernelArg& a) {
  switch (a.kind) {
    case jit::KernelArg::Kind::Array: return dsl::Type::scalar_of(to_scalar_kind(a.array->dtype()));
    case jit::KernelArg::Kind::Typed: return dsl::Type::scalar_of(to_scalar_kind(a.typed.dtype), a.typed.weak);
    case jit::KernelArg::Kind::Int: return dsl::Type::scalar_of(dsl::Scalar::Int64, true);
    case jit::KernelArg::Kind::Float: return dsl::Type::scalar_of(dsl::Scalar::Float64, true);
    case jit::KernelArg::Kind::Bool: return dsl::Type::scalar_of(dsl::Scalar::Bool);
  }
  return {};
}

bool is_comparison(std::string_view name) {
  constexpr std::array<std::string_view, 6> comparisons = {"less",          "greater", "less_equal",
                                                           "greater_equal", "equal",   "not_equal"};
  return std::find(comparisons.begin(), comparisons.end(), name) != comparisons.end();
}

// The Lua text of an AsUInt8 operation on bools: its operands converted first.
std::string bool_text(const UfuncDef& def) {
  constexpr std::string_view head = "function(a, b)";
  LUDA_INTERNAL_CHECK(def.text.starts_with(head));
  return "function(p, q) local a, b = luda.uint8(p), luda.uint8(q)" + std::string(def.text.substr(head.size()));
}

// An operation's function source texts: its text, and those for integer, bool and complex
// operands.
struct UfuncSources {
  dsl::FunctionSource text, on_ints, on_bools, on_complex;
};

bool real_only(const UfuncDef& def) {
  return def.integral || std::find(kRealOnly.begin(), kRealOnly.end(), def.name) != kRealOnly.end();
}

jit::ElementCode ufunc_code(const UfuncDef& def, const UfuncSources& sources, std::span<const dsl::Type> inputs,
                            dsl::Target target) {
  std::string who = fmt::format("ufunc '{}'", def.who());
  LUDA_INTERNAL_CHECK(static_cast<int>(inputs.size()) == def.nin);
  // where(c, x, y): c is read as a bool; x and y promote together.
  std::size_t first = def.bools == Bools::Allowed ? 1 : 0;
  dsl::Scalar common = numpy_result(inputs.subspan(first));
  if (def.integral && (dsl::is_float(common) || dsl::is_complex(common)))
    fail("{} is not defined for {} operands, only integers and bools; convert them first (x:astype(\"int64\"))", who,
         dsl::scalar_name(common));
  if (dsl::is_complex(common) && real_only(def))
    fail("{} is not defined for {} operands (NumPy's is not supported for complex input types either); convert "
         "them first (luda.real(x), x:astype(\"float64\"))",
         who, dsl::scalar_name(common));
  bool as_uint8 = false;
  const dsl::FunctionSource* source = &sources.text;
  if (dsl::is_complex(common) && !def.on_complex.empty()) {
    source = &sources.on_complex;
  } else if (common == dsl::Scalar::Bool) {
    if (def.bools == Bools::Refused && !def.bools_refused.empty()) fail("{}: {}", who, def.bools_refused);
    if (def.bools == Bools::Refused)
      fail("{} is not defined for bool operands; convert them first (x:astype(\"int64\"))", who);
    as_uint8 = def.bools == Bools::AsUInt8;
    if (def.bools == Bools::AsUInt8 || def.bools == Bools::Own) source = &sources.on_bools;
  } else if (dsl::is_integer(common) && !def.on_ints.empty()) {
    source = &sources.on_ints;
  }
  std::vector<dsl::Type> params(inputs.size(), dsl::Type::scalar_of(common));
  if (first) params[0] = dsl::Type::scalar_of(dsl::Scalar::Bool);
  // A Lua integer stays weak: inside the function it meets the other operands as NumPy 2
  // makes a Python int meet an array. It takes their integer dtype and must fit it (the
  // call checks, jit::ElementCode::weak_int_uses: uint8 + 300 raises), becomes a float
  // where the operation computes in float (divide, atan2, hypot: int8 / 1000 is 0.003 as
  // float64), and a comparison compares its value (int8 < 1000 is true).
  bool comparison = is_comparison(def.name);
  bool any_float = false;
  for (const dsl::Type& t : inputs) any_float = any_float || dsl::is_float(t.scalar);
  for (std::size_t k = first; k < inputs.size() && !as_uint8; ++k) {
    const dsl::Type& t = inputs[k];
    if (t.weak && dsl::is_integer(t.scalar)) params[k] = t;
    // Integers compare by value, each in its own dtype: int64 against uint64 exactly
    // (NumPy 2) rather than in their common float64.
    else if (comparison && !any_float && dsl::is_integer(t.scalar)) params[k] = t;
  }
  dsl::DeviceFunctionRequest f;
  f.function = *source;
  f.name = std::string(def.who());
  f.params = std::move(params);
  f.options.target = target;
  jit::ElementCode code = element_code(f, builtin_environment(), who);
  if (as_uint8 && code.outputs[0] == dsl::Scalar::UInt8) code.outputs[0] = dsl::Scalar::Bool;  // minimum, maximum
  for (dsl::WeakIntUse& use : code.weak_int_uses) use.where.clear();  // the operation's own text: not the user's
  // NumPy's bitwise operations take every operand in the common dtype, a shift's count
  // too (left_shift(uint8, 300) raises), where the text leaves the count as it is.
  for (std::size_t k = first; k < inputs.size() && def.integral && dsl::is_integer(common); ++k) {
    bool noted = false;
    for (const dsl::WeakIntUse& use : code.weak_int_uses) noted = noted || use.param == static_cast<int>(k);
    if (!noted && inputs[k].weak && dsl::is_integer(inputs[k].scalar))
      code.weak_int_uses.push_back(dsl::WeakIntUse{static_cast<int>(k), common, ""});
  }
  return code;
}

// The operations' kinds, made at first use and kept for the process: their compiled
// modules are reused by every lua_State, and never unloaded at exit (after the driver).
struct Registry {
  std::mutex mutex;
  std::map<std::string, jit::ElementwiseKind*, std::less<>> ufuncs;
  std::map<std::string, jit::ReductionKind*, std::less<>> reductions;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: see above
  return *r;
}

std::vector<std::string> input_names(int nin, bool where) {
  if (where) return {"condition", "x", "y"};
  if (nin == 1) return {"x"};
  std::vector<std::string> names;
  for (int i = 1; i <= nin; ++i) names.push_back(fmt::format("x{}", i));
  return names;
}

// ---- reductions ------------------------------------------------------------------------

std::string returns(const std::string& expr) { return fmt::format("function() return {} end", expr); }
std::string zero(dsl::Scalar t, int v = 0) { return returns(fmt::format("luda.{}({})", dsl::scalar_name(t), v)); }

constexpr std::string_view kSum = "function(a, b) return a + b end";
constexpr std::string_view kIdentityPost = "function(a) return a end";

// A reduction kind's code from Lua source text: map(<inputs as map_params>, _j),
// reduce(a, b), post(a, <post inputs>), identity().
struct ReductionTexts {
  std::string map, reduce, post, identity;
  std::vector<dsl::Type> map_params;
  std::vector<int> post_inputs;
  dsl::Scalar reduce_type = dsl::Scalar::Float64;
  dsl::Scalar output = dsl::Scalar::Float64;
};

jit::ReductionCode reduction_code(const ReductionTexts& t, std::string_view name, dsl::Target target) {
  std::string who = fmt::format("reduction '{}'", name);
  jit::ReductionCode code;
  auto compile = [&](const std::string& text, std::string_view part, std::vector<dsl::Type> params) {
    dsl::FunctionSource source = source_text_function(text);
    dsl::DeviceFunctionRequest f;
    f.function = source;
    f.name = fmt::format("{}_{}", name, part);
    f.params = std::move(params);
    f.options.target = target;
    dsl::DeviceFunction df = compile_scalar_function(f, builtin_environment(), who);
    code.functions += df.code;
    code.typed += df.typed;
    code.chunks.push_back(source.chunk);
    for (std::string& o : df.nvrtc_options)
      if (std::find(code.nvrtc_options.begin(), code.nvrtc_options.end(), o) == code.nvrtc_options.end())
        code.nvrtc_options.push_back(std::move(o));
    return df.c_name;
  };
  dsl::Type rt = dsl::Type::scalar_of(t.reduce_type);
  std::vector<dsl::Type> map_params = t.map_params;
  map_params.push_back(dsl::Type::scalar_of(dsl::Scalar::Int64));
  code.map = compile(t.map, "map", map_params);
  code.reduce = compile(t.reduce, "reduce", {rt, rt});
  std::vector<dsl::Type> post_params = {rt};
  for (int k : t.post_inputs) post_params.push_back(t.map_params[static_cast<std::size_t>(k)]);
  code.post = compile(t.post, "post", post_params);
  code.identity = compile(t.identity, "identity", {});
  code.map_params = t.map_params;
  code.post_inputs = t.post_inputs;
  code.reduce_type = t.reduce_type;
  code.outputs = {t.output};
  return code;
}

// Whether elements of `s` can be NaN: floats and complex numbers (the nan forms skip them).
bool holds_nan(dsl::Scalar s) { return dsl::is_float(s) || dsl::is_complex(s); }

// Is op a nan form, and the plain form it skips NaN for (NanSum -> Sum; Sum -> Sum).
bool is_nan_form(Reduce op) { return op >= Reduce::NanSum; }
Reduce plain_form(Reduce op) {
  return is_nan_form(op) ? static_cast<Reduce>(static_cast<int>(op) - static_cast<int>(Reduce::NanSum)) : op;
}

// One reduction kind: an operation ("sum" ... "nanmin", "mean", "argfirst", "nanargfirst",
// "nancount", "dot") with dtype= and initial= (an input after x, folded in by post()).
struct KindSpec {
  std::string_view name;  // static text
  std::optional<dsl::Scalar> dtype = std::nullopt;
  bool initial = false;
  // "sum", "sum:float64+initial": the registry's key, written into `buffer` (a call
  // allocates nothing to look its kind up).
  std::string_view key(std::array<char, 64>& buffer) const {
    if (!dtype && !initial) return name;
    std::size_t n = 0;
    auto put = [&](std::string_view part) {
      LUDA_INTERNAL_CHECK(n + part.size() <= buffer.size());
      std::copy(part.begin(), part.end(), buffer.data() + n);
      n += part.size();
    };
    put(name);
    if (dtype) put(":"), put(dsl::scalar_name(*dtype));
    if (initial) put("+initial");
    return {buffer.data(), n};
  }
};

// The kinds of the reductions: sum prod max min mean and the nan forms on floats (nansum
// and nanprod map NaN to 0 and 1; nanmax and nanmin reduce by fmax and fmin, whose
// identity NaN keeps an all-NaN row NaN), argfirst (the first index whose element equals
// the reduced extreme: argmax and argmin after max and min), nanargfirst (the same with
// NaN read as the fill input, as NumPy's nanargmax reads it as -inf), nancount (the
// elements that are not NaN: nanmean's divisor), and dot.
ReductionTexts reduction_texts(const KindSpec& k, std::span<const dsl::Type> inputs) {
  ReductionTexts t;
  t.post = kIdentityPost;
  dsl::Scalar x = strong(inputs[0]).scalar;
  std::optional<Reduce> op = parse_reduce(k.name);
  if (op && plain_form(*op) != Reduce::Mean) {
    Reduce plain = plain_form(*op);
    LUDA_INTERNAL_CHECK(plain != Reduce::Argmax && plain != Reduce::Argmin);
    ReduceParts p = reduce_parts(plain, x);
    if (k.dtype) {
      p.output = *k.dtype;
      p.reduce_type = dsl::compute_type(*k.dtype);
      p.identity = zero(p.reduce_type, plain == Reduce::Prod ? 1 : 0);
    }
    t.map = "function(a, _j) return a end";
    t.map_params = {dsl::Type::scalar_of(p.reduce_type)};
    if (is_nan_form(*op) && holds_nan(x)) {
      t.map_params = {dsl::Type::scalar_of(x)};
      std::string_view r = dsl::scalar_name(p.reduce_type);
      if (plain == Reduce::Sum || plain == Reduce::Prod) {
        t.map = fmt::format("function(a, _j) if a ~= a then return luda.{}({}) end return luda.{}(a) end", r,
                            plain == Reduce::Sum ? 0 : 1, r);
      } else {
        p.reduce = fmt::format("function(a, b) if a {} b or b ~= b then return a end return b end",
                               plain == Reduce::Max ? ">" : "<");
        p.identity = returns(fmt::format("luda.{}(0 / 0)", r));
      }
    }
    if (k.initial) {  // post(a, initial) = reduce(a, initial), once per result
      t.map.replace(t.map.find("_j)"), 3, "_initial, _j)");
      t.map_params.push_back(dsl::Type::scalar_of(p.reduce_type));
      t.post = p.reduce;
      t.post_inputs = {1};
    }
    t.reduce = p.reduce;
    t.identity = p.identity;
    t.reduce_type = p.reduce_type;
    t.output = p.output;
  } else if (op) {  // mean; nanmean of integers and bools
    // float16 and bfloat16 sum and divide in float32 (NumPy's mean of float16 does); a
    // complex sum is divided by the count as its real type.
    dsl::Scalar out = k.dtype ? *k.dtype : holds_nan(x) ? x : dsl::Scalar::Float64;
    dsl::Scalar r = dsl::compute_type(out);
    t.map = "function(a, n, _j) return a end";
    t.map_params = {dsl::Type::scalar_of(r), dsl::Type::scalar_of(dsl::real_part(r))};
    t.reduce = kSum;
    t.post = "function(a, n) return a / n end";
    t.post_inputs = {1};
    t.identity = zero(r);
    t.reduce_type = r;
    t.output = out;
  } else if (k.name == "argfirst" || k.name == "nanargfirst") {
    dsl::Scalar r = x == dsl::Scalar::Bool ? dsl::Scalar::UInt8 : x;
    if (k.name == "argfirst") {
      t.map = "function(a, m, j) if a == m or (a ~= a and m ~= m) then return j end return math.maxinteger end";
      t.map_params = {dsl::Type::scalar_of(r), dsl::Type::scalar_of(r)};
    } else {
      t.map = "function(a, m, fill, j) local v = a if v ~= v then v = fill end "
              "if v == m then return j end return math.maxinteger end";
      t.map_params = {dsl::Type::scalar_of(r), dsl::Type::scalar_of(r), dsl::Type::scalar_of(r)};
    }
    t.reduce = "function(a, b) if b < a then return b end return a end";
    t.identity = returns("math.maxinteger");
    t.reduce_type = t.output = dsl::Scalar::Int64;
  } else if (k.name == "nancount") {
    t.map = "function(a, _j) if a ~= a then return 0 end return 1 end";
    t.map_params = {dsl::Type::scalar_of(x)};
    t.reduce = kSum;
    t.identity = returns("0");
    t.reduce_type = t.output = dsl::Scalar::Int64;
  } else if (k.name == "dot") {
    dsl::Scalar r = numpy_result(inputs);
    bool boolean = r == dsl::Scalar::Bool;  // NumPy: any(x and y), here max(x * y) on 0/1
    if (boolean) r = dsl::Scalar::UInt8;
    t.map = "function(a, b, _j) return a * b end";
    t.map_params = {dsl::Type::scalar_of(r), dsl::Type::scalar_of(r)};
    t.reduce = boolean ? reduce_parts(Reduce::Max, r).reduce : std::string(kSum);
    t.identity = zero(r);
    t.reduce_type = r;
    t.output = boolean ? dsl::Scalar::Bool : r;
  } else {
    LUDA_INTERNAL_CHECK(!"unknown reduction");
  }
  return t;
}

jit::ReductionKind& reduction_kind(const KindSpec& spec) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::array<char, 64> buffer;
  std::string_view key = spec.key(buffer);
  if (auto it = r.reductions.find(key); it != r.reductions.end()) return *it->second;
  jit::ReductionSetup setup;
  setup.kind = "reduction";
  setup.name = std::string(spec.name);
  std::optional<Reduce> op = parse_reduce(spec.name);
  // max and min with initial= have an identity: the initial value.
  if (op && !spec.initial) setup.no_identity = no_identity(plain_form(*op));
  if (op && plain_form(*op) == Reduce::Mean) setup.in_names = {"x", "count"};
  else if (spec.name == "argfirst") setup.in_names = {"x", "extreme"};
  else if (spec.name == "nanargfirst") setup.in_names = {"x", "extreme", "fill"};
  else if (spec.name == "dot") setup.in_names = {"x", "y"};
  else if (spec.initial) setup.in_names = {"x", "initial"};
  else setup.in_names = {"x"};
  setup.out_names = {"out"};
  setup.frontend = [spec](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                          dsl::Target target) {
    return reduction_code(reduction_texts(spec, inputs), spec.name, target);
  };
  auto* kind = new jit::ReductionKind(std::move(setup));  // kept for the process (Registry)
  r.reductions.emplace(std::string(key), kind);
  return *kind;
}

std::int64_t product(const Shape& shape, const std::optional<std::vector<int>>& axes, bool reduced) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    bool in = !axes || std::find(axes->begin(), axes->end(), static_cast<int>(d)) != axes->end();
    if (in == reduced) n *= shape[d];
  }
  return n;
}

}  // namespace

std::span<const std::string_view> ufunc_names() { return kNames; }

int ufunc_inputs(std::string_view name) {
  const UfuncDef* d = find_ufunc(name);
  return d ? d->nin : 0;
}

jit::ElementwiseKind& ufunc(std::string_view name) {
  const UfuncDef* def = find_ufunc(name);
  if (!def) fail("no array operation '{}' (there are: {})", name, fmt::join(kNames, ", "));
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.ufuncs.find(name); it != r.ufuncs.end()) return *it->second;
  jit::ElementwiseSetup setup;
  setup.kind = "ufunc";
  setup.name = std::string(def->who());
  setup.in_names = input_names(def->nin, def->bools == Bools::Allowed);
  setup.out_names = {"out"};
  setup.raw.assign(static_cast<std::size_t>(def->nin), false);
  setup.out_read = {false};
  auto text = [](std::string_view t) { return source_text_function(std::string(t)); };
  std::string bools = def->bools == Bools::AsUInt8 ? bool_text(*def) : std::string(def->on_bools);
  auto sources = std::make_shared<const UfuncSources>(
      UfuncSources{text(def->text), text(def->on_ints.empty() ? def->text : def->on_ints),
                   text(bools.empty() ? def->text : bools),
                   text(def->on_complex.empty() ? def->text : def->on_complex)});
  setup.frontend = [def, sources](std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>>,
                                  dsl::Target target) { return ufunc_code(*def, *sources, inputs, target); };
  auto* kind = new jit::ElementwiseKind(std::move(setup));  // kept for the process (Registry)
  r.ufuncs.emplace(std::string(def->name), kind);
  return *kind;
}

void apply(std::string_view name, std::span<const jit::KernelArg> inputs, NDArray& out, const Stream* stream) {
  jit::ElementwiseKind& kind = ufunc(name);
  const UfuncDef& def = *find_ufunc(name);
  if (static_cast<int>(inputs.size()) != def.nin)
    fail("ufunc '{}' takes {} operand{}, got {}", def.who(), def.nin, def.nin == 1 ? "" : "s", inputs.size());
  // A Lua boolean among numbers is the number 0 or 1, as NumPy's True (x & true). clip's
  // bounds: NumPy 2 clips a Python int bound to the array's integer range first
  // (clip(int8, -5, 1000) is clip(int8, -5, 127)), where every other operation raises.
  std::array<jit::KernelArg, 3> replaced;
  auto replace = [&](std::size_t k, const jit::KernelArg& a) {
    if (inputs.data() != replaced.data()) std::copy(inputs.begin(), inputs.end(), replaced.begin());
    replaced[k] = a;
    inputs = std::span<const jit::KernelArg>(replaced.data(), inputs.size());
  };
  if (def.bools != Bools::Allowed) {
    std::array<dsl::Type, 3> types;
    for (std::size_t k = 0; k < inputs.size(); ++k) types[k] = operand_type(inputs[k]);
    dsl::Scalar r = numpy_result(std::span<const dsl::Type>(types.data(), inputs.size()));
    for (std::size_t k = 0; k < inputs.size() && r != dsl::Scalar::Bool; ++k)
      if (inputs[k].kind == jit::KernelArg::Kind::Bool) replace(k, jit::KernelArg::of_int(inputs[k].b ? 1 : 0));
    for (std::size_t k = 1; k < inputs.size() && def.name == "clip" && dsl::is_integer(r); ++k) {
      const jit::KernelArg& a = inputs[k];
      if (a.kind != jit::KernelArg::Kind::Int || integer_fits(a.i, to_dtype(r))) continue;
      IntegerRange range = integer_range(to_dtype(r));
      replace(k, jit::KernelArg::of_int(a.i < 0 ? range.lo : static_cast<std::int64_t>(range.hi)));
    }
  }
  kind.call(inputs, std::span<NDArray>(&out, 1), stream);
}

NDArray apply(std::string_view name, std::span<const jit::KernelArg> inputs, const Stream* stream) {
  NDArray out;
  apply(name, inputs, out, stream);
  return out;
}

bool is_step(std::string_view name) { return name == "round_scaled" || name == "round_coarse"; }

void round(const jit::KernelArg& x, std::int64_t decimals, NDArray& out, const Stream* stream) {
  dsl::Scalar t = strong(operand_type(x)).scalar;
  if (t == dsl::Scalar::Bool)
    fail("ufunc 'round' is not defined for bool operands; convert them first (x:astype(\"int64\"))");
  bool integer = dsl::is_integer(t);
  if (decimals == 0 && !integer) return apply("rint", {&x, 1}, out, stream);
  if (decimals >= 0 && integer) {
    std::array<jit::KernelArg, 2> in = {x, jit::KernelArg::of_int(1)};
    return apply("round_scaled", in, out, stream);
  }
  // NumPy's power_of_ten: exact to 10^22, then rounded step by step (inf past 10^308).
  std::uint64_t k = decimals < 0 ? 0 - static_cast<std::uint64_t>(decimals) : static_cast<std::uint64_t>(decimals);
  std::array<jit::KernelArg, 2> in = {x, jit::KernelArg::of_int(1)};
  if (integer) {
    std::int64_t f = 1;
    bool fits = true;
    for (std::uint64_t i = 0; i < k && fits; ++i) fits = !__builtin_mul_overflow(f, 10, &f);
    // Past the dtype's range, 10^k is more than twice every element: all round to 0.
    if (!fits || !integer_fits(f, to_dtype(t))) {
      in[1] = jit::KernelArg::of_int(0);
      return apply("multiply", in, out, stream);
    }
    in[1] = jit::KernelArg::of_int(f);
  } else {
    double f = 1;
    for (std::uint64_t i = 0; i < k && f != std::numeric_limits<double>::infinity(); ++i) f *= 10;
    in[1] = k <= 18 ? jit::KernelArg::of_int(static_cast<std::int64_t>(f)) : jit::KernelArg::of_float(f);
  }
  apply(decimals > 0 ? "round_scaled" : "round_coarse", in, out, stream);
}

std::vector<int> normalize_axes(std::span<const std::int64_t> given, int ndim, std::string_view who) {
  std::vector<int> axes;
  for (std::int64_t ax : given) {
    if (ax == 0 || ax > ndim || ax < -ndim)
      fail("{}: axis {} is out of range for a {}-d array (axes are 1 to {}, or -1 for the last)", who, ax, ndim, ndim);
    int a = static_cast<int>(ax > 0 ? ax - 1 : ndim + ax);
    if (std::find(axes.begin(), axes.end(), a) != axes.end()) fail("{}: axis {} is repeated", who, a + 1);
    axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

bool takes_dtype(Reduce op) {
  Reduce p = plain_form(op);
  return p == Reduce::Sum || p == Reduce::Prod || p == Reduce::Mean;
}

bool takes_initial(Reduce op) {
  Reduce p = plain_form(op);
  return p == Reduce::Sum || p == Reduce::Prod || p == Reduce::Max || p == Reduce::Min;
}

NDArray reduce(Reduce op, const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims, NDArray out,
               const Stream* stream, const ReduceOptions& options) {
  std::string_view name = reduce_name(op);
  if (!x.valid()) fail("{}: the array is an empty handle", name);
  if (axes)
    for (int a : *axes) LUDA_INTERNAL_CHECK(a >= 0 && a < x.ndim());
  LUDA_INTERNAL_CHECK((!options.dtype || takes_dtype(op)) && (!options.initial || takes_initial(op)));
  // The nan forms skip NaN, which only floats hold; on integers and bools they are the
  // plain forms (as NumPy's).
  Reduce plain = plain_form(op);
  bool nan = is_nan_form(op) && holds_nan(to_scalar_kind(x.dtype()));
  std::optional<dsl::Scalar> dtype;
  if (options.dtype) {
    dtype = to_scalar_kind(*options.dtype);
    if (plain == Reduce::Mean && !holds_nan(*dtype))
      fail("{}: dtype must be a float or complex dtype (float16, bfloat16, float32, float64, complex64 or complex128), "
           "got {}",
           name, dsl::scalar_name(*dtype));
    if (*dtype == dsl::Scalar::Bool) fail("{}: dtype bool is not supported; use an integer or float dtype", name);
  }
  // A Lua integer initial takes the result's dtype and must fit it (NumPy 2's OverflowError).
  if (options.initial && options.initial->kind == jit::KernelArg::Kind::Int) {
    dsl::Scalar r = dtype ? *dtype : reduce_parts(plain, to_scalar_kind(x.dtype())).output;
    if (dsl::is_integer(r) && !integer_fits(options.initial->i, to_dtype(r)))
      fail("{}: initial: Lua integer {} out of bounds for {}; pass a typed scalar or convert the array first "
           "(x:astype(\"int64\"))",
           name, options.initial->i, dsl::scalar_name(r));
  }
  bool arg = plain == Reduce::Argmax || plain == Reduce::Argmin;
  if (arg && axes && axes->size() != 1)
    fail("{}: takes one axis or none (the flattened array), got {} axes", name, axes->size());
  // NumPy's rule: an empty reduced axis is an error for an operation with no identity,
  // even where the result is empty too; initial= gives max and min one.
  std::int64_t count = product(x.shape(), axes, true);
  if (count == 0) {
    if (arg) fail("{}: attempt to get {} of an empty sequence", name, reduce_name(plain));
    if ((plain == Reduce::Max || plain == Reduce::Min) && !options.initial)
      fail("{}: zero-size array to reduction operation {} which has no identity", name,
           nan ? (plain == Reduce::Max ? "fmax" : "fmin") : no_identity(plain));
  }
  std::array<jit::KernelArg, 3> in = {jit::KernelArg::of_array(x), jit::KernelArg::of_int(count)};
  std::size_t nin = 1;
  KindSpec kind{reduce_name(nan ? op : plain), dtype, options.initial.has_value()};
  NDArray extreme;
  if (plain == Reduce::Mean && nan) {
    // NumPy's nanmean: the sum of the elements that are not NaN over their count,
    // divided in float64 and converted to the result's dtype (float32 stays float32).
    dsl::Scalar r = dtype ? *dtype : to_scalar_kind(x.dtype());
    NDArray sum = reduce(Reduce::NanSum, x, axes, keepdims, {}, stream, {to_dtype(r), std::nullopt});
    NDArray counts;
    reduction_kind({"nancount"})
        .call(std::span<const jit::KernelArg>(in.data(), 1), std::span<NDArray>(&counts, 1), axes, keepdims, stream);
    std::array<jit::KernelArg, 2> q = {jit::KernelArg::of_array(sum), jit::KernelArg::of_array(counts)};
    NDArray quotient = apply("divide", q, stream);
    if (quotient.dtype() == to_dtype(r)) return deliver(std::move(quotient), std::move(out), name, stream);
    if (stream) stream->synchronize();  // astype() copies on the default stream, which a luda stream does not wait for
    return deliver(quotient.astype(to_dtype(r)), std::move(out), name, stream);
  }
  if (plain == Reduce::Mean) {
    nin = 2;
  } else if (arg) {
    Reduce extreme_op = plain == Reduce::Argmax ? (nan ? Reduce::NanMax : Reduce::Max)
                                                : (nan ? Reduce::NanMin : Reduce::Min);
    extreme = reduce(extreme_op, x, axes, true, {}, stream);
    in[1] = jit::KernelArg::of_array(extreme);
    nin = 2;
    kind = {"argfirst"};
    if (nan) {
      // NumPy's nanargmax reads NaN as -inf (nanargmin as +inf) and refuses a row of NaN
      // only; the check reads one flag back from the device.
      std::array<jit::KernelArg, 1> e = {jit::KernelArg::of_array(extreme)};
      NDArray all_nan = reduce(Reduce::Max, apply("isnan", e, stream), std::nullopt, false, {}, stream);
      if (stream) stream->synchronize();
      if (all_nan.get({}).v.b) fail("{}: All-NaN slice encountered", name);
      in[2] = jit::KernelArg::of_float(plain == Reduce::Argmax ? -HUGE_VAL : HUGE_VAL);
      nin = 3;
      kind = {"nanargfirst"};
    }
  } else if (options.initial) {
    in[1] = *options.initial;
    if (in[1].kind == jit::KernelArg::Kind::Bool) in[1] = jit::KernelArg::of_int(in[1].b ? 1 : 0);  // True is 1
    nin = 2;
  }
  reduction_kind(kind).call(std::span<const jit::KernelArg>(in.data(), nin), std::span<NDArray>(&out, 1), axes,
                            keepdims, stream);
  return out;
}

NDArray moment(bool root, bool nan, const NDArray& x, const std::optional<std::vector<int>>& axes, bool keepdims,
               double ddof, std::optional<DType> dtype, NDArray out, const Stream* stream) {
  std::string_view name = nan ? (root ? "nanstd" : "nanvar") : (root ? "std" : "var");
  if (!x.valid()) fail("{}: the array is an empty handle", name);
  dsl::Scalar element = to_scalar_kind(x.dtype());
  if (dtype && !dsl::is_float(to_scalar_kind(*dtype)))
    fail("{}: dtype must be a float dtype (float16, bfloat16, float32 or float64), got {}", name, dtype_name(*dtype));
  const bool complex = dsl::is_complex(element);
  nan = nan && holds_nan(element);
  // Real results: a complex array's are of its parts' type (NumPy's var of complex64 is
  // float32), its mean complex.
  DType r = dtype ? *dtype : dsl::is_float(element) ? x.dtype() : complex ? real_dtype(x.dtype()) : DType::Float64;
  DType in = complex ? promote_types(x.dtype(), r) : r;
  auto arg = [](const NDArray& a) { return jit::KernelArg::of_array(a); };
  // As NumPy computes them: the deviations from the mean, squared (|d|^2 = re^2 + im^2 for
  // complex), summed in r.
  NDArray mean = reduce(nan ? Reduce::NanMean : Reduce::Mean, x, axes, true, {}, stream, {in, std::nullopt});
  std::array<jit::KernelArg, 2> xm = {arg(x), arg(mean)};
  NDArray deviations = apply("subtract", xm, stream);
  std::array<jit::KernelArg, 1> d = {arg(deviations)};
  NDArray squares;
  if (complex) {
    NDArray re = apply("real", d, stream), im = apply("imag", d, stream);
    std::array<jit::KernelArg, 1> r = {arg(re)}, i = {arg(im)};
    NDArray re2 = apply("square", r, stream), im2 = apply("square", i, stream);
    std::array<jit::KernelArg, 2> both = {arg(re2), arg(im2)};
    squares = apply("add", both, stream);
  } else {
    squares = apply("square", d, stream);
  }
  NDArray sum = reduce(nan ? Reduce::NanSum : Reduce::Sum, squares, axes, keepdims, {}, stream, {r, std::nullopt});
  NDArray quotient;
  if (nan) {
    std::array<jit::KernelArg, 1> in = {arg(x)};
    NDArray counts;
    reduction_kind({"nancount"}).call(in, std::span<NDArray>(&counts, 1), axes, keepdims, stream);
    std::array<jit::KernelArg, 2> c = {arg(counts), jit::KernelArg::of_float(ddof)};
    NDArray dof = apply("subtract", c, stream);
    std::array<jit::KernelArg, 2> z = {arg(dof), jit::KernelArg::of_float(0.0)};
    dof = apply("maximum", z, stream);
    std::array<jit::KernelArg, 2> q = {arg(sum), arg(dof)};
    quotient = apply("divide", q, stream);  // in float64, converted below (NumPy's unsafe cast)
  } else {
    double dof = std::max(static_cast<double>(product(x.shape(), axes, true)) - ddof, 0.0);
    std::array<jit::KernelArg, 2> q = {arg(sum), jit::KernelArg::of_float(dof)};
    quotient = apply("divide", q, stream);
  }
  if (root) {
    std::array<jit::KernelArg, 1> v = {arg(quotient)};
    quotient = apply("sqrt", v, stream);
  }
  if (quotient.dtype() != r) {
    if (stream) stream->synchronize();  // astype() copies on the default stream, which a luda stream does not wait for
    quotient = quotient.astype(r);
  }
  return deliver(std::move(quotient), std::move(out), name, stream);
}

NDArray vector_dot(const NDArray& x, const NDArray& y, NDArray out, const Stream* stream, std::string_view who) {
  if (!x.valid() || !y.valid()) fail("{}: an array is an empty handle", who);
  LUDA_INTERNAL_CHECK(x.ndim() == 1 && y.ndim() == 1);
  if (x.shape()[0] != y.shape()[0])
    fail("{}: shapes {} and {} not aligned: {} (axis 1) != {} (axis 1)", who, shape_str(x.shape()),
         shape_str(y.shape()), x.shape()[0], y.shape()[0]);
  std::array<jit::KernelArg, 2> in = {jit::KernelArg::of_array(x), jit::KernelArg::of_array(y)};
  reduction_kind({"dot"}).call(in, std::span<NDArray>(&out, 1), std::nullopt, false, stream);
  return out;
}

}  // namespace luda::ops

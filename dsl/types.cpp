#include "dsl/types.h"

#include <array>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "luda_float16_text.h"  // runtime/float16.h's functions, for constants (generated)

namespace luda::dsl {
namespace {

struct ScalarInfo {
  std::string_view name;
  const char* c_type;
  int bits;
  bool is_signed;  // signed integers, floats and complex
  bool is_float;   // real floats
};

// ORDER SCALAR
constexpr std::array<ScalarInfo, kNumScalars> kScalars = {{
    {"bool", "bool", 8, false, false},
    {"int8", "signed char", 8, true, false},
    {"int16", "short", 16, true, false},
    {"int32", "int", 32, true, false},
    {"int64", "long long", 64, true, false},
    {"uint8", "unsigned char", 8, false, false},
    {"uint16", "unsigned short", 16, false, false},
    {"uint32", "unsigned int", 32, false, false},
    {"uint64", "unsigned long long", 64, false, false},
    {"float32", "float", 32, true, true},
    {"float64", "double", 64, true, true},
    {"float16", "luda_half", 16, true, true},
    {"bfloat16", "luda_bfloat16", 16, true, true},
    {"complex64", "luda_complex64", 64, true, false},
    {"complex128", "luda_complex128", 128, true, false},
}};

const ScalarInfo& info(Scalar s) { return kScalars[static_cast<std::size_t>(s)]; }

Scalar int_of(int bits, bool is_signed) {
  switch (bits) {
    case 8: return is_signed ? Scalar::Int8 : Scalar::UInt8;
    case 16: return is_signed ? Scalar::Int16 : Scalar::UInt16;
    case 32: return is_signed ? Scalar::Int32 : Scalar::UInt32;
    default: return is_signed ? Scalar::Int64 : Scalar::UInt64;
  }
}

}  // namespace

std::string_view scalar_name(Scalar s) { return info(s).name; }

std::optional<Scalar> parse_scalar(std::string_view name) {
  for (std::size_t i = 0; i < kScalars.size(); ++i)
    if (kScalars[i].name == name) return static_cast<Scalar>(i);
  return std::nullopt;
}

const char* scalar_c_type(Scalar s) { return info(s).c_type; }
int scalar_bits(Scalar s) { return info(s).bits; }
bool is_float(Scalar s) { return info(s).is_float; }
bool is_signed(Scalar s) { return info(s).is_signed; }
bool is_complex(Scalar s) { return s == Scalar::Complex64 || s == Scalar::Complex128; }
bool is_integer(Scalar s) { return s != Scalar::Bool && !info(s).is_float && !is_complex(s); }
bool is_half(Scalar s) { return s == Scalar::Float16 || s == Scalar::BFloat16; }
Scalar compute_type(Scalar s) { return is_half(s) ? Scalar::Float32 : s; }
Scalar real_part(Scalar s) {
  return s == Scalar::Complex64 ? Scalar::Float32 : s == Scalar::Complex128 ? Scalar::Float64 : s;
}
Scalar complex_of(Scalar s) {
  if (is_complex(s)) return s;
  return s == Scalar::Float32 || is_half(s) ? Scalar::Complex64 : Scalar::Complex128;
}

std::string Type::str() const {
  switch (kind) {
    case Kind::Void: return "void";
    case Kind::Scalar: return std::string(scalar_name(scalar));
    case Kind::Array: return fmt::format("array({}, {}d, {})", scalar_name(scalar), ndim, c_contiguous ? "C" : "A");
    case Kind::Tuple: {
      std::string out = "(";
      for (std::size_t i = 0; i < elements.size(); ++i) {
        if (i) out += ", ";
        out += elements[i].str();
      }
      return out + ")";
    }
  }
  return "?";
}

namespace {

// NumPy 2's promotion of two real numbers where a 16-bit float takes part: the float
// that holds both exactly (an int of less than half a float's width fits it: int8 in
// float16, int16 in float32), float16 with bfloat16 in float32 (ml_dtypes' rule), and
// bfloat16 with int8 or uint8 in bfloat16.
Scalar numpy_real_promote(Scalar a, Scalar b) {
  auto holding = [](Scalar i) {  // the least float NumPy gives an integer
    return scalar_bits(i) <= 8 ? Scalar::Float16 : scalar_bits(i) <= 16 ? Scalar::Float32 : Scalar::Float64;
  };
  auto wider = [](Scalar x, Scalar y) {  // two real floats
    if (x == y) return x;
    if (scalar_bits(x) == scalar_bits(y)) return Scalar::Float32;  // float16 with bfloat16
    return scalar_bits(x) > scalar_bits(y) ? x : y;
  };
  if (is_float(a) && is_float(b)) return wider(a, b);
  Scalar f = is_float(a) ? a : b, i = is_float(a) ? b : a;
  if (f == Scalar::BFloat16 && scalar_bits(i) <= 8) return f;
  return wider(f, holding(i));
}

}  // namespace

std::optional<Scalar> promote_scalar(Scalar a, Scalar b) {
  if (a == b) return a;
  if (a == Scalar::Bool || b == Scalar::Bool) return std::nullopt;
  if (is_complex(a) || is_complex(b)) {
    Scalar ra = real_part(a), rb = real_part(b);
    if (is_integer(ra) || is_integer(rb) || is_half(ra) || is_half(rb))
      return complex_of(ra == rb ? ra : numpy_real_promote(ra, rb));
    return complex_of(scalar_bits(ra) >= scalar_bits(rb) ? ra : rb);
  }
  if (is_half(a) || is_half(b)) return numpy_real_promote(a, b);
  if (is_float(a) || is_float(b)) {
    if (is_float(a) && is_float(b)) return scalar_bits(a) >= scalar_bits(b) ? a : b;
    return is_float(a) ? a : b;
  }
  if (is_signed(a) == is_signed(b)) return scalar_bits(a) >= scalar_bits(b) ? a : b;
  Scalar s = is_signed(a) ? a : b, u = is_signed(a) ? b : a;
  if (scalar_bits(s) > scalar_bits(u)) return s;
  // The signed type twice as wide as the unsigned one holds both; uint64 has none, and
  // takes Lua's int64 (two's complement wrap, like Lua's own integers).
  return int_of(std::min(2 * scalar_bits(u), 64), true);
}

std::optional<Type> promote(const Type& a, const Type& b) {
  if (a.kind != Type::Kind::Scalar || b.kind != Type::Kind::Scalar) return std::nullopt;
  if ((a.scalar == Scalar::Bool) != (b.scalar == Scalar::Bool)) return std::nullopt;
  if (a.weak && b.weak) {
    if (a.scalar == Scalar::Bool) return Type::scalar_of(Scalar::Bool, true);
    if (is_complex(a.scalar) || is_complex(b.scalar)) return Type::scalar_of(Scalar::Complex128, true);
    bool any_float = is_float(a.scalar) || is_float(b.scalar);
    return Type::scalar_of(any_float ? Scalar::Float64 : Scalar::Int64, true);
  }
  if (a.weak != b.weak) {
    const Type& strong = a.weak ? b : a;
    const Type& weak = a.weak ? a : b;
    // A weak complex (luda.complex(re, im), as Python's complex): the strong operand's
    // precision where it has one (float32 and the 16-bit floats give complex64), else a
    // complex128 that stays weak, as a weak float meeting an int does (below).
    if (is_complex(weak.scalar)) {
      if (is_complex(strong.scalar)) return Type::scalar_of(strong.scalar);
      if (is_float(strong.scalar) && strong.scalar != Scalar::Float64) return Type::scalar_of(Scalar::Complex64);
      return Type::scalar_of(Scalar::Complex128, !is_float(strong.scalar));
    }
    if (is_complex(strong.scalar)) return Type::scalar_of(strong.scalar);
    // A weak float meeting a strong int: the int is not narrowed into a float32 and the
    // literal is not rounded, so the value is a float64, still weak, which lets it meet
    // a float32 later without pulling that into float64 (`x32 * (i * 0.5)` is float32).
    if (is_float(weak.scalar) && !is_float(strong.scalar)) return Type::scalar_of(Scalar::Float64, true);
    return Type::scalar_of(strong.scalar);
  }
  auto s = promote_scalar(a.scalar, b.scalar);
  if (!s) return std::nullopt;
  return Type::scalar_of(*s);
}

}  // namespace luda::dsl

namespace luda::dsl {
namespace {

// The value of an integer constant of type `s` as a wide signed number (uint64 above
// int64's range reads as such through `big`).
struct IntValue {
  bool big = false;  // a uint64 >= 2^63
  std::int64_t v = 0;
  std::uint64_t u = 0;
};

IntValue int_value(const Constant& c, Scalar s) {
  IntValue out;
  out.v = c.i;
  out.u = static_cast<std::uint64_t>(c.i);
  if (s == Scalar::UInt64 && c.i < 0) out.big = true;
  return out;
}

std::int64_t wrap_to(std::uint64_t bits, Scalar to) {
  int b = scalar_bits(to);
  if (b == 64) return static_cast<std::int64_t>(bits);
  std::uint64_t mask = (std::uint64_t{1} << b) - 1;
  bits &= mask;
  if (is_signed(to) && (bits >> (b - 1)) != 0) bits |= ~mask;  // sign-extend
  return static_cast<std::int64_t>(bits);
}

double as_double(const Constant& c, Scalar from) {
  switch (c.kind) {
    case Constant::Kind::Bool: return c.b ? 1 : 0;
    case Constant::Kind::Float: return c.f;
    case Constant::Kind::Int:
      return from == Scalar::UInt64 ? static_cast<double>(static_cast<std::uint64_t>(c.i)) : static_cast<double>(c.i);
  }
  return 0;
}

}  // namespace

std::uint16_t half_bits(double d, Scalar s) {
  using namespace detail::f16;
  const auto bits = std::bit_cast<std::uint64_t>(d);
  return s == Scalar::BFloat16 ? luda_f64_bits_to_bf16_bits(bits) : luda_f64_bits_to_f16_bits(bits);
}

double round_constant(double d, Scalar to) {
  using namespace detail::f16;
  switch (to) {
    case Scalar::Float32:
    case Scalar::Complex64: return static_cast<double>(static_cast<float>(d));
    case Scalar::Float16: return std::bit_cast<float>(luda_f16_bits_to_f32_bits(half_bits(d, to)));
    case Scalar::BFloat16: return std::bit_cast<float>(luda_bf16_bits_to_f32_bits(half_bits(d, to)));
    default: return d;
  }
}

Constant convert_constant(const Constant& c, Scalar from, Scalar to) {
  if (to == Scalar::Bool) {
    if (c.kind == Constant::Kind::Bool) return c;
    return Constant::of_bool(c.kind == Constant::Kind::Float ? c.f != 0 || c.im != 0 : c.i != 0);
  }
  if (is_float(to) || is_complex(to)) {
    Constant r = Constant::of_float(round_constant(as_double(c, from), to));
    if (is_complex(to) && is_complex(from)) r.im = round_constant(c.im, to);
    return r;
  }
  if (c.kind == Constant::Kind::Bool) return Constant::of_int(c.b ? 1 : 0);
  if (c.kind == Constant::Kind::Int) return Constant::of_int(wrap_to(static_cast<std::uint64_t>(c.i), to));
  // Float to integer as the device converts (prelude luda_ftoi, PTX's cvt.rzi): towards
  // zero, saturated at `to`'s range, NaN to 0. The bounds are powers of two, exact in a double.
  double d = c.f;
  if (d != d) return Constant::of_int(0);
  int b = scalar_bits(to);
  if (!is_signed(to)) {
    if (d <= 0) return Constant::of_int(0);
    if (d >= std::ldexp(1.0, b)) return Constant::of_int(wrap_to(~std::uint64_t{0}, to));
    return Constant::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(d)));
  }
  if (d >= std::ldexp(1.0, b - 1)) return Constant::of_int(wrap_to(~std::uint64_t{0} >> (65 - b), to));
  if (d <= -std::ldexp(1.0, b - 1)) return Constant::of_int(wrap_to(std::uint64_t{1} << (b - 1), to));
  return Constant::of_int(static_cast<std::int64_t>(d));
}

bool constant_fits(const Constant& c, Scalar from, Scalar to) {
  if ((c.kind == Constant::Kind::Bool) != (to == Scalar::Bool)) return false;
  if (to == Scalar::Bool) return true;
  if (is_float(to) || is_complex(to)) {
    // Every integer and float rounds into a float type; overflow to inf is IEEE's business.
    return true;
  }
  if (c.kind == Constant::Kind::Float) {
    // A float literal does not become an integer silently.
    return false;
  }
  IntValue v = int_value(c, from);
  int b = scalar_bits(to);
  if (is_signed(to)) {
    if (v.big) return false;
    if (b == 64) return true;
    std::int64_t lo = -(std::int64_t{1} << (b - 1)), hi = (std::int64_t{1} << (b - 1)) - 1;
    return v.v >= lo && v.v <= hi;
  }
  if (!v.big && v.v < 0) return false;
  if (b == 64) return true;
  return v.u <= ((std::uint64_t{1} << b) - 1);
}

}  // namespace luda::dsl

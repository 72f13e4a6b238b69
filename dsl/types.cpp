#include "dsl/types.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace luda::dsl {
namespace {

struct ScalarInfo {
  std::string_view name;
  const char* c_type;
  int bits;
  bool is_signed;  // signed integers and floats
  bool is_float;
};

// ORDER SCALAR
constexpr std::array<ScalarInfo, 11> kScalars = {{
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
bool is_integer(Scalar s) { return s != Scalar::Bool && !info(s).is_float; }

std::string Type::str() const {
  switch (kind) {
    case Kind::Void: return "void";
    case Kind::Scalar: return std::string(scalar_name(scalar));
    case Kind::Array:
      return fmt::format("array({}, {}d, {})", scalar_name(scalar), ndim, c_contiguous ? "C" : "A");
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

std::optional<Scalar> promote_scalar(Scalar a, Scalar b) {
  if (a == b) return a;
  if (a == Scalar::Bool || b == Scalar::Bool) return std::nullopt;
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
    bool any_float = is_float(a.scalar) || is_float(b.scalar);
    return Type::scalar_of(any_float ? Scalar::Float64 : Scalar::Int64, true);
  }
  if (a.weak != b.weak) {
    const Type& strong = a.weak ? b : a;
    const Type& weak = a.weak ? a : b;
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
  bool big = false;      // a uint64 >= 2^63
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
      return from == Scalar::UInt64 ? static_cast<double>(static_cast<std::uint64_t>(c.i))
                                    : static_cast<double>(c.i);
  }
  return 0;
}

}  // namespace

Constant convert_constant(const Constant& c, Scalar from, Scalar to) {
  if (to == Scalar::Bool) {
    if (c.kind == Constant::Kind::Bool) return c;
    return Constant::of_bool(c.kind == Constant::Kind::Float ? c.f != 0 : c.i != 0);
  }
  if (is_float(to)) {
    double d = as_double(c, from);
    return Constant::of_float(to == Scalar::Float32 ? static_cast<double>(static_cast<float>(d)) : d);
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
  if (is_float(to)) {
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

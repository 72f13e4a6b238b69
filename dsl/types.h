// Types of the kernel language. dsl/ knows no runtime: it has its own scalar kinds, which
// jit/ maps to runtime dtypes one to one (same names, same order).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace luda::dsl {

// ORDER SCALAR: same order and names as runtime's DType.
enum class Scalar : std::uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, Float64,
};

std::string_view scalar_name(Scalar s);            // "float32"
std::optional<Scalar> parse_scalar(std::string_view name);
const char* scalar_c_type(Scalar s);               // "float", "long long", ...
int scalar_bits(Scalar s);
bool is_float(Scalar s);
bool is_signed(Scalar s);                          // signed ints and floats
bool is_integer(Scalar s);                         // not bool

// The most axes an array type may have: NumPy 2's limit. ORDER MAXDIMS: runtime's kMaxNdim
// is the same number (arrays are never made larger).
inline constexpr int kMaxArrayDims = 64;

// What a kernel parameter or a value can be.
struct Type {
  enum class Kind : std::uint8_t { Void, Scalar, Array, Tuple };
  Kind kind = Kind::Void;
  Scalar scalar = Scalar::Float64;  // Scalar: the type; Array: the element type
  int ndim = 0;                     // Array
  bool c_contiguous = false;        // Array: layout known contiguous (enables fast indexing)
  bool weak = false;                // Scalar: a literal or Lua number (docs/language.md "Types")
  std::vector<Type> elements;       // Tuple (multiple returns)

  static Type void_() { return {}; }
  static Type scalar_of(Scalar s, bool weak = false) {
    Type t; t.kind = Kind::Scalar; t.scalar = s; t.weak = weak; return t;
  }
  static Type array_of(Scalar s, int ndim, bool c_contiguous = false) {
    Type t; t.kind = Kind::Array; t.scalar = s; t.ndim = ndim; t.c_contiguous = c_contiguous; return t;
  }
  bool operator==(const Type&) const = default;
  std::string str() const;  // "float32", "array(float32, 2d, C)", "(float32, int64)", "void"
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool is_number() const { return kind == Kind::Scalar && scalar != Scalar::Bool; }
  bool is_bool() const { return kind == Kind::Scalar && scalar == Scalar::Bool; }
  bool is_int() const { return kind == Kind::Scalar && is_integer(scalar); }
  bool is_floating() const { return kind == Kind::Scalar && is_float(scalar); }
};

// The common type of two scalars (docs/language.md "Types"), used for arithmetic operands and
// for unifying what a local is assigned; nullopt when there is none (bool with a number,
// anything with an array or tuple).
// - a weak operand (literal, Lua number) takes the other's type when that is strong; an
//   int with a weak float gives a weak float64 (the int is not narrowed into float32);
//   two weak ones stay weak: int64, or float64 when either is a float;
// - strong: float with float -> the wider; int with float -> the float; int with int ->
//   the wider when signedness agrees, else the signed type that holds both
//   (uint32 with int32 -> int64), and int64 for uint64 with any signed int (Lua's
//   integer type: the bits are the same under wrap-around).
std::optional<Type> promote(const Type& a, const Type& b);
std::optional<Scalar> promote_scalar(Scalar a, Scalar b);  // both strong

// A compile-time value: a literal, a frozen upvalue or global, math.pi, cuda.warpsize, or
// a fold of them. Its type is kept beside it (inference's side tables).
struct Constant {
  enum class Kind : std::uint8_t { Int, Float, Bool };
  Kind kind = Kind::Int;
  std::int64_t i = 0;  // Int: the two's complement bits (an unsigned type reads them unsigned)
  double f = 0;        // Float (a float32 constant holds a value exactly representable in float)
  bool b = false;      // Bool
  static Constant of_int(std::int64_t v) { Constant c; c.i = v; return c; }
  static Constant of_float(double v) { Constant c; c.kind = Kind::Float; c.f = v; return c; }
  static Constant of_bool(bool v) { Constant c; c.kind = Kind::Bool; c.b = v; return c; }
  bool operator==(const Constant&) const = default;
};

// `c`, a constant of type `from`, as a value of type `to` (C++'s conversion; integers wrap
// to the width of `to`, floats to integers truncate and saturate).
Constant convert_constant(const Constant& c, Scalar from, Scalar to);
// Whether `c` (of type `from`) keeps its value as a `to`: a weak literal may only take a
// type that holds it (`x8 + 1000` is an error, as in NumPy 2).
bool constant_fits(const Constant& c, Scalar from, Scalar to);

// A kernel's or device function's signature in Numba's notation:
// "void(float32[:], int64[:,:], float32)", "float32(float32, float32)"; "[::1]" on the
// last axis marks a C-contiguous array. Errors carry the column: SignatureError.
struct Signature {
  Type result;
  std::vector<Type> params;
  std::string str() const;  // Numba notation back
};
Signature parse_signature(std::string_view text);  // throws SourceError (dsl/diagnostics.h)

}  // namespace luda::dsl

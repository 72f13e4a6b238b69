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
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float32,
  Float64,
  Float16,
  BFloat16,
  Complex64,
  Complex128,
};
inline constexpr int kNumScalars = 15;

std::string_view scalar_name(Scalar s);  // "float32"
std::optional<Scalar> parse_scalar(std::string_view name);
// "float", "long long", ...; the prelude's structs for the others: "luda_half",
// "luda_bfloat16", "luda_complex64", "luda_complex128" (dsl/prelude.h).
const char* scalar_c_type(Scalar s);
int scalar_bits(Scalar s);  // complex128: 128
bool is_float(Scalar s);    // real floats: float16 bfloat16 float32 float64
bool is_signed(Scalar s);   // signed ints, floats and complex
bool is_integer(Scalar s);  // not bool
bool is_complex(Scalar s);  // complex64, complex128
// float16 and bfloat16: stored in 16 bits, computed in float32 (each operation's result
// rounded back, as NumPy computes them).
bool is_half(Scalar s);
// The type a value's arithmetic is done in: float32 for the 16-bit floats, else itself.
Scalar compute_type(Scalar s);
// A complex's parts (complex64 -> float32); a real type is its own.
Scalar real_part(Scalar s);
// The complex type whose parts a real float holds exactly: complex64 for float32 and the
// 16-bit floats, complex128 for float64 (and for integers, as NumPy's).
Scalar complex_of(Scalar s);

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
    Type t;
    t.kind = Kind::Scalar;
    t.scalar = s;
    t.weak = weak;
    return t;
  }
  static Type array_of(Scalar s, int ndim, bool c_contiguous = false) {
    Type t;
    t.kind = Kind::Array;
    t.scalar = s;
    t.ndim = ndim;
    t.c_contiguous = c_contiguous;
    return t;
  }
  bool operator==(const Type&) const = default;
  std::string str() const;  // "float32", "array(float32, 2d, C)", "(float32, int64)", "void"
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool is_number() const { return kind == Kind::Scalar && scalar != Scalar::Bool; }
  bool is_bool() const { return kind == Kind::Scalar && scalar == Scalar::Bool; }
  bool is_int() const { return kind == Kind::Scalar && is_integer(scalar); }
  bool is_floating() const { return kind == Kind::Scalar && is_float(scalar); }
  bool is_complex() const { return kind == Kind::Scalar && dsl::is_complex(scalar); }
  bool is_real() const { return is_number() && !dsl::is_complex(scalar); }  // a number, not a complex
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
//   integer type: the bits are the same under wrap-around);
// - float16, bfloat16 and complex take NumPy 2's rules (promote_types), bfloat16 as
//   ml_dtypes adds it: float16 with int8 or uint8 -> float16, with int16 -> float32, with
//   wider ints -> float64, with bfloat16 -> float32; complex -> the complex of the parts'
//   promotion (complex64 with float64 or int32 -> complex128). A weak float or int meeting
//   a complex takes it; a weak complex meeting a float32 or 16-bit float gives complex64,
//   an int or float64 a weak complex128.
std::optional<Type> promote(const Type& a, const Type& b);
std::optional<Scalar> promote_scalar(Scalar a, Scalar b);  // both strong

// A compile-time value: a literal, a frozen upvalue or global, math.pi, cuda.warpsize, or
// a fold of them. Its type is kept beside it (inference's side tables). A complex constant
// (luda.complex(1, 2), a real constant converted) is a Float with `im`; arithmetic on
// complex constants is not folded (only == and ~=, and negation).
struct Constant {
  enum class Kind : std::uint8_t { Int, Float, Bool };
  Kind kind = Kind::Int;
  std::int64_t i = 0;  // Int: the two's complement bits (an unsigned type reads them unsigned)
  double f = 0;        // Float (a float32 constant holds a value exactly representable in float)
  double im = 0;       // Float of a complex type: the imaginary part (f the real one)
  bool b = false;      // Bool
  static Constant of_int(std::int64_t v) {
    Constant c;
    c.i = v;
    return c;
  }
  static Constant of_float(double v) {
    Constant c;
    c.kind = Kind::Float;
    c.f = v;
    return c;
  }
  static Constant of_bool(bool v) {
    Constant c;
    c.kind = Kind::Bool;
    c.b = v;
    return c;
  }
  bool operator==(const Constant&) const = default;
};

// `d` rounded to nearest as `to` holds it (float32, float16, bfloat16, complex64's parts),
// bit for bit as the kernels round; other types keep it.
double round_constant(double d, Scalar to);
// The bits of `d` rounded to float16 or bfloat16 (`s`).
std::uint16_t half_bits(double d, Scalar s);
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

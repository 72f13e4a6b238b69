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

// What a kernel parameter or a value can be.
struct Type {
  enum class Kind : std::uint8_t { Void, Scalar, Array, Tuple };
  Kind kind = Kind::Void;
  Scalar scalar = Scalar::Float64;  // Scalar: the type; Array: the element type
  int ndim = 0;                     // Array
  bool c_contiguous = false;        // Array: layout known contiguous (enables fast indexing)
  bool weak = false;                // Scalar: a literal or Lua number (DESIGN.md "weak")
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
};

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

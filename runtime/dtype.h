// Element types of arrays and typed scalars.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "luda/core.h"

namespace luda {

// DType, itemsize, dtype_name and dtype_from_name are public (luda/core.h); kDTypeInfo in
// dtype.cpp follows ORDER DTYPE.
const char* dtype_c_type(DType t);            // "float", "long long", "unsigned char", "bool"
constexpr bool is_float(DType t) { return t == DType::Float32 || t == DType::Float64; }
bool is_integer(DType t);                     // signed or unsigned, not bool
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);

// "float32" -> Float32; nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name);
// "bool, int8, int16, ..., float64"
std::string dtype_names();

// The dtype NumPy's rules give to a result of two dtypes (int32+float32 -> float64 as
// NumPy does; uint64+int64 -> float64).
DType promote_types(DType a, DType b);

// A value of one dtype, as read from or written to an array element.
struct Scalar {
  DType dtype = DType::Float64;
  union {
    bool b;
    std::int64_t i;   // signed integers
    std::uint64_t u;  // unsigned integers
    double f;         // float32 values are held widened
  } v{};

  static Scalar of_bool(bool x);
  static Scalar of_int(std::int64_t x, DType t = DType::Int64);    // t any integer dtype
  static Scalar of_uint(std::uint64_t x, DType t = DType::UInt64);
  static Scalar of_float(double x, DType t = DType::Float64);      // rounds for float32

  // Conversion with C's meaning (truncation toward zero for float -> int, wraparound for
  // narrowing integers, nonzero -> true). Used by array copies between dtypes.
  Scalar cast(DType to) const;
  double to_double() const;
  std::int64_t to_int64() const;  // C cast
  bool is_integral_value() const; // bool or integer dtype

  // Reads/writes itemsize(dtype) bytes.
  void store(void* dst) const;
  static Scalar load(const void* src, DType t);

  bool operator==(const Scalar& o) const;
};

// An element of type T read from memory. A bool element is read as its byte, true when
// nonzero (C's conversion of that byte to bool): memory that `empty` left unwritten, or
// that a raw kernel or the host filled, may hold other bytes than 0 and 1, and a C++ bool
// holding one is undefined behaviour.
template <class T>
T load_element(const void* src) {
  if constexpr (std::is_same_v<T, bool>) {
    unsigned char byte;
    std::memcpy(&byte, src, 1);
    return byte != 0;
  } else {
    T x;
    std::memcpy(&x, src, sizeof x);
    return x;
  }
}

// Whether an integer value lies in an integer dtype's range (bool takes 0 and 1; a
// float dtype takes every integer, rounding if it must).
bool integer_fits(std::int64_t x, DType t);

// The least and greatest values of an integer dtype (bool: 0 and 1).
struct IntegerRange {
  std::int64_t lo;
  std::uint64_t hi;
};
IntegerRange integer_range(DType t);

}  // namespace luda

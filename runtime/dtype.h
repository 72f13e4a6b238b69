// Element types of arrays and typed scalars.
#pragma once

#include <bit>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "luda/core.h"
#include "runtime/float16.h"

namespace luda {

// DType, itemsize, dtype_name and dtype_from_name are public (luda/core.h); kDTypeInfo in
// dtype.cpp follows ORDER DTYPE.
const char* dtype_c_type(DType t);  // "float", "long long", "luda_half", "bool"
// Real floating dtypes: float16, bfloat16, float32, float64.
constexpr bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}
constexpr bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
constexpr bool is_inexact(DType t) { return is_float(t) || is_complex(t); }  // NumPy's inexact
// The real dtype of a complex one (complex64 -> float32); others are their own.
constexpr DType real_dtype(DType t) {
  return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t;
}
bool is_integer(DType t);  // signed or unsigned, not bool
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);

// "float32" -> Float32; nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view name);
// "bool, int8, int16, ..., float64"
std::string dtype_names();

// The dtype NumPy 2's rules give to a result of two dtypes (int32+float32 -> float64 as
// NumPy does; uint64+int64 -> float64; float16+int16 -> float32; complex64+float64 ->
// complex128). bfloat16, which NumPy lacks, follows ml_dtypes: with float16 it gives
// float32, with int8/uint8 bfloat16, with wider integers what float16 gives.
DType promote_types(DType a, DType b);

// float16 and bfloat16 elements on the host: their bits, converted by runtime/float16.h
// (the same text the kernel preludes embed, so that host and kernels round alike).
struct Float16 {
  std::uint16_t bits;
  static Float16 from(float x) { return {luda_f32_bits_to_f16_bits(std::bit_cast<std::uint32_t>(x))}; }
  static Float16 from(double x) { return {luda_f64_bits_to_f16_bits(std::bit_cast<std::uint64_t>(x))}; }
  float value() const { return std::bit_cast<float>(luda_f16_bits_to_f32_bits(bits)); }
};
struct BFloat16 {
  std::uint16_t bits;
  static BFloat16 from(float x) { return {luda_f32_bits_to_bf16_bits(std::bit_cast<std::uint32_t>(x))}; }
  static BFloat16 from(double x) { return {luda_f64_bits_to_bf16_bits(std::bit_cast<std::uint64_t>(x))}; }
  float value() const { return std::bit_cast<float>(luda_bf16_bits_to_f32_bits(bits)); }
};

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

// One element converted to another element type, as NumPy's astype (casting='unsafe')
// converts, and as every luda copy between dtypes does on the host and in kernels:
// nonzero -> true (a complex is nonzero when either part is); float -> integer truncates
// toward zero and saturates, NaN giving the minimum (C leaves both undefined); complex ->
// real keeps the real part; float16/bfloat16 go through float32, and round to nearest
// even on the way in (from float64 directly, without a double rounding).
template <class To, class From>
To convert_element(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_half_v<From>) {
    return convert_element<To>(x.value());
  } else if constexpr (is_complex_v<From>) {
    if constexpr (std::is_same_v<To, bool>) return x.real() != 0 || x.imag() != 0;
    else if constexpr (is_complex_v<To>)
      return To(static_cast<typename To::value_type>(x.real()), static_cast<typename To::value_type>(x.imag()));
    else return convert_element<To>(x.real());
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (is_half_v<To>) {
    if constexpr (std::is_same_v<From, float> || std::is_same_v<From, double>) return To::from(x);
    else return To::from(static_cast<double>(x));  // integers: exact below 2^53, past the range after
  } else if constexpr (is_complex_v<To>) {
    return To(convert_element<typename To::value_type>(x), 0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    double f = static_cast<double>(x);
    if (f != f) return std::numeric_limits<To>::min();
    if (f >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    if (f <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    return static_cast<To>(f);
  } else {
    return static_cast<To>(x);
  }
}

// A value of one dtype, as read from or written to an array element.
struct Scalar {
  DType dtype = DType::Float64;
  union {
    bool b;
    std::int64_t i;   // signed integers
    std::uint64_t u;  // unsigned integers
    double f;         // floats, held widened (exactly); a complex's real part
  } v{};
  double im = 0;  // a complex's imaginary part
  // A complex written as a plain number (luda.complex(re, im), as Python's complex): it
  // takes the other operand's precision where that is a complex or float array, as NumPy 2
  // treats Python's complex. Only for Complex128.
  bool weak = false;

  static Scalar of_bool(bool x);
  static Scalar of_int(std::int64_t x, DType t = DType::Int64);  // t any integer dtype
  static Scalar of_uint(std::uint64_t x, DType t = DType::UInt64);
  static Scalar of_float(double x, DType t = DType::Float64);                   // rounds for float32 and 16-bit
  static Scalar of_complex(double re, double im, DType t = DType::Complex128);  // rounds for complex64

  // Conversion with convert_element's meaning. Used by array copies between dtypes.
  Scalar cast(DType to) const;
  double to_double() const;        // a complex's real part
  std::int64_t to_int64() const;   // C cast
  bool is_integral_value() const;  // bool or integer dtype

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

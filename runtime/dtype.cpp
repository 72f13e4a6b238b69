#include "runtime/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/error.h"

namespace luda {
namespace {

struct DTypeInfo {
  std::string_view name;
  std::size_t size;
  const char* c_type;
};

// ORDER DTYPE
constexpr DTypeInfo kDTypeInfo[kNumDTypes] = {
    {"bool", 1, "bool"},
    {"int8", 1, "signed char"},
    {"int16", 2, "short"},
    {"int32", 4, "int"},
    {"int64", 8, "long long"},
    {"uint8", 1, "unsigned char"},
    {"uint16", 2, "unsigned short"},
    {"uint32", 4, "unsigned int"},
    {"uint64", 8, "unsigned long long"},
    {"float32", 4, "float"},
    {"float64", 8, "double"},
    {"float16", 2, "luda_half"},
    {"bfloat16", 2, "luda_bfloat16"},
    {"complex64", 8, "luda_complex64"},
    {"complex128", 16, "luda_complex128"},
};

const DTypeInfo& info(DType t) { return kDTypeInfo[static_cast<int>(t)]; }

// itemsize() in dtype.h keeps its own table of sizes.
constexpr bool sizes_agree() {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kDTypeInfo[i].size != itemsize(static_cast<DType>(i))) return false;
  return true;
}
static_assert(sizes_agree());

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
const char* dtype_c_type(DType t) { return info(t).c_type; }
bool is_signed_integer(DType t) { return t >= DType::Int8 && t <= DType::Int64; }
bool is_unsigned_integer(DType t) { return t >= DType::UInt8 && t <= DType::UInt64; }
bool is_integer(DType t) { return is_signed_integer(t) || is_unsigned_integer(t); }

std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kDTypeInfo[i].name == name) return static_cast<DType>(i);
  return std::nullopt;
}

std::string dtype_names() {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (i) out += ", ";
    out += kDTypeInfo[i].name;
  }
  return out;
}

DType dtype_from_name(std::string_view name) {
  if (auto t = parse_dtype(name)) return *t;
  fail("unknown dtype '{}' (expected one of {})", name, dtype_names());
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_complex(a) || is_complex(b)) {  // the complex of the promoted real parts
    DType r = promote_types(real_dtype(a), real_dtype(b));
    return r == DType::Float64 ? DType::Complex128 : DType::Complex64;
  }
  if (is_float(a) && is_float(b)) {
    if (itemsize(a) == itemsize(b)) return DType::Float32;  // float16 with bfloat16
    return itemsize(a) > itemsize(b) ? a : b;
  }
  if (is_float(a) || is_float(b)) {
    DType f = is_float(a) ? a : b, n = is_float(a) ? b : a;
    // NumPy: a float holds exactly the integers of less than half its width (float16
    // int8/uint8, float32 up to 16 bits); wider integers need the next float up.
    if (itemsize(n) * 2 <= itemsize(f)) return f;
    if (itemsize(n) * 2 <= 4) return DType::Float32;
    return DType::Float64;
  }
  bool sa = is_signed_integer(a), sb = is_signed_integer(b);
  std::size_t za = itemsize(a), zb = itemsize(b);
  if (sa == sb) return za >= zb ? a : b;
  DType s = sa ? a : b, u = sa ? b : a;
  std::size_t zs = itemsize(s), zu = itemsize(u);
  if (zs > zu) return s;
  switch (zu) {  // a signed type wider than the unsigned one
    case 1: return DType::Int16;
    case 2: return DType::Int32;
    case 4: return DType::Int64;
    default: return DType::Float64;  // uint64 with any signed int
  }
}

Scalar Scalar::of_bool(bool x) {
  Scalar s;
  s.dtype = DType::Bool;
  s.v.b = x;
  return s;
}

Scalar Scalar::of_int(std::int64_t x, DType t) {
  Scalar s;
  s.dtype = DType::Int64;
  s.v.i = x;
  return t == DType::Int64 ? s : s.cast(t);
}

Scalar Scalar::of_uint(std::uint64_t x, DType t) {
  Scalar s;
  s.dtype = DType::UInt64;
  s.v.u = x;
  return t == DType::UInt64 ? s : s.cast(t);
}

Scalar Scalar::of_float(double x, DType t) {
  Scalar s;
  s.dtype = DType::Float64;
  s.v.f = x;
  return t == DType::Float64 ? s : s.cast(t);
}

Scalar Scalar::of_complex(double re, double im, DType t) {
  Scalar s;
  s.dtype = DType::Complex128;
  s.v.f = re;
  s.im = im;
  return t == DType::Complex128 ? s : s.cast(t);
}

namespace {

// Calls fn with a default-constructed value of the C type of t.
template <class Fn>
decltype(auto) with_c_type(DType t, Fn&& fn) {
  switch (t) {  // ORDER DTYPE
    case DType::Bool: return fn(bool{});
    case DType::Int8: return fn(std::int8_t{});
    case DType::Int16: return fn(std::int16_t{});
    case DType::Int32: return fn(std::int32_t{});
    case DType::Int64: return fn(std::int64_t{});
    case DType::UInt8: return fn(std::uint8_t{});
    case DType::UInt16: return fn(std::uint16_t{});
    case DType::UInt32: return fn(std::uint32_t{});
    case DType::UInt64: return fn(std::uint64_t{});
    case DType::Float32: return fn(float{});
    case DType::Float64: return fn(double{});
    case DType::Float16: return fn(Float16{});
    case DType::BFloat16: return fn(BFloat16{});
    case DType::Complex64: return fn(std::complex<float>{});
    case DType::Complex128: return fn(std::complex<double>{});
  }
  throw InternalError("bad dtype");
}

template <class T>
Scalar make(T x, DType t) {
  Scalar s;
  s.dtype = t;
  if constexpr (std::is_same_v<T, bool>) s.v.b = x;
  else if constexpr (is_half_v<T>) s.v.f = static_cast<double>(x.value());
  else if constexpr (is_complex_v<T>) {
    s.v.f = static_cast<double>(x.real());
    s.im = static_cast<double>(x.imag());
  } else if constexpr (std::is_floating_point_v<T>) s.v.f = static_cast<double>(x);
  else if constexpr (std::is_signed_v<T>) s.v.i = x;
  else s.v.u = x;
  return s;
}

// The value of s as its own dtype's C type (the inverse of make).
template <class T>
T held(const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>) return s.v.b;
  else if constexpr (is_half_v<T>) return T::from(s.v.f);  // exact: v.f holds a value of T
  else if constexpr (is_complex_v<T>)
    return T(static_cast<typename T::value_type>(s.v.f), static_cast<typename T::value_type>(s.im));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(s.v.f);
  else if constexpr (std::is_signed_v<T>) return static_cast<T>(s.v.i);
  else return static_cast<T>(s.v.u);
}

template <class To>
To scalar_as(const Scalar& s) {
  return with_c_type(s.dtype, [&](auto zero) {
    using From = decltype(zero);
    return convert_element<To>(held<From>(s));
  });
}

}  // namespace

Scalar Scalar::cast(DType to) const {
  return with_c_type(to, [&](auto zero) {
    using T = decltype(zero);
    return make<T>(scalar_as<T>(*this), to);
  });
}

double Scalar::to_double() const { return scalar_as<double>(*this); }
std::int64_t Scalar::to_int64() const { return scalar_as<std::int64_t>(*this); }
bool Scalar::is_integral_value() const { return !is_inexact(dtype); }

void Scalar::store(void* dst) const {
  with_c_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    T x = held<T>(*this);
    std::memcpy(dst, &x, sizeof(T));
    return 0;
  });
}

Scalar Scalar::load(const void* src, DType t) {
  return with_c_type(t, [&](auto zero) {
    using T = decltype(zero);
    return make<T>(load_element<T>(src), t);
  });
}

bool Scalar::operator==(const Scalar& o) const {
  if (dtype != o.dtype) return false;
  if (dtype == DType::Bool) return v.b == o.v.b;
  if (is_complex(dtype)) return v.f == o.v.f && im == o.im;
  if (is_float(dtype)) return v.f == o.v.f;
  return v.u == o.v.u;
}

bool integer_fits(std::int64_t x, DType t) {
  switch (t) {
    case DType::Bool: return x == 0 || x == 1;
    case DType::Int8: return x >= INT8_MIN && x <= INT8_MAX;
    case DType::Int16: return x >= INT16_MIN && x <= INT16_MAX;
    case DType::Int32: return x >= INT32_MIN && x <= INT32_MAX;
    case DType::Int64: return true;
    case DType::UInt8: return x >= 0 && x <= UINT8_MAX;
    case DType::UInt16: return x >= 0 && x <= UINT16_MAX;
    case DType::UInt32: return x >= 0 && x <= static_cast<std::int64_t>(UINT32_MAX);
    case DType::UInt64: return x >= 0;
    default: return true;  // the floats and complexes take every integer, rounding
  }
}

IntegerRange integer_range(DType t) {
  switch (t) {
    case DType::Int8: return {INT8_MIN, INT8_MAX};
    case DType::Int16: return {INT16_MIN, INT16_MAX};
    case DType::Int32: return {INT32_MIN, INT32_MAX};
    case DType::Int64: return {INT64_MIN, INT64_MAX};
    case DType::UInt8: return {0, UINT8_MAX};
    case DType::UInt16: return {0, UINT16_MAX};
    case DType::UInt32: return {0, UINT32_MAX};
    case DType::UInt64: return {0, UINT64_MAX};
    default: return {0, 1};
  }
}

}  // namespace luda

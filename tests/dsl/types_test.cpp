// The scalar table and the promotion rules of docs/language.md "Types", one test per rule.
#include <gtest/gtest.h>

#include <iterator>

#include "dsl/types.h"

namespace luda::dsl {
namespace {

Type strong(Scalar s) { return Type::scalar_of(s); }
Type weak(Scalar s) { return Type::scalar_of(s, true); }

TEST(Types, NamesAndCTypesRoundTrip) {
  const Scalar all[] = {Scalar::Bool,    Scalar::Int8,    Scalar::Int16,    Scalar::Int32,     Scalar::Int64,
                        Scalar::UInt8,   Scalar::UInt16,  Scalar::UInt32,   Scalar::UInt64,    Scalar::Float32,
                        Scalar::Float64, Scalar::Float16, Scalar::BFloat16, Scalar::Complex64, Scalar::Complex128};
  static_assert(std::size(all) == kNumScalars);
  for (Scalar s : all) EXPECT_EQ(parse_scalar(scalar_name(s)), s) << scalar_name(s);
  EXPECT_EQ(parse_scalar("float"), std::nullopt);
  EXPECT_STREQ(scalar_c_type(Scalar::Int64), "long long");
  EXPECT_STREQ(scalar_c_type(Scalar::UInt32), "unsigned int");
  EXPECT_STREQ(scalar_c_type(Scalar::Float32), "float");
  EXPECT_EQ(scalar_bits(Scalar::Int16), 16);
  EXPECT_TRUE(is_signed(Scalar::Float32));
  EXPECT_FALSE(is_signed(Scalar::UInt8));
  EXPECT_FALSE(is_integer(Scalar::Bool));
  EXPECT_TRUE(is_integer(Scalar::UInt64));
  EXPECT_FALSE(is_integer(Scalar::Float64));
  EXPECT_STREQ(scalar_c_type(Scalar::Float16), "luda_half");
  EXPECT_STREQ(scalar_c_type(Scalar::BFloat16), "luda_bfloat16");
  EXPECT_STREQ(scalar_c_type(Scalar::Complex64), "luda_complex64");
  EXPECT_STREQ(scalar_c_type(Scalar::Complex128), "luda_complex128");
  EXPECT_EQ(scalar_bits(Scalar::Complex128), 128);
  EXPECT_TRUE(is_float(Scalar::BFloat16));
  EXPECT_TRUE(is_half(Scalar::Float16));
  EXPECT_FALSE(is_float(Scalar::Complex64));
  EXPECT_FALSE(is_integer(Scalar::Complex64));
  EXPECT_TRUE(is_complex(Scalar::Complex128));
  EXPECT_EQ(real_part(Scalar::Complex64), Scalar::Float32);
  EXPECT_EQ(complex_of(Scalar::Float16), Scalar::Complex64);
  EXPECT_EQ(complex_of(Scalar::Int32), Scalar::Complex128);
  EXPECT_EQ(compute_type(Scalar::BFloat16), Scalar::Float32);
}

// NumPy 2's promote_types for float16 and complex, and ml_dtypes' for bfloat16
// (tests/lua/promotion_numpy.py checks the same against NumPy itself, through the kinds).
TEST(Promote, HalvesAndComplexAsNumPy) {
  struct Case {
    Scalar a, b, want;
  };
  const Case cases[] = {
      {Scalar::Float16, Scalar::Int8, Scalar::Float16},
      {Scalar::Float16, Scalar::UInt8, Scalar::Float16},
      {Scalar::Float16, Scalar::Int16, Scalar::Float32},
      {Scalar::Float16, Scalar::UInt16, Scalar::Float32},
      {Scalar::Float16, Scalar::Int32, Scalar::Float64},
      {Scalar::Float16, Scalar::Int64, Scalar::Float64},
      {Scalar::Float16, Scalar::Float32, Scalar::Float32},
      {Scalar::Float16, Scalar::Float64, Scalar::Float64},
      {Scalar::BFloat16, Scalar::Float16, Scalar::Float32},
      {Scalar::BFloat16, Scalar::Int8, Scalar::BFloat16},
      {Scalar::BFloat16, Scalar::UInt8, Scalar::BFloat16},
      {Scalar::BFloat16, Scalar::Int16, Scalar::Float32},
      {Scalar::BFloat16, Scalar::Float32, Scalar::Float32},
      {Scalar::BFloat16, Scalar::UInt64, Scalar::Float64},
      {Scalar::Complex64, Scalar::Float64, Scalar::Complex128},
      {Scalar::Complex64, Scalar::Int32, Scalar::Complex128},
      {Scalar::Complex64, Scalar::Int16, Scalar::Complex64},
      {Scalar::Complex64, Scalar::Float32, Scalar::Complex64},
      {Scalar::Complex64, Scalar::Float16, Scalar::Complex64},
      {Scalar::Complex64, Scalar::BFloat16, Scalar::Complex64},
      {Scalar::Complex64, Scalar::UInt8, Scalar::Complex64},
      {Scalar::Complex64, Scalar::Int64, Scalar::Complex128},
      {Scalar::Complex64, Scalar::Complex128, Scalar::Complex128},
      {Scalar::Complex128, Scalar::Float32, Scalar::Complex128},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(promote_scalar(c.a, c.b), c.want) << scalar_name(c.a) << " " << scalar_name(c.b);
    EXPECT_EQ(promote_scalar(c.b, c.a), c.want) << scalar_name(c.b) << " " << scalar_name(c.a);
  }
  EXPECT_EQ(promote_scalar(Scalar::Bool, Scalar::Complex64), std::nullopt);
}

TEST(Promote, WeakNumbersWithHalvesAndComplex) {
  // A Lua float or int keeps a 16-bit float and a complex as they are.
  EXPECT_EQ(promote(weak(Scalar::Float64), strong(Scalar::Float16)), strong(Scalar::Float16));
  EXPECT_EQ(promote(strong(Scalar::BFloat16), weak(Scalar::Int64)), strong(Scalar::BFloat16));
  EXPECT_EQ(promote(weak(Scalar::Float64), strong(Scalar::Complex64)), strong(Scalar::Complex64));
  EXPECT_EQ(promote(strong(Scalar::Complex64), weak(Scalar::Int64)), strong(Scalar::Complex64));
  // A weak complex (luda.complex(re, im), Python's complex) takes a float32's precision,
  // and stays weak with integers.
  EXPECT_EQ(promote(weak(Scalar::Complex128), strong(Scalar::Float32)), strong(Scalar::Complex64));
  EXPECT_EQ(promote(weak(Scalar::Complex128), strong(Scalar::Float16)), strong(Scalar::Complex64));
  EXPECT_EQ(promote(weak(Scalar::Complex128), strong(Scalar::Float64)), strong(Scalar::Complex128));
  EXPECT_EQ(promote(strong(Scalar::Complex64), weak(Scalar::Complex128)), strong(Scalar::Complex64));
  EXPECT_EQ(promote(weak(Scalar::Complex128), strong(Scalar::Int8)), weak(Scalar::Complex128));
  EXPECT_EQ(promote(weak(Scalar::Complex128), weak(Scalar::Float64)), weak(Scalar::Complex128));
  EXPECT_EQ(promote(weak(Scalar::Complex128), strong(Scalar::Bool)), std::nullopt);
}

// Constants round as kernels round them: float16 and bfloat16 to nearest even, bit for bit.
TEST(Types, ConstantsRoundToHalves) {
  EXPECT_EQ(half_bits(1.0, Scalar::Float16), 0x3c00);
  EXPECT_EQ(half_bits(65504.0, Scalar::Float16), 0x7bff);
  EXPECT_EQ(half_bits(65520.0, Scalar::Float16), 0x7c00);           // rounds past the largest: inf
  EXPECT_EQ(half_bits(1.0 + 1.0 / 2048, Scalar::Float16), 0x3c00);  // a tie: to even
  EXPECT_EQ(half_bits(1.0 + 3.0 / 2048, Scalar::Float16), 0x3c02);
  EXPECT_EQ(half_bits(-0.0, Scalar::Float16), 0x8000);
  EXPECT_EQ(half_bits(1.0, Scalar::BFloat16), 0x3f80);
  EXPECT_EQ(half_bits(1.0 + 1.0 / 256, Scalar::BFloat16), 0x3f80);  // a tie: to even
  EXPECT_EQ(round_constant(0.1, Scalar::Float16), 0.0999755859375);
  EXPECT_EQ(convert_constant(Constant::of_float(0.1), Scalar::Float64, Scalar::BFloat16).f, 0.10009765625);
  Constant z = Constant::of_float(1.5);
  z.im = -0.1;
  Constant z64 = convert_constant(z, Scalar::Complex128, Scalar::Complex64);
  EXPECT_EQ(z64.im, static_cast<double>(-0.1f));
  EXPECT_EQ(convert_constant(z, Scalar::Complex128, Scalar::Float32).f, 1.5);
  EXPECT_TRUE(convert_constant(Constant::of_float(0.0), Scalar::Complex128, Scalar::Bool).b == false);
  Constant i = Constant::of_float(0.0);
  i.im = 1;
  EXPECT_TRUE(convert_constant(i, Scalar::Complex128, Scalar::Bool).b);
}

TEST(Types, Str) {
  EXPECT_EQ(Type::void_().str(), "void");
  EXPECT_EQ(strong(Scalar::Float32).str(), "float32");
  EXPECT_EQ(Type::array_of(Scalar::Float32, 2, true).str(), "array(float32, 2d, C)");
  EXPECT_EQ(Type::array_of(Scalar::Int64, 1).str(), "array(int64, 1d, A)");
  Type tuple;
  tuple.kind = Type::Kind::Tuple;
  tuple.elements = {strong(Scalar::Float32), strong(Scalar::Int64)};
  EXPECT_EQ(tuple.str(), "(float32, int64)");
}

TEST(Promote, WeakLiteralTakesTheStrongType) {
  EXPECT_EQ(promote(weak(Scalar::Float64), strong(Scalar::Float32)), strong(Scalar::Float32));
  EXPECT_EQ(promote(strong(Scalar::Int32), weak(Scalar::Int64)), strong(Scalar::Int32));
  EXPECT_EQ(promote(weak(Scalar::Int64), strong(Scalar::Float32)), strong(Scalar::Float32));
  EXPECT_EQ(promote(strong(Scalar::UInt8), weak(Scalar::Int64)), strong(Scalar::UInt8));
}

TEST(Promote, WeakFloatWithStrongIntIsWeakFloat64) {
  EXPECT_EQ(promote(strong(Scalar::Int32), weak(Scalar::Float64)), weak(Scalar::Float64));
}

TEST(Promote, TwoWeakStayWeak) {
  EXPECT_EQ(promote(weak(Scalar::Int64), weak(Scalar::Int64)), weak(Scalar::Int64));
  EXPECT_EQ(promote(weak(Scalar::Int64), weak(Scalar::Float64)), weak(Scalar::Float64));
}

TEST(Promote, IntWithFloatIsTheFloat) {
  EXPECT_EQ(promote(strong(Scalar::Int64), strong(Scalar::Float32)), strong(Scalar::Float32));
  EXPECT_EQ(promote(strong(Scalar::Float64), strong(Scalar::UInt8)), strong(Scalar::Float64));
}

TEST(Promote, Float32WithFloat64IsFloat64) {
  EXPECT_EQ(promote(strong(Scalar::Float32), strong(Scalar::Float64)), strong(Scalar::Float64));
}

TEST(Promote, IntsTakeTheWiderAndSignedWhenItFits) {
  EXPECT_EQ(promote(strong(Scalar::Int32), strong(Scalar::Int64)), strong(Scalar::Int64));
  EXPECT_EQ(promote(strong(Scalar::UInt8), strong(Scalar::UInt32)), strong(Scalar::UInt32));
  EXPECT_EQ(promote(strong(Scalar::UInt8), strong(Scalar::Int32)), strong(Scalar::Int32));
  EXPECT_EQ(promote(strong(Scalar::UInt32), strong(Scalar::Int32)), strong(Scalar::Int64));
  EXPECT_EQ(promote(strong(Scalar::UInt8), strong(Scalar::Int8)), strong(Scalar::Int16));
  EXPECT_EQ(promote(strong(Scalar::UInt64), strong(Scalar::Int64)), strong(Scalar::Int64));
  EXPECT_EQ(promote(strong(Scalar::Int8), strong(Scalar::UInt64)), strong(Scalar::Int64));
}

TEST(Promote, BoolMeetsOnlyBool) {
  EXPECT_EQ(promote(strong(Scalar::Bool), strong(Scalar::Bool)), strong(Scalar::Bool));
  EXPECT_EQ(promote(strong(Scalar::Bool), weak(Scalar::Bool)), strong(Scalar::Bool));
  EXPECT_EQ(promote(strong(Scalar::Bool), strong(Scalar::Int32)), std::nullopt);
  EXPECT_EQ(promote(weak(Scalar::Int64), strong(Scalar::Bool)), std::nullopt);
  EXPECT_EQ(promote(Type::array_of(Scalar::Float32, 1), strong(Scalar::Float32)), std::nullopt);
}

}  // namespace
}  // namespace luda::dsl

// The scalar table and the promotion rules of docs/language.md "Types", one test per rule.
#include <gtest/gtest.h>

#include "dsl/types.h"

namespace luda::dsl {
namespace {

Type strong(Scalar s) { return Type::scalar_of(s); }
Type weak(Scalar s) { return Type::scalar_of(s, true); }

TEST(Types, NamesAndCTypesRoundTrip) {
  const Scalar all[] = {Scalar::Bool,   Scalar::Int8,   Scalar::Int16,  Scalar::Int32,
                        Scalar::Int64,  Scalar::UInt8,  Scalar::UInt16, Scalar::UInt32,
                        Scalar::UInt64, Scalar::Float32, Scalar::Float64};
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

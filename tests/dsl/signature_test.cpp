// parse_signature: Numba's notation in, Types out; mistakes located with a caret.
#include <gtest/gtest.h>

#include "dsl/diagnostics.h"
#include "dsl/types.h"

namespace luda::dsl {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_signature(text);
  } catch (const SourceError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Signature, Kernel) {
  Signature s = parse_signature("void(float32[:], int64[:,:], float32)");
  EXPECT_EQ(s.result, Type::void_());
  ASSERT_EQ(s.params.size(), 3u);
  EXPECT_EQ(s.params[0], Type::array_of(Scalar::Float32, 1));
  EXPECT_EQ(s.params[1], Type::array_of(Scalar::Int64, 2));
  EXPECT_EQ(s.params[2], Type::scalar_of(Scalar::Float32));
  EXPECT_EQ(s.str(), "void(float32[:], int64[:, :], float32)");
}

TEST(Signature, ScalarFunctionAndBlanks) {
  Signature s = parse_signature("  float32 ( float32 , uint8 ) ");
  EXPECT_EQ(s.result, Type::scalar_of(Scalar::Float32));
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[1], Type::scalar_of(Scalar::UInt8));
  EXPECT_EQ(parse_signature("void()").params.size(), 0u);
  EXPECT_EQ(parse_signature("(int32)").result, Type::void_());
}

TEST(Signature, ContiguousLastAxis) {
  Signature s = parse_signature("void(float64[::1], int32[:, ::1], bool[:,:,:])");
  EXPECT_EQ(s.params[0], Type::array_of(Scalar::Float64, 1, true));
  EXPECT_EQ(s.params[1], Type::array_of(Scalar::Int32, 2, true));
  EXPECT_EQ(s.params[2], Type::array_of(Scalar::Bool, 3, false));
  EXPECT_EQ(s.str(), "void(float64[::1], int32[:, ::1], bool[:, :, :])");
  EXPECT_EQ(parse_signature(s.str()).params, s.params);
}

TEST(Signature, UnknownTypeNamesTheColumn) {
  EXPECT_EQ(error_of("void(float32[:], flot32)"),
            "signature:1:18: signature error: unknown type 'flot32' (types: bool, int8, int16, "
            "int32, int64, uint8, uint16, uint32, uint64, float32, float64)\n"
            "    void(float32[:], flot32)\n"
            "                     ^");
}

TEST(Signature, OnlyTheLastAxisIsContiguous) {
  EXPECT_EQ(error_of("void(float32[::1, :])"),
            "signature:1:14: signature error: only the last axis may be marked '::1' (C order)\n"
            "    void(float32[::1, :])\n"
            "                 ^");
}

TEST(Signature, MissingParenthesis) {
  EXPECT_EQ(error_of("void(float32[:]"), "signature:1:16: signature error: expected ')' at the end\n"
                                         "    void(float32[:]\n"
                                         "                   ^");
  EXPECT_EQ(error_of("void(float32[;])"), "signature:1:14: signature error: expected ':' or '::1' for an array axis\n"
                                          "    void(float32[;])\n"
                                          "                 ^");
}

TEST(Signature, ArrayResultAndVoidParameter) {
  EXPECT_EQ(error_of("float32[:](float32)"),
            "signature:1:8: signature error: a signature's result is a scalar or void, not an array\n"
            "    float32[:](float32)\n"
            "           ^");
  EXPECT_EQ(error_of("void(void)"), "signature:1:6: signature error: 'void' is only a result type\n"
                                    "    void(void)\n"
                                    "         ^");
}

TEST(Signature, TrailingText) {
  EXPECT_EQ(error_of("void(int32) x"), "signature:1:13: signature error: unexpected 'x' after the signature\n"
                                       "    void(int32) x\n"
                                       "                ^");
}

}  // namespace
}  // namespace luda::dsl

// Constant folding gives what Lua 5.4 gives (the expected values are lua5.4's output).
#include "dsl/fold.h"

#include <gtest/gtest.h>

#include <string>

namespace luda::dsl {
namespace {

double fold_f(BinaryOp op, double a, double b) {
  std::string error;
  auto c = fold_binary(op, Constant::of_float(a), Constant::of_float(b), Scalar::Float64,
                       Scalar::Float64, &error);
  EXPECT_TRUE(c.has_value()) << error;
  return c ? c->f : 0;
}

std::int64_t fold_i(BinaryOp op, std::int64_t a, std::int64_t b) {
  std::string error;
  auto c = fold_binary(op, Constant::of_int(a), Constant::of_int(b), Scalar::Int64, Scalar::Int64, &error);
  EXPECT_TRUE(c.has_value()) << error;
  return c ? c->i : 0;
}

TEST(Fold, FloatModuloTakesTheDivisorsSign) {
  EXPECT_EQ(fold_f(BinaryOp::Mod, -5.5, -2), -1.5);
  EXPECT_EQ(fold_f(BinaryOp::Mod, 5.5, -2), -0.5);
  EXPECT_EQ(fold_f(BinaryOp::Mod, -5.5, 2), 0.5);
  EXPECT_EQ(fold_f(BinaryOp::Mod, 5.5, 2), 1.5);
  EXPECT_EQ(fold_f(BinaryOp::IDiv, -7.25, 2), -4.0);
}

TEST(Fold, IntegerModuloAndFloorDivisionFloor) {
  EXPECT_EQ(fold_i(BinaryOp::Mod, -7, -3), -1);
  EXPECT_EQ(fold_i(BinaryOp::Mod, 7, -3), -2);
  EXPECT_EQ(fold_i(BinaryOp::IDiv, 7, -2), -4);
}

}  // namespace
}  // namespace luda::dsl

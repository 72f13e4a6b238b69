// Constant folding gives what Lua 5.4 gives (the expected values are lua5.4's output).
#include "dsl/fold.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace luda::dsl {
namespace {

double fold_f(BinaryOp op, double a, double b) {
  std::string error;
  auto c = fold_binary(op, Constant::of_float(a), Constant::of_float(b), Scalar::Float64, Scalar::Float64, &error);
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

// Folding at a type's width gives what the device computes (prelude luda_floordiv,
// luda_mod, luda_shl): no operation is left to C++'s undefined behaviour.
std::int64_t fold_at(BinaryOp op, std::int64_t a, std::int64_t b, Scalar type) {
  std::string error;
  bool shift = op == BinaryOp::Shl || op == BinaryOp::Shr;
  auto c = fold_binary(op, convert_constant(Constant::of_int(a), Scalar::Int64, type),
                       convert_constant(Constant::of_int(b), Scalar::Int64, shift ? Scalar::Int64 : type), type, type,
                       &error);
  EXPECT_TRUE(c.has_value()) << error;
  return c ? c->i : 0;
}

TEST(Fold, MinimumFloorDividedByMinusOneWraps) {
  EXPECT_EQ(fold_at(BinaryOp::IDiv, INT64_MIN, -1, Scalar::Int64), INT64_MIN);
  EXPECT_EQ(fold_at(BinaryOp::Mod, INT64_MIN, -1, Scalar::Int64), 0);
  EXPECT_EQ(fold_at(BinaryOp::IDiv, INT32_MIN, -1, Scalar::Int32), INT32_MIN);
  EXPECT_EQ(fold_at(BinaryOp::IDiv, -128, -1, Scalar::Int8), -128);
  EXPECT_EQ(fold_at(BinaryOp::Mul, INT64_MIN, -1, Scalar::Int64), INT64_MIN);
  EXPECT_EQ(fold_at(BinaryOp::Add, INT32_MAX, 1, Scalar::Int32), INT32_MIN);
}

TEST(Fold, ShiftsAtEveryWidth) {
  EXPECT_EQ(fold_at(BinaryOp::Shl, 1, 8, Scalar::Int8), 0);
  EXPECT_EQ(fold_at(BinaryOp::Shl, 1, 7, Scalar::Int8), -128);
  EXPECT_EQ(fold_at(BinaryOp::Shr, -1, 4, Scalar::Int8), 0x0f);  // logical: the 8-bit pattern
  EXPECT_EQ(fold_at(BinaryOp::Shr, -1, 1, Scalar::UInt16), 0x7fff);
  EXPECT_EQ(fold_at(BinaryOp::Shl, 1, 32, Scalar::UInt32), 0);
  EXPECT_EQ(fold_at(BinaryOp::Shl, 3, -1, Scalar::UInt32), 1);
  EXPECT_EQ(fold_at(BinaryOp::Shl, 1, 64, Scalar::Int64), 0);
  EXPECT_EQ(fold_at(BinaryOp::Shr, 1, INT64_MIN, Scalar::Int64), 0);
  EXPECT_EQ(fold_at(BinaryOp::Shl, 1, INT64_MIN, Scalar::Int64), 0);
}

TEST(Fold, UnsignedDivisionAtTheTypesWidth) {
  EXPECT_EQ(static_cast<std::uint64_t>(fold_at(BinaryOp::IDiv, -1, 3, Scalar::UInt64)), UINT64_MAX / 3);
  EXPECT_EQ(fold_at(BinaryOp::Mod, -1, 10, Scalar::UInt32), 4294967295 % 10);
  std::string error;
  EXPECT_FALSE(
      fold_binary(BinaryOp::IDiv, Constant::of_int(5), Constant::of_int(0), Scalar::UInt64, Scalar::UInt64, &error));
  EXPECT_EQ(error, "attempt to perform 'n//0'");
}

// Float constants convert to integers as the device does (luda_ftoi, PTX's cvt.rzi):
// towards zero, saturated at the target's range, NaN to 0.
std::int64_t to_int(double v, Scalar type) { return convert_constant(Constant::of_float(v), Scalar::Float64, type).i; }

TEST(Fold, FloatToIntegerSaturatesAtTheTargetsRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(to_int(300.75, Scalar::Int8), 127);
  EXPECT_EQ(to_int(-300.75, Scalar::Int8), -128);
  EXPECT_EQ(to_int(-127.9, Scalar::Int8), -127);
  EXPECT_EQ(to_int(300.75, Scalar::UInt8), 255);
  EXPECT_EQ(to_int(-5.5, Scalar::UInt8), 0);
  EXPECT_EQ(to_int(-0.5, Scalar::UInt32), 0);
  EXPECT_EQ(to_int(70000.5, Scalar::Int16), 32767);
  EXPECT_EQ(to_int(70000.5, Scalar::UInt16), 65535);
  EXPECT_EQ(to_int(2147483648.0, Scalar::Int32), INT32_MAX);
  EXPECT_EQ(to_int(-2147483648.5, Scalar::Int32), INT32_MIN);
  EXPECT_EQ(to_int(4294967296.5, Scalar::UInt32), 4294967295);
  EXPECT_EQ(to_int(1e300, Scalar::Int64), INT64_MAX);
  EXPECT_EQ(to_int(-inf, Scalar::Int64), INT64_MIN);
  EXPECT_EQ(static_cast<std::uint64_t>(to_int(inf, Scalar::UInt64)), UINT64_MAX);
  EXPECT_EQ(static_cast<std::uint64_t>(to_int(9223372036854775808.0, Scalar::UInt64)), 9223372036854775808ull);
  for (Scalar t : {Scalar::Int8, Scalar::UInt8, Scalar::Int32, Scalar::UInt32, Scalar::Int64, Scalar::UInt64})
    EXPECT_EQ(to_int(nan, t), 0);
}

}  // namespace
}  // namespace luda::dsl

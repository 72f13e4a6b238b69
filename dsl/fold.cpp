#include "dsl/fold.h"

#include <cmath>
#include <cstdint>

namespace luda::dsl {
namespace {

using u64 = std::uint64_t;
using i64 = std::int64_t;

Constant wrap(u64 bits, Scalar type) {
  return convert_constant(Constant::of_int(static_cast<i64>(bits)), Scalar::Int64, type);
}

double round_to(double v, Scalar type) { return round_constant(v, type); }

bool less(const Constant& a, const Constant& b, Scalar type) {
  if (a.kind == Constant::Kind::Float) return a.f < b.f;
  if (is_signed(type)) return a.i < b.i;
  return static_cast<u64>(a.i) < static_cast<u64>(b.i);
}

std::optional<Constant> fold_int(BinaryOp op, i64 x, i64 y, Scalar type, std::string* error) {
  u64 ux = static_cast<u64>(x), uy = static_cast<u64>(y);
  bool sign = is_signed(type);
  switch (op) {
    case BinaryOp::Add: return wrap(ux + uy, type);
    case BinaryOp::Sub: return wrap(ux - uy, type);
    case BinaryOp::Mul: return wrap(ux * uy, type);
    case BinaryOp::BAnd: return wrap(ux & uy, type);
    case BinaryOp::BOr: return wrap(ux | uy, type);
    case BinaryOp::BXor: return wrap(ux ^ uy, type);
    case BinaryOp::IDiv:
    case BinaryOp::Mod: {
      if (y == 0) {
        if (error) *error = op == BinaryOp::IDiv ? "attempt to perform 'n//0'" : "attempt to perform 'n%0'";
        return std::nullopt;
      }
      if (!sign) return wrap(op == BinaryOp::IDiv ? ux / uy : ux % uy, type);
      if (y == -1) return wrap(op == BinaryOp::IDiv ? 0 - ux : 0, type);
      i64 q = x / y, m = x % y;
      if (m != 0 && ((m ^ y) < 0)) {
        q -= 1;
        m += y;
      }
      return wrap(static_cast<u64>(op == BinaryOp::IDiv ? q : m), type);
    }
    case BinaryOp::Shl:
    case BinaryOp::Shr: {
      i64 bits = scalar_bits(type);
      // Shift counts are int64 here; x holds the value zero-extended to its width.
      u64 value = ux & (bits == 64 ? ~u64{0} : ((u64{1} << bits) - 1));
      i64 n = op == BinaryOp::Shl ? y : static_cast<i64>(0 - uy);
      if (n <= -bits || n >= bits) return wrap(0, type);
      return wrap(n >= 0 ? value << n : value >> -n, type);
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Constant> fold_binary(BinaryOp op, const Constant& a, const Constant& b, Scalar operand, Scalar result,
                                    std::string* error) {
  switch (op) {
    case BinaryOp::Eq: return Constant::of_bool(a == b);
    case BinaryOp::Ne: return Constant::of_bool(!(a == b));
    default: break;
  }
  // Bools: NumPy's + is or, * is and.
  if (operand == Scalar::Bool && op == BinaryOp::Add) return Constant::of_bool(a.b || b.b);
  if (operand == Scalar::Bool && op == BinaryOp::Mul) return Constant::of_bool(a.b && b.b);
  // Complex arithmetic and order are the prelude's, at run time (their results may have
  // an imaginary part, and the order looks at both parts).
  if (is_complex(operand) || is_complex(result)) return std::nullopt;
  switch (op) {
    case BinaryOp::Lt: return Constant::of_bool(less(a, b, operand));
    case BinaryOp::Le: return Constant::of_bool(!less(b, a, operand));
    case BinaryOp::Gt: return Constant::of_bool(less(b, a, operand));
    case BinaryOp::Ge: return Constant::of_bool(!less(a, b, operand));
    case BinaryOp::And: return Constant::of_bool(a.b && b.b);
    case BinaryOp::Or: return Constant::of_bool(a.b || b.b);
    default: break;
  }
  if (op == BinaryOp::Div || op == BinaryOp::Pow) {
    Constant fa = convert_constant(a, operand, result), fb = convert_constant(b, operand, result);
    double v = op == BinaryOp::Div ? fa.f / fb.f : std::pow(fa.f, fb.f);
    return Constant::of_float(round_to(v, result));
  }
  if (is_integer(operand)) return fold_int(op, a.i, b.i, operand, error);
  if (!is_float(operand)) return std::nullopt;
  double x = a.f, y = b.f, v;
  switch (op) {
    case BinaryOp::Add: v = x + y; break;
    case BinaryOp::Sub: v = x - y; break;
    case BinaryOp::Mul: v = x * y; break;
    case BinaryOp::IDiv: v = std::floor(x / y); break;
    case BinaryOp::Mod: {
      // The prelude's luda_mod: Lua's luai_nummod, with a zero taking y's sign (NumPy's).
      v = std::fmod(x, y);
      if (v == 0) v = std::copysign(0.0, y);
      else if ((v > 0) ? y < 0 : (v < 0 && y > 0)) v += y;
      break;
    }
    default: return std::nullopt;
  }
  return Constant::of_float(round_to(v, operand));
}

std::optional<Constant> fold_unary(UnaryOp op, const Constant& a, Scalar type) {
  switch (op) {
    case UnaryOp::Neg:
      if (is_complex(type)) {
        Constant r = Constant::of_float(-a.f);
        r.im = -a.im;
        return r;
      }
      if (is_float(type)) return Constant::of_float(-a.f);
      return wrap(0 - static_cast<u64>(a.i), type);
    case UnaryOp::BNot: return wrap(~static_cast<u64>(a.i), type);
    case UnaryOp::Not: return Constant::of_bool(!a.b);
    default: return std::nullopt;
  }
}

}  // namespace luda::dsl

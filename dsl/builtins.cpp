#include "dsl/builtins.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace luda::dsl {
namespace {

// ---------------------------------------------------------------- type rules

BuiltinTyping fail(std::string message, int operand = -1) {
  BuiltinTyping t;
  t.error = std::move(message);
  t.error_operand = operand;
  return t;
}

std::string describe(const BuiltinOperand& op) {
  if (!op.describe.empty()) return op.describe;
  if (op.is_string) return "a string";
  return op.type.str();
}

Type float_of(const Type& t) {
  if (t.is_floating()) return t;
  return Type::scalar_of(Scalar::Float64, t.weak);
}

// The '|'-separated alternative for `nargs` arguments.
std::string_view alternative(std::string_view templ, int index) {
  for (int i = 0; i < index; ++i) {
    auto bar = templ.find('|');
    if (bar == std::string_view::npos) return templ;
    templ.remove_prefix(bar + 1);
  }
  return templ.substr(0, templ.find('|'));
}

// Whether the row has a complex form for `nargs` arguments (Builtin::emit_complex).
bool has_complex_form(const Builtin& row, std::size_t nargs) {
  return !row.emit_complex.empty() && !alternative(row.emit_complex, static_cast<int>(nargs) - row.min_args).empty();
}

// A complex operand where the row has no complex form: the error, at the first one.
BuiltinTyping no_complex(const Builtin& row, std::span<const BuiltinOperand> args) {
  int at = -1;
  for (std::size_t i = 0; i < args.size() && at < 0; ++i)
    if (args[i].type.is_complex()) at = static_cast<int>(i);
  return fail(fmt::format("{}{} is not defined for complex numbers (nor is NumPy's)", row.name,
                          args.size() > 1 && row.min_args != row.max_args
                              ? fmt::format(" with {} arguments", args.size())
                              : ""),
              at);
}

// A 16-bit float's math: its operands converted to float32, the function of float32, the
// value rounded back to the 16-bit type (NumPy computes float16's functions so).
void in_float32(BuiltinTyping& t) {
  const Type f32 = Type::scalar_of(Scalar::Float32);
  for (Type& c : t.convert)
    if (c.kind == Type::Kind::Scalar) c = f32;
  t.operation = f32;
  t.round_result = t.result.kind == Type::Kind::Scalar && is_half(t.result.scalar);
}

// All operands numbers, promoted together; the common type, or an error naming the first
// operand that is not a number.
std::optional<Type> common_number(const Builtin& row, std::span<const BuiltinOperand> args, BuiltinTyping& error) {
  std::optional<Type> common;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].type.is_number()) {
      error = fail(fmt::format("{} expects a number, got {}", row.name, describe(args[i])), int(i));
      return std::nullopt;
    }
    common = common ? promote(*common, args[i].type) : args[i].type;
  }
  return common;
}

BuiltinTyping rule_value(const Builtin& row, std::span<const BuiltinOperand>) {
  BuiltinTyping t;
  t.result = t.operation = Type::scalar_of(row.scalar);
  return t;
}

// math.pi, math.huge: weak float64 like a literal; cuda.warpsize: int32 32.
BuiltinTyping rule_constant(const Builtin& row, std::span<const BuiltinOperand>) {
  BuiltinTyping t;
  bool weak = row.scalar == Scalar::Float64;
  t.result = t.operation = Type::scalar_of(row.scalar, weak);
  t.constant = is_float(row.scalar) ? Constant::of_float(row.value)
                                    : Constant::of_int(static_cast<std::int64_t>(row.value));
  return t;
}

// math.maxinteger / math.mininteger: strong int64 (a weak one would silently shrink).
BuiltinTyping rule_int_limit(const Builtin& row, std::span<const BuiltinOperand>) {
  BuiltinTyping t;
  t.result = t.operation = Type::scalar_of(Scalar::Int64);
  t.constant = Constant::of_int(row.value > 0 ? std::numeric_limits<std::int64_t>::max()
                                              : std::numeric_limits<std::int64_t>::min());
  return t;
}

// Float functions: integers become float64, float32 stays float32 (expf, never exp).
// Complex operands: the complex form (emit_complex) in their common complex type.
BuiltinTyping rule_float(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto common = common_number(row, args, t);
  if (!common) return t;
  if (common->is_complex()) {
    if (!has_complex_form(row, args.size())) return no_complex(row, args);
    t.result = t.operation = *common;
    t.convert.assign(args.size(), *common);
    return t;
  }
  Type f = float_of(*common);
  t.result = t.operation = f;
  t.convert.assign(args.size(), f);
  if (is_half(f.scalar)) in_float32(t);
  return t;
}

// A float function of the values' own bits (nextafter): a 16-bit float stays one.
BuiltinTyping rule_float_exact(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto common = common_number(row, args, t);
  if (!common) return t;
  if (common->is_complex()) return no_complex(row, args);
  Type f = float_of(*common);
  t.result = t.operation = f;
  t.convert.assign(args.size(), f);
  return t;
}

BuiltinTyping rule_float_predicate(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t = rule_float(row, args);
  if (t.error.empty()) t.result = Type::scalar_of(Scalar::Bool);
  t.round_result = false;
  return t;
}

// math.floor / math.ceil: Lua 5.4 gives an integer; here int64 for a float argument (an
// integer argument is returned as it is).
BuiltinTyping rule_float_to_int(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto common = common_number(row, args, t);
  if (!common) return t;
  if (common->is_complex()) return no_complex(row, args);
  t.operation = *common;
  t.convert.assign(args.size(), *common);
  t.result = common->is_int() ? *common : Type::scalar_of(Scalar::Int64, common->weak);
  if (is_half(common->scalar)) in_float32(t);
  return t;
}

// math.abs, math.min, math.max, math.fmod: the operands' common type. Complex operands
// take the row's complex form (min and max order them as NumPy 2 does: by the real parts,
// then the imaginary ones), or are an error.
BuiltinTyping rule_number(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto common = common_number(row, args, t);
  if (!common) return t;
  if (common->is_complex() && !has_complex_form(row, args.size())) return no_complex(row, args);
  t.result = t.operation = *common;
  t.convert.assign(args.size(), *common);
  if (is_half(common->scalar)) in_float32(t);
  return t;
}

// math.abs: a complex's magnitude is real (NumPy's abs of complex64 is float32).
BuiltinTyping rule_abs(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t = rule_number(row, args);
  if (t.error.empty() && t.result.is_complex()) t.result = Type::scalar_of(real_part(t.result.scalar), t.result.weak);
  return t;
}

// luda.real(x), luda.imag(x), luda.conj(x), luda.angle(x), as NumPy's: a complex's parts
// (of its real type), its conjugate, its argument; a real number is its own real part and
// conjugate, has an imaginary part of 0 in its type, and an angle of 0 or pi (atan2(0, x),
// a float: float64 for an integer).
enum class Part { Real, Imag, Conj, Angle };
BuiltinTyping part(const Builtin& row, std::span<const BuiltinOperand> args, Part which) {
  const BuiltinOperand& a = args[0];
  if (!a.type.is_number()) return fail(fmt::format("{} expects a number, got {}", row.name, describe(a)), 0);
  BuiltinTyping t;
  if (a.type.is_complex()) {
    t.operation = a.type;
    t.result = which == Part::Conj ? a.type : Type::scalar_of(real_part(a.type.scalar), a.type.weak);
    t.convert.assign(1, a.type);
    return t;
  }
  t.result = t.operation = which == Part::Angle ? float_of(a.type) : a.type;
  t.convert.assign(1, t.result);
  if (which == Part::Angle && is_half(t.result.scalar)) in_float32(t);
  if (a.constant && which != Part::Angle)
    t.constant = which == Part::Imag ? convert_constant(Constant::of_int(0), Scalar::Int64, a.type.scalar)
                                     : *a.constant;
  return t;
}
BuiltinTyping rule_real(const Builtin& row, std::span<const BuiltinOperand> args) {
  return part(row, args, Part::Real);
}
BuiltinTyping rule_imag(const Builtin& row, std::span<const BuiltinOperand> args) {
  return part(row, args, Part::Imag);
}
BuiltinTyping rule_conj(const Builtin& row, std::span<const BuiltinOperand> args) {
  return part(row, args, Part::Conj);
}
BuiltinTyping rule_angle(const Builtin& row, std::span<const BuiltinOperand> args) {
  return part(row, args, Part::Angle);
}

// luda.float32(x) and friends: a strong value of the row's type.
BuiltinTyping rule_cast(const Builtin& row, std::span<const BuiltinOperand> args) {
  const BuiltinOperand& a = args[0];
  if (!a.type.is_scalar()) return fail(fmt::format("{} converts a number or a bool, got {}", row.name, describe(a)), 0);
  BuiltinTyping t;
  t.result = t.operation = Type::scalar_of(row.scalar);
  t.convert.assign(1, Type::void_());
  if (a.constant) t.constant = convert_constant(*a.constant, a.type.scalar, row.scalar);
  return t;
}

// luda.complex64(x), luda.complex128(x): a conversion, as rule_cast; (re, im): the complex
// of two real numbers, each converted to the parts' type.
BuiltinTyping rule_complex_cast(const Builtin& row, std::span<const BuiltinOperand> args) {
  if (args.size() == 1) return rule_cast(row, args);
  for (std::size_t i = 0; i < 2; ++i)
    if (!args[i].type.is_real())
      return fail(fmt::format("{}(re, im) takes two real numbers, got {}", row.name, describe(args[i])), int(i));
  BuiltinTyping t;
  t.result = t.operation = Type::scalar_of(row.scalar);
  t.convert.assign(2, Type::scalar_of(real_part(row.scalar)));
  if (args[0].constant && args[1].constant) {
    Constant c = convert_constant(*args[0].constant, args[0].type.scalar, row.scalar);
    c.im = convert_constant(*args[1].constant, args[1].type.scalar, real_part(row.scalar)).f;
    t.constant = c;
  }
  return t;
}

// luda.complex(re [, im]): Python's complex(re, im). Of Lua numbers and literals it is a
// weak complex128, as Python's complex is to NumPy 2 (a complex64 array times
// luda.complex(0, 1) stays complex64); of typed values, the complex that holds their
// common type (float32 parts give complex64). One complex argument is itself.
BuiltinTyping rule_complex(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  if (args.size() == 1 && args[0].type.is_complex()) {
    t.result = t.operation = args[0].type;
    t.convert.assign(1, Type::void_());
    return t;
  }
  auto common = common_number(row, args, t);
  if (!common) return t;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].type.is_complex())
      return fail(fmt::format("{}(re, im) takes two real numbers, got {}", row.name, describe(args[i])), int(i));
  Type c = Type::scalar_of(common->weak ? Scalar::Complex128 : complex_of(common->scalar), common->weak);
  t.result = t.operation = c;
  t.convert.assign(args.size(), args.size() == 1 ? Type::void_() : Type::scalar_of(real_part(c.scalar)));
  bool constant = true;
  for (const BuiltinOperand& a : args) constant = constant && a.constant.has_value();
  if (constant) {
    Constant re = convert_constant(*args[0].constant, args[0].type.scalar, c.scalar);
    if (args.size() == 2) re.im = convert_constant(*args[1].constant, args[1].type.scalar, real_part(c.scalar)).f;
    t.constant = re;
  }
  return t;
}

// cuda.syncwarp(mask?), cuda.syncthreads(): masks are uint32.
BuiltinTyping rule_sync(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!args[i].type.is_int())
      return fail(fmt::format("{} expects an integer mask, got {}", row.name, describe(args[i])), int(i));
  t.convert.assign(args.size(), Type::scalar_of(Scalar::UInt32));
  return t;
}

BuiltinTyping rule_sync_predicate(const Builtin& row, std::span<const BuiltinOperand> args) {
  if (!args[0].type.is_bool())
    return fail(fmt::format("{} expects a bool, got {} (write x ~= 0)", row.name, describe(args[0])), 0);
  BuiltinTyping t;
  t.result = t.operation = Type::scalar_of(row.scalar);
  t.convert.assign(1, Type::scalar_of(Scalar::Bool));
  return t;
}

// cuda.grid(n), cuda.gridsize(n): n a constant 1, 2 or 3; n int64 values.
BuiltinTyping rule_grid(const Builtin& row, std::span<const BuiltinOperand> args) {
  const BuiltinOperand& a = args[0];
  if (!a.constant || a.constant->kind != Constant::Kind::Int || a.constant->i < 1 || a.constant->i > 3)
    return fail(fmt::format("{} takes a constant 1, 2 or 3 (the number of dimensions)", row.name), 0);
  BuiltinTyping t;
  Type i64 = Type::scalar_of(Scalar::Int64);
  t.operation = i64;
  t.convert.assign(1, Type::void_());
  if (a.constant->i == 1) {
    t.result = i64;
  } else {
    t.result.kind = Type::Kind::Tuple;
    t.result.elements.assign(static_cast<std::size_t>(a.constant->i), i64);
  }
  return t;
}

bool one_of(Scalar s, std::initializer_list<Scalar> allowed) {
  for (Scalar a : allowed)
    if (a == s) return true;
  return false;
}

constexpr std::initializer_list<Scalar> kWordTypes = {Scalar::Int32,  Scalar::UInt32,  Scalar::Int64,
                                                      Scalar::UInt64, Scalar::Float32, Scalar::Float64};

// cuda.atomic.*(a, i [, j, k], v [, v2]): one index per dimension, then `values` values
// converted to the element type; the old element is returned. A row whose atomic is
// Atomic::First takes no indices: the element is a[0] of a 1-d array (numba.cuda's
// compare_and_swap).
BuiltinTyping atomic(const Builtin& row, std::span<const BuiltinOperand> args, int values,
                     std::initializer_list<Scalar> allowed, std::string_view allowed_text) {
  const bool indexed = row.atomic != Builtin::Atomic::First;
  const BuiltinOperand& a = args[0];
  if (a.type.kind != Type::Kind::Array)
    return fail(fmt::format("{} expects an array as its first argument, got {}", row.name, describe(a)), 0);
  if (!indexed && a.type.ndim != 1)
    return fail(fmt::format("{} works on a[0] of a 1-d array, not of a {}-d one (cuda.atomic.cas takes an index "
                            "per dimension)",
                            row.name, a.type.ndim),
                0);
  int indices = indexed ? a.type.ndim : 0;
  std::size_t want = 1 + static_cast<std::size_t>(indices) + static_cast<std::size_t>(values);
  if (args.size() != want) {
    std::string indices = a.type.ndim == 1 ? "i" : a.type.ndim == 2 ? "i, j" : "i, j, k";
    if (a.type.ndim > 3) indices = fmt::format("{} indices", a.type.ndim);
    return fail(fmt::format("{} on a {}-d array takes {} ind{} and {}: {}(a, {}, {})", row.name, a.type.ndim,
                            a.type.ndim, a.type.ndim == 1 ? "ex" : "ices", values == 1 ? "a value" : "two values",
                            row.name, indices, values == 1 ? "v" : "old, v"));
  }
  if (!one_of(a.type.scalar, allowed))
    return fail(fmt::format("{} works on arrays of {}, not {}", row.name, allowed_text, scalar_name(a.type.scalar)), 0);
  BuiltinTyping t;
  Type elem = Type::scalar_of(a.type.scalar);
  t.convert.push_back(Type::void_());
  for (int d = 0; d < indices; ++d) {
    const BuiltinOperand& idx = args[1 + static_cast<std::size_t>(d)];
    if (!idx.type.is_int()) return fail(fmt::format("an index must be an integer, got {}", describe(idx)), 1 + d);
    t.convert.push_back(Type::scalar_of(Scalar::Int64));
  }
  for (int v = 0; v < values; ++v) {
    std::size_t k = 1 + static_cast<std::size_t>(indices + v);
    if (!args[k].type.is_number())
      return fail(fmt::format("{} expects a number to combine with the element, got {}", row.name, describe(args[k])),
                  int(k));
    t.convert.push_back(elem);
  }
  t.result = t.operation = elem;
  return t;
}

BuiltinTyping rule_atomic_arith(const Builtin& row, std::span<const BuiltinOperand> args) {
  return atomic(row, args, 1, kWordTypes, "int32, uint32, int64, uint64, float32 or float64");
}
BuiltinTyping rule_atomic_cas(const Builtin& row, std::span<const BuiltinOperand> args) {
  return atomic(row, args, 2, kWordTypes, "int32, uint32, int64, uint64, float32 or float64");
}
BuiltinTyping rule_atomic_bits(const Builtin& row, std::span<const BuiltinOperand> args) {
  return atomic(row, args, 1, {Scalar::Int32, Scalar::UInt32, Scalar::Int64, Scalar::UInt64},
                "int32, uint32, int64 or uint64");
}
BuiltinTyping rule_atomic_wrap(const Builtin& row, std::span<const BuiltinOperand> args) {
  return atomic(row, args, 1, {Scalar::UInt32, Scalar::UInt64}, "uint32 or uint64");
}

// cuda.random's draws (numba.cuda.random): (states, i), states the uint64 array {n, 2}
// that cuda.random.create_xoroshiro128p_states makes; advances generator i.
BuiltinTyping rule_xoroshiro(const Builtin& row, std::span<const BuiltinOperand> args) {
  const BuiltinOperand& s = args[0];
  if (s.type.kind != Type::Kind::Array || s.type.ndim != 2 || s.type.scalar != Scalar::UInt64)
    return fail(fmt::format("{} expects generator states, a uint64 array of shape {{n, 2}} as "
                            "cuda.random.create_xoroshiro128p_states makes them, got {}",
                            row.name, describe(s)),
                0);
  if (!args[1].type.is_int())
    return fail(fmt::format("{} expects the integer index of a generator, got {}", row.name, describe(args[1])), 1);
  BuiltinTyping t;
  t.convert = {Type::void_(), Type::scalar_of(Scalar::Int64)};
  t.result = t.operation = Type::scalar_of(row.scalar);
  return t;
}

// The (mask, value) of a warp function that moves or compares a value of a 32- or 64-bit
// type: the value's type, or nullopt with `error` set.
std::optional<Type> warp_value(const Builtin& row, std::span<const BuiltinOperand> args, std::string_view verb,
                               BuiltinTyping& error) {
  if (!args[0].type.is_int()) {
    error = fail(fmt::format("{} expects an integer mask, got {}", row.name, describe(args[0])), 0);
    return std::nullopt;
  }
  const BuiltinOperand& v = args[1];
  if (!v.type.is_number()) {
    error = fail(fmt::format("{} {} a number, got {}", row.name, verb, describe(v)), 1);
    return std::nullopt;
  }
  Type value = v.type.weak ? Type::scalar_of(v.type.scalar) : v.type;
  if (!one_of(value.scalar, kWordTypes)) {
    error = fail(fmt::format("{} {} int32, uint32, int64, uint64, float32 or float64, not {} "
                             "(convert it, e.g. luda.int32(x))",
                             row.name, verb, scalar_name(value.scalar)),
                 1);
    return std::nullopt;
  }
  return value;
}

// cuda.shfl_*_sync(mask, value, lane_or_delta): value of a 32- or 64-bit type.
BuiltinTyping rule_shuffle(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto found = warp_value(row, args, "shuffles", t);
  if (!found) return t;
  Type value = *found;
  if (!args[2].type.is_int())
    return fail(fmt::format("{} expects an integer lane, got {}", row.name, describe(args[2])), 2);
  t.convert = {Type::scalar_of(Scalar::UInt32), value, Type::scalar_of(Scalar::Int32)};
  t.result = t.operation = value;
  return t;
}

// cuda.popc, clz, ffs, brev (numba.cuda's bit intrinsics) on one integer of any width; a
// plain number is int64. popc and clz count within the operand's width and give its type,
// ffs gives uint32, brev reverses a uint32 (operands of up to 32 bits, converted as C
// converts) or a uint64.
std::optional<Type> bit_operand(const Builtin& row, std::span<const BuiltinOperand> args, BuiltinTyping& error) {
  const BuiltinOperand& a = args[0];
  if (!a.type.is_int()) {
    error = fail(fmt::format("{} expects an integer, got {} (convert it, e.g. luda.int32(x))", row.name, describe(a)),
                 0);
    return std::nullopt;
  }
  return Type::scalar_of(a.type.scalar);
}

// popc, clz: the operand's type; a row whose scalar is UInt32 (ffs) always gives uint32.
BuiltinTyping rule_bit_count(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto in = bit_operand(row, args, t);
  if (!in) return t;
  t.convert = {*in};
  t.result = t.operation = row.scalar == Scalar::UInt32 ? Type::scalar_of(Scalar::UInt32) : *in;
  return t;
}

BuiltinTyping rule_brev(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto in = bit_operand(row, args, t);
  if (!in) return t;
  Type word = Type::scalar_of(scalar_bits(in->scalar) == 64 ? Scalar::UInt64 : Scalar::UInt32);
  t.convert = {word};
  t.result = t.operation = word;
  return t;
}

// cuda.fns(mask, base, offset): the position of the offset-th set bit of the uint32 mask
// counted from bit base (upwards for offset > 0, downwards for offset < 0; offset 0 asks
// whether bit base is set), 0xffffffff where there is none; numba.cuda's, CUDA's __fns.
BuiltinTyping rule_fns(const Builtin& row, std::span<const BuiltinOperand> args) {
  static const char* const what[] = {"mask", "base", "offset"};
  for (int k = 0; k < 3; ++k)
    if (!args[k].type.is_int())
      return fail(fmt::format("{} expects an integer {}, got {}", row.name, what[k], describe(args[k])), k);
  BuiltinTyping t;
  t.convert = {Type::scalar_of(Scalar::UInt32), Type::scalar_of(Scalar::UInt32), Type::scalar_of(Scalar::Int32)};
  t.result = t.operation = Type::scalar_of(Scalar::UInt32);
  return t;
}

// cuda.match_any_sync(mask, value): the uint32 mask of lanes holding the same bits;
// cuda.match_all_sync(mask, value): that mask (or 0) and whether every lane agrees, as
// numba.cuda's tuple.
BuiltinTyping rule_match(const Builtin& row, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  auto value = warp_value(row, args, "compares", t);
  if (!value) return t;
  t.convert = {Type::scalar_of(Scalar::UInt32), *value};
  t.operation = *value;
  t.result = Type::scalar_of(Scalar::UInt32);
  if (row.scalar == Scalar::Bool) {
    t.result.kind = Type::Kind::Tuple;
    t.result.elements = {Type::scalar_of(Scalar::UInt32), Type::scalar_of(Scalar::Bool)};
  }
  return t;
}

// cuda.ballot_sync / all_sync / any_sync(mask, predicate).
BuiltinTyping rule_vote(const Builtin& row, std::span<const BuiltinOperand> args) {
  if (!args[0].type.is_int())
    return fail(fmt::format("{} expects an integer mask, got {}", row.name, describe(args[0])), 0);
  if (!args[1].type.is_bool())
    return fail(fmt::format("{} expects a bool predicate, got {} (write x ~= 0)", row.name, describe(args[1])), 1);
  BuiltinTyping t;
  t.convert = {Type::scalar_of(Scalar::UInt32), Type::scalar_of(Scalar::Bool)};
  t.result = t.operation = Type::scalar_of(row.scalar);
  return t;
}

std::optional<Scalar> dtype_operand(const BuiltinOperand& op) { return op.dtype; }

BuiltinTyping rule_array_alloc(const Builtin& row, std::span<const BuiltinOperand> args) {
  const BuiltinOperand& shape = args[0];
  if (!shape.shape)
    return fail(fmt::format("{}: the shape must be a constant number or a table of constant numbers "
                            "(e.g. {{32, 33}}), known when the kernel is compiled",
                            row.name),
                0);
  if (shape.shape->size() > static_cast<std::size_t>(kMaxArrayDims))
    return fail(fmt::format("{}: maximum supported dimension for an ndarray is currently {}, found {}", row.name,
                            kMaxArrayDims, shape.shape->size()),
                0);
  for (long long n : *shape.shape)
    if (n <= 0) return fail(fmt::format("{}: every extent must be positive, got {}", row.name, n), 0);
  auto dtype = dtype_operand(args[1]);
  if (!dtype)
    return fail(fmt::format("{}: the dtype must be a type name such as \"float32\" or luda.float32, got {}", row.name,
                            describe(args[1])),
                1);
  BuiltinTyping t;
  t.result = Type::array_of(*dtype, static_cast<int>(shape.shape->size()), true);
  t.shape = *shape.shape;
  t.convert.assign(2, Type::void_());
  return t;
}

BuiltinTyping rule_dynamic_alloc(const Builtin& row, std::span<const BuiltinOperand> args) {
  auto dtype = dtype_operand(args[0]);
  if (!dtype)
    return fail(fmt::format("{}: the dtype must be a type name such as \"float32\" or luda.float32, got {}", row.name,
                            describe(args[0])),
                0);
  BuiltinTyping t;
  t.result = Type::array_of(*dtype, 1, true);
  t.convert.assign(1, Type::void_());
  return t;
}

BuiltinTyping rule_print(const Builtin&, std::span<const BuiltinOperand> args) {
  BuiltinTyping t;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!args[i].is_string && !args[i].type.is_scalar())
      return fail(fmt::format("print prints numbers, bools and string literals, not {}", describe(args[i])), int(i));
  t.convert.assign(args.size(), Type::void_());
  return t;
}

// ---------------------------------------------------------------- the table

using F = Builtin::Form;
using A = Builtin::Alloc;
using Atomic = Builtin::Atomic;

// clang-format off
#define FLOAT1(ns, n, what) \
  {.name = ns "." #n, .min_args = 1, .max_args = 1, .type = rule_float, .emit = #n "{f}($0)", .args_doc = "(x)", .doc = what}
// A float function with a complex form: the prelude's luda_c<name> (dsl/prelude.cpp).
#define CFLOAT1(ns, n, what) \
  {.name = ns "." #n, .min_args = 1, .max_args = 1, .type = rule_float, .emit = #n "{f}($0)", \
   .emit_complex = "luda_c" #n "($0)", .args_doc = "(x)", .doc = what}
#define FLOAT2(ns, n, what) \
  {.name = ns "." #n, .min_args = 2, .max_args = 2, .type = rule_float, .emit = #n "{f}($0, $1)", .args_doc = "(x, y)", \
   .doc = what}
// blockDim and gridDim are sizes (positive); threadIdx and blockIdx are not.
#define DIM3(n, sizes) \
  {.name = "cuda." #n ".x", .form = F::Value, .type = rule_value, .emit = "(int)" #n ".x", .scalar = Scalar::Int32, \
   .positive = sizes, .doc = "x component (int32)"}, \
  {.name = "cuda." #n ".y", .form = F::Value, .type = rule_value, .emit = "(int)" #n ".y", .scalar = Scalar::Int32, \
   .positive = sizes, .doc = "y component (int32)"}, \
  {.name = "cuda." #n ".z", .form = F::Value, .type = rule_value, .emit = "(int)" #n ".z", .scalar = Scalar::Int32, \
   .positive = sizes, .doc = "z component (int32)"}
#define ATOMIC(n, rule, fn, what) \
  {.name = "cuda.atomic." #n, .min_args = 3, .max_args = 5, .type = rule, .emit = "luda_atomic_" fn "(&$@, $v0)", \
   .atomic = Atomic::Indexed, .args_doc = "(a, i, v)", .doc = what}
#define SHFL(n, what) \
  {.name = "cuda." #n, .min_args = 3, .max_args = 3, .type = rule_shuffle, .emit = "__" #n "($0, $1, $2)", .warp = true, \
   .args_doc = "(mask, value, lane)", .doc = what}
#define CAST(n, S) \
  {.name = "luda." #n, .min_args = 1, .max_args = 1, .type = rule_cast, .emit = "$C", .scalar = Scalar::S, .args_doc = "(x)", \
   .doc = "converts to " #n " (integers wrap; floats truncate towards zero, saturate at the range, NaN gives 0)"}
#define FLOAT_CAST(n, S) \
  {.name = "luda." #n, .min_args = 1, .max_args = 1, .type = rule_cast, .emit = "$C", .scalar = Scalar::S, .args_doc = "(x)", \
   .doc = "converts to " #n " (rounds to nearest; a complex gives its real part)"}
#define COMPLEX_CAST(n, S) \
  {.name = "luda." #n, .min_args = 1, .max_args = 2, .type = rule_complex_cast, .emit = "$C|luda_cmake<$T>($0, $1)", \
   .scalar = Scalar::S, .args_doc = "(x [, im])", \
   .doc = "converts to " #n " (a real number gets the imaginary part 0); with two real numbers, the complex re + im i"}
#define PART(n, rule, real, complex, what) \
  {.name = "luda." #n, .min_args = 1, .max_args = 1, .type = rule, .emit = real, .emit_complex = complex, \
   .args_doc = "(z)", .doc = what}

enum : int { kAny = -1 };

const Builtin kTable[] = {
    // ---- cuda: thread geometry (numba.cuda names)
    DIM3(threadIdx, false), DIM3(blockIdx, false), DIM3(blockDim, true), DIM3(gridDim, true),
    {.name = "cuda.laneid", .form = F::Value, .type = rule_value, .emit = "luda_laneid()", .scalar = Scalar::Int32,
     .doc = "the thread's lane in its warp, 0..31 (int32)"},
    {.name = "cuda.warpsize", .form = F::Value, .type = rule_constant, .emit = "warpSize", .scalar = Scalar::Int32,
     .value = 32, .doc = "32 (int32)"},
    {.name = "cuda.grid", .min_args = 1, .max_args = 1, .type = rule_grid, .emit = "luda_grid$c0()",
     .scalar = Scalar::Int64, .args_doc = "(n)",
     .doc = "the thread's absolute index in n = 1, 2 or 3 dimensions: n int64 values (blockIdx * blockDim + threadIdx)"},
    {.name = "cuda.gridsize", .min_args = 1, .max_args = 1, .type = rule_grid, .emit = "luda_gridsize$c0()",
     .scalar = Scalar::Int64, .positive = true, .args_doc = "(n)",
     .doc = "the number of threads in the grid in n = 1, 2 or 3 dimensions: n int64 values (blockDim * gridDim)"},
    // ---- cuda: synchronization
    {.name = "cuda.syncthreads", .type = rule_sync, .emit = "__syncthreads()", .barrier = true, .args_doc = "()",
     .doc = "waits for every thread of the block"},
    {.name = "cuda.syncthreads_count", .min_args = 1, .max_args = 1, .type = rule_sync_predicate,
     .emit = "__syncthreads_count($0)", .scalar = Scalar::Int32, .barrier = true, .args_doc = "(pred)",
     .doc = "syncthreads, then the number of threads whose predicate was true (int32)"},
    {.name = "cuda.syncthreads_and", .min_args = 1, .max_args = 1, .type = rule_sync_predicate,
     .emit = "(__syncthreads_and($0) != 0)", .scalar = Scalar::Bool, .barrier = true, .args_doc = "(pred)",
     .doc = "syncthreads, then whether every predicate was true"},
    {.name = "cuda.syncthreads_or", .min_args = 1, .max_args = 1, .type = rule_sync_predicate,
     .emit = "(__syncthreads_or($0) != 0)", .scalar = Scalar::Bool, .barrier = true, .args_doc = "(pred)",
     .doc = "syncthreads, then whether any predicate was true"},
    {.name = "cuda.syncwarp", .max_args = 1, .type = rule_sync, .emit = "__syncwarp(0xffffffffu)|__syncwarp($0)",
     .warp = true, .args_doc = "([mask])", .doc = "waits for the warp's threads in mask (default: all 32)"},
    // g:sync() (grid_barrier) makes the kernel cooperative: on cuda its source includes
    // <cooperative_groups.h>, and the cpu prelude defines the same names.
    {.name = "cuda.cg.this_grid", .form = F::Group, .type = rule_sync, .args_doc = "()",
     .doc = "the grid as a group (numba.cuda's cg.this_grid()): local g = cuda.cg.this_grid(), then g:sync()"},
    {.name = "cuda.cg.this_grid():sync", .type = rule_sync, .emit = "cooperative_groups::this_grid().sync()",
     .grid_barrier = true, .args_doc = "()",
     .doc = "waits for every thread of every block of the grid; the kernel is then launched cooperatively, and its grid must fit on the device at once (k:max_cooperative_grid_blocks(block))"},
    {.name = "cuda.threadfence", .type = rule_sync, .emit = "__threadfence()", .fence = true, .args_doc = "()",
     .doc = "orders this thread's memory writes for the whole device"},
    {.name = "cuda.threadfence_block", .type = rule_sync, .emit = "__threadfence_block()", .fence = true,
     .args_doc = "()", .doc = "orders this thread's memory writes for its block"},
    {.name = "cuda.threadfence_system", .type = rule_sync, .emit = "__threadfence_system()", .fence = true,
     .args_doc = "()", .doc = "orders this thread's memory writes for the host and peer devices"},
    // ---- cuda: memory
    {.name = "cuda.shared.array", .min_args = 2, .max_args = 2, .type = rule_array_alloc, .alloc = A::Shared,
     .args_doc = "(shape, dtype)",
     .doc = "a block-shared C-order array; shape a constant number or table ({32, 33}), dtype \"float32\" or luda.float32"},
    {.name = "cuda.shared.dynamic", .min_args = 1, .max_args = 1, .type = rule_dynamic_alloc,
     .alloc = A::DynamicShared, .args_doc = "(dtype)",
     .doc = "the block's dynamic shared memory as a 1-d array, sized at launch (shared = bytes)"},
    {.name = "cuda.local_array", .min_args = 2, .max_args = 2, .type = rule_array_alloc, .alloc = A::Local,
     .args_doc = "(shape, dtype)", .doc = "a per-thread C-order array; shape and dtype as for cuda.shared.array"},
    // ---- cuda: atomics on a[i] (a[i, j] for 2-d: indices one per dimension), returning the old value
    ATOMIC(add, rule_atomic_arith, "add", "a[i] += v"),
    ATOMIC(sub, rule_atomic_arith, "sub", "a[i] -= v"),
    ATOMIC(min, rule_atomic_arith, "min", "a[i] = min(a[i], v)"),
    ATOMIC(max, rule_atomic_arith, "max", "a[i] = max(a[i], v)"),
    ATOMIC(exch, rule_atomic_arith, "exch", "a[i] = v"),
    ATOMIC(and_, rule_atomic_bits, "and", "a[i] &= v (integers)"),
    ATOMIC(or_, rule_atomic_bits, "or", "a[i] |= v (integers)"),
    ATOMIC(xor, rule_atomic_bits, "xor", "a[i] ~= v (integers)"),
    ATOMIC(inc, rule_atomic_wrap, "inc", "a[i] = (a[i] >= v) and 0 or a[i] + 1 (uint32, uint64)"),
    ATOMIC(dec, rule_atomic_wrap, "dec", "a[i] = (a[i] == 0 or a[i] > v) and v or a[i] - 1 (uint32, uint64)"),
    ATOMIC(nanmax, rule_atomic_arith, "nanmax", "a[i] = max(a[i], v), NaN taken as missing: a NaN v leaves a[i], a NaN a[i] becomes v"),
    ATOMIC(nanmin, rule_atomic_arith, "nanmin", "a[i] = min(a[i], v), NaN taken as missing: a NaN v leaves a[i], a NaN a[i] becomes v"),
    {.name = "cuda.atomic.cas", .min_args = 4, .max_args = 6, .type = rule_atomic_cas,
     .emit = "luda_atomic_cas(&$@, $v0, $v1)", .atomic = Atomic::Indexed, .args_doc = "(a, i, old, v)",
     .doc = "a[i] = v if a[i] == old (compared bitwise)"},
    {.name = "cuda.atomic.compare_and_swap", .min_args = 3, .max_args = 3, .type = rule_atomic_cas,
     .emit = "luda_atomic_cas(&$@, $v0, $v1)", .atomic = Atomic::First, .args_doc = "(a, old, v)",
     .doc = "numba.cuda's cas on a[0] of a 1-d array: a[0] = v if a[0] == old (compared bitwise)"},
    // ---- cuda: warps
    SHFL(shfl_sync, "value of lane `lane`"),
    SHFL(shfl_up_sync, "value of lane (laneid - delta), own value below it"),
    SHFL(shfl_down_sync, "value of lane (laneid + delta), own value above the warp"),
    SHFL(shfl_xor_sync, "value of lane (laneid ~ mask)"),
    {.name = "cuda.ballot_sync", .min_args = 2, .max_args = 2, .type = rule_vote, .emit = "__ballot_sync($0, $1)",
     .scalar = Scalar::UInt32, .warp = true, .args_doc = "(mask, pred)",
     .doc = "bit k set when lane k's predicate is true (uint32)"},
    {.name = "cuda.all_sync", .min_args = 2, .max_args = 2, .type = rule_vote, .emit = "(__all_sync($0, $1) != 0)",
     .scalar = Scalar::Bool, .warp = true, .args_doc = "(mask, pred)",
     .doc = "whether every lane's predicate is true"},
    {.name = "cuda.any_sync", .min_args = 2, .max_args = 2, .type = rule_vote, .emit = "(__any_sync($0, $1) != 0)",
     .scalar = Scalar::Bool, .warp = true, .args_doc = "(mask, pred)", .doc = "whether any lane's predicate is true"},
    {.name = "cuda.match_any_sync", .min_args = 2, .max_args = 2, .type = rule_match,
     .emit = "luda_match_any($0, $1)", .scalar = Scalar::UInt32, .warp = true, .args_doc = "(mask, value)",
     .doc = "the lanes of mask whose value has the same bits as this lane's (uint32)"},
    {.name = "cuda.match_all_sync", .min_args = 2, .max_args = 2, .type = rule_match,
     .emit = "luda_match_all($0, $1)", .scalar = Scalar::Bool, .warp = true, .args_doc = "(mask, value)",
     .doc = "two values: mask and true when every lane of mask holds the same bits, else 0 and false"},
    // ---- cuda.random: numba.cuda.random's xoroshiro128+ generators, one per index
    {.name = "cuda.random.xoroshiro128p_uniform_float32", .min_args = 2, .max_args = 2, .type = rule_xoroshiro,
     .emit = "luda_xoro_uniform_f32(&$@)", .scalar = Scalar::Float32, .atomic = Atomic::State,
     .args_doc = "(states, i)", .doc = "a float32 uniform in [0, 1) from generator i, which advances"},
    {.name = "cuda.random.xoroshiro128p_uniform_float64", .min_args = 2, .max_args = 2, .type = rule_xoroshiro,
     .emit = "luda_xoro_uniform_f64(&$@)", .scalar = Scalar::Float64, .atomic = Atomic::State,
     .args_doc = "(states, i)", .doc = "a float64 uniform in [0, 1) from generator i, which advances"},
    {.name = "cuda.random.xoroshiro128p_normal_float32", .min_args = 2, .max_args = 2, .type = rule_xoroshiro,
     .emit = "luda_xoro_normal_f32(&$@)", .scalar = Scalar::Float32, .atomic = Atomic::State,
     .args_doc = "(states, i)",
     .doc = "a float32 standard normal from generator i (Box-Muller of two uniforms), which advances"},
    {.name = "cuda.random.xoroshiro128p_normal_float64", .min_args = 2, .max_args = 2, .type = rule_xoroshiro,
     .emit = "luda_xoro_normal_f64(&$@)", .scalar = Scalar::Float64, .atomic = Atomic::State,
     .args_doc = "(states, i)",
     .doc = "a float64 standard normal from generator i (Box-Muller of two uniforms), which advances"},
    {.name = "cuda.activemask", .type = rule_value, .emit = "__activemask()", .scalar = Scalar::UInt32,
     .args_doc = "()",
     .doc = "the warp's lanes executing this call together (uint32; on the cpu device every lane of the warp that exists)"},
    {.name = "cuda.lanemask_lt", .type = rule_value, .emit = "luda_lanemask_lt()", .scalar = Scalar::UInt32,
     .args_doc = "()", .doc = "the bits of the lanes below this one: 2^laneid - 1 (uint32)"},
    // ---- cuda: bits of an integer (numba.cuda's)
    {.name = "cuda.popc", .min_args = 1, .max_args = 1, .type = rule_bit_count, .emit = "luda_popc($0)",
     .args_doc = "(x)", .doc = "the number of set bits of integer x, in x's type"},
    {.name = "cuda.clz", .min_args = 1, .max_args = 1, .type = rule_bit_count, .emit = "luda_clz($0)",
     .args_doc = "(x)",
     .doc = "the number of zero bits above x's highest set bit within x's width (the width for 0), in x's type"},
    {.name = "cuda.ffs", .min_args = 1, .max_args = 1, .type = rule_bit_count, .emit = "luda_ffs($0)",
     .scalar = Scalar::UInt32, .args_doc = "(x)",
     .doc = "the 1-based position of x's lowest set bit, 0 for 0 (uint32)"},
    {.name = "cuda.brev", .min_args = 1, .max_args = 1, .type = rule_brev, .emit = "luda_brev($0)", .args_doc = "(x)",
     .doc = "x's bits reversed: a uint32 for x of up to 32 bits (converted as C converts: int8 -1 is 0xffffffff), else a uint64"},
    {.name = "cuda.fns", .min_args = 3, .max_args = 3, .type = rule_fns, .emit = "luda_fns($0, $1, $2)",
     .scalar = Scalar::UInt32, .args_doc = "(mask, base, offset)",
     .doc = "the position of the offset-th set bit of mask counted from bit base, upwards for offset > 0 and downwards for offset < 0 (offset 0: base if that bit is set), 0xffffffff where there is none or base > 31 (uint32)"},
    // ---- print
    {.name = "print", .max_args = kAny, .type = rule_print, .emit = "$P", .args_doc = "(...)",
     .doc = "device printf of numbers, bools and string literals, tab-separated, like Lua's print"},
    // ---- math (Lua's)
    CFLOAT1("math", sqrt, "square root"), CFLOAT1("math", exp, "e^x"),
    {.name = "math.log", .min_args = 1, .max_args = 2, .type = rule_float, .emit = "log{f}($0)|luda_log_base($0, $1)",
     .emit_complex = "luda_clog($0)|(luda_clog($0) / luda_clog($1))", .args_doc = "(x [, base])",
     .doc = "natural logarithm, or to the given base"},
    CFLOAT1("math", sin, "sine"), CFLOAT1("math", cos, "cosine"), CFLOAT1("math", tan, "tangent"),
    CFLOAT1("math", asin, "arc sine"), CFLOAT1("math", acos, "arc cosine"),
    {.name = "math.atan", .min_args = 1, .max_args = 2, .type = rule_float, .emit = "atan{f}($0)|atan2{f}($0, $1)",
     .emit_complex = "luda_catan($0)|", .args_doc = "(y [, x])", .doc = "arc tangent of y/x, in the right quadrant"},
    {.name = "math.floor", .min_args = 1, .max_args = 1, .type = rule_float_to_int,
     .emit = "luda_ftoi<long long>(floor{f}($0))", .emit_int = "$0", .args_doc = "(x)",
     .doc = "largest integer <= x (int64 for a float x, saturated; NaN gives 0)"},
    {.name = "math.ceil", .min_args = 1, .max_args = 1, .type = rule_float_to_int,
     .emit = "luda_ftoi<long long>(ceil{f}($0))", .emit_int = "$0", .args_doc = "(x)",
     .doc = "smallest integer >= x (int64 for a float x, saturated; NaN gives 0)"},
    {.name = "math.abs", .min_args = 1, .max_args = 1, .type = rule_abs, .emit = "fabs{f}($0)",
     .emit_int = "luda_abs($0)", .emit_complex = "luda_cabs($0)", .args_doc = "(x)",
     .doc = "absolute value, in x's type (a complex's magnitude, in its real type)"},
    {.name = "math.min", .min_args = 1, .max_args = 4, .type = rule_number,
     .emit = "$0|luda_min($0, $1)|luda_min(luda_min($0, $1), $2)|luda_min(luda_min(luda_min($0, $1), $2), $3)",
     .emit_complex = "$0|luda_min($0, $1)|luda_min(luda_min($0, $1), $2)|luda_min(luda_min(luda_min($0, $1), $2), $3)",
     .args_doc = "(x, ...)", .doc = "the smallest argument (up to 4), compared as Lua does (complex: by real part, then imaginary part, as NumPy 2)"},
    {.name = "math.max", .min_args = 1, .max_args = 4, .type = rule_number,
     .emit = "$0|luda_max($0, $1)|luda_max(luda_max($0, $1), $2)|luda_max(luda_max(luda_max($0, $1), $2), $3)",
     .emit_complex = "$0|luda_max($0, $1)|luda_max(luda_max($0, $1), $2)|luda_max(luda_max(luda_max($0, $1), $2), $3)",
     .args_doc = "(x, ...)", .doc = "the largest argument (up to 4), compared as Lua does (complex: by real part, then imaginary part, as NumPy 2)"},
    {.name = "math.fmod", .min_args = 2, .max_args = 2, .type = rule_number, .emit = "luda_fmod($0, $1)",
     .args_doc = "(x, y)", .doc = "remainder of x / y rounded towards zero"},
    {.name = "math.deg", .min_args = 1, .max_args = 1, .type = rule_float, .emit = "($0 * 57.295779513082323{f})",
     .args_doc = "(x)", .doc = "x radians in degrees"},
    {.name = "math.rad", .min_args = 1, .max_args = 1, .type = rule_float, .emit = "($0 * 0.017453292519943295{f})",
     .args_doc = "(x)", .doc = "x degrees in radians"},
    {.name = "math.huge", .form = F::Value, .type = rule_constant, .value = std::numeric_limits<double>::infinity(),
     .doc = "infinity"},
    {.name = "math.pi", .form = F::Value, .type = rule_constant, .value = 3.141592653589793, .doc = "pi"},
    {.name = "math.maxinteger", .form = F::Value, .type = rule_int_limit, .scalar = Scalar::Int64, .value = 1,
     .doc = "largest int64"},
    {.name = "math.mininteger", .form = F::Value, .type = rule_int_limit, .scalar = Scalar::Int64, .value = -1,
     .doc = "smallest int64"},
    // ---- luda.math (CUDA's float functions)
    CFLOAT1("luda.math", exp2, "2^x"), CFLOAT1("luda.math", log2, "base-2 logarithm"),
    CFLOAT1("luda.math", log10, "base-10 logarithm"), CFLOAT1("luda.math", log1p, "log(1 + x), exact near 0"),
    CFLOAT1("luda.math", expm1, "e^x - 1, exact near 0"), CFLOAT1("luda.math", sinh, "hyperbolic sine"),
    CFLOAT1("luda.math", cosh, "hyperbolic cosine"), CFLOAT1("luda.math", tanh, "hyperbolic tangent"),
    CFLOAT1("luda.math", asinh, "inverse hyperbolic sine"), CFLOAT1("luda.math", acosh, "inverse hyperbolic cosine"),
    CFLOAT1("luda.math", atanh, "inverse hyperbolic tangent"),
    FLOAT1("luda.math", erf, "error function"), FLOAT1("luda.math", erfc, "1 - erf(x)"),
    FLOAT1("luda.math", lgamma, "log |gamma(x)|"), FLOAT1("luda.math", tgamma, "gamma(x)"),
    FLOAT1("luda.math", cbrt, "cube root"), FLOAT1("luda.math", rsqrt, "1 / sqrt(x)"),
    FLOAT1("luda.math", round, "nearest integer, halves away from zero (a float): C's round"),
    FLOAT1("luda.math", rint, "nearest integer, halves to even (a float): NumPy's rint and round, Python's round"),
    FLOAT1("luda.math", trunc, "integer part, towards zero (a float)"),
    {.name = "luda.math.floor", .min_args = 1, .max_args = 1, .type = rule_number, .emit = "floor{f}($0)",
     .emit_int = "$0", .args_doc = "(x)",
     .doc = "largest integer <= x, in x's type (NumPy's floor: a float stays a float, NaN and infinities as they are)"},
    {.name = "luda.math.ceil", .min_args = 1, .max_args = 1, .type = rule_number, .emit = "ceil{f}($0)",
     .emit_int = "$0", .args_doc = "(x)",
     .doc = "smallest integer >= x, in x's type (NumPy's ceil: a float stays a float, NaN and infinities as they are)"},
    FLOAT2("luda.math", hypot, "sqrt(x^2 + y^2) without overflow"),
    FLOAT2("luda.math", copysign, "|x| with the sign of y"),
    {.name = "luda.math.nextafter", .min_args = 2, .max_args = 2, .type = rule_float_exact,
     .emit = "luda_nextafter($0, $1)", .args_doc = "(x, y)",
     .doc = "the next representable value after x towards y (of x's type: a float16's neighbour for a float16)"},
    FLOAT2("luda.math", remainder, "x - n * y with n the integer nearest x / y, halves to even (IEEE's remainder: Python's math.remainder, C's remainder), exact"),
    {.name = "luda.math.fma", .min_args = 3, .max_args = 3, .type = rule_float, .emit = "fma{f}($0, $1, $2)",
     .args_doc = "(x, y, z)", .doc = "x * y + z, rounded once"},
    {.name = "luda.math.isnan", .min_args = 1, .max_args = 1, .type = rule_float_predicate, .emit = "isnan($0)",
     .emit_complex = "luda_cisnan($0)", .args_doc = "(x)", .doc = "whether x is NaN (a complex: either part)"},
    {.name = "luda.math.isinf", .min_args = 1, .max_args = 1, .type = rule_float_predicate, .emit = "isinf($0)",
     .emit_complex = "luda_cisinf($0)", .args_doc = "(x)", .doc = "whether x is infinite (a complex: either part)"},
    {.name = "luda.math.isfinite", .min_args = 1, .max_args = 1, .type = rule_float_predicate, .emit = "isfinite($0)",
     .emit_complex = "luda_cisfinite($0)", .args_doc = "(x)", .doc = "whether x is neither infinite nor NaN (a complex: both parts)"},
    // ---- luda: conversions (the names are also dtypes for cuda.shared.array)
    CAST(int8, Int8), CAST(int16, Int16), CAST(int32, Int32), CAST(int64, Int64), CAST(uint8, UInt8),
    CAST(uint16, UInt16), CAST(uint32, UInt32), CAST(uint64, UInt64), FLOAT_CAST(float32, Float32),
    FLOAT_CAST(float64, Float64), FLOAT_CAST(float16, Float16), FLOAT_CAST(bfloat16, BFloat16),
    COMPLEX_CAST(complex64, Complex64), COMPLEX_CAST(complex128, Complex128),
    {.name = "luda.complex", .min_args = 1, .max_args = 2, .type = rule_complex, .emit = "$C|luda_cmake<$T>($0, $1)",
     .args_doc = "(re [, im])",
     .doc = "the complex re + im i, as Python's complex: of Lua numbers a weak complex128 (it takes a complex64 or float32 operand's precision), of typed values the complex of their type"},
    // ---- luda: complex parts (NumPy's real, imag, conj, angle)
    PART(real, rule_real, "$0", "($0).re", "the real part (a real number itself)"),
    PART(imag, rule_imag, "luda_cvt<$T>(0)", "($0).im", "the imaginary part (0 for a real number, in its type)"),
    PART(conj, rule_conj, "$0", "luda_cconj($0)", "the complex conjugate (a real number itself)"),
    PART(conjugate, rule_conj, "$0", "luda_cconj($0)", "the complex conjugate, as luda.conj"),
    PART(angle, rule_angle, "atan2{f}(0.0{f}, $0)", "luda_carg($0)",
         "the argument, atan2(imag, real), in radians (a float: 0 or pi for a real number)"),
};
// clang-format on

#undef FLOAT1
#undef FLOAT2
#undef DIM3
#undef ATOMIC
#undef SHFL
#undef CAST
#undef FLOAT_CAST
#undef CFLOAT1
#undef COMPLEX_CAST
#undef PART

}  // namespace

std::span<const Builtin> builtin_table() { return kTable; }

std::optional<Scalar> builtin_dtype(const Builtin& row) {
  if (row.type == rule_cast || row.type == rule_complex_cast) return row.scalar;
  return std::nullopt;
}

const Builtin* find_builtin(std::string_view name) {
  for (const Builtin& row : kTable)
    if (row.name == name) return &row;
  return nullptr;
}

std::string canonical_builtin_path(std::string_view path) {
  constexpr std::string_view prefix = "luda.cuda";
  if (path.substr(0, prefix.size()) == prefix && (path.size() == prefix.size() || path[prefix.size()] == '.'))
    return "cuda" + std::string(path.substr(prefix.size()));
  return std::string(path);
}

bool is_builtin_namespace(std::string_view path) {
  if (path.empty()) return false;
  for (const Builtin& row : kTable)
    if (row.name.size() > path.size() && row.name.substr(0, path.size()) == path && row.name[path.size()] == '.')
      return true;
  return path == "luda";  // luda.cuda and luda.math live under it
}

std::string builtin_members(std::string_view path) {
  std::vector<std::string> members;
  for (const Builtin& row : kTable) {
    if (row.name.size() <= path.size() || row.name.substr(0, path.size()) != path || row.name[path.size()] != '.')
      continue;
    std::string_view rest = row.name.substr(path.size() + 1);
    std::string member(rest.substr(0, rest.find_first_of(".(")));  // a group's methods are not members
    if (std::find(members.begin(), members.end(), member) == members.end()) members.push_back(member);
  }
  if (path == "luda") {
    members.push_back("cuda");
  }
  std::string out;
  for (const auto& m : members) out += (out.empty() ? "" : ", ") + m;
  return out;
}

std::string builtin_reference_markdown() {
  std::string out;
  std::string_view section;
  auto section_of = [](std::string_view name) {
    auto dot = name.rfind('.');
    return dot == std::string_view::npos ? std::string_view("(global)") : name.substr(0, dot);
  };
  for (const Builtin& row : kTable) {
    std::string_view s = section_of(row.name);
    if (s.substr(0, 5) == "cuda." && s != "cuda.atomic" && s != "cuda.shared") s = "cuda";
    if (s != section) {
      section = s;
      out += fmt::format("\n### `{}`\n\n| builtin | what it gives |\n| --- | --- |\n", section);
    }
    out += fmt::format("| `{}{}` | {} |\n", row.name, row.args_doc, row.doc);
  }
  return out;
}

namespace {

// A C string literal's body for printf's format: escapes, and % doubled.
std::string format_text(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '%') out += "%%";
    else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 32 || c >= 127) out += fmt::format("\\{:03o}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

// print(a, b, ...) as one printf: Lua's print separates with tabs and ends the line.
std::string emit_print(const BuiltinEmitArgs& args) {
  std::string format, values;
  for (std::size_t i = 0; i < args.operands.size(); ++i) {
    if (i) format += "\\t";
    const Type& t = args.types[i];
    if (!args.strings[i].empty() || t.kind != Type::Kind::Scalar) {
      format += format_text(args.strings[i]);
      continue;
    }
    if (t.scalar == Scalar::Bool) {
      format += "%s";
      values += fmt::format(", ({}) ? \"true\" : \"false\"", args.operands[i]);
    } else if (is_complex(t.scalar)) {  // as Python prints one: (1+2j)
      format += "(%.14g%+.14gj)";
      values += fmt::format(", (double)({0}).re, (double)({0}).im", args.operands[i]);
    } else if (is_half(t.scalar)) {
      format += "%.14g";
      values += fmt::format(", (double)luda_h2f({})", args.operands[i]);
    } else if (is_float(t.scalar)) {
      format += "%.14g";
      values += fmt::format(", (double)({})", args.operands[i]);
    } else if (is_signed(t.scalar)) {
      format += "%lld";
      values += fmt::format(", (long long)({})", args.operands[i]);
    } else {
      format += "%llu";
      values += fmt::format(", (unsigned long long)({})", args.operands[i]);
    }
  }
  return fmt::format("printf(\"{}\\n\"{})", format, values);
}

}  // namespace

std::string scalar_conversion(const std::string& text, Scalar from, Scalar to) {
  if (from == to) return text;
  if (is_half(from) || is_half(to) || is_complex(from) || is_complex(to))
    return fmt::format("luda_cvt<{}>({})", scalar_c_type(to), text);
  if (is_float(from) && is_integer(to)) return fmt::format("luda_ftoi<{}>({})", scalar_c_type(to), text);
  if (is_float(from) && to == Scalar::Bool) return fmt::format("luda_ftob({})", text);
  return fmt::format("({})({})", scalar_c_type(to), text);
}

std::string emit_builtin(const Builtin& row, const BuiltinEmitArgs& args) {
  bool on_ints = args.operation.kind == Type::Kind::Scalar && is_integer(args.operation.scalar);
  std::string_view templ = (on_ints && !row.emit_int.empty()) ? row.emit_int : row.emit;
  if (args.operation.is_complex() && !row.emit_complex.empty()) templ = row.emit_complex;
  templ = alternative(templ, static_cast<int>(args.operands.size()) - row.min_args);
  bool f32 = args.operation.kind == Type::Kind::Scalar && args.operation.scalar == Scalar::Float32;
  std::string out;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    char c = templ[i];
    if (c == '{' && templ.substr(i, 3) == "{f}") {
      if (f32) out += 'f';
      i += 2;
    } else if (c == '$' && i + 1 < templ.size()) {
      char n = templ[i + 1];
      if (n >= '0' && n <= '9') {
        out += args.operands.at(static_cast<std::size_t>(n - '0'));
        i += 1;
      } else if (n == '*') {
        for (std::size_t k = 0; k < args.operands.size(); ++k) out += (k ? ", " : "") + args.operands[k];
        i += 1;
      } else if (n == '@') {
        out += args.element;
        i += 1;
      } else if (n == 'v') {
        out += args.operands.at(static_cast<std::size_t>(args.values_from + (templ[i + 2] - '0')));
        i += 2;
      } else if (n == 'c') {
        const auto& c0 = args.constants.at(static_cast<std::size_t>(templ[i + 2] - '0'));
        out += c0 ? std::to_string(c0->i) : "?";
        i += 2;
      } else if (n == 'C') {
        const Type& from = args.types.at(0);
        bool scalars = from.kind == Type::Kind::Scalar && args.result.kind == Type::Kind::Scalar;
        out += scalars ? scalar_conversion(args.operands.at(0), from.scalar, args.result.scalar) : args.operands.at(0);
        i += 1;
      } else if (n == 'T') {
        out += args.result.kind == Type::Kind::Scalar ? scalar_c_type(args.result.scalar) : "void";
        i += 1;
      } else if (n == 'P') {
        out += emit_print(args);
        i += 1;
      } else {
        out += c;
      }
    } else {
      out += c;
    }
  }
  if (args.round_result) return scalar_conversion(out, args.operation.scalar, args.result.scalar);
  return out;
}

}  // namespace luda::dsl

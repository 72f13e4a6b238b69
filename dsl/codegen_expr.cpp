// CUDA C++ emission of expressions: literals of each dtype (cuda_literal), conversions,
// locals and builtin values, indexing (64-bit offsets, boundscheck's luda_check, constant
// strides for shared and local arrays, noalias's __restrict__ data pointers), builtin
// calls through the builtin table, device function calls, and operators with Lua's
// meaning (wrapping integer arithmetic, // and % by zero, long chains written flat).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dsl/codegen_cuda.h"
#include "dsl/codegen_internal.h"
#include "dsl/stack_guard.h"

namespace luda::dsl {

std::string cuda_literal(const Constant& c, Scalar type) {
  if (type == Scalar::Bool) return (c.kind == Constant::Kind::Bool ? c.b : c.i != 0) ? "true" : "false";
  Constant v = c.kind == Constant::Kind::Bool ? Constant::of_int(c.b) : c;
  if (is_complex(type)) {
    Scalar part = real_part(type);
    Constant re = convert_constant(v, type, part), im = Constant::of_float(v.kind == Constant::Kind::Float ? v.im : 0);
    return fmt::format("luda_cmake<{}>({}, {})", scalar_c_type(type), cuda_literal(re, part),
                       cuda_literal(convert_constant(im, Scalar::Float64, part), part));
  }
  if (is_half(type)) {  // its bits: no conversion left for the compiler to fold
    double d = v.kind == Constant::Kind::Float ? v.f : static_cast<double>(v.i);
    return fmt::format("{}{{{:#06x}}}", scalar_c_type(type), half_bits(d, type));
  }
  if (is_float(type)) {
    double d = v.kind == Constant::Kind::Float ? v.f : static_cast<double>(v.i);
    bool f32 = type == Scalar::Float32;
    if (std::isnan(d)) return f32 ? "__int_as_float(0x7fffffff)" : "__longlong_as_double(0x7ff8000000000000LL)";
    if (std::isinf(d)) {
      if (f32) return d > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
      return d > 0 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0xfff0000000000000LL)";
    }
    char buf[64];
    auto r = f32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(d))
                 : std::to_chars(buf, buf + sizeof buf, d);
    std::string text(buf, r.ptr);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    if (f32) text += "f";
    return d < 0 || (d == 0 && std::signbit(d)) ? "(" + text + ")" : text;
  }
  std::int64_t i = v.i;
  switch (type) {
    case Scalar::Int64:
      if (i == INT64_MIN) return "(-9223372036854775807LL - 1)";
      return i < 0 ? fmt::format("({}LL)", i) : fmt::format("{}LL", i);
    case Scalar::Int32:
      if (i == INT32_MIN) return "(-2147483647 - 1)";
      return i < 0 ? fmt::format("({})", i) : fmt::format("{}", i);
    case Scalar::UInt64: return fmt::format("{}ull", static_cast<std::uint64_t>(i));
    case Scalar::UInt32: return fmt::format("{}u", static_cast<std::uint64_t>(i));
    default: return fmt::format("(({}){})", scalar_c_type(type), i);
  }
}

namespace detail {

std::string c_type(const Type& t) {
  switch (t.kind) {
    case Type::Kind::Void: return "void";
    case Type::Kind::Scalar: return scalar_c_type(t.scalar);
    case Type::Kind::Array: return fmt::format("luda_Array<{}, {}>", scalar_c_type(t.scalar), t.ndim);
    case Type::Kind::Tuple: return "auto";
  }
  return "?";
}

// "(a + b)" -> "a + b" when the outer parentheses enclose the whole text.
std::string strip(std::string s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    else if (s[i] == ')' && --depth == 0 && i + 1 != s.size()) return s;
  }
  return s.substr(1, s.size() - 2);
}

namespace {

std::string paren(const std::string& s) {
  bool simple = std::all_of(s.begin(), s.end(),
                            [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
  return simple ? s : "(" + s + ")";
}

std::string shape_text(const std::string& array, const std::string& axis) { return array + ".shape[" + axis + "]"; }

const char* op_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::BAnd: return "&";
    case BinaryOp::BOr: return "|";
    default: return "^";
  }
}

// Integer + - * wrap: computed in the unsigned type that C++ does not promote.
const char* wrap_type(Scalar t) { return scalar_bits(t) == 64 ? "unsigned long long" : "unsigned"; }

// C++ computes 8- and 16-bit operands as int: back to the operand's type.
std::string narrow(const std::string& text, const Type& t) {
  if (scalar_bits(t.scalar) >= 32) return text;
  return fmt::format("({})({})", scalar_c_type(t.scalar), strip(text));
}

// A signed integer against a uint64 (ExprInfo::mixed_sign), by the prelude's luda_lt and
// luda_eq: a > b is b < a, a <= b is not b < a.
std::string mixed_sign_comparison(BinaryOp op, const std::string& a, const std::string& b) {
  switch (op) {
    case BinaryOp::Lt: return fmt::format("luda_lt({}, {})", a, b);
    case BinaryOp::Gt: return fmt::format("luda_lt({}, {})", b, a);
    case BinaryOp::Le: return fmt::format("(!luda_lt({}, {}))", b, a);
    case BinaryOp::Ge: return fmt::format("(!luda_lt({}, {}))", a, b);
    case BinaryOp::Eq: return fmt::format("luda_eq({}, {})", a, b);
    case BinaryOp::Ne: return fmt::format("(!luda_eq({}, {}))", a, b);
    default: LUDA_DSL_CHECK(!"mixed_sign is set on comparisons only");
  }
  return "";
}

}  // namespace

// What the row's columns say the kernel needs (Builtin: barrier, warp, grid_barrier,
// atomic, fence).
std::string Emitter::builtin(const Builtin& row, const BuiltinEmitArgs& args) {
  if (row.barrier || row.warp || row.grid_barrier) state_.fibers = true;
  if (row.grid_barrier) state_.grid_sync = true;
  if (row.atomic == Builtin::Atomic::Indexed || row.atomic == Builtin::Atomic::First || row.fence)
    state_.atomics = true;
  return emit_builtin(row, args);
}

std::string Emitter::convert(const std::string& text, const Type& from, const Type& to) {
  if (to.kind != Type::Kind::Scalar || from.kind != Type::Kind::Scalar || from.scalar == to.scalar) return text;
  return scalar_conversion(strip(text), from.scalar, to.scalar);
}

// `e` as a value of type `to`: constants become literals of `to`.
std::string Emitter::emit_as(const Expr& e, const Type& to) {
  const ExprInfo& ei = info(e);
  if (ei.constant && to.kind == Type::Kind::Scalar)
    return cuda_literal(convert_constant(*ei.constant, ei.type.scalar, to.scalar), to.scalar);
  return convert(emit(e), ei.type, to);
}

// The recursion over expressions (emit, emit_as, and the functions that emit operands)
// keeps its frames small: formatting, which does not recurse, is in LUDA_DSL_NOINLINE
// functions (dsl/stack_guard.h).
std::string Emitter::emit(const Expr& e) {
  if (stack_low()) throw node_error(*tf_.ast, e, error_kind::unsupported, kStackLowMessage);
  const ExprInfo& ei = info(e);
  if (ei.constant && ei.type.kind == Type::Kind::Scalar) return cuda_literal(*ei.constant, ei.type.scalar);
  std::string text;
  switch (e.kind) {
    case NodeKind::Name: text = var(ei.var).c_name; break;
    case NodeKind::Paren: text = emit(*e.as<ParenExpr>().inner); break;
    case NodeKind::Field: text = field(e.as<FieldExpr>()); break;
    case NodeKind::Index: text = index(e.as<IndexExpr>()); break;
    case NodeKind::Call: text = call(e.as<CallExpr>()); break;
    case NodeKind::MethodCall: text = method_call(e.as<MethodCallExpr>()); break;
    case NodeKind::Binary: text = binary_chain(e.as<BinaryExpr>()); break;
    case NodeKind::Unary: text = unary(e.as<UnaryExpr>()); break;
    default: LUDA_DSL_CHECK(!"expression rejected by inference");
  }
  if (ei.first_of_tuple && e.kind != NodeKind::Paren) text += ".v0";
  return text;
}

std::string Emitter::field(const FieldExpr& e) {
  const ExprInfo& ei = info(e);
  if (ei.builtin) return builtin_value(ei);
  if (e.field.text == "real" || e.field.text == "imag") {
    const Type& t = info(*e.object).type;
    if (t.is_complex()) return fmt::format("({}).{}", strip(emit(*e.object)), e.field.text == "real" ? "re" : "im");
    if (e.field.text == "real") return emit(*e.object);
    return fmt::format("luda_cvt<{}>(0)", scalar_c_type(t.scalar));
  }
  LUDA_DSL_CHECK(e.field.text == "size");
  return "luda_size(" + emit(*e.object) + ")";
}

std::string Emitter::builtin_value(const ExprInfo& ei) {
  return builtin(*ei.builtin, builtin_args(*ei.builtin, ei, {}));
}

std::string Emitter::index(const IndexExpr& e) {
  if (info(*e.object).symbol.kind == Symbol::Kind::Shape) return shape_index(e);
  if (info(e).type.kind == Type::Kind::Array) return row_index(e);
  return element(e);
}

std::string Emitter::shape_index(const IndexExpr& e) {
  std::string array = emit(*e.object->as<FieldExpr>().object);
  const ExprInfo& key = info(*e.key);
  if (key.constant) return shape_text(array, std::to_string(key.constant->i - 1));
  // An axis known only at run time may be out of 1..ndim: a bounds error with
  // boundscheck, else 0 (luda_shape_at).
  std::string k = strip(emit_as(*e.key, Type::scalar_of(Scalar::Int64)));
  if (options_.boundscheck) return fmt::format("luda_shape_checked({}, {}, luda_bounds, {})", array, k, e.loc.line);
  return "luda_shape_at(" + array + ", " + k + ")";
}

// A row of an N-d array used as a value.
std::string Emitter::row_index(const IndexExpr& e) {
  std::string array = emit(*e.object);
  std::string key = checked(*e.key, array, 0, e.loc.line);
  return "luda_row(" + array + ", " + key + ")";
}

// One index, converted to 64 bits and, with boundscheck, checked against `extent`.
std::string Emitter::checked(const Expr& key, const std::string& array, int axis, int line_no, std::string extent) {
  return checked_text(strip(emit_as(key, Type::scalar_of(Scalar::Int64))), array, axis, line_no, std::move(extent));
}

std::string Emitter::checked_text(std::string i, const std::string& array, int axis, int line_no, std::string extent) {
  if (!options_.boundscheck) return i;
  if (extent.empty()) extent = fmt::format("{}.shape[{}]", array, axis);
  // A float converted to the index (math.floor(x), a float used as an index) is checked
  // for an integer representation first (prelude luda_ftoi_at).
  const std::string checked_call = fmt::format("luda_ftoi_at<long long>(luda_bounds, {}, ", line_no);
  for (std::size_t at = i.find("luda_ftoi<long long>("); at != std::string::npos;
       at = i.find("luda_ftoi<long long>(", at + checked_call.size()))
    i.replace(at, std::string_view("luda_ftoi<long long>(").size(), checked_call);
  return fmt::format("luda_check({}, {}, luda_bounds, {}, {})", i, extent, line_no, axis);
}

// a[i][j]...: one element of the array at the bottom of the chain, addressed with all
// the indices at once (constant strides for shared and local arrays).
std::string Emitter::element(const IndexExpr& e) {
  std::vector<const Expr*> keys;
  const Expr* base = &e;
  while (const auto* ix = base->dyn<IndexExpr>()) {
    if (info(*ix->object).type.kind != Type::Kind::Array) break;
    keys.insert(keys.begin(), ix->key);
    base = ix->object;
  }
  return element_of(*base, keys, e.loc.line);
}

std::string Emitter::element_of(const Expr& base, const std::vector<const Expr*>& keys, int line_no) {
  std::string array = emit(base);
  std::vector<std::string> indices(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) indices[k] = strip(emit_as(*keys[k], Type::scalar_of(Scalar::Int64)));
  return element_text(base, array, indices, line_no);
}

// The element at `indices` (C++ expressions, one per axis) of `array`, the text of `base`.
std::string Emitter::element_text(const Expr& base, const std::string& array, const std::vector<std::string>& indices,
                                  int line_no) {
  const Type& t = info(base).type;
  const Variable* alloc = nullptr;
  if (base.is<NameExpr>() && info(base).var >= 0) {
    const Variable& v = var(info(base).var);
    if (v.alloc == Builtin::Alloc::Shared || v.alloc == Builtin::Alloc::Local) alloc = &v;
  }
  std::vector<long long> stride;
  if (alloc) {
    stride.assign(alloc->shape.size(), 1);
    for (std::size_t k = alloc->shape.size(); k-- > 1;) stride[k - 1] = stride[k] * alloc->shape[k];
  }
  std::string offset;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    int axis = static_cast<int>(k);
    std::string extent = alloc ? std::to_string(alloc->shape[k]) : "";
    std::string i = checked_text(indices[k], array, axis, line_no, extent);
    std::string term;
    bool unit = alloc ? stride[k] == 1 : (t.c_contiguous && axis == t.ndim - 1);
    if (unit) term = i;
    else if (alloc) term = fmt::format("{} * {}", paren(i), stride[k]);
    else term = fmt::format("{} * {}.strides[{}]", paren(i), array, axis);
    offset += (k ? " + " : "") + term;
  }
  auto alias = data_alias_.find(array);
  if (alias != data_alias_.end()) return fmt::format("{}[{}]", alias->second, offset);
  return fmt::format("{}.data[{}]", array, offset);
}

std::string Emitter::state_words(const Expr& states, const std::string& index) {
  const std::string array = emit(states);
  const int line = states.loc.line;
  return element_text(states, array, {index, "0LL"}, line) + ", &" + element_text(states, array, {index, "1LL"}, line);
}

BuiltinEmitArgs Emitter::builtin_args(const Builtin& row, const ExprInfo& ei, const std::vector<const Expr*>& args) {
  BuiltinEmitArgs b;
  const BuiltinTyping& t = ei.builtin_typing;
  b.result = t.result;
  b.operation = t.operation;
  b.round_result = t.round_result;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Expr& a = *args[i];
    const ExprInfo& ai = info(a);
    Type to = i < t.convert.size() ? t.convert[i] : Type::void_();
    if (ai.symbol.kind == Symbol::Kind::String) {
      b.operands.push_back("");
      b.strings.push_back(ai.symbol.text);
      b.types.push_back(Type::void_());
    } else if (a.is<TableExpr>() || ai.symbol.kind != Symbol::Kind::None) {
      b.operands.push_back("");
      b.strings.push_back("");
      b.types.push_back(Type::void_());
    } else {
      b.operands.push_back(strip(to.kind == Type::Kind::Scalar ? emit_as(a, to) : emit(a)));
      b.strings.push_back("");
      b.types.push_back(to.kind == Type::Kind::Scalar ? to : ai.type);
    }
    b.constants.push_back(a.is<TableExpr>() ? std::nullopt : ai.constant);
  }
  if (row.atomic == Builtin::Atomic::First) {  // a[0] of a 1-d array, no index given
    b.element = element_text(*args[0], emit(*args[0]), {"0LL"}, args[0]->loc.line);
    b.values_from = 1;
  } else if (row.atomic == Builtin::Atomic::Indexed) {
    int ndim = info(*args[0]).type.ndim;
    std::vector<const Expr*> keys(args.begin() + 1, args.begin() + 1 + ndim);
    b.element = element_of(*args[0], keys, args[0]->loc.line);
    b.values_from = 1 + ndim;
  } else if (row.atomic == Builtin::Atomic::State) {
    b.element = state_words(*args[0], b.operands[1]);
  }
  return b;
}

// A group's method (g:sync()): a builtin row, as inference found.
std::string Emitter::method_call(const MethodCallExpr& e) {
  const ExprInfo& ei = info(e);
  LUDA_DSL_CHECK(ei.builtin != nullptr);
  return builtin(*ei.builtin, builtin_args(*ei.builtin, ei, e.args));
}

std::string Emitter::call(const CallExpr& e) {
  const ExprInfo& ei = info(e);
  if (ei.builtin) {
    BuiltinEmitArgs args = builtin_args(*ei.builtin, ei, e.args);
    return builtin(*ei.builtin, args);
  }
  if (ei.declared) return declared_call(e, *ei.declared);
  LUDA_DSL_CHECK(ei.callee >= 0);
  const TypedFunction& callee = *program_.functions.at(static_cast<std::size_t>(ei.callee));
  std::string args;
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    if (i) args += ", ";
    args += strip(emit_as(*e.args[i], callee.params[i]));
  }
  if (state_.record) args += std::string(args.empty() ? "" : ", ") + "luda_bounds";
  return callee.c_name + "(" + args + ")";
}

// A declared CUDA C++ function's call: scalars converted to its parameters' types, arrays
// as their data pointers; no bounds record, since it indexes nothing of luda's.
std::string Emitter::declared_call(const CallExpr& e, const DeclaredFunction& d) {
  std::string args;
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    const Type& to = d.params[i];
    args += (i ? ", " : "") +
            (to.kind == Type::Kind::Array ? "(" + strip(emit(*e.args[i])) + ").data" : strip(emit_as(*e.args[i], to)));
  }
  return d.name + "(" + args + ")";
}

// A left-associative chain (a + b + c ..., each operator's left operand the next one
// down), emitted bottom-up in a loop rather than by recursion: generated code sums
// thousands of terms. A short chain nests as any expression does. A chain longer than
// kFlatChain must not nest as deep in the C++ either (the compilers recurse on it, and
// NVVM takes minutes over thousands of statements, seconds over one flat expression):
// runs of operators that C++ evaluates left to right alike are written flat
// (`a + b - c`, in the unsigned type for wrapping integers), and where kFlatChain
// levels still nest (helper calls: // % << ...), the value so far goes into a local of
// a lambda. Operands evaluate in the same order; `and`/`or` still skip their right ones.
constexpr std::size_t kFlatChain = 16;

std::string Emitter::binary_chain(const BinaryExpr& top) {
  std::vector<const BinaryExpr*> spine{&top};
  for (;;) {
    const auto* lhs = spine.back()->lhs->dyn<BinaryExpr>();
    if (!lhs || info(*lhs).constant) break;  // a constant is emitted as one literal
    spine.push_back(lhs);
  }
  if (spine.size() > kFlatChain) return long_chain(spine);
  std::string text = binary(*spine.back(), nullptr);
  for (std::size_t k = spine.size() - 1; k-- > 0;) text = binary(*spine[k], &text);
  return text;
}

// Which operators chain flat in C++ (same class and operand type), and how.
struct Emitter::FlatRun {
  const char* kind = nullptr;  // nullptr: not flat; else "f+", "f*", "i+", "i*", "&&", "||", "==", "&", "|", "^"
  Scalar type = Scalar::Bool;
  std::string text;
};

Emitter::FlatRun Emitter::flat_kind(const BinaryExpr& e) const {
  const Type& t = info(e).operand;
  FlatRun r;
  r.type = t.scalar;
  bool f = t.is_floating(), i = t.is_int();
  switch (e.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: r.kind = f ? "f+" : i ? "i+" : nullptr; break;
    case BinaryOp::Mul: r.kind = f ? "f*" : i ? "i*" : nullptr; break;
    case BinaryOp::Div: r.kind = f ? "f*" : nullptr; break;
    case BinaryOp::And: r.kind = "&&"; break;
    case BinaryOp::Or: r.kind = "||"; break;
    case BinaryOp::Eq:
    case BinaryOp::Ne: r.kind = t.is_bool() ? "==" : nullptr; break;
    case BinaryOp::BAnd: r.kind = "&"; break;
    case BinaryOp::BOr: r.kind = "|"; break;
    case BinaryOp::BXor: r.kind = "^"; break;
    default: break;
  }
  return r;
}

// An operand of a flat run: integers cast to the unsigned type they wrap in.
std::string Emitter::flat_operand(const FlatRun& run, const std::string& text) const {
  bool wraps = run.kind[0] == 'i';
  return wraps ? fmt::format("({}){}", wrap_type(run.type), text) : text;
}

std::string Emitter::close_run(const FlatRun& run) const {
  bool wraps = run.kind[0] == 'i';
  bool bits = run.kind[1] == '\0' && (run.kind[0] == '&' || run.kind[0] == '|' || run.kind[0] == '^');
  if (wraps) return fmt::format("({})({})", scalar_c_type(run.type), run.text);
  if (bits) return narrow("(" + run.text + ")", Type::scalar_of(run.type));
  return "(" + run.text + ")";
}

std::string Emitter::long_chain(const std::vector<const BinaryExpr*>& spine) {
  std::string text, lambda;
  FlatRun run;
  std::size_t levels = 0;  // how deep `text` nests since the last local
  for (std::size_t k = spine.size(); k-- > 0;) {
    const BinaryExpr& e = *spine[k];
    FlatRun kind = flat_kind(e);
    bool first = k + 1 == spine.size();
    bool shift = e.op == BinaryOp::Shl || e.op == BinaryOp::Shr;
    std::string rhs = emit_as(*e.rhs, shift ? Type::scalar_of(Scalar::Int64) : side_type(e, *e.rhs));
    if (run.kind && kind.kind && std::string_view(run.kind) == kind.kind && run.type == kind.type) {
      run.text += fmt::format(" {} {}", op_text(e.op), flat_operand(run, rhs));
      continue;
    }
    if (run.kind) {
      text = close_run(run);
      run.kind = nullptr;
      ++levels;
    }
    if (levels >= kFlatChain) {
      std::string local = temp("c");
      lambda += fmt::format("const {} {} = {}; ", c_type(info(*e.lhs).type), local, strip(text));
      text = local;
      levels = 0;
    }
    Type t = side_type(e, *e.lhs);
    std::string lhs = first ? emit_as(*e.lhs, t) : convert(text, info(*e.lhs).type, t);
    if (kind.kind) {
      run = kind;
      run.text = fmt::format("{} {} {}", flat_operand(run, lhs), op_text(e.op), flat_operand(run, rhs));
      continue;
    }
    text = binary_text(e, lhs, rhs);
    ++levels;
  }
  if (run.kind) text = close_run(run);
  if (lambda.empty()) return text;
  return fmt::format("[&]() {{ {}return {}; }}()", lambda, strip(text));
}

// `e` with its left operand's text given (`lhs`, of the operand's own type), or emitted
// here (nullptr).
std::string Emitter::binary(const BinaryExpr& e, const std::string* lhs) {
  bool shift = e.op == BinaryOp::Shl || e.op == BinaryOp::Shr;
  Type ta = side_type(e, *e.lhs);
  // Operands keep their parentheses; helper calls take them stripped.
  std::string a = lhs ? convert(*lhs, info(*e.lhs).type, ta) : emit_as(*e.lhs, ta);
  return binary_text(e, a, emit_as(*e.rhs, shift ? Type::scalar_of(Scalar::Int64) : side_type(e, *e.rhs)));
}

// The type an operand of `e` is converted to: the operation's, or for a comparison of a
// signed integer with a uint64 (mixed_sign) the 64-bit integer of the operand's own sign.
Type Emitter::side_type(const BinaryExpr& e, const Expr& side) const {
  const ExprInfo& ei = info(e);
  if (!ei.mixed_sign) return ei.operand;
  return Type::scalar_of(is_signed(info(side).type.scalar) ? Scalar::Int64 : Scalar::UInt64);
}

std::string Emitter::binary_text(const BinaryExpr& e, const std::string& a, const std::string& b) {
  const Type& t = info(e).operand;
  bool ints = t.is_int();
  // Wrap-around arithmetic is spelled with helpers where C++ would overflow (signed,
  // or promoted to int); 32- and 64-bit unsigned arithmetic already wraps.
  bool plain_ints = ints && (t.scalar == Scalar::UInt32 || t.scalar == Scalar::UInt64);
  auto wrap_op = [&](const char* helper, const char* op) {
    if (ints && !plain_ints) return fmt::format("{}({}, {})", helper, strip(a), strip(b));
    return fmt::format("({} {} {})", a, op, b);
  };
  if (info(e).mixed_sign) return mixed_sign_comparison(e.op, strip(a), strip(b));
  switch (e.op) {
    // Bools: NumPy's or and and, both operands evaluated, as Lua's + and * evaluate them.
    case BinaryOp::Add: return t.is_bool() ? fmt::format("((bool)({} | {}))", a, b) : wrap_op("luda_add", "+");
    case BinaryOp::Sub: return wrap_op("luda_sub", "-");
    case BinaryOp::Mul: return t.is_bool() ? fmt::format("((bool)({} & {}))", a, b) : wrap_op("luda_mul", "*");
    case BinaryOp::Div: return fmt::format("({} / {})", a, b);
    // Integer // and % by zero give 0 on every target (the helpers test the divisor).
    case BinaryOp::IDiv: return fmt::format("luda_floordiv({}, {})", strip(a), strip(b));
    case BinaryOp::Mod: return fmt::format("luda_mod({}, {})", strip(a), strip(b));
    case BinaryOp::Pow: {
      const ExprInfo& r = info(*e.rhs);
      if (r.constant) {
        double p = r.constant->kind == Constant::Kind::Float ? r.constant->f : static_cast<double>(r.constant->i);
        if (p == 2) return fmt::format("luda_pow2({})", strip(a));
        if (p == 3) return fmt::format("luda_pow3({})", strip(a));
      }
      if (is_half(t.scalar) || is_complex(t.scalar)) return fmt::format("luda_pow({}, {})", strip(a), strip(b));
      return fmt::format("pow{}({}, {})", t.scalar == Scalar::Float32 ? "f" : "", strip(a), strip(b));
    }
    case BinaryOp::Eq: return fmt::format("({} == {})", a, b);
    case BinaryOp::Ne: return fmt::format("({} != {})", a, b);
    case BinaryOp::Lt: return fmt::format("({} < {})", a, b);
    case BinaryOp::Le: return fmt::format("({} <= {})", a, b);
    case BinaryOp::Gt: return fmt::format("({} > {})", a, b);
    case BinaryOp::Ge: return fmt::format("({} >= {})", a, b);
    case BinaryOp::And: return fmt::format("({} && {})", a, b);
    case BinaryOp::Or: return fmt::format("({} || {})", a, b);
    case BinaryOp::BAnd: return narrow(fmt::format("({} & {})", a, b), t);
    case BinaryOp::BOr: return narrow(fmt::format("({} | {})", a, b), t);
    case BinaryOp::BXor: return narrow(fmt::format("({} ^ {})", a, b), t);
    case BinaryOp::Shl: return fmt::format("luda_shl({}, {})", strip(a), strip(b));
    case BinaryOp::Shr: return fmt::format("luda_shr({}, {})", strip(a), strip(b));
    default: LUDA_DSL_CHECK(!"operator rejected by inference");
  }
  return "";
}

std::string Emitter::unary(const UnaryExpr& e) {
  const ExprInfo& ei = info(e);
  switch (e.op) {
    case UnaryOp::Len: return fmt::format("{}.shape[0]", emit(*e.operand));
    case UnaryOp::Not: return fmt::format("(!{})", emit(*e.operand));
    case UnaryOp::Neg:
      if (ei.type.is_int()) return fmt::format("luda_neg({})", strip(emit(*e.operand)));
      return fmt::format("(-{})", emit(*e.operand));
    case UnaryOp::BNot: return narrow(fmt::format("(~{})", emit(*e.operand)), ei.type);
  }
  return "";
}

}  // namespace detail

}  // namespace luda::dsl

// Inference of expressions: operators (docs/language.md's promotion, weak literals, Lua's
// meaning of / // % ^), names and what they denote (locals, frozen upvalues and globals,
// builtin namespaces), indexing, builtin calls (through the builtin table) and device
// function calls (each argument-type combination its own specialization).
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "dsl/fold.h"
#include "dsl/infer_internal.h"

namespace luda::dsl::detail {

std::string describe(const ExprInfo& info) {
  switch (info.symbol.kind) {
    case Symbol::Kind::None: return info.type.str();
    case Symbol::Kind::Namespace: return fmt::format("the namespace '{}'", info.symbol.path);
    case Symbol::Kind::Builtin: return fmt::format("the builtin function {}", info.symbol.builtin->name);
    case Symbol::Kind::Table: return "a constant table";
    case Symbol::Kind::Function: return fmt::format("the function '{}'", info.symbol.path);
    case Symbol::Kind::Declared: return fmt::format("the declared device function '{}'", info.symbol.path);
    case Symbol::Kind::Shape: return "an array's shape (index it: a.shape[1])";
    case Symbol::Kind::Dtype: return "a dtype";
    case Symbol::Kind::String: return "a string";
    case Symbol::Kind::Group: return fmt::format("the group {}() (call its methods: g:sync())", info.symbol.path);
  }
  return "?";
}

std::string constant_text(const Constant& c, Scalar type) {
  switch (c.kind) {
    case Constant::Kind::Bool: return c.b ? "true" : "false";
    case Constant::Kind::Float: return fmt::format("{}", c.f);
    case Constant::Kind::Int:
      return type == Scalar::UInt64 ? std::to_string(static_cast<std::uint64_t>(c.i)) : std::to_string(c.i);
  }
  return "?";
}

const ExternalValue& Inference::lookup(FunctionHandle fn, const std::string& name) {
  auto key = std::make_pair(fn, name);
  auto it = lookups.find(key);
  if (it != lookups.end()) return *it->second;
  const ExternalValue& v = keep(env.lookup(fn, name));
  lookups[key] = &v;
  return v;
}

namespace {

bool is_call(const Expr& e) { return e.is<CallExpr>() || e.is<MethodCallExpr>(); }

// The type `/` and `^` compute in: floats and complex as they are, integers in float64.
Type float_of(const Type& t) {
  return t.is_floating() || t.is_complex() ? t : Type::scalar_of(Scalar::Float64, t.weak);
}

std::string op_text(BinaryOp op) { return std::string(binary_op_text(op)); }

// `a op b` for constants of a signed integer type and of uint64 (either way round), by value.
bool compare_mixed(BinaryOp op, const Constant& a, const Type& ta, const Constant& b, const Type& tb) {
  auto order = [](const Constant& c, const Type& t) {  // the value as (negative, magnitude bits)
    Constant v = convert_constant(c, t.scalar, is_signed(t.scalar) ? Scalar::Int64 : Scalar::UInt64);
    bool negative = is_signed(t.scalar) && v.i < 0;
    return std::make_pair(!negative, static_cast<std::uint64_t>(v.i));
  };
  auto x = order(a, ta), y = order(b, tb);
  switch (op) {
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    case BinaryOp::Eq: return x == y;
    default: return x != y;
  }
}

}  // namespace

// The typer's recursion (expr, value, and the rules that type sub-expressions) keeps its
// frames small: what does not recurse (rules, errors) lives in noinline functions, so that
// the fixed depth limit fits in a small thread stack.
ExprInfo& FunctionTyper::expr(const Expr& e) {
  Nesting level(*this, e);
  ExprInfo& out = tf_.exprs.at(static_cast<std::size_t>(e.id));
  reset(out);
  switch (e.kind) {
    case NodeKind::Name: name(e.as<NameExpr>(), out); break;
    case NodeKind::Index: index(e.as<IndexExpr>(), out); break;
    case NodeKind::Field: field(e.as<FieldExpr>(), out); break;
    case NodeKind::Call: call(e.as<CallExpr>(), out); break;
    case NodeKind::MethodCall: method_call(e.as<MethodCallExpr>(), out); break;
    case NodeKind::Binary: binary_chain(e.as<BinaryExpr>()); break;
    case NodeKind::Unary: unary(e.as<UnaryExpr>(), out); break;
    case NodeKind::Paren: {
      // Parentheses cut a call's values to one.
      const Expr& inner = *e.as<ParenExpr>().inner;
      ExprInfo& info = expr(inner);
      out = info.type.kind == Type::Kind::Tuple ? as_value(inner, info) : info;
      break;
    }
    default: leaf(e, out); break;
  }
  if (out.unknown) saw_unknown_ = true;
  return out;
}

void FunctionTyper::reset(ExprInfo& out) { out = ExprInfo{}; }

// Literals, and the expressions kernels do not have.
void FunctionTyper::leaf(const Expr& e, ExprInfo& out) {
  switch (e.kind) {
    case NodeKind::True:
    case NodeKind::False:
      out.type = Type::scalar_of(Scalar::Bool);
      out.constant = Constant::of_bool(e.kind == NodeKind::True);
      break;
    case NodeKind::Integer:
      out.type = Type::scalar_of(Scalar::Int64, true);
      out.constant = Constant::of_int(e.as<IntegerExpr>().value);
      break;
    case NodeKind::Float:
      out.type = Type::scalar_of(Scalar::Float64, true);
      out.constant = Constant::of_float(e.as<FloatExpr>().value);
      break;
    case NodeKind::String:
      out.symbol.kind = Symbol::Kind::String;
      out.symbol.text = e.as<StringExpr>().value;
      break;
    case NodeKind::Nil: throw error_node(e, error_kind::unsupported, "nil is not a value in kernels");
    case NodeKind::Vararg: throw error_node(e, error_kind::unsupported, "varargs ('...') are not supported in kernels");
    case NodeKind::Function:
      throw error_node(e, error_kind::unsupported,
                       "closures cannot be created inside a kernel: define the function outside it "
                       "(a kernel calls it as a device function)");
    case NodeKind::Table:
      throw error_node(e, error_kind::unsupported,
                       "tables cannot be created inside a kernel (a table of constants is allowed only "
                       "as the shape of cuda.shared.array / cuda.local_array)");
    default: throw error_node(e, error_kind::unsupported, "this expression is not supported in kernels");
  }
}

const ExprInfo& FunctionTyper::value(const Expr& e) { return as_value(e, expr(e)); }

// `e`'s info, already typed, as a value: each node is typed once (typing it again for its
// value made nested calls exponential).
ExprInfo& FunctionTyper::as_value(const Expr& e, ExprInfo& out) {
  if (out.unknown) return out;
  if (out.symbol.kind != Symbol::Kind::None)
    throw error_node(e, error_kind::type, fmt::format("{} is not a value", describe(out)));
  if (out.type.kind == Type::Kind::Tuple) {
    Type first = out.type.elements.at(0);
    out.type = first;
    out.first_of_tuple = true;
  }
  if (out.type.kind == Type::Kind::Void && is_call(e))
    throw error_node(e, error_kind::type, "this call returns no value");
  return out;
}

// ---------------------------------------------------------------- names

void FunctionTyper::name(const NameExpr& n, ExprInfo& out) {
  int index = name_var_.at(static_cast<std::size_t>(n.id));
  if (index < 0) {
    external(n.name, inf_.lookup(handle_, n.name), n, out);
    return;
  }
  Variable& v = var(index);
  out.var = index;
  if (v.is_alias && v.symbol.kind != Symbol::Kind::None) {
    out.symbol = v.symbol;
    return;
  }
  if (v.is_alias) out.constant = v.constant;
  if (!v.has_type) {
    if (final_)
      throw error_node(n, error_kind::type,
                       fmt::format("local '{}' is read before it is given a value (nil is not a kernel value)",
                                   v.name));
    out.unknown = true;
    return;
  }
  out.type = v.type;
}

void FunctionTyper::external(const std::string& name, const ExternalValue& ext, const Expr& at, ExprInfo& out) {
  using K = ExternalValue::Kind;
  bool standard = name == "print" || name == "math";
  switch (ext.kind) {
    case K::Missing:
      if (standard) return path(name, at, out);
      throw error_node(at, error_kind::name, fmt::format("unknown name '{}'", name));
    case K::Integer:
      out.type = Type::scalar_of(Scalar::Int64, true);
      out.constant = Constant::of_int(ext.integer);
      return;
    case K::Float:
      out.type = Type::scalar_of(Scalar::Float64, true);
      out.constant = Constant::of_float(ext.number);
      return;
    case K::Boolean:
      out.type = Type::scalar_of(Scalar::Bool);
      out.constant = Constant::of_bool(ext.boolean);
      return;
    case K::Typed: {
      out.type = Type::scalar_of(ext.scalar, ext.weak);
      bool inexact = is_float(ext.scalar) || is_complex(ext.scalar);
      out.constant = inexact                      ? Constant::of_float(ext.number)
                     : ext.scalar == Scalar::Bool ? Constant::of_bool(ext.boolean)
                                                  : Constant::of_int(ext.integer);
      out.constant->im = ext.imag;
      if (inexact)
        out.constant = convert_constant(*out.constant, is_complex(ext.scalar) ? Scalar::Complex128 : Scalar::Float64,
                                        ext.scalar);
      return;
    }
    case K::Table:
      out.symbol.kind = Symbol::Kind::Table;
      out.symbol.table = &ext;
      out.symbol.path = name;
      return;
    case K::Function:
      out.symbol.kind = Symbol::Kind::Function;
      out.symbol.function = &ext;
      out.symbol.path = name;
      return;
    case K::Declared:
      out.symbol.kind = Symbol::Kind::Declared;
      out.symbol.declared = ext.declared.get();
      out.symbol.function = &ext;
      out.symbol.path = name;
      return;
    case K::Namespace: return path(canonical_builtin_path(ext.name_space.empty() ? name : ext.name_space), at, out);
    case K::Array:
      throw error_node(at, error_kind::type,
                       fmt::format("'{}' is an array from outside the kernel: pass it as an argument", name));
    case K::Other:
      if (standard) return path(name, at, out);
      throw error_node(at, error_kind::type,
                       fmt::format("'{}' is {}; from outside, a kernel can use numbers, booleans, tables of "
                                   "numbers, Lua functions and the math, cuda and luda namespaces",
                                   name, ext.describe.empty() ? "not usable in a kernel" : ext.describe));
  }
}

void FunctionTyper::path(const std::string& spelled, const Expr& at, ExprInfo& out) {
  const std::string p = canonical_builtin_path(spelled);  // luda.cuda.grid is cuda.grid
  if (const Builtin* row = find_builtin(p)) {
    if (row->form == Builtin::Form::Value) return builtin_value(*row, at, out);
    out.symbol.kind = Symbol::Kind::Builtin;
    out.symbol.builtin = row;
    out.symbol.path = p;
    return;
  }
  if (is_builtin_namespace(p)) {
    out.symbol.kind = Symbol::Kind::Namespace;
    out.symbol.path = p;
    return;
  }
  auto dot = p.rfind('.');
  if (dot == std::string::npos) throw error_node(at, error_kind::name, fmt::format("unknown name '{}'", p));
  std::string parent = p.substr(0, dot);
  throw error_node(at, error_kind::name,
                   fmt::format("'{}' has no member '{}' (it has: {})", parent, p.substr(dot + 1),
                               builtin_members(parent)));
}

void FunctionTyper::builtin_value(const Builtin& row, const Expr& at, ExprInfo& out) {
  BuiltinTyping t = row.type(row, {});
  LUDA_DSL_CHECK(t.error.empty());
  (void)at;
  out.builtin = &row;
  out.builtin_typing = t;
  out.type = t.result;
  out.constant = t.constant;
}

// ---------------------------------------------------------------- fields and indexing

void FunctionTyper::field(const FieldExpr& e, ExprInfo& out) { field_rule(e, expr(*e.object), out); }

void FunctionTyper::field_rule(const FieldExpr& e, const ExprInfo& object, ExprInfo& out) {
  const std::string& name = e.field.text;
  if (object.unknown) {
    out.unknown = true;
    return;
  }
  switch (object.symbol.kind) {
    case Symbol::Kind::Namespace: return path(object.symbol.path + "." + name, e, out);
    case Symbol::Kind::Table: {
      auto it = object.symbol.table->fields.find(name);
      if (it == object.symbol.table->fields.end())
        throw error_node(e, error_kind::name,
                         fmt::format("the table '{}' has no field '{}'", object.symbol.path, name));
      return external(object.symbol.path + "." + name, inf_.keep(it->second), e, out);
    }
    case Symbol::Kind::None: break;
    default: throw error_node(e, error_kind::type, fmt::format("{} has no field '{}'", describe(object), name));
  }
  // z.real and z.imag, as NumPy's: a complex's parts, in its real type; a real number is
  // its own real part and has 0 for imaginary part.
  if ((name == "real" || name == "imag") && object.type.is_number()) {
    Scalar part = real_part(object.type.scalar);
    out.type = Type::scalar_of(part, object.type.weak);
    if (object.constant)
      out.constant = name == "imag" ? convert_constant(Constant::of_float(object.constant->im), Scalar::Float64, part)
                                    : convert_constant(*object.constant, object.type.scalar, part);
    if (object.constant && name == "imag" && !object.type.is_complex())
      out.constant = convert_constant(Constant::of_int(0), Scalar::Int64, part);
    return;
  }
  if (object.type.kind != Type::Kind::Array)
    throw error_node(e, error_kind::type,
                     fmt::format("cannot read field '{}' of {}{}", name, object.type.str(),
                                 object.type.is_number() ? " (a number has the fields real and imag)" : ""));
  if (name == "shape") {
    out.symbol.kind = Symbol::Kind::Shape;
  } else if (name == "size") {
    out.type = Type::scalar_of(Scalar::Int64);
  } else if (name == "ndim") {
    out.type = Type::scalar_of(Scalar::Int64, true);
    out.constant = Constant::of_int(object.type.ndim);
  } else {
    throw error_node(e, error_kind::type, fmt::format("an array has the fields shape, size and ndim, not '{}'", name));
  }
}

void FunctionTyper::index(const IndexExpr& e, ExprInfo& out) {
  const ExprInfo& object = expr(*e.object);
  // A constant table's key may be a string: typed as any expression, not as a value.
  bool table = !object.unknown && object.symbol.kind == Symbol::Kind::Table;
  index_rule(e, object, table ? expr(*e.key) : value(*e.key), out);
}

void FunctionTyper::index_rule(const IndexExpr& e, const ExprInfo& object, const ExprInfo& key, ExprInfo& out) {
  if (object.unknown) {
    out.unknown = true;
    return;
  }
  if (object.symbol.kind == Symbol::Kind::Table) {
    std::string k;
    if (key.symbol.kind == Symbol::Kind::String) k = key.symbol.text;
    else if (key.constant && key.constant->kind == Constant::Kind::Int) k = std::to_string(key.constant->i);
    else throw error_node(*e.key, error_kind::type, "a constant table is indexed by a constant key");
    auto it = object.symbol.table->fields.find(k);
    if (it == object.symbol.table->fields.end())
      throw error_node(e, error_kind::name, fmt::format("the table '{}' has no field [{}]", object.symbol.path, k));
    return external(object.symbol.path + "[" + k + "]", inf_.keep(it->second), e, out);
  }
  if (key.unknown) {
    out.unknown = true;
    return;
  }
  if (object.symbol.kind == Symbol::Kind::Shape) {
    int ndim = tf_.info(*e.object->as<FieldExpr>().object).type.ndim;
    if (!key.type.is_int())
      throw error_node(*e.key, error_kind::type,
                       fmt::format("a.shape is indexed by an integer, got {}", key.type.str()));
    if (key.constant && (key.constant->i < 1 || key.constant->i > ndim))
      throw error_node(
          *e.key, error_kind::type,
          fmt::format("a.shape[{}] is out of range: the array has {} dimension{} (a.shape[1] .. a.shape[{}]; "
                      "Lua sequences start at 1)",
                      key.constant->i, ndim, ndim == 1 ? "" : "s", ndim));
    out.type = Type::scalar_of(Scalar::Int64);
    return;
  }
  if (object.symbol.kind != Symbol::Kind::None || object.type.kind != Type::Kind::Array)
    throw error_node(e, error_kind::type, fmt::format("cannot index {}", describe(object)));
  if (!key.type.is_int())
    throw error_node(
        *e.key, error_kind::type,
        fmt::format("an array index must be an integer, got {} (convert with math.floor(x) or luda.int64(x))",
                    key.type.str()));
  if (object.type.ndim == 0)
    throw error_at(e.bracket, error_kind::type,
                   "too many indices: this is a 0-d array, which has no dimension to index; pass its value as a "
                   "number (a:item()) or as a 1-element array (a:reshape(1))",
                   e.span());
  if (object.type.ndim == 1) {
    out.type = Type::scalar_of(object.type.scalar);
  } else {
    out.type = Type::array_of(object.type.scalar, object.type.ndim - 1, object.type.c_contiguous);
  }
}

// ---------------------------------------------------------------- calls

void FunctionTyper::call(const CallExpr& e, ExprInfo& out) {
  const ExprInfo& callee = expr(*e.callee);
  if (callee.unknown) {
    out.unknown = true;
    return;
  }
  if (callee.symbol.kind == Symbol::Kind::Builtin) return builtin_call(e, e.args, e.open, *callee.symbol.builtin, out);
  if (callee.symbol.kind == Symbol::Kind::Function)
    return device_call(e, *callee.symbol.function, callee.symbol.path, out);
  if (callee.symbol.kind == Symbol::Kind::Declared)
    return declared_call(e, *callee.symbol.function, callee.symbol.path, out);
  not_callable(e, callee);
}

void FunctionTyper::not_callable(const CallExpr& e, const ExprInfo& callee) {
  if (callee.builtin && callee.builtin->form == Builtin::Form::Value)
    throw error_node(e, error_kind::type,
                     fmt::format("{} is a value, not a function: write {} without '()'", callee.builtin->name,
                                 callee.builtin->name));
  throw error_node(*e.callee, error_kind::type, fmt::format("cannot call {}", describe(callee)));
}

void FunctionTyper::operand_of(const Expr& arg, BuiltinOperand& op) {
  if (const auto* t = arg.dyn<TableExpr>()) {
    std::vector<long long> shape;
    for (const auto& f : t->fields) shape.push_back(extent(f, value(*f.value)));
    op.shape = std::move(shape);
    op.describe = "a table";
    return;
  }
  operand_rule(arg, expr(arg), op);
}

long long FunctionTyper::extent(const TableExpr::Field& f, const ExprInfo& v) {
  if (f.kind != TableExpr::Field::Kind::Positional)
    throw error_at(f.loc, error_kind::type, "a shape table lists its extents: {32, 33}");
  if (v.unknown || !v.constant || v.constant->kind != Constant::Kind::Int || !v.type.is_int())
    throw error_node(*f.value, error_kind::type,
                     "an extent must be an integer constant, known when the kernel is compiled");
  return v.constant->i;
}

void FunctionTyper::operand_rule(const Expr& arg, ExprInfo& info, BuiltinOperand& op) {
  if (info.unknown) {
    op.describe = "?";
    return;
  }
  if (info.symbol.kind == Symbol::Kind::String) {
    op.is_string = true;
    op.dtype = parse_scalar(info.symbol.text);
    return;
  }
  if (info.symbol.kind == Symbol::Kind::Builtin) op.dtype = builtin_dtype(*info.symbol.builtin);
  if (info.symbol.kind != Symbol::Kind::None) {
    op.describe = describe(info);
    return;
  }
  const ExprInfo& v = as_value(arg, info);
  op.type = v.type;
  op.constant = v.constant;
  if (v.constant && v.constant->kind == Constant::Kind::Int && v.type.is_int())
    op.shape = std::vector<long long>{v.constant->i};
}

// g:sync() on a group (cuda.cg.this_grid()): the row `<group>():<method>`. Other objects
// have no methods in kernels.
void FunctionTyper::method_call(const MethodCallExpr& e, ExprInfo& out) {
  const ExprInfo& object = expr(*e.object);
  if (object.unknown) {
    out.unknown = true;
    return;
  }
  if (object.symbol.kind != Symbol::Kind::Group)
    throw error_node(e, error_kind::unsupported,
                     fmt::format("method calls (a:{}(...)) are not supported in kernels", e.method.text));
  const std::string prefix = object.symbol.path + "():";
  const Builtin* row = find_builtin(prefix + e.method.text);
  if (!row) {
    std::string methods;
    for (const Builtin& r : builtin_table())
      if (r.name.starts_with(prefix))
        methods += (methods.empty() ? "" : ", ") + std::string(r.name.substr(prefix.size()));
    throw error_at(e.method.loc, error_kind::name,
                   fmt::format("{}() has no method '{}' (it has: {})", object.symbol.path, e.method.text, methods));
  }
  builtin_call(e, e.args, e.open, *row, out);
}

void FunctionTyper::builtin_call(const Expr& e, const std::vector<const Expr*>& args, Location open, const Builtin& row,
                                 ExprInfo& out) {
  check_arity(e, args, open, row);
  std::vector<BuiltinOperand> ops(args.size());
  for (std::size_t i = 0; i < ops.size(); ++i) operand_of(*args[i], ops[i]);
  builtin_rule(e, args, open, row, ops, out);
  if (row.form == Builtin::Form::Group && !out.unknown) {
    out.symbol.kind = Symbol::Kind::Group;
    out.symbol.path = std::string(row.name);
  }
}

void FunctionTyper::check_arity(const Expr& e, const std::vector<const Expr*>& args, Location open,
                                const Builtin& row) {
  int n = static_cast<int>(args.size());
  if (row.form == Builtin::Form::Value)
    throw error_node(e, error_kind::type, fmt::format("{} is a value, not a function", row.name));
  if (n < row.min_args || (row.max_args >= 0 && n > row.max_args)) {
    std::string want = row.min_args == row.max_args ? std::to_string(row.min_args)
                       : row.max_args < 0           ? fmt::format("at least {}", row.min_args)
                                                    : fmt::format("{} to {}", row.min_args, row.max_args);
    bool one = row.min_args == row.max_args && row.min_args == 1;
    throw error_at(open, error_kind::type,
                   fmt::format("{} takes {} argument{}, got {}", row.name, want, one ? "" : "s", n), e.span());
  }
}

void FunctionTyper::builtin_rule(const Expr& e, const std::vector<const Expr*>& args, Location open, const Builtin& row,
                                 const std::vector<BuiltinOperand>& ops, ExprInfo& out) {
  for (const BuiltinOperand& op : ops) {
    if (op.describe != "?") continue;
    out.unknown = true;
    return;
  }
  BuiltinTyping t = row.type(row, ops);
  if (!t.error.empty()) {
    if (t.error_operand >= 0)
      throw error_node(*args.at(static_cast<std::size_t>(t.error_operand)), error_kind::type, t.error);
    throw error_at(open, error_kind::type, t.error, e.span());
  }
  for (std::size_t i = 0; i < t.convert.size() && i < args.size(); ++i)
    if (t.convert[i].kind == Type::Kind::Scalar && !args[i]->is<TableExpr>())
      check_fits(tf_.info(*args[i]), t.convert[i], *args[i]);
  out.builtin = &row;
  out.type = t.result;
  out.constant = t.constant;
  out.builtin_typing = std::move(t);
}

void FunctionTyper::device_call(const CallExpr& e, const ExternalValue& fn, const std::string& lua_name,
                                ExprInfo& out) {
  for (const Expr* a : e.args) value(*a);
  device_rule(e, fn, lua_name, out);
}

void FunctionTyper::device_rule(const CallExpr& e, const ExternalValue& fn, const std::string& lua_name,
                                ExprInfo& out) {
  std::vector<Type> args;
  bool unknown = false;
  for (const Expr* a : e.args) {
    const ExprInfo& v = tf_.info(*a);
    unknown = unknown || v.unknown;
    if (!v.unknown && v.type.kind != Type::Kind::Scalar && v.type.kind != Type::Kind::Array)
      throw error_node(*a, error_kind::type, fmt::format("cannot pass {} to a device function", v.type.str()));
    args.push_back(v.type);
  }
  if (unknown) {
    out.unknown = true;
    return;
  }
  // A weak float argument takes the widest float among the strong arguments (as a Lua
  // number passed to a kernel does), so hypot(x32, 2.0) stays in float32.
  std::optional<Scalar> widest;
  for (const Type& t : args)
    if (!t.weak && t.kind == Type::Kind::Scalar && is_float(t.scalar))
      widest = (!widest || scalar_bits(t.scalar) > scalar_bits(*widest)) ? t.scalar : *widest;
  for (Type& t : args)
    if (t.weak && t.kind == Type::Kind::Scalar && is_float(t.scalar) && widest) t = Type::scalar_of(*widest);

  const FunctionSource& src = fn.function;
  std::string identity = fmt::format("{}:{}-{}@{}", src.chunk ? src.chunk->name : "?", src.line_defined,
                                     src.last_line_defined, fn.handle);
  auto self = std::find(inf_.in_progress.begin(), inf_.in_progress.end(), identity);
  if (self != inf_.in_progress.end()) {
    std::size_t at = static_cast<std::size_t>(self - inf_.in_progress.begin());
    std::string chain;
    for (std::size_t i = at; i < inf_.in_progress_names.size(); ++i) chain += "'" + inf_.in_progress_names[i] + "' -> ";
    throw error_node(e, error_kind::unsupported,
                     fmt::format("recursion is not supported in kernels: {}'{}'", chain, lua_name));
  }
  std::string key = identity + "(";
  for (const Type& t : args) key += t.str() + (t.weak ? "~," : ",");
  key += ")";
  auto found = inf_.specializations.find(key);
  int index;
  if (found != inf_.specializations.end()) {
    index = found->second;
  } else {
    FoundFunction callee = find_function(src);
    if (callee.function->nparams() != static_cast<int>(args.size()))
      throw error_node(e, error_kind::type,
                       fmt::format("'{}' takes {} argument{}, got {}", lua_name, callee.function->nparams(),
                                   callee.function->nparams() == 1 ? "" : "s", args.size()));
    auto tf = std::make_unique<TypedFunction>();
    tf->ast = callee.ast;
    tf->function = callee.function;
    tf->lua_name = lua_name.substr(lua_name.find_last_of(".[") == std::string::npos ? 0
                                                                                    : lua_name.find_last_of(".[") + 1);
    tf->params = args;
    std::string base = c_identifier(tf->lua_name);
    // The name must not depend on addresses: the generated source keys the disk cache.
    std::string stable = fmt::format("{}:{}-{}(", src.chunk ? src.chunk->name : "?", src.line_defined,
                                     src.last_line_defined);
    for (const Type& t : args) stable += t.str() + (t.weak ? "~," : ",");
    tf->c_name = base + "_" + short_hash(stable + ")");
    inf_.in_progress.push_back(identity);
    inf_.in_progress_names.push_back(lua_name);
    FunctionTyper(inf_, *tf, fn.handle).run();
    inf_.in_progress.pop_back();
    inf_.in_progress_names.pop_back();
    inf_.program.functions.push_back(std::move(tf));
    index = static_cast<int>(inf_.program.functions.size()) - 1;
    inf_.specializations[key] = index;
  }
  const TypedFunction& callee = *inf_.program.functions[static_cast<std::size_t>(index)];
  for (const WeakIntUse& use : callee.weak_int_uses)
    note_weak_use(tf_.info(*e.args.at(static_cast<std::size_t>(use.param))), Type::scalar_of(use.to), use.where);
  out.callee = index;
  out.arg_types = callee.params;
  out.type = callee.result;
}

// Whether C++ `text` has `name` as a whole identifier followed by '(': a definition or
// declaration of that function (or a call of it, which also needs one in the text).
static bool mentions_call(std::string_view text, std::string_view name) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    std::size_t end = at + name.size();
    if ((at > 0 && ident(text[at - 1])) || (end < text.size() && ident(text[end]))) continue;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end < text.size() && text[end] == '(') return true;
  }
  return false;
}

// A call of a declared CUDA C++ function: the count and each argument checked against its
// signature, each argument converted to its parameter's type (as a store converts).
void FunctionTyper::declared_call(const CallExpr& e, const ExternalValue& fn, const std::string& lua_name,
                                  ExprInfo& out) {
  for (const Expr* a : e.args) value(*a);
  const std::shared_ptr<const DeclaredFunction>& d = fn.declared;
  if (!inf_.is_kernel)
    throw error_node(*e.callee, error_kind::unsupported,
                     fmt::format("'{}' is a CUDA C++ device function (cuda.declare_device), which cuda.jit kernels "
                                 "call; vectorize, elementwise, reduction and fuse bodies cannot",
                                 lua_name));
  if (e.args.size() != d->params.size())
    throw error_at(e.open, error_kind::type,
                   fmt::format("'{}' takes {} argument{} ({}), got {}", lua_name, d->params.size(),
                               d->params.size() == 1 ? "" : "s", d->signature(), e.args.size()),
                   e.span());
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    const ExprInfo& v = tf_.info(*e.args[i]);
    if (v.unknown) {
      out.unknown = true;
      return;
    }
    const Type& to = d->params[i];
    if (to.kind == Type::Kind::Array) {
      if (v.type.kind != Type::Kind::Array || v.type.scalar != to.scalar || v.type.ndim != to.ndim)
        throw error_node(*e.args[i], error_kind::type,
                         fmt::format("argument {} of '{}' is {} ({}), got {}", i + 1, lua_name, to.str(),
                                     d->signature(), v.type.str()));
      if (!v.type.c_contiguous)
        throw error_node(*e.args[i], error_kind::type,
                         fmt::format("argument {} of '{}' is passed as a pointer to its elements, so it must be a "
                                     "C-contiguous array; this one may be strided (pass a contiguous one, "
                                     "x:copy() if need be)",
                                     i + 1, lua_name));
      continue;
    }
    bool ok = (v.type.is_number() && to.is_number()) || (v.type.is_bool() && to.is_bool());
    if (!ok)
      throw error_node(*e.args[i], error_kind::type,
                       fmt::format("argument {} of '{}' is {} ({}), got {}", i + 1, lua_name, to.str(), d->signature(),
                                   v.type.str()));
    convertible(v.type, to, *e.args[i], "pass", &v);
  }
  auto& declared = inf_.program.declared;
  auto same = std::find_if(declared.begin(), declared.end(), [&](const auto& o) { return o->name == d->name; });
  if (same == declared.end()) {
    declared.push_back(d);
  } else if ((*same)->signature() != d->signature()) {
    throw error_node(e, error_kind::type,
                     fmt::format("'{}' is declared as {} here and as {} elsewhere in this kernel; a C function has "
                                 "one signature",
                                 d->name, d->signature(), (*same)->signature()));
  }
  // A function no linked source defines would be the assembler's unlocated "unresolved
  // extern function": said here, at the call, with the fix.
  bool defined = false;
  for (const auto* chunks : {&d->link, inf_.link})
    for (std::size_t i = 0; chunks && !defined && i < chunks->size(); ++i)
      defined = mentions_call((*chunks)[i]->text, d->name);
  if (!defined)
    throw error_node(*e.callee, error_kind::name,
                     fmt::format("'{}' is declared (cuda.declare_device) but no linked source defines '{}'; give its "
                                 "CUDA source to the kernel, cuda.jit(fn, {{link = {{\"file.cu\"}}}}), or to the "
                                 "declaration, cuda.declare_device(name, sig, {{link = ...}})",
                                 lua_name, d->name));
  out.declared = d.get();
  out.arg_types = d->params;
  out.type = d->result;
}

// ---------------------------------------------------------------- operators

void FunctionTyper::check_fits(const ExprInfo& operand, const Type& to, const Expr& at) {
  if (!operand.type.weak || !operand.type.is_number() || !to.is_int()) return;
  if (!operand.constant) {
    note_weak_use(operand, to, fmt::format("{}:{}", tf_.ast->source().name(), at.loc.line));
    return;
  }
  if (!constant_fits(*operand.constant, operand.type.scalar, to.scalar))
    throw error_node(at, error_kind::type,
                     fmt::format("the constant {} does not fit {}, the type it is used with (convert explicitly, "
                                 "e.g. luda.int64(x), to compute in a wider type)",
                                 constant_text(*operand.constant, operand.type.scalar), scalar_name(to.scalar)));
}

int FunctionTyper::weak_param_of(const ExprInfo& e) const {
  if (e.constant || e.var < 0 || !e.type.weak || !e.type.is_int()) return -1;
  const Variable& v = tf_.vars.at(static_cast<std::size_t>(e.var));
  if (v.assignments > 0) return -1;  // a value computed in the function wraps as integers do
  return v.is_param ? e.var : v.copy_of_param;
}

void FunctionTyper::note_weak_use(const ExprInfo& operand, const Type& to, const std::string& where) {
  if (!to.is_int() || to.weak || to.scalar == Scalar::Int64) return;
  int param = weak_param_of(operand);
  if (param < 0) return;
  WeakIntUse use{param, to.scalar, where};
  auto& uses = tf_.weak_int_uses;
  if (std::find_if(uses.begin(), uses.end(),
                   [&](const WeakIntUse& u) { return u.param == use.param && u.to == use.to; }) == uses.end())
    uses.push_back(std::move(use));
}

// The type two numbers are compared in. NumPy 2 compares integers by their values: a weak
// integer that the other operand's integer type cannot hold (any but a constant that fits)
// compares as the int64 it is rather than being converted (int8 < 1000 is true), and a
// signed integer meets a uint64 by value (mixed_sign), where C++ would compare in one of
// the two types and get values past the other's range wrong.
Type FunctionTyper::compared_as(const ExprInfo& a, const ExprInfo& b, bool& mixed_sign) const {
  Type ta = a.type, tb = b.type;
  auto exact = [](const ExprInfo& w, Type& t, const Type& other) {
    if (!t.weak || !t.is_int() || other.weak || !other.is_int()) return;
    if (w.constant && constant_fits(*w.constant, t.scalar, other.scalar)) return;
    t.weak = false;
  };
  exact(a, ta, b.type);
  exact(b, tb, a.type);
  mixed_sign = ta.is_int() && tb.is_int() && !ta.weak && !tb.weak && is_signed(ta.scalar) != is_signed(tb.scalar) &&
               (ta.scalar == Scalar::UInt64 || tb.scalar == Scalar::UInt64);
  if (mixed_sign) return Type::scalar_of(Scalar::Int64);
  return *promote(ta, tb);
}

// A left-associative chain (a + b + c ..., each operator's left operand the next one down)
// is typed bottom-up in a loop, not by recursion: generated code sums thousands of terms.
// The operands are typed in the order recursion would type them.
void FunctionTyper::binary_chain(const BinaryExpr& top) {
  std::vector<const BinaryExpr*> spine{&top};
  while (const auto* lhs = spine.back()->lhs->dyn<BinaryExpr>()) spine.push_back(lhs);
  for (const BinaryExpr* e : spine)
    if (e->op == BinaryOp::Concat) no_concat(*e);
  const ExprInfo* lhs = &value(*spine.back()->lhs);
  for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
    ExprInfo& out = tf_.exprs.at(static_cast<std::size_t>((*it)->id));
    if (*it != &top) reset(out);  // expr() reset the top's
    binary(**it, *lhs, out);
    if (out.unknown) saw_unknown_ = true;
    lhs = &out;
  }
}

void FunctionTyper::no_concat(const BinaryExpr& e) {
  throw error_node(e, error_kind::unsupported, "string concatenation ('..') is not supported in kernels");
}

void FunctionTyper::binary(const BinaryExpr& e, const ExprInfo& a, ExprInfo& out) {
  binary_rule(e, a, value(*e.rhs), out);
}

void FunctionTyper::binary_rule(const BinaryExpr& e, const ExprInfo& a, const ExprInfo& b, ExprInfo& out) {
  if (a.unknown || b.unknown) {
    out.unknown = true;
    return;
  }
  const std::string op = op_text(e.op);
  auto both = [&](bool (Type::*pred)() const) { return (a.type.*pred)() && (b.type.*pred)(); };
  Type result;
  switch (e.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::IDiv:
    case BinaryOp::Mod:
    case BinaryOp::Div:
    case BinaryOp::Pow:
      // Two bools take NumPy's bool arithmetic (numpy.True_ + numpy.True_ is True): `+` is
      // or and `*` is and, a bool; NumPy refuses `-` on bools, and so does luda.
      if (both(&Type::is_bool) && (e.op == BinaryOp::Add || e.op == BinaryOp::Mul)) {
        out.operand = result = Type::scalar_of(Scalar::Bool);
        break;
      }
      if (both(&Type::is_bool) && e.op == BinaryOp::Sub)
        throw error_node(e, error_kind::type,
                         "cannot apply '-' to bool and bool: NumPy's boolean subtract is not supported; for "
                         "exclusive or write a ~= b");
      if (!both(&Type::is_number))
        throw error_node(e, error_kind::type,
                         fmt::format("cannot apply '{}' to {} and {}", op, a.type.str(), b.type.str()));
      if ((e.op == BinaryOp::IDiv || e.op == BinaryOp::Mod) && (a.type.is_complex() || b.type.is_complex()))
        throw error_node(e, error_kind::type,
                         fmt::format("cannot apply '{}' to {} and {}: floor division and modulo are not defined for "
                                     "complex numbers (NumPy's floor_divide and remainder are not either)",
                                     op, a.type.str(), b.type.str()));
      out.operand = *promote(a.type, b.type);
      if (e.op == BinaryOp::Div || e.op == BinaryOp::Pow) {
        out.operand = float_of(out.operand);
      }
      result = out.operand;
      break;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      if (both(&Type::is_bool)) {
        out.operand = Type::scalar_of(Scalar::Bool);
      } else if (both(&Type::is_number)) {
        out.operand = compared_as(a, b, out.mixed_sign);
      } else {
        throw error_node(e, error_kind::type, fmt::format("cannot compare {} with {}", a.type.str(), b.type.str()));
      }
      result = Type::scalar_of(Scalar::Bool);
      break;
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      if (!both(&Type::is_number))
        throw error_node(e, error_kind::type,
                         fmt::format("cannot compare {} with {} using '{}'", a.type.str(), b.type.str(), op));
      out.operand = compared_as(a, b, out.mixed_sign);
      result = Type::scalar_of(Scalar::Bool);
      break;
    case BinaryOp::And:
    case BinaryOp::Or:
      if (!both(&Type::is_bool))
        throw error_node(e, error_kind::type,
                         fmt::format("'{}' needs bool operands in a kernel, got {} and {} (Lua's value-selecting "
                                     "'a {} b' on numbers is not supported: use if/else)",
                                     op, a.type.str(), b.type.str(), op));
      out.operand = result = Type::scalar_of(Scalar::Bool);
      break;
    case BinaryOp::BAnd:
    case BinaryOp::BOr:
    case BinaryOp::BXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      if (!both(&Type::is_int))
        throw error_node(e, error_kind::type,
                         fmt::format("bitwise '{}' needs integers, got {} and {} (convert with math.floor(x) or "
                                     "luda.int64(x))",
                                     op, a.type.str(), b.type.str()));
      // A shift keeps its left operand's type (a weak one meets the count's).
      if ((e.op == BinaryOp::Shl || e.op == BinaryOp::Shr) && !a.type.weak) out.operand = a.type;
      else out.operand = *promote(a.type, b.type);
      result = out.operand;
      break;
    default: throw error_node(e, error_kind::unsupported, fmt::format("operator '{}' is not supported in kernels", op));
  }
  bool shift = e.op == BinaryOp::Shl || e.op == BinaryOp::Shr;
  check_fits(a, out.operand, *e.lhs);
  if (!shift) check_fits(b, out.operand, *e.rhs);
  out.type = result;
  if (a.constant && b.constant && out.mixed_sign) {
    out.constant = Constant::of_bool(compare_mixed(e.op, *a.constant, a.type, *b.constant, b.type));
  } else if (a.constant && b.constant) {
    Constant ca = convert_constant(*a.constant, a.type.scalar, out.operand.scalar);
    Constant cb = shift ? convert_constant(*b.constant, b.type.scalar, Scalar::Int64)
                        : convert_constant(*b.constant, b.type.scalar, out.operand.scalar);
    std::string error;
    out.constant = fold_binary(e.op, ca, cb, out.operand.scalar, result.scalar, &error);
    if (!error.empty()) throw error_node(e, "arithmetic error", error);
  }
}

void FunctionTyper::unary(const UnaryExpr& e, ExprInfo& out) {
  unary_rule(e, e.op == UnaryOp::Len ? expr(*e.operand) : value(*e.operand), out);
}

void FunctionTyper::unary_rule(const UnaryExpr& e, const ExprInfo& a, ExprInfo& out) {
  if (e.op == UnaryOp::Len) {
    if (a.unknown) {
      out.unknown = true;
      return;
    }
    if (a.symbol.kind == Symbol::Kind::Shape) {
      out.type = Type::scalar_of(Scalar::Int64, true);
      out.constant = Constant::of_int(tf_.info(*e.operand->as<FieldExpr>().object).type.ndim);
      return;
    }
    if (a.symbol.kind != Symbol::Kind::None || a.type.kind != Type::Kind::Array)
      throw error_node(e, error_kind::type, fmt::format("'#' gives the length of an array, not of {}", describe(a)));
    if (a.type.ndim == 0)
      throw error_node(e, error_kind::type, "'#' of a 0-d array: it has no first dimension (a.size is its 1 element)");
    out.type = Type::scalar_of(Scalar::Int64);
    return;
  }
  if (a.unknown) {
    out.unknown = true;
    return;
  }
  switch (e.op) {
    case UnaryOp::Neg:
      if (a.type.is_bool())
        throw error_node(e, error_kind::type,
                         "cannot negate bool: NumPy's boolean negative is not supported; for the logical not "
                         "write not x");
      if (!a.type.is_number()) throw error_node(e, error_kind::type, fmt::format("cannot negate {}", a.type.str()));
      break;
    case UnaryOp::Not:
      if (!a.type.is_bool())
        throw error_node(e, error_kind::type,
                         fmt::format("'not' needs a bool in a kernel, got {} (compare it, e.g. x == 0)", a.type.str()));
      break;
    case UnaryOp::BNot:
      if (!a.type.is_int())
        throw error_node(e, error_kind::type, fmt::format("bitwise '~' needs an integer, got {}", a.type.str()));
      break;
    default: break;
  }
  out.type = out.operand = a.type;
  if (a.constant) out.constant = fold_unary(e.op, *a.constant, a.type.scalar);
}

}  // namespace luda::dsl::detail

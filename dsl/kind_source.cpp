// The kinds given as strings. Parameter strings go through the Lua lexer; a body or an
// expression is first parsed alone (its syntax errors then point into exactly what the
// user wrote), then wrapped into a function whose generated head is a hidden prefix of
// line 1 (dsl/source.h): the user's text keeps its lines and columns in every later error.
#include "dsl/kind_source.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "dsl/ast.h"
#include "dsl/diagnostics.h"
#include "dsl/find_function.h"
#include "dsl/lexer.h"

namespace luda::dsl {

namespace {

bool is_reserved_word(int type) { return type >= tok::And && type <= tok::While; }

std::string reserved_reason(std::string_view name, bool reduction) {
  if (name == "i" || name == "n") return "i is the element index and n the size";
  if (name == "luda") return "the generated code uses the luda namespace";
  if (reduction && (name == "a" || name == "b")) return "a and b are the reduce expression's operands";
  if (reduction && name == "_j") return "_j is the index within the reduced axes";
  return "";
}

// A statement list or an expression as the user wrote it, parsed alone (a chunk of its
// own: `return <expr>` with the `return ` hidden), for its syntax errors and its tree.
std::shared_ptr<const Ast> parse_statements(const std::string& chunk, std::string_view text) {
  auto ast = parsed_chunk(Chunk{chunk, std::string(text)});
  // A body assigns its outputs; a `return` would skip them (and the generated return).
  for (int id = 0; id < ast->node_count(); ++id)
    if (ast->node(id).is<ReturnStat>())
      throw node_error(*ast, ast->node(id), error_kind::unsupported,
                       "a kernel body assigns its outputs and does not return: write z = ...");
  return ast;
}

void check_expression(const std::string& chunk, std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw source_error(Source(chunk, std::string(text)), {1, 1}, error_kind::syntax,
                       "an expression expected, got an empty string");
  auto ast = parsed_chunk(Chunk{chunk, "return " + std::string(text), 7});
  const Block& body = *ast->main().body;
  const auto* r = body.stats.size() == 1 ? body.stats[0]->dyn<ReturnStat>() : nullptr;
  LUDA_DSL_CHECK(r);  // `return` ends a block: anything after it is a syntax error
  if (r->values.size() != 1)
    throw node_error(*ast, r->values.empty() ? static_cast<const Node&>(*r) : *r->values[1], error_kind::syntax,
                     fmt::format("one expression expected, got {}", r->values.size()));
}

// Whether expression `root` mentions `name`, with a work list rather than recursion:
// chains of thousands of operators are ordinary.
bool expr_reads(const Expr& root, const std::string& name) {
  std::vector<const Expr*> work{&root};
  while (!work.empty()) {
    const Expr& e = *work.back();
    work.pop_back();
    if (e.is<NameExpr>() && e.as<NameExpr>().name == name) return true;
    if (e.is<FunctionExpr>()) return true;  // rejected later; counting it as a read is safe
    push_children(e, work);
  }
  return false;
}

// Whether `n` mentions the name `name` as a value (an assignment's plain Name target is
// not a read; its index expressions are).
bool reads(const Node& n, const std::string& name) {
  auto any = [&](const std::vector<const Expr*>& list) {
    for (const Expr* e : list)
      if (expr_reads(*e, name)) return true;
    return false;
  };
  auto block = [&](const Block* b) {
    if (!b) return false;
    for (const Stat* s : b->stats)
      if (reads(*s, name)) return true;
    return false;
  };
  switch (n.kind) {
    case NodeKind::Nil:
    case NodeKind::True:
    case NodeKind::False:
    case NodeKind::Integer:
    case NodeKind::Float:
    case NodeKind::String:
    case NodeKind::Vararg:
    case NodeKind::Function:
    case NodeKind::Table:
    case NodeKind::Name:
    case NodeKind::Index:
    case NodeKind::Field:
    case NodeKind::Call:
    case NodeKind::MethodCall:
    case NodeKind::Binary:
    case NodeKind::Unary:
    case NodeKind::Paren: return expr_reads(static_cast<const Expr&>(n), name);
    case NodeKind::Local: return any(n.as<LocalStat>().values);
    case NodeKind::Assign:
      for (const Expr* t : n.as<AssignStat>().targets)
        if (!t->is<NameExpr>() && expr_reads(*t, name)) return true;
      return any(n.as<AssignStat>().values);
    case NodeKind::CallStat: return expr_reads(*n.as<CallStat>().call, name);
    case NodeKind::Do: return block(n.as<DoStat>().body);
    case NodeKind::While: return expr_reads(*n.as<WhileStat>().cond, name) || block(n.as<WhileStat>().body);
    case NodeKind::Repeat: return block(n.as<RepeatStat>().body) || expr_reads(*n.as<RepeatStat>().cond, name);
    case NodeKind::If:
      for (const auto& c : n.as<IfStat>().clauses)
        if (expr_reads(*c.cond, name) || block(c.body)) return true;
      return block(n.as<IfStat>().else_body);
    case NodeKind::NumericFor: {
      const auto& f = n.as<NumericForStat>();
      return expr_reads(*f.start, name) || expr_reads(*f.limit, name) || (f.step && expr_reads(*f.step, name)) ||
             block(f.body);
    }
    case NodeKind::GenericFor: return any(n.as<GenericForStat>().exprs) || block(n.as<GenericForStat>().body);
    case NodeKind::FunctionStat:
    case NodeKind::LocalFunction: return true;
    case NodeKind::Return: return any(n.as<ReturnStat>().values);
    default: return false;
  }
}

// Whether the body needs output `name`'s current value: it may read it before assigning
// it, or may leave it unassigned (CuPy's body then leaves the output as it was). Only a
// top-level `name = ...` surely runs; one inside a branch or loop may not.
bool needs_current_value(const Block& body, const std::string& name) {
  for (const Stat* s : body.stats) {
    if (reads(*s, name)) return true;
    if (const auto* a = s->dyn<AssignStat>())
      for (const Expr* t : a->targets)
        if (const auto* n = t->dyn<NameExpr>(); n && n->name == name) return false;
  }
  return true;
}

// A zero of `type` in the kernel language (a strong constant: the local keeps the type).
std::string typed_zero(Scalar type) {
  return type == Scalar::Bool ? "false" : fmt::format("luda.{}(0)", scalar_name(type));
}

// `luda.<type>(` ... `)`: the conversion of a map / reduce / identity value to the reduce
// type. There is no luda.bool: a bool reduce type takes the value as it is.
std::pair<std::string, std::string> conversion(Scalar type) {
  if (type == Scalar::Bool) return {"(", ")"};
  return {fmt::format("luda.{}(", scalar_name(type)), ")"};
}

// A function whose head `head` (one line) is hidden before the user's text: errors point
// into `user` at its own lines and columns.
FunctionSource wrapped(const std::string& chunk, const std::string& head, std::string_view user,
                       const std::string& tail, int nparams) {
  FunctionSource f;
  f.chunk = std::make_shared<const Chunk>(Chunk{chunk, head + std::string(user) + tail, head.size()});
  f.nparams = nparams;
  return f;
}

std::string names(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Locals for outputs: `local z = luda.float32(0) `.
std::string zero_locals(const std::vector<KindParam>& out, const std::vector<Scalar>& types, std::size_t first,
                        const std::vector<bool>* skip) {
  std::string s;
  for (std::size_t k = 0; k < out.size(); ++k)
    if (!skip || !(*skip)[k]) s += fmt::format("local {} = {} ", out[k].name, typed_zero(types.at(first + k)));
  return s;
}

std::string out_names(const std::vector<KindParam>& out) {
  std::vector<std::string> list;
  for (const KindParam& p : out) list.push_back(p.name);
  return names(list);
}

}  // namespace

// params -> [param {',' param}]
// param  -> ['raw'] type name          type: a dtype name, or a one-letter placeholder
std::vector<KindParam> parse_kind_params(std::string_view text, std::string_view role, std::string_view kind,
                                         std::string_view name, bool reduction, const std::vector<KindParam>* taken) {
  Source source(fmt::format("{} of {} '{}'", role, kind, name), std::string(text));
  auto fail = [&](const Token& at, std::string_view what, const std::string& message) -> SourceError {
    return source_error(source, at.loc, what, message,
                        at.type == tok::Eof ? std::nullopt : std::optional(Span{at.loc, at.end}));
  };
  std::vector<KindParam> params;
  if (!text.empty() && text[0] == '#')  // the lexer would skip the line as a "#!" line
    throw source_error(source, {1, 1}, error_kind::syntax, "a parameter (a type and a name: T x) expected near '#'");
  Lexer lexer(source);
  Token t;
  lexer.next(t);
  if (t.type == tok::Eof) return params;
  for (;;) {
    KindParam p;
    if (t.type == tok::Name && t.raw == "raw") {
      if (role != "in_params" && reduction)
        throw fail(t, error_kind::syntax,
                   "'raw' is for in_params and an elementwise kernel's outputs: a reduction's outputs are written "
                   "by post_map_expr, one element per reduced row");
      p.raw = true;
      lexer.next(t);
    }
    if (t.type != tok::Name)
      throw fail(t, error_kind::syntax,
                 fmt::format("a parameter (a type and a name: T x) expected near {}", near_text(t)));
    Token type = t;
    if (std::optional<Scalar> s = parse_scalar(type.raw)) {
      p.dtype = s;
    } else if (type.raw.size() == 1 && std::isalpha(static_cast<unsigned char>(type.raw[0]))) {
      p.placeholder = std::string(type.raw);
    } else {
      throw fail(type, error_kind::type,
                 fmt::format("unknown type '{}': expected a dtype (float32, int64, ...) or a one-letter type "
                             "placeholder (T)",
                             type.raw));
    }
    lexer.next(t);
    if (is_reserved_word(t.type))
      throw fail(t, error_kind::name,
                 fmt::format("{} is a Lua keyword: it cannot name a parameter", token_text(t.type)));
    if (t.type != tok::Name)
      throw fail(t, error_kind::syntax,
                 fmt::format("a parameter name expected after '{}' near {}", type.raw, near_text(t)));
    p.name = std::string(t.raw);
    p.col = t.loc.col;
    if (std::string why = reserved_reason(p.name, reduction); !why.empty())
      throw fail(t, error_kind::name, fmt::format("'{}' is a reserved name: {}", p.name, why));
    for (const KindParam& q : params)
      if (q.name == p.name)
        throw fail(t, error_kind::name, fmt::format("duplicate parameter '{}' (also at column {})", p.name, q.col));
    if (taken)
      for (const KindParam& q : *taken)
        if (q.name == p.name)
          throw fail(t, error_kind::name, fmt::format("duplicate parameter '{}': in_params has it too", p.name));
    params.push_back(std::move(p));
    lexer.next(t);
    if (t.type == tok::Eof) break;
    if (t.type != ',')
      throw fail(t, error_kind::syntax, fmt::format("',' expected between parameters near {}", near_text(t)));
    lexer.next(t);
  }
  return params;
}

KindParams parse_kind_signature(std::string_view in_params, std::string_view out_params, std::string_view kind,
                                std::string_view name, bool reduction) {
  KindParams p;
  p.in = parse_kind_params(in_params, "in_params", kind, name, reduction);
  p.out = parse_kind_params(out_params, "out_params", kind, name, reduction, &p.in);
  return p;
}

ElementwiseFunction elementwise_function(const std::vector<KindParam>& in, const std::vector<KindParam>& out,
                                         const std::vector<Scalar>& types, std::string_view body,
                                         std::string_view name) {
  LUDA_DSL_CHECK(types.size() == in.size() + out.size());
  std::string chunk = fmt::format("elementwise '{}'", name);
  auto ast = parse_statements(chunk, body);
  ElementwiseFunction result;
  std::vector<std::string> params;
  for (const KindParam& p : in) params.push_back(p.name);
  for (const KindParam& p : out)
    if (p.raw) params.push_back(p.name);
  std::vector<KindParam> element_outs;  // the outputs the function returns: not raw
  std::vector<bool> skip;               // per element output: a parameter, not a local
  for (const KindParam& p : out) {
    result.out_read.push_back(!p.raw && needs_current_value(*ast->main().body, p.name));
    if (p.raw) continue;
    element_outs.push_back(p);
    skip.push_back(result.out_read.back());
    if (result.out_read.back()) params.push_back(p.name);
  }
  params.push_back("i");
  params.push_back("n");
  std::vector<Scalar> element_types(types.begin(), types.begin() + static_cast<std::ptrdiff_t>(in.size()));
  for (std::size_t k = 0; k < out.size(); ++k)
    if (!out[k].raw) element_types.push_back(types[in.size() + k]);
  // function(<ins>, <raw outs>, <read outs>, i, n) local <unread out> = <zero> do <body>
  // end return <outs not raw> end
  std::string head = fmt::format("function({}) {}do ", names(params),
                                 zero_locals(element_outs, element_types, in.size(), &skip));
  result.function = wrapped(chunk, head, body, fmt::format("\nend return {} end", out_names(element_outs)),
                            static_cast<int>(params.size()));
  for (const KindParam& p : element_outs) result.function.outputs.push_back(p.name);
  return result;
}

ReductionFunctions reduction_functions(const std::vector<KindParam>& in, const std::vector<KindParam>& out,
                                       const std::vector<Scalar>& types, Scalar reduce_type,
                                       const std::vector<bool>& in_is_scalar, std::string_view map_expr,
                                       std::string_view reduce_expr, std::string_view post_map_expr,
                                       std::string_view identity, std::string_view name) {
  LUDA_DSL_CHECK(types.size() == in.size() + out.size() && in_is_scalar.size() == in.size());
  auto chunk = [&](std::string_view part) { return fmt::format("reduction '{}' {}", name, part); };
  auto [open, close] = conversion(reduce_type);
  // `return <conversion>(<expr>\n) end`: the line break keeps a trailing comment from
  // swallowing the close.
  auto value_function = [&, open = open, close = close](std::string_view part, std::string_view expr,
                                                        std::vector<std::string> params) {
    check_expression(chunk(part), expr);
    return wrapped(chunk(part), fmt::format("function({}) return {}", names(params), open), expr,
                   fmt::format("\n{} end", close), static_cast<int>(params.size()));
  };
  ReductionFunctions r;
  std::vector<std::string> map_params;
  for (const KindParam& p : in) map_params.push_back(p.name);
  map_params.push_back("_j");
  r.map = value_function("map", map_expr, map_params);
  r.reduce = value_function("reduce", reduce_expr, {"a", "b"});
  r.identity = value_function("identity", identity, {});

  std::vector<std::string> post_params = {"a"};
  for (std::size_t k = 0; k < in.size(); ++k)
    if (in_is_scalar[k]) {
      post_params.push_back(in[k].name);
      r.post_inputs.push_back(static_cast<int>(k));
    }
  parse_statements(chunk("post"), post_map_expr);
  std::string head = fmt::format("function({}) {}do ", names(post_params), zero_locals(out, types, in.size(), nullptr));
  r.post = wrapped(chunk("post"), head, post_map_expr, fmt::format("\nend return {} end", out_names(out)),
                   static_cast<int>(post_params.size()));
  for (const KindParam& p : out) r.post.outputs.push_back(p.name);
  return r;
}

namespace {

bool is_fuse_reduction(const Node& n, std::string* op) {
  const auto* call = n.dyn<CallExpr>();
  if (!call) return false;
  const auto* field = call->callee->dyn<FieldExpr>();
  if (!field || !field->object->is<NameExpr>() || field->object->as<NameExpr>().name != "luda") return false;
  const std::string& f = field->field.text;
  if (f != "sum" && f != "max" && f != "min" && f != "prod") return false;
  if (op) *op = f;
  return true;
}

// An axis as written: 2, -1.
std::optional<int> literal_axis(const Expr& e) {
  if (const auto* i = e.dyn<IntegerExpr>()) return static_cast<int>(i->value);
  if (const auto* u = e.dyn<UnaryExpr>(); u && u->op == UnaryOp::Neg)
    if (const auto* i = u->operand->dyn<IntegerExpr>()) return -static_cast<int>(i->value);
  return std::nullopt;
}

}  // namespace

namespace {

// Whether node `n` lies within node `outer` (its source span).
bool within(const Node& n, const Node& outer) { return !(n.loc < outer.loc) && !(outer.end < n.end); }

// The final statement's `return` of `f` when it is one, else nullptr.
const ReturnStat* final_return(const FunctionExpr& f) {
  return f.body->stats.empty() ? nullptr : f.body->stats.back()->dyn<ReturnStat>();
}

// The axes of a fused reduction call as written ({} and false without one).
std::pair<std::vector<int>, bool> fuse_axes(const Ast& ast, const CallExpr& call, const std::string& op) {
  if (call.args.size() < 2) return {{}, false};
  const Expr& axis = *call.args[1];
  std::vector<const Expr*> items;
  if (const auto* t = axis.dyn<TableExpr>()) {
    for (const auto& field : t->fields) {
      if (field.kind != TableExpr::Field::Kind::Positional)
        throw node_error(ast, *field.value, error_kind::type, "an axes table lists axes: {1, 2}");
      items.push_back(field.value);
    }
    if (items.empty()) throw node_error(ast, axis, error_kind::type, "an axes table lists at least one axis: {1, 2}");
  } else {
    items.push_back(&axis);
  }
  std::vector<int> axes;
  for (const Expr* item : items) {
    std::optional<int> a = literal_axis(*item);
    if (!a)
      throw node_error(ast, *item, error_kind::type,
                       fmt::format("the axis of a fused luda.{} must be a literal integer or a table of them "
                                   "({{1, 2}}), known when the function is compiled",
                                   op));
    if (*a == 0)
      throw node_error(ast, *item, error_kind::type, "there is no axis 0: axes are 1-based (1 the first, -1 the last)");
    axes.push_back(*a);
  }
  return {axes, true};
}

std::string axes_text(const std::vector<int>& axes, bool given) {
  if (!given) return "no axis (all of them)";
  if (axes.size() == 1) return fmt::format("axis {}", axes[0]);
  std::string s;
  for (int a : axes) s += (s.empty() ? "" : ", ") + std::to_string(a);
  return "axes {" + s + "}";
}

// The names a function's body declares as locals at its top level: the ones its final
// return can see.
std::vector<std::string> top_level_locals(const FunctionExpr& f) {
  std::vector<std::string> names;
  for (const Stat* st : f.body->stats) {
    if (const auto* l = st->dyn<LocalStat>())
      for (const auto& v : l->vars) names.push_back(v.name.text);
    if (const auto* l = st->dyn<LocalFunctionStat>()) names.push_back(l->name.text);
  }
  return names;
}

}  // namespace

std::vector<const CallExpr*> fuse_reduction_calls(const Ast& ast, const FunctionExpr& function) {
  std::vector<const CallExpr*> calls;
  const ReturnStat* last = final_return(function);
  if (!last) return calls;
  for (int id = 0; id < ast.node_count(); ++id) {
    const Node& n = ast.node(id);
    if (!within(n, *last)) continue;
    if (is_fuse_reduction(n, nullptr)) calls.push_back(&n.as<CallExpr>());
  }
  return calls;
}

FuseShape analyze_fuse(const FunctionSource& function) {
  FoundFunction found = find_function(function);
  const Ast& ast = *found.ast;
  const FunctionExpr& f = *found.function;
  const ReturnStat* last = final_return(f);
  FuseShape shape;
  std::vector<const CallExpr*> calls;
  for (int id = 0; id < ast.node_count(); ++id) {
    const Node& n = ast.node(id);
    std::string op;
    if (!within(n, f) || !is_fuse_reduction(n, &op)) continue;
    if (!last || !within(n, *last))
      throw node_error(ast, n, error_kind::unsupported,
                       fmt::format("luda.{} in a fused function must be in its final return: return luda.{}(expr, "
                                   "axis), or elementwise work on reductions (elementwise work first, then the "
                                   "reductions)",
                                   op, op));
    const auto& call = n.as<CallExpr>();
    if (call.args.empty() || call.args.size() > 2)
      throw source_error(ast.source(), call.open, error_kind::type,
                         fmt::format("a fused luda.{} takes an expression and an optional axis, got {} arguments", op,
                                     call.args.size()),
                         call.span());
    for (const CallExpr* other : calls) {
      const CallExpr* inner = within(n, *other->args[0]) ? &call : within(*other, *call.args[0]) ? other : nullptr;
      if (!inner) continue;
      std::string inner_op;
      is_fuse_reduction(*inner, &inner_op);
      throw node_error(ast, *inner, error_kind::unsupported,
                       fmt::format("luda.{} inside the argument of another reduction needs two passes over the "
                                   "array; fuse the inner reduction alone and pass its value to a second fused "
                                   "function",
                                   inner_op));
    }
    auto [axes, given] = fuse_axes(ast, call, op);
    if (calls.empty()) {
      shape.axes = axes;
      shape.axis_given = given;
    } else if (axes != shape.axes || given != shape.axis_given) {
      const CallExpr& first = *calls.front();
      throw node_error(ast, n, error_kind::unsupported,
                       fmt::format("the reductions of a fused function reduce the same axes: this luda.{} has {}, the "
                                   "luda.{} at {}:{} has {}; use one fused function per axis",
                                   op, axes_text(axes, given), shape.ops.front(), first.loc.line, first.loc.col,
                                   axes_text(shape.axes, shape.axis_given)));
    }
    if (shape.ops.size() == kMaxFusedReductions)
      throw node_error(ast, n, error_kind::unsupported,
                       fmt::format("a fused function carries at most {} reductions; split it into two",
                                   kMaxFusedReductions));
    shape.reduction = true;
    shape.ops.push_back(op);
    calls.push_back(&call);
  }
  if (!shape.reduction) return shape;
  shape.nresults = static_cast<int>(last->values.size());
  if (last->values.size() == 1 && last->values[0] == calls.front()) return shape;  // one bare reduction

  // The post work: the return's values with each reduction a name, at the user's places;
  // and the whole body so, for a second pass.
  const Source& src = ast.source();
  auto named = [&](std::size_t begin, std::size_t stop) {
    std::string text = src.text().substr(begin, stop - begin);
    for (std::size_t k = 0; k < calls.size(); ++k) {
      std::size_t a = src.offset_of(calls[k]->loc) - begin, b = src.offset_of(calls[k]->end) + 1 - begin;
      std::string name = fmt::format("luda_r{}", k + 1);
      for (std::size_t i = a; i < b; ++i)
        if (text[i] != '\n' && text[i] != '\r') text[i] = ' ';
      LUDA_DSL_CHECK(b - a >= name.size());
      text.replace(a, name.size(), name);
    }
    return text;
  };
  const Node& first = *last->values.front();
  const Node& final = *last->values.back();
  shape.post_text = std::string(static_cast<std::size_t>(first.loc.line - 1), '\n') +
                    std::string(static_cast<std::size_t>(first.loc.col - 1), ' ') +
                    named(src.offset_of(first.loc), src.offset_of(final.end) + 1) + "\nend";
  // The body: from the start of the header's line, the header (through its ')') blanked.
  std::size_t line_start = src.offset_of({f.loc.line, 1});
  std::string body = named(line_start, src.offset_of(f.end) + 1);
  std::size_t open = body.find('(', src.offset_of(f.loc) - line_start);
  std::size_t close = open == std::string::npos ? open : body.find(')', open);
  LUDA_DSL_CHECK(close != std::string::npos);
  for (std::size_t i = 0; i <= close; ++i)
    if (body[i] != '\n' && body[i] != '\r') body[i] = ' ';
  shape.body_text = std::string(static_cast<std::size_t>(f.loc.line - 1), '\n') + body;
  // What the post work reads besides the reductions.
  std::vector<std::string> locals = top_level_locals(f);
  shape.value_params.resize(last->values.size());
  for (int id = 0; id < ast.node_count(); ++id) {
    const Node& n = ast.node(id);
    const auto* name = n.dyn<NameExpr>();
    if (!name || !within(n, *last)) continue;
    bool reduced = false;
    for (const CallExpr* c : calls) reduced = reduced || within(n, *c);
    if (reduced) continue;
    std::size_t v = 0;
    while (!within(n, *last->values[v])) ++v;
    if (std::find(locals.begin(), locals.end(), name->name) != locals.end())
      throw node_error(ast, n, error_kind::unsupported,
                       fmt::format("'{}' is a local of the fused function, used after its reductions; write its "
                                   "expression there instead (whether the work after the reductions is per element, "
                                   "and so a second pass, is read from the parameters it uses)",
                                   name->name));
    auto add = [](std::vector<int>& list, int k) {
      if (std::find(list.begin(), list.end(), k) == list.end()) list.push_back(k);
    };
    for (std::size_t k = 0; k < f.params.size(); ++k)
      if (f.params[k].text == name->name) {
        add(shape.post_params, static_cast<int>(k));
        add(shape.value_params[v], static_cast<int>(k));
      }
  }
  return shape;
}

FunctionSource fuse_post_function(const FunctionSource& function, const FuseShape& shape,
                                  const std::vector<std::string>& scalar_params) {
  std::vector<std::string> params;
  for (std::size_t k = 0; k < shape.ops.size(); ++k) params.push_back(fmt::format("luda_r{}", k + 1));
  params.insert(params.end(), scalar_params.begin(), scalar_params.end());
  std::string head = fmt::format("function({}) return ", names(params));
  FunctionSource post;
  post.chunk = std::make_shared<const Chunk>(Chunk{function.chunk->name, head + shape.post_text, head.size()});
  post.nparams = static_cast<int>(params.size());
  return post;
}

FunctionSource fuse_second_pass_function(const FunctionSource& function, const FuseShape& shape,
                                         const std::vector<std::string>& params) {
  std::vector<std::string> all = params;
  for (std::size_t k = 0; k < shape.ops.size(); ++k) all.push_back(fmt::format("luda_r{}", k + 1));
  std::string head = fmt::format("function({}) ", names(all));
  FunctionSource second;
  second.chunk = std::make_shared<const Chunk>(Chunk{function.chunk->name, head + shape.body_text, head.size()});
  second.nparams = static_cast<int>(all.size());
  return second;
}

}  // namespace luda::dsl

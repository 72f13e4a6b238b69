// Inference drives one FunctionTyper per specialization (the kernel, then each device
// function as a call reaches it). A FunctionTyper resolves names once (scopes), then
// types the body in passes until no local's type changes: a local's type is the
// unification of everything assigned to it, and a loop may assign it after it is read.
// Expression rules live in infer_expr.cpp; this file holds statements, names and calls.
#include "dsl/infer.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "dsl/infer_internal.h"
#include "dsl/stack_guard.h"

namespace luda::dsl {

std::string short_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:08x}", static_cast<std::uint32_t>(h ^ (h >> 32)));
}

std::string c_identifier(std::string_view name) {
  std::string id;
  for (char c : name) id += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id.insert(0, "k_");
  if (id.size() > kMaxIdentifier) id = id.substr(0, kMaxIdentifier - 9) + "_" + short_hash(name);
  return id;
}

namespace detail {

// ---------------------------------------------------------------- names

namespace {

// What a Lua local may not be called in the emitted C++: keywords, CUDA's names, and
// every identifier the builtin templates and the prelude use.
bool is_reserved(const std::string& name) {
  static const std::set<std::string> words = [] {
    std::set<std::string> w = {"alignas",       "alignof",
                               "asm",           "auto",
                               "bool",          "case",
                               "catch",         "char",
                               "class",         "const",
                               "constexpr",     "const_cast",
                               "continue",      "decltype",
                               "default",       "delete",
                               "double",        "dynamic_cast",
                               "enum",          "explicit",
                               "export",        "extern",
                               "float",         "friend",
                               "inline",        "int",
                               "long",          "mutable",
                               "namespace",     "new",
                               "noexcept",      "nullptr",
                               "operator",      "private",
                               "protected",     "public",
                               "register",      "reinterpret_cast",
                               "short",         "signed",
                               "sizeof",        "static",
                               "static_assert", "static_cast",
                               "struct",        "switch",
                               "template",      "this",
                               "throw",         "try",
                               "typedef",       "typeid",
                               "typename",      "union",
                               "unsigned",      "using",
                               "virtual",       "void",
                               "volatile",      "wchar_t",
                               "char16_t",      "char32_t",
                               "char8_t",       "concept",
                               "requires",      "co_await",
                               "co_yield",      "co_return",
                               "thread_local",  "compl",
                               "bitand",        "bitor",
                               "xor",           "xor_eq",
                               "and_eq",        "or_eq",
                               "not_eq",        "main",
                               "threadIdx",     "blockIdx",
                               "blockDim",      "gridDim",
                               "warpSize",      "printf",
                               "min",           "max",
                               "signbit",       "atomicCAS",
                               "floor",         "floorf",
                               "fmod",          "fmodf",
                               "pow",           "powf",
                               "log2",          "log2f",
                               "log10",         "log10f",
                               "log",           "logf"};
    // Identifiers of the templates: not members (.x), placeholders ($v0) or {f}.
    for (const Builtin& row : builtin_table()) {
      for (std::string_view t : {row.emit, row.emit_int}) {
        for (std::size_t i = 0; i < t.size();) {
          if (t[i] == '{') {
            i = t.find('}', i) == std::string_view::npos ? t.size() : t.find('}', i) + 1;
          } else if (std::isalpha(static_cast<unsigned char>(t[i])) || t[i] == '_') {
            std::size_t j = i;
            while (j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_')) ++j;
            char before = i ? t[i - 1] : ' ';
            if (before != '.' && before != '$') {
              w.insert(std::string(t.substr(i, j - i)));
              w.insert(std::string(t.substr(i, j - i)) + "f");
            }
            i = j;
          } else {
            ++i;
          }
        }
      }
    }
    return w;
  }();
  return words.count(name) || name.rfind("luda", 0) == 0 || name.rfind("__", 0) == 0 || name.rfind("LUDA", 0) == 0;
}

}  // namespace

// Scopes: gives every local a Variable and every Name read its local (or none: from outside).
class Resolver {
 public:
  Resolver(TypedFunction& tf, std::vector<int>& name_var) : tf_(tf), name_var_(name_var) {}

  void function(const FunctionExpr& f) {
    open();
    for (const Name& p : f.params) declare(p, true);
    block(*f.body);
    close();
  }

 private:
  void open() { scopes_.emplace_back(); }
  void close() { scopes_.pop_back(); }

  int declare(const Name& n, bool param = false) {
    Variable v;
    v.name = n.text;
    v.decl = n.loc;
    v.is_param = param;
    int seen = ++seen_[n.text];
    v.c_name = seen == 1 ? n.text : fmt::format("{}_{}", n.text, seen);
    if (is_reserved(v.c_name)) v.c_name += "_";
    tf_.vars.push_back(std::move(v));
    int index = static_cast<int>(tf_.vars.size()) - 1;
    scopes_.back().push_back({n.text, index});
    return index;
  }

  int lookup(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      for (auto v = s->rbegin(); v != s->rend(); ++v)
        if (v->first == name) return v->second;
    return -1;
  }

  void block(const Block& b, bool scoped = true) {
    if (scoped) open();
    for (const Stat* s : b.stats) stat(*s);
    if (scoped) close();
  }

  void stat(const Stat& s) {
    if (stack_low()) throw node_error(*tf_.ast, s, error_kind::unsupported, kStackLowMessage);
    switch (s.kind) {
      case NodeKind::Local: {
        const auto& l = s.as<LocalStat>();
        for (const Expr* e : l.values) expr(*e);
        auto& vars = tf_.declared[s.id];
        for (const auto& v : l.vars) vars.push_back(declare(v.name));
        break;
      }
      case NodeKind::Assign: {
        const auto& a = s.as<AssignStat>();
        for (const Expr* e : a.values) expr(*e);
        for (const Expr* t : a.targets) {
          expr(*t);
          if (const auto* n = t->dyn<NameExpr>(); n && name_var_[n->id] >= 0)
            ++tf_.vars[static_cast<std::size_t>(name_var_[n->id])].assignments;
        }
        break;
      }
      case NodeKind::CallStat: expr(*s.as<CallStat>().call); break;
      case NodeKind::Do: block(*s.as<DoStat>().body); break;
      case NodeKind::While:
        expr(*s.as<WhileStat>().cond);
        block(*s.as<WhileStat>().body);
        break;
      case NodeKind::Repeat: {
        // The condition sees the body's locals.
        const auto& r = s.as<RepeatStat>();
        open();
        block(*r.body, false);
        expr(*r.cond);
        close();
        break;
      }
      case NodeKind::If: {
        const auto& i = s.as<IfStat>();
        for (const auto& c : i.clauses) {
          expr(*c.cond);
          block(*c.body);
        }
        if (i.else_body) block(*i.else_body);
        break;
      }
      case NodeKind::NumericFor: {
        const auto& f = s.as<NumericForStat>();
        expr(*f.start);
        expr(*f.limit);
        if (f.step) expr(*f.step);
        open();
        int v = declare(f.var);
        tf_.vars[static_cast<std::size_t>(v)].is_loop_var = true;
        tf_.declared[s.id].push_back(v);
        block(*f.body);
        close();
        break;
      }
      case NodeKind::Return:
        for (const Expr* e : s.as<ReturnStat>().values) expr(*e);
        break;
      default: break;  // rejected by the typer at their own line
    }
  }

  // Every name in `root` (one statement's scope: the order does not matter), with a work
  // list rather than recursion: chains of thousands of operators are ordinary.
  void expr(const Expr& root) {
    std::vector<const Expr*> work{&root};
    while (!work.empty()) {
      const Expr& e = *work.back();
      work.pop_back();
      if (e.is<NameExpr>()) name_var_[e.id] = lookup(e.as<NameExpr>().name);
      push_children(e, work);
    }
  }

  TypedFunction& tf_;
  std::vector<int>& name_var_;
  std::vector<std::vector<std::pair<std::string, int>>> scopes_;
  std::map<std::string, int> seen_;
};

// ---------------------------------------------------------------- the passes

FunctionTyper::FunctionTyper(Inference& inf, TypedFunction& tf, FunctionHandle handle)
    : inf_(inf), tf_(tf), handle_(handle) {}

void FunctionTyper::run() {
  const FunctionExpr& f = *tf_.function;
  if (f.is_vararg)
    throw error_at(f.loc, error_kind::unsupported, "varargs ('...') are not supported in kernels and device functions");
  name_var_.assign(static_cast<std::size_t>(tf_.ast->node_count()), -1);
  Resolver(tf_, name_var_).function(f);
  for (std::size_t i = 0; i < tf_.params.size(); ++i) {
    Variable& v = tf_.vars[i];
    v.type = tf_.params[i];
    v.has_type = true;
    v.type_origin = v.decl;
  }
  mark_outputs(f);
  // Each pass may only widen local types, so this ends; the bound guards the invariant.
  for (int pass = 0;; ++pass) {
    LUDA_DSL_CHECK(pass < 64);
    changed_ = false;
    saw_unknown_ = false;
    result_seen_ = false;
    tf_.exprs.assign(static_cast<std::size_t>(tf_.ast->node_count()), ExprInfo{});
    tf_.weak_int_uses.clear();  // noted again by each pass, with its types
    block(*f.body);
    if (changed_) continue;
    if (!saw_unknown_) break;
    final_ = true;  // one more pass, in which reading an untyped local is the error
  }
  if (!result_seen_) tf_.result = Type::void_();
  if (!tf_.is_kernel && tf_.result.kind != Type::Kind::Void) check_returns(f);
}

namespace {

// Whether `b` can complete normally (control reaches the statement after it), and if so
// how, for the error: "when the 'if' at line 3 takes none of its branches".
std::optional<std::string> falls_through(const Block& b);

bool is_constant(const Expr& e, bool value) {
  const Expr* x = &e;
  while (const auto* p = x->dyn<ParenExpr>()) x = p->inner;
  return value ? x->is<TrueExpr>() : x->is<FalseExpr>();
}

// Whether a `break` in `b` (not inside a nested loop) leaves the loop `b` is the body of.
bool breaks(const Block& b) {
  for (const Stat* s : b.stats) {
    switch (s->kind) {
      case NodeKind::Break: return true;
      case NodeKind::Do:
        if (breaks(*s->as<DoStat>().body)) return true;
        break;
      case NodeKind::If: {
        const auto& i = s->as<IfStat>();
        for (const auto& c : i.clauses)
          if (breaks(*c.body)) return true;
        if (i.else_body && breaks(*i.else_body)) return true;
        break;
      }
      default: break;  // loops: their breaks are their own
    }
  }
  return false;
}

std::optional<std::string> stat_falls_through(const Stat& s) {
  switch (s.kind) {
    case NodeKind::Return: return std::nullopt;
    case NodeKind::Do: return falls_through(*s.as<DoStat>().body);
    case NodeKind::If: {
      const auto& i = s.as<IfStat>();
      for (const auto& c : i.clauses)
        if (auto how = falls_through(*c.body)) return how;
      if (!i.else_body)
        return fmt::format("when the 'if' at line {} takes none of its branches (it has no 'else')", s.loc.line);
      return falls_through(*i.else_body);
    }
    case NodeKind::While: {
      // `while true do ... end` without a break never ends but by returning.
      const auto& w = s.as<WhileStat>();
      if (is_constant(*w.cond, true) && !breaks(*w.body)) return std::nullopt;
      return fmt::format("after the 'while' loop at line {}", s.loc.line);
    }
    case NodeKind::Repeat: {
      const auto& r = s.as<RepeatStat>();
      if (is_constant(*r.cond, false) && !breaks(*r.body)) return std::nullopt;
      return fmt::format("after the 'repeat' loop at line {}", s.loc.line);
    }
    case NodeKind::NumericFor: return fmt::format("after the 'for' loop at line {}", s.loc.line);
    default: return fmt::format("after line {}", s.end.line);
  }
}

std::optional<std::string> falls_through(const Block& b) {
  if (b.stats.empty()) return fmt::format("through the empty block at line {}", b.loc.line);
  for (const Stat* s : b.stats) {
    if (stack_low()) return std::nullopt;  // too deep to tell: C++'s `return {}` stands
    std::optional<std::string> how = stat_falls_through(*s);
    if (!how) return std::nullopt;  // this statement never completes: nothing after it runs
    if (s == b.stats.back()) return how;
  }
  return std::nullopt;
}

}  // namespace

// A device function that returns a value on one path must return one on every path: Lua
// would give nil where control reaches the end, which a kernel cannot hold (C++ compilers
// say "control reaches end of non-void function").
void FunctionTyper::check_returns(const FunctionExpr& f) {
  std::optional<std::string> how = falls_through(*f.body);
  if (!how) return;
  Location at{f.end.line, std::max(1, f.end.col - 2)};  // the closing `end`
  throw error_at(at, error_kind::type,
                 fmt::format("'{}' returns a value (line {}) but can reach its end without one, {}: return a "
                             "value on that path too (Lua would return nil, which a kernel cannot hold)",
                             tf_.lua_name, result_origin_.line, *how));
}

FunctionTyper::Nesting::Nesting(FunctionTyper& typer, const Node& at) : typer_(typer) {
  if (typer_.inf_.depth >= kMaxTypingDepth)
    throw typer_.error_node(at, error_kind::unsupported,
                            fmt::format("nested too deeply: more than {} levels of expressions, statements and "
                                        "device function calls (move parts into locals or functions)",
                                        kMaxTypingDepth));
  if (stack_low()) throw typer_.error_node(at, error_kind::unsupported, kStackLowMessage);
  ++typer_.inf_.depth;
}

SourceError FunctionTyper::error_at(Location at, std::string_view kind, std::string_view message,
                                    std::optional<Span> range) const {
  return source_error(tf_.ast->source(), at, kind, message, range);
}

SourceError FunctionTyper::error_node(const Node& n, std::string_view kind, std::string_view message) const {
  return node_error(*tf_.ast, n, kind, message);
}

void FunctionTyper::block(const Block& b) {
  for (const Stat* s : b.stats) stat(*s);
}

void FunctionTyper::condition(const Expr& cond) { condition_rule(cond, value(cond)); }

void FunctionTyper::condition_rule(const Expr& cond, const ExprInfo& c) {
  if (c.unknown) return;
  if (!c.type.is_bool())
    throw error_node(cond, error_kind::type,
                     fmt::format("a condition must be a bool, got {} (in Lua every number is true: "
                                 "compare it, e.g. x ~= 0)",
                                 c.type.str()));
}

void FunctionTyper::stat(const Stat& s) {
  Nesting level(*this, s);
  switch (s.kind) {
    case NodeKind::Local: local_stat(s.as<LocalStat>()); break;
    case NodeKind::Assign: assign_stat(s.as<AssignStat>()); break;
    case NodeKind::CallStat: expr(*s.as<CallStat>().call); break;
    case NodeKind::Do: block(*s.as<DoStat>().body); break;
    case NodeKind::While:
      condition(*s.as<WhileStat>().cond);
      block(*s.as<WhileStat>().body);
      break;
    case NodeKind::Repeat:
      block(*s.as<RepeatStat>().body);
      condition(*s.as<RepeatStat>().cond);
      break;
    case NodeKind::If: {
      const auto& i = s.as<IfStat>();
      for (const auto& c : i.clauses) {
        condition(*c.cond);
        block(*c.body);
      }
      if (i.else_body) block(*i.else_body);
      break;
    }
    case NodeKind::NumericFor: numeric_for(s.as<NumericForStat>()); break;
    case NodeKind::Return: return_stat(s.as<ReturnStat>()); break;
    case NodeKind::Break: break;
    default: unsupported_stat(s);
  }
}

void FunctionTyper::unsupported_stat(const Stat& s) {
  switch (s.kind) {
    case NodeKind::GenericFor:
      throw error_at(s.loc, error_kind::unsupported,
                     "the generic for (for k, v in ...) is not supported in kernels: use a numeric for");
    case NodeKind::FunctionStat:
    case NodeKind::LocalFunction:
      throw error_at(s.loc, error_kind::unsupported,
                     "functions cannot be defined inside a kernel: define it outside, where the "
                     "kernel calls it as a device function");
    case NodeKind::Goto:
    case NodeKind::Label:
      throw error_at(s.loc, error_kind::unsupported, "goto and labels are not supported in kernels");
    default: throw error_at(s.loc, error_kind::unsupported, "this statement is not supported in kernels");
  }
}

// The values of a `local` or an assignment, one per target: Lua's adjustment, where a
// call last in the list gives all its values and the rest are nil.
std::vector<FunctionTyper::Slot> FunctionTyper::values_for(const std::vector<const Expr*>& values,
                                                           std::size_t targets) {
  std::vector<Slot> slots;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Expr& e = *values[i];
    bool last = i + 1 == values.size();
    const ExprInfo& info = last ? expr(e) : value(e);
    if (last && info.type.kind == Type::Kind::Tuple) {
      for (std::size_t k = 0; k < info.type.elements.size(); ++k)
        slots.push_back({&e, static_cast<int>(k), info.type.elements[k], info.unknown});
    } else if (last && (e.is<CallExpr>() || e.is<MethodCallExpr>()) && info.type.kind == Type::Kind::Void &&
               info.symbol.kind == Symbol::Kind::None && !info.unknown && targets > i) {
      throw error_node(e, error_kind::type, "this call returns no value");
    } else {
      slots.push_back({&e, -1, info.type, info.unknown});
    }
  }
  return slots;
}

// What a GPU allows, so that a kernel that runs on the cpu device runs on a GPU too:
// static shared arrays of a block take at most 48 KiB (ptxas refuses more: larger shared
// memory must be dynamic), and one thread's local memory is at most 512 KiB.
constexpr long long kMaxStaticShared = 48 * 1024;
constexpr long long kMaxLocal = 512 * 1024;

void FunctionTyper::check_allocation_size(const Variable& v, const Type& type, const Expr& at) {
  if (v.alloc != Builtin::Alloc::Shared && v.alloc != Builtin::Alloc::Local) return;
  auto bytes_of = [&](const std::vector<long long>& shape, Scalar scalar) {
    long long n = std::max(scalar_bits(scalar) / 8, 1);
    for (long long e : shape)
      if (e < 0 || __builtin_mul_overflow(n, e, &n)) return LLONG_MAX;
    return n;
  };
  long long bytes = bytes_of(v.shape, type.scalar);
  long long total = bytes;  // with the function's other arrays of the same kind
  for (const Variable& other : tf_.vars)
    if (&other != &v && other.alloc == v.alloc && other.has_type)
      total = total > LLONG_MAX - bytes_of(other.shape, other.type.scalar)
                  ? LLONG_MAX
                  : total + bytes_of(other.shape, other.type.scalar);
  auto shown = [](long long n) {
    return n == LLONG_MAX ? std::string("more than 2^63 bytes") : fmt::format("{} bytes", n);
  };
  if (v.alloc == Builtin::Alloc::Shared && total > kMaxStaticShared)
    throw error_node(at, error_kind::type,
                     fmt::format("cuda.shared.array: the function's shared arrays take {}{}; a GPU block has at most "
                                 "{} bytes (48 KiB) of static shared memory: use cuda.shared.dynamic for more (up to "
                                 "227 KiB, sized at launch)",
                                 shown(total),
                                 total == bytes ? "" : fmt::format(" ({} of them this one)", shown(bytes)),
                                 kMaxStaticShared));
  if (v.alloc == Builtin::Alloc::Local && total > kMaxLocal)
    throw error_node(at, error_kind::type,
                     fmt::format("cuda.local_array: the function's local arrays take {}{}; a GPU thread has at most "
                                 "{} bytes (512 KiB) of local memory: use an array argument (global memory)",
                                 shown(total),
                                 total == bytes ? "" : fmt::format(" ({} of them this one)", shown(bytes)), kMaxLocal));
}

void FunctionTyper::local_stat(const LocalStat& l) {
  const auto& vars = tf_.declared.at(l.id);
  for (const auto& v : l.vars)
    if (v.attrib == LocalStat::Attrib::Close)
      throw error_at(v.name.loc, error_kind::unsupported,
                     "to-be-closed variables (<close>) are not supported in kernels");
  // An allocation initializes exactly one local.
  for (std::size_t i = 0; i < l.values.size(); ++i) {
    const Builtin* alloc = allocation(*l.values[i]);
    if (!alloc) continue;
    if (l.values.size() != 1 || l.vars.size() != 1)
      throw error_node(*l.values[i], error_kind::type,
                       fmt::format("{} must be the only value of its own local: local a = {}(...)", alloc->name,
                                   alloc->name));
  }
  std::vector<Slot> slots = values_for(l.values, vars.size());
  for (std::size_t i = 0; i < vars.size(); ++i) {
    Variable& v = var(vars[i]);
    if (i >= slots.size()) continue;  // nil: typed by later assignments
    const Slot& slot = slots[i];
    const ExprInfo& info = tf_.info(*slot.expr);
    if (const Builtin* alloc = allocation(*slot.expr)) {
      v.alloc = alloc->alloc;
      v.shape = info.builtin_typing.shape;
      if (alloc->alloc == Builtin::Alloc::DynamicShared) inf_.program.dynamic_shared = true;
      check_allocation_size(v, info.type, *slot.expr);
    }
    bool compile_time = slot.element < 0 && (info.constant || info.symbol.kind != Symbol::Kind::None);
    if (compile_time && v.assignments == 0) {
      v.is_alias = true;
      v.constant = info.constant;
      v.symbol = info.symbol;
      if (info.symbol.kind == Symbol::Kind::String)
        throw error_node(*slot.expr, error_kind::unsupported,
                         "strings are not values in kernels (only print's text and dtype names)");
    }
    if (info.symbol.kind != Symbol::Kind::None && !v.is_alias)
      throw error_node(*slot.expr, error_kind::type,
                       fmt::format("local '{}' is assigned again later, so it must hold a value; {} is not one", v.name,
                                   describe(info)));
    if (info.symbol.kind == Symbol::Kind::None) assign(v, slot.type, slot.unknown, slot.expr->loc);
    if (slot.element < 0 && v.assignments == 0) v.copy_of_param = weak_param_of(info);
    if (slot.element < 0 && v.has_type) note_local_store(v, info, *slot.expr);
  }
}

// The generated head declares a kind's outputs: parameters, and locals of the function's
// own block (the body is a `do` block after them, so a local of the same name there is
// the user's own).
void FunctionTyper::mark_outputs(const FunctionExpr& f) {
  auto is_output = [&](const Variable& v) {
    return std::find(tf_.outputs.begin(), tf_.outputs.end(), v.name) != tf_.outputs.end();
  };
  for (std::size_t i = 0; i < tf_.params.size(); ++i)
    if (is_output(tf_.vars[i])) tf_.vars[i].is_output = true;
  for (const Stat* s : f.body->stats)
    if (s->is<LocalStat>())
      for (int index : tf_.declared.at(s->id))
        if (is_output(var(index))) var(index).is_output = true;
}

void FunctionTyper::assign_stat(const AssignStat& a) {
  std::vector<Slot> slots = values_for(a.values, a.targets.size());
  for (std::size_t i = 0; i < a.targets.size(); ++i) {
    const Expr& target = *a.targets[i];
    if (i >= slots.size())
      throw error_node(target, error_kind::type, "nothing is assigned to this target (nil is not a kernel value)");
    const Slot& slot = slots[i];
    const ExprInfo& src = tf_.info(*slot.expr);
    if (src.symbol.kind != Symbol::Kind::None)
      throw error_node(*slot.expr, error_kind::type,
                       fmt::format("{} is not a value: it cannot be assigned", describe(src)));
    if (allocation(*slot.expr))
      throw error_node(*slot.expr, error_kind::type, "an array allocation must initialize a local: local a = ...");
    if (const auto* n = target.dyn<NameExpr>()) {
      int index = name_var_[n->id];
      if (index < 0)
        throw error_node(target, error_kind::type,
                         fmt::format("cannot assign to '{}': upvalues and globals are read-only inside a kernel "
                                     "(declare a local, or write into an array)",
                                     n->name));
      tf_.exprs[static_cast<std::size_t>(n->id)].var = index;
      if (var(index).is_output && var(index).has_type) {
        if (!slot.unknown) convertible(slot.type, var(index).type, *slot.expr, "store", &src);
        continue;
      }
      assign(var(index), slot.type, slot.unknown, target.loc);
      if (slot.element < 0 && var(index).has_type) note_local_store(var(index), src, *slot.expr);
    } else if (target.is<IndexExpr>()) {
      store(target.as<IndexExpr>(), slot, target.loc);
    } else {
      throw error_node(target, error_kind::type, "only locals and array elements can be assigned in a kernel");
    }
  }
}

void FunctionTyper::store(const IndexExpr& target, const Slot& slot, Location) {
  const ExprInfo& t = expr(target);
  if (t.unknown || slot.unknown) return;
  const ExprInfo& object = tf_.info(*target.object);
  if (object.type.kind != Type::Kind::Array)
    throw error_node(target, error_kind::type,
                     fmt::format("only array elements can be assigned, not an element of {}", describe(object)));
  if (t.type.kind == Type::Kind::Array)
    throw error_node(target, error_kind::type,
                     fmt::format("this is a {}-d row of the array: index every dimension, a[i][j] = v", t.type.ndim));
  convertible(slot.type, t.type, *slot.expr, "store", &tf_.info(*slot.expr));
}

// `value` converts to `to` (stores into an array element or a kind's output): numbers and
// bools to one another, as NumPy converts (true is 1, a number is true when it is not 0;
// NaN is true), arrays only to the same array type; a weak constant must fit.
void FunctionTyper::convertible(const Type& value, const Type& to, const Expr& at, std::string_view what,
                                const ExprInfo* info) {
  bool ok = ((value.is_number() || value.is_bool()) && (to.is_number() || to.is_bool())) ||
            (value.kind == Type::Kind::Array && value == to);
  if (!ok) throw error_node(at, error_kind::type, fmt::format("cannot {} {} as {}", what, value.str(), to.str()));
  if (info && info->constant && value.weak && value.is_number() && to.is_int() &&
      !constant_fits(*info->constant, value.scalar, to.scalar))
    throw error_node(at, error_kind::type,
                     fmt::format("the constant {} does not fit {}", constant_text(*info->constant, value.scalar),
                                 scalar_name(to.scalar)));
  if (info) note_weak_use(*info, to, fmt::format("{}:{}", tf_.ast->source().name(), at.loc.line));
}

// A local holds one type, which the last pass knows: a weak integer parameter stored in a
// local of a narrower integer type is converted to it (`local m = n` then `m = x[i]`).
void FunctionTyper::note_local_store(const Variable& v, const ExprInfo& value, const Expr& at) {
  note_weak_use(value, v.type, fmt::format("{}:{}", tf_.ast->source().name(), at.loc.line));
}

void FunctionTyper::assign(Variable& v, const Type& t, bool unknown, Location where) {
  if (unknown) return;
  if (v.is_alias) {
    // Declared once and never assigned again (counted by the resolver): this is the declaration.
    if (!v.has_type && v.symbol.kind == Symbol::Kind::None) {
      v.type = t;
      v.has_type = true;
      v.type_origin = where;
      changed_ = true;
    }
    return;
  }
  if (t.kind == Type::Kind::Void || t.kind == Type::Kind::Tuple)
    throw error_at(where, error_kind::type, fmt::format("local '{}' cannot hold {}", v.name, t.str()));
  if (v.is_param) {
    // A number parameter is a local whose first value is the argument: its type unifies
    // everything assigned to it (an int8 argument assigned a float32 becomes a float32,
    // as Numba types a variable); codegen converts the argument on entry.
    bool numbers = t.is_number() && v.type.is_number();
    bool ok = numbers || (t.is_bool() && v.type.is_bool()) || t == v.type;
    if (!ok)
      throw error_at(where, error_kind::type,
                     fmt::format("parameter '{}' is {}; it cannot be assigned {}", v.name, v.type.str(), t.str()));
    if (numbers) {
      std::optional<Type> unified = promote(v.type, t);
      if (unified && *unified != v.type) {
        v.type = *unified;
        changed_ = true;
      }
    }
    return;
  }
  Type incoming = t;
  if (v.is_loop_var && incoming.is_int()) incoming.weak = false;
  if (!v.has_type) {
    v.type = incoming;
    v.has_type = true;
    v.type_origin = where;
    changed_ = true;
    return;
  }
  if (v.type == incoming) return;
  std::optional<Type> unified;
  if (v.type.kind == Type::Kind::Array || incoming.kind == Type::Kind::Array) {
    if (v.type.kind == Type::Kind::Array && incoming.kind == Type::Kind::Array && v.type.scalar == incoming.scalar &&
        v.type.ndim == incoming.ndim) {
      unified = v.type;
      unified->c_contiguous = v.type.c_contiguous && incoming.c_contiguous;
    }
  } else {
    unified = promote(v.type, incoming);
  }
  if (!unified)
    throw error_at(where, error_kind::type,
                   fmt::format("local '{}' is {} (line {}) and cannot also hold {}", v.name, v.type.str(),
                               v.type_origin.line, incoming.str()));
  if (*unified != v.type) {
    v.type = *unified;
    changed_ = true;
  }
}

void FunctionTyper::numeric_for(const NumericForStat& f) {
  numeric_for_head(f);
  block(*f.body);
}

void FunctionTyper::numeric_for_head(const NumericForStat& f) {
  const ExprInfo& start = value(*f.start);
  const ExprInfo& limit = value(*f.limit);
  ExprInfo one;
  one.type = Type::scalar_of(Scalar::Int64, true);
  one.constant = Constant::of_int(1);
  const ExprInfo& step = f.step ? value(*f.step) : one;
  Variable& v = var(tf_.declared.at(f.id)[0]);
  if (start.unknown || limit.unknown || step.unknown) {
    saw_unknown_ = true;
  } else {
    const Expr* parts[] = {f.start, f.limit, f.step};
    const ExprInfo* infos[] = {&start, &limit, &step};
    for (int i = 0; i < 3; ++i)
      if (!infos[i]->type.is_real())
        throw error_node(parts[i] ? *parts[i] : static_cast<const Expr&>(*f.start), error_kind::type,
                         fmt::format("'for' {} must be a real number, got {}",
                                     i == 0   ? "initial value"
                                     : i == 1 ? "limit"
                                              : "step",
                                     describe(*infos[i])));
    if (step.constant && ((step.constant->kind == Constant::Kind::Int && step.constant->i == 0) ||
                          (step.constant->kind == Constant::Kind::Float && step.constant->f == 0)))
      throw error_node(*f.step, error_kind::type, "'for' step is zero");
    // Lua 5.4: an integer loop when the start and the step are integers (a float limit is
    // floored), else a float loop.
    Type t;
    if (start.type.is_int() && step.type.is_int()) {
      t = *promote(start.type, step.type);
      if (limit.type.is_int()) t = *promote(t, limit.type);
    } else {
      t = *promote(*promote(start.type, limit.type), step.type);
      if (!t.is_floating()) t = Type::scalar_of(Scalar::Float64, t.weak);
      // A 16-bit float counter counts in float32 (each step rounded to float16 would stall).
      if (is_half(t.scalar)) t = Type::scalar_of(Scalar::Float32, t.weak);
    }
    // An integer counter is strong (it must not be narrowed into a neighbour's int32); a
    // float loop over literals stays weak, so it does not pull float32 work into float64.
    if (t.is_int()) t.weak = false;
    assign(v, t, false, f.var.loc);
    ExprInfo& loop = tf_.exprs[static_cast<std::size_t>(f.id)];
    loop.type = v.type;
  }
}

void FunctionTyper::return_stat(const ReturnStat& r) {
  // fuse: the return gives its reductions' element values (the template reduces them).
  const std::vector<const Expr*>& values = &r == tf_.fused.stat ? tf_.fused.values : r.values;
  std::vector<Slot> slots = values_for(values, values.size());
  if (tf_.is_kernel) {
    if (!slots.empty())
      throw error_node(*r.values[0], error_kind::type,
                       "a kernel returns nothing: write its results into an output array");
    return;
  }
  for (const Slot& s : slots)
    if (s.unknown) return;
  Type result;
  if (slots.size() == 1) {
    result = slots[0].type;
  } else if (!slots.empty()) {
    result.kind = Type::Kind::Tuple;
    for (const Slot& s : slots) result.elements.push_back(s.type);
  }
  for (const Slot& s : slots) {
    const ExprInfo& info = tf_.info(*s.expr);
    if (info.symbol.kind != Symbol::Kind::None && s.element < 0)
      throw error_node(*s.expr, error_kind::type,
                       fmt::format("a device function returns values; {} is not one", describe(info)));
    if (s.type.kind == Type::Kind::Array)
      throw error_node(*s.expr, error_kind::type,
                       "a device function cannot return an array (write into one passed as an argument)");
  }
  // The values convert to the result type, which is final in the last pass (when no
  // return changes it), whose notes are the ones kept.
  bool tuple = tf_.result.kind == Type::Kind::Tuple;
  std::size_t count = tuple ? tf_.result.elements.size() : 1;
  for (std::size_t i = 0; i < slots.size() && has_result_ && slots.size() == count; ++i) {
    const Type& to = tuple ? tf_.result.elements[i] : tf_.result;
    if (slots[i].element < 0)
      note_weak_use(tf_.info(*slots[i].expr), to,
                    fmt::format("{}:{}", tf_.ast->source().name(), slots[i].expr->loc.line));
  }
  Location where = values.empty() ? r.loc : values[0]->loc;
  if (!result_seen_ && !has_result_) {
    tf_.result = result;
    result_origin_ = where;
    has_result_ = true;
    changed_ = true;
  } else if (tf_.result != result) {
    std::optional<Type> unified;
    if (result.kind == Type::Kind::Scalar && tf_.result.kind == Type::Kind::Scalar) {
      unified = promote(tf_.result, result);
    } else if (result.kind == Type::Kind::Tuple && tf_.result.kind == Type::Kind::Tuple &&
               result.elements.size() == tf_.result.elements.size()) {
      unified = tf_.result;
      for (std::size_t i = 0; i < result.elements.size() && unified; ++i) {
        auto e = promote(tf_.result.elements[i], result.elements[i]);
        if (e) unified->elements[i] = *e;
        else unified.reset();
      }
    }
    if (!unified)
      throw error_at(where, error_kind::type,
                     fmt::format("this returns {} but line {} returns {}; every return must give the same "
                                 "number of values of compatible types",
                                 result.str(), result_origin_.line, tf_.result.str()));
    if (*unified != tf_.result) {
      tf_.result = *unified;
      changed_ = true;
    }
  }
  result_seen_ = true;
}

const Builtin* FunctionTyper::allocation(const Expr& e) const {
  const ExprInfo& info = tf_.info(e);
  if (info.builtin && info.builtin->alloc != Builtin::Alloc::None) return info.builtin;
  return nullptr;
}

Variable& FunctionTyper::var(int index) { return tf_.vars.at(static_cast<std::size_t>(index)); }

}  // namespace detail
}  // namespace luda::dsl

namespace luda::dsl {

std::vector<const TypedFunction*> reachable_functions(const TypedProgram& program) {
  std::vector<const TypedFunction*> order;
  std::vector<char> seen(program.functions.size(), 0);
  // Post-order from the kernel: callees first.
  auto visit = [&](auto&& self, std::size_t index) -> void {
    if (seen[index]) return;
    seen[index] = 1;
    for (const ExprInfo& info : program.functions[index]->exprs)
      if (info.callee >= 0) self(self, static_cast<std::size_t>(info.callee));
    order.push_back(program.functions[index].get());
  };
  visit(visit, program.functions.size() - 1);
  return order;
}

namespace {

// A kernel or a kinds' device function: the root of a program, typed for `args`.
TypedProgram infer_root(const FoundFunction& root, FunctionHandle handle, const std::string& name,
                        const std::vector<Type>& args, const KernelOptions& options, Environment& env, bool is_kernel,
                        const FusedReturn* fused, const std::vector<std::string>& outputs,
                        const std::vector<std::shared_ptr<const Chunk>>* link) {
  detail::Inference inf{env, options, {}, {}, {}, {}, {}};
  inf.is_kernel = is_kernel;
  inf.link = link;
  auto tf = std::make_unique<TypedFunction>();
  tf->ast = root.ast;
  tf->function = root.function;
  tf->is_kernel = is_kernel;
  tf->outputs = outputs;
  tf->lua_name = name.empty() ? (is_kernel ? "kernel" : "fn") : name;
  tf->params = args;
  if (fused) tf->fused = *fused;
  const FunctionExpr& f = *root.function;
  if (f.nparams() != static_cast<int>(args.size())) {
    std::string message = is_kernel
                              ? fmt::format("kernel '{}' takes {} argument{}, got {}", tf->lua_name, f.nparams(),
                                            f.nparams() == 1 ? "" : "s", args.size())
                              : fmt::format("'{}' takes {} parameter{}, got {} argument{}", tf->lua_name, f.nparams(),
                                            f.nparams() == 1 ? "" : "s", args.size(), args.size() == 1 ? "" : "s");
    throw source_error(root.ast->source(), f.loc, error_kind::type, message);
  }
  for (const Type& t : args) LUDA_DSL_CHECK(t.kind == Type::Kind::Scalar || t.kind == Type::Kind::Array);
  std::string base = c_identifier(tf->lua_name);
  if (is_kernel) {
    std::string key;
    for (const Type& t : args) key += t.str() + (t.weak ? "~," : ",");
    key += fmt::format("|{}{}{}{}|{}", options.boundscheck, options.fastmath, options.debug, options.noalias,
                       kPreludeVersion);
    tf->c_name = base + "_" + short_hash(key);
  } else {
    tf->c_name = base;
  }
  std::string identity = fmt::format("{}:{}-{}@{}", root.ast->source().name(), f.line_defined, f.last_line_defined,
                                     handle);
  inf.in_progress.push_back(identity);
  inf.in_progress_names.push_back(tf->lua_name);
  detail::FunctionTyper(inf, *tf, handle).run();
  inf.program.functions.push_back(std::move(tf));
  inf.program.uses_bounds = options.boundscheck;
  return std::move(inf.program);
}

}  // namespace

TypedProgram infer_kernel(const FoundFunction& kernel, FunctionHandle handle, const std::string& name,
                          const std::vector<Type>& args, const KernelOptions& options, Environment& env,
                          const std::vector<std::shared_ptr<const Chunk>>& link) {
  return infer_root(kernel, handle, name, args, options, env, true, nullptr, {}, &link);
}

TypedProgram infer_device_function(const FoundFunction& root, FunctionHandle handle, const std::string& name,
                                   const std::vector<Type>& params, const KernelOptions& options, Environment& env,
                                   const FusedReturn* fused, const std::vector<std::string>& outputs) {
  return infer_root(root, handle, name, params, options, env, false, fused, outputs, nullptr);
}

}  // namespace luda::dsl

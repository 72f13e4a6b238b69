// The inference pass's own classes, shared by infer.cpp (statements, names, passes) and
// infer_expr.cpp (expressions, calls, externals). Not used outside the pass.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "dsl/infer.h"
#include "dsl/stack_guard.h"

namespace luda::dsl::detail {

// The whole program being typed: the specializations made so far and the externals read.
struct Inference {
  Environment& env;
  KernelOptions options;
  TypedProgram program;
  std::map<std::string, int> specializations;  // key -> program.functions index
  std::vector<std::string> in_progress;        // identities of the functions being typed
  std::vector<std::string> in_progress_names;  // their Lua names, for recursion errors
  std::map<std::pair<FunctionHandle, std::string>, const ExternalValue*> lookups;
  int depth = 0;          // levels of FunctionTyper recursion now open, across device functions
  bool is_kernel = true;  // typing a cuda.jit kernel (not a kind's element function)
  const std::vector<std::shared_ptr<const Chunk>>* link = nullptr;  // the kernel's linked sources

  const ExternalValue& lookup(FunctionHandle fn, const std::string& name);
  const ExternalValue& keep(ExternalValue v) { return program.externals.emplace_back(std::move(v)); }
};

// How deep typing may recurse (expressions, statements and device function calls, counted
// together across the device functions a kernel reaches): past it, a located error.
// Left-associative chains do not count (they are typed in a loop). The parser's limit
// (200 levels per chunk) keeps a function's own nesting to at most twice that here, so
// what stops here is a long suffix chain (a.b.c...) or device functions calling each
// other hundreds deep. The stack guard (dsl/stack_guard.h) stops it sooner on a small
// thread stack.
inline constexpr int kMaxTypingDepth = 1000;

class FunctionTyper {
 public:
  FunctionTyper(Inference& inf, TypedFunction& tf, FunctionHandle handle);
  void run();

 private:
  // One level of recursion, held while a node is typed.
  class Nesting {
   public:
    Nesting(FunctionTyper& typer, const Node& at);
    ~Nesting() { --typer_.inf_.depth; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    FunctionTyper& typer_;
  };

  // A value of a `local`/assignment/return list after Lua's adjustment.
  struct Slot {
    const Expr* expr;
    int element;  // -1: the expression's own value; k: element k of its tuple
    Type type;
    bool unknown;
  };

  // The recursion (statements and expressions) is split so that each level's frames stay
  // small: a function on the recursive path types its children, then hands them to a
  // LUDA_DSL_NOINLINE rule (dsl/stack_guard.h).

  // statements (infer.cpp)
  void check_returns(const FunctionExpr& f);
  void block(const Block& b);
  void stat(const Stat& s);
  void condition(const Expr& cond);
  LUDA_DSL_NOINLINE void condition_rule(const Expr& cond, const ExprInfo& c);
  LUDA_DSL_NOINLINE void unsupported_stat(const Stat& s);
  LUDA_DSL_NOINLINE void local_stat(const LocalStat& l);
  // A shared or local allocation past what a GPU allows: a located error.
  void check_allocation_size(const Variable& v, const Type& type, const Expr& at);
  void mark_outputs(const FunctionExpr& f);
  LUDA_DSL_NOINLINE void assign_stat(const AssignStat& a);
  void numeric_for(const NumericForStat& f);
  LUDA_DSL_NOINLINE void numeric_for_head(const NumericForStat& f);
  LUDA_DSL_NOINLINE void return_stat(const ReturnStat& r);
  void store(const IndexExpr& target, const Slot& slot, Location where);
  std::vector<Slot> values_for(const std::vector<const Expr*>& values, std::size_t targets);
  void assign(Variable& v, const Type& t, bool unknown, Location where);
  void note_local_store(const Variable& v, const ExprInfo& value, const Expr& at);
  void convertible(const Type& value, const Type& to, const Expr& at, std::string_view what, const ExprInfo* info);
  const Builtin* allocation(const Expr& e) const;
  Variable& var(int index);

  // expressions (infer_expr.cpp)
  LUDA_DSL_NOINLINE ExprInfo& expr(const Expr& e);  // any expression, symbols included
  const ExprInfo& value(const Expr& e);             // a runtime value: symbols are errors, tuples cut to one
  LUDA_DSL_NOINLINE ExprInfo& as_value(const Expr& e, ExprInfo& typed);  // value() of what expr() typed
  LUDA_DSL_NOINLINE void reset(ExprInfo& out);
  LUDA_DSL_NOINLINE void leaf(const Expr& e, ExprInfo& out);
  LUDA_DSL_NOINLINE void name(const NameExpr& n, ExprInfo& out);
  void external(const std::string& name, const ExternalValue& ext, const Expr& at, ExprInfo& out);
  void index(const IndexExpr& e, ExprInfo& out);
  LUDA_DSL_NOINLINE void index_rule(const IndexExpr& e, const ExprInfo& object, const ExprInfo& key, ExprInfo& out);
  void field(const FieldExpr& e, ExprInfo& out);
  LUDA_DSL_NOINLINE void field_rule(const FieldExpr& e, const ExprInfo& object, ExprInfo& out);
  void call(const CallExpr& e, ExprInfo& out);
  [[noreturn]] LUDA_DSL_NOINLINE void not_callable(const CallExpr& e, const ExprInfo& callee);
  void method_call(const MethodCallExpr& e, ExprInfo& out);
  // A call of a builtin (f(args)) or of a group's method (g:sync(args)): `e` the call,
  // `open` its '('.
  void builtin_call(const Expr& e, const std::vector<const Expr*>& args, Location open, const Builtin& row,
                    ExprInfo& out);
  LUDA_DSL_NOINLINE void check_arity(const Expr& e, const std::vector<const Expr*>& args, Location open,
                                     const Builtin& row);
  LUDA_DSL_NOINLINE void builtin_rule(const Expr& e, const std::vector<const Expr*>& args, Location open,
                                      const Builtin& row, const std::vector<BuiltinOperand>& ops, ExprInfo& out);
  void operand_of(const Expr& arg, BuiltinOperand& op);
  LUDA_DSL_NOINLINE long long extent(const TableExpr::Field& f, const ExprInfo& v);
  LUDA_DSL_NOINLINE void operand_rule(const Expr& arg, ExprInfo& info, BuiltinOperand& op);
  void device_call(const CallExpr& e, const ExternalValue& fn, const std::string& lua_name, ExprInfo& out);
  LUDA_DSL_NOINLINE void declared_call(const CallExpr& e, const ExternalValue& fn, const std::string& lua_name,
                                       ExprInfo& out);
  LUDA_DSL_NOINLINE void device_rule(const CallExpr& e, const ExternalValue& fn, const std::string& lua_name,
                                     ExprInfo& out);
  void binary_chain(const BinaryExpr& top);
  [[noreturn]] LUDA_DSL_NOINLINE void no_concat(const BinaryExpr& e);
  void binary(const BinaryExpr& e, const ExprInfo& lhs, ExprInfo& out);
  LUDA_DSL_NOINLINE void binary_rule(const BinaryExpr& e, const ExprInfo& a, const ExprInfo& b, ExprInfo& out);
  void unary(const UnaryExpr& e, ExprInfo& out);
  LUDA_DSL_NOINLINE void unary_rule(const UnaryExpr& e, const ExprInfo& a, ExprInfo& out);
  void builtin_value(const Builtin& row, const Expr& at, ExprInfo& out);
  void path(const std::string& path, const Expr& at, ExprInfo& out);
  // A weak operand converted to `to`: a constant must fit (an error at `at`), a weak integer
  // parameter is noted (note_weak_use).
  void check_fits(const ExprInfo& operand, const Type& to, const Expr& at);
  // Notes a weak integer parameter, read unchanged, converted to a narrower integer type
  // (TypedFunction::weak_int_uses); anything else is ignored.
  void note_weak_use(const ExprInfo& operand, const Type& to, const std::string& where);
  // The weak integer parameter whose value `e` is (a read of it, or of a local copy of it),
  // or -1.
  int weak_param_of(const ExprInfo& e) const;
  Type compared_as(const ExprInfo& a, const ExprInfo& b, bool& mixed_sign) const;

  SourceError error_at(Location at, std::string_view kind, std::string_view message,
                       std::optional<Span> range = std::nullopt) const;
  SourceError error_node(const Node& n, std::string_view kind, std::string_view message) const;

  Inference& inf_;
  TypedFunction& tf_;
  FunctionHandle handle_;
  std::vector<int> name_var_;  // NameExpr id -> local, -1 from outside
  bool changed_ = false;
  bool saw_unknown_ = false;
  bool final_ = false;
  bool result_seen_ = false;
  bool has_result_ = false;
  Location result_origin_;
};

// How errors name what an expression denotes: "float32", "the namespace 'cuda'", ...
std::string describe(const ExprInfo& info);
// A constant as the user would write it ("1000", "0.5", "true").
std::string constant_text(const Constant& c, Scalar type);

}  // namespace luda::dsl::detail

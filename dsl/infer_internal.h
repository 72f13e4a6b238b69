// The inference pass's own classes, shared by infer.cpp (statements, names, passes) and
// infer_expr.cpp (expressions, calls, externals). Not used outside the pass.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "dsl/infer.h"

namespace luda::dsl::detail {

// The whole program being typed: the specializations made so far and the externals read.
struct Inference {
  Environment& env;
  KernelOptions options;
  TypedProgram program;
  std::map<std::string, int> specializations;      // key -> program.functions index
  std::vector<std::string> in_progress;            // identities of the functions being typed
  std::vector<std::string> in_progress_names;      // their Lua names, for recursion errors
  std::map<std::pair<FunctionHandle, std::string>, const ExternalValue*> lookups;

  const ExternalValue& lookup(FunctionHandle fn, const std::string& name);
  const ExternalValue& keep(ExternalValue v) { return program.externals.emplace_back(std::move(v)); }
};

class FunctionTyper {
 public:
  FunctionTyper(Inference& inf, TypedFunction& tf, FunctionHandle handle);
  void run();

 private:
  // A value of a `local`/assignment/return list after Lua's adjustment.
  struct Slot {
    const Expr* expr;
    int element;  // -1: the expression's own value; k: element k of its tuple
    Type type;
    bool unknown;
  };

  // statements (infer.cpp)
  void block(const Block& b);
  void stat(const Stat& s);
  void condition(const Expr& cond);
  void local_stat(const LocalStat& l);
  // A shared or local allocation past what a GPU allows: a located error.
  void check_allocation_size(const Variable& v, const Type& type, const Expr& at);
  void assign_stat(const AssignStat& a);
  void numeric_for(const NumericForStat& f);
  void return_stat(const ReturnStat& r);
  void store(const IndexExpr& target, const Slot& slot, Location where);
  std::vector<Slot> values_for(const std::vector<const Expr*>& values, std::size_t targets);
  void assign(Variable& v, const Type& t, bool unknown, Location where);
  void convertible(const Type& value, const Type& to, const Expr& at, std::string_view what, const ExprInfo* info);
  const Builtin* allocation(const Expr& e) const;
  Variable& var(int index);

  // expressions (infer_expr.cpp)
  const ExprInfo& expr(const Expr& e);   // any expression, symbols included
  const ExprInfo& value(const Expr& e);  // a runtime value: symbols are errors, tuples cut to one
  void name(const NameExpr& n, ExprInfo& out);
  void external(const std::string& name, const ExternalValue& ext, const Expr& at, ExprInfo& out);
  void index(const IndexExpr& e, ExprInfo& out);
  void field(const FieldExpr& e, ExprInfo& out);
  void call(const CallExpr& e, ExprInfo& out);
  void builtin_call(const CallExpr& e, const Builtin& row, ExprInfo& out);
  void device_call(const CallExpr& e, const ExternalValue& fn, const std::string& lua_name, ExprInfo& out);
  void binary(const BinaryExpr& e, ExprInfo& out);
  void unary(const UnaryExpr& e, ExprInfo& out);
  void builtin_value(const Builtin& row, const Expr& at, ExprInfo& out);
  void path(const std::string& path, const Expr& at, ExprInfo& out);
  Type operand_type(const ExprInfo& a, const ExprInfo& b, const BinaryExpr& e);
  void check_fits(const ExprInfo& operand, const Type& to, const Expr& at);
  BuiltinOperand operand_of(const Expr& arg);

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

// The CUDA C++ emitter's own classes, shared by codegen_cuda.cpp (functions, statements,
// the cpu entry, emit_cuda) and codegen_expr.cpp (expressions, builtin and device function
// calls, literals). Not used outside the pass.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dsl/codegen_cuda.h"
#include "dsl/stack_guard.h"

namespace luda::dsl::detail {

// The C++ type of a parameter, local or result ("float", "luda_Array<float, 2>"; a
// tuple is "auto").
std::string c_type(const Type& t);
// "(a + b)" -> "a + b" when the outer parentheses enclose the whole text.
std::string strip(std::string s);

// What the Emitters of one program share. What the program needs is known only once all
// of it is emitted, so emit_cuda_functions emits it again when the first pass found that
// it needs the record or yielding back-edges that the pass did not assume.
struct EmitState {
  // Assumed by a pass:
  bool record = false;  // every function takes the luda_BoundsRecord* (checks, 'for' steps)
  bool yields = false;  // cpu: open loops let the block's other threads run (fibers)
  // Found by a pass:
  bool fibers = false;          // a barrier, warp or grid_barrier builtin is called
  bool grid_sync = false;       // a grid_barrier builtin (g:sync()) is called: a cooperative launch
  bool step_checks = false;     // a 'for' step is tested against zero at run time
  bool atomics = false;         // an atomic or fence builtin: threads may wait for one another
  bool open_loops = false;      // a while or repeat loop
  std::size_t local_bytes = 0;  // cuda.local_array storage
};

// Emits one TypedFunction into `out`.
class Emitter {
 public:
  Emitter(const TypedProgram& program, const TypedFunction& tf, const KernelOptions& options, std::string& out,
          EmitState& state)
      : program_(program), tf_(tf), options_(options), out_(out), state_(state) {}

  void function();

 private:
  // Which operators of a long chain are written flat, and the run so far (codegen_expr.cpp).
  struct FlatRun;

  // LUDA_DSL_NOINLINE keeps formatting, which does not recurse, out of the frames that
  // repeat once per level of nesting (dsl/stack_guard.h).

  // functions and statements (codegen_cuda.cpp)
  void cpu_entry();
  void restrict_array_params();
  void loop_body(const Block& b, bool open);
  void back_edge(bool open);
  bool positive(const Expr& e, const Type& t) const;
  void line(int n);
  void block(const Block& b);
  void body(const Block& b);
  void stat(const Stat& s);
  void stat_body(const Stat& s);
  LUDA_DSL_NOINLINE void call_stat(const CallStat& c);
  LUDA_DSL_NOINLINE void open_while(const WhileStat& w);
  LUDA_DSL_NOINLINE void close_repeat(const RepeatStat& r);
  LUDA_DSL_NOINLINE void open_clause(const IfStat& i, std::size_t k);
  std::vector<std::pair<std::string, Type>> values(const std::vector<const Expr*>& list);
  std::string value_as(const std::vector<const Expr*>& list, std::vector<std::pair<std::string, Type>>& vals,
                       std::size_t i, const Type& to);
  LUDA_DSL_NOINLINE void local(const LocalStat& l);
  void allocation(const Variable& v);
  LUDA_DSL_NOINLINE void assign(const AssignStat& a);
  void numeric_for(const NumericForStat& f);
  LUDA_DSL_NOINLINE int numeric_for_open(const NumericForStat& f);
  void step_zero_check(const NumericForStat& f, const std::string& step, const Type& t, bool zero, int step_sign);
  int counted_for_open(const Variable& v, const std::string& type, const std::string& counter, const std::string& first,
                       const std::string& limit, const std::string& step, const std::optional<Constant>& step_value,
                       int step_sign, const std::string& runs, Scalar t);
  void loop_variable(const Variable& v, const std::string& type, const std::string& counter);
  LUDA_DSL_NOINLINE void return_stat(const ReturnStat& r);

  // expressions (codegen_expr.cpp)
  LUDA_DSL_NOINLINE std::string builtin(const Builtin& row, const BuiltinEmitArgs& args);
  LUDA_DSL_NOINLINE static std::string convert(const std::string& text, const Type& from, const Type& to);
  std::string emit_as(const Expr& e, const Type& to);
  LUDA_DSL_NOINLINE std::string emit(const Expr& e);
  LUDA_DSL_NOINLINE std::string field(const FieldExpr& e);
  LUDA_DSL_NOINLINE std::string builtin_value(const ExprInfo& ei);
  LUDA_DSL_NOINLINE std::string index(const IndexExpr& e);
  LUDA_DSL_NOINLINE std::string shape_index(const IndexExpr& e);
  LUDA_DSL_NOINLINE std::string row_index(const IndexExpr& e);
  std::string checked(const Expr& key, const std::string& array, int axis, int line_no, std::string extent = "");
  LUDA_DSL_NOINLINE std::string checked_text(std::string i, const std::string& array, int axis, int line_no,
                                             std::string extent);
  std::string element(const IndexExpr& e);
  std::string element_of(const Expr& base, const std::vector<const Expr*>& keys, int line_no);
  // The two words of generator `index` of cuda.random's states (Builtin::Atomic::State).
  LUDA_DSL_NOINLINE std::string state_words(const Expr& states, const std::string& index);
  LUDA_DSL_NOINLINE std::string element_text(const Expr& base, const std::string& array,
                                             const std::vector<std::string>& indices, int line_no);
  BuiltinEmitArgs builtin_args(const Builtin& row, const ExprInfo& ei, const std::vector<const Expr*>& args);
  LUDA_DSL_NOINLINE std::string call(const CallExpr& e);
  LUDA_DSL_NOINLINE std::string declared_call(const CallExpr& e, const DeclaredFunction& d);
  LUDA_DSL_NOINLINE std::string method_call(const MethodCallExpr& e);
  LUDA_DSL_NOINLINE std::string binary_chain(const BinaryExpr& top);
  FlatRun flat_kind(const BinaryExpr& e) const;
  std::string flat_operand(const FlatRun& run, const std::string& text) const;
  std::string close_run(const FlatRun& run) const;
  LUDA_DSL_NOINLINE std::string long_chain(const std::vector<const BinaryExpr*>& spine);
  std::string binary(const BinaryExpr& e, const std::string* lhs);
  Type side_type(const BinaryExpr& e, const Expr& side) const;
  LUDA_DSL_NOINLINE std::string binary_text(const BinaryExpr& e, const std::string& a, const std::string& b);
  LUDA_DSL_NOINLINE std::string unary(const UnaryExpr& e);

  const ExprInfo& info(const Node& n) const { return tf_.info(n); }
  const Variable& var(int i) const { return tf_.vars.at(static_cast<std::size_t>(i)); }

  void indent() { out_.append(static_cast<std::size_t>(2 * depth_), ' '); }
  void put(const std::string& text) {
    indent();
    out_ += text;
    out_ += '\n';
  }
  std::string temp(std::string_view what) { return fmt::format("luda_{}{}", what, ++temps_); }

  const TypedProgram& program_;
  const TypedFunction& tf_;
  const KernelOptions& options_;
  std::string& out_;
  EmitState& state_;                               // shared by the Emitters of one program (callees come first)
  std::set<int> positive_locals_;                  // vars that hold a positive value (positive())
  std::map<std::string, std::string> data_alias_;  // array parameter -> its __restrict__ data pointer
  int depth_ = 0;
  int temps_ = 0;
};

}  // namespace luda::dsl::detail

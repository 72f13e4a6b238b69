// THE builtin table: one row per builtin of the kernel language (`math.sqrt`,
// `cuda.threadIdx.x`, `cuda.atomic.add`, `print`, ...). Each row says how a use is typed
// (a rule over the argument types), how it is emitted (a CUDA C++ template), what it asks
// of the threads that run it (columns such as `barrier` and `atomic`) and what the docs
// say of it. Inference (dsl/infer_expr.cpp), CUDA emission (dsl/codegen_expr.cpp,
// dsl/codegen_cuda.cpp) and the language reference (builtin_reference_markdown) all read
// this table; adding a builtin is adding a row (Warp's add_builtin).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/types.h"

namespace luda::dsl {

// One argument of a builtin call, as inference sees it.
struct BuiltinOperand {
  Type type;                                    // Void when the argument is not a runtime value
  std::optional<Constant> constant;             // a compile-time number or bool
  std::optional<Scalar> dtype;                  // a dtype: "float32" or luda.float32
  std::optional<std::vector<long long>> shape;  // a constant number or table of numbers
  bool is_string = false;                       // a string literal (print's text)
  std::string describe;                         // how errors name a non-value ("the namespace 'cuda'")
};

// What the type rule makes of one use.
struct BuiltinTyping {
  Type result;                       // Void: a statement (cuda.syncthreads())
  std::vector<Type> convert;         // per operand: the type it is converted to before the
                                     // template sees it (Void: emitted as it is)
  Type operation;                    // the type the work is done in: selects {f}, emit_int
  std::optional<Constant> constant;  // math.pi, cuda.warpsize
  std::vector<long long> shape;      // array allocations: the constant shape
  std::string error;                 // non-empty: the use is wrong; what to say
  int error_operand = -1;            // which operand the caret points at (-1: the call)
  // The work is done in `operation` (float32 for a 16-bit float's math, as NumPy does it)
  // and its value converted to `result`'s type, rounding.
  bool round_result = false;
};

struct Builtin;
using BuiltinTypeRule = BuiltinTyping (*)(const Builtin& row, std::span<const BuiltinOperand> args);

// A row. Rows are written with designated initializers, naming only the fields that
// differ from these defaults: {.name = "cuda.syncthreads", .type = rule_sync,
// .emit = "__syncthreads()", .barrier = true, .args_doc = "()", .doc = "..."}.
struct Builtin {
  enum class Form : std::uint8_t {
    Value,  // read without a call: cuda.threadIdx.x, math.pi, cuda.laneid
    Call,   // called: math.sqrt(x)
    Group,  // called, gives a group (cuda.cg.this_grid()): not a value, only its
            // methods are used, the rows named `<name>():<method>` (g:sync())
  };
  // How codegen places the result. Allocations must initialize a local and declare its
  // storage before the statement.
  enum class Alloc : std::uint8_t { None, Shared, Local, DynamicShared };
  // Which element an atomic reads and writes ($@ in the template).
  enum class Atomic : std::uint8_t {
    None,     // not an atomic
    Indexed,  // a[i, j, ...]: operand 0 indexed by one operand per dimension
    First,    // a[0] of a 1-d array, no index given (numba.cuda's compare_and_swap)
    State,    // states[i, 0], states[i, 1]: operand 0 a uint64 array {n, 2} of generator
              // states (cuda.random), operand 1 the generator; $@ gives both addresses
  };

  std::string_view name = {};  // as written in a kernel, `luda.cuda.` spelled `cuda.`
  Form form = Form::Call;
  int min_args = 0, max_args = 0;  // checked before the rule; max -1: any number
  BuiltinTypeRule type = nullptr;
  // CUDA C++ for a use: $0..$9 the converted operands, $* all of them comma-separated,
  // $@ the element an atomic addresses (see Atomic), $v0 $v1 the values after those
  // indices, $c0 operand 0's constant, {f} "f" when the operation is in float32 (expf,
  // sqrtf) else "", $T the result's C type, $C operand 0 converted to the result's type
  // (scalar_conversion), $P print's printf. Alternatives by number of arguments are
  // separated by '|', starting at min_args.
  std::string_view emit = {};
  std::string_view emit_int = {};  // used instead when the operation is on integers ("" none)
  // Used instead when the operation is on complex numbers; "" where the builtin has no
  // complex form (NumPy's has none either: floor, fmod, hypot, ...), which is an error at
  // the call. An empty alternative ("luda_clog($0)|") refuses that number of arguments.
  std::string_view emit_complex = {};
  Scalar scalar = Scalar::Float64;  // rules that need one: the cast's target, a Value's type
  double value = 0;                 // Value constants (math.pi)
  Alloc alloc = Alloc::None;

  // What a use asks of the threads that run it. Code generation reads these columns,
  // never the name (tests/dsl/builtin_columns_test.cpp checks each one):
  // - barrier, warp, grid_barrier: the threads must interleave, so on the cpu target
  //   the kernel runs its threads as fibers (EmitInfo::needs_fibers), and a kind's
  //   element function may not use the row (each element runs on its own);
  // - grid_barrier also makes the kernel cooperative (EmitInfo::cooperative): launched
  //   with every block resident, <cooperative_groups.h> included on cuda;
  // - atomic, fence: threads may wait for one another through memory (a spin-wait), so
  //   on the cpu target a kernel that also has a while or repeat loop yields at its
  //   back-edges and runs as fibers.
  bool barrier = false;       // waits for every thread of the block (cuda.syncthreads)
  bool warp = false;          // waits for, or exchanges values with, lanes of the warp
  bool grid_barrier = false;  // waits for every thread of the grid (g:sync())
  Atomic atomic = Atomic::None;
  bool fence = false;  // orders this thread's memory writes for other threads
  // The value is at least 1 and fits `scalar` (block and grid sizes): a 'for' step of
  // it, converted to a float or an integer at least that wide, needs no test against 0.
  bool positive = false;

  std::string_view args_doc = {};  // "(x)" as the reference shows it
  std::string_view doc = {};
};

std::span<const Builtin> builtin_table();
// The row of that name ("math.sqrt"), or nullptr.
const Builtin* find_builtin(std::string_view name);
// Whether `path` names a namespace of the table ("cuda", "cuda.atomic", "luda.math").
bool is_builtin_namespace(std::string_view path);
// The dtype a row names when used as a value (luda.float32), or nullopt.
std::optional<Scalar> builtin_dtype(const Builtin& row);
// "luda.cuda.x" -> "cuda.x": the one spelling the table uses.
std::string canonical_builtin_path(std::string_view path);
// The rows' names under `path` ("cuda.atomic" -> "add, and_, ..."), for "no such member" errors.
std::string builtin_members(std::string_view path);

// The builtins section of docs/language.md: one Markdown table per namespace.
std::string builtin_reference_markdown();

// The text a template makes for one use (see Builtin::emit). `operands` are already
// converted; `element` is $@; `float32` selects {f}.
struct BuiltinEmitArgs {
  std::vector<std::string> operands;
  std::vector<Type> types;  // the operands' types after conversion
  std::vector<std::optional<Constant>> constants;
  std::vector<std::string> strings;  // string literal operands' text (print), else ""
  Type operation;                    // BuiltinTyping::operation
  std::string element;               // atomics: the addressed element (an lvalue)
  int values_from = 0;               // atomics: index of the first value operand
  Type result;
  bool round_result = false;  // BuiltinTyping::round_result
};
std::string emit_builtin(const Builtin& row, const BuiltinEmitArgs& args);

// `text` (a C++ expression of type `from`, without outer parentheses) converted to `to` as
// the kernel language converts: C++'s cast, except float to integer, which truncates,
// saturates at the type's range and gives 0 for NaN (luda_ftoi, PTX's cvt.rzi).
std::string scalar_conversion(const std::string& text, Scalar from, Scalar to);

}  // namespace luda::dsl

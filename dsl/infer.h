// Type inference: a kernel's function and the types of one call in, a TypedProgram out
// (the kernel and every device function it calls, each specialized for its argument
// types). The rules are docs/language.md's; the side tables it fills are
// what the CUDA emitter (codegen_cuda.h) reads. Every user mistake is a SourceError at
// its own line.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/builtins.h"
#include "dsl/compile.h"
#include "dsl/find_function.h"
#include "dsl/types.h"

namespace luda::dsl {

// What an expression denotes when it is not (only) a runtime value.
struct Symbol {
  enum class Kind : std::uint8_t {
    None,       // a plain value
    Namespace,  // `cuda`, `cuda.atomic`, `luda.math`: path
    Builtin,    // a builtin function (`math.sqrt`) awaiting its call: builtin
    Table,      // a constant table (`cfg`): table
    Function,   // a Lua function from outside: a device function, function
    Declared,   // a declared CUDA C++ device function (cuda.declare_device): declared
    Shape,      // `a.shape` of an array value: the array is the Field's object
    Dtype,      // "float32" / luda.float32 in a dtype position
    String,     // a string literal (print's text)
    Group,      // a group of threads (cuda.cg.this_grid()): path, its methods' rows
  };
  Kind kind = Kind::None;
  std::string path;                            // Namespace, Group; Function: the Lua name
  const Builtin* builtin = nullptr;            // Builtin
  const ExternalValue* table = nullptr;        // Table (owned by the Inference)
  const ExternalValue* function = nullptr;     // Function (owned by the Inference)
  const DeclaredFunction* declared = nullptr;  // Declared (kept by the Inference's externals)
  Scalar dtype = Scalar::Float64;              // Dtype
  std::string text;                            // String
};

// What inference learned about one expression node.
struct ExprInfo {
  bool unknown = false;              // depends on a local not typed yet (an early pass)
  bool first_of_tuple = false;       // a call's values cut to the first (`f(x) + 1`)
  Type type;                         // its value's type (Void: a Symbol only, or a statement call)
  std::optional<Constant> constant;  // known at compile time: emitted as a literal
  Symbol symbol;
  int var = -1;  // a Name read: the local (TypedFunction::vars)
  // Calls
  const Builtin* builtin = nullptr;  // a builtin call or Value
  BuiltinTyping builtin_typing;
  int callee = -1;                             // a device function call: TypedProgram::functions index
  const DeclaredFunction* declared = nullptr;  // a declared function's call
  std::vector<Type> arg_types;                 // device function call: the parameters' types
  // Binary / Unary: the type both operands are converted to before the operation.
  Type operand;
  // A comparison of a signed integer with a uint64, which no integer type holds both of:
  // each operand is converted to the 64-bit integer of its own signedness instead, and the
  // two are compared by value (the prelude's luda_lt, luda_eq), as NumPy 2 compares them.
  bool mixed_sign = false;
};

// A local of a Lua function (parameters first).
struct Variable {
  std::string name;    // the Lua name
  std::string c_name;  // as emitted: the Lua name, "x_2" when shadowing, "_" suffixed on a clash
  Location decl;
  Location type_origin;  // where the type was first given (for conflict errors)
  bool is_param = false;
  bool is_loop_var = false;
  // A kind's output (FunctionSource::outputs): its type is fixed, and assignments convert.
  bool is_output = false;
  int assignments = 0;  // assignments after the declaration
  // A local declared as the value of a weak integer parameter and never assigned again
  // (`local b = n`): reading it reads that parameter (compile.h WeakIntUse). -1 otherwise.
  int copy_of_param = -1;
  bool has_type = false;
  Type type;
  // A local that is assigned once, at its declaration, a compile-time value: it has no
  // storage; reads use the constant or symbol (`local inv_sqrt_2pi = 0.39...`).
  bool is_alias = false;
  std::optional<Constant> constant;
  Symbol symbol;
  // Array allocations (`local tile = cuda.shared.array({32, 33}, "float32")`).
  Builtin::Alloc alloc = Builtin::Alloc::None;
  std::vector<long long> shape;
};

// fuse: the final return of a fused reduction, and the element values it gives instead of
// its own (each reduction's argument).
struct FusedReturn {
  const ReturnStat* stat = nullptr;
  std::vector<const Expr*> values;
};

struct TypedFunction {
  std::shared_ptr<const Ast> ast;
  const FunctionExpr* function = nullptr;
  bool is_kernel = false;
  std::string lua_name;  // "add_kernel", "hypot"
  std::string c_name;    // "add_kernel_1a2b3c4d"
  std::vector<Type> params;
  std::vector<std::string> outputs;  // FunctionSource::outputs of a kind's element function
  Type result;                       // Void, a Scalar, or a Tuple
  std::vector<Variable> vars;
  std::vector<ExprInfo> exprs;               // by node id
  std::map<int, std::vector<int>> declared;  // Local / NumericFor statement id -> its vars
  // fuse (dsl/device_function.h): this return is typed and emitted as `return <values>`,
  // the arguments of its reductions (`luda.sum(e, axis)`, max, min, prod).
  FusedReturn fused;
  // The weak integer parameters converted to narrower integer types (compile.h WeakIntUse),
  // found by the last pass; uses in device functions it calls count as its own.
  std::vector<WeakIntUse> weak_int_uses;
  const ExprInfo& info(const Node& n) const { return exprs.at(static_cast<std::size_t>(n.id)); }
};

struct TypedProgram {
  // Device functions in an order where callees come before callers; the kernel is last.
  std::vector<std::unique_ptr<TypedFunction>> functions;
  const TypedFunction& kernel() const { return *functions.back(); }
  bool dynamic_shared = false;
  bool uses_bounds = false;             // some indexing is checked (boundscheck and an array index)
  std::deque<ExternalValue> externals;  // the upvalues and globals read; Symbols point here
  // The declared CUDA C++ functions called, one per C name, in the order first called.
  std::vector<std::shared_ptr<const DeclaredFunction>> declared;
};

// The functions the kernel reaches, callees before callers, the kernel last.
std::vector<const TypedFunction*> reachable_functions(const TypedProgram& program);

// Types the kernel `where` for `args`. `options.boundscheck` only sets uses_bounds.
// `link`: the CUDA C++ sources compiled with it (KernelRequest::link), where the declared
// functions it calls may be defined.
TypedProgram infer_kernel(const FoundFunction& kernel, FunctionHandle handle, const std::string& name,
                          const std::vector<Type>& args, const KernelOptions& options, Environment& env,
                          const std::vector<std::shared_ptr<const Chunk>>& link = {});

// Types `root` as a device function for `params` (scalars, weak ones allowed, or arrays):
// the element function of a kernel kind (dsl/device_function.h), the last function of the
// program. Its c_name is `name` made an identifier; the caller makes it unique.
TypedProgram infer_device_function(const FoundFunction& root, FunctionHandle handle, const std::string& name,
                                   const std::vector<Type>& params, const KernelOptions& options, Environment& env,
                                   const FusedReturn* fused = nullptr, const std::vector<std::string>& outputs = {});

// The typed listing for inspect("types"): each source line of the kernel and its device
// functions, followed by the types of the locals it declares and of its expressions.
std::string typed_listing(const TypedProgram& program);

// 8 hex digits of a 64-bit FNV-1a hash of `text`: entry and device function names.
std::string short_hash(std::string_view text);

// `name` as a C identifier for the names of kernels, device functions and files: other
// characters become '_', a leading digit gets "k_", and a name longer than
// kMaxIdentifier keeps a readable prefix and ends in '_' and short_hash(name), so that no
// user's name (a 100 000-character kind name) makes an unbounded symbol or file name.
inline constexpr std::size_t kMaxIdentifier = 48;
std::string c_identifier(std::string_view name);

}  // namespace luda::dsl

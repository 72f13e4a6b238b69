// The frontends of the kernel kinds: what makes a kind's element code (jit::ElementCode,
// jit::ReductionCode) for one call's operand types. Used by the Lua kinds
// (stdlib/kind_bindings.cpp: vectorize, elementwise, reduction, fuse) and by array
// arithmetic (ops/array_math.cpp). Here: typing a scalar Lua function for the kinds,
// functions given as Lua source text, NumPy's rules for mixed operands, CuPy's binding of
// type placeholders, and each kind's frontend. No Lua state: a frontend runs inside
// jit::ElementwiseKind::call, and the builtin operations are shared by every lua_State.
#pragma once

#include <fmt/format.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/compile.h"
#include "dsl/device_function.h"
#include "dsl/kind_source.h"
#include "dsl/types.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/jit_kernel.h"
#include "jit/kinds/reduction.h"
#include "runtime/dtype.h"

namespace luda::jit {

inline dsl::Scalar to_scalar_kind(DType t) { return static_cast<dsl::Scalar>(t); }  // ORDER SCALAR = ORDER DTYPE
inline DType to_dtype(dsl::Scalar s) { return static_cast<DType>(s); }

// A function given as Lua source text ("function(a, b) return a + b end"): line_defined 0,
// its chunk named as Lua names a string chunk. The builtin operations use these.
dsl::FunctionSource source_text_function(std::string text);

// The Environment of functions that have no Lua function behind them (source text): the
// builtin namespaces `math`, `luda` (luda.float32, luda.math) and `cuda` are what they
// say; every other name is undefined. Shared, stateless.
dsl::Environment& builtin_environment();

// One scalar function typed for request.params on request.options.target, its names
// looked up in `env`. Errors start with `who` ("vectorize 'add'"): a function that calls
// barriers or warp functions (a kind runs one element per thread, never a block in step).
dsl::DeviceFunction compile_scalar_function(const dsl::DeviceFunctionRequest& request, dsl::Environment& env,
                                            std::string_view who);

// The scalars a function returns: one, or each of a tuple. A function that returns
// nothing is an error naming `who`, located at `function`'s `function` keyword when it is
// a Lua function of a chunk (as is a barrier in compile_scalar_function).
std::vector<dsl::Scalar> result_scalars(const dsl::Type& result, std::string_view who,
                                        const dsl::FunctionSource* function = nullptr);

// The element code of a function, typed for request.params: its result must be one value
// (`who` names the kind in the error for a tuple), or, `listed` > 0, that many (a fused
// function's return of `listed` expressions).
jit::ElementCode element_code(const dsl::DeviceFunctionRequest& request, dsl::Environment& env, std::string_view who,
                              std::size_t listed = 0);

// A weak type made strong as NumPy makes a Python scalar: int64, float64, complex128.
dsl::Type strong(const dsl::Type& t);

// NumPy 2's result dtype for operands (strong: arrays and typed scalars; weak: Lua
// numbers, which take the strong operands' kind): the strong ones promote as
// promote_types does; a weak integer then leaves it as it is (bool becomes int64); a weak
// float makes an integer or bool result float64; a weak complex (luda.complex) makes a
// float result the complex of its precision (float32 -> complex64) and an integer or bool
// one complex128. All weak: int64, or float64 with a float, complex128 with a complex.
dsl::Scalar numpy_result(std::span<const dsl::Type> operands);

// Whether NumPy's "safe" casting takes `from` to `to` (numpy.can_cast(from, to)).
bool can_cast_safe(dsl::Scalar from, dsl::Scalar to);
// Whether an operand of type `from` (weak: a Lua number) converts to `to` without loss:
// strong as can_cast_safe; a weak integer to any integer or float, a weak float to a float.
bool converts_without_loss(const dsl::Type& from, dsl::Scalar to);

// How a call's operand types read in messages: "float32", "a Lua integer", "a Lua float".
std::string describe_type(const dsl::Type& t);

// The dtype NumPy's sum and prod give: int64 for bool and signed integers, uint64 for
// unsigned ones, a float's or complex's own type (float16 and bfloat16 accumulate in
// float32 first: reduce_parts).
dsl::Scalar sum_type(dsl::Scalar s);

// "static __device__ R <name>(T0 a0, ..., long long j) { return <callee>(a0, ...); }" (R a
// C type): a reduction's map (which takes the element index) over a function that does not;
// `convert`: the value converted to R (luda_cvt).
std::string map_with_index(const std::string& name, const std::string& callee, const std::vector<dsl::Type>& params,
                           const std::string& result, bool convert = false);

// ---- the kinds' frontends ------------------------------------------------------------------

// A Lua function and where its names are looked up.
struct LuaFunction {
  dsl::FunctionSource source;
  dsl::FunctionHandle handle = nullptr;
  dsl::Environment* env = nullptr;  // owned by the kind's object, which outlives the kind
  std::string name;
  std::vector<std::string> params;
  jit::JitOptions options;
};
// The request that types `f` for `params` on `target`, with its options; its names are
// looked up in *f.env.
dsl::DeviceFunctionRequest typed(const LuaFunction& f, std::vector<dsl::Type> params, dsl::Target target);

// luda.vectorize: specialized per input types (dynamic), or with signatures.
struct VectorizeState {
  LuaFunction fn;
  std::vector<dsl::Signature> signatures;
  bool dynamic = true;  // made without signatures: specializes per input types
  // Numba's identity= (a number or boolean): f:reduce then runs as one reduction kernel,
  // and an empty reduction gives it.
  std::optional<jit::KernelArg> identity;
  std::string who() const { return fmt::format("vectorize '{}'", fn.name); }
};
// The signature a call uses: the exact match, else (made with signatures) the first the
// inputs convert to without loss (NumPy's safe casting; Lua numbers are weak); nullptr
// when none. A dynamic vectorize's signatures come from f:compile(sig).
const dsl::Signature* choose_signature(const VectorizeState& s, std::span<const dsl::Type> inputs);
// The chosen signature's code, else (dynamic) the function typed for the inputs, else the
// error listing the signatures.
jit::ElementCode vectorize_code(const VectorizeState& s, std::span<const dsl::Type> inputs, dsl::Target target);
// A vectorize signature, checked against the function: scalar parameters, one per
// function parameter, and a scalar result.
dsl::Signature parse_vectorize_signature(std::string_view text, const LuaFunction& fn, std::string_view who);
void add_signature(VectorizeState& s, dsl::Signature sig);  // unless it is there

// CuPy's ElementwiseKernel and ReductionKernel given as strings.
struct StringKindState {
  std::string kind;  // "elementwise", "reduction"
  std::string name;
  std::vector<dsl::KindParam> in, out;
  std::string body;                         // elementwise
  std::string map, reduce, post, identity;  // reduction
  std::string reduce_type;                  // reduction: a dtype, a placeholder, or "" (out[0]'s)
  jit::JitOptions options;
  std::string who() const { return fmt::format("{} '{}'", kind, name); }
};
// The dtype of each parameter (ins then outs) for one call, CuPy's way: a placeholder
// takes the dtype of the arrays (and typed scalars and bools) passed for it, then of the
// outputs given; a placeholder that only Lua numbers reach takes theirs (int64, float64).
// Errors: a placeholder bound to two dtypes; one that nothing binds.
std::vector<dsl::Scalar> bind_types(const StringKindState& s, std::span<const dsl::Type> inputs,
                                    std::span<const std::optional<dsl::Scalar>> outputs);
jit::ElementCode elementwise_code(const StringKindState& s, std::span<const dsl::Type> inputs,
                                  std::span<const std::optional<dsl::Scalar>> outputs, dsl::Target target);
jit::ReductionCode reduction_code(const StringKindState& s, std::span<const dsl::Type> inputs,
                                  std::span<const std::optional<dsl::Scalar>> outputs, dsl::Target target);

// luda.fuse: elementwise (element_code of the function), or with reductions in its final
// return: the reductions' element values (fuse_reduction_as_value) mapped, reduced by
// their ops (one accumulator each), and the work after them (dsl::fuse_post_function) as
// the post step, which gives the outputs; or, where the work after the reductions needs
// every element again, two passes: the reductions, then the function elementwise.
struct FuseState {
  LuaFunction fn;
  dsl::FuseShape shape;
  std::string who() const { return fmt::format("fuse '{}'", fn.name); }
};
// The one-pass reduction; values_only: the first of two passes, whose outputs are the
// reductions' values.
jit::ReductionCode fuse_reduction_code(const FuseState& s, std::span<const dsl::Type> inputs, dsl::Target target,
                                       bool values_only = false);
// The second of two passes: the function elementwise over its inputs then the reductions'
// values (dsl::fuse_second_pass_function).
jit::ElementCode fuse_second_pass_code(const FuseState& s, std::span<const dsl::Type> inputs, dsl::Target target);
// Whether a call with these arguments runs in two passes: the work after the reductions
// reads an argument that is an array. (Where it reads a typed scalar or a boolean, the
// one pass refuses it: it takes Lua numbers there, as one value for the reduced ones.)
bool fuse_needs_two_passes(const FuseState& s, std::span<const jit::KernelArg> args);
// In two passes every output is elementwise over the inputs: a value of the return that
// reads no array after the reductions (NumPy's reduced shape) is an error.
void check_two_pass_values(const FuseState& s, std::span<const jit::KernelArg> args);

}  // namespace luda::jit

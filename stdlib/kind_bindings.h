// What the Lua bindings of the kernel kinds (kind_bindings.cpp: luda.vectorize,
// luda.elementwise, luda.reduction, luda.fuse; kind_calls.cpp: calling them) and of array
// arithmetic (array_math_bindings.cpp) share: reading a call's operands and options, and
// pushing its results (kind_calls.cpp). Hot path: nothing here allocates or formats on a
// call that passes `out=`.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "jit/call/call_args.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"
#include "stdlib/bindings.h"

namespace luda::lua {

inline constexpr int kMaxKindArgs = 32;

void open_kinds(lua_State* L);       // kind_bindings.cpp
void open_array_math(lua_State* L);  // array_math_bindings.cpp (after open_arrays)
void open_linalg(lua_State* L);      // linalg_bindings.cpp: luda.linalg

// The Lua value at idx as an operand: an ndarray (not copied: the value stays on the
// stack through the call), a Lua integer or float (weak), a boolean, a typed scalar.
// Error: "<who>: argument 2 'w' is a table; pass arrays, numbers, booleans or typed
// scalars (luda.int32(v))" (`name` may be empty).
jit::KernelArg read_operand(lua_State* L, int idx, std::string_view who, int position, std::string_view name);

// The operands are the values from `first` to the top, but a final plain table with no
// positional entries holds the call's options: returns the number of operands and sets *options to the table's index
// (0 when there is none).
int split_options(lua_State* L, int first, int* options);

// The options of a call, read from the table at `options` (0: none), whose keys must be
// among `allowed` ("<who>: unknown option 'outt'; expected out, stream").
// Every value read stays on the stack (at the indexes below, 0 when absent) through the call.
struct CallOptions {
  int out = 0;                           // the `out` value (an array or a table of them)
  const Stream* stream = nullptr;        // the `stream` option's stream (its userdata's); null: the default stream
  int axis = 0, keepdims = 0, size = 0;  // these options' values, not checked
  int dtype = 0, initial = 0, ddof = 0;  // the reductions' (not checked either)
};
CallOptions read_call_options(lua_State* L, int options, std::string_view who,
                              std::initializer_list<std::string_view> allowed);

// The arrays `out` names for a kind with `nout` outputs: an ndarray (nout == 1) or a
// sequence of nout of them. Each entry of `outs` is set to the given array (copied).
void read_outputs(lua_State* L, int out, std::size_t nout, std::string_view who, std::span<NDArray> outs);

// Pushes the result of a one-output call: the `out` value when given; else, when no
// operand was an array, the 0-d result's element as a Lua value (a number or boolean:
// numba's vectorize returns a scalar for scalars); else the array.
void push_single_result(lua_State* L, const CallOptions& options, NDArray&& result, bool any_array);

// A reduction's arguments after its array (at index `array`): [axis] [, options], the axis
// an integer or a table of them (1-based, -1 the last) or options.axis, nothing after the
// options; `allowed` names the options (initial= is read when listed). `call` is the
// call's form in the error for an argument after the options
// ("x:sum([axis] [, {axis =, keepdims =, out =, stream =}])").
struct ReduceArgs {
  std::optional<std::vector<int>> axes;  // 0-based, sorted; nullopt: none given
  bool keepdims = false;
  CallOptions call;
  NDArray out;                            // the `out` option's array; invalid: none
  std::optional<jit::KernelArg> initial;  // the `initial` option
};
ReduceArgs read_reduce_args(lua_State* L, int array, int ndim, std::string_view who, std::string_view call,
                            std::initializer_list<std::string_view> allowed);

// Whether any operand is an array.
bool any_array(std::span<const jit::KernelArg> args);

}  // namespace luda::lua

// Raw-kernel arguments: checked against the kernel's parameter list and packed into the
// void* array cuLaunchKernel takes. Pure: no GPU needed, so every rule is testable here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/arg_buffer.h"
#include "jit/kernel_params.h"
#include "runtime/dtype.h"
#include "runtime/error.h"
#include "runtime/ndarray.h"

namespace luda::jit {

// One kernel argument as the host gives it.
struct KernelArg {
  enum class Kind { Array, Typed, Int, Float, Bool };
  Kind kind = Kind::Int;
  const NDArray* array = nullptr;  // Array (not owned; lives through the launch call)
  Scalar typed;                    // Typed: luda.int32(v) and friends; strong
  std::int64_t i = 0;              // Int: a Lua integer (weak)
  double f = 0;                    // Float: a Lua float (weak)
  bool b = false;                  // Bool

  static KernelArg of_array(const NDArray& a) { KernelArg k; k.kind = Kind::Array; k.array = &a; return k; }
  static KernelArg of_typed(Scalar s) { KernelArg k; k.kind = Kind::Typed; k.typed = s; return k; }
  static KernelArg of_int(std::int64_t v) { KernelArg k; k.kind = Kind::Int; k.i = v; return k; }
  static KernelArg of_float(double v) { KernelArg k; k.kind = Kind::Float; k.f = v; return k; }
  static KernelArg of_bool(bool v) { KernelArg k; k.kind = Kind::Bool; k.b = v; return k; }
};

// A Lua float as Lua prints it: 2.5, 3.0, 1e+20, inf; and nan (of either sign), as NumPy.
std::string lua_float(double f);

// An argument as messages name it: "a float64 array", "an int32 scalar", "the integer 7",
// "a float 2.5" (Lua's spelling), "the boolean true".
std::string describe_arg(const KernelArg& a);

// The device of a call's array arguments (kernels run where their arrays are): nullopt
// when there is none. `who` starts the errors ("kernel 'add'", "raw_kernel 'add_func'");
// `names` are the parameters' names (may be shorter than args: "argument 3"). Errors:
//   kernel 'add': argument 1 'x' is an empty array handle; pass an array
//   kernel 'add' got arrays on cpu (x, y) and cuda:0 (out); put them on one device (x:to("cuda:0"))
// Allocates nothing when the arrays are valid and on one device (the hot path).
std::optional<Device> arrays_device(std::string_view who, std::span<const KernelArg> args,
                                    std::span<const std::string> names);
// The same, with `who` = "<kind> '<name>'" formatted only for an error: what launch paths
// call, so that a good call formats nothing.
std::optional<Device> arrays_device(std::string_view kind, std::string_view name, std::span<const KernelArg> args,
                                    std::span<const std::string> names);

// Checks `args` against the signature and converts each to its parameter's type; with no
// signature, passes them as CuPy does (integers as int64, floats as float64, typed scalars
// as their dtype, arrays as pointers). Every error starts "raw_kernel '<kernel>'" and
// names the argument by position, name and declaration, e.g.
//   raw_kernel 'add_func' takes 3 arguments (x1, x2, y), got 2
//   raw_kernel 'add_func': argument 2 'x2' is 'const float* x2' but got a float64 array; pass a float32 array
// Arrays must be on one device (arrays_device's error otherwise). Each argument is a slot
// of the buffer (jit/arg_buffer.h): a pointer's 8 bytes, a scalar's itemsize.
// Into `out`, cleared first: a launch packs into launch_buffer(), which allocates nothing
// once it has grown to the kernel's arguments.
void pack_arguments(ArgBuffer& out, const std::string& kernel, const std::optional<KernelSignature>& signature,
                    std::span<const KernelArg> args);
ArgBuffer pack_arguments(const std::string& kernel, const std::optional<KernelSignature>& signature,
                         std::span<const KernelArg> args);

}  // namespace luda::jit

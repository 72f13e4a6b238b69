// A call's arguments as the host gives them (arrays, typed scalars, Lua numbers), how
// messages name them, and the device they put a call on. Pure: no GPU needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/call/arg_buffer.h"
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

  static KernelArg of_array(const NDArray& a) {
    KernelArg k;
    k.kind = Kind::Array;
    k.array = &a;
    return k;
  }
  static KernelArg of_typed(Scalar s) {
    KernelArg k;
    k.kind = Kind::Typed;
    k.typed = s;
    return k;
  }
  static KernelArg of_int(std::int64_t v) {
    KernelArg k;
    k.kind = Kind::Int;
    k.i = v;
    return k;
  }
  static KernelArg of_float(double v) {
    KernelArg k;
    k.kind = Kind::Float;
    k.f = v;
    return k;
  }
  static KernelArg of_bool(bool v) {
    KernelArg k;
    k.kind = Kind::Bool;
    k.b = v;
    return k;
  }
};

// A dtype with its article, as messages name it: "an int32", "a float64".
std::string a_dtype(DType t);

// Whether every array argument is valid and on one device (`*out`: that device, nullopt
// when there is no array), allocating nothing: the launch paths' fast check, before
// arrays_device finds the error.
bool one_device(std::span<const KernelArg> args, std::optional<Device>* out);

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

}  // namespace luda::jit

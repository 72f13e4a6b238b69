// Scalar functions for the kernel kinds (vectorize, elementwise, reduction, fuse): a Lua
// function typed for scalar arguments and emitted as a CUDA C++ device function, which a
// kind's template (jit/kinds/templates.h) calls once per element. Pure: no CUDA, no Lua VM.
#pragma once

#include <string>
#include <vector>

#include "dsl/compile.h"
#include "dsl/types.h"

namespace luda::dsl {

struct DeviceFunctionRequest {
  FunctionSource function;          // as for kernels: a function in its chunk, or source text
  FunctionHandle handle = nullptr;  // for Environment lookups (upvalues, globals)
  std::string name;                 // the Lua name ("gaussian_pdf"); "" -> "fn"
  // One per parameter: scalars, or arrays (an elementwise kernel's `raw` parameters, which
  // the body indexes freely). A weak scalar type is allowed (a Lua number argument).
  std::vector<Type> params;
  KernelOptions options;  // target, fastmath, boundscheck (raw arrays only)
  // fuse: the function's final return gives the arguments of its reductions (`e` of each
  // `luda.sum(e, axis)`, max, min, prod), one value or a tuple: the element values the
  // reduction template then reduces (dsl/kind_source.h FuseShape).
  bool fuse_reduction_as_value = false;
};

struct DeviceFunction {
  // The generated functions without any prelude: callees first, the function last, each
  // `static __device__` (host-and-device on the cpu target, as emit_cuda_functions does),
  // with #line directives into the Lua chunk. Names are unique per content (hashed), so
  // several DeviceFunctions can be pasted into one translation unit: every name carries a
  // hash of this text (`<name>_<8 hex>`; callees `<lua name>_<8 hex>_<8 hex>`), so two
  // that reach the same helper get distinct copies; two equal texts are one (paste once).
  std::string code;
  std::string c_name;  // the function to call
  // Void, a Scalar (one value), or a Tuple of scalars (`return a, b`). Never weak: a weak
  // result (the function returns a literal or only Lua-number math) is its default type
  // (int64 / float64), as NumPy gives.
  Type result;
  bool needs_fibers = false;               // calls barriers or warp functions (an error for kinds)
  bool uses_bounds = false;                // an array is indexed with boundscheck on, or a 'for'
                                           // step may be zero: the last C parameter is a
                                           // luda_BoundsRecord* (EmitInfo::error_record)
  std::string typed;                       // the typed listing, for :inspect("types")
  std::vector<WeakIntUse> weak_int_uses;   // of request.params (compile.h)
  std::vector<std::string> nvrtc_options;  // as CudaKernel::nvrtc_options
};

// Types `request.function` as a device function for `request.params` and emits it.
// Throws SourceError for user mistakes, at their Lua line ("fn takes 2 parameters, got 3
// arguments", a table or array returned, ...).
DeviceFunction compile_device_function(const DeviceFunctionRequest& request, Environment& env);

// The text that all kinds' generated sources start with on the cuda target (the prelude
// that compile_kernel's emit_cuda prepends). The cpu target's prelude is jit's.
std::string device_prelude();

}  // namespace luda::dsl

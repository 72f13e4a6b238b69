// Raw-kernel arguments: checked against the kernel's parameter list and packed into the
// void* array cuLaunchKernel takes. Pure: no GPU needed, so every rule is testable here.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "jit/call/arg_buffer.h"
#include "jit/call/call_args.h"
#include "jit/raw/params.h"

namespace luda::jit {

// Checks `args` against the signature and converts each to its parameter's type; with no
// signature, passes them as CuPy does (integers as int64, floats as float64, typed scalars
// as their dtype, arrays as pointers). Every error starts "raw_kernel '<kernel>'" and
// names the argument by position, name and declaration, e.g.
//   raw_kernel 'add_func' takes 3 arguments (x1, x2, y), got 2
//   raw_kernel 'add_func': argument 2 'x2' is 'const float* x2' but got a float64 array; pass a float32 array
// Arrays must be on one device (arrays_device's error otherwise). Each argument is a slot
// of the buffer (jit/call/arg_buffer.h): a pointer's 8 bytes, a scalar's itemsize.
// Into `out`, cleared first: a launch packs into launch_buffer(), which allocates nothing
// once it has grown to the kernel's arguments.
void pack_arguments(ArgBuffer& out, const std::string& kernel, const std::optional<KernelSignature>& signature,
                    std::span<const KernelArg> args);
ArgBuffer pack_arguments(const std::string& kernel, const std::optional<KernelSignature>& signature,
                         std::span<const KernelArg> args);

}  // namespace luda::jit

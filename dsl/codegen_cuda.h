// CUDA C++ emission: a TypedProgram in, one translation unit out: the prelude, each
// reachable device function (callees first), then the `extern "C" __global__` kernel in
// compile.h's ABI. A `#line N "chunk"` directive precedes every statement so that
// NVRTC's diagnostics name the Lua line. Locals keep their Lua names (x_2 when one
// shadows another); index arithmetic is 64-bit; arrays may alias (no __restrict__).
#pragma once

#include <string>

#include "dsl/compile.h"
#include "dsl/infer.h"

namespace luda::dsl {

// Only the generated functions, without the prelude (golden tests compare this part).
// For Target::Cpu, the kernel is followed by its per-thread entry (compile.h, Target).
// `needs_fibers`, when given, is set to whether the code calls a barrier or a warp function.
std::string emit_cuda_functions(const TypedProgram& program, const KernelOptions& options,
                                bool* needs_fibers = nullptr);

// The whole source: prelude + emit_cuda_functions.
std::string emit_cuda(const TypedProgram& program, const KernelOptions& options, bool* needs_fibers = nullptr);

// A constant as a CUDA C++ literal of `type` ("0.5f", "3LL", "__int_as_float(0x7f800000)").
std::string cuda_literal(const Constant& c, Scalar type);

}  // namespace luda::dsl

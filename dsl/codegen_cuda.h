// CUDA C++ emission: a TypedProgram in, one translation unit out: the prelude, each
// reachable device function (callees first), then the `extern "C" __global__` kernel in
// compile.h's ABI. A `#line N "chunk"` directive precedes every statement so that
// NVRTC's diagnostics name the Lua line. Locals keep their Lua names (x_2 when one
// shadows another); index arithmetic is 64-bit. Arrays may alias, so their data pointers
// are plain, except with KernelOptions::noalias (restrict_array_params in codegen_cuda.cpp).
#pragma once

#include <string>
#include <string_view>

#include "dsl/compile.h"
#include "dsl/infer.h"

namespace luda::dsl {

// What emitted code needs from the launcher.
struct EmitInfo {
  // Its threads must interleave on the cpu target (fibers): it calls a barrier or a warp
  // function, or its threads may wait for one another through memory (atomics or fences,
  // and a while or repeat loop, whose back-edges then let the others run).
  bool needs_fibers = false;
  // It calls cuda.cg.this_grid():sync() (in the kernel or a device function it calls): it
  // must be launched cooperatively, every block of its grid resident at once.
  bool cooperative = false;
  // Its functions take the trailing luda_BoundsRecord* (compile.h): boundscheck, or a
  // 'for' loop whose step may be zero at run time (Lua raises "'for' step is zero").
  bool error_record = false;
  // The cuda.local_array storage of one thread, every function together (an upper bound of
  // what they hold at once: device functions do not recurse).
  std::size_t local_bytes = 0;
};

// Only the generated functions, without the prelude (golden tests compare this part).
// For Target::Cpu, the kernel is followed by its per-thread entry (compile.h, Target).
std::string emit_cuda_functions(const TypedProgram& program, const KernelOptions& options, EmitInfo* info = nullptr);

// The whole source: prelude + `before_functions` (a kernel's declared functions and
// their linked sources) + emit_cuda_functions; first <cooperative_groups.h> for a
// cooperative kernel (NVRTC finds it, and CCCL's headers it needs, in the toolkit).
std::string emit_cuda(const TypedProgram& program, const KernelOptions& options, EmitInfo* info = nullptr,
                      std::string_view before_functions = {});

// The prototypes of the declared functions a program calls (CudaKernel::declarations), as
// their signatures give them: extern "C" __device__, so that a definition of either
// linkage agrees and one that disagrees is the compiler's error at its own line.
std::string emit_declarations(const TypedProgram& program);
// The sources that define them: `link` (the kernel's), then those that came with the
// declarations, each once.
std::vector<std::shared_ptr<const Chunk>> linked_sources(const std::vector<std::shared_ptr<const Chunk>>& link,
                                                         const TypedProgram& program);
// Those sources as one text, each under a #line directive naming its file, then a #line
// back to luda's generated code; "" for none.
std::string emit_linked(const std::vector<std::shared_ptr<const Chunk>>& sources);

// A constant as a CUDA C++ literal of `type` ("0.5f", "3LL", "__int_as_float(0x7f800000)").
std::string cuda_literal(const Constant& c, Scalar type);

}  // namespace luda::dsl

// The CUDA C++ that every generated kernel starts with, in place of CUDA's headers: the
// array struct of compile.h's ABI, index and bounds helpers, Lua's arithmetic (floor
// division and modulo, wrapping integer overflow, logical shifts), atomics and shuffles
// for every element type the builtins allow. NVRTC knows threadIdx, the math functions
// (expf, sqrt, ...), atomicAdd, __shfl_sync and printf without any header, so the
// prelude declares only what NVRTC lacks; a kernel compiles near NVRTC's floor.
//
// Everything it defines starts with `luda_`; codegen renames Lua locals that would clash.
// A change here that changes generated binaries must bump kPreludeVersion (compile.h).
#pragma once

#include <string>
#include <string_view>

namespace luda::dsl {

std::string_view cuda_prelude();

// The prelude with a target's own definitions of its two GPU-only pieces (the cpu target,
// jit/compile/cpu_prelude.h, gives plain C++ ones; everything else is shared text):
//   bounds_fail:     static void luda_fail(luda_BoundsRecord*, int what, int line, int axis,
//                    long long index, long long extent): fill the record (first thread
//                    wins; what = BoundsRecord::hit) and end the calling CUDA thread;
//   lane_and_shared: luda_laneid(), luda_dynamic_shared_bytes() and luda_dynamic_shared
//                    (the block's dynamic shared memory, unsigned char*).
// cuda_prelude() is prelude_with(the PTX versions).
std::string prelude_with(std::string_view bounds_fail, std::string_view lane_and_shared);

}  // namespace luda::dsl

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

#include <string_view>

namespace luda::dsl {

std::string_view cuda_prelude();

}  // namespace luda::dsl

// The cpu target's prelude: the CUDA C++ subset that kernels compiled by the host C++
// compiler use, in plain C++ (GCC and Clang), on top of runtime/cpu_abi.h (embedded
// verbatim: one definition of each struct). It provides
//   __global__ __device__ __host__ __forceinline__ __restrict__ __align__
//   __launch_bounds__ __constant__ __shared__ (static thread_local: a block's threads
//   share one OS thread); cpu_raw_source rewrites extern __shared__ (dynamic) and
//   __noinline__ (a macro of it would break libstdc++'s __attribute__((__noinline__))),
//   threadIdx blockIdx blockDim gridDim warpSize dim3 uint3,
//   __syncthreads(_count/_and/_or) __syncwarp __shfl(_up/_down/_xor)_sync
//   __ballot_sync __all_sync __any_sync __match_any_sync __match_all_sync __activemask
//   __threadfence(_block/_system), cooperative_groups::this_grid().sync() (a cooperative
//   launch's grid barrier),
//   atomicAdd/Sub/Exch/Min/Max/CAS/And/Or/Xor/Inc/Dec with CUDA's signatures (GCC's
//   __atomic builtins on the target memory: what std::atomic_ref is made of, without
//   C++20 or <atomic>'s parse time), the <math.h> functions, rsqrt(f), CUDA's bit casts
//   and integer intrinsics, min/max, __ldg, printf (one piece per call to the runtime).
// A kernel's shared object also defines luda_cpu_bind and luda_cpu_current_slot.
#pragma once

#include <string>
#include <string_view>

namespace luda::jit {

// Bump when the text below changes what compiled kernels do (it is hashed into cache
// keys through the source too; the number names the contract).
inline constexpr int kCpuPreludeVersion = 4;

// The CUDA subset alone: what raw CUDA sources are compiled against.
std::string_view cpu_cuda_subset();

// The subset plus the generated-kernel prelude (dsl/prelude.h) with its cpu pieces: a
// thread out of range fills the BoundsRecord and ends by throwing luda_cpu_exit, which
// the `<entry>_cpu` wrapper that codegen emits catches.
std::string_view cpu_generated_prelude();

// A raw CUDA source ready for the cpu target: `#line 1 "<file>"`, then the source with
// each `extern __shared__ T name[];` turned into a macro for the block's dynamic shared
// memory, each `__noinline__` outside an attribute list into GCC's attribute, and
// `#include <cooperative_groups.h>` dropped (the prelude has its subset: this_grid().sync())
// (line numbers kept with #line). It reads the source's tokens (jit/compile/cuda_scanner.h):
// comments and literals stay as they are.
std::string cpu_raw_source(std::string_view source, std::string_view file_name);

// Whether a raw source calls a barrier or a warp function (its threads then run as fibers):
// whether a name in its code or its directives, not in a comment or a literal, holds one
// of theirs (__syncthreads, __shfl, ...).
bool raw_source_needs_fibers(std::string_view source);

}  // namespace luda::jit

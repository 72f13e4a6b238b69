// The `cpu` target's execution model: a grid runs like a CUDA launch, its blocks spread
// over a pool of OS threads sized to the machine. A kernel is a host-compiled shared
// object that follows runtime/cpu_abi.h; the jit loads it and hands the executor its entry
// points as a CpuKernel.
//
// Within a block (runtime/cpu_block.h): the CUDA threads run as a plain loop when the
// kernel has no barrier or warp operation, and as fibers (Boost.Context) when it does.
//
// A kernel runs in the host's own process, so the executor contains it (cpu_guard.h): a
// fault, exit/abort/assert or an exception in its code, and a stop request
// (runtime/interrupt.h: between blocks, at barriers, and by a signal while its own code
// runs) end the launch with an error naming the kernel, and the process and the executor
// stay usable.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/cpu_abi.h"
#include "runtime/launch.h"

namespace luda {

// A kernel the jit loaded from a shared object.
struct CpuKernel {
  void (*run_thread)(void* const* args) = nullptr;  // <entry>_cpu: one CUDA thread
  luda_cpu_thread** (*current_slot)() = nullptr;    // luda_cpu_current_slot
  bool needs_fibers = false;                        // <entry>_cpu_needs_fibers
  // <entry>_cpu_cooperative: it calls the grid barrier, so cpu_launch runs every block of
  // its grid at once (each on its own OS thread), within cpu_max_cooperative_blocks.
  bool cooperative = false;
  // <entry>_cpu_block when the object exports it: loop mode then makes one call per block.
  void (*run_block)(void* const* args, luda_cpu_thread* block) = nullptr;
  // Its shared object's code (cpu_code_range): a stop request ends the kernel by a signal
  // while it executes there (runtime/cpu_guard.h); empty, only between blocks and at
  // barriers.
  const void* code_begin = nullptr;
  const void* code_end = nullptr;
  // The bytes of local arrays one CUDA thread keeps on its stack (generated code knows);
  // unknown for raw code, which then gets what a GPU thread may use, 512 KiB of local
  // memory. A fiber's stack has room for calls besides (runtime/cpu_block.cpp).
  std::optional<std::size_t> local_bytes;
};

// The executable code of the shared object that holds `address` (a kernel's entry).
void cpu_code_range(const void* address, const void** begin, const void** end);

// The services passed to luda_cpu_bind: one static table for every kernel. They never
// throw; a misuse (a barrier in a kernel not marked needs_fibers) is reported by the
// cpu_launch that ran it.
const luda_cpu_runtime* cpu_runtime();

// The cpu target's limits, CUDA's (sm_70 and later), so that a launch that works here
// works on a GPU: 1024 threads per block, block (1024, 1024, 64), grid (2^31-1, 65535,
// 65535), dynamic shared memory up to 227 KiB (the largest opt-in of current GPUs).
// Errors say the rule, as LaunchConfig::validate does for a device:
// "grid dimension x is 0: each grid and block dimension must be at least 1",
// "block of (2048,) has 2048 threads; cpu allows at most 1024 per block",
// "block dimension z is 65; cpu allows at most 64 in z",
// "grid dimension y is 70000; cpu allows at most 65535 in y",
// "dynamic shared memory of N bytes (...) is more than cpu allows per block (232448 bytes)".
void validate_cpu_launch(const LaunchConfig& config);

// A cooperative kernel's grid (CpuKernel::cooperative) runs every block at once, as a
// GPU must hold it: at most 16384 threads and 256 blocks in all. cpu_max_cooperative_blocks
// is the most blocks of that many threads (numba's max_cooperative_grid_blocks); 0 for
// fewer than 1. validate_cpu_cooperative's error:
// "a cooperative grid of 300 blocks of 64 threads is more than the cpu device runs at once:
// at most 256 blocks of 64 threads (16384 threads and 256 blocks in all); launch at most
// k:max_cooperative_grid_blocks(64) blocks and loop over the rest of the work (a grid-stride loop)".
unsigned long long cpu_max_cooperative_blocks(long long threads_per_block);
void validate_cpu_cooperative(const LaunchConfig& config);

// Runs a grid like a CUDA launch and waits for it: grid x block CUDA threads, with
// config.shared_mem bytes of dynamic shared memory per block (16-byte aligned, not
// zeroed); config.stream is ignored (a launch is synchronous). args[i] points at kernel
// argument i. The calling thread runs blocks too, so launches from several host threads
// at once are safe and each makes progress. Throws as validate_cpu_launch; an exception
// thrown by the kernel's code is rethrown here (the first one, after the grid stopped).
// What stops the kernel is an error that starts with `who` ("kernel 'k'"):
//   "kernel 'k' crashed on the cpu device: invalid memory access at address 0x0 (SIGSEGV): ...",
//   "kernel 'k' failed an assertion: n > 0 (k.cu:3, in void k(int))" (exit, abort, throw alike),
//   Interrupted "kernel 'k' was interrupted; the arrays it was writing may hold partial results".
void cpu_launch(const CpuKernel& kernel, const LaunchConfig& config, void* const* args,
                std::string_view who = "kernel");

// OS threads that run blocks (the caller's included): LUDA_CPU_THREADS when set, else
// std::thread::hardware_concurrency(). Read once, at the first launch.
unsigned cpu_thread_count();

// Runs task(0) ... task(n - 1), n = after.size(), on the threads that run blocks (the
// caller's included): task i once every task listed in after[i] has finished (the lists
// make no cycle), independent ones at the same time. A task after one that threw is
// skipped; once every task has finished or been skipped, the first error by task index is
// rethrown. A task may launch kernels (cpu_launch): its thread runs their blocks too.
void cpu_run_graph(std::span<const std::vector<std::size_t>> after, const std::function<void(std::size_t)>& task);

// The thread count a LUDA_CPU_THREADS value asks for; null or "" means the machine's.
// Error: "LUDA_CPU_THREADS is 'abc': expected a whole number of threads from 1 to 1024".
unsigned cpu_threads_from_env(const char* value);

}  // namespace luda

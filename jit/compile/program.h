// CUDA C++ to code loaded where it runs: the one compile-and-load path that cuda.jit
// kernels (jit/kinds/jit_kernel.h), the kernel kinds (jit/kinds/elementwise.h) and raw modules
// (jit/raw/raw_module.h) share, and the launch step of every call.
//   cuda: the disk cache (binary_key), else NVRTC (a cubin for the device's exact arch,
//         with the lowered names of the program's name expressions), stored;
//         cuModuleLoadData; cuModuleGetFunction(entry) when the program names one.
//   cpu:  the host C++ compiler through the same disk cache, dlopened once per process
//         (jit/compile/host_compiler.h); the entry's <entry>_cpu symbols.
// A compiler failure is told at the Lua line that the code's #line directives name
// (jit/compile/nvrtc_diagnostics.h), with the compiler's whole message after it.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/compile.h"
#include "jit/compile/disk_cache.h"
#include "jit/compile/host_compiler.h"
#include "jit/compile/nvrtc.h"
#include "jit/compile/target.h"
#include "runtime/cpu_executor.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace luda::jit {

// Compile-path counters, for tests and :stats().
struct JitStats {
  std::uint64_t calls = 0;            // launches
  std::uint64_t memory_hits = 0;      // launches whose signature was already loaded
  std::uint64_t specializations = 0;  // front-end runs (argument-type signatures made)
  std::uint64_t disk_hits = 0;        // binaries found in the disk cache
  std::uint64_t disk_misses = 0;
  std::uint64_t nvrtc_compiles = 0;
  std::uint64_t host_compiles = 0;  // the cpu target's host C++ compiler runs
  std::uint64_t loads = 0;          // cuModuleLoadData, or dlopen for the cpu target
  double frontend_seconds = 0;      // the front end (compile_kernel, a kind's frontend)
  double compile_seconds = 0;       // NVRTC's, or the host compiler's for the cpu target
  double load_seconds = 0;          // disk lookup + module load
};

// One program as the compilers see it. Views: the caller keeps the text alive.
struct ProgramText {
  std::string_view code;  // complete: the prelude included (the cpu prelude for cpu)
  // The extern "C" kernel to look up (part of the cache key); empty for a module whose
  // kernels its caller looks up (a raw module's).
  std::string_view entry;
  std::span<const std::string> options;  // NVRTC options (generated code's: --use_fast_math, -G)
  // C++ names NVRTC lowers (template kernels, kernels not extern "C"): part of the cache
  // key, their lowered names come back with the binary.
  std::span<const std::string> name_expressions;
  // CUDA C++ as a user wrote it (a raw module's): of its options the host compiler gets
  // -D, -U and -I, and --fmad=false as -ffp-contract=off. Generated code's options ask it
  // for fast math (--use_fast_math) and debug information (-G).
  bool user_source = false;
  std::string_view name;  // diagnostics call the source "<name>.cu"
  std::string_view what;  // "kernel 'add'": cache debug output and messages
  // Where the code's #line directives point; a compiler failure is told at the first of
  // these that its log names.
  std::span<const std::shared_ptr<const dsl::Chunk>> chunks;
  std::size_t local_bytes = 0;  // the cpu target: local arrays per CUDA thread (CpuKernel)
};

// A program compiled for one CUDA architecture: its image (a cubin, or PTX where NVRTC
// gave PTX; NUL-terminated in memory) and the lowered names of its name expressions.
struct CudaBinary {
  std::string image;
  bool cubin = true;
  std::map<std::string, std::string> lowered_names;
};

// A program loaded on one device: a CUDA module and its entry, or the cpu target's shared
// object and its entry points.
struct LoadedProgram {
  int ordinal = kCpuDevice;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::shared_ptr<const CpuModule> cpu_module;
  CpuKernel cpu;
  bool cooperative = false;  // its kernels call the grid barrier: launched cooperatively
};

// Compiles (or finds in `cache`) and loads `program` on `ordinal` (a CUDA ordinal, or
// kCpuDevice for the cpu target), counting what happened in `stats`: cuda_binary, then
// load_binary, or the host compiler's shared object.
LoadedProgram load_program(const ProgramText& program, int ordinal, DiskCache& cache, JitStats& stats);
// The two halves of a CUDA load, for a caller that shares one binary among the devices of
// an architecture: the binary from `cache`, else NVRTC's (stored); and the binary loaded
// on `ordinal`, with the program's entry looked up when it names one.
CudaBinary cuda_binary(const ProgramText& program, int arch, DiskCache& cache, JitStats& stats);
LoadedProgram load_binary(const ProgramText& program, const CudaBinary& binary, int ordinal, JitStats& stats);
// NVRTC's compile of `program` for `arch`, bypassing the disk cache (inspect, tests).
CompiledProgram compile_program(const ProgramText& program, int arch, bool cubin);
// Unloads the CUDA module, if any; never throws (at exit the driver may be gone).
void unload_program(LoadedProgram& loaded) noexcept;

// NVRTC's PTX of `program` for `arch` (inspect("ptx")).
std::string program_ptx(const ProgramText& program, int arch);

// A CUDA device's compute capability as major*10+minor (90 for sm_90).
int device_arch(int ordinal);

// The architecture inspect("ptx") uses when none is named: the current device's, else an
// error for `who` ("kernel 'add'") that says how to name one.
int current_arch_for(std::string_view who);

namespace detail {
// What identifies the NVRTC that would compile, without loading it (loading costs ~8 ms,
// which a warm second process must not pay): the real path, size and mtime of the first
// candidate library that exists; the loaded library's version when none is a file.
std::string nvrtc_identity();
// The disk-cache key of a cuda binary: source, entry, options, name expressions (when
// any), target, arch, NVRTC, prelude and luda versions.
CacheKey binary_key(std::string_view code, std::string_view entry, std::span<const std::string> options, int arch,
                    std::span<const std::string> name_expressions = {});
// The cache's payload of a binary and back (a tag for cubin or PTX, the lowered names
// when there are any, the image); nullopt for bytes that are no payload.
std::string binary_payload(const CudaBinary& binary);
std::optional<CudaBinary> binary_from_payload(std::string_view payload);
CacheKey binary_key(const dsl::CudaKernel& kernel, const std::vector<std::string>& options, int arch);
}  // namespace detail

}  // namespace luda::jit

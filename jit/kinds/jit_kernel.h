// numba.cuda.jit for Lua functions: one JitKernel per luda.cuda.jit(fn) object. It makes a
// specialization per argument signature (dtypes, ndims, C-contiguity, device), each
//   dsl::compile_kernel -> CudaKernel -> disk cache lookup, else NVRTC (cubin for the
//   device's exact arch) -> store -> cuModuleLoadData -> cuModuleGetFunction(entry),
// or, for arrays on the cpu, the cpu target: the same code with the cpu prelude, through
// the host C++ compiler (jit/compile/host_compiler.h) to a shared object run by the cpu executor,
// and launches it. Kernels run where their array arguments are. A call takes the steps
// every kernel's call takes (plan, overlap, lookup, pack, launch: jit/call/call_key.h,
// overlap.h, call_cache.h, arg_buffer.h, program.h); one whose signature was seen before
// compares a fixed-size key built on the stack with the last call's, or looks it up once:
// no allocation.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dsl/compile.h"
#include "jit/call/array_args.h"
#include "jit/call/call_args.h"
#include "jit/call/call_cache.h"
#include "jit/call/call_key.h"
#include "jit/call/launch.h"
#include "jit/compile/disk_cache.h"
#include "jit/compile/host_compiler.h"
#include "jit/compile/nvrtc.h"
#include "jit/compile/program.h"
#include "jit/kinds/spec_cache.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace luda::jit {

// luda.cuda.jit's options (and the kinds'). boundscheck unset means the target's default:
// on for the cpu device, where an index out of range would corrupt the host process, off
// for cuda, where checks cost a synchronous launch; LUDA_BOUNDSCHECK=0 or 1 (read when the
// kernel is made) overrides it either way, as NUMBA_BOUNDSCHECK does. fastmath passes
// --use_fast_math to NVRTC (-ffast-math to the host compiler on cpu); debug passes -G to
// NVRTC (device debug information, optimizations off), so that cuda-gdb and
// compute-sanitizer show Lua lines, and -g to the host compiler on cpu.
struct JitOptions {
  std::optional<bool> boundscheck;
  bool fastmath = false;
  bool debug = false;
};
// LUDA_BOUNDSCHECK: "0" false, "1" true, unset or "" nullopt. Anything else is an error:
//   LUDA_BOUNDSCHECK is 'maybe': expected 0 (bounds checks off) or 1 (on), or leave it
//   unset for each kernel's boundscheck option (default: on for the cpu device, off for cuda)
std::optional<bool> boundscheck_from_env();
// `option` with LUDA_BOUNDSCHECK applied: what a kernel made now keeps.
std::optional<bool> boundscheck_with_env(std::optional<bool> option);
// Whether code for `target` checks indices under the (env-applied) option.
inline bool checks_bounds(std::optional<bool> option, dsl::Target target) {
  return option.value_or(target == dsl::Target::Cpu);
}

inline constexpr int kMaxJitArgs = 64;

// The argument signature of one call (jit/call/call_key.h): each argument's code (arrays
// passed whole), the device the call runs on (-1 in the key of a dsl signature for the
// cuda target, kCpuDevice for the cpu target's), and flags NoAlias when no two array
// arguments may share memory (dsl::KernelOptions::noalias).
using SignatureKey = CallKey<kMaxJitArgs>;

// The kernel-language type of each argument, by docs/language.md's rules: arrays by dtype,
// ndim and layout; a Lua float is weak and takes the widest floating dtype among the array
// arguments (float64 when there is none); a Lua integer is weak int64; typed scalars and
// booleans are strong.
std::vector<dsl::Type> argument_types(std::span<const KernelArg> args);
// The key of a call's arguments on `device` (the overlap step decides NoAlias), or of
// those types (-1: no device). Error past kMaxJitArgs arguments.
SignatureKey signature_key(std::span<const KernelArg> args, int device);
SignatureKey signature_key(std::span<const dsl::Type> types, int device, bool noalias = false);

class JitKernel {
 public:
  // How a specialization's CUDA C++ is made: dsl::compile_kernel, or a hand-written one
  // in tests.
  using Frontend = std::function<dsl::CudaKernel(const dsl::KernelRequest&, dsl::Environment&)>;

  struct Setup {
    dsl::FunctionSource function;
    dsl::FunctionHandle handle = nullptr;
    std::string name;                      // "" -> "kernel"
    std::vector<std::string> param_names;  // for messages; may be empty
    JitOptions options;
    Frontend frontend;           // empty -> dsl::compile_kernel
    DiskCache* cache = nullptr;  // null -> DiskCache::global()
    // CUDA C++ sources compiled with the kernel (Numba's link=): where the device functions
    // it calls that cuda.declare_device declared are defined. Chunks marked is_cuda.
    std::vector<std::shared_ptr<const dsl::Chunk>> link;
  };
  // `env` must outlive the kernel (stdlib keeps both in one object).
  JitKernel(Setup setup, dsl::Environment& env);
  ~JitKernel();  // unloads modules; never throws
  JitKernel(const JitKernel&) = delete;
  JitKernel& operator=(const JitKernel&) = delete;

  const std::string& name() const { return name_; }
  const JitOptions& options() const { return options_; }

  // Specializes (first time per signature) and launches where the array arguments are:
  // all on cpu -> the cpu target (synchronous), all on cuda:N -> that device; mixed, an
  // error naming them (arrays_device). No arrays: the thread's current device. With
  // boundscheck, waits for the kernel and raises "kernel 'hist' at hist.lua:14: index 1024
  // out of range for axis 0 of size 1024" when a thread indexed out of range.
  void launch(const LaunchConfig& config, std::span<const KernelArg> args);

  // Numba's compile(signature): types and emits the kernel for "void(float32[:], ...)" and
  // compiles and loads it for the current device (the cpu target when that is cpu). Calls whose
  // arguments convert to it (weak numbers, arrays of any layout for a "[:]" parameter) use it.
  void compile(std::string_view signature);

  // "types" (the typed function), "cuda" (the CUDA C++), "ptx" (NVRTC's PTX for `arch`, or
  // the current device's when 0). An empty signature names the only specialization.
  std::string inspect(std::string_view kind, std::string_view signature, int arch);

  // Numba's max_cooperative_grid_blocks: the most blocks of `block` threads (and
  // `shared_mem` bytes of dynamic shared memory) the current device holds at once, the
  // limit of a grid that calls cuda.cg.this_grid():sync(). On cpu it depends on the block
  // alone (cpu_max_cooperative_blocks); on a GPU, on the kernel's registers and shared
  // memory too: the specialization compiled for that device (the first, when several are),
  // else an error that says to call or compile the kernel first.
  long long max_cooperative_grid_blocks(const Dim3& block, unsigned shared_mem);

  // The names of the argument signatures compiled so far, in Numba notation.
  std::vector<std::string> signatures() const;
  JitStats stats() const;

 private:
  struct Specialization {  // per argument types and target
    std::vector<dsl::Type> types;
    dsl::Target target = dsl::Target::Cuda;
    dsl::CudaKernel kernel;
    bool from_signature = false;  // made by compile(signature)
    bool noalias = false;         // compiled for disjoint array arguments
    // Where the code's #line directives point: its linked sources, then the kernel's chunk.
    std::vector<std::shared_ptr<const dsl::Chunk>> chunks;
    bool linked_needs_fibers = false;  // a linked source calls barriers or warp functions (cpu)
  };
  struct Loaded {  // per argument types and device
    Specialization* spec = nullptr;
    LoadedProgram program;           // program.ordinal: a CUDA ordinal or kCpuDevice
    std::shared_ptr<Buffer> bounds;  // the BoundsRecord, when spec->kernel.bounds_record
  };

  Specialization& specialize(const std::vector<dsl::Type>& types, bool from_signature, bool noalias = false,
                             dsl::Target target = dsl::Target::Cuda);
  Specialization* find_convertible(std::span<const KernelArg> args, dsl::Target target);
  // The code of `spec` loaded on `ordinal`: one loaded already (another signature converted
  // to it, or compile()), else loaded now. cache_'s mutex held.
  Loaded& load(Specialization& spec, int ordinal);
  ProgramText program_text(const Specialization& spec) const;
  void check_count(std::size_t n) const;
  Specialization& only_or_named(std::string_view signature);
  std::vector<std::string> signatures_locked() const;
  ArgBuffer& pack(const dsl::CudaKernel& kernel, const LaunchConfig& config, std::span<const KernelArg> args) const;

  dsl::FunctionSource function_;
  dsl::FunctionHandle handle_;
  std::string name_;
  std::string what_;   // "kernel '<name>'"
  const char* label_;  // "kernel '<name>' (<chunk>:<line>)": driver::note_launch
  std::vector<std::string> param_names_;
  JitOptions options_;
  std::vector<std::shared_ptr<const dsl::Chunk>> link_;
  Frontend frontend_;
  DiskCache* disk_cache_;
  dsl::Environment& env_;

  CallCache<Loaded, kMaxJitArgs> cache_;  // per call key; its mutex guards the specializations too
  SpecCache<SignatureKey, Specialization> specs_;
};

}  // namespace luda::jit

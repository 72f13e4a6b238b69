// CuPy's RawModule and RawKernel: CUDA C++ source as is, compiled by NVRTC for the exact
// architecture of each device that runs it (through the program loader and its disk
// cache, as generated code is: jit/compile/program.h), loaded once per context, launched with
// arguments checked against the kernel's parameter list as that compile read it
// (jit/raw/reflection.h: the -D options, #if, macros and typedefs count). On cpu
// arrays, the same source is compiled by the host C++ compiler against the cpu prelude
// (jit/compile/cpu_prelude.h), with an entry per kernel that reads each argument as the host
// compiler types its parameter, and run by the cpu executor. A module may also be loaded
// from a compiled file (CuPy's RawModule(path=)): a cubin, PTX or fatbin image, which only
// CUDA devices run, whose kernels take their arguments as CuPy passes them.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/call/call_args.h"
#include "jit/call/call_cache.h"
#include "jit/call/launch.h"
#include "jit/compile/host_compiler.h"
#include "jit/compile/nvrtc.h"
#include "jit/compile/program.h"
#include "jit/raw/arguments.h"
#include "jit/raw/params.h"
#include "runtime/launch.h"
#include "runtime/ndarray.h"

namespace luda::jit {

class RawKernel;

// A module's global variable (`__constant__` or `__device__`) on one device: its address
// there and its size in bytes. The memory lives as long as the module.
struct ModuleGlobal {
  Device device;
  void* address = nullptr;
  std::size_t bytes = 0;
};

class RawModule : public std::enable_shared_from_this<RawModule> {
 public:
  // Nothing is compiled until a device needs it. `options` go to NVRTC as given.
  // `cooperative` (CuPy's enable_cooperative_groups): its kernels are launched
  // cooperatively, so they may call cooperative_groups::this_grid().sync().
  // It compiles and loads through the program loader (jit/compile/program.h): its cubins and
  // cpu objects are found in `cache` (null: DiskCache::global()) as generated code's are.
  static std::shared_ptr<RawModule> create(std::string source, std::vector<std::string> options = {},
                                           bool cooperative = false, DiskCache* cache = nullptr);
  // The compiled module in the file at `path`: a cubin (ELF), PTX (text) or fatbin, read
  // now and loaded on each CUDA device at first use. Errors: the file cannot be read, or
  // it is none of the three ("'k.cu' is not a cubin, PTX or fatbin file ...").
  static std::shared_ptr<RawModule> load_file(const std::string& path, bool cooperative = false);

  const std::string& source() const { return source_; }
  // The file a module was loaded from ("" for one made from source), and what it holds
  // ("cubin", "PTX", "fatbin").
  const std::string& path() const { return path_; }
  const std::string& image_kind() const { return image_kind_; }
  const std::vector<std::string>& options() const { return options_; }
  bool cooperative() const { return cooperative_; }
  // Error "no kernel named 'foo' in the source (its __global__ functions: add, scale)"
  // when the source visibly lacks it. Template kernels are asked for with their
  // arguments: get_function("scale<float>").
  std::shared_ptr<RawKernel> get_function(const std::string& name);
  // Names of the __global__ functions the source defines.
  std::vector<std::string> kernel_names() const { return list_kernels(source_); }
  // The module loaded in the device's primary context (compiled for its arch on first use).
  CUmodule module(int ordinal);
  // Compiles (no GPU needed) for an arch; used by tests and `inspect`. A module loaded from
  // a file gives its PTX when asked for PTX and it is PTX; anything else is an error.
  CompiledProgram compile_for(int arch, bool cubin = true) const;
  // The global variable `name` (CuPy's get_global) where `device` runs the module: on a
  // CUDA device, cuModuleGetGlobal in the module loaded there; on the cpu, the variable of
  // the shared object the host compiler built. Errors name what the module defines
  // ("no global variable named 'k' in the module (...)"). Once a global is taken, the
  // module is never compiled again on that target (a new compile would have its own copy
  // of the variable): a later get_function that would need one is an error.
  ModuleGlobal global(Device device, const std::string& name);
  // Number of NVRTC compiles (a binary found in the disk cache is none) and of module
  // loads on CUDA devices so far (tests: "loaded once").
  int compile_count() const;
  int load_count() const;
  // What compiling and loading took on every device: disk hits and misses, NVRTC and host
  // compiles, loads, times (calls and memory hits are its kernels': RawKernel::stats).
  JitStats stats() const;
  // The cpu target's shared object (compiled, or taken from the disk cache, on first use),
  // and what that took.
  std::shared_ptr<const CpuModule> cpu_module();
  HostCompileStats cpu_stats() const;
  // The source the host compiler gets: the cpu prelude, the source, the entries.
  std::string cpu_source() const;

  ~RawModule();  // unloads its modules; never throws
  RawModule(const RawModule&) = delete;
  RawModule& operator=(const RawModule&) = delete;

 private:
  RawModule(std::string source, std::vector<std::string> options, bool cooperative);
  // Adds `name`'s name expressions: its C++ name when it is not extern "C" (or not visibly
  // so), and its parameter list's reflection (kernel_reflection.h) unless the source
  // defines the name more than once (overloads: which one runs depends on the arguments).
  void add_kernel(const std::string& name);
  // The module for `ordinal` (loaded on first use), the symbol of `kernel` in it (its
  // lowered C++ name, or `kernel` itself) and its parameter list as NVRTC read it (nullopt
  // where not reflected), read under one lock.
  CUmodule load(int ordinal, const std::string& kernel, std::string* symbol, std::optional<KernelSignature>* signature);
  // `kernel`'s parameter list from a compile's lowered names, named from the source text
  // where it shows as many names; nullopt where it is not reflected.
  std::optional<KernelSignature> reflected(const std::map<std::string, std::string>& lowered,
                                           const std::string& kernel) const;
  // The parameter list the host compiler read, from the cpu module's reflection entry.
  std::optional<KernelSignature> cpu_signature(const CpuModule& module, const std::string& kernel) const;
  // Whether `kernel`'s parameter list is reflected (add_kernel).
  bool reflects(const std::string& kernel) const;
  CompiledProgram compile_locked(int arch, bool cubin) const;  // mutex_ held
  // The CUDA source NVRTC compiles (the reflections of parameter lists after the user's),
  // and the program that the loader sees, `code` being its text.
  std::string cuda_code() const;
  ProgramText program_text(std::string_view code) const;
  [[noreturn]] void missing_kernel(const std::string& name) const;
  // Error "no kernel named 'old' in the source as the compiler reads it (...)" when a
  // compiler's log says that a kernel asked for is not there (under #if 0, or a wrong name
  // where macros make the kernels): the reflection of its parameter list names it.
  // Returns otherwise.
  void explain_missing(std::string_view log) const;

  // Why a module loaded from a file cannot run on the cpu, and what to do instead.
  [[noreturn]] void no_cpu_image(std::string_view who) const;
  // The error for a name the module lacks: `what` is "kernel" or "global variable".
  [[noreturn]] void missing_in_image(std::string_view what, const std::string& name) const;

  std::string source_;
  std::vector<std::string> options_;
  bool cooperative_ = false;
  std::string path_;                // a module loaded from a file: the file
  std::string image_kind_;          // ... "cubin", "PTX" or "fatbin"
  std::string image_;               // ... its bytes (NUL-terminated in memory, as cuModuleLoadData reads PTX)
  bool globals_taken_ = false;      // get_global was answered on a CUDA device
  bool cpu_globals_taken_ = false;  // ... on the cpu
  std::string program_name_ = "raw_module.cu";  // what NVRTC's messages call the source
  std::vector<std::string> name_expressions_;   // kernels declared without extern "C", reflections
  std::vector<std::string> reflected_;          // kernels whose parameter lists are reflected
  mutable std::mutex mutex_;
  std::string what_;  // "raw module 'add.cu'": the loader's messages and cache debug output
  DiskCache* cache_;
  std::map<int, LoadedProgram> modules_;                       // per device ordinal
  std::map<int, std::map<std::string, std::string>> lowered_;  // per ordinal
  std::map<int, CudaBinary> binaries_;                         // per arch: devices of one arch share a compile
  // Modules compiled before a new name expression was added: kept loaded, since kernels
  // may still hold functions from them.
  std::vector<LoadedProgram> retired_;
  mutable int compiles_ = 0;  // compile_for's
  int loads_ = 0;
  JitStats stats_;  // the loader's, on CUDA devices
  std::shared_ptr<const CpuModule> cpu_module_;
  std::size_t cpu_kernels_ = 0;  // how many of reflected_ cpu_module_ has entries for
  JitStats cpu_stats_;           // the loader's, on the cpu
  friend class RawKernel;
};

class RawKernel {
 public:
  RawKernel(std::shared_ptr<RawModule> module, std::string name);
  static std::shared_ptr<RawKernel> create(std::string source, std::string name, std::vector<std::string> options = {},
                                           DiskCache* cache = nullptr);

  const std::string& name() const { return name_; }
  const std::shared_ptr<RawModule>& raw_module() const { return module_; }

  // The parameter list as the compiler for `device` reads it (compiling for it first);
  // nullopt where it is not reflected (an overloaded name): arguments then pass as CuPy
  // passes them. signature_for_arch reads NVRTC's for an arch, with no GPU.
  std::optional<KernelSignature> signature(Device device);
  std::optional<KernelSignature> signature_for_arch(int arch);

  // The most blocks of `block` threads (and `shared_mem` bytes of dynamic shared memory)
  // the current device holds at once: the limit of a cooperative launch (compiling for
  // the device first). Numba's max_cooperative_grid_blocks.
  long long max_cooperative_grid_blocks(const Dim3& block, unsigned shared_mem);

  // Picks the device from the array arguments (else the thread's current device), has the
  // kernel compiled there, checks the configuration and the arguments (count; array dtypes
  // against pointee types; numbers converted to the declared scalar types) against that
  // compile's parameter list, and launches. Errors name the kernel, the parameter and the
  // fix. `written` says, argument by argument, which arrays the kernel writes (what a
  // graph being recorded orders it by); empty, as for user code: any array it is given.
  void launch(const LaunchConfig& config, std::span<const KernelArg> args, std::span<const bool> written = {});

  // The kernel in the device's primary context, compiled and loaded on first use.
  // Error "no kernel named 'foo' in the source (...)" when the module lacks the symbol.
  CUfunction function(int ordinal);

  // Its launches (calls, and memory hits: launches on a device it was loaded on already),
  // with its module's compiles and loads.
  JitStats stats() const;

 private:
  // The kernel where one device runs it (the cpu target's is made once: the executor
  // stops a kernel by a signal while it runs its own code, which lies in its object).
  struct Target {
    LoadedProgram program;  // its module's there, with this kernel's entry
    std::optional<KernelSignature> signature;
  };
  // The target on `ordinal` (a CUDA ordinal or kCpuDevice), compiled and loaded there
  // on first use; not counted as a launch.
  const Target& target(int ordinal);
  Target& load_target(int ordinal);  // targets_' mutex held
  Target& load_cpu_target();

  std::shared_ptr<RawModule> module_;
  std::string name_;
  std::string who_;                      // "raw_kernel 'name'"
  const char* label_;                    // who_, for driver::note_launch
  std::vector<std::string> text_names_;  // the parameters' names in the source, for errors before a compile
  CallCache<Target, 0> targets_;         // keyed by the device alone
};

}  // namespace luda::jit

// CuPy's RawModule and RawKernel: CUDA C++ source as is, compiled by NVRTC for the exact
// architecture of each device that runs it, loaded once per context, launched with
// arguments checked against the kernel's parameter list. On cpu arrays, the same source
// is compiled by the host C++ compiler against the cpu prelude (jit/cpu_prelude.h), with
// a per-thread entry generated from each kernel's parameter list, and run by the cpu
// executor.
#pragma once

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/kernel_args.h"
#include "jit/host_compiler.h"
#include "jit/kernel_params.h"
#include "jit/nvrtc.h"
#include "runtime/launch.h"
#include "runtime/ndarray.h"

namespace luda::jit {

class RawKernel;

class RawModule : public std::enable_shared_from_this<RawModule> {
 public:
  // Nothing is compiled until a device needs it. `options` go to NVRTC as given.
  static std::shared_ptr<RawModule> create(std::string source, std::vector<std::string> options = {});

  const std::string& source() const { return source_; }
  const std::vector<std::string>& options() const { return options_; }
  // Error "no kernel named 'foo' in the source (its __global__ functions: add, scale)"
  // when the source visibly lacks it. Template kernels are asked for with their
  // arguments: get_function("scale<float>").
  std::shared_ptr<RawKernel> get_function(const std::string& name);
  // Names of the __global__ functions the source defines.
  std::vector<std::string> kernel_names() const { return list_kernels(source_); }
  // The module loaded in the device's primary context (compiled for its arch on first use).
  CUmodule module(int ordinal);
  // Compiles (no GPU needed) for an arch; used by tests and `inspect`.
  CompiledProgram compile_for(int arch, bool cubin = true) const;
  // Number of NVRTC compiles and module loads so far (tests: "loaded once").
  int compile_count() const;
  int load_count() const;
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
  RawModule(std::string source, std::vector<std::string> options);
  // Adds `name` as a name expression when it is not extern "C" (or not visibly so).
  void add_kernel(const std::string& name);
  // The module for `ordinal` (loaded on first use) and the symbol of `kernel` in it
  // (its lowered C++ name, or `kernel` itself), read under one lock.
  CUmodule load(int ordinal, const std::string& kernel, std::string* symbol);
  CompiledProgram compile_locked(int arch, bool cubin) const;  // mutex_ held
  [[noreturn]] void missing_kernel(const std::string& name) const;

  std::string source_;
  std::vector<std::string> options_;
  std::string program_name_ = "raw_module.cu";  // what NVRTC's messages call the source
  std::vector<std::string> name_expressions_;  // kernels declared without extern "C"
  mutable std::mutex mutex_;
  std::map<int, CUmodule> modules_;            // per device ordinal
  std::map<int, std::map<std::string, std::string>> lowered_;  // per ordinal
  std::map<int, CompiledProgram> images_;      // per arch: devices of one arch share a compile
  // Modules compiled before a new name expression was added: kept loaded, since kernels
  // may still hold functions from them.
  std::vector<std::pair<int, CUmodule>> retired_;
  mutable int compiles_ = 0;
  int loads_ = 0;
  std::shared_ptr<const CpuModule> cpu_module_;
  HostCompileStats cpu_stats_;
  friend class RawKernel;
};

class RawKernel {
 public:
  RawKernel(std::shared_ptr<RawModule> module, std::string name);
  static std::shared_ptr<RawKernel> create(std::string source, std::string name,
                                           std::vector<std::string> options = {});

  const std::string& name() const { return name_; }
  // Parsed parameter list; nullopt when it cannot be parsed (templates, macros).
  const std::optional<KernelSignature>& signature() const { return signature_; }
  const std::shared_ptr<RawModule>& raw_module() const { return module_; }

  // Checks the configuration and the arguments (count; array dtypes against pointee
  // types; numbers converted to the declared scalar types), picks the device from the
  // array arguments (else the thread's current device), and launches. Errors name the
  // kernel, the parameter and the fix.
  void launch(const LaunchConfig& config, std::span<const KernelArg> args);

  // The kernel in the device's primary context, compiled and loaded on first use.
  // Error "no kernel named 'foo' in the source (...)" when the module lacks the symbol.
  CUfunction function(int ordinal);

 private:
  void launch_cpu(const LaunchConfig& config, PackedArgs& packed);
  const CpuKernel& cpu_kernel();

  std::shared_ptr<RawModule> module_;
  std::string name_;
  std::string who_;  // "raw_kernel 'name'"
  const char* label_;  // who_, for driver::note_launch
  std::atomic<const CpuKernel*> cpu_kernel_{nullptr};  // made on the first cpu launch
  std::unique_ptr<CpuKernel> cpu_kernel_storage_;
  std::optional<KernelSignature> signature_;
  std::mutex mutex_;
  std::map<int, CUfunction> functions_;
  // functions_ of the first devices, read without the lock on every launch.
  static constexpr int kFastOrdinals = 16;
  std::array<std::atomic<CUfunction>, kFastOrdinals> fast_functions_{};
};

}  // namespace luda::jit

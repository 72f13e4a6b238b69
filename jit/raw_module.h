// CuPy's RawModule and RawKernel: CUDA C++ source as is, compiled by NVRTC for the exact
// architecture of each device that runs it, loaded once per context, launched with
// arguments checked against the kernel's parameter list.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/kernel_params.h"
#include "runtime/launch.h"
#include "runtime/ndarray.h"

namespace luda::jit {

// One kernel argument as the host gives it.
struct KernelArg {
  enum class Kind { Array, Typed, Int, Float, Bool };
  Kind kind = Kind::Int;
  const NDArray* array = nullptr;  // Array (not owned; lives through the launch call)
  Scalar typed;                    // Typed: luda.int32(v) and friends; strong
  std::int64_t i = 0;              // Int: a Lua integer (weak)
  double f = 0;                    // Float: a Lua float (weak)
  bool b = false;                  // Bool

  static KernelArg of_array(const NDArray& a) { KernelArg k; k.kind = Kind::Array; k.array = &a; return k; }
  static KernelArg of_typed(Scalar s) { KernelArg k; k.kind = Kind::Typed; k.typed = s; return k; }
  static KernelArg of_int(std::int64_t v) { KernelArg k; k.kind = Kind::Int; k.i = v; return k; }
  static KernelArg of_float(double v) { KernelArg k; k.kind = Kind::Float; k.f = v; return k; }
  static KernelArg of_bool(bool v) { KernelArg k; k.kind = Kind::Bool; k.b = v; return k; }
};

class RawKernel;

class RawModule : public std::enable_shared_from_this<RawModule> {
 public:
  // Nothing is compiled until a device needs it. `options` go to NVRTC as given.
  static std::shared_ptr<RawModule> create(std::string source, std::vector<std::string> options = {});

  const std::string& source() const { return source_; }
  const std::vector<std::string>& options() const { return options_; }
  // Error "no kernel named 'foo' in the module (its __global__ functions: add, scale)"
  // when the source visibly lacks it.
  std::shared_ptr<RawKernel> get_function(const std::string& name);
  // The module loaded in the device's primary context (compiled for its arch on first use).
  CUmodule module(int ordinal);
  // Compiles (no GPU needed) for an arch; used by tests and `inspect`.
  CompiledProgram compile_for(int arch, bool cubin = true) const;

 private:
  RawModule(std::string source, std::vector<std::string> options);
  std::string source_;
  std::vector<std::string> options_;
  std::vector<std::string> name_expressions_;  // kernels declared without extern "C"
  std::mutex mutex_;
  std::map<int, CUmodule> modules_;            // per device ordinal
  std::map<int, std::map<std::string, std::string>> lowered_;  // per ordinal
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

  CUfunction function(int ordinal);

 private:
  std::shared_ptr<RawModule> module_;
  std::string name_;
  std::optional<KernelSignature> signature_;
  std::map<int, CUfunction> functions_;
};

}  // namespace luda::jit

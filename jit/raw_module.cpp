#include "jit/raw_module.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "runtime/device.h"
#include "runtime/driver.h"

namespace luda::jit {
namespace {

// "scale<float>" -> "scale"
std::string base_name(const std::string& name) {
  std::string base = name.substr(0, name.find('<'));
  while (!base.empty() && base.back() == ' ') base.pop_back();
  return base;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// RawModule

std::shared_ptr<RawModule> RawModule::create(std::string source, std::vector<std::string> options) {
  return std::shared_ptr<RawModule>(new RawModule(std::move(source), std::move(options)));
}

RawModule::RawModule(std::string source, std::vector<std::string> options)
    : source_(std::move(source)), options_(std::move(options)) {
  // C++ kernels are named through NVRTC name expressions. Adding them all now means a
  // later get_function rarely forces a recompile; overloads are skipped, since their
  // bare name is ambiguous.
  std::vector<KernelDefinition> defs = find_kernels(source_);
  for (const auto& d : defs) {
    if (d.extern_c || d.is_template) continue;
    auto same = std::count_if(defs.begin(), defs.end(), [&](const auto& o) { return o.name == d.name; });
    if (same == 1) name_expressions_.push_back(d.name);
  }
}

RawModule::~RawModule() {
  auto unload = [](int ordinal, CUmodule m) {
    try {
      ContextScope scope(ordinal);
      driver::api().cuModuleUnload(m);
    } catch (...) {  // a destructor never throws; at exit the driver may be gone
    }
  };
  for (const auto& [ordinal, m] : modules_) unload(ordinal, m);
  for (const auto& [ordinal, m] : retired_) unload(ordinal, m);
}

void RawModule::missing_kernel(const std::string& name) const {
  std::vector<std::string> names = list_kernels(source_);
  if (names.empty())  // its kernels are not visible to luda (made by macros?)
    fail("no kernel named '{}' in the compiled module (check the name; a kernel looked up by "
         "name must be declared extern \"C\" __global__)",
         name);
  if (std::find(names.begin(), names.end(), base_name(name)) != names.end())
    fail("no kernel named '{}' in the compiled module (declare it extern \"C\" __global__; a "
         "template kernel is named with its arguments, e.g. '{}<float>')",
         name, base_name(name));
  fail("no kernel named '{}' in the source (its __global__ functions: {})", name, fmt::join(names, ", "));
}

std::shared_ptr<RawKernel> RawModule::get_function(const std::string& name) {
  std::vector<std::string> names = list_kernels(source_);
  if (names.empty() && source_.find("__global__") == std::string::npos)
    fail("no kernel named '{}' in the source (it defines no __global__ function)", name);
  // A source whose kernels we cannot see (made by macros) is left to the driver to judge.
  if (!names.empty() && std::find(names.begin(), names.end(), base_name(name)) == names.end())
    missing_kernel(name);
  return std::make_shared<RawKernel>(shared_from_this(), name);
}

void RawModule::add_kernel(const std::string& name) {
  std::vector<KernelDefinition> defs = find_kernels(source_);
  std::string base = base_name(name);
  bool visible = false, extern_c = false;
  for (const auto& d : defs) {
    if (d.name != base) continue;
    visible = true;
    extern_c = extern_c || (d.extern_c && !d.is_template && base == name);
  }
  if (!visible || extern_c) return;  // looked up by its own name
  std::lock_guard lock(mutex_);
  if (std::find(name_expressions_.begin(), name_expressions_.end(), name) != name_expressions_.end())
    return;
  name_expressions_.push_back(name);
  // What was compiled lacks the new name: compile again on next use.
  for (const auto& m : modules_) retired_.push_back(m);
  modules_.clear();
  lowered_.clear();
  images_.clear();
}

CompiledProgram RawModule::compile_locked(int arch, bool cubin) const {
  CompileRequest request;
  request.source = source_;
  request.program_name = program_name_;
  request.arch = arch;
  request.cubin = cubin;
  request.options = options_;
  request.name_expressions = name_expressions_;
  ++compiles_;
  return compile(request);
}

CompiledProgram RawModule::compile_for(int arch, bool cubin) const {
  std::lock_guard lock(mutex_);
  return compile_locked(arch, cubin);
}

int RawModule::compile_count() const {
  std::lock_guard lock(mutex_);
  return compiles_;
}

int RawModule::load_count() const {
  std::lock_guard lock(mutex_);
  return loads_;
}

CUmodule RawModule::load(int ordinal, const std::string& kernel, std::string* symbol) {
  const DeviceProperties& props = cuda_properties(ordinal);  // NoDeviceError without one
  std::lock_guard lock(mutex_);
  auto it = modules_.find(ordinal);
  if (it == modules_.end()) {
    int arch = props.major * 10 + props.minor;
    auto image = images_.find(arch);
    if (image == images_.end()) image = images_.emplace(arch, compile_locked(arch, true)).first;
    ContextScope scope(ordinal);
    CUmodule m = nullptr;
    LUDA_CU(cuModuleLoadData, &m, image->second.image.c_str());
    ++loads_;
    lowered_[ordinal] = image->second.lowered_names;
    it = modules_.emplace(ordinal, m).first;
  }
  if (symbol) {
    const auto& lowered = lowered_[ordinal];
    auto l = lowered.find(kernel);
    *symbol = l == lowered.end() ? kernel : l->second;
  }
  return it->second;
}

CUmodule RawModule::module(int ordinal) { return load(ordinal, {}, nullptr); }

// ---------------------------------------------------------------------------------------
// RawKernel

RawKernel::RawKernel(std::shared_ptr<RawModule> module, std::string name)
    : module_(std::move(module)), name_(std::move(name)) {
  module_->add_kernel(name_);
  signature_ = find_kernel_signature(module_->source(), name_);
}

std::shared_ptr<RawKernel> RawKernel::create(std::string source, std::string name,
                                             std::vector<std::string> options) {
  auto module = RawModule::create(std::move(source), std::move(options));
  module->program_name_ = base_name(name) + ".cu";
  return module->get_function(name);
}

CUfunction RawKernel::function(int ordinal) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = functions_.find(ordinal); it != functions_.end()) return it->second;
  }
  std::string symbol;
  CUmodule m = module_->load(ordinal, name_, &symbol);
  ContextScope scope(ordinal);
  CUfunction f = nullptr;
  CUresult r = driver::api().cuModuleGetFunction(&f, m, symbol.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) module_->missing_kernel(name_);
  driver::check(r, "cuModuleGetFunction", name_);
  std::lock_guard lock(mutex_);
  return functions_.emplace(ordinal, f).first->second;  // a racing thread's is the same
}

void RawKernel::launch(const LaunchConfig& config, std::span<const KernelArg> args) {
  PackedArgs packed = pack_arguments(name_, signature_, args);
  int ordinal = 0;
  if (packed.device) {
    ordinal = *packed.device;
  } else {
    Device d = current_device();
    if (!d.is_cuda()) {
      if (cuda_device_count() == 0) require_cuda_device(0);  // throws "no CUDA device: <why>"
      fail("raw_kernel '{}' runs on a CUDA device, but this thread's current device is {}; "
           "pass arrays on a CUDA device or select one (luda.device(0):use())",
           name_, d.str());
    }
    ordinal = d.index;
  }
  try {
    config.validate(cuda_properties(ordinal));
  } catch (const NoDeviceError&) {
    throw;
  } catch (const Error& e) {
    throw Error(fmt::format("raw_kernel '{}': {}", name_, e.what()));
  }
  ContextScope scope(ordinal);
  CUfunction f = function(ordinal);
  luda::launch(f, config, packed.data());
}

}  // namespace luda::jit

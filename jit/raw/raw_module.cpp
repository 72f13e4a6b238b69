#include "jit/raw/raw_module.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/ranges.h>

#include "dsl/prelude.h"
#include "jit/call/launch.h"
#include "jit/call/overlap.h"
#include "jit/compile/cpu_prelude.h"
#include "jit/compile/nvrtc_diagnostics.h"
#include "jit/compile/program.h"
#include "jit/raw/reflection.h"
#include "runtime/cpu_executor.h"
#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/format.h"

namespace luda::jit {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `name` can name a kernel: a C identifier, or a C++ one qualified by namespaces
// (ns::scale), with template arguments (scale<float, 4>) for a template kernel:
//   name -> ident ('::' ident)* ('<' balanced '>')?
bool is_kernel_name(std::string_view name) {
  std::size_t i = 0;
  for (;;) {
    if (i >= name.size() || !ident_start(name[i])) return false;
    while (i < name.size() && ident_char(name[i])) ++i;
    if (name.substr(i, 2) != "::") break;
    i += 2;
  }
  if (i == name.size()) return true;
  if (name[i] != '<' || name.back() != '>') return false;
  // The arguments nest <> and (), and a '>' inside () compares (scale<(N > 2)>); the last
  // '>' closes the first '<'.
  int angles = 0, parens = 0;
  for (std::size_t k = i; k < name.size(); ++k) {
    char c = name[k];
    if (c == '\n' || c == '\r' || c == ';' || c == '{' || c == '}' || c == '"') return false;
    if (c == '(') ++parens;
    if (c == ')' && --parens < 0) return false;
    if (parens == 0 && c == '<') ++angles;
    if (parens == 0 && c == '>' && --angles == 0 && k + 1 != name.size()) return false;
  }
  return angles == 0 && parens == 0;
}

// "scale<float>" -> "scale"
std::string base_name(const std::string& name) {
  std::string base = name.substr(0, name.find('<'));
  while (!base.empty() && base.back() == ' ') base.pop_back();
  return base;
}

// What a compiled module file holds, from its first bytes: "cubin" (an ELF object),
// "fatbin" (the fat binary header's magic, 0xBA55ED50 little-endian), "PTX" (text with
// PTX's .version and .target directives), else "".
std::string image_kind_of(std::string_view bytes) {
  if (bytes.starts_with("\x7f"
                        "ELF"))
    return "cubin";
  if (bytes.starts_with("\x50\xed\x55\xba")) return "fatbin";
  if (bytes.find('\0') == std::string_view::npos && bytes.find(".version") != std::string_view::npos &&
      bytes.find(".target") != std::string_view::npos)
    return "PTX";
  return "";
}

// The kernels a PTX text defines: the names after `.entry`.
std::vector<std::string> ptx_entries(std::string_view ptx) {
  std::vector<std::string> out;
  for (std::size_t at = 0; (at = ptx.find(".entry", at)) != std::string_view::npos;) {
    at += 6;
    std::size_t start = at;
    while (start < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[start]))) ++start;
    std::size_t end = start;
    while (end < ptx.size() && (ident_char(ptx[end]) || ptx[end] == '$' || ptx[end] == '.')) ++end;
    std::string_view name = ptx.substr(start, end - start);
    // (luda's own probe, which a PTX from inspect("ptx") holds, is no user's kernel)
    if (end > start && start > at && name.find("luda_r_probe") == std::string_view::npos) out.emplace_back(name);
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// RawModule

std::shared_ptr<RawModule> RawModule::create(std::string source, std::vector<std::string> options, bool cooperative,
                                             DiskCache* cache) {
  auto module = std::shared_ptr<RawModule>(new RawModule(std::move(source), std::move(options), cooperative));
  if (cache) module->cache_ = cache;
  return module;
}

std::shared_ptr<RawModule> RawModule::load_file(const std::string& path, bool cooperative) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("raw_module: cannot read '{}' ({})", path, std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) fail("raw_module: cannot read '{}' ({})", path, std::strerror(errno));
  std::string image = std::move(bytes).str();
  std::string kind = image_kind_of(image);
  if (kind.empty())
    fail("raw_module: '{}' is not a cubin, PTX or fatbin file (what nvcc -cubin, -ptx or -fatbin writes, or "
         "inspect(\"ptx\")); for CUDA C++ source, pass its text: luda.raw_module(source)",
         path);
  auto module = std::shared_ptr<RawModule>(new RawModule({}, {}, cooperative));
  module->path_ = path;
  module->image_kind_ = std::move(kind);
  module->image_ = std::move(image);
  return module;
}

void RawModule::no_cpu_image(std::string_view who) const {
  fail("{}: the module was loaded from the {} file '{}', which only a CUDA device runs; to run "
       "it on the cpu too, make the module from its CUDA source (luda.raw_module(source))",
       who, image_kind_, path_);
}

void RawModule::missing_in_image(std::string_view what, const std::string& name) const {
  if (image_kind_ == "PTX") {
    std::vector<std::string> entries = ptx_entries(image_);
    if (what == "kernel")
      fail("no kernel named '{}' in the PTX file '{}' (its kernels: {})", name, path_,
           entries.empty() ? "none" : fmt::format("{}", fmt::join(entries, ", ")));
  }
  fail("no {} named '{}' in the {} file '{}' (a name declared extern \"C\" is found as written; a C++ one by its "
       "mangled name)",
       what, name, image_kind_, path_);
}

RawModule::RawModule(std::string source, std::vector<std::string> options, bool cooperative)
    : source_(std::move(source)),
      options_(std::move(options)),
      cooperative_(cooperative),
      what_(fmt::format("raw module '{}'", program_name_)),
      cache_(&DiskCache::global()) {
  // C++ kernels are named through NVRTC name expressions, and every kernel's parameter
  // list is reflected through one. Adding them all now means a later get_function rarely
  // forces a recompile. Overloads are skipped, since their bare name is ambiguous, and so
  // is a kernel inside an #if, which the compiler may not see: those wait until asked for.
  std::vector<KernelDefinition> defs = find_kernels(source_);
  for (const auto& d : defs) {
    if (d.is_template || d.conditional) continue;
    auto same = std::count_if(defs.begin(), defs.end(), [&](const auto& o) { return o.name == d.name; });
    if (same != 1) continue;
    if (!d.extern_c) name_expressions_.push_back(d.name);
    name_expressions_.push_back(reflection_expression(d.name));
    reflected_.push_back(d.name);
  }
}

RawModule::~RawModule() {
  for (auto& [ordinal, m] : modules_) unload_program(m);
  for (LoadedProgram& m : retired_) unload_program(m);
}

ProgramText RawModule::program_text(std::string_view code) const {
  ProgramText p;
  p.code = code;
  p.options = options_;
  p.name_expressions = name_expressions_;
  p.user_source = true;
  p.name = std::string_view(program_name_).substr(0, program_name_.size() - 3);  // "<name>.cu"
  p.what = what_;
  return p;
}

void RawModule::missing_kernel(const std::string& name) const {
  if (!path_.empty()) missing_in_image("kernel", name);
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

void RawModule::explain_missing(std::string_view log) const {
  for (std::size_t start = 0; start < log.size();) {
    std::size_t end = std::min(log.find('\n', start), log.size());
    std::string_view line = log.substr(start, end - start);
    start = end + 1;
    // NVRTC's name expressions, and the cpu entries
    if (!line.starts_with("__nv_name_map(") && !line.starts_with("luda_cpu_entry:")) continue;
    for (const std::string& k : reflected_) {
      std::string base = base_name(k);
      for (const std::string& said :
           {fmt::format("identifier \"{}\" is undefined", base), fmt::format("'{}' was not declared", base),
            fmt::format("use of undeclared identifier '{}'", base)})
        if (line.find(said) != std::string_view::npos)
          fail("no kernel named '{}' in the source as the compiler reads it (its #if and -D options decide what it "
               "defines)",
               k);
    }
  }
}

std::shared_ptr<RawKernel> RawModule::get_function(const std::string& name) {
  // Refused now, not at the first launch, where the compiler would say it with its whole log.
  if (!is_kernel_name(name))
    fail("'{}' is not a kernel name: name a kernel as its source declares it, by a C identifier (letters, digits "
         "and _, not starting with a digit), with its template arguments for a template kernel ('scale<float>')",
         printable(name));
  if (!path_.empty()) {  // compiled already: the file's own names decide
    if (image_kind_ == "PTX") {
      std::vector<std::string> entries = ptx_entries(image_);
      if (std::find(entries.begin(), entries.end(), name) == entries.end()) missing_in_image("kernel", name);
    }
    return std::make_shared<RawKernel>(shared_from_this(), name);
  }
  std::vector<std::string> names = list_kernels(source_);
  if (names.empty() && source_.find("__global__") == std::string::npos)
    fail("no kernel named '{}' in the source (it defines no __global__ function)", name);
  // A kernel the text does not show may be made by a macro: the compiler judges it.
  if (!names.empty() && std::find(names.begin(), names.end(), base_name(name)) == names.end() &&
      !macros_define_kernels(source_))
    missing_kernel(name);
  return std::make_shared<RawKernel>(shared_from_this(), name);
}

void RawModule::add_kernel(const std::string& name) {
  if (!path_.empty()) return;  // compiled already: looked up by its own name
  std::vector<KernelDefinition> defs = find_kernels(source_);
  std::string base = base_name(name);
  int count = 0;
  bool extern_c = false, all_c = true;
  for (const auto& d : defs) {
    if (d.name != base) continue;
    ++count;
    extern_c = extern_c || (d.extern_c && !d.is_template && base == name);
    all_c = all_c && d.extern_c && !d.is_template;
  }
  std::vector<std::string> wanted;
  if (count > 0 && !extern_c) wanted.push_back(name);  // else looked up by its own name
  // Reflected unless overloaded. C functions have no overloads: several extern "C"
  // definitions lie in the arms of an #if. A name the source shows nowhere (made by a
  // macro) is reflected too: the compiler knows it, or says that it does not.
  bool reflect = count <= 1 || all_c;
  if (reflect) wanted.push_back(reflection_expression(name));
  std::lock_guard lock(mutex_);
  auto known = [](const std::vector<std::string>& list, const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
  };
  bool new_reflection = reflect && !known(reflected_, name);
  bool new_names = std::any_of(wanted.begin(), wanted.end(),
                               [&](const std::string& w) { return !known(name_expressions_, w); });
  // A module compiled again would have its own copies of the globals given out: new names
  // recompile for CUDA devices, a new reflection (a new entry) rebuilds the cpu's object.
  if ((new_names && globals_taken_) || (new_reflection && cpu_globals_taken_))
    fail("raw_module: get_function('{}') after get_global: the module would be compiled again for this kernel, and "
         "the new compile would have its own copies of the global variables already given out; call get_function "
         "for every kernel before the first get_global",
         name);
  if (new_reflection) reflected_.push_back(name);
  bool added = false;
  for (std::string& w : wanted) {
    if (std::find(name_expressions_.begin(), name_expressions_.end(), w) != name_expressions_.end()) continue;
    name_expressions_.push_back(std::move(w));
    added = true;
  }
  if (!added) return;
  // What was compiled lacks the new names: compile again on next use.
  for (const auto& [ordinal, m] : modules_) retired_.push_back(m);
  modules_.clear();
  lowered_.clear();
  binaries_.clear();
}

bool RawModule::reflects(const std::string& kernel) const {
  std::lock_guard lock(mutex_);
  return std::find(reflected_.begin(), reflected_.end(), kernel) != reflected_.end();
}

std::optional<KernelSignature> RawModule::reflected(const std::map<std::string, std::string>& lowered,
                                                    const std::string& kernel) const {
  auto it = lowered.find(reflection_expression(kernel));
  if (it == lowered.end()) return std::nullopt;
  std::optional<std::vector<ParamType>> types = read_reflection(it->second);
  if (!types) return std::nullopt;
  KernelSignature sig;
  sig.name = kernel;
  std::optional<std::vector<std::string>> names = find_parameter_names(source_, base_name(kernel));
  bool named = names && names->size() == types->size();
  for (std::size_t i = 0; i < types->size(); ++i)
    sig.params.push_back(KernelParam{named ? (*names)[i] : std::string(), std::move((*types)[i])});
  return sig;
}

std::string RawModule::cuda_code() const {
  const bool types = names_luda_types(source_);
  std::string code;
  if (types) code = fmt::format("{}#line 1 \"{}\"\n", dsl::cuda_prelude(), program_name_);
  code += source_;
  if (!reflected_.empty()) code += reflection_support(false, types);
  return code;
}

CompiledProgram RawModule::compile_locked(int arch, bool cubin) const {
  std::string code = cuda_code();
  ++compiles_;
  try {
    return compile_program(program_text(code), arch, cubin);
  } catch (const CompileError& e) {
    explain_missing(e.log());
    throw;
  }
}

CompiledProgram RawModule::compile_for(int arch, bool cubin) const {
  if (!path_.empty()) {
    if (cubin || image_kind_ != "PTX")
      fail("the module was loaded from the {} file '{}' and has no CUDA source to compile; only PTX that was loaded "
           "as PTX can be shown",
           image_kind_, path_);
    CompiledProgram p;
    p.image = image_;
    p.cubin = false;
    return p;
  }
  std::lock_guard lock(mutex_);
  return compile_locked(arch, cubin);
}

int RawModule::compile_count() const {
  std::lock_guard lock(mutex_);
  return compiles_ + static_cast<int>(stats_.nvrtc_compiles);
}

JitStats RawModule::stats() const {
  std::lock_guard lock(mutex_);
  JitStats s = stats_;
  s.disk_hits += cpu_stats_.disk_hits;
  s.disk_misses += cpu_stats_.disk_misses;
  s.host_compiles += cpu_stats_.host_compiles;
  s.loads += cpu_stats_.loads;
  s.compile_seconds += cpu_stats_.compile_seconds;
  s.load_seconds += cpu_stats_.load_seconds;
  return s;
}

int RawModule::load_count() const {
  std::lock_guard lock(mutex_);
  return loads_;
}

CUmodule RawModule::load(int ordinal, const std::string& kernel, std::string* symbol,
                         std::optional<KernelSignature>* signature) {
  const DeviceProperties& props = cuda_properties(ordinal);  // NoDeviceError without one
  std::lock_guard lock(mutex_);
  auto it = modules_.find(ordinal);
  if (it == modules_.end() && !path_.empty()) {
    ContextScope scope(ordinal);
    LoadedProgram m;
    m.ordinal = ordinal;
    CUresult r = driver::api().cuModuleLoadData(&m.module, image_.c_str());
    driver::check(r, "cuModuleLoadData",
                  fmt::format("loading the {} file '{}' on cuda:{} (sm_{}{}): a cubin runs on the architecture it was "
                              "built for, PTX on that one and newer ones",
                              image_kind_, path_, ordinal, props.major, props.minor));
    ++loads_;
    it = modules_.emplace(ordinal, m).first;
  }
  if (it == modules_.end()) {
    // The program loader's: the disk cache, else NVRTC; devices of one arch share it.
    int arch = props.major * 10 + props.minor;
    auto binary = binaries_.find(arch);
    if (binary == binaries_.end()) {
      std::string code = cuda_code();
      try {
        binary = binaries_.emplace(arch, cuda_binary(program_text(code), arch, *cache_, stats_)).first;
      } catch (const CompileError& e) {
        explain_missing(e.log());
        throw;
      }
    }
    LoadedProgram m = load_binary(program_text({}), binary->second, ordinal, stats_);
    ++loads_;
    lowered_[ordinal] = binary->second.lowered_names;
    it = modules_.emplace(ordinal, m).first;
  }
  const auto& lowered = lowered_[ordinal];
  if (symbol) {
    auto l = lowered.find(kernel);
    *symbol = l == lowered.end() ? kernel : l->second;
  }
  if (signature) *signature = reflected(lowered, kernel);
  return it->second.module;
}

CUmodule RawModule::module(int ordinal) { return load(ordinal, {}, nullptr, nullptr); }

ModuleGlobal RawModule::global(Device device, const std::string& name) {
  auto missing = [&]() {
    if (!path_.empty()) missing_in_image("global variable", name);
    fail("no global variable named '{}' in the module (get_global finds a __constant__ or __device__ variable defined "
         "at namespace scope, not static, by its name)",
         name);
  };
  ModuleGlobal out;
  out.device = device;
  if (device.is_cpu()) {
    if (!path_.empty()) no_cpu_image(fmt::format("get_global('{}') on the cpu", name));
    std::shared_ptr<const CpuModule> module = cpu_module();
    out.address = module->variable(name.c_str(), &out.bytes);
    if (!out.address) missing();
    std::lock_guard lock(mutex_);
    cpu_globals_taken_ = true;
    return out;
  }
  CUmodule m = module(device.index);
  ContextScope scope(device.index);
  CUdeviceptr address = 0;
  CUresult r = driver::api().cuModuleGetGlobal(&address, &out.bytes, m, name.c_str());
  // The driver answers CUDA_ERROR_NOT_FOUND for an unknown name and CUDA_ERROR_INVALID_VALUE
  // for the name of a kernel (a symbol that is no variable), both "no such variable" here.
  if (r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_INVALID_VALUE) missing();
  driver::check(r, "cuModuleGetGlobal", name);
  out.address = reinterpret_cast<void*>(address);
  std::lock_guard lock(mutex_);
  globals_taken_ = true;
  return out;
}

// ---------------------------------------------------------------------------------------
// the cpu target

namespace {

// Whether `name` (an identifier, or a header) is CUDA's: what a source written for nvcc or
// NVRTC reaches for beyond the cpu prelude's subset.
bool cuda_name(std::string_view name) {
  static constexpr std::string_view kPrefixes[] = {"__",
                                                   "cuda",
                                                   "cub::",
                                                   "cub/",
                                                   "cuComplex",
                                                   "cuFloatComplex",
                                                   "cuDoubleComplex",
                                                   "curand",
                                                   "cublas",
                                                   "cufft",
                                                   "cusparse",
                                                   "cusolver",
                                                   "cooperative_groups",
                                                   "nvcuda",
                                                   "thrust",
                                                   "nv_bfloat",
                                                   "make_",
                                                   "tex1D",
                                                   "tex2D",
                                                   "tex3D",
                                                   "texture",
                                                   "surf1D",
                                                   "surf2D",
                                                   "surf3D",
                                                   "atomic",
                                                   "clock",
                                                   "half",
                                                   "mma.h",
                                                   "sm_",
                                                   "device_",
                                                   "math_constants",
                                                   "crt/",
                                                   "vector_types",
                                                   "nvrtc",
                                                   "nvtx"};
  for (std::string_view p : kPrefixes)
    if (name.starts_with(p)) return true;
  // CUDA's vector types: float4, uchar2, longlong3, ...
  static constexpr std::string_view kVectors[] = {"char", "uchar", "short",    "ushort",    "int",   "uint",
                                                  "long", "ulong", "longlong", "ulonglong", "float", "double"};
  for (std::string_view v : kVectors)
    if (name.size() == v.size() + 1 && name.starts_with(v) && name.back() >= '1' && name.back() <= '4') return true;
  return false;
}

// The CUDA name a host compiler's log says is missing (GCC's and Clang's wording of an
// undeclared name, an unknown type or a header not found), or "" when the failure is
// something else: then the note on the cpu prelude's subset would mislead.
std::string missing_cuda_name(std::string_view log) {
  static constexpr std::pair<std::string_view, std::string_view> kForms[] = {
      {"error: '", "' was not declared in this scope"}, {"error: '", "' has not been declared"},
      {"error: '", "' does not name a type"},           {"error: '", "' is not a member of"},
      {"error: use of undeclared identifier '", "'"},   {"error: unknown type name '", "'"},
      {"fatal error: ", ": No such file or directory"}, {"fatal error: '", "' file not found"},
      {"error: no member named '", "' in namespace"},   {"error: no template named '", "'"},
  };
  for (std::size_t start = 0; start < log.size();) {
    std::size_t end = std::min(log.find('\n', start), log.size());
    std::string_view line = log.substr(start, end - start);
    for (auto [before, after] : kForms) {
      std::size_t at = line.find(before);
      if (at == std::string_view::npos) continue;
      std::string_view rest = line.substr(at + before.size());
      std::size_t stop = rest.find(after);
      if (stop == std::string_view::npos) continue;
      std::string_view name = rest.substr(0, stop);
      if (cuda_name(name)) return std::string(name);
    }
    start = end + 1;
  }
  return "";
}

constexpr std::string_view kCpuSubset =
    "the cpu target provides only the prelude's CUDA subset (threadIdx and friends, __syncthreads, __shared__, "
    "atomics, warp functions, common math, printf)";

// The entry symbol's stem of a raw kernel: its own name could clash with the user's, and
// a template's ("scale<float>") is no identifier.
std::string cpu_entry_name(const std::string& kernel) {
  bool plain = std::all_of(kernel.begin(), kernel.end(), ident_char);
  if (plain) return "luda_raw_" + kernel;
  std::string id = "luda_raw_";
  std::uint32_t hash = 2166136261u;  // FNV-1a: two names that map to one identifier differ here
  for (char c : kernel) {
    id += ident_char(c) ? c : '_';
    hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  return fmt::format("{}_{:08x}", id, hash);
}

}  // namespace

std::string RawModule::cpu_source() const {
  const bool types = names_luda_types(source_);
  std::string out(types ? cpu_generated_prelude() : cpu_cuda_subset());
  out += cpu_raw_source(source_, program_name_);
  out += reflection_support(true, types);
  out += "#line 1 \"luda_cpu_entry\"\n";
  // A cooperative module's kernels may wait at the grid barrier: fibers, every block resident.
  int fibers = cooperative_ || raw_source_needs_fibers(source_) ? 1 : 0;
  for (const std::string& k : reflected_) {
    std::string entry = cpu_entry_name(k);
    out += cpu_reflection_entry(k, entry);
    out += fmt::format("extern \"C\" {{ LUDA_CPU_VISIBLE int {}_cpu_needs_fibers = {}; }}\n", entry, fibers);
    if (cooperative_) out += fmt::format("extern \"C\" {{ LUDA_CPU_VISIBLE int {}_cpu_cooperative = 1; }}\n", entry);
  }
  return out;
}

std::optional<KernelSignature> RawModule::cpu_signature(const CpuModule& module, const std::string& kernel) const {
  using Reflection = const char* (*)();
  auto* entry = reinterpret_cast<Reflection>(module.symbol((cpu_entry_name(kernel) + "_reflection").c_str()));
  if (!entry) return std::nullopt;
  std::map<std::string, std::string> lowered = {{reflection_expression(kernel), entry()}};
  return reflected(lowered, kernel);
}

std::shared_ptr<const CpuModule> RawModule::cpu_module() {
  if (!path_.empty()) no_cpu_image("the cpu target cannot run it");
  std::lock_guard lock(mutex_);
  // A kernel asked for since the last build needs its entry: build again (the old object
  // stays loaded for the kernels that run from it).
  if (cpu_module_ && cpu_kernels_ == reflected_.size()) return cpu_module_;
  std::string code = cpu_source();
  try {
    cpu_module_ = load_program(program_text(code), kCpuDevice, *cache_, cpu_stats_).cpu_module;
    cpu_kernels_ = reflected_.size();
  } catch (const CompileError& e) {
    explain_missing(e.log());
    // The user's first error leads, at its place in their source; the note on the
    // prelude's subset comes only when a CUDA name it lacks is the cause; the source shown
    // is theirs, numbered as the diagnostics number it (the prelude is not).
    std::string message = e.what();
    message.erase(std::min(message.find("\nsource:\n"), message.size()));
    if (std::string name = missing_cuda_name(e.log()); !name.empty())
      message += fmt::format("\nnote: {}; this source uses '{}', which it lacks", kCpuSubset, name);
    message += "\nsource:\n" + detail::numbered_source(source_);
    CompileError whole(std::move(message), e.log(), e.options(), e.source());
    throw at_lua_line(whole, dsl::Chunk{program_name_, source_}, true);
  }
  return cpu_module_;
}

HostCompileStats RawModule::cpu_stats() const {
  std::lock_guard lock(mutex_);
  HostCompileStats s;
  s.compiles = cpu_stats_.host_compiles;
  s.disk_hits = cpu_stats_.disk_hits;
  s.disk_misses = cpu_stats_.disk_misses;
  s.loads = cpu_stats_.loads;
  s.compile_seconds = cpu_stats_.compile_seconds;
  s.load_seconds = cpu_stats_.load_seconds;
  return s;
}

RawKernel::Target& RawKernel::load_cpu_target() {
  if (!module_->path().empty()) module_->no_cpu_image(who_ + " cannot run on the cpu");
  if (!module_->reflects(name_)) {
    std::vector<KernelDefinition> defs = find_kernels(module_->source());
    std::string base = base_name(name_);
    auto count = std::count_if(defs.begin(), defs.end(), [&](const KernelDefinition& d) { return d.name == base; });
    module_->cpu_module();  // a kernel defined twice is the compiler's error, at its line
    fail("raw_kernel '{}' cannot run on the cpu: the source defines {} kernels named '{}' (overloads), and the "
         "cpu target calls a kernel through its one parameter list; give each its own name",
         name_, count, base);
  }
  std::shared_ptr<const CpuModule> module = module_->cpu_module();
  std::optional<KernelSignature> signature = module_->cpu_signature(*module, name_);
  if (!signature)
    fail("raw_kernel '{}' cannot run on the cpu: the host compiler's reading of its parameter list is missing from "
         "the compiled module",
         name_);
  Target t;
  t.program.ordinal = kCpuDevice;
  t.program.cpu = module->kernel(cpu_entry_name(name_));
  cpu_code_range(reinterpret_cast<const void*>(t.program.cpu.run_thread), &t.program.cpu.code_begin,
                 &t.program.cpu.code_end);
  t.program.cpu_module = std::move(module);
  t.program.cooperative = module_->cooperative();
  t.signature = std::move(signature);
  return targets_.add(std::move(t));
}

// ---------------------------------------------------------------------------------------
// RawKernel

RawKernel::RawKernel(std::shared_ptr<RawModule> module, std::string name)
    : module_(std::move(module)),
      name_(std::move(name)),
      who_(fmt::format("raw_kernel '{}'", name_)),
      label_(driver::intern_label(who_)) {
  module_->add_kernel(name_);
  if (auto names = find_parameter_names(module_->source(), base_name(name_))) text_names_ = std::move(*names);
}

std::shared_ptr<RawKernel> RawKernel::create(std::string source, std::string name, std::vector<std::string> options,
                                             DiskCache* cache) {
  auto module = RawModule::create(std::move(source), std::move(options), false, cache);
  module->program_name_ = base_name(name) + ".cu";
  module->what_ = fmt::format("raw module '{}'", module->program_name_);
  return module->get_function(name);
}

RawKernel::Target& RawKernel::load_target(int ordinal) {
  if (ordinal == kCpuDevice) return load_cpu_target();
  Target t;
  std::string symbol;
  CUmodule m = module_->load(ordinal, name_, &symbol, &t.signature);
  ContextScope scope(ordinal);
  CUresult r = driver::api().cuModuleGetFunction(&t.program.function, m, symbol.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) module_->missing_kernel(name_);
  driver::check(r, "cuModuleGetFunction", name_);
  t.program.ordinal = ordinal;
  t.program.module = m;
  t.program.cooperative = module_->cooperative();
  return targets_.add(std::move(t));
}

const RawKernel::Target& RawKernel::target(int ordinal) {
  CallKey<0> key;
  key.device = static_cast<std::int16_t>(ordinal);
  std::lock_guard lock(targets_.mutex());
  return targets_.find_locked(key, [&](const CallKey<0>&) -> Target& { return load_target(ordinal); });
}

std::optional<KernelSignature> RawKernel::signature(Device device) { return target(target_ordinal(device)).signature; }

std::optional<KernelSignature> RawKernel::signature_for_arch(int arch) {
  return module_->reflected(module_->compile_for(arch, /*cubin=*/false).lowered_names, name_);
}

CUfunction RawKernel::function(int ordinal) { return target(ordinal).program.function; }

JitStats RawKernel::stats() const {
  JitStats s = module_->stats();
  const JitStats launches = targets_.stats();
  s.calls = launches.calls;
  s.memory_hits = launches.memory_hits;
  return s;
}

long long RawKernel::max_cooperative_grid_blocks(const Dim3& block, unsigned shared_mem) {
  Device device = current_device();
  if (device.is_cpu()) return static_cast<long long>(cpu_max_cooperative_blocks(block.count()));
  ContextScope scope(device.index);
  return max_cooperative_blocks(function(device.index), block, shared_mem, cuda_properties(device.index));
}

void RawKernel::launch(const LaunchConfig& config, std::span<const KernelArg> args, std::span<const bool> written) {
  // plan: where the arrays are, else the thread's device; the compile there tells the
  // parameters. (No overlap step: raw code says nothing of how it reads its arrays.)
  const Device device = call_device(who_, args, {}, text_names_);
  const int ordinal = target_ordinal(device);
  check_launch_config(config, ordinal, who_);
  CallKey<0> key;
  key.device = static_cast<std::int16_t>(ordinal);
  // lookup
  const Target& t = targets_.find(key, [&](const CallKey<0>&) -> Target& { return load_target(ordinal); });
  // pack: checked against the parameter list the compile read
  if (written.empty()) {
    note_operands(args, {}, true);  // raw code may write any array it is given
  } else if (GraphRecording::active()) [[unlikely]] {
    std::vector<KernelArg> reads;
    std::vector<NDArray> writes;
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (k < written.size() && written[k] && args[k].kind == KernelArg::Kind::Array) writes.push_back(*args[k].array);
      else reads.push_back(args[k]);
    }
    note_operands(reads, writes, false);
  }
  ArgBuffer& buffer = launch_buffer();
  pack_arguments(buffer, name_, t.signature, args);
  // launch
  jit::launch(t.program, device, config, buffer.pointers(), LaunchName{who_, label_});
}

}  // namespace luda::jit

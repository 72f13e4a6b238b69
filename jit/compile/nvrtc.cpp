#include "jit/compile/nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include <fmt/ranges.h>

#include "runtime/shared_library.h"

namespace luda::jit {
namespace {

// ORDER NVRTC: every entry point luda calls; all must be present for a library to load.
// clang-format off
#define LUDA_NVRTC_FUNCTIONS(X)                                                   \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcGetNumSupportedArchs)             \
  X(nvrtcGetSupportedArchs) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)          \
  X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)          \
  X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)         \
  X(nvrtcAddNameExpression) X(nvrtcGetLoweredName)
// clang-format on

struct Api {
#define LUDA_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  LUDA_NVRTC_FUNCTIONS(LUDA_NVRTC_MEMBER)
#undef LUDA_NVRTC_MEMBER
  void* handle = nullptr;
  std::string path;
};

// The NVRTC library's search (jit/compile/nvrtc.h) and its entry points, in ORDER NVRTC.
constexpr const char* kSymbols[] = {
#define LUDA_NVRTC_NAME(name) #name,
    LUDA_NVRTC_FUNCTIONS(LUDA_NVRTC_NAME)
#undef LUDA_NVRTC_NAME
};
constexpr char kFix[] = "set LUDA_NVRTC to the path of libnvrtc.so (from the CUDA toolkit, version 12 or 13)";

// Opens the first usable candidate. On failure, throws the message that lists them all.
Api load(const std::vector<std::string>& candidates) {
  SharedLibrary lib = open_library("NVRTC", candidates, kSymbols, kFix);
  Api api;
  api.handle = lib.handle;
  api.path = lib.path;
  std::size_t k = 0;
#define LUDA_NVRTC_SET(name) api.name = reinterpret_cast<decltype(&::name)>(lib.symbols[k++]);
  LUDA_NVRTC_FUNCTIONS(LUDA_NVRTC_SET)
#undef LUDA_NVRTC_SET
  return api;
}

// The process-wide library: loaded once; a failure is remembered and rethrown.
const Api& api() {
  static std::once_flag once;
  static Api loaded;
  static std::optional<std::string> failure;
  std::call_once(once, [] {
    try {
      loaded = load(detail::nvrtc_candidates());
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (failure) throw Error(*failure);
  return loaded;
}

void check(nvrtcResult r, const char* call) {
  if (r == NVRTC_SUCCESS) return;
  fail("{}: {}", call, api().nvrtcGetErrorString(r));
}

// Destroys the program on every path out of compile().
struct ProgramGuard {
  decltype(&::nvrtcDestroyProgram) destroy;
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program) destroy(&program);
  }
};

// The folder holding cuda_fp16.h, so that sources including CUDA's headers compile.
std::optional<std::string> cuda_include_dir() {
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/include");
  // Beside the loaded library: <root>/lib64/libnvrtc.so -> <root>/include.
  std::filesystem::path lib(api().path);
  if (lib.has_parent_path()) dirs.push_back((lib.parent_path().parent_path() / "include").string());
#ifdef LUDA_CUDA_INCLUDE_DIR
  {
    std::string built = LUDA_CUDA_INCLUDE_DIR;  // a CMake list: a;b
    std::size_t pos = 0;
    while (pos <= built.size()) {
      std::size_t semi = built.find(';', pos);
      if (semi == std::string::npos) semi = built.size();
      if (semi > pos) dirs.push_back(built.substr(pos, semi - pos));
      pos = semi + 1;
    }
  }
#endif
  dirs.push_back("/usr/local/cuda/include");
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(d) / "cuda_fp16.h", ec))
      return std::filesystem::path(d).lexically_normal().string();
  }
  return std::nullopt;
}

}  // namespace

namespace detail {

std::vector<std::string> nvrtc_candidates() {
  return library_candidates({"LUDA_NVRTC", "libnvrtc.so", true, {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}});
}

std::string probe_nvrtc(const std::vector<std::string>& candidates) {
  Api probe = load(candidates);
  dlclose(probe.handle);
  return probe.path;
}

std::string numbered_source(std::string_view source) {
  std::string out;
  int line = 1;
  std::size_t pos = 0;
  while (pos < source.size()) {
    std::size_t nl = source.find('\n', pos);
    std::string_view text = source.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (!out.empty()) out += '\n';
    out += fmt::format("{:>4} | {}", line++, text);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace detail

NvrtcVersion nvrtc_version() {
  NvrtcVersion v;
  check(api().nvrtcVersion(&v.major, &v.minor), "nvrtcVersion");
  return v;
}

std::string nvrtc_library_path() { return api().path; }

std::vector<int> nvrtc_supported_archs() {
  int n = 0;
  check(api().nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (n > 0) check(api().nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  std::sort(archs.begin(), archs.end());
  return archs;
}

namespace {

// NVRTC compiles in the calling thread, and its optimizer recurses along a kernel's chains
// of dependent operations: a sum of 10000 terms needs about 1 MiB of stack, more than a
// host's worker thread may have (musl gives 128 KiB). The compile runs on a thread of its
// own with kCompileStack bytes (reserved, touched only as deep as it goes), so that a long
// kernel is never a crash of the host.
constexpr std::size_t kCompileStack = std::size_t{64} << 20;

template <class F>
nvrtcResult on_compile_stack(F&& compile) {
  struct Call {
    F* compile;
    nvrtcResult result;
  } call{&compile, NVRTC_ERROR_INTERNAL_ERROR};
  pthread_attr_t attr;
  pthread_t thread;
  bool started = pthread_attr_init(&attr) == 0;
  started = started && pthread_attr_setstacksize(&attr, kCompileStack) == 0 &&
            pthread_create(
                &thread, &attr,
                [](void* p) -> void* {
                  auto* c = static_cast<Call*>(p);
                  c->result = (*c->compile)();
                  return nullptr;
                },
                &call) == 0;
  pthread_attr_destroy(&attr);
  if (!started) return compile();  // no thread to be had: the caller's own stack
  pthread_join(thread, nullptr);
  return call.result;
}

// The -D and -U options as #define and #undef lines, in their order, and the other options.
// NVRTC's own builtin header names a template parameter T, so a -DT=... handed to NVRTC
// breaks NVRTC itself ("expected an identifier" in __nv_nvrtc_builtin_header.h); macros
// defined at the top of the source reach the user's code alone, as -D means them to.
struct Macros {
  std::string lines;
  std::vector<std::string> options;
};
Macros split_macros(const std::vector<std::string>& options) {
  Macros m;
  for (std::size_t i = 0; i < options.size(); ++i) {
    std::string_view o = options[i];
    std::string_view def;
    bool define = false, undefine = false;
    for (std::string_view prefix : {"--define-macro=", "-D"})
      if (!define && o.starts_with(prefix)) define = true, def = o.substr(prefix.size());
    for (std::string_view prefix : {"--undefine-macro=", "-U"})
      if (!define && !undefine && o.starts_with(prefix)) undefine = true, def = o.substr(prefix.size());
    if (!define && !undefine) {
      m.options.emplace_back(o);
      continue;
    }
    if (def.empty() && i + 1 < options.size()) def = options[++i];  // "-D", "N=4"
    if (undefine) {
      m.lines += fmt::format("#undef {}\n", def);
      continue;
    }
    std::size_t eq = def.find('=');
    m.lines += eq == std::string_view::npos ? fmt::format("#define {} 1\n", def)
                                            : fmt::format("#define {} {}\n", def.substr(0, eq), def.substr(eq + 1));
  }
  return m;
}

}  // namespace

CompiledProgram compile(const CompileRequest& request) {
  const Api& nv = api();
  std::vector<int> archs = nvrtc_supported_archs();
  int arch = request.arch;
  bool cubin = request.cubin;
  if (!archs.empty() && arch > archs.back()) {
    // A GPU newer than this NVRTC: PTX for the newest arch it knows; the driver JITs it.
    arch = archs.back();
    cubin = false;
  }
  if (!archs.empty() && arch < archs.front()) {
    NvrtcVersion v = nvrtc_version();
    fail("NVRTC {}.{} cannot compile for sm_{} (it supports sm_{} to sm_{}); use a CUDA "
         "toolkit that supports this GPU and point LUDA_NVRTC at its libnvrtc.so",
         v.major, v.minor, request.arch, archs.front(), archs.back());
  }
  std::string target = fmt::format("{}_{}", cubin ? "sm" : "compute", arch);

  CompiledProgram out;
  out.cubin = cubin;
  out.options.push_back("--gpu-architecture=" + target);
  out.options.push_back("-default-device");
  for (const auto& o : request.options) out.options.push_back(o);
  if (auto inc = cuda_include_dir()) {
    out.options.push_back("-I" + *inc);
    // CUDA 13 keeps CCCL (<cuda/std/...>, which <cooperative_groups.h> includes) apart.
    std::error_code ec;
    std::filesystem::path cccl = std::filesystem::path(*inc) / "cccl";
    if (std::filesystem::exists(cccl / "cuda" / "std", ec)) out.options.push_back("-I" + cccl.string());
  }

  // The source after the macros keeps its line numbers in NVRTC's messages.
  Macros macros = split_macros(out.options);
  std::string source = macros.lines.empty()
                           ? std::string()
                           : fmt::format("{}#line 1 \"{}\"\n{}", macros.lines, request.program_name, request.source);
  ProgramGuard guard{nv.nvrtcDestroyProgram};
  check(nv.nvrtcCreateProgram(&guard.program, source.empty() ? request.source.c_str() : source.c_str(),
                              request.program_name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  for (const auto& name : request.name_expressions)
    check(nv.nvrtcAddNameExpression(guard.program, name.c_str()), "nvrtcAddNameExpression");

  std::vector<const char*> argv;
  for (const auto& o : macros.options) argv.push_back(o.c_str());
  nvrtcResult result = on_compile_stack(
      [&] { return nv.nvrtcCompileProgram(guard.program, static_cast<int>(argv.size()), argv.data()); });

  // The log is read whatever the result: it holds the errors, or the warnings.
  std::size_t log_size = 0;
  if (nv.nvrtcGetProgramLogSize(guard.program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    if (nv.nvrtcGetProgramLog(guard.program, out.log.data()) != NVRTC_SUCCESS) out.log.clear();
  }
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n' || out.log.back() == ' '))
    out.log.pop_back();

  if (result != NVRTC_SUCCESS) {
    std::string message = fmt::format("NVRTC failed to compile '{}' for {} (options: {})", request.program_name, target,
                                      fmt::join(out.options, " "));
    if (result != NVRTC_ERROR_COMPILATION) message += fmt::format(": {}", nv.nvrtcGetErrorString(result));
    if (!out.log.empty()) message += "\n" + out.log;
    message += "\nsource:\n" + detail::numbered_source(request.source);
    throw CompileError(std::move(message), out.log, out.options, request.source);
  }

  for (const auto& name : request.name_expressions) {
    const char* lowered = nullptr;
    check(nv.nvrtcGetLoweredName(guard.program, name.c_str(), &lowered), "nvrtcGetLoweredName");
    out.lowered_names[name] = lowered;
  }

  std::size_t size = 0;
  if (cubin) {
    check(nv.nvrtcGetCUBINSize(guard.program, &size), "nvrtcGetCUBINSize");
    out.image.resize(size);
    check(nv.nvrtcGetCUBIN(guard.program, out.image.data()), "nvrtcGetCUBIN");
  } else {
    check(nv.nvrtcGetPTXSize(guard.program, &size), "nvrtcGetPTXSize");
    out.image.resize(size);
    check(nv.nvrtcGetPTX(guard.program, out.image.data()), "nvrtcGetPTX");
    // std::string keeps its own terminator; the size counts the text only.
    while (!out.image.empty() && out.image.back() == '\0') out.image.pop_back();
  }
  return out;
}

}  // namespace luda::jit

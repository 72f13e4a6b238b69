#include "jit/compile/program.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/compile/nvrtc.h"
#include "jit/compile/nvrtc_diagnostics.h"
#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/graph/recording.h"

#ifndef LUDA_VERSION
#define LUDA_VERSION "0.1.0"
#endif

namespace luda::jit {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The cache payload: one byte saying what the image is, then the image; or, for a program
// with name expressions, kNamedTag, the count and the (expression, lowered name) pairs,
// each a 4-byte little-endian length and the bytes, then the payload of the image.
constexpr char kCubinTag = 'C', kPtxTag = 'P', kNamedTag = 'N';

void put_u32(std::string& out, std::size_t n) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}
bool get_u32(std::string_view& in, std::size_t& n) {
  if (in.size() < 4) return false;
  n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<std::size_t>(static_cast<unsigned char>(in[static_cast<std::size_t>(i)])) << (8 * i);
  in.remove_prefix(4);
  return true;
}
bool get_text(std::string_view& in, std::string& out) {
  std::size_t n = 0;
  if (!get_u32(in, n) || in.size() < n) return false;
  out.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

// A compiler failure told at the Lua line: the first chunk the log names wins.
[[noreturn]] void rethrow_at_lua_line(const CompileError& e, const ProgramText& program) {
  for (const std::shared_ptr<const dsl::Chunk>& chunk : program.chunks) {
    if (!chunk) continue;
    CompileError located = at_lua_line(e, *chunk, chunk->is_cuda);
    if (std::string_view(located.what()) != std::string_view(e.what())) throw located;
  }
  throw e;
}

CompiledProgram compile_text(const ProgramText& program, int arch, bool cubin) {
  CompileRequest request;
  request.source = std::string(program.code);
  request.program_name = fmt::format("{}.cu", program.name);
  request.arch = arch;
  request.cubin = cubin;
  request.options.assign(program.options.begin(), program.options.end());
  request.name_expressions.assign(program.name_expressions.begin(), program.name_expressions.end());
  try {
    return jit::compile(request);
  } catch (const CompileError& e) {
    rethrow_at_lua_line(e, program);
  }
}

// The cpu target: the shared object from the disk cache or the host compiler, loaded once
// per process (jit/compile/host_compiler.h).
void load_cpu(const ProgramText& program, LoadedProgram& l, DiskCache& cache, JitStats& stats) {
  HostCompileRequest request;
  request.source = std::string(program.code);
  request.file_name = fmt::format("{}.cu", program.name);
  request.what = std::string(program.what);
  for (const std::string& o : program.options) {
    if (program.user_source) {  // NVRTC's options that mean something to a C++ compiler
      if (o.rfind("-D", 0) == 0 || o.rfind("-U", 0) == 0 || o.rfind("-I", 0) == 0) request.options.push_back(o);
      if (o == "--fmad=false" || o == "-fmad=false") request.options.push_back("-ffp-contract=off");
    } else {  // what the generated code's options ask NVRTC for
      request.fastmath = request.fastmath || o == "--use_fast_math";
      request.debug = request.debug || o == "-G";
      // no fused multiply-adds, as NVRTC forms none with it (luda.random's kernels, ops/random.cpp)
      if (o == "--fmad=false") request.options.push_back("-ffp-contract=off");
    }
  }
  HostCompileStats hs;
  try {
    l.cpu_module = load_cpu_module(request, cache, cpu_runtime(), &hs);
  } catch (const CompileError& e) {
    rethrow_at_lua_line(e, program);
  }
  stats.disk_hits += hs.disk_hits;
  stats.disk_misses += hs.disk_misses;
  stats.host_compiles += hs.compiles;
  stats.loads += hs.loads;
  stats.compile_seconds += hs.compile_seconds;
  stats.load_seconds += hs.load_seconds;
  if (program.entry.empty()) return;
  l.cpu = l.cpu_module->kernel(program.entry);
  cpu_code_range(reinterpret_cast<const void*>(l.cpu.run_thread), &l.cpu.code_begin, &l.cpu.code_end);
  l.cpu.local_bytes = program.local_bytes;
}

}  // namespace

int device_arch(int ordinal) {
  const DeviceProperties& p = cuda_properties(ordinal);
  return p.major * 10 + p.minor;
}

int current_arch_for(std::string_view who) {
  Device d = current_device();
  if (!d.is_cuda()) {
    std::string reason;
    driver::available(&reason);
    fail("{}: no CUDA device to take the architecture from ({}); name one: {{arch = \"sm_90\"}}", who,
         reason.empty() ? "the current device is cpu" : reason);
  }
  return device_arch(d.index);
}

CudaBinary cuda_binary(const ProgramText& program, int arch, DiskCache& cache, JitStats& stats) {
  CacheKey key = detail::binary_key(program.code, program.entry, program.options, arch, program.name_expressions);
  auto t0 = Clock::now();
  std::optional<std::string> hit = cache.load(key, fmt::format("{} for sm_{}", program.what, arch));
  stats.load_seconds += seconds_since(t0);
  if (hit) {
    if (std::optional<CudaBinary> binary = detail::binary_from_payload(*hit)) {
      ++stats.disk_hits;
      return std::move(*binary);
    }
  }
  ++stats.disk_misses;
  t0 = Clock::now();
  CompiledProgram compiled = compile_text(program, arch, true);
  stats.compile_seconds += seconds_since(t0);
  ++stats.nvrtc_compiles;
  CudaBinary binary;
  binary.image = std::move(compiled.image);  // PTX keeps its NUL: cuModuleLoadData reads it as a C string
  binary.cubin = compiled.cubin;
  binary.lowered_names = std::move(compiled.lowered_names);
  cache.store(key, detail::binary_payload(binary));
  return binary;
}

LoadedProgram load_binary(const ProgramText& program, const CudaBinary& binary, int ordinal, JitStats& stats) {
  LoadedProgram l;
  l.ordinal = ordinal;
  auto t0 = Clock::now();
  ContextScope scope(ordinal);
  LUDA_CU(cuModuleLoadData, &l.module, binary.image.c_str());  // c_str: PTX must end in NUL
  if (!program.entry.empty()) {
    std::string entry(program.entry);
    CUresult r = driver::api().cuModuleGetFunction(&l.function, l.module, entry.c_str());
    if (r != CUDA_SUCCESS) {
      driver::api().cuModuleUnload(l.module);
      l.module = nullptr;
      driver::check(r, "cuModuleGetFunction", fmt::format("{} entry '{}'", program.what, entry));
    }
  }
  ++stats.loads;
  stats.load_seconds += seconds_since(t0);
  return l;
}

LoadedProgram load_program(const ProgramText& program, int ordinal, DiskCache& cache, JitStats& stats) {
  if (ordinal != kCpuDevice)
    return load_binary(program, cuda_binary(program, device_arch(ordinal), cache, stats), ordinal, stats);
  LoadedProgram l;
  l.ordinal = ordinal;
  load_cpu(program, l, cache, stats);
  return l;
}

CompiledProgram compile_program(const ProgramText& program, int arch, bool cubin) {
  return compile_text(program, arch, cubin);
}

void unload_program(LoadedProgram& loaded) noexcept {
  if (!loaded.module) return;
  try {
    ContextScope scope(loaded.ordinal);
    driver::api().cuModuleUnload(loaded.module);
  } catch (...) {  // at exit the driver may be gone; this never throws
  }
  loaded.module = nullptr;
  loaded.function = nullptr;
}

std::string program_ptx(const ProgramText& program, int arch) {
  CompiledProgram p = compile_text(program, arch, false);
  std::string ptx = std::move(p.image);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

namespace detail {

std::string nvrtc_identity() {
  static const std::string identity = [] {
    for (const std::string& path : ::luda::jit::detail::nvrtc_candidates()) {
      if (path.find('/') == std::string::npos) continue;
      std::error_code ec;
      std::filesystem::path real = std::filesystem::canonical(path, ec);
      struct stat st {};
      if (ec || ::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      return fmt::format("{} {} {}.{:09}", real.string(), static_cast<long long>(st.st_size),
                         static_cast<long long>(st.st_mtim.tv_sec), static_cast<long>(st.st_mtim.tv_nsec));
    }
    NvrtcVersion v = nvrtc_version();  // found by the default search: ask it
    return fmt::format("{} {}.{}", nvrtc_library_path(), v.major, v.minor);
  }();
  return identity;
}

CacheKey binary_key(std::string_view code, std::string_view entry, std::span<const std::string> options, int arch,
                    std::span<const std::string> name_expressions) {
  CacheKeyBuilder b;
  b.add("source", code).add("entry", entry).add("options", fmt::format("{}", fmt::join(options, " ")));
  // Only where there are some: generated code's keys stay what they were.
  if (!name_expressions.empty()) b.add("names", fmt::format("{}", fmt::join(name_expressions, "\n")));
  b.add("target", "cuda")
      .add("arch", arch)
      .add("nvrtc", nvrtc_identity())
      .add("prelude", dsl::kPreludeVersion)
      .add("luda", LUDA_VERSION);
  return b.finish();
}

CacheKey binary_key(const dsl::CudaKernel& kernel, const std::vector<std::string>& options, int arch) {
  return binary_key(kernel.code, kernel.entry, options, arch);
}

std::string binary_payload(const CudaBinary& binary) {
  std::string out;
  if (!binary.lowered_names.empty()) {
    out.push_back(kNamedTag);
    put_u32(out, binary.lowered_names.size());
    for (const auto& [expression, lowered] : binary.lowered_names) {
      put_u32(out, expression.size());
      out += expression;
      put_u32(out, lowered.size());
      out += lowered;
    }
  }
  out.push_back(binary.cubin ? kCubinTag : kPtxTag);
  out += binary.image;
  return out;
}

std::optional<CudaBinary> binary_from_payload(std::string_view payload) {
  CudaBinary binary;
  if (!payload.empty() && payload[0] == kNamedTag) {
    payload.remove_prefix(1);
    std::size_t count = 0;
    if (!get_u32(payload, count)) return std::nullopt;
    for (std::size_t i = 0; i < count; ++i) {
      std::string expression, lowered;
      if (!get_text(payload, expression) || !get_text(payload, lowered)) return std::nullopt;
      binary.lowered_names.emplace(std::move(expression), std::move(lowered));
    }
  }
  if (payload.empty() || (payload[0] != kCubinTag && payload[0] != kPtxTag)) return std::nullopt;
  binary.cubin = payload[0] == kCubinTag;
  binary.image.assign(payload.substr(1));
  return binary;
}

}  // namespace detail

}  // namespace luda::jit

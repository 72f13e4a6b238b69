#include "jit/compile/host_compiler.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>  // ElfW
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/infer.h"
#include "jit/compile/cpu_prelude.h"
#include "runtime/error.h"

#ifndef LUDA_VERSION
#define LUDA_VERSION "0.1.0"
#endif

extern char** environ;

namespace luda::jit {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kObjectTag = 'S';  // the cache payload: a tag byte, then the object's bytes
constexpr double kDefaultCompileSeconds = 300;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> split_spaces(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A private folder for one compile, removed when done.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / "luda-cxx-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      fail("cannot create a temporary folder for the host C++ compiler in {}: {}", base.string(), std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct RunResult {
  int status = -1;         // exit status; -1 when it did not exit normally
  int spawn_error = 0;     // errno of posix_spawnp, 0 when it started
  bool timed_out = false;  // stopped after the time limit
  std::string output;      // stdout and stderr together
};

// Waits for `pid` to end, at most `seconds`; false when it is still running then.
bool wait_for(pid_t pid, double seconds, int* status) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  // A pidfd wakes the wait the moment the child ends (Linux 5.3); else poll waitpid.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  auto backoff = std::chrono::microseconds(200);
  for (;;) {
    pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      if (pidfd >= 0) ::close(pidfd);
      return false;
    }
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<long long>(left + 1, 1000)));
    } else {
      std::this_thread::sleep_for(std::min<std::chrono::microseconds>(backoff, std::chrono::milliseconds(left)));
      backoff = std::min<std::chrono::microseconds>(2 * backoff, std::chrono::milliseconds(20));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return true;
}

// Runs argv (no shell) with stdout and stderr into `log`, stdin from /dev/null, in a
// process group of its own: after `seconds`, the whole group (the driver and the
// compilers, assembler and linker it started) is killed.
RunResult run(const std::vector<std::string>& argv, const fs::path& log, double seconds) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  // The caller's environment, with messages in plain ASCII (GCC quotes with ‘’ under a
  // UTF-8 locale): logs are parsed and shown alike everywhere.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "LC_ALL=", 7) != 0 && std::strncmp(*e, "LC_MESSAGES=", 12) != 0) env_text.push_back(*e);
  env_text.push_back("LC_ALL=C");
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  RunResult r;
  r.spawn_error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (r.spawn_error != 0) return r;
  int status = 0;
  if (!wait_for(pid, seconds, &status)) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.timed_out = true;
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = read_file(log);
  return r;
}

// LUDA_CXX_TIMEOUT: how many seconds one run of the host compiler may take.
double compile_time_limit() {
  std::string text = env("LUDA_CXX_TIMEOUT");
  if (text.empty()) return kDefaultCompileSeconds;
  char* end = nullptr;
  double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds <= 0)
    fail("LUDA_CXX_TIMEOUT must be a positive number of seconds (the longest a host C++ compile may take; {} when "
         "unset), got '{}'",
         kDefaultCompileSeconds, text);
  return seconds;
}

// The executable argv[0] names: through PATH when it has no '/'.
std::string resolve(const std::string& program) {
  std::error_code ec;
  if (program.find('/') != std::string::npos) return fs::canonical(program, ec).string();
  std::istringstream path(env("PATH"));
  for (std::string dir; std::getline(path, dir, ':');) {
    fs::path p = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(p.c_str(), X_OK) == 0) {
      fs::path real = fs::canonical(p, ec);
      return ec ? p.string() : real.string();
    }
  }
  return program;
}

std::string file_stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path;
  return fmt::format("{} {} {}.{:09}", path, static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtim.tv_sec), static_cast<long>(st.st_mtim.tv_nsec));
}

[[noreturn]] void cannot_run(const HostCompiler& c, const std::string& why) {
  std::string from = c.source == "default" ? "the default; set LUDA_CXX or CXX to choose another" : "from $" + c.source;
  fail("host C++ compiler '{}' ({}) could not be run: {}; the cpu target needs a C++17 compiler: install g++ or "
       "clang++, or set LUDA_CXX to one",
       fmt::join(c.command, " "), from, why);
}

// What the cache key hashes of the compiler, computed once per command.
std::string describe_compiler(HostCompiler& c) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::pair<std::string, std::string>> known;  // -> version, identity
  std::lock_guard lock(mutex);
  if (auto it = known.find(c.command); it != known.end()) {
    c.version = it->second.first;
    return it->second.second;
  }
  TempDir dir;
  std::vector<std::string> argv = c.command;
  argv.push_back("--version");
  double limit = compile_time_limit();
  RunResult r = run(argv, dir.path() / "version.txt", limit);
  if (r.spawn_error) cannot_run(c, std::strerror(r.spawn_error));
  if (r.timed_out)
    cannot_run(c, fmt::format("`{}` did not finish within {} s and was stopped (LUDA_CXX_TIMEOUT sets the limit)",
                              fmt::join(argv, " "), limit));
  if (r.status != 0)
    cannot_run(c, fmt::format("`{}` exited with status {}: {}", fmt::join(argv, " "), r.status, r.output));
  c.version = r.output.substr(0, r.output.find('\n'));
  std::string identity = fmt::format("{} | {}", fmt::join(c.command, " "), c.version);
  for (const std::string& word : c.command) identity += " | " + file_stamp(resolve(word));
  known.emplace(c.command, std::make_pair(c.version, identity));
  return identity;
}

bool portable() {
  std::string v = env("LUDA_CPU_PORTABLE");
  return !v.empty() && v != "0";
}

// Loaded objects by cache key: one dlopen per binary per process (never closed).
std::mutex g_modules_mutex;
std::map<std::string, std::shared_ptr<const CpuModule>>& loaded_modules() {
  static auto* modules = new std::map<std::string, std::shared_ptr<const CpuModule>>;
  return *modules;
}

// The name of the file the compiler reads: the request's, made safe and bounded (its
// extension kept); diagnostics name the file by the source's #line directives instead.
std::string safe_file_name(std::string_view name) {
  std::size_t dot = name.rfind('.');
  std::string_view extension = dot == std::string_view::npos ? "" : name.substr(dot);
  bool plain = extension.size() > 1 && extension.size() <= 8 &&
               std::all_of(extension.begin() + 1, extension.end(),
                           [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
  if (!plain) return dsl::c_identifier(name) + ".cu";
  return dsl::c_identifier(name.substr(0, dot)) + std::string(extension);
}

}  // namespace

namespace detail {

std::string cpu_identity() {
  static const std::string identity = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(f, line) && (model.empty() || flags.empty())) {
      auto value = [&] {
        auto c = line.find(':');
        return c == std::string::npos ? std::string() : line.substr(c + 1);
      };
      if (model.empty() && line.rfind("model name", 0) == 0) model = value();
      if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = value();
    }
    return model + " |" + flags;
  }();
  return identity;
}

std::string shared_object_defect(std::string_view bytes) {
  using Ehdr = ElfW(Ehdr);
  using Phdr = ElfW(Phdr);
  using Shdr = ElfW(Shdr);
  const std::uint64_t size = bytes.size();
  // Whether `count` entries of `each` bytes from `offset` lie inside the file.
  auto inside = [&](std::uint64_t offset, std::uint64_t count, std::uint64_t each) {
    return offset <= size && count <= (size - offset) / each;
  };
  Ehdr h;
  if (size < sizeof h) return fmt::format("{} bytes, shorter than an ELF header", size);
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (h.e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32) || h.e_type != ET_DYN)
    return "not a shared object for this machine";
  if (h.e_phentsize != sizeof(Phdr) || !inside(h.e_phoff, h.e_phnum, sizeof(Phdr)))
    return fmt::format("its program headers lie past its end ({} bytes)", size);
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    Phdr ph;
    std::memcpy(&ph, bytes.data() + h.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_filesz > 0 && !inside(ph.p_offset, ph.p_filesz, 1))
      return fmt::format("segment {} ends at byte {} of a {}-byte file", i, ph.p_offset + ph.p_filesz, size);
  }
  if (h.e_shnum > 0) {
    if (h.e_shentsize != sizeof(Shdr) || !inside(h.e_shoff, h.e_shnum, sizeof(Shdr)))
      return fmt::format("its section headers lie past its end ({} bytes)", size);
    for (unsigned i = 0; i < h.e_shnum; ++i) {
      Shdr sh;
      std::memcpy(&sh, bytes.data() + h.e_shoff + i * sizeof sh, sizeof sh);
      if (sh.sh_type != SHT_NOBITS && sh.sh_size > 0 && !inside(sh.sh_offset, sh.sh_size, 1))
        return fmt::format("section {} ends at byte {} of a {}-byte file", i, sh.sh_offset + sh.sh_size, size);
    }
  }
  return "";
}

void forget_loaded_modules() {
  std::lock_guard lock(g_modules_mutex);
  loaded_modules().clear();  // the handles leak on purpose: never dlclosed (header)
}

}  // namespace detail

HostCompiler host_compiler() {
  HostCompiler c;
  std::string text;
  if (!(text = env("LUDA_CXX")).empty()) c.source = "LUDA_CXX";
  else if (!(text = env("CXX")).empty()) c.source = "CXX";
  else text = "c++", c.source = "default";
  c.command = split_spaces(text);
  if (c.command.empty()) c.command = {"c++"}, c.source = "default";
  c.identity = describe_compiler(c);
  return c;
}

std::vector<std::string> host_compile_flags(bool fastmath, bool debug) {
  // -fno-delete-null-pointer-checks: a store through a null pointer stays a store, and
  // faults as it would on a GPU (the cpu device turns the fault into an error naming the
  // kernel); without it GCC may drop the store, or the code around it, as undefined.
  std::vector<std::string> flags = {"-std=c++17",      "-O2",
                                    "-fPIC",           "-shared",
                                    "-fno-math-errno", "-fno-delete-null-pointer-checks"};
  if (!portable()) flags.push_back("-march=native");
  if (fastmath) flags.push_back("-ffast-math");
  if (debug) flags.push_back("-g");
  return flags;
}

CacheKey host_binary_key(const HostCompileRequest& request) {
  HostCompiler c = host_compiler();
  std::vector<std::string> flags = host_compile_flags(request.fastmath, request.debug);
  CacheKeyBuilder b;
  b.add("source", request.source)
      .add("file", request.file_name)
      .add("target", "cpu")
      .add("compiler", c.identity)
      .add("flags", fmt::format("{}", fmt::join(flags, " ")))
      .add("options", fmt::format("{}", fmt::join(request.options, " ")))
      .add("cpu", portable() ? std::string("portable") : detail::cpu_identity())
      .add("prelude", kCpuPreludeVersion)
      .add("abi", LUDA_CPU_ABI_VERSION)
      .add("luda", LUDA_VERSION);
  return b.finish();
}

std::string compile_shared_object(const HostCompileRequest& request) {
  HostCompiler c = host_compiler();
  TempDir dir;
  std::string file = safe_file_name(request.file_name);
  {
    std::ofstream out(dir.path() / file, std::ios::binary);
    out << request.source;
    if (!out) fail("cannot write the kernel source to {}", (dir.path() / file).string());
  }
  std::vector<std::string> argv = c.command;
  for (std::string& f : host_compile_flags(request.fastmath, request.debug)) argv.push_back(std::move(f));
  argv.insert(argv.end(), request.options.begin(), request.options.end());
  fs::path object = dir.path() / "kernel.so";
  argv.insert(argv.end(), {"-x", "c++", (dir.path() / file).string(), "-o", object.string()});
  double limit = compile_time_limit();
  RunResult r = run(argv, dir.path() / "log.txt", limit);
  if (r.spawn_error) cannot_run(c, std::strerror(r.spawn_error));
  // The log names the temporary folder; readers want the file name alone ("add.cu:3:5").
  std::string log = r.output;
  std::string prefix = dir.path().string() + "/";
  for (std::size_t at; (at = log.find(prefix)) != std::string::npos;) log.erase(at, prefix.size());
  std::vector<std::string> shown = argv;
  for (std::string& a : shown)
    if (a.rfind(prefix, 0) == 0) a.erase(0, prefix.size());
  if (r.timed_out)
    fail("host C++ compiler did not finish compiling '{}' for the cpu target within {} s and was stopped (command: "
         "{}); set LUDA_CXX_TIMEOUT to more seconds if it needs longer",
         file, limit, fmt::join(shown, " "));
  if (r.status != 0) {
    std::string message = fmt::format("host C++ compiler failed to compile '{}' for the cpu target (command: {})", file,
                                      fmt::join(shown, " "));
    if (r.status < 0) message += ": the compiler did not exit normally";
    if (!log.empty()) message += "\n" + log;
    if (!message.empty() && message.back() == '\n') message.pop_back();
    message += "\nsource:\n" + detail::numbered_source(request.source);
    throw CompileError(std::move(message), log, shown, request.source);
  }
  std::string bytes = read_file(object);
  if (bytes.empty()) fail("host C++ compiler '{}' wrote no shared object for '{}'", fmt::join(c.command, " "), file);
  if (std::string defect = detail::shared_object_defect(bytes); !defect.empty())
    fail("host C++ compiler '{}' wrote a damaged shared object for '{}': {} (is the disk that holds {} full?)",
         fmt::join(c.command, " "), file, defect, dir.path().parent_path().string());
  return bytes;
}

CpuKernel CpuModule::kernel(std::string_view name) const {
  std::string run = std::string(name) + "_cpu";
  CpuKernel e;
  e.run_thread = reinterpret_cast<void (*)(void* const*)>(symbol(run.c_str()));
  if (!e.run_thread) fail("the compiled cpu module has no kernel entry '{}'", run);
  e.current_slot = current_slot_;
  const int* fibers = static_cast<const int*>(symbol((run + "_needs_fibers").c_str()));
  e.needs_fibers = !fibers || *fibers != 0;  // unknown: the safe way
  const int* cooperative = static_cast<const int*>(symbol((run + "_cooperative").c_str()));
  e.cooperative = cooperative && *cooperative != 0;
  e.run_block = reinterpret_cast<void (*)(void* const*, luda_cpu_thread*)>(symbol((run + "_block").c_str()));
  return e;
}

void* CpuModule::symbol(const char* name) const { return ::dlsym(handle_, name); }

void* CpuModule::variable(const char* name, std::size_t* bytes) const {
  void* address = ::dlsym(handle_, name);
  if (!address) return nullptr;
  // The symbol table entry says what it is and how large; the link map says whose it is.
  Dl_info info{};
  void* extra = nullptr;
  if (!::dladdr1(address, &info, &extra, RTLD_DL_SYMENT) || !extra) return nullptr;
  const auto* entry = static_cast<const ElfW(Sym)*>(extra);
  struct link_map* own = nullptr;
  if (::dlinfo(handle_, RTLD_DI_LINKMAP, &own) != 0 || !own || !info.dli_fname || !own->l_name ||
      std::strcmp(info.dli_fname, own->l_name) != 0)
    return nullptr;
  // (a __shared__ variable is thread_local on the cpu: STT_TLS, no one address)
  if (ELF64_ST_TYPE(entry->st_info) != STT_OBJECT) return nullptr;
  *bytes = entry->st_size;
  return address;
}

std::shared_ptr<const CpuModule> load_cpu_module(const HostCompileRequest& request, DiskCache& cache,
                                                 const luda_cpu_runtime* runtime, HostCompileStats* stats) {
  HostCompileStats ignored;
  HostCompileStats& s = stats ? *stats : ignored;
  CacheKey key = host_binary_key(request);
  std::string hex = key.hex();
  {
    std::lock_guard lock(g_modules_mutex);
    if (auto it = loaded_modules().find(hex); it != loaded_modules().end()) return it->second;
  }
  auto t0 = Clock::now();
  // An object is checked before dlopen maps it (mapped bytes past a file's end are a
  // SIGBUS), and enters the cache only once it has loaded.
  std::string payload;
  bool compiled = false;
  if (std::optional<std::string> hit = cache.load(key, request.what + " for the cpu");
      hit && !hit->empty() && (*hit)[0] == kObjectTag &&
      detail::shared_object_defect(std::string_view(*hit).substr(1)).empty()) {
    ++s.disk_hits;
    payload = std::move(*hit);
  } else {
    ++s.disk_misses;
    auto c0 = Clock::now();
    payload = std::string(1, kObjectTag) + compile_shared_object(request);
    s.compile_seconds += std::chrono::duration<double>(Clock::now() - c0).count();
    ++s.compiles;
    compiled = true;
  }
  // dlopen takes a file: the bytes go to a private temporary one, unlinked once mapped.
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string path = (base / "luda-kernel-XXXXXX.so").string();
  int fd = ::mkstemps(path.data(), 3);
  if (fd < 0) fail("cannot create a temporary file to load {} from: {}", request.what, std::strerror(errno));
  const char* p = payload.data() + 1;
  std::size_t left = payload.size() - 1;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(path.c_str());
      fail("cannot write {} to {}: {}", request.what, path, std::strerror(err));
    }
    p += n, left -= static_cast<std::size_t>(n);
  }
  ::close(fd);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = handle ? "" : ::dlerror();
  ::unlink(path.c_str());
  if (!handle) fail("cannot load the compiled cpu code of {}: {}", request.what, why);
  auto module = std::shared_ptr<CpuModule>(new CpuModule());
  module->handle_ = handle;
  module->key_ = hex;
  auto bind = reinterpret_cast<void (*)(const luda_cpu_runtime*)>(::dlsym(handle, "luda_cpu_bind"));
  module->current_slot_ = reinterpret_cast<luda_cpu_thread** (*)()>(::dlsym(handle, "luda_cpu_current_slot"));
  if (!bind || !module->current_slot_)
    fail("the compiled cpu code of {} lacks luda_cpu_bind or luda_cpu_current_slot (was it compiled with the cpu "
         "prelude?)",
         request.what);
  bind(runtime);
  if (compiled) cache.store(key, payload);
  ++s.loads;
  s.load_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  std::lock_guard lock(g_modules_mutex);
  auto [it, inserted] = loaded_modules().emplace(hex, std::move(module));
  return it->second;  // a racing thread's, when it loaded the same key first (both stay open)
}

}  // namespace luda::jit

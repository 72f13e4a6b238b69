// The cpu target's compiler: CUDA C++ (generated, or raw with the cpu prelude) compiled
// by the host C++ compiler into a shared object, cached on disk like cubins, loaded with
// dlopen(RTLD_NOW | RTLD_LOCAL).
//
// The compiler is $LUDA_CXX, else $CXX, else `c++` (split on spaces, so "ccache g++"
// works; run through posix_spawnp with an argv: no shell). Flags:
//   -std=c++17 -O2 -fPIC -shared -fno-math-errno -march=native
// -march=native is dropped when LUDA_CPU_PORTABLE=1; -fno-math-errno keeps IEEE results
// (it only stops sqrt & co. from setting errno, so they inline); fastmath adds -ffast-math
// and debug adds -g. The cache key adds target=cpu, the compiler's identity (resolved
// path, size, mtime, `--version`), the flags, this CPU's model and flags under
// -march=native (a shared cache folder must not hand a binary to a CPU that lacks its
// instructions), the prelude and ABI versions.
//
// Each run of the compiler may take LUDA_CXX_TIMEOUT seconds (300 when unset); then its
// whole process group (driver, compiler proper, assembler, linker) is killed and the
// compile fails with an error that says so. Its output is checked to be a whole shared
// object (a full disk can truncate it) and loaded before it is stored in the cache; an
// object from the cache is checked the same way and rebuilt when damaged.
//
// Loaded objects are never dlclosed: the executor's OS threads keep thread_local storage
// of every kernel they ran, and unloading under them is a classic crash.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jit/compile/disk_cache.h"
#include "jit/compile/nvrtc.h"  // CompileError
#include "runtime/cpu_abi.h"
#include "runtime/cpu_executor.h"  // CpuKernel

namespace luda::jit {

struct HostCompiler {
  std::vector<std::string> command;  // argv prefix: {"g++"} or {"ccache", "g++"}
  std::string source;                // "LUDA_CXX", "CXX" or "default": where it came from
  std::string version;               // first line of `<cxx> --version`
  std::string identity;              // what the cache key hashes
};

// The compiler in effect now: the environment is read on each call; `--version` runs once
// per distinct command in the process. Throws Error when it cannot be run:
//   host C++ compiler 'clang++-99' (from $LUDA_CXX) could not be run: No such file or
//   directory; install g++ or clang++, or set LUDA_CXX to a C++17 compiler
HostCompiler host_compiler();

// The flags for one compile (see above), without the source and output arguments.
std::vector<std::string> host_compile_flags(bool fastmath, bool debug);

struct HostCompileRequest {
  std::string source;                   // complete: prelude included
  std::string file_name = "kernel.cu";  // what diagnostics call it (compiled as C++: -x c++)
  bool fastmath = false;
  bool debug = false;
  std::vector<std::string> options;  // more flags (raw modules' -D/-U/-I), after ours
  std::string what;                  // "kernel 'add'": for cache debug output and errors
};

struct HostCompileStats {
  std::uint64_t compiles = 0, disk_hits = 0, disk_misses = 0, loads = 0;
  double compile_seconds = 0, load_seconds = 0;
};

// A loaded shared object, bound to a runtime.
class CpuModule {
 public:
  // The kernel `entry` as the executor runs it (symbols <entry>_cpu and
  // <entry>_cpu_needs_fibers). Error "the compiled cpu module has no kernel entry
  // 'foo_cpu'" when missing.
  CpuKernel kernel(std::string_view entry) const;
  void* symbol(const char* name) const;  // nullptr when absent
  // The variable `name` that this shared object itself defines, and its size in bytes
  // (*bytes); nullptr when it defines no variable of that name (a function, or a symbol
  // of a library it links, is none).
  void* variable(const char* name, std::size_t* bytes) const;
  const std::string& key() const { return key_; }

 private:
  friend std::shared_ptr<const CpuModule> load_cpu_module(const HostCompileRequest&, DiskCache&,
                                                          const luda_cpu_runtime*, HostCompileStats*);
  void* handle_ = nullptr;
  std::string key_;
  luda_cpu_thread** (*current_slot_)() = nullptr;
};

// Runs the compiler on the request; returns the shared object's bytes. Throws
// CompileError: message "host C++ compiler failed to compile 'add.cu' for the cpu target
// (command: g++ -std=c++17 ...)", then the compiler's output, then the numbered source;
// log() is the compiler's output, options() the command.
std::string compile_shared_object(const HostCompileRequest& request);

// The cache key of a request's object (everything that can change the binary).
CacheKey host_binary_key(const HostCompileRequest& request);

// The object for `request`: loaded already in this process (same key), else from the
// disk cache, else compiled and stored; dlopened and bound to `runtime` (luda_cpu_bind).
// `stats` (may be null) counts what happened.
std::shared_ptr<const CpuModule> load_cpu_module(const HostCompileRequest& request, DiskCache& cache,
                                                 const luda_cpu_runtime* runtime, HostCompileStats* stats);

namespace detail {
// Why `bytes` cannot be a whole shared object of this machine ("segment 2 ends at byte
// 16384 of a 9000-byte file": truncated), "" when its headers, segments and sections all
// lie inside it. What dlopen would map is checked before it maps it.
std::string shared_object_defect(std::string_view bytes);
// "model name | flags" of this CPU (from /proc/cpuinfo), "" where unknown.
std::string cpu_identity();
// Forgets the objects loaded so far (they stay mapped), so that the next load_cpu_module
// goes to the disk cache: tests of the cache use it.
void forget_loaded_modules();
}  // namespace detail

}  // namespace luda::jit

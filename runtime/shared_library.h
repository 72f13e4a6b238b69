// Libraries luda loads with dlopen on first use, never links: NVRTC, cuBLAS and cuSOLVER
// from the CUDA toolkit, OpenBLAS and LAPACKE from the system. One search for all of them,
// so that each is found the same way and a missing one says the same things: every path
// tried with why it failed, and the fix.
#pragma once

#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace luda {

// Throws Error(message): load_once's, kept out of line.
[[noreturn]] void throw_load_failure(const std::string& message);

// Where to look for one library.
struct LibrarySearch {
  const char* env = nullptr;       // a variable naming the file ("LUDA_NVRTC"), tried first
  const char* stem = nullptr;      // the file's unversioned name ("libnvrtc.so")
  bool toolkit = false;            // look in the CUDA toolkit's lib64 folders too
  std::vector<std::string> names;  // bare names for the loader's default search, in order
};

// The files tried, in order: $env; when `toolkit`, in $CUDA_HOME/lib64, $CUDA_PATH/lib64
// and /usr/local/cuda/lib64: <stem> then <stem>.<N...> newest first; then the bare names.
std::vector<std::string> library_candidates(const LibrarySearch& search);

// An opened library and the addresses of the symbols asked for, in order.
struct SharedLibrary {
  void* handle = nullptr;
  std::string path;  // the file loaded (the real one, for a bare name found by the search)
  std::vector<void*> symbols;
};

// Opens the first candidate that loads and has every symbol; `what` names the library in
// errors ("NVRTC"), `fix` ends them. Throws Error
//   cuBLAS not found; tried:
//     /usr/local/cuda/lib64/libcublas.so: no such file
//     libc.so.6: not cuBLAS (it has no cublasCreate_v2)
//   <fix>
SharedLibrary open_library(std::string_view what, const std::vector<std::string>& candidates,
                           std::span<const char* const> symbols, std::string_view fix);
// Closes what open_library opened.
void close_library(SharedLibrary& library);

// The table `load` makes (a library's entry points), made once per process and kept; a
// failure (an Error) is remembered and raised again at each use, naming what was tried.
template <class Table>
const Table& load_once(Table (*load)()) {
  static std::once_flag once;
  static Table table;
  static std::optional<std::string> failure;
  std::call_once(once, [&] {
    try {
      table = load();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (failure) throw_load_failure(*failure);
  return table;
}

}  // namespace luda

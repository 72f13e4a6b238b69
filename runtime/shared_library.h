// Libraries luda loads with dlopen on first use, never links: NVRTC, cuBLAS and cuSOLVER
// from the CUDA toolkit, OpenBLAS and LAPACKE from the system. One search for all of them,
// so that each is found the same way and a missing one says the same things: every path
// tried with why it failed, and the fix.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace luda {

// Where to look for one library.
struct LibrarySearch {
  const char* env = nullptr;                // a variable naming the file ("LUDA_NVRTC"), tried first
  const char* stem = nullptr;               // the file's unversioned name ("libnvrtc.so")
  bool toolkit = false;                     // look in the CUDA toolkit's lib64 folders too
  std::vector<std::string> names;           // bare names for the loader's default search, in order
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

}  // namespace luda

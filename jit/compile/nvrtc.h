// NVRTC, loaded with dlopen on first use from $LUDA_NVRTC, $CUDA_HOME/lib64,
// $CUDA_PATH/lib64, /usr/local/cuda/lib64, then the default search.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/error.h"

namespace luda::jit {

// A failed compile. what() carries everything needed to act on it:
//   NVRTC failed to compile 'add.cu' for sm_90 (options: --gpu-architecture=sm_90 -default-device)
//   add.cu(3): error: identifier "y" is undefined
//   ...
//   source:
//      1 | extern "C" __global__ void add(...)
using CompileError = luda::CompileError;  // public (luda/core.h)

struct NvrtcVersion {
  int major = 0, minor = 0;
};

// Each throws, when no library loads, Error
//   NVRTC not found; tried:
//     /usr/local/cuda/lib64/libnvrtc.so: no such file
//     libnvrtc.so: <dlerror>
//   set LUDA_NVRTC to the path of libnvrtc.so (from the CUDA toolkit, version 12 or 13)
NvrtcVersion nvrtc_version();
std::string nvrtc_library_path();          // the file that was loaded
std::vector<int> nvrtc_supported_archs();  // e.g. {75, 80, 86, 89, 90, 100, 120}

struct CompileRequest {
  std::string source;
  std::string program_name = "kernel.cu";     // the name diagnostics show
  int arch = 90;                              // compute capability as major*10+minor
  bool cubin = true;                          // false: PTX for compute_<arch>
  std::vector<std::string> options;           // extra user options
  std::vector<std::string> name_expressions;  // C++ names to lower (non-extern "C" kernels)
};

struct CompiledProgram {
  std::string image;  // cubin or PTX (NUL-terminated in memory for cuModuleLoadData)
  bool cubin = true;
  std::string log;                                   // warnings, possibly empty
  std::vector<std::string> options;                  // as given (-D and -U reach NVRTC as #define and #undef lines)
  std::map<std::string, std::string> lowered_names;  // name expression -> mangled name
};

// Compiles with -default-device, --gpu-architecture=sm_XY (or compute_XY), and the
// request's options. When the arch is newer than NVRTC supports, compiles PTX for the
// newest supported arch instead (the driver JITs it). Throws CompileError.
// The -D and -U options become #define and #undef lines ahead of the source (NVRTC's own
// builtin header takes -DT=... for its template parameter T, and breaks).
// Options: --gpu-architecture, -default-device, the user's options, then -I<the CUDA
// include folder> when one is found (so that <cuda_fp16.h> and friends resolve).
CompiledProgram compile(const CompileRequest& request);

namespace detail {
// The files tried, in order: $LUDA_NVRTC; in $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
// /usr/local/cuda/lib64: libnvrtc.so then libnvrtc.so.<N> newest first; then the bare
// names libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12 for the default search.
std::vector<std::string> nvrtc_candidates();
// Loads the first candidate that opens and has every entry point luda calls, and closes
// it again; returns its path. Throws the "NVRTC not found" Error naming every candidate
// with why it failed. The process-wide library is loaded the same way, once.
std::string probe_nvrtc(const std::vector<std::string>& candidates);
// "   1 | first line\n   2 | ..." as compile errors show source.
std::string numbered_source(std::string_view source);
}  // namespace detail

}  // namespace luda::jit

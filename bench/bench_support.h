// What the C++ measurement programs of bench/ share: reading their counts, medians, and
// compiling and loading the kernels they launch bare.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "jit/compile/nvrtc.h"
#include "runtime/device.h"
#include "runtime/driver.h"

namespace luda::bench {

// The count given after `flag` (1 to 10^8); else a message naming `program` and exit 2.
inline int positive(const char* program, const char* flag, const char* text) {
  char* end = nullptr;
  long v = std::strtol(text ? text : "", &end, 10);
  if (!text || *end || v < 1 || v > 100000000) {
    std::fprintf(stderr, "%s: %s needs a positive count, got '%s'\n", program, flag, text ? text : "");
    std::exit(2);
  }
  return static_cast<int>(v);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// `source` compiled by NVRTC for cuda:0 and loaded there (its context made current by the
// caller's ContextScope).
inline CUmodule load_module(const char* source) {
  const DeviceProperties& props = cuda_properties(0);
  jit::CompileRequest request;
  request.source = source;
  request.arch = props.major * 10 + props.minor;
  jit::CompiledProgram program = jit::compile(request);
  CUmodule module;
  LUDA_CU(cuModuleLoadData, &module, program.image.c_str());
  return module;
}

}  // namespace luda::bench

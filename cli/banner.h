// The first line `luda -v` and the REPL print: versions and the default device.
//   luda 0.1.0 (Lua 5.4.4) — cuda:0 NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)
//   luda 0.1.0 (Lua 5.4.4) — cpu (no CUDA device: libcuda.so.1 not found ...)
#pragma once

#include <string>

namespace luda::cli {

// Never throws: a failure to query the device is shown in place of the device.
std::string banner();

}  // namespace luda::cli

// Which compile target a device's code is for: the cpu device's host code (one for every
// cpu device: they share the host), or a CUDA device's by its ordinal.
#pragma once

#include "luda/core.h"

namespace luda::jit {

// The device ordinal of the cpu target, in keys and loaded programs: every cpu device's,
// since they share the host and its code (one compile serves cpu:0, cpu:1, ...).
inline constexpr int kCpuDevice = -2;
// The ordinal of the target code for `d` runs as: its CUDA ordinal, or kCpuDevice.
inline int target_ordinal(Device d) { return d.is_cpu() ? kCpuDevice : d.index; }

}  // namespace luda::jit

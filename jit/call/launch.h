// The launch step of every call, for every kind of kernel: a loaded program
// (jit/compile/program.h) started with its packed arguments (jit/call/arg_buffer.h) on
// the cpu executor or its CUDA device, or taken as a node by the graph being recorded
// (runtime/graph/recording.h); the checks of a launch configuration and of a bounds record.
#pragma once

#include <cuda.h>

#include <string_view>

#include "dsl/compile.h"
#include "jit/compile/program.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace luda::jit {

// Who a launch is: `who` starts its errors ("kernel 'add'"); `label` names it in a later
// sticky error (driver::note_launch: "kernel 'add' (add.lua:3)") and lives as long as the
// process (driver::intern_label).
struct LaunchName {
  std::string_view who;
  const char* label = nullptr;
};

// The launch step of every call, for every kind of kernel: `program`'s entry with `args`
// (an ArgBuffer's pointers), on the cpu (the executor, synchronously) or on its CUDA
// device, whose context is made current when it is not; cooperatively
// (cuLaunchCooperativeKernel) when the program's kernels call the grid barrier, a grid
// past what the device holds at once being an error after `who` ("kernel 'k': a
// cooperative grid of ...": cooperative_grid_too_large). A driver failure names `who`.
// `device` is the call's (call_device): the program's CUDA device, or any cpu device for
// the cpu target; a graph being recorded (runtime/graph/recording.h) takes the launch only on its own.
void launch(const LoadedProgram& program, Device device, const LaunchConfig& config, void** args,
            const LaunchName& name);

// A launch configuration given by the caller, checked for `ordinal` (a CUDA device's
// limits, or the cpu target's), its errors after `who`: "kernel 'k': grid dimension x is
// 0: ...". A missing device's NoDeviceError passes as it is.
void check_launch_config(const LaunchConfig& config, int ordinal, std::string_view who);

// The record of a launch of code compiled with bounds checks (dsl::BoundsRecord, in
// `record`'s memory): zeroed before the launch, on its stream; read after it (a copy that
// waits for the kernel), where an index out of range raises dsl::record_message's error
// after `who`, at `chunk`.
dsl::BoundsRecord* zero_bounds_record(const Buffer& record, CUstream stream);
void check_bounds_record(const Buffer& record, CUstream stream, std::string_view who, std::string_view chunk);

// Numba's max_cooperative_grid_blocks: the most blocks of `block` threads (and
// `shared_mem` bytes of dynamic shared memory) of `loaded` that its device holds at once.
long long max_cooperative_grid_blocks(const LoadedProgram& loaded, const Dim3& block, unsigned shared_mem);

}  // namespace luda::jit

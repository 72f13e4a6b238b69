#include "runtime/launch.h"

#include <fmt/format.h>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/error.h"

namespace luda {

namespace {

constexpr const char* kAxes[3] = {"x", "y", "z"};
long long dim(const Dim3& d, int axis) { return axis == 0 ? d.x : axis == 1 ? d.y : d.z; }

std::string device_label(const DeviceProperties& props) {
  return fmt::format("cuda:{} ({})", props.ordinal, props.name);
}

}  // namespace

std::string Dim3::str() const {
  switch (ndim) {
    case 1: return fmt::format("({},)", x);
    case 2: return fmt::format("({}, {})", x, y);
    default: return fmt::format("({}, {}, {})", x, y, z);
  }
}

void LaunchConfig::validate(const DeviceProperties& props) const {
  for (const auto& [what, d] : {std::pair<const char*, const Dim3&>{"grid", grid}, {"block", block}})
    for (int axis = 0; axis < 3; ++axis)
      if (dim(d, axis) < 1)
        fail("{} dimension {} is {}: each grid and block dimension must be at least 1", what, kAxes[axis],
             dim(d, axis));
  // The thread count first: it is the limit people meet (a block of 2048), and its
  // message says the rule; the per-axis limits below catch (1, 1, 128).
  if (block.count() > props.max_threads_per_block)
    fail("block of {} has {} threads; {} allows at most {} per block", block.str(), block.count(), device_label(props),
         props.max_threads_per_block);
  for (int axis = 0; axis < 3; ++axis)
    if (dim(block, axis) > props.max_block_dim[axis])
      fail("block dimension {} is {}; {} allows at most {} in {}", kAxes[axis], dim(block, axis), device_label(props),
           props.max_block_dim[axis], kAxes[axis]);
  for (int axis = 0; axis < 3; ++axis)
    if (dim(grid, axis) > props.max_grid_dim[axis])
      fail("grid dimension {} is {}; {} allows at most {} in {}", kAxes[axis], dim(grid, axis), device_label(props),
           props.max_grid_dim[axis], kAxes[axis]);
  if (stream_device && *stream_device != Device::cuda(props.ordinal))
    fail("the stream is on {} but the launch is on cuda:{}; use a stream of cuda:{}", stream_device->str(),
         props.ordinal, props.ordinal);
  if (shared_mem > props.shared_memory_per_block_optin)
    fail("dynamic shared memory of {} bytes ({}) is more than {} allows per block ({} bytes)", shared_mem,
         driver::format_bytes(shared_mem), device_label(props), props.shared_memory_per_block_optin);
}

void launch_opted_in(CUfunction f, const LaunchConfig& config, void** args, bool cooperative, std::string_view who) {
  const driver::Api& cu = driver::api();
  if (config.shared_mem > kDefaultSharedLimit) {
    CUresult r = cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(config.shared_mem));
    if (r != CUDA_SUCCESS)
      driver::check(r, "cuFuncSetAttribute", fmt::format("{} bytes of dynamic shared memory", config.shared_mem));
  }
  const auto gx = static_cast<unsigned>(config.grid.x), gy = static_cast<unsigned>(config.grid.y),
             gz = static_cast<unsigned>(config.grid.z), bx = static_cast<unsigned>(config.block.x),
             by = static_cast<unsigned>(config.block.y), bz = static_cast<unsigned>(config.block.z);
  CUresult r = cooperative
                   ? cu.cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, config.shared_mem, config.stream, args)
                   : cu.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, config.shared_mem, config.stream, args, nullptr);
  if (r != CUDA_SUCCESS) launch_failed(r, config, cooperative, who);
}

void launch_failed(CUresult r, const LaunchConfig& config, bool cooperative, std::string_view who) {
  driver::detail::throw_check(r, cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel",
                              fmt::format("{}{}grid {}, block {}, {} bytes of dynamic shared memory", who,
                                          who.empty() ? "" : ", ", config.grid.str(), config.block.str(),
                                          config.shared_mem));
}

long long max_cooperative_blocks(CUfunction f, const Dim3& block, unsigned shared_mem, const DeviceProperties& props) {
  int per_multiprocessor = 0;
  driver::check(driver::api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, f,
                                                                          static_cast<int>(block.count()), shared_mem),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                fmt::format("block {}, {} bytes of dynamic shared memory", block.str(), shared_mem));
  return static_cast<long long>(per_multiprocessor) * props.multiprocessors;
}

void cooperative_grid_too_large(CUfunction f, const LaunchConfig& config, const DeviceProperties& props) {
  const long long threads = config.block.count();
  const long long most = max_cooperative_blocks(f, config.block, config.shared_mem, props);
  fail("a cooperative grid of {} blocks of {} threads is more than {} holds at once: at most {} blocks of {} "
       "threads ({} a multiprocessor x {} multiprocessors, for this kernel's registers and shared memory); launch "
       "at most k:max_cooperative_grid_blocks({}) blocks and loop over the rest of the work (a grid-stride loop)",
       config.grid.count(), threads, device_label(props), most, threads,
       props.multiprocessors > 0 ? most / props.multiprocessors : 0, props.multiprocessors, threads);
}

}  // namespace luda

#include "cli/banner.h"

#include <lua.h>

#include <exception>

#include <fmt/format.h>

#include "runtime/device.h"
#include "runtime/driver.h"

// The build may pass the project version; this is the version of this source otherwise.
#ifndef LUDA_VERSION
#define LUDA_VERSION "0.1.0"
#endif

namespace luda::cli {
namespace {

std::string device_text() {
  Device d = default_device();
  const int cpus = cpu_device_count();
  const std::string cpu_count = cpus > 1 ? fmt::format("; {} cpu devices", cpus) : std::string();
  if (d.is_cuda()) {
    const DeviceProperties& p = cuda_properties(d.index);
    int count = cuda_device_count();
    return fmt::format("{} {} ({}, {} SMs, {}){}{}", d.str(), p.name, p.arch(), p.multiprocessors,
                       driver::format_bytes(p.total_memory),
                       count > 1 ? fmt::format("; {} CUDA devices", count) : std::string(), cpu_count);
  }
  try {
    require_cuda_device(0);  // throws "no CUDA device: <why>", which is what to show
  } catch (const Error& e) {
    return fmt::format("{} ({}){}", d.str(), e.what(), cpu_count);
  }
  return d.str() + cpu_count;
}

}  // namespace

std::string banner() {
  std::string device;
  try {
    device = device_text();
  } catch (const std::exception& e) {
    device = fmt::format("cpu (the CUDA device could not be queried: {})", e.what());
  }
  return fmt::format("luda {} ({}) \u2014 {}", LUDA_VERSION, LUA_RELEASE, device);
}

}  // namespace luda::cli

// Launch configuration: checked before the driver sees it, with the fix in the error.
#pragma once

#include <cuda.h>

#include <string>

namespace luda {

struct DeviceProperties;

struct Dim3 {
  long long x = 1, y = 1, z = 1;  // signed so that 0 and negatives can be reported
  long long count() const { return x * y * z; }
  std::string str() const;  // "(10,)" / "(10, 4)" / "(2, 2, 2)" for the dims given
  int ndim = 1;
};

struct LaunchConfig {
  Dim3 grid, block;
  unsigned shared_mem = 0;  // dynamic shared memory, bytes
  CUstream stream = nullptr;

  // Error when a dimension is < 1 or past the device's limits, or block threads > max:
  // "grid dimension x is 0: each grid and block dimension must be at least 1".
  void validate(const DeviceProperties& props) const;
};

// cuLaunchKernel with the config; the caller has made the device's context current.
void launch(CUfunction f, const LaunchConfig& config, void** args);

}  // namespace luda

// GPU tests skip, with the reason printed, where no CUDA device is usable (CI, laptops),
// and run everywhere else.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "runtime/device.h"
#include "runtime/driver.h"

namespace luda::test_support {

// Why no CUDA device is usable ("no CUDA device: ..."), or "" when one is.
inline std::string no_device_reason() {
  try {
    require_cuda_device(0);
    return {};
  } catch (const NoDeviceError& e) {
    return e.what();
  }
}

}  // namespace luda::test_support

#define LUDA_REQUIRE_GPU()                                                          \
  do {                                                                              \
    if (std::string why = ::luda::test_support::no_device_reason(); !why.empty()) {      \
      GTEST_SKIP() << why;                                                          \
    }                                                                               \
  } while (0)

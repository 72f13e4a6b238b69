// What the GoogleTest files share. GPU tests skip, with the reason printed, where no CUDA
// device is usable (CI, laptops), and run everywhere else.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

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

// n random bytes from a seeded generator: test data that is never all zeros.
inline std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// What f throws (its what()), or "no error".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace luda::test_support

#define LUDA_REQUIRE_GPU()                                                          \
  do {                                                                              \
    if (std::string why = ::luda::test_support::no_device_reason(); !why.empty()) {      \
      GTEST_SKIP() << why;                                                          \
    }                                                                               \
  } while (0)

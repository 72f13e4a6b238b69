// What the GoogleTest files share. GPU tests skip, with the reason printed, where no CUDA
// device is usable (CI, laptops), and run everywhere else.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/ndarray.h"

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

// a's elements on the host, read as T (the element type of a's dtype).
template <class T>
std::vector<T> host_values(const NDArray& a) {
  const std::vector<std::byte> bytes = a.to_host_bytes();
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

}  // namespace luda::test_support

#define LUDA_REQUIRE_GPU()                                                          \
  do {                                                                              \
    if (std::string why = ::luda::test_support::no_device_reason(); !why.empty()) { \
      GTEST_SKIP() << why;                                                          \
    }                                                                               \
  } while (0)

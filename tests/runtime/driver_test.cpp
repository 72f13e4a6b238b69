// The driver table, error messages and byte formatting. The dlopen failure paths are
// tested in-process through driver::detail::open_driver.
#include "runtime/driver.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

namespace luda {
namespace {

std::string message_of(CUresult r, std::string_view call, std::string_view detail = {}) {
  try {
    driver::check(r, call, detail);
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), r);
    return e.what();
  }
  return "(no error)";
}

TEST(FormatBytes, PinnedValues) {
  EXPECT_EQ(driver::format_bytes(0), "0 B");
  EXPECT_EQ(driver::format_bytes(512), "512 B");
  EXPECT_EQ(driver::format_bytes(1023), "1023 B");
  EXPECT_EQ(driver::format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(driver::format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(driver::format_bytes(1536ull * 1024), "1.5 MiB");
  EXPECT_EQ(driver::format_bytes(8ull << 30), "8.0 GiB");
  EXPECT_EQ(driver::format_bytes(2254857830ull), "2.1 GiB");
  EXPECT_EQ(driver::format_bytes(1ull << 50), "1024.0 TiB");
  // 1023.999 KiB would round to "1024.0 KiB": it is shown in the next unit.
  EXPECT_EQ(driver::format_bytes((1ull << 20) - 1), "1.0 MiB");
}

TEST(FormatBytes, RandomSizesRoundTripWithinRounding) {
  std::mt19937_64 rng(12345);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  for (int i = 0; i < 2000; ++i) {
    unsigned long long bytes = rng() >> (rng() % 63);
    std::string text = driver::format_bytes(bytes);
    double value = 0;
    char unit[8] = {};
    ASSERT_EQ(std::sscanf(text.c_str(), "%lf %7s", &value, unit), 2) << text;
    if (std::string(unit) == "B") {
      EXPECT_EQ(static_cast<unsigned long long>(value), bytes);
      EXPECT_LT(bytes, 1024u);
      continue;
    }
    int power = 0;
    while (power < 4 && std::string(unit) != units[power]) ++power;
    ASSERT_LT(power, 4) << text;
    double scale = std::pow(1024.0, power + 1);
    EXPECT_NEAR(value * scale, static_cast<double>(bytes), 0.05 * scale + 1) << text;
    EXPECT_GE(value, 1.0) << text;
    if (power < 3) {
      EXPECT_LT(value, 1024.0) << text;
    }
  }
}

TEST(ErrorNames, KnownAndUnknownCodes) {
  EXPECT_EQ(driver::error_name(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(driver::error_string(CUDA_ERROR_OUT_OF_MEMORY), "out of memory");
  EXPECT_EQ(driver::error_name(CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(driver::error_string(CUDA_ERROR_ILLEGAL_ADDRESS), "an illegal memory access was encountered");
  EXPECT_EQ(driver::error_name(CUDA_ERROR_UNKNOWN), "CUDA_ERROR_UNKNOWN");
  EXPECT_EQ(driver::error_name(CUDA_ERROR_KEY_ROTATION), "CUDA_ERROR_KEY_ROTATION");
  EXPECT_EQ(driver::error_name(static_cast<CUresult>(12345)), "CUDA_ERROR_12345");
  EXPECT_EQ(driver::error_string(static_cast<CUresult>(12345)), "unrecognized error code");
}

TEST(Check, SuccessDoesNotThrow) { EXPECT_NO_THROW(driver::check(CUDA_SUCCESS, "cuInit")); }

TEST(Check, MessageNamesCallErrorAndDetail) {
  EXPECT_EQ(message_of(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocAsync", "asked for 8.0 GiB, 2.1 GiB free"),
            "cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY: out of memory (asked for 8.0 GiB, 2.1 "
            "GiB free)");
  EXPECT_EQ(message_of(CUDA_ERROR_INVALID_VALUE, "cuMemsetD8Async"),
            "cuMemsetD8Async: CUDA_ERROR_INVALID_VALUE: invalid argument");
}

TEST(Check, StickyErrorsSayToRestart) {
  EXPECT_EQ(message_of(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize"),
            "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was "
            "encountered. This error is sticky: the device's CUDA context is now unusable, and "
            "the process must be restarted to use that device again");
  for (CUresult r : {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_MISALIGNED_ADDRESS,
                     CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_ECC_UNCORRECTABLE,
                     CUDA_ERROR_INVALID_PC, CUDA_ERROR_ASSERT, CUDA_ERROR_LAUNCH_TIMEOUT}) {
    EXPECT_TRUE(driver::is_sticky(r)) << driver::error_name(r);
    EXPECT_NE(message_of(r, "cuCtxSynchronize").find("the process must be restarted"), std::string::npos);
  }
  // A fault inside a kernel surfaces at a later call: the message names the kernel the
  // thread launched last, and how to find an out-of-range access.
  driver::note_launch(driver::intern_label("kernel 'hist' (hist.lua:12)"));
  EXPECT_EQ(message_of(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize"),
            "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was "
            "encountered. This error is sticky: the device's CUDA context is now unusable, and "
            "the process must be restarted to use that device again. The last kernel this thread "
            "launched was kernel 'hist' (hist.lua:12): an index out of range is the usual cause, "
            "which bounds checks find in cuda.jit and elementwise kernels ({boundscheck = true}, or "
            "LUDA_BOUNDSCHECK=1), and compute-sanitizer in any kernel");
  EXPECT_EQ(message_of(CUDA_ERROR_ILLEGAL_INSTRUCTION, "cuCtxSynchronize"),
            "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_INSTRUCTION: an illegal instruction was "
            "encountered. This error is sticky: the device's CUDA context is now unusable, and "
            "the process must be restarted to use that device again. The last kernel this thread "
            "launched was kernel 'hist' (hist.lua:12)");
  driver::note_launch(nullptr);
  for (CUresult r : {CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_READY,
                     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_INVALID_PTX}) {
    EXPECT_FALSE(driver::is_sticky(r)) << driver::error_name(r);
    EXPECT_EQ(message_of(r, "cuCtxSynchronize").find("sticky"), std::string::npos);
  }
}

TEST(OpenDriver, MissingLibrary) {
  driver::Api api;
  EXPECT_EQ(driver::detail::open_driver("libluda_no_such_driver.so.1", api),
            "libluda_no_such_driver.so.1 not found (libluda_no_such_driver.so.1: cannot open "
            "shared object file: No such file or directory); install the NVIDIA driver or use "
            "the cpu device");
  EXPECT_EQ(api.cuInit, nullptr);
}

TEST(OpenDriver, FileThatIsNotALibrary) {
  std::string path = ::testing::TempDir() + "luda_not_a_library.so";
  std::ofstream(path) << std::string(256, 'x');
  driver::Api api;
  EXPECT_EQ(driver::detail::open_driver(path.c_str(), api),
            path + " cannot be loaded (" + path +
                ": invalid ELF header); install the NVIDIA driver or use the cpu device");
  std::remove(path.c_str());
}

TEST(OpenDriver, LibraryWithoutTheDriverEntryPoints) {
  driver::Api api;
  EXPECT_EQ(driver::detail::open_driver("libm.so.6", api),
            "libm.so.6 has no cuInit: it is not the CUDA driver, or a driver older than luda "
            "needs (CUDA 12 or newer); update the NVIDIA driver or use the cpu device");
  EXPECT_EQ(api.cuInit, nullptr);
}

TEST(Api, WithoutDriverRaisesNoDeviceError) {
  if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "libcuda.so.1 is installed here; the no-driver path needs a machine without";
  }
  std::string reason;
  EXPECT_FALSE(driver::available(&reason));
  EXPECT_EQ(reason, "libcuda.so.1 not found (libcuda.so.1: cannot open shared object file: No such file "
                    "or directory); install the NVIDIA driver or use the cpu device");
  try {
    driver::api();
    ADD_FAILURE() << "api() did not throw";
  } catch (const NoDeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "no CUDA device: " + reason);
  }
  // Later calls raise the same error.
  EXPECT_THROW(driver::api(), NoDeviceError);
}

TEST(Api, LoadedDriverHasEveryEntryPoint) {
  std::string reason;
  if (!driver::available(&reason)) GTEST_SKIP() << "no CUDA device: " << reason;
  const driver::Api& api = driver::api();
  EXPECT_GE(api.version, 12000);
#define LUDA_EXPECT_LOADED(name) EXPECT_NE(api.name, nullptr) << #name;
  LUDA_DRIVER_FUNCTIONS(LUDA_EXPECT_LOADED)
#undef LUDA_EXPECT_LOADED
  // The driver's own names agree with luda's table.
  for (int code = 0; code < 1000; ++code) {
    const char* name = nullptr;
    auto r = static_cast<CUresult>(code);
    if (api.cuGetErrorName(r, &name) == CUDA_SUCCESS) {
      EXPECT_EQ(driver::error_name(r), name);
    }
  }
  // Every description luda carries for use without a driver is the driver's own text.
  for (CUresult r : {CUDA_SUCCESS,
                     CUDA_ERROR_INVALID_VALUE,
                     CUDA_ERROR_OUT_OF_MEMORY,
                     CUDA_ERROR_NOT_INITIALIZED,
                     CUDA_ERROR_DEINITIALIZED,
                     CUDA_ERROR_STUB_LIBRARY,
                     CUDA_ERROR_DEVICE_UNAVAILABLE,
                     CUDA_ERROR_NO_DEVICE,
                     CUDA_ERROR_INVALID_DEVICE,
                     CUDA_ERROR_INVALID_IMAGE,
                     CUDA_ERROR_INVALID_CONTEXT,
                     CUDA_ERROR_NO_BINARY_FOR_GPU,
                     CUDA_ERROR_ECC_UNCORRECTABLE,
                     CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
                     CUDA_ERROR_INVALID_PTX,
                     CUDA_ERROR_INVALID_HANDLE,
                     CUDA_ERROR_NOT_FOUND,
                     CUDA_ERROR_NOT_READY,
                     CUDA_ERROR_ILLEGAL_ADDRESS,
                     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                     CUDA_ERROR_LAUNCH_TIMEOUT,
                     CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                     CUDA_ERROR_ASSERT,
                     CUDA_ERROR_HARDWARE_STACK_ERROR,
                     CUDA_ERROR_ILLEGAL_INSTRUCTION,
                     CUDA_ERROR_MISALIGNED_ADDRESS,
                     CUDA_ERROR_INVALID_ADDRESS_SPACE,
                     CUDA_ERROR_INVALID_PC,
                     CUDA_ERROR_LAUNCH_FAILED,
                     CUDA_ERROR_NOT_PERMITTED,
                     CUDA_ERROR_NOT_SUPPORTED,
                     CUDA_ERROR_UNKNOWN}) {
    const char* text = nullptr;
    ASSERT_EQ(api.cuGetErrorString(r, &text), CUDA_SUCCESS);
    EXPECT_EQ(driver::error_string(r), text) << driver::error_name(r);
  }
}

}  // namespace
}  // namespace luda

// Devices: names, the no-driver path, properties, the current device, contexts.
#include "runtime/device.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>

#include "runtime/driver.h"

#include "tests/test_support.h"

namespace luda {
namespace {

using test_support::no_device_reason;

std::string parse_error(std::string_view text) {
  try {
    Device::parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(Device, ParseAndStr) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:0"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:12"), Device::cuda(12));
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::cuda(3).str(), "cuda:3");
  EXPECT_TRUE(Device::parse("cpu").is_cpu());
  EXPECT_TRUE(Device::parse("cuda:1").is_cuda());
  EXPECT_NE(Device::cuda(0), Device::cpu());
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    int ordinal = static_cast<int>(rng() % 100000);
    Device d = Device::cuda(ordinal);
    EXPECT_EQ(d.str(), "cuda:" + std::to_string(ordinal));
    EXPECT_EQ(Device::parse(d.str()), d);
  }
}

TEST(Device, ParseErrors) {
  for (const char* text : {"gpu",
                           "",
                           "CPU",
                           "cuda:",
                           "cuda:x",
                           "cuda:-1",
                           "cuda:+1",
                           "cuda:1x",
                           " cuda:0",
                           "cuda:0 ",
                           "cuda:99999999999",
                           "cuda0",
                           "cpu:",
                           "cpu:x",
                           "cpu:-1",
                           "cpu:+1",
                           "cpu:1x",
                           " cpu:1",
                           "cpu:1 ",
                           "cpu:99999999999",
                           "cpu0",
                           "CPU:1"})
    EXPECT_EQ(parse_error(text), fmt::format("invalid device '{}': expected 'cpu', 'cpu:N', 'cuda' or "
                                             "'cuda:N'",
                                             text));
  EXPECT_EQ(parse_error("gpu"), "invalid device 'gpu': expected 'cpu', 'cpu:N', 'cuda' or 'cuda:N'");
}

TEST(Device, MissingDeviceMessage) {
  EXPECT_EQ(detail::missing_device_message(7, 1), "no CUDA device cuda:7: this machine has 1 (cuda:0)");
  EXPECT_EQ(detail::missing_device_message(2, 2), "no CUDA device cuda:2: this machine has 2 (cuda:0, cuda:1)");
  EXPECT_EQ(detail::missing_device_message(9, 8), "no CUDA device cuda:9: this machine has 8 (cuda:0 to cuda:7)");
}

TEST(Device, WithoutCudaEverythingIsCpu) {
  std::string why = no_device_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is usable here; this tests the no-GPU path";
  std::string reason;
  if (!driver::available(&reason)) {
    EXPECT_EQ(why, "no CUDA device: " + reason);
  }
  EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
  EXPECT_EQ(cuda_device_count(), 0);
  EXPECT_EQ(default_device(), Device::cpu());
  EXPECT_EQ(current_device(), Device::cpu());
  for (int ordinal : {0, 1, 7}) {
    try {
      require_cuda_device(ordinal);
      ADD_FAILURE() << "require_cuda_device did not throw";
    } catch (const NoDeviceError& e) {
      EXPECT_EQ(e.what(), why);
    }
  }
  try {
    use_device(Device::cuda(0));
    ADD_FAILURE() << "use_device did not throw";
  } catch (const NoDeviceError& e) {
    EXPECT_EQ(e.what(), why);
  }
  EXPECT_EQ(current_device(), Device::cpu());
  EXPECT_THROW(cuda_properties(0), NoDeviceError);
  EXPECT_THROW(primary_context(0), NoDeviceError);
  EXPECT_THROW(ContextScope scope(0), NoDeviceError);
  EXPECT_THROW(memory_info(0), NoDeviceError);
  EXPECT_THROW(synchronize(Device::cuda(0)), NoDeviceError);
  EXPECT_NO_THROW(synchronize(Device::cpu()));
  EXPECT_NO_THROW(use_device(Device::cpu()));
  EXPECT_EQ(current_device(), Device::cpu());
}

TEST(DeviceGpu, PropertiesAreSane) {
  LUDA_REQUIRE_GPU();
  ASSERT_GE(cuda_device_count(), 1);
  for (int i = 0; i < cuda_device_count(); ++i) {
    const DeviceProperties& p = cuda_properties(i);
    EXPECT_EQ(&p, &cuda_properties(i)) << "cached";
    EXPECT_FALSE(p.name.empty());
    EXPECT_EQ(p.ordinal, i);
    EXPECT_GE(p.major, 7);
    EXPECT_GE(p.minor, 0);
    EXPECT_EQ(p.arch(), "sm_" + std::to_string(p.major) + std::to_string(p.minor));
    EXPECT_GT(p.multiprocessors, 0);
    EXPECT_EQ(p.max_threads_per_block, 1024);
    EXPECT_EQ(p.max_block_dim[0], 1024);
    EXPECT_EQ(p.max_block_dim[2], 64);
    EXPECT_EQ(p.max_grid_dim[0], 2147483647);
    EXPECT_EQ(p.max_grid_dim[1], 65535);
    EXPECT_EQ(p.warp_size, 32);
    EXPECT_EQ(p.shared_memory_per_block, 48u * 1024);
    EXPECT_GE(p.shared_memory_per_block_optin, p.shared_memory_per_block);
    EXPECT_GT(p.total_memory, 1ull << 30);
    EXPECT_GT(p.l2_cache_bytes, 0u);
    EXPECT_GT(p.memory_bus_width, 0);
    MemoryInfo m = memory_info(i);
    EXPECT_GT(m.free, 0u);
    EXPECT_LE(m.free, m.total);
    EXPECT_LE(m.total, p.total_memory);
    EXPECT_GT(m.total, p.total_memory / 2);
  }
}

TEST(DeviceGpu, MissingOrdinalNamesTheDevices) {
  LUDA_REQUIRE_GPU();
  int n = cuda_device_count();
  for (int ordinal : {n, n + 6, -1}) {
    try {
      require_cuda_device(ordinal);
      ADD_FAILURE() << "require_cuda_device did not throw";
    } catch (const NoDeviceError& e) {
      EXPECT_EQ(e.what(), detail::missing_device_message(ordinal, n));
    }
  }
  if (n == 1) {
    try {
      use_device(Device::cuda(7));
      ADD_FAILURE() << "use_device did not throw";
    } catch (const NoDeviceError& e) {
      EXPECT_STREQ(e.what(), "no CUDA device cuda:7: this machine has 1 (cuda:0)");
    }
  }
}

TEST(DeviceGpu, CurrentDeviceIsPerThread) {
  LUDA_REQUIRE_GPU();
  EXPECT_EQ(default_device(), Device::cuda(0));
  EXPECT_EQ(current_device(), Device::cuda(0));
  use_device(Device::cpu());
  EXPECT_EQ(current_device(), Device::cpu());
  Device seen_in_thread, set_in_thread;
  std::thread([&] {
    seen_in_thread = current_device();
    use_device(Device::cuda(cuda_device_count() - 1));
    set_in_thread = current_device();
  }).join();
  EXPECT_EQ(seen_in_thread, Device::cuda(0));
  EXPECT_EQ(set_in_thread, Device::cuda(cuda_device_count() - 1));
  EXPECT_EQ(current_device(), Device::cpu());
  use_device(Device::cuda(0));
  EXPECT_EQ(current_device(), Device::cuda(0));
}

TEST(DeviceGpu, ContextScopeMakesThePrimaryContextCurrent) {
  LUDA_REQUIRE_GPU();
  CUcontext ctx0 = primary_context(0);
  ASSERT_NE(ctx0, nullptr);
  EXPECT_EQ(primary_context(0), ctx0);
  const driver::Api& cu = driver::api();
  std::thread([&] {
    CUcontext current = reinterpret_cast<CUcontext>(1);
    ASSERT_EQ(cu.cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr) << "a new thread has no context";
    {
      ContextScope scope(0);
      ASSERT_EQ(cu.cuCtxGetCurrent(&current), CUDA_SUCCESS);
      EXPECT_EQ(current, ctx0);
      ContextScope again(0);
      ASSERT_EQ(cu.cuCtxGetCurrent(&current), CUDA_SUCCESS);
      EXPECT_EQ(current, ctx0);
    }
    // With none current before, the device's context stays current.
    ASSERT_EQ(cu.cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, ctx0);
    if (cuda_device_count() >= 2) {
      CUcontext ctx1 = primary_context(1);
      EXPECT_NE(ctx1, ctx0);
      {
        ContextScope scope(1);
        ASSERT_EQ(cu.cuCtxGetCurrent(&current), CUDA_SUCCESS);
        EXPECT_EQ(current, ctx1);
      }
      ASSERT_EQ(cu.cuCtxGetCurrent(&current), CUDA_SUCCESS);
      EXPECT_EQ(current, ctx0) << "the previous context is restored";
    }
  }).join();
  EXPECT_NO_THROW(synchronize(Device::cuda(0)));
  EXPECT_TRUE(enable_peer_access(0, 0));
}

TEST(DeviceGpu, PeerAccessBetweenTwoDevices) {
  LUDA_REQUIRE_GPU();
  if (cuda_device_count() < 2)
    GTEST_SKIP() << "peer access needs 2 CUDA devices; this machine has " << cuda_device_count();
  int can = 0;
  ASSERT_EQ(driver::api().cuDeviceCanAccessPeer(&can, 0, 1), CUDA_SUCCESS);
  EXPECT_EQ(enable_peer_access(0, 1), can != 0);
  EXPECT_EQ(enable_peer_access(0, 1), can != 0) << "a second call is a no-op";
}

}  // namespace
}  // namespace luda

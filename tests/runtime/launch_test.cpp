// Launch configuration checks (with hand-made device properties), and a real launch of a
// hand-written PTX kernel on a GPU.
#include "runtime/launch.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/memory.h"

#include "tests/test_support.h"

namespace luda {
namespace {

// The limits of an H100 SXM, as cuda_properties reports them.
DeviceProperties h100() {
  DeviceProperties p;
  p.name = "NVIDIA H100 80GB HBM3";
  p.ordinal = 0;
  p.major = 9;
  p.minor = 0;
  p.multiprocessors = 132;
  p.max_threads_per_block = 1024;
  p.max_block_dim[0] = 1024;
  p.max_block_dim[1] = 1024;
  p.max_block_dim[2] = 64;
  p.max_grid_dim[0] = 2147483647;
  p.max_grid_dim[1] = 65535;
  p.max_grid_dim[2] = 65535;
  p.warp_size = 32;
  p.shared_memory_per_block = 48 * 1024;
  p.shared_memory_per_block_optin = 227 * 1024;
  return p;
}

Dim3 dims(long long x) { return {x, 1, 1, 1}; }
Dim3 dims(long long x, long long y) { return {x, y, 1, 2}; }
Dim3 dims(long long x, long long y, long long z) { return {x, y, z, 3}; }

std::string validate_error(const LaunchConfig& c, const DeviceProperties& p = h100()) {
  try {
    c.validate(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "(valid)";
}

TEST(Dim3, Str) {
  EXPECT_EQ(dims(10).str(), "(10,)");
  EXPECT_EQ(dims(10, 4).str(), "(10, 4)");
  EXPECT_EQ(dims(2, 2, 2).str(), "(2, 2, 2)");
  EXPECT_EQ(dims(0).str(), "(0,)");
  EXPECT_EQ(dims(-3, 5).str(), "(-3, 5)");
  EXPECT_EQ(dims(2, 3, 4).count(), 24);
  EXPECT_EQ(Dim3{}.str(), "(1,)");
}

TEST(LaunchConfig, DimensionsMustBeAtLeastOne) {
  EXPECT_EQ(validate_error({dims(0), dims(128)}),
            "grid dimension x is 0: each grid and block dimension must be at least 1");
  EXPECT_EQ(validate_error({dims(4, 0), dims(128)}),
            "grid dimension y is 0: each grid and block dimension must be at least 1");
  EXPECT_EQ(validate_error({dims(4), dims(8, 8, -2)}),
            "block dimension z is -2: each grid and block dimension must be at least 1");
  EXPECT_EQ(validate_error({dims(4), dims(0)}),
            "block dimension x is 0: each grid and block dimension must be at least 1");
}

TEST(LaunchConfig, BlockLimits) {
  EXPECT_EQ(validate_error({dims(1), dims(2048)}),
            "block of (2048,) has 2048 threads; cuda:0 (NVIDIA H100 80GB HBM3) allows at most "
            "1024 per block");
  EXPECT_EQ(validate_error({dims(1), dims(64, 32)}),
            "block of (64, 32) has 2048 threads; cuda:0 (NVIDIA H100 80GB HBM3) allows at most "
            "1024 per block");
  EXPECT_EQ(validate_error({dims(1), dims(1, 1, 128)}),
            "block dimension z is 128; cuda:0 (NVIDIA H100 80GB HBM3) allows at most 64 in z");
  EXPECT_EQ(validate_error({dims(1), dims(1024)}), "(valid)");
  EXPECT_EQ(validate_error({dims(1), dims(16, 8, 8)}), "(valid)");
}

TEST(LaunchConfig, GridLimits) {
  EXPECT_EQ(validate_error({dims(1, 70000), dims(32)}),
            "grid dimension y is 70000; cuda:0 (NVIDIA H100 80GB HBM3) allows at most 65535 in y");
  EXPECT_EQ(validate_error({dims(2147483648LL), dims(32)}),
            "grid dimension x is 2147483648; cuda:0 (NVIDIA H100 80GB HBM3) allows at most "
            "2147483647 in x");
  EXPECT_EQ(validate_error({dims(2147483647LL, 65535, 65535), dims(32)}), "(valid)");
}

TEST(LaunchConfig, SharedMemoryAgainstTheOptInLimit) {
  LaunchConfig c{dims(1), dims(32)};
  c.shared_mem = 227 * 1024;
  EXPECT_EQ(validate_error(c), "(valid)");
  c.shared_mem = 227 * 1024 + 1;
  EXPECT_EQ(validate_error(c), "dynamic shared memory of 232449 bytes (227.0 KiB) is more than cuda:0 (NVIDIA H100 "
                               "80GB HBM3) allows per block (232448 bytes)");
}

TEST(LaunchConfig, AStreamOfAnotherDeviceIsRefused) {
  LaunchConfig c{dims(1), dims(32)};
  EXPECT_EQ(validate_error(c), "(valid)");  // no stream: the device's default stream
  c.stream_device = Device::cuda(0);
  EXPECT_EQ(validate_error(c), "(valid)");
  c.stream_device = Device::cpu();
  EXPECT_EQ(validate_error(c), "the stream is on cpu but the launch is on cuda:0; use a stream of cuda:0");
  c.stream_device = Device::cuda(1);
  EXPECT_EQ(validate_error(c), "the stream is on cuda:1 but the launch is on cuda:0; use a stream of cuda:0");
}

TEST(LaunchConfig, RandomConfigsAgreeWithTheRules) {
  std::mt19937 rng(21);
  DeviceProperties p = h100();
  for (int i = 0; i < 5000; ++i) {
    LaunchConfig c;
    auto pick = [&](long long max) { return static_cast<long long>(rng() % (max + 2)) - (rng() % 8 == 0); };
    c.grid = dims(pick(100), pick(70000) % 70000, pick(3));
    c.block = dims(pick(1100), pick(40), pick(70));
    bool positive = c.grid.x >= 1 && c.grid.y >= 1 && c.grid.z >= 1 && c.block.x >= 1 && c.block.y >= 1 &&
                    c.block.z >= 1;
    bool fits = c.block.count() <= 1024 && c.block.z <= 64 && c.grid.y <= 65535;
    std::string error = validate_error(c, p);
    EXPECT_EQ(error == "(valid)", positive && fits) << c.grid.str() << " " << c.block.str() << ": " << error;
  }
}

// add_one(float* data, unsigned n): data[i] += 1 for i < n. PTX ISA 7.0 for sm_75, which
// the driver compiles for any newer GPU.
constexpr const char* kAddOnePtx = R"(
.version 7.0
.target sm_75
.address_size 64
.visible .entry add_one(.param .u64 data, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<5>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [data];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}
)";

TEST(LaunchGpu, RunsAKernelAndChecksTheResult) {
  LUDA_REQUIRE_GPU();
  ContextScope scope(0);
  const driver::Api& cu = driver::api();
  CUmodule module = nullptr;
  LUDA_CU(cuModuleLoadData, &module, kAddOnePtx);
  CUfunction f = nullptr;
  LUDA_CU(cuModuleGetFunction, &f, module, "add_one");

  std::mt19937 rng(22);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (unsigned n : {1u, 1000u, 100003u}) {
    std::vector<float> host(n);
    for (float& v : host) v = dist(rng);
    auto buffer = Buffer::allocate(Device::cuda(0), n * sizeof(float));
    copy_bytes(Device::cuda(0), buffer->data(), Device::cpu(), host.data(), n * sizeof(float));
    LaunchConfig c;
    c.block = dims(256);
    c.grid = dims((n + 255) / 256);
    // Past the default 48 KiB: launch opts the kernel in first.
    c.shared_mem = n == 1000 ? 64 * 1024 : 0;
    c.validate(cuda_properties(0));
    CUdeviceptr data = reinterpret_cast<CUdeviceptr>(buffer->data());
    void* args[] = {&data, &n};
    launch(f, c, args);
    std::vector<float> back(n);
    copy_bytes(Device::cpu(), back.data(), Device::cuda(0), buffer->data(), n * sizeof(float));
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(back[i], host[i] + 1.0f) << i;
  }

  // The driver's own check, for a config that skipped validate().
  LaunchConfig bad{dims(1), dims(2048)};
  EXPECT_NE(validate_error(bad, cuda_properties(0)), "(valid)");
  unsigned n = 0;
  CUdeviceptr null = 0;
  void* args[] = {&null, &n};
  try {
    launch(f, bad, args);
    ADD_FAILURE() << "no error";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_STREQ(e.what(), "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE: invalid argument (grid (1,), block "
                           "(2048,), 0 bytes of dynamic shared memory)");
  }
  synchronize(Device::cuda(0));
  EXPECT_EQ(cu.cuModuleUnload(module), CUDA_SUCCESS);
}

}  // namespace
}  // namespace luda

// Buffers and copies: cpu memory everywhere; device, pinned and peer memory on GPUs.
#include "runtime/memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <regex>
#include <vector>

#include "runtime/driver.h"

#include "tests/test_support.h"

namespace luda {
namespace {

using test_support::no_device_reason;
using test_support::random_bytes;

std::vector<unsigned char> bytes_of(const Buffer& b) {
  const auto* p = static_cast<const unsigned char*>(b.data());
  return {p, p + b.size()};
}

TEST(BufferCpu, AllocationsAreAlignedAndSized) {
  std::mt19937 rng(3);
  for (int i = 0; i < 200; ++i) {
    std::size_t n = 1 + rng() % 100000;
    auto b = Buffer::allocate(Device::cpu(), n);
    ASSERT_NE(b->data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->data()) % 64, 0u) << n;
    EXPECT_EQ(b->size(), n);
    EXPECT_EQ(b->device(), Device::cpu());
    EXPECT_FALSE(b->pinned());
    // The whole range is writable and keeps what was written.
    auto data = random_bytes(n, i);
    std::memcpy(b->data(), data.data(), n);
    EXPECT_EQ(bytes_of(*b), data);
  }
}

TEST(BufferCpu, ZeroBytesIsAValidEmptyBuffer) {
  auto b = Buffer::allocate(Device::cpu(), 0);
  EXPECT_EQ(b->size(), 0u);
  EXPECT_EQ(b->data(), nullptr);
  EXPECT_NO_THROW(copy_bytes(Device::cpu(), b->data(), Device::cpu(), b->data(), 0));
  EXPECT_NO_THROW(zero_bytes(Device::cpu(), b->data(), 0));
}

TEST(BufferCpu, CopyAndZeroBytes) {
  std::mt19937 rng(4);
  for (int i = 0; i < 50; ++i) {
    std::size_t n = 1 + rng() % 5000;
    auto src = Buffer::allocate(Device::cpu(), n);
    auto dst = Buffer::allocate(Device::cpu(), n);
    auto data = random_bytes(n, 100 + i);
    std::memcpy(src->data(), data.data(), n);
    std::memset(dst->data(), 0xAB, n);
    copy_bytes(Device::cpu(), dst->data(), Device::cpu(), src->data(), n);
    EXPECT_EQ(bytes_of(*dst), data);
    // Zero a middle range; the bytes around it keep their values.
    std::size_t from = rng() % n, count = rng() % (n - from + 1);
    zero_bytes(Device::cpu(), static_cast<unsigned char*>(dst->data()) + from, count);
    auto expected = data;
    std::fill(expected.begin() + from, expected.begin() + from + count, 0);
    EXPECT_EQ(bytes_of(*dst), expected);
  }
}

TEST(BufferCpu, WrapNeverFreesAndRunsReleaseOnce) {
  std::vector<unsigned char> owned = random_bytes(1000, 5);
  int released = 0;
  {
    auto b = Buffer::wrap(Device::cpu(), owned.data(), owned.size(), [&] { ++released; });
    EXPECT_EQ(b->data(), owned.data());
    EXPECT_EQ(b->size(), owned.size());
    EXPECT_EQ(b->device(), Device::cpu());
    EXPECT_FALSE(b->pinned());
    auto copy = b;
    b.reset();
    EXPECT_EQ(released, 0) << "a view is still alive";
    static_cast<unsigned char*>(copy->data())[0] = 42;
  }
  EXPECT_EQ(released, 1);
  EXPECT_EQ(owned[0], 42);
  // No callback at all is fine too.
  { auto b = Buffer::wrap(Device::cpu(), owned.data(), owned.size()); }
  EXPECT_EQ(owned.size(), 1000u);
}

TEST(BufferCpu, ReleaseThatThrowsDoesNotEscapeTheDestructor) {
  int value = 0;
  {
    auto b = Buffer::wrap(Device::cpu(), &value, sizeof value, [] { throw Error("boom"); });
  }
  SUCCEED();
}

TEST(Buffer, WithoutCudaRaisesNoDeviceError) {
  std::string why = no_device_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is usable here; this tests the no-GPU path";
  for (auto make : {+[] { Buffer::allocate(Device::cuda(0), 16); }, +[] { Buffer::allocate_pinned(16); },
                    +[] { Buffer::wrap(Device::cuda(0), nullptr, 0); }}) {
    try {
      make();
      ADD_FAILURE() << "no error";
    } catch (const NoDeviceError& e) {
      EXPECT_EQ(e.what(), why);
    }
  }
  unsigned char host[4] = {1, 2, 3, 4};
  EXPECT_THROW(copy_bytes(Device::cuda(0), host, Device::cpu(), host, 4), NoDeviceError);
}

TEST(BufferGpu, AllocateAndFreeManyTimes) {
  LUDA_REQUIRE_GPU();
  std::mt19937 rng(6);
  const std::uint64_t before = pool_reserved_bytes(0);
  for (int i = 0; i < 2000; ++i) {
    std::size_t n = 1 + rng() % (4 << 20);
    auto b = Buffer::allocate(Device::cuda(0), n);
    ASSERT_NE(b->data(), nullptr);
    EXPECT_EQ(b->size(), n);
    EXPECT_EQ(b->device(), Device::cuda(0));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->data()) % 256, 0u);
  }
  synchronize(Device::cuda(0));
  // Freed blocks go back to the pool for reuse: 2000 allocations of up to 4 MiB do not
  // take 8 GiB from the device. (The pool's own count: other processes' use of the
  // device does not move it.)
  EXPECT_LT(pool_reserved_bytes(0), before + (512ull << 20));
  auto empty = Buffer::allocate(Device::cuda(0), 0);
  EXPECT_EQ(empty->data(), nullptr);
  EXPECT_EQ(empty->size(), 0u);
}

TEST(BufferGpu, HostDeviceRoundTripAndDeviceToDevice) {
  LUDA_REQUIRE_GPU();
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::size_t n = 1 + rng() % (3 << 20);
    auto host = random_bytes(n, 200 + i);
    auto a = Buffer::allocate(Device::cuda(0), n);
    auto b = Buffer::allocate(Device::cuda(0), n);
    copy_bytes(Device::cuda(0), a->data(), Device::cpu(), host.data(), n);
    copy_bytes(Device::cuda(0), b->data(), Device::cuda(0), a->data(), n);
    std::vector<unsigned char> back(n, 0);
    copy_bytes(Device::cpu(), back.data(), Device::cuda(0), b->data(), n);
    ASSERT_EQ(back, host) << n;
    // zero_bytes on a middle range of b.
    std::size_t from = rng() % n, count = rng() % (n - from + 1);
    zero_bytes(Device::cuda(0), static_cast<unsigned char*>(b->data()) + from, count);
    copy_bytes(Device::cpu(), back.data(), Device::cuda(0), b->data(), n);
    std::fill(host.begin() + from, host.begin() + from + count, 0);
    ASSERT_EQ(back, host) << n;
  }
}

TEST(BufferGpu, PinnedMemoryAndAsyncCopies) {
  LUDA_REQUIRE_GPU();
  const std::size_t n = 8 << 20;
  auto pinned = Buffer::allocate_pinned(n);
  EXPECT_TRUE(pinned->pinned());
  EXPECT_EQ(pinned->device(), Device::cpu());
  EXPECT_EQ(pinned->size(), n);
  auto host = random_bytes(n, 8);
  std::memcpy(pinned->data(), host.data(), n);
  Stream s = Stream::create(Device::cuda(0));
  auto d = Buffer::allocate(Device::cuda(0), n, &s);
  copy_bytes(Device::cuda(0), d->data(), Device::cpu(), pinned->data(), n, s.handle(), true);
  auto back = Buffer::allocate_pinned(n);
  std::memset(back->data(), 0, n);
  copy_bytes(Device::cpu(), back->data(), Device::cuda(0), d->data(), n, s.handle(), true);
  s.synchronize();
  EXPECT_EQ(bytes_of(*back), host);
  auto empty = Buffer::allocate_pinned(0);
  EXPECT_TRUE(empty->pinned());
  EXPECT_EQ(empty->size(), 0u);
}

TEST(BufferGpu, WrapDeviceMemoryRunsRelease) {
  LUDA_REQUIRE_GPU();
  auto owner = Buffer::allocate(Device::cuda(0), 4096);
  bool released = false;
  {
    auto view = Buffer::wrap(Device::cuda(0), owner->data(), 4096, [&] { released = true; });
    EXPECT_EQ(view->device(), Device::cuda(0));
    auto host = random_bytes(4096, 9);
    copy_bytes(Device::cuda(0), view->data(), Device::cpu(), host.data(), 4096);
    std::vector<unsigned char> back(4096);
    copy_bytes(Device::cpu(), back.data(), Device::cuda(0), owner->data(), 4096);
    EXPECT_EQ(back, host);
  }
  EXPECT_TRUE(released);
}

TEST(BufferGpu, OutOfMemorySaysHowMuchAndTheDeviceStillWorks) {
  LUDA_REQUIRE_GPU();
  try {
    Buffer::allocate(Device::cuda(0), 1ull << 50);
    ADD_FAILURE() << "1 PiB was allocated";
  } catch (const CudaError& e) {
    std::string message = e.what();
    EXPECT_EQ(e.code(), CUDA_ERROR_OUT_OF_MEMORY);
    // The free amount is what cuMemGetInfo says at the time, in format_bytes' format.
    EXPECT_TRUE(std::regex_match(message, std::regex(R"(cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY: out of memory )"
                                                     R"(\(asked for 1024\.0 TiB, [0-9]+\.[0-9] [KMGT]iB free\))")))
        << message;
  }
  auto host = random_bytes(1 << 20, 10);
  auto b = Buffer::allocate(Device::cuda(0), host.size());
  copy_bytes(Device::cuda(0), b->data(), Device::cpu(), host.data(), host.size());
  std::vector<unsigned char> back(host.size());
  copy_bytes(Device::cpu(), back.data(), Device::cuda(0), b->data(), host.size());
  EXPECT_EQ(back, host);
}

TEST(BufferGpu, PeerCopy) {
  LUDA_REQUIRE_GPU();
  if (cuda_device_count() < 2)
    GTEST_SKIP() << "peer copies need 2 CUDA devices; this machine has " << cuda_device_count();
  const std::size_t n = (5 << 20) + 3;
  auto host = random_bytes(n, 11);
  auto a = Buffer::allocate(Device::cuda(0), n);
  auto b = Buffer::allocate(Device::cuda(1), n);
  copy_bytes(Device::cuda(0), a->data(), Device::cpu(), host.data(), n);
  copy_bytes(Device::cuda(1), b->data(), Device::cuda(0), a->data(), n);
  std::vector<unsigned char> back(n);
  copy_bytes(Device::cpu(), back.data(), Device::cuda(1), b->data(), n);
  EXPECT_EQ(back, host);
  // And back the other way, on a stream of the source device.
  Stream s = Stream::create(Device::cuda(1));
  auto c = Buffer::allocate(Device::cuda(0), n);
  copy_bytes(Device::cuda(0), c->data(), Device::cuda(1), b->data(), n, s.handle());
  std::fill(back.begin(), back.end(), 0);
  copy_bytes(Device::cpu(), back.data(), Device::cuda(0), c->data(), n);
  EXPECT_EQ(back, host);
}

TEST(BufferGpu, StreamOfAnotherDeviceIsAnError) {
  LUDA_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 CUDA devices; this machine has " << cuda_device_count();
  Stream s = Stream::create(Device::cuda(1));
  try {
    Buffer::allocate(Device::cuda(0), 16, &s);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot allocate on cuda:0 with a stream of cuda:1: pass a stream of cuda:0");
  }
}

}  // namespace
}  // namespace luda

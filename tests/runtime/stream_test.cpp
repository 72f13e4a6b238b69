// Streams and events: the no-GPU errors, and on a GPU ordering, timing and shared handles.
#include "runtime/stream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/memory.h"

#include "tests/test_support.h"

namespace luda {
namespace {

using test_support::no_device_reason;
using test_support::random_bytes;

TEST(Stream, WithoutCudaRaisesNoDeviceError) {
  std::string why = no_device_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is usable here; this tests the no-GPU path";
  for (auto make : {+[] { Stream::create(0); }, +[] { Stream::default_stream(0); },
                    +[] { Event::create(0); }}) {
    try {
      make();
      ADD_FAILURE() << "no error";
    } catch (const NoDeviceError& e) {
      EXPECT_EQ(e.what(), why);
    }
  }
}

TEST(StreamGpu, DefaultAndCreatedStreams) {
  LUDA_REQUIRE_GPU();
  Stream d = Stream::default_stream(0);
  EXPECT_EQ(d.handle(), nullptr) << "the legacy default stream";
  EXPECT_EQ(d.device(), 0);
  EXPECT_NO_THROW(d.synchronize());
  EXPECT_TRUE(d.query());
  Stream s = Stream::create(0);
  EXPECT_NE(s.handle(), nullptr);
  EXPECT_EQ(s.device(), 0);
  Stream t = Stream::create(0);
  EXPECT_NE(t.handle(), s.handle());
  unsigned flags = 0;
  ASSERT_EQ(driver::api().cuStreamGetFlags(s.handle(), &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags & CU_STREAM_NON_BLOCKING, unsigned(CU_STREAM_NON_BLOCKING));
  EXPECT_TRUE(s.query());
}

TEST(StreamGpu, CopiesShareOneHandleThatLivesWithTheLastCopy) {
  LUDA_REQUIRE_GPU();
  Stream copy;
  CUstream handle = nullptr;
  {
    Stream s = Stream::create(0);
    handle = s.handle();
    copy = s;
  }
  EXPECT_EQ(copy.handle(), handle);
  // Still a live stream: work on it runs and completes.
  auto host = random_bytes(1 << 20, 1);
  std::vector<unsigned char> back(host.size());
  auto buffer = Buffer::allocate(Device::cuda(0), host.size(), &copy);
  copy_bytes(Device::cuda(0), buffer->data(), Device::cpu(), host.data(), host.size(),
             copy.handle());
  copy_bytes(Device::cpu(), back.data(), Device::cuda(0), buffer->data(), host.size(),
             copy.handle());
  EXPECT_EQ(back, host);
  EXPECT_TRUE(copy.query());
}

TEST(StreamGpu, EventsTimeACopyAndOrderStreams) {
  LUDA_REQUIRE_GPU();
  const std::size_t n = 64 << 20;
  Stream s1 = Stream::create(0), s2 = Stream::create(0);
  auto pinned = Buffer::allocate_pinned(n);
  auto host = random_bytes(n, 2);
  std::memcpy(pinned->data(), host.data(), n);
  auto a = Buffer::allocate(Device::cuda(0), n, &s1);
  auto b = Buffer::allocate(Device::cuda(0), n, &s1);
  s1.synchronize();  // both allocations are usable from s2 now
  Event start = Event::create(0), stop = Event::create(0);
  EXPECT_EQ(start.device(), 0);
  EXPECT_NE(start.handle(), stop.handle());
  start.record(s1);
  copy_bytes(Device::cuda(0), a->data(), Device::cpu(), pinned->data(), n, s1.handle(), true);
  stop.record(s1);
  // s2 copies a to b only after s1's upload: without the wait it would read stale bytes.
  s2.wait(stop);
  copy_bytes(Device::cuda(0), b->data(), Device::cuda(0), a->data(), n, s2.handle(), true);
  std::vector<unsigned char> back(n);
  copy_bytes(Device::cpu(), back.data(), Device::cuda(0), b->data(), n, s2.handle());
  EXPECT_TRUE(back == host);
  float ms = start.elapsed_ms(stop);
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 10000.0f);
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  EXPECT_TRUE(s1.query());
  EXPECT_TRUE(s2.query());
}

TEST(StreamGpu, ElapsedTimeNeedsTimingEvents) {
  LUDA_REQUIRE_GPU();
  Stream s = Stream::create(0);
  Event a = Event::create(0, false), b = Event::create(0, true);
  a.record(s);
  b.record(s);
  s.synchronize();
  EXPECT_TRUE(a.query());
  try {
    a.elapsed_ms(b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "elapsed time needs two events created with timing on (Event::create(device, "
                 "true))");
  }
}

TEST(StreamGpu, EventOfAnotherDeviceCannotRecord) {
  LUDA_REQUIRE_GPU();
  if (cuda_device_count() < 2)
    GTEST_SKIP() << "needs 2 CUDA devices; this machine has " << cuda_device_count();
  Event e = Event::create(0);
  Stream s = Stream::create(1);
  try {
    e.record(s);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_STREQ(err.what(),
                 "an event of cuda:0 cannot record work of a stream of cuda:1: create the event "
                 "on the stream's device");
  }
}

}  // namespace
}  // namespace luda

// Streams and events: on the cpu device everywhere (work in order as submitted, events on
// the host's clock); the no-GPU errors; and on a GPU ordering, timing and shared handles.
#include "runtime/stream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
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
  for (auto make : {+[] { Stream::create(Device::cuda(0)); }, +[] { Stream::default_stream(Device::cuda(0)); },
                    +[] { Event::create(Device::cuda(0)); }}) {
    try {
      make();
      ADD_FAILURE() << "no error";
    } catch (const NoDeviceError& e) {
      EXPECT_EQ(e.what(), why);
    }
  }
}

// The message of the Error fn throws ("" when it throws none).
template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(StreamCpu, StreamsNeedNoDriverAndHaveNothingToWaitFor) {
  Stream s = Stream::create(Device::cpu());
  EXPECT_EQ(s.device(), Device::cpu());
  EXPECT_EQ(s.handle(), nullptr);
  EXPECT_TRUE(s.query());
  EXPECT_NO_THROW(s.synchronize());
  Stream d = Stream::default_stream(Device::cpu());
  EXPECT_EQ(d.device(), Device::cpu());
  EXPECT_TRUE(d.query());
  Event e = Event::create(Device::cpu());
  EXPECT_EQ(e.device(), Device::cpu());
  EXPECT_EQ(e.handle(), nullptr);
  e.record(s);
  EXPECT_NO_THROW(s.wait(e));
  EXPECT_TRUE(e.query());
  EXPECT_NO_THROW(e.synchronize());
}

TEST(StreamCpu, EventsTimeTheHostWorkBetweenThemInOrder) {
  Stream s = Stream::create(Device::cpu());
  Event e0 = Event::create(Device::cpu()), e1 = Event::create(Device::cpu()), e2 = Event::create(Device::cpu());
  e0.record(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the work between e0 and e1
  e1.record(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  e2.record(Stream::default_stream(Device::cpu()));
  float t01 = e0.elapsed_ms(e1), t12 = e1.elapsed_ms(e2), t02 = e0.elapsed_ms(e2);
  EXPECT_GE(t01, 20.0f);
  EXPECT_GE(t12, 5.0f);
  EXPECT_LT(t02, 10000.0f);
  EXPECT_NEAR(t02, t01 + t12, 1e-3);
  EXPECT_LT(e1.elapsed_ms(e0), 0.0f);  // recorded the other way round
  // Recording again moves the event's point.
  e0.record(s);
  EXPECT_LE(e0.elapsed_ms(e2), 0.0f);
}

// The same on every device: an event never recorded is complete, as in CUDA, but has no
// time; neither has one made without timing.
void check_events_never_recorded_or_untimed(Device device) {
  Stream s = Stream::create(device);
  Event never = Event::create(device), also_never = Event::create(device), recorded = Event::create(device);
  recorded.record(s);
  s.synchronize();
  EXPECT_TRUE(never.query());
  EXPECT_NO_THROW(never.synchronize());
  EXPECT_EQ(error_of([&] { never.elapsed_ms(recorded); }),
            "elapsed time needs two recorded events, but the start event was never recorded: record it on a "
            "stream first");
  EXPECT_EQ(error_of([&] { recorded.elapsed_ms(never); }),
            "elapsed time needs two recorded events, but the end event was never recorded: record it on a "
            "stream first");
  EXPECT_EQ(error_of([&] { never.elapsed_ms(also_never); }),
            "elapsed time needs two recorded events, but the start and end events were never recorded: record "
            "them on a stream first");
  Event untimed = Event::create(device, false);
  untimed.record(s);
  EXPECT_EQ(error_of([&] { untimed.elapsed_ms(recorded); }),
            "elapsed time needs two events created with timing on (Event::create(device, true))");
}

TEST(StreamCpu, ElapsedTimeNeedsRecordedTimingEvents) { check_events_never_recorded_or_untimed(Device::cpu()); }

TEST(StreamGpu, DefaultAndCreatedStreams) {
  LUDA_REQUIRE_GPU();
  Stream d = Stream::default_stream(Device::cuda(0));
  EXPECT_EQ(d.handle(), nullptr) << "the legacy default stream";
  EXPECT_EQ(d.device(), Device::cuda(0));
  EXPECT_NO_THROW(d.synchronize());
  EXPECT_TRUE(d.query());
  Stream s = Stream::create(Device::cuda(0));
  EXPECT_NE(s.handle(), nullptr);
  EXPECT_EQ(s.device(), Device::cuda(0));
  Stream t = Stream::create(Device::cuda(0));
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
    Stream s = Stream::create(Device::cuda(0));
    handle = s.handle();
    copy = s;
  }
  EXPECT_EQ(copy.handle(), handle);
  // Still a live stream: work on it runs and completes.
  auto host = random_bytes(1 << 20, 1);
  std::vector<unsigned char> back(host.size());
  auto buffer = Buffer::allocate(Device::cuda(0), host.size(), &copy);
  copy_bytes(Device::cuda(0), buffer->data(), Device::cpu(), host.data(), host.size(), copy.handle());
  copy_bytes(Device::cpu(), back.data(), Device::cuda(0), buffer->data(), host.size(), copy.handle());
  EXPECT_EQ(back, host);
  EXPECT_TRUE(copy.query());
}

TEST(StreamGpu, EventsTimeACopyAndOrderStreams) {
  LUDA_REQUIRE_GPU();
  const std::size_t n = 64 << 20;
  Stream s1 = Stream::create(Device::cuda(0)), s2 = Stream::create(Device::cuda(0));
  auto pinned = Buffer::allocate_pinned(n);
  auto host = random_bytes(n, 2);
  std::memcpy(pinned->data(), host.data(), n);
  auto a = Buffer::allocate(Device::cuda(0), n, &s1);
  auto b = Buffer::allocate(Device::cuda(0), n, &s1);
  s1.synchronize();  // both allocations are usable from s2 now
  Event start = Event::create(Device::cuda(0)), stop = Event::create(Device::cuda(0));
  EXPECT_EQ(start.device(), Device::cuda(0));
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
  Stream s = Stream::create(Device::cuda(0));
  Event a = Event::create(Device::cuda(0), false), b = Event::create(Device::cuda(0), true);
  a.record(s);
  b.record(s);
  s.synchronize();
  EXPECT_TRUE(a.query());
  try {
    a.elapsed_ms(b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "elapsed time needs two events created with timing on (Event::create(device, "
                           "true))");
  }
}

TEST(StreamGpu, EventOfAnotherDeviceCannotRecord) {
  LUDA_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 CUDA devices; this machine has " << cuda_device_count();
  Event e = Event::create(Device::cuda(0));
  Stream s = Stream::create(Device::cuda(1));
  try {
    e.record(s);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_STREQ(err.what(), "an event of cuda:0 cannot record work of a stream of cuda:1: create the event "
                             "on the stream's device");
  }
}

TEST(StreamGpu, ElapsedTimeNeedsRecordedTimingEvents) {
  LUDA_REQUIRE_GPU();
  check_events_never_recorded_or_untimed(Device::cuda(0));
}

TEST(StreamGpu, CpuAndCudaStreamsAndEventsMeet) {
  LUDA_REQUIRE_GPU();
  Stream cpu = Stream::create(Device::cpu()), gpu = Stream::create(Device::cuda(0));
  Event on_cpu = Event::create(Device::cpu()), on_gpu = Event::create(Device::cuda(0));
  EXPECT_EQ(error_of([&] { on_cpu.record(gpu); }),
            "an event of cpu cannot record work of a stream of cuda:0: create the event on the stream's device");
  EXPECT_EQ(error_of([&] { on_gpu.record(cpu); }),
            "an event of cuda:0 cannot record work of a stream of cpu: create the event on the stream's device");
  on_cpu.record(cpu);
  on_gpu.record(gpu);
  EXPECT_EQ(error_of([&] { on_cpu.elapsed_ms(on_gpu); }),
            "elapsed time needs two events of one device; the start event is on cpu and the end event on cuda:0");
  // A cuda stream waits for a cpu event (complete once recorded); a cpu stream for a CUDA
  // event by waiting on the host.
  EXPECT_NO_THROW(gpu.wait(on_cpu));
  EXPECT_NO_THROW(cpu.wait(on_gpu));
  EXPECT_TRUE(on_gpu.query());
  EXPECT_EQ(error_of([&] { Buffer::allocate(Device::cuda(0), 16, &cpu); }),
            "cannot allocate on cuda:0 with a stream of cpu: pass a stream of cuda:0");
}

}  // namespace
}  // namespace luda

#include "runtime/stream.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace luda {

struct Stream::State {
  CUstream handle = nullptr;
  Device device;
  bool owned = false;  // false for the legacy default stream and cpu streams: nothing to destroy

  ~State() {
    if (!owned) return;
    try {
      ContextScope scope(device.index);
      (void)driver::api().cuStreamDestroy(handle);
    } catch (...) {
      // Destructors never throw; a stream that cannot be destroyed is left to the driver.
    }
  }
};

struct Event::State {
  CUevent handle = nullptr;  // CUDA only
  Device device;
  bool timing = true;
  // Whether record() has run: an elapsed time between events not recorded is refused
  // with a message of luda's rather than the driver's invalid handle.
  std::atomic<bool> recorded{false};
  // cpu only: the steady clock, in nanoseconds, at the last record().
  std::atomic<std::int64_t> recorded_ns{0};

  ~State() {
    if (!handle) return;
    try {
      ContextScope scope(device.index);
      (void)driver::api().cuEventDestroy(handle);
    } catch (...) {
    }
  }
};

namespace {

// Result of cuStreamQuery / cuEventQuery: done, not yet, or an error.
bool finished(CUresult r, const char* call) {
  if (r == CUDA_ERROR_NOT_READY) return false;
  driver::check(r, call);
  return true;
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Stream Stream::default_stream(Device device) {
  if (device.is_cpu()) {
    static const Stream cpu = create(Device::cpu());
    if (device.index == 0) return cpu;
    require_cpu_device(device.index);
    // One per cpu device, made when the count is known (cpu alone needs no look at it).
    static const std::vector<Stream> more = [] {
      std::vector<Stream> v(static_cast<std::size_t>(cpu_device_count()));
      for (int i = 1; i < static_cast<int>(v.size()); ++i) v[i] = create(Device::cpu(i));
      return v;
    }();
    return more[device.index];
  }
  require_cuda_device(device.index);
  // One shared handle per device: buffers copy it on every allocation.
  static const std::vector<Stream> streams = [] {
    std::vector<Stream> v(cuda_device_count());
    for (int i = 0; i < static_cast<int>(v.size()); ++i) {
      v[i].state_ = std::make_shared<State>();
      v[i].state_->device = Device::cuda(i);
    }
    return v;
  }();
  return streams[device.index];
}

Stream Stream::create(Device device, bool non_blocking) {
  if (device.is_cpu()) require_cpu_device(device.index);
  auto state = std::make_shared<State>();
  state->device = device;
  if (device.is_cuda()) {
    ContextScope scope(device.index);
    // Non-blocking: no implicit synchronization with the legacy default stream.
    LUDA_CU(cuStreamCreate, &state->handle, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT);
    state->owned = true;
  }
  Stream s;
  s.state_ = std::move(state);
  return s;
}

Stream Stream::wrap(CUstream handle, Device device) {
  if (device.is_cpu()) {
    if (handle)
      fail("Stream::wrap: a CUDA stream cannot be a stream of the cpu device; pass the CUDA device it was made on");
    return create(device);
  }
  if (!handle) return default_stream(device);
  require_cuda_device(device.index);
  auto state = std::make_shared<State>();  // owned stays false: the host destroys its stream
  state->device = device;
  state->handle = handle;
  Stream s;
  s.state_ = std::move(state);
  return s;
}

CUstream Stream::handle() const { return state_ ? state_->handle : nullptr; }

Device Stream::device() const {
  LUDA_INTERNAL_CHECK(state_);
  return state_->device;
}

void Stream::synchronize() const {
  Device d = device();
  if (d.is_cpu()) return;
  ContextScope scope(d.index);
  wait_for_stream(handle(), "cuStreamSynchronize", d.index);
}

bool Stream::query() const {
  Device d = device();
  if (d.is_cpu()) return true;
  ContextScope scope(d.index);
  return finished(driver::api().cuStreamQuery(handle()), "cuStreamQuery");
}

void Stream::wait(const Event& e) const {
  Device d = device();
  if (d.is_cpu()) {
    e.synchronize();
    return;
  }
  if (e.device().is_cpu()) return;
  ContextScope scope(d.index);
  LUDA_CU(cuStreamWaitEvent, handle(), e.handle(), 0);
}

Event Event::create(Device device, bool timing) {
  if (device.is_cpu()) require_cpu_device(device.index);
  auto state = std::make_shared<State>();
  state->device = device;
  state->timing = timing;
  if (device.is_cuda()) {
    ContextScope scope(device.index);
    LUDA_CU(cuEventCreate, &state->handle, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
  }
  Event e;
  e.state_ = std::move(state);
  return e;
}

CUevent Event::handle() const {
  LUDA_INTERNAL_CHECK(state_);
  return state_->handle;
}

Device Event::device() const {
  LUDA_INTERNAL_CHECK(state_);
  return state_->device;
}

void Event::record(const Stream& s) const {
  Device d = device();
  if (s.device() != d)
    fail("an event of {} cannot record work of a stream of {}: create the event on the stream's device", d.str(),
         s.device().str());
  if (d.is_cpu()) {
    // The stream's earlier work has finished (it ran when submitted): now is its point.
    state_->recorded_ns.store(steady_ns(), std::memory_order_relaxed);
  } else {
    ContextScope scope(d.index);
    LUDA_CU(cuEventRecord, handle(), s.handle());
  }
  state_->recorded.store(true, std::memory_order_release);
}

void Event::synchronize() const {
  Device d = device();
  if (d.is_cpu()) return;
  ContextScope scope(d.index);
  wait_for_event(handle(), "cuEventSynchronize", d.index);
}

bool Event::query() const {
  Device d = device();
  if (d.is_cpu()) return true;
  ContextScope scope(d.index);
  return finished(driver::api().cuEventQuery(handle()), "cuEventQuery");
}

float Event::elapsed_ms(const Event& end) const {
  if (!state_->timing || !end.state_->timing)
    fail("elapsed time needs two events created with timing on (Event::create(device, true))");
  Device d = device();
  if (end.device() != d)
    fail("elapsed time needs two events of one device; the start event is on {} and the end event on {}", d.str(),
         end.device().str());
  bool start_recorded = state_->recorded.load(std::memory_order_acquire);
  bool end_recorded = end.state_->recorded.load(std::memory_order_acquire);
  auto never_recorded = [&] {
    fail("elapsed time needs two recorded events, but {} never recorded: record {} on a stream first",
         !start_recorded && !end_recorded ? "the start and end events were"
         : !start_recorded                ? "the start event was"
                                          : "the end event was",
         !start_recorded && !end_recorded ? "them" : "it");
  };
  if (d.is_cpu()) {
    if (!start_recorded || !end_recorded) never_recorded();
    std::int64_t ns = end.state_->recorded_ns.load(std::memory_order_relaxed) -
                      state_->recorded_ns.load(std::memory_order_relaxed);
    return static_cast<float>(static_cast<double>(ns) / 1e6);
  }
  ContextScope scope(d.index);
  // Waits for `end`, so that a measurement never fails with CUDA_ERROR_NOT_READY.
  wait_for_event(end.handle(), "cuEventSynchronize", d.index);
  float ms = 0;
  CUresult r = driver::api().cuEventElapsedTime(&ms, handle(), end.handle());
  // An event a host recorded through its handle is unknown here, so the driver decides;
  // only its refusal of an event luda never recorded is reworded.
  if (r == CUDA_ERROR_INVALID_HANDLE && (!start_recorded || !end_recorded)) never_recorded();
  driver::check(r, "cuEventElapsedTime");
  return ms;
}

}  // namespace luda

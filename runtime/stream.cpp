#include "runtime/stream.h"

#include <fmt/format.h>

#include <vector>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace luda {

struct Stream::State {
  CUstream handle = nullptr;
  int device = 0;
  bool owned = false;  // false for the legacy default stream, which is never destroyed

  ~State() {
    if (!owned) return;
    try {
      ContextScope scope(device);
      (void)driver::api().cuStreamDestroy(handle);
    } catch (...) {
      // Destructors never throw; a stream that cannot be destroyed is left to the driver.
    }
  }
};

struct Event::State {
  CUevent handle = nullptr;
  int device = 0;
  bool timing = true;

  ~State() {
    try {
      ContextScope scope(device);
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

}  // namespace

Stream Stream::default_stream(int ordinal) {
  require_cuda_device(ordinal);
  // One shared handle per device: buffers copy it on every allocation.
  static const std::vector<Stream> streams = [] {
    std::vector<Stream> v(cuda_device_count());
    for (int i = 0; i < static_cast<int>(v.size()); ++i) {
      v[i].state_ = std::make_shared<State>();
      v[i].state_->device = i;
    }
    return v;
  }();
  return streams[ordinal];
}

Stream Stream::create(int ordinal) {
  ContextScope scope(ordinal);
  auto state = std::make_shared<State>();
  state->device = ordinal;
  // Non-blocking: no implicit synchronization with the legacy default stream.
  LUDA_CU(cuStreamCreate, &state->handle, CU_STREAM_NON_BLOCKING);
  state->owned = true;
  Stream s;
  s.state_ = std::move(state);
  return s;
}

CUstream Stream::handle() const { return state_ ? state_->handle : nullptr; }

int Stream::device() const {
  LUDA_INTERNAL_CHECK(state_);
  return state_->device;
}

void Stream::synchronize() const {
  ContextScope scope(device());
  wait_for_stream(handle(), "cuStreamSynchronize", device());
}

bool Stream::query() const {
  ContextScope scope(device());
  return finished(driver::api().cuStreamQuery(handle()), "cuStreamQuery");
}

void Stream::wait(const Event& e) const {
  ContextScope scope(device());
  LUDA_CU(cuStreamWaitEvent, handle(), e.handle(), 0);
}

Event Event::create(int ordinal, bool timing) {
  ContextScope scope(ordinal);
  auto state = std::make_shared<State>();
  state->device = ordinal;
  state->timing = timing;
  LUDA_CU(cuEventCreate, &state->handle, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
  Event e;
  e.state_ = std::move(state);
  return e;
}

CUevent Event::handle() const {
  LUDA_INTERNAL_CHECK(state_);
  return state_->handle;
}

int Event::device() const {
  LUDA_INTERNAL_CHECK(state_);
  return state_->device;
}

void Event::record(const Stream& s) const {
  if (s.device() != device())
    fail("an event of cuda:{} cannot record work of a stream of cuda:{}: create the event on "
         "the stream's device",
         device(), s.device());
  ContextScope scope(device());
  LUDA_CU(cuEventRecord, handle(), s.handle());
}

void Event::synchronize() const {
  ContextScope scope(device());
  wait_for_event(handle(), "cuEventSynchronize", device());
}

bool Event::query() const {
  ContextScope scope(device());
  return finished(driver::api().cuEventQuery(handle()), "cuEventQuery");
}

float Event::elapsed_ms(const Event& end) const {
  if (!state_->timing || !end.state_->timing)
    fail("elapsed time needs two events created with timing on (Event::create(device, true))");
  ContextScope scope(device());
  // Waits for `end`, so that a measurement never fails with CUDA_ERROR_NOT_READY.
  wait_for_event(end.handle(), "cuEventSynchronize", device());
  float ms = 0;
  LUDA_CU(cuEventElapsedTime, &ms, handle(), end.handle());
  return ms;
}

}  // namespace luda

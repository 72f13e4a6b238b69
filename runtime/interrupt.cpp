#include "runtime/interrupt.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/driver.h"

namespace luda {

namespace detail {

volatile int g_interrupt = 0;

namespace {
std::atomic<int> g_active{0};
std::atomic<InterruptWaker> g_waker{nullptr};
static_assert(std::atomic<InterruptWaker>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);
}  // namespace

InterruptScope::InterruptScope() noexcept { g_active.fetch_add(1, std::memory_order_relaxed); }
InterruptScope::~InterruptScope() { g_active.fetch_sub(1, std::memory_order_relaxed); }

void InterruptScope::consume() noexcept {
  if (g_active.load(std::memory_order_relaxed) <= 1) g_interrupt = 0;
}

void set_interrupt_waker(InterruptWaker waker) noexcept { g_waker.store(waker); }

}  // namespace detail

void request_interrupt() noexcept {
  detail::g_interrupt = 1;
  if (detail::InterruptWaker w = detail::g_waker.load()) w();
}

void clear_interrupt() noexcept { detail::g_interrupt = 0; }

bool interrupt_requested() noexcept { return detail::g_interrupt != 0; }

namespace {

[[noreturn]] void interrupted_wait(detail::InterruptScope& scope, int ordinal, const char* call) {
  scope.consume();
  throw Interrupted(fmt::format(
      "interrupted while waiting for cuda:{} ({}); the GPU goes on with the work queued before the wait: a GPU "
      "kernel cannot be stopped from the host, and a later wait waits for it",
      ordinal, call));
}

// Polls `query` until it stops answering CUDA_ERROR_NOT_READY: at first as fast as the
// driver answers (a short wait costs what cuStreamSynchronize's spinning costs), then
// sleeping a little longer each time, up to half a millisecond.
template <class Query>
void wait_polling(Query query, const char* call, int ordinal) {
  detail::InterruptScope scope;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::chrono::microseconds nap{20};
  for (;;) {
    CUresult r = query();
    if (r != CUDA_ERROR_NOT_READY) {
      driver::check(r, call);
      return;
    }
    if (detail::g_interrupt) interrupted_wait(scope, ordinal, call);
    if (Clock::now() - start < std::chrono::microseconds(200)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(500));
    }
  }
}

}  // namespace

void wait_for_stream(CUstream stream, const char* call, int ordinal) {
  const driver::Api& cu = driver::api();
  CUresult r = cu.cuStreamQuery(stream);  // most waits find the work done
  if (r != CUDA_ERROR_NOT_READY) return driver::check(r, call);
  wait_polling([&] { return cu.cuStreamQuery(stream); }, call, ordinal);
}

void wait_for_event(CUevent event, const char* call, int ordinal) {
  const driver::Api& cu = driver::api();
  CUresult r = cu.cuEventQuery(event);
  if (r != CUDA_ERROR_NOT_READY) return driver::check(r, call);
  wait_polling([&] { return cu.cuEventQuery(event); }, call, ordinal);
}

// A context has no query: cuCtxSynchronize runs on a helper thread (with the context
// current there too) while this one waits for it or for an interrupt. An interrupted wait
// leaves the helper to finish on its own.
void wait_for_context(int ordinal) {
  const driver::Api& cu = driver::api();
  CUcontext context = nullptr;
  driver::check(cu.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  struct Shared {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    CUresult result = CUDA_SUCCESS;
  };
  auto shared = std::make_shared<Shared>();
  detail::InterruptScope scope;
  std::thread([shared, context] {
    const driver::Api& api = driver::api();
    CUresult r = api.cuCtxSetCurrent(context);
    if (r == CUDA_SUCCESS) r = api.cuCtxSynchronize();
    std::lock_guard lock(shared->mutex);
    shared->result = r;
    shared->done = true;
    shared->done_cv.notify_all();
  }).detach();
  std::unique_lock lock(shared->mutex);
  while (!shared->done_cv.wait_for(lock, std::chrono::milliseconds(2), [&] { return shared->done; }))
    if (detail::g_interrupt) interrupted_wait(scope, ordinal, "cuCtxSynchronize");
  driver::check(shared->result, "cuCtxSynchronize");
}

}  // namespace luda

// Stopping running work from outside it: Ctrl-C at luda's REPL and script runner, or a
// host application's own signal handler or thread.
//
// request_interrupt() asks every cpu kernel running now to stop (between blocks, at
// barriers, and by a signal while its own code runs: runtime/cpu_guard.h) and every host
// wait for a GPU (stream, event, copy and device waits) to give up; each raises
// Interrupted. The GPU's own work goes on: a GPU kernel cannot be
// stopped from the host. When nothing runs, the request waits for the next launch or wait
// to meet it, or for clear_interrupt(). A launch or wait that raises Interrupted clears
// the request when no other is in progress.
#pragma once

#include <cuda.h>

#include "runtime/error.h"

namespace luda {

// request_interrupt(), clear_interrupt() and Interrupted are public (luda/core.h).
bool interrupt_requested() noexcept;

// Waits for `stream` (or `event`) to finish, as cuStreamSynchronize (cuEventSynchronize)
// does, but gives up when an interrupt is requested: "interrupted while waiting for
// cuda:0 (<what>); the GPU goes on with the work queued before the wait". `call` and
// `what` name the wait in that message and in a driver error. The thread's context must
// be current.
void wait_for_stream(CUstream stream, const char* call, int ordinal);
void wait_for_event(CUevent event, const char* call, int ordinal);
// cuCtxSynchronize for the current context (device `ordinal`), given up likewise.
void wait_for_context(int ordinal);

namespace detail {
// Nonzero while a request is pending: the cpu executor reads it between blocks and at
// barriers, the watchdog while it stops kernels, host waits for a GPU as they poll.
extern volatile int g_interrupt;
// A launch or a wait in progress, for request_interrupt()'s bookkeeping (see above).
class InterruptScope {
 public:
  InterruptScope() noexcept;
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  // Called when the work in scope stops because of the request (before raising).
  void consume() noexcept;
};
// What request_interrupt() calls after setting the flag (async-signal-safe): the cpu
// executor's watchdog, which stops raw kernels by a signal (cpu_guard.cpp).
using InterruptWaker = void (*)() noexcept;
void set_interrupt_waker(InterruptWaker waker) noexcept;
}  // namespace detail

}  // namespace luda

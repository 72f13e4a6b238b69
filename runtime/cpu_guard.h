// What keeps a cpu kernel from taking its host process down: the kernel runs in the
// host's own threads, so a fault in it (a wild pointer, an integer division by zero, a
// stack overflow), a call of exit/abort/assert, a thrown exception or an endless loop
// would otherwise crash, end or hang the process. Internal to the cpu executor.
//
// Every stretch of kernel code (one block in loop mode, one CUDA thread's run in fiber
// mode) runs between enter() and leave() after a sigsetjmp; what stops it longjmps back
// there with a Stop:
//   - synchronous signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL) on a thread inside kernel
//     code, caught by handlers installed at the first cpu launch (on an alternate signal
//     stack, so that a stack overflow is caught too); elsewhere the handlers chain to the
//     ones they replaced, so the process behaves as it would without luda;
//   - the runtime's services (runtime/cpu_abi.h): fail (exit, abort, assert, throw), stop
//     and yield (a loop back-edge saw a stop request);
//   - for kernels that do not poll (raw kernels), a watchdog thread that, while a stop is
//     requested, sends stop_signal() to the threads running them; the handler jumps only
//     when the thread is executing the kernel's own code, never inside a library call
//     (which may hold a lock), and the watchdog tries again until the kernel has stopped.
// A longjmp skips the kernel's C++ destructors: what its frames owned leaks, and a lock it
// held stays held. Memory the kernel wrote wildly before a fault cannot be repaired.
#pragma once

#include <csetjmp>
#include <exception>
#include <string_view>

#include "runtime/cpu_executor.h"

namespace luda::cpu_guard {

// Why kernel code came back to its jump point (sigsetjmp's value).
enum Stop : int {
  kRunning = 0,
  kFault = 1,      // a synchronous signal in kernel code
  kInterrupt = 2,  // a stop was requested (request_interrupt)
  kFailed = 3,     // the kernel called fail(): exit, abort, assert, an exception
  kAbandon = 4,    // fiber mode: another thread of the block stopped; this one is let go
};

// The signal the watchdog sends to stop a raw kernel: SIGRTMIN + 6.
int stop_signal();

// The calling OS thread, ready to run kernel code: registered where the signal handlers
// look, with an alternate signal stack (its own, unless the thread already had one) and,
// at the first call in the process, the handlers installed.
struct Thread;
Thread& this_thread();

// Kernel code of `kernel` runs from here to leave(), with `jump` as its jump point;
// `stack_low` and `stack_bytes` describe the stack it runs on (a fiber's; null and 0 for
// the thread's own), to tell a stack overflow from another fault.
void enter(Thread& t, sigjmp_buf* jump, const CpuKernel* kernel, const void* stack_low = nullptr,
           std::size_t stack_bytes = 0) noexcept;
void leave(Thread& t) noexcept;

// Longjmps to the calling thread's jump point with `why`; `message` (kFailed) is copied.
[[noreturn]] void stop_here(Stop why, std::string_view message = {}) noexcept;

// The error for a Stop that came back to a jump point of `t`, naming the kernel by `who`
// ("kernel 'k' crashed on the cpu device: ...", Interrupted "kernel 'k' was interrupted;
// ..."). Null for kAbandon.
std::exception_ptr stop_error(Thread& t, int why, std::string_view who);

// Arms the watchdog that stops raw kernels (once per process; the executor calls it at the
// first launch of a kernel that does not poll).
void start_watchdog();

}  // namespace luda::cpu_guard

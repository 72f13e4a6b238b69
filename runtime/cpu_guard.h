// What keeps a cpu kernel from taking its host process down: the kernel runs in the
// host's own threads, so a fault in it (a wild pointer, an integer division by zero, a
// stack overflow), a call of exit/abort/assert, a thrown exception or an endless loop
// would otherwise crash, end or hang the process. Internal to the cpu executor.
//
// Kernel code runs armed with a jump point set by sigsetjmp (one per block in loop mode,
// one per fiber in fiber mode); what stops it longjmps back there with a Stop:
//   - synchronous signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL) on a thread inside kernel
//     code, caught by handlers installed at the first cpu launch (on an alternate signal
//     stack, so that a stack overflow is caught too); elsewhere the handlers chain to the
//     ones they replaced, so the process behaves as it would without luda;
//   - the runtime's services (runtime/cpu_abi.h): fail (exit, abort, assert, throw) and
//     yield (a spin-wait's back-edge met a stop request);
//   - a stop request: a watchdog thread sends SIGRTMIN + 6 to the threads running kernel
//     code, every 20 ms while the request stands; the handler jumps only when the thread
//     executes the kernel's own code (its shared object), never inside a library call,
//     which may hold a lock (printf's buffer, malloc). Kernel loops pay nothing for it,
//     where a poll at every back-edge would cost a load and a branch per iteration.
// A longjmp skips the kernel's C++ destructors: what its frames owned leaks, and a lock it
// held stays held. Memory the kernel wrote wildly before a fault cannot be repaired.
#pragma once

#include <pthread.h>

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <exception>
#include <string_view>

#include "runtime/cpu_executor.h"

// LUDA_ASAN: this build is instrumented by AddressSanitizer (GCC's and Clang's spellings).
#if defined(__SANITIZE_ADDRESS__)
#define LUDA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LUDA_ASAN 1
#endif
#endif

namespace luda::cpu_guard {

// Why kernel code came back to its jump point (sigsetjmp's value).
enum Stop : int {
  kRunning = 0,
  kFault = 1,      // a synchronous signal in kernel code
  kInterrupt = 2,  // a stop was requested (request_interrupt)
  kFailed = 3,     // the kernel called fail(): exit, abort, assert, an exception
  kAbandon = 4,    // fiber mode: another thread of the block stopped; this one is let go
};

// A stack kernel code runs on, to tell a stack overflow from another fault and to say its
// size.
struct Stack {
  const char* low = nullptr;  // the lowest usable address
  std::size_t bytes = 0;
};

// Where a stop of kernel code lands: a sigsetjmp buffer, and the stack the code runs on (a
// fiber's; low null: the OS thread's own).
struct JumpPoint {
  sigjmp_buf buf;
  Stack stack;
};

// One OS thread that runs kernel code, as its signal handlers see it (cpu_guard.cpp keeps
// these in a table they search, since reading a thread_local of a dlopened library may
// allocate, which a handler must not do).
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<bool> signalling{false};  // the watchdog is sending this thread its signal
  std::atomic<pthread_t> thread{};
  // Set by the owning thread; read by its signal handlers and by the watchdog.
  std::atomic<JumpPoint*> jump{nullptr};          // armed: kernel code runs
  std::atomic<const CpuKernel*> kernel{nullptr};  // the kernel of the block being run
  Stack thread_stack;
  const Stack* stopped_on = nullptr;  // the stack of the last stop
  // The last stop, written before the jump and read after it.
  int sig = 0, code = 0;
  const void* addr = nullptr;
  const void* sp = nullptr;
  char message[512] = {};
};

// The calling OS thread, ready to run kernel code: registered where the signal handlers
// look, with an alternate signal stack (its own, unless the thread already had one) and,
// at the first call in the process, the handlers installed.
struct Thread {
  Slot* slot = nullptr;
  void* alt_stack = nullptr;  // mapped here when the thread had none
  void register_self();
  ~Thread();
};
Thread& this_thread();

// The kernel whose block this thread runs now (null after it).
inline void set_kernel(Slot& s, const CpuKernel* kernel) noexcept { s.kernel.store(kernel, std::memory_order_relaxed); }
// Kernel code runs from arm() to disarm(), with `jump` as its jump point: one store each,
// as fibers arm and disarm at every switch.
inline void arm(Slot& s, JumpPoint* jump) noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  s.jump.store(jump, std::memory_order_relaxed);
}
inline void disarm(Slot& s) noexcept {
  s.jump.store(nullptr, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

// Longjmps to the calling thread's jump point with `why`; `message` (kFailed) is copied.
[[noreturn]] void stop_here(Stop why, std::string_view message = {}) noexcept;

// The error for a Stop that came back to a jump point of slot `s`, naming the kernel by `who`
// ("kernel 'k' crashed on the cpu device: ...", Interrupted "kernel 'k' was interrupted;
// ..."). Null for kAbandon.
std::exception_ptr stop_error(const Slot& s, int why, std::string_view who);

// Arms the watchdog that stops kernels (once per process, at the first launch).
void start_watchdog();

// munmap of a stack that code ran on (a fiber's, a signal handler's). Frames left by a
// longjmp or by a fiber that never returns keep their AddressSanitizer poison; it is
// cleared first, or the next mapping at those addresses (another library's buffer) would
// be reported as a stack overflow. Without AddressSanitizer, munmap alone.
void unmap_stack(void* base, std::size_t bytes) noexcept;

}  // namespace luda::cpu_guard

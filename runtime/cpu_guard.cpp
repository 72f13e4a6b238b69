#include "runtime/cpu_guard.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

#ifdef LUDA_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace luda::cpu_guard {

namespace {

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
constexpr std::size_t kMaxSlots = 4096;            // OS threads that run kernel code at once
constexpr std::size_t kAltStackBytes = 64 * 1024;  // where the handlers run
constexpr std::size_t kMessageBytes = sizeof(Slot::message);

static_assert(std::atomic<pthread_t>::is_always_lock_free && std::atomic<JumpPoint*>::is_always_lock_free);

Slot g_slots[kMaxSlots];
std::atomic<std::size_t> g_slot_end{0};  // slots in use lie below
struct sigaction g_previous[NSIG];
int g_stop_signal = 0;

Slot* find_self() noexcept {
  const pthread_t self = pthread_self();
  const std::size_t end = g_slot_end.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < end; ++i)
    if (g_slots[i].used.load(std::memory_order_acquire) &&
        pthread_equal(g_slots[i].thread.load(std::memory_order_relaxed), self))
      return &g_slots[i];
  return nullptr;
}

const void* context_pc(void* context) noexcept {
#if defined(__x86_64__)
  return reinterpret_cast<const void*>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return reinterpret_cast<const void*>(static_cast<ucontext_t*>(context)->uc_mcontext.pc);
#else
  (void)context;
  return nullptr;  // unknown: kernel code is then stopped only between blocks and at barriers
#endif
}

const void* context_sp(void* context) noexcept {
#if defined(__x86_64__)
  return reinterpret_cast<const void*>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return reinterpret_cast<const void*>(static_cast<ucontext_t*>(context)->uc_mcontext.sp);
#else
  (void)context;
  return nullptr;
#endif
}

// A signal that is not a cpu kernel's: what the process would have done without luda.
void chain(int sig, siginfo_t* info, void* context) noexcept {
  const struct sigaction& p = g_previous[sig];
  if (p.sa_flags & SA_SIGINFO) {
    if (p.sa_sigaction) p.sa_sigaction(sig, info, context);
    return;
  }
  if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
    p.sa_handler(sig);
    return;
  }
  if (sig == g_stop_signal) return;  // ours, arriving late: nothing to stop any more
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  // A fault returns to the faulting instruction, which now ends the process; a signal sent
  // by kill() is sent again.
  if (info == nullptr || info->si_code <= 0) raise(sig);
}

void on_fault(int sig, siginfo_t* info, void* context) noexcept {
  Slot* s = find_self();
  JumpPoint* jump = s ? s->jump.load(std::memory_order_relaxed) : nullptr;
  if (jump == nullptr) {
    int saved = errno;
    chain(sig, info, context);
    errno = saved;
    return;
  }
  s->sig = sig;
  s->code = info->si_code;
  s->addr = info->si_addr;
  s->sp = context_sp(context);
  s->stopped_on = &jump->stack;
  s->jump.store(nullptr, std::memory_order_relaxed);
  siglongjmp(jump->buf, kFault);
}

// The watchdog's signal: stop a kernel, but only while the thread executes the kernel's
// own code (a library call may hold a lock; the watchdog tries again).
void on_stop_signal(int sig, siginfo_t* info, void* context) noexcept {
  Slot* s = find_self();
  JumpPoint* jump = s ? s->jump.load(std::memory_order_relaxed) : nullptr;
  const CpuKernel* k = s ? s->kernel.load(std::memory_order_relaxed) : nullptr;
  const bool from_watchdog = info->si_code == SI_TKILL && info->si_pid == getpid();
  if (jump && k && from_watchdog && detail::g_interrupt) {
    const void* pc = context_pc(context);
    if (pc && k->code_begin <= pc && pc < k->code_end) {
      s->sig = 0;
      s->jump.store(nullptr, std::memory_order_relaxed);
      siglongjmp(jump->buf, kInterrupt);
    }
  }
  if (!from_watchdog) {
    int saved = errno;
    chain(sig, info, context);
    errno = saved;
  }
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_stop_signal = SIGRTMIN + 6;
    struct sigaction a {};
    sigemptyset(&a.sa_mask);
    // SA_NODEFER: the handler leaves by siglongjmp without restoring a signal mask (a
    // cheap sigsetjmp(buf, 0)), so the signal must not be blocked while it runs.
    a.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    a.sa_sigaction = on_fault;
    for (int sig : kFaultSignals) sigaction(sig, &a, &g_previous[sig]);
    a.sa_flags |= SA_RESTART;
    a.sa_sigaction = on_stop_signal;
    sigaction(g_stop_signal, &a, &g_previous[g_stop_signal]);
    // At exit, or when luda.so is unloaded: the handlers they replaced come back, so that
    // no handler points into unloaded code.
    static struct Restore {
      ~Restore() {
        for (int sig : kFaultSignals) restore(sig);
        restore(g_stop_signal);
      }
      static void restore(int sig) {
        struct sigaction current {};
        if (sigaction(sig, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
            (current.sa_sigaction == on_fault || current.sa_sigaction == on_stop_signal))
          sigaction(sig, &g_previous[sig], nullptr);
      }
    } restore_at_exit;
  });
}

}  // namespace

void Thread::register_self() {
  install_handlers();
  for (std::size_t i = 0; i < kMaxSlots && !slot; ++i) {
    bool free = false;
    if (!g_slots[i].used.load(std::memory_order_relaxed) && !g_slots[i].signalling.load() &&
        g_slots[i].used.compare_exchange_strong(free, true)) {
      slot = &g_slots[i];
      std::size_t end = g_slot_end.load();
      while (end < i + 1 && !g_slot_end.compare_exchange_weak(end, i + 1)) {
      }
    }
  }
  if (!slot) fail("more than {} threads run cpu kernels at once", kMaxSlots);
  slot->thread.store(pthread_self(), std::memory_order_release);
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* low = nullptr;
    std::size_t bytes = 0;
    if (pthread_attr_getstack(&attr, &low, &bytes) == 0)
      slot->thread_stack = Stack{static_cast<const char*>(low), bytes};
    pthread_attr_destroy(&attr);
  }
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
    void* p = mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      stack_t ss{};
      ss.ss_sp = p;
      ss.ss_size = kAltStackBytes;
      if (sigaltstack(&ss, nullptr) == 0) alt_stack = p;
      else unmap_stack(p, kAltStackBytes);
    }
  }
}

Thread::~Thread() {
  if (slot) {
    slot->jump.store(nullptr);
    slot->kernel.store(nullptr);
    while (slot->signalling.load()) std::this_thread::yield();
    slot->thread.store(pthread_t{});
    slot->used.store(false, std::memory_order_release);
  }
  if (alt_stack) {
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && current.ss_sp == alt_stack) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    }
    unmap_stack(alt_stack, kAltStackBytes);
  }
}

Thread& this_thread() {
  static thread_local Thread t;
  if (!t.slot) t.register_self();
  return t;
}

void stop_here(Stop why, std::string_view message) noexcept {
  Slot& s = *this_thread().slot;
  JumpPoint* jump = s.jump.load(std::memory_order_relaxed);
  // Every call of kernel code is guarded (cpu_block.cpp), and only kernel code calls here.
  if (jump == nullptr) std::abort();
  std::size_t n = std::min(message.size(), kMessageBytes - 1);
  std::memcpy(s.message, message.data(), n);
  s.message[n] = '\0';
  s.sig = 0;
  s.jump.store(nullptr, std::memory_order_relaxed);
  siglongjmp(jump->buf, why);
}

namespace {

std::string fault_message(const Slot& s, std::string_view who) {
  constexpr std::size_t kPage = 4096;
  const char* addr = static_cast<const char*>(s.addr);
  const char* sp = static_cast<const char*>(s.sp);
  const Stack* stack = s.stopped_on && s.stopped_on->low ? s.stopped_on : &s.thread_stack;
  const char* low = stack->low;
  bool overflow = (s.sig == SIGSEGV || s.sig == SIGBUS) && low != nullptr &&
                  ((sp != nullptr && sp < low + kPage) || (addr >= low - 64 * 1024 && addr < low + kPage));
  if (overflow)
    return fmt::format(
        "{} crashed on the cpu device: stack overflow (a thread of it has {} of stack: deep recursion, or local "
        "arrays too large); luda stopped the kernel",
        who, driver::format_bytes(stack->bytes));
  std::string what;
  switch (s.sig) {
    case SIGSEGV:
    case SIGBUS:
      what = fmt::format(
          "invalid memory access at address {} ({}): a null or wild pointer, or an index out of range with "
          "bounds checks off. luda stopped the kernel, but what it wrote before the fault may have corrupted "
          "this process's memory",
          s.addr, s.sig == SIGSEGV ? "SIGSEGV" : "SIGBUS");
      break;
    case SIGFPE:
      what = s.code == FPE_INTDIV || s.code == FPE_INTOVF
                 ? "integer division by zero, or of the smallest integer by -1 (SIGFPE); luda stopped the kernel"
                 : "arithmetic exception (SIGFPE); luda stopped the kernel";
      break;
    case SIGILL:
      what = "illegal instruction (SIGILL): a trap, or an instruction this CPU lacks; luda stopped the kernel";
      break;
    default: what = fmt::format("signal {}; luda stopped the kernel", s.sig);
  }
  return fmt::format("{} crashed on the cpu device: {}", who, what);
}

}  // namespace

std::exception_ptr stop_error(const Slot& s, int why, std::string_view who) {
  switch (why) {
    case kFault: return std::make_exception_ptr(Error(fault_message(s, who)));
    case kInterrupt:
      return std::make_exception_ptr(
          Interrupted(fmt::format("{} was interrupted; the arrays it was writing may hold partial results", who)));
    case kFailed: return std::make_exception_ptr(Error(fmt::format("{} {}", who, s.message)));
    default: return nullptr;
  }
}

// ---- the watchdog: stops running kernel code by a signal -----------------------------------

namespace {

struct Watchdog {
  sem_t wake;
  std::atomic<bool> quit{false};
  std::thread thread;

  Watchdog() {
    sem_init(&wake, 0, 0);
    thread = std::thread([this] { run(); });
  }
  // At exit, or when luda.so is unloaded: before the code the thread runs goes away.
  ~Watchdog() {
    detail::set_interrupt_waker(nullptr);
    quit = true;
    sem_post(&wake);
    thread.join();
    sem_destroy(&wake);
  }

  // Signals every thread running kernel code, every 20 ms while a stop is requested and
  // such code runs.
  void run() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
      while (sem_wait(&wake) != 0) {
      }
      if (quit) return;
      while (detail::g_interrupt && !quit) {
        bool any = false;
        const std::size_t end = g_slot_end.load();
        for (std::size_t i = 0; i < end; ++i) {
          Slot& s = g_slots[i];
          s.signalling.store(true);
          const CpuKernel* k = s.kernel.load();
          if (s.used.load() && k && k->code_begin) {
            pthread_kill(s.thread.load(), g_stop_signal);
            any = true;
          }
          s.signalling.store(false);
        }
        if (!any) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
};

Watchdog* g_watchdog = nullptr;

void wake_watchdog() noexcept {
  if (Watchdog* w = g_watchdog) sem_post(&w->wake);
}

}  // namespace

void start_watchdog() {
  static std::once_flag once;
  std::call_once(once, [] {
    install_handlers();
    static Watchdog watchdog;
    g_watchdog = &watchdog;
    detail::set_interrupt_waker(wake_watchdog);
    if (detail::g_interrupt) wake_watchdog();  // a request that came first
  });
}

void unmap_stack(void* base, std::size_t bytes) noexcept {
#ifdef LUDA_ASAN
  __asan_unpoison_memory_region(base, bytes);
#endif
  munmap(base, bytes);
}

}  // namespace luda::cpu_guard

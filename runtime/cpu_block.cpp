#include "runtime/cpu_block.h"

#include <boost/context/fiber.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <csetjmp>
#include <cstdio>
#include <mutex>
#include <new>
#include <vector>

#include "runtime/cpu_executor.h"
#include "runtime/cpu_guard.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

#ifdef LUDA_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace luda {

namespace ctx = boost::context;

namespace {

constexpr unsigned kWarpSize = 32;
constexpr unsigned kMaxThreads = 1024;  // validate_cpu_launch's limit
// Each CUDA thread's stack, sized from the kernel: room for calls (kFiberStackBytes) plus
// its local arrays (CpuKernel::local_bytes), or for raw code, whose needs are unknown,
// plus what a GPU thread may use (512 KiB of local memory). The pages are only committed
// when touched, and a guard page below turns an overflow into a fault (contained by
// cpu_guard.h) instead of silent corruption, as a GPU's stack overflow faults.
constexpr std::size_t kFiberStackBytes = 128 * 1024;
constexpr std::size_t kGpuLocalBytes = 512 * 1024;
constexpr std::size_t kSharedAlign = 64;  // the ABI promises 16; a cache line costs nothing

// A fiber stack with a guard page below it (what Boost's protected_fixedsize_stack does).
// Our own because Boost's needs stack_traits.o, the one object of Debian's
// libboost_context.a that is not position-independent: without it the archive links
// into luda.so too.
struct GuardedStack {
  std::size_t bytes;
  const char** low;               // set to the lowest usable address
  ctx::stack_context* allocated;  // told where the whole stack is (for AddressSanitizer)

  ctx::stack_context allocate() {
    static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t total = (bytes + page - 1) / page * page + page;
    void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    mprotect(base, page, PROT_NONE);  // the stack grows down into this page: a fault
    *low = static_cast<const char*>(base) + page;
    ctx::stack_context sc;
    sc.size = total;
    sc.sp = static_cast<char*>(base) + total;
    *allocated = sc;
    return sc;
  }

  void deallocate(ctx::stack_context& sc) noexcept {
    cpu_guard::unmap_stack(static_cast<char*>(sc.sp) - sc.size, sc.size);
  }
};

// AddressSanitizer keeps one stack per OS thread; a fiber switch it is not told of makes
// it report false stack overflows. Each switch is announced: before_switch on the stack
// being left (`save` keeps its fake frames; null when it is never resumed), after_switch
// on the stack arrived at (`saved` is what its own before_switch kept; the stack it came
// from is written to *from_bottom, *from_size). Without AddressSanitizer both are empty.
inline void before_switch([[maybe_unused]] void** save, [[maybe_unused]] const void* bottom,
                          [[maybe_unused]] std::size_t size) {
#ifdef LUDA_ASAN
  __sanitizer_start_switch_fiber(save, bottom, size);
#endif
}
inline void after_switch([[maybe_unused]] void* saved, [[maybe_unused]] const void** from_bottom,
                         [[maybe_unused]] std::size_t* from_size) {
#ifdef LUDA_ASAN
  __sanitizer_finish_switch_fiber(saved, from_bottom, from_size);
#endif
}

enum class Wait : unsigned char { None, Barrier, Warp, Grid };
enum class WarpOp : unsigned char { Sync, Shfl, Ballot };
enum ShflMode { kIdx = 0, kUp = 1, kDown = 2, kXor = 3 };  // ORDER cpu_abi.h shfl modes

// One CUDA thread in fiber mode. The fiber outlives blocks: after its thread returns it
// suspends, and the next block on this OS thread resumes it to run the next thread, so a
// block costs no fiber creation and no stack allocation once the runner is warm.
struct FiberThread {
  luda_cpu_thread t{};
  ctx::fiber self;   // the suspended thread, held by the scheduler
  ctx::fiber sched;  // the scheduler, held by the thread while it runs
  CpuBlockRunner::State* block = nullptr;
  Wait wait = Wait::None;
  bool done = false;
  bool quit = false;          // set by drop_fibers: return instead of running again
  cpu_guard::JumpPoint jump;  // where a stop of its kernel code lands, on its own stack
  // For before_switch/after_switch: this fiber's stack, its saved fake frames, and the
  // scheduler's stack it switches back to.
  ctx::stack_context stack{};
  void* fake_frames = nullptr;
  const void* sched_bottom = nullptr;
  std::size_t sched_size = 0;
};

// A warp's exchange slots. A lane deposits its operands and sets its bit in `arrived`;
// the lane whose arrival completes a group (every live lane of its mask has arrived)
// computes every member's result and makes the waiting members runnable. Disjoint
// groups of one warp (divergent branches with complementary masks) exchange independently.
struct Warp {
  unsigned live = 0;     // lanes that exist and have not returned
  unsigned arrived = 0;  // lanes waiting in an exchange
  unsigned mask[kWarpSize];
  WarpOp op[kWarpSize];
  int mode[kWarpSize], arg[kWarpSize], width[kWarpSize];
  unsigned long long value[kWarpSize], result[kWarpSize];
};

}  // namespace

struct CpuBlockRunner::State {
  // The block being run.
  const CpuKernel* kernel = nullptr;
  std::string_view who;  // "kernel 'k'", for errors
  void* const* args = nullptr;
  bool fibers = false;
  bool aborting = false;           // a thread stopped (cpu_guard.h): the others are let go
  unsigned count = 0;              // threads in the block
  unsigned live = 0;               // threads that have not returned
  unsigned barrier_arrived = 0;    // threads waiting in syncthreads
  unsigned grid_arrived = 0;       // threads waiting in grid_sync
  CpuGridBarrier* grid = nullptr;  // a cooperative launch's
  std::exception_ptr error;        // the first exception a thread's code threw
  const char* misuse = nullptr;    // a service a loop-mode kernel called

  std::vector<std::unique_ptr<FiberThread>> threads;  // grown to the largest block seen
  std::size_t fiber_stack = kFiberStackBytes;         // their stacks' size
  Warp warps[kMaxThreads / kWarpSize];
  cpu_guard::Slot* guard = nullptr;  // this OS thread's (cpu_guard.h)

  void* shared = nullptr;  // dynamic shared memory, grown to the largest request
  std::size_t shared_capacity = 0;

  ~State();
};

namespace {

using State = CpuBlockRunner::State;

unsigned linear_index(const luda_cpu_thread& t) {
  return t.threadIdx.x + t.blockDim.x * (t.threadIdx.y + t.blockDim.y * t.threadIdx.z);
}

State& state_of(luda_cpu_thread* t) { return *static_cast<State*>(t->block); }

// On the fiber: back to the scheduler until it resumes this thread.
void suspend(FiberThread& f) {
  before_switch(&f.fake_frames, f.sched_bottom, f.sched_size);
  f.sched = std::move(f.sched).resume();
  after_switch(f.fake_frames, &f.sched_bottom, &f.sched_size);
}

// On the scheduler: runs the thread until it waits or returns.
void resume(FiberThread& f) {
  void* fake_frames = nullptr;
  before_switch(&fake_frames, static_cast<char*>(f.stack.sp) - f.stack.size, f.stack.size);
  f.self = std::move(f.self).resume();
  after_switch(fake_frames, nullptr, nullptr);
}

// A thread suspended inside its kernel code (a barrier, a warp exchange, a yield). Its
// jump point is disarmed while others run; when the block is being abandoned, it leaves
// its kernel code for its jump point as soon as it is resumed.
void suspend_in_kernel(FiberThread& f) {
  State& s = *f.block;
  cpu_guard::disarm(*s.guard);
  suspend(f);
  cpu_guard::arm(*s.guard, &f.jump);
  if (s.aborting) siglongjmp(f.jump.buf, cpu_guard::kAbandon);
}

// A stretch of kernel code came back to its jump point: the first error is the block's,
// and the block's other threads are let go.
void stopped(State& s, int why) {
  if (why != cpu_guard::kAbandon && !s.error) s.error = cpu_guard::stop_error(*s.guard, why, s.who);
  s.aborting = true;
}

void release_barrier(State& s) {
  s.barrier_arrived = 0;
  for (unsigned i = 0; i < s.count; ++i)
    if (s.threads[i]->wait == Wait::Barrier) s.threads[i]->wait = Wait::None;
}

// The lane a shfl reads, by PTX's shfl.sync rule (what CUDA's __shfl*_sync compile to):
// width splits the warp into segments; idx reads lane arg modulo width of the caller's
// segment; up/down read lane -/+ arg when that stays inside the segment; xor reads
// lane ^ arg unless that lies past the segment's end (an earlier segment is allowed).
// Otherwise the caller reads its own value.
unsigned shfl_source(unsigned lane, int mode, int arg, int width) {
  unsigned w = static_cast<unsigned>(width);
  if (w == 0 || w > kWarpSize || !std::has_single_bit(w)) w = kWarpSize;  // undefined in CUDA
  const unsigned segmask = (kWarpSize - w) & 31;
  const unsigned b = static_cast<unsigned>(arg) & 31;
  const int first = static_cast<int>(lane & segmask);
  const int last = first | static_cast<int>(31 & ~segmask);
  int j = static_cast<int>(lane);
  bool inside = true;
  switch (mode) {
    case kUp:
      j = static_cast<int>(lane) - static_cast<int>(b);
      inside = j >= first;
      break;
    case kDown:
      j = static_cast<int>(lane + b);
      inside = j <= last;
      break;
    case kXor:
      j = static_cast<int>(lane ^ b);
      inside = j <= last;
      break;
    default:  // kIdx
      j = first | static_cast<int>(b & ~segmask);
      break;
  }
  return inside ? static_cast<unsigned>(j) : lane;
}

// Finishes the exchange of the lanes in `group` (all arrived): results, then wake-ups.
// A source lane outside the group (not named in the mask, or returned) is undefined in
// CUDA; here the caller reads its own value.
void complete(State& s, unsigned warp, unsigned group) {
  Warp& w = s.warps[warp];
  unsigned votes = 0;
  for (unsigned m = group; m; m &= m - 1) {
    unsigned l = static_cast<unsigned>(std::countr_zero(m));
    if (w.op[l] == WarpOp::Ballot && w.value[l] != 0) votes |= 1u << l;
  }
  for (unsigned m = group; m; m &= m - 1) {
    unsigned l = static_cast<unsigned>(std::countr_zero(m));
    switch (w.op[l]) {
      case WarpOp::Shfl: {
        unsigned j = shfl_source(l, w.mode[l], w.arg[l], w.width[l]);
        w.result[l] = (group >> j & 1u) ? w.value[j] : w.value[l];
        break;
      }
      case WarpOp::Ballot: w.result[l] = votes; break;
      case WarpOp::Sync: w.result[l] = 0; break;
    }
  }
  w.arrived &= ~group;
  for (unsigned m = group; m; m &= m - 1)
    s.threads[warp * kWarpSize + static_cast<unsigned>(std::countr_zero(m))]->wait = Wait::None;
}

// Completes `lane`'s group when every live lane of its mask has arrived.
bool try_complete(State& s, unsigned warp, unsigned lane) {
  Warp& w = s.warps[warp];
  const unsigned need = w.mask[lane] & w.live;
  if ((w.arrived & need) != need) return false;
  complete(s, warp, need);
  return true;
}

// A lane returned: exchanges that waited for it complete without it, and a barrier that
// every remaining thread has reached opens. CUDA leaves a barrier that some threads skip
// undefined; releasing it is the one answer that cannot deadlock.
void thread_exited(State& s, FiberThread& f) {
  f.done = true;
  --s.live;
  const unsigned lin = linear_index(f.t);
  Warp& w = s.warps[lin / kWarpSize];
  w.live &= ~(1u << (lin % kWarpSize));
  for (unsigned m = w.arrived; m; m &= m - 1) {
    unsigned l = static_cast<unsigned>(std::countr_zero(m));
    if (w.arrived >> l & 1u) try_complete(s, lin / kWarpSize, l);
  }
  if (s.barrier_arrived != 0 && s.barrier_arrived == s.live) release_barrier(s);
}

// Every remaining thread waits and none can be released by the rules above: threads
// wait at different barriers (some at syncthreads, some in a warp exchange that names
// them), which CUDA leaves undefined. Open the block barrier, else complete one waiting
// warp group with the lanes that arrived, and let the scheduler go on.
void release_stalled(State& s) {
  if (s.barrier_arrived != 0) {
    release_barrier(s);
    return;
  }
  for (unsigned wi = 0; wi < (s.count + kWarpSize - 1) / kWarpSize; ++wi) {
    Warp& w = s.warps[wi];
    if (w.arrived != 0) {
      unsigned l = static_cast<unsigned>(std::countr_zero(w.arrived));
      complete(s, wi, w.mask[l] & w.arrived);
      return;
    }
  }
}

unsigned long long exchange(luda_cpu_thread* t, WarpOp op, const char* name, unsigned mask, unsigned long long value,
                            int mode, int arg, int width) noexcept {
  State& s = state_of(t);
  if (!s.fibers) {  // the kernel broke the contract; cpu_launch reports it
    if (!s.misuse) s.misuse = name;
    return op == WarpOp::Ballot ? (value != 0 ? 1u << t->lane : 0u) : value;
  }
  const unsigned lin = linear_index(*t), warp = lin / kWarpSize, lane = lin % kWarpSize;
  Warp& w = s.warps[warp];
  w.mask[lane] = mask | 1u << lane;  // a mask without the caller is undefined in CUDA
  w.op[lane] = op;
  w.mode[lane] = mode;
  w.arg[lane] = arg;
  w.width[lane] = width;
  w.value[lane] = value;
  w.arrived |= 1u << lane;
  if (!try_complete(s, warp, lane)) {
    FiberThread& f = *s.threads[lin];
    f.wait = Wait::Warp;
    suspend_in_kernel(f);
  }
  return w.result[lane];
}

// The services of cpu_abi.h's luda_cpu_runtime. None throws.

void rt_syncthreads(luda_cpu_thread* t) noexcept {
  State& s = state_of(t);
  if (!s.fibers) {
    if (!s.misuse) s.misuse = "syncthreads";
    return;
  }
  if (++s.barrier_arrived == s.live) {  // the last to arrive opens it and goes on
    release_barrier(s);
    return;
  }
  FiberThread& f = *s.threads[linear_index(*t)];
  f.wait = Wait::Barrier;
  suspend_in_kernel(f);
}

// The grid barrier: the block's threads gather here (Wait::Grid), and once every thread
// of the block that has not returned waits, the scheduler waits for the other blocks
// (run_fibers, grid_wait).
void rt_grid_sync(luda_cpu_thread* t) noexcept {
  State& s = state_of(t);
  if (!s.grid)
    cpu_guard::stop_here(cpu_guard::kFailed,
                         "called cooperative_groups::this_grid().sync() but was not launched cooperatively "
                         "(a raw kernel that uses the grid barrier needs enable_cooperative_groups = true)");
  if (!s.fibers) {
    if (!s.misuse) s.misuse = "grid_sync";
    return;
  }
  ++s.grid_arrived;
  FiberThread& f = *s.threads[linear_index(*t)];
  f.wait = Wait::Grid;
  suspend_in_kernel(f);
}

void rt_syncwarp(luda_cpu_thread* t, unsigned mask) noexcept {
  exchange(t, WarpOp::Sync, "syncwarp", mask, 0, 0, 0, 32);
}

unsigned long long rt_shfl(luda_cpu_thread* t, unsigned mask, unsigned long long value, int mode, int arg,
                           int width) noexcept {
  return exchange(t, WarpOp::Shfl, "shfl", mask, value, mode, arg, width);
}

unsigned rt_ballot(luda_cpu_thread* t, unsigned mask, int predicate) noexcept {
  return static_cast<unsigned>(exchange(t, WarpOp::Ballot, "ballot", mask, predicate != 0 ? 1 : 0, 0, 0, 32));
}

// One fwrite under a lock: concurrent prints never interleave inside a line, and they
// share stdout's buffer with the host's own output (Lua's print), so the order holds.
void rt_print(const char* text, unsigned long long length) noexcept {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fwrite(text, 1, static_cast<std::size_t>(length), stdout);
}

void rt_fail(luda_cpu_thread*, const char* message) noexcept { cpu_guard::stop_here(cpu_guard::kFailed, message); }

// A back-edge of an open loop in a kernel whose threads may wait for one another: the
// others run before this one goes on, so a spin-wait on a flag that another thread of the
// block sets ends, as on a GPU (sm_70 and later schedule a block's threads independently).
void rt_yield(luda_cpu_thread* t) noexcept {
  if (detail::g_interrupt) cpu_guard::stop_here(cpu_guard::kInterrupt);
  State& s = state_of(t);
  if (!s.fibers) return;  // not marked as needing fibers: there is no one to yield to
  FiberThread& f = *s.threads[linear_index(*t)];
  f.wait = Wait::None;
  suspend_in_kernel(f);
}

const luda_cpu_runtime kRuntime = {
    LUDA_CPU_ABI_VERSION, rt_syncthreads, rt_syncwarp, rt_shfl, rt_ballot, rt_print, rt_fail, rt_yield, rt_grid_sync};

// The body of a fiber: one CUDA thread after another, each of a block that resumes it.
// Its jump point is set once (noinline: the frame that holds it lives as long as the
// fiber), so a thread's run costs no sigsetjmp; a stop lands there and the loop goes on.
__attribute__((noinline)) void fiber_main(FiberThread& f) {
  if (int why = sigsetjmp(f.jump.buf, 0)) {
    cpu_guard::disarm(*f.block->guard);
    stopped(*f.block, why);
    goto ended;
  }
  while (!f.quit) {
    {
      State& st = *f.block;
      if (!st.aborting) {
        cpu_guard::arm(*st.guard, &f.jump);
        try {
          st.kernel->run_thread(st.args);
        } catch (const ctx::detail::forced_unwind&) {
          cpu_guard::disarm(*st.guard);
          throw;  // Boost.Context unwinding this fiber: not the kernel's
        } catch (...) {
          if (!st.error) st.error = std::current_exception();
        }
        cpu_guard::disarm(*st.guard);
      }
    }
  ended:
    thread_exited(*f.block, f);
    suspend(f);
  }
}

std::unique_ptr<FiberThread> make_fiber_thread(State* s) {
  auto owned = std::make_unique<FiberThread>();
  FiberThread* f = owned.get();
  f->block = s;
  f->jump.stack.bytes = s->fiber_stack;
  f->self = ctx::fiber(std::allocator_arg, GuardedStack{s->fiber_stack, &f->jump.stack.low, &f->stack},
                       [f](ctx::fiber&& sched) {
                         after_switch(nullptr, &f->sched_bottom, &f->sched_size);
                         f->sched = std::move(sched);
                         fiber_main(*f);
                         before_switch(nullptr, f->sched_bottom, f->sched_size);
                         return std::move(f->sched);
                       });
  return owned;
}

// Lets each parked fiber leave its loop and return, so that its stack is freed cleanly
// (destroying a suspended fiber would unwind it with an exception instead).
void drop_fibers(State& s) {
  for (auto& f : s.threads) {
    if (!f->self) continue;
    f->quit = true;
    resume(*f);
  }
  s.threads.clear();
}

void run_loop(State& s, luda_cpu_thread t) {
  luda_cpu_thread** slot = s.kernel->current_slot();
  cpu_guard::JumpPoint jump;  // on the OS thread's own stack
  if (int why = sigsetjmp(jump.buf, 0)) {
    cpu_guard::disarm(*s.guard);
    *slot = nullptr;
    stopped(s, why);
    return;
  }
  cpu_guard::arm(*s.guard, &jump);
  if (s.kernel->run_block) {  // the kernel's own loop over the block's threads
    s.kernel->run_block(s.args, &t);
    cpu_guard::disarm(*s.guard);
    *slot = nullptr;
    return;
  }
  void (*run)(void* const*) = s.kernel->run_thread;
  void* const* args = s.args;
  unsigned lin = 0;
  for (unsigned z = 0; z < t.blockDim.z; ++z)
    for (unsigned y = 0; y < t.blockDim.y; ++y)
      for (unsigned x = 0; x < t.blockDim.x; ++x) {
        t.threadIdx = {x, y, z};
        t.lane = lin++ & (kWarpSize - 1);
        *slot = &t;
        run(args);
      }
  cpu_guard::disarm(*s.guard);
  *slot = nullptr;
}

// Every thread of the block that has not returned waits in grid_sync: wait for the other
// blocks, then let the block's threads go on; or abandon the block when the grid is.
void grid_wait(State& s) {
  if (!s.grid->arrive_and_wait()) {
    stopped(s, s.grid->interrupted() ? cpu_guard::kInterrupt : cpu_guard::kAbandon);
    return;
  }
  s.grid_arrived = 0;
  for (unsigned i = 0; i < s.count; ++i)
    if (s.threads[i]->wait == Wait::Grid) s.threads[i]->wait = Wait::None;
}

// Round-robin: each pass resumes every runnable thread once, and each runs until it
// waits or returns. A pass that resumes nobody while threads remain is a stall. A stop
// request, met at each pass, abandons the block: every thread is resumed to leave.
void run_fibers(State& s, const luda_cpu_thread& proto) {
  const unsigned n = s.count;
  while (s.threads.size() < n) s.threads.push_back(make_fiber_thread(&s));
  unsigned lin = 0;
  for (unsigned z = 0; z < proto.blockDim.z; ++z)
    for (unsigned y = 0; y < proto.blockDim.y; ++y)
      for (unsigned x = 0; x < proto.blockDim.x; ++x, ++lin) {
        FiberThread& f = *s.threads[lin];
        f.t = proto;
        f.t.threadIdx = {x, y, z};
        f.t.lane = lin % kWarpSize;
        f.wait = Wait::None;
        f.done = false;
      }
  const unsigned warps = (n + kWarpSize - 1) / kWarpSize;
  for (unsigned wi = 0; wi < warps; ++wi) {
    unsigned lanes = n - wi * kWarpSize;
    s.warps[wi].live = lanes >= kWarpSize ? ~0u : (1u << lanes) - 1;
    s.warps[wi].arrived = 0;
  }
  s.live = n;
  s.barrier_arrived = 0;
  s.grid_arrived = 0;
  luda_cpu_thread** slot = s.kernel->current_slot();
  while (s.live != 0) {
    if (detail::g_interrupt && !s.aborting) stopped(s, cpu_guard::kInterrupt);
    bool resumed = false;
    const bool abandon = s.aborting;  // then every thread is resumed, to leave
    for (unsigned i = 0; i < n; ++i) {
      FiberThread& f = *s.threads[i];
      if (f.done || (f.wait != Wait::None && !abandon)) continue;
      *slot = &f.t;  // the kernel reads its thread through the slot: set it every resume
      resume(f);
      resumed = true;
    }
    if (s.grid_arrived != 0 && s.grid_arrived == s.live && !s.aborting) grid_wait(s);
    else if (!resumed && s.live != 0) release_stalled(s);
  }
  *slot = nullptr;
}

}  // namespace

const luda_cpu_runtime* cpu_runtime() { return &kRuntime; }

bool CpuGridBarrier::arrive_and_wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (aborting_) return false;
  const unsigned long long generation = generation_;
  if (++arrived_ == live_) {  // the last block to arrive opens it
    arrived_ = 0;
    ++generation_;
    opened_.notify_all();
    return true;
  }
  // A stop request is met while waiting, as at a block barrier.
  while (generation_ == generation && !aborting_) {
    opened_.wait_for(lock, std::chrono::milliseconds(20));
    if (detail::g_interrupt && !aborting_) {
      aborting_ = interrupted_ = true;
      opened_.notify_all();
    }
  }
  return generation_ != generation;
}

void CpuGridBarrier::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  --live_;
  if (arrived_ != 0 && arrived_ == live_) {  // the blocks still running all wait
    arrived_ = 0;
    ++generation_;
    opened_.notify_all();
  }
}

void CpuGridBarrier::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborting_ = true;
  opened_.notify_all();
}

CpuBlockRunner::State::~State() {
  drop_fibers(*this);
  ::operator delete(shared, std::align_val_t(kSharedAlign));
}

CpuBlockRunner::CpuBlockRunner() : state_(std::make_unique<State>()) {}
CpuBlockRunner::~CpuBlockRunner() = default;

CpuBlockRunner& CpuBlockRunner::for_this_thread() {
  static thread_local CpuBlockRunner runner;
  return runner;
}

std::exception_ptr CpuBlockRunner::run(const CpuKernel& kernel, void* const* args, luda_cpu_dim3 block_idx,
                                       luda_cpu_dim3 block_dim, luda_cpu_dim3 grid_dim,
                                       std::size_t dynamic_shared_bytes, std::string_view who,
                                       CpuGridBarrier* grid) noexcept {
  State& s = *state_;
  s.grid = grid;
  try {
    if (!s.guard) s.guard = cpu_guard::this_thread().slot;
    if (dynamic_shared_bytes > s.shared_capacity || !s.shared) {
      std::size_t bytes = (dynamic_shared_bytes + kSharedAlign - 1) / kSharedAlign * kSharedAlign;
      if (bytes == 0) bytes = kSharedAlign;  // a valid address even for 0 bytes, as on a GPU
      void* p = ::operator new(bytes, std::align_val_t(kSharedAlign));
      ::operator delete(s.shared, std::align_val_t(kSharedAlign));
      s.shared = p;
      s.shared_capacity = bytes;
    }
    s.kernel = &kernel;
    s.who = who;
    s.args = args;
    s.fibers = kernel.needs_fibers;
    s.aborting = false;
    if (s.fibers) {
      std::size_t stack = kFiberStackBytes + kernel.local_bytes.value_or(kGpuLocalBytes);
      if (stack > s.fiber_stack) {  // the fibers made so far are too small for this kernel
        drop_fibers(s);
        s.fiber_stack = stack;
      }
    }
    s.count = block_dim.x * block_dim.y * block_dim.z;
    s.error = nullptr;
    s.misuse = nullptr;
    luda_cpu_thread proto{};
    proto.blockIdx = block_idx;
    proto.blockDim = block_dim;
    proto.gridDim = grid_dim;
    proto.dynamic_shared = s.shared;
    proto.dynamic_shared_bytes = dynamic_shared_bytes;
    proto.block = &s;
    cpu_guard::set_kernel(*s.guard, &kernel);
    if (s.fibers) run_fibers(s, proto);
    else run_loop(s, proto);
    cpu_guard::set_kernel(*s.guard, nullptr);
  } catch (...) {  // a loop-mode thread's exception, or a failed allocation
    if (s.guard) {
      cpu_guard::disarm(*s.guard);
      cpu_guard::set_kernel(*s.guard, nullptr);
    }
    if (!s.error) s.error = std::current_exception();
  }
  if (!s.error && s.misuse)
    s.error = std::make_exception_ptr(
        InternalError(fmt::format("internal error: a kernel called {} but is not marked as needing fibers "
                                  "(its <entry>_cpu_needs_fibers is 0)",
                                  s.misuse)));
  std::exception_ptr error = std::move(s.error);
  s.error = nullptr;
  return error;
}

}  // namespace luda

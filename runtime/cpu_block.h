// One block of a cpu launch, run on the calling OS thread: every CUDA thread of a block
// shares that OS thread, because a kernel's static __shared__ arrays are `static
// thread_local` (runtime/cpu_abi.h).
//
// Without barriers or warp operations the threads run as a loop. With them, each CUDA
// thread is a fiber and a round-robin scheduler resumes the runnable ones; syncthreads,
// syncwarp, shfl and ballot suspend the caller until the threads they name have arrived.
//
// Where CUDA leaves the result undefined, the executor picks an answer that cannot hang:
// a thread that returns stops counting for barriers and warp masks (a barrier every
// remaining thread has reached opens); when every remaining thread waits and none can be
// released (threads at different barriers), the block barrier opens, else one waiting
// warp group completes with the lanes that arrived; a shuffle whose source lane is not
// in the exchange returns the caller's own value.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string_view>

#include "runtime/cpu_abi.h"

namespace luda {

struct CpuKernel;

// The grid barrier of a cooperative launch: every block of the grid runs at once, each on
// its own OS thread, and a block arrives when each of its threads that has not returned
// waits in grid_sync. A block that ends leaves it (it stops counting, as a returned thread
// does for a block barrier); an error in one block lets every other block go, to end.
class CpuGridBarrier {
 public:
  explicit CpuGridBarrier(unsigned long long blocks) : live_(blocks) {}
  // Waits until every block still running has arrived. False when the grid is being
  // abandoned (abort, or a stop request, which it meets while it waits).
  bool arrive_and_wait();
  void leave();  // a block ended
  void abort();  // a block failed: the others stop waiting
  bool interrupted() const { return interrupted_; }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  unsigned long long live_, arrived_ = 0, generation_ = 0;
  bool aborting_ = false, interrupted_ = false;
};

// The per-OS-thread state that blocks reuse: the fibers with their stacks, the dynamic
// shared memory. Not thread-safe: one per OS thread (for_this_thread).
class CpuBlockRunner {
 public:
  CpuBlockRunner();
  ~CpuBlockRunner();
  CpuBlockRunner(const CpuBlockRunner&) = delete;
  CpuBlockRunner& operator=(const CpuBlockRunner&) = delete;

  // Runs every thread of block `block_idx` to its end. Returns the first exception a
  // thread's code threw, or an InternalError when the kernel broke the ABI's contract;
  // null when the block ran cleanly. Never throws (a failed allocation is returned too).
  // A fault, a stop request or a fail() in its code (cpu_guard.h) ends the block with an
  // error naming the kernel by `who`; the runner stays usable. `grid`: the barrier of a
  // cooperative launch, which grid_sync waits at (null otherwise).
  std::exception_ptr run(const CpuKernel& kernel, void* const* args, luda_cpu_dim3 block_idx, luda_cpu_dim3 block_dim,
                         luda_cpu_dim3 grid_dim, std::size_t dynamic_shared_bytes, std::string_view who,
                         CpuGridBarrier* grid = nullptr) noexcept;

  // This OS thread's runner, made at first use and destroyed when the thread exits.
  static CpuBlockRunner& for_this_thread();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace luda

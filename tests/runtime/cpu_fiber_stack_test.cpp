// The cpu executor's fibers under AddressSanitizer (the LUDA_SANITIZE build): a kernel
// thread that throws from deep inside frames with stack arrays leaves their redzones
// poisoned unless the sanitizer, told of every fiber switch, clears the fiber's stack as
// the exception leaves it. The next kernel on the same fibers then writes an array of its
// own over that memory, an access that must not be reported. Without the sanitizer the
// test checks the values alone.
#include "runtime/cpu_executor.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <string>
#include <vector>

#include "runtime/cpu_guard.h"
#include "runtime/error.h"

#ifdef LUDA_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace luda {
namespace {

thread_local luda_cpu_thread* g_current = nullptr;
luda_cpu_thread** current_slot() { return &g_current; }
unsigned global_tid() {
  const luda_cpu_thread& t = *g_current;
  return t.blockIdx.x * t.blockDim.x + t.threadIdx.x;
}

LaunchConfig blocks_of(long long blocks, long long threads) {
  LaunchConfig c;
  c.grid = {blocks, 1, 1, 1};
  c.block = {threads, 1, 1, 1};
  return c;
}

[[gnu::noinline]] int deep_then_throw(int depth) {
  volatile char pad[200];  // a stack array, with redzones around it under ASan
  pad[depth] = static_cast<char>(depth);
  if (depth == 0) throw Error("thrown from a fiber");
  return deep_then_throw(depth - 1) + pad[depth];
}

void throwing(void* const*) {
  cpu_runtime()->syncthreads(g_current);  // a barrier: the block runs as fibers
  deep_then_throw(24);
}

// Launches `throwing` and returns the error it ended with.
std::string launch_throwing(long long blocks, long long threads, bool cooperative) {
  try {
    CpuKernel thrower;
    thrower.run_thread = throwing;
    thrower.current_slot = &current_slot;
    thrower.needs_fibers = true;
    thrower.cooperative = cooperative;
    cpu_launch(thrower, blocks_of(blocks, threads), nullptr);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

[[gnu::noinline]] long long wide_array_sum() {
  volatile unsigned char big[16384];
  for (unsigned i = 0; i < sizeof big; ++i) big[i] = static_cast<unsigned char>(i);
  long long s = 0;
  for (unsigned i = 0; i < sizeof big; ++i) s += big[i];
  return s;
}

void summing(void* const* args) {
  cpu_runtime()->syncthreads(g_current);
  (*static_cast<long long**>(args[0]))[global_tid()] = wide_array_sum();
}

TEST(CpuFiberStack, AThrowLeavesTheFiberStackCleanForTheNextKernel) {
  // Many blocks, so that every pool thread's fibers run both kernels.
  const long long blocks = 64, threads = 32;
  EXPECT_EQ("thrown from a fiber", launch_throwing(blocks, threads, false));

  std::vector<long long> sums(static_cast<std::size_t>(blocks * threads), 0);
  long long* out = sums.data();
  void* args[] = {&out};
  CpuKernel summer;
  summer.run_thread = summing;
  summer.current_slot = &current_slot;
  summer.needs_fibers = true;
  cpu_launch(summer, blocks_of(blocks, threads), args);
  const long long want = 16384 / 256 * (255 * 256 / 2);
  for (std::size_t i = 0; i < sums.size(); ++i) ASSERT_EQ(want, sums[i]) << "thread " << i;
}

// The stacks of a cooperative grid's fibers and its blocks' OS threads (their signal
// stacks) are unmapped when the launch ends. Memory mapped next at those addresses, by
// any library (NVRTC's arenas, a plain mmap), must carry none of their frames' poison.
TEST(CpuFiberStack, UnmappedStacksLeaveNoPoisonForTheNextMapping) {
  EXPECT_EQ("thrown from a fiber", launch_throwing(8, 32, true));
#ifdef LUDA_ASAN
  // A stack left with a frame's redzone poisoned, as a longjmp leaves one.
  const std::size_t bytes = std::size_t{1} << 20;
  void* stack = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(MAP_FAILED, stack);
  __asan_poison_memory_region(static_cast<char*>(stack) + 4096, 64);
  cpu_guard::unmap_stack(stack, bytes);
  EXPECT_EQ(nullptr, __asan_region_is_poisoned(stack, bytes));
  // Fresh mappings of the fibers' size land where their stacks were; none is poisoned.
  const std::size_t fiber = (640 + 4) * 1024;
  std::vector<void*> fresh;
  for (int i = 0; i < 64; ++i) {
    void* p = mmap(nullptr, fiber, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) break;
    fresh.push_back(p);
  }
  ASSERT_FALSE(fresh.empty());
  for (void* p : fresh) EXPECT_EQ(nullptr, __asan_region_is_poisoned(p, fiber)) << p;
  for (void* p : fresh) munmap(p, fiber);
#endif
}

}  // namespace
}  // namespace luda

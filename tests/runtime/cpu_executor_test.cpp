// The cpu executor with hand-written kernels that use runtime/cpu_abi.h exactly as
// host-compiled kernels do: a thread_local current slot read through the kernel's own
// accessor, static __shared__ arrays as `static thread_local`, and every barrier and warp
// operation a call through cpu_runtime().
#include "runtime/cpu_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace luda {
namespace {

// --- what a compiled kernel's prelude provides ----------------------------------------

thread_local luda_cpu_thread* g_current = nullptr;
luda_cpu_thread** current_slot() { return &g_current; }
const luda_cpu_runtime* rt() { return cpu_runtime(); }
luda_cpu_thread& me() { return *g_current; }
unsigned linear_tid() {
  const luda_cpu_thread& t = me();
  return t.threadIdx.x + t.blockDim.x * (t.threadIdx.y + t.blockDim.y * t.threadIdx.z);
}
unsigned block_threads() { return me().blockDim.x * me().blockDim.y * me().blockDim.z; }
unsigned linear_block() {
  const luda_cpu_thread& t = me();
  return t.blockIdx.x + t.gridDim.x * (t.blockIdx.y + t.gridDim.y * t.blockIdx.z);
}
unsigned global_tid() { return linear_block() * block_threads() + linear_tid(); }
template <class T>
T& arg(void* const* args, int i) {
  return *static_cast<T*>(args[i]);
}

CpuKernel kernel(void (*f)(void* const*), bool fibers) {
  CpuKernel k;
  k.run_thread = f;
  k.current_slot = &current_slot;
  k.needs_fibers = fibers;
  return k;
}

// What the prelude's <entry>_cpu_block does: the block's threads in order, x fastest.
template <void (*Body)(void* const*)>
void block_entry(void* const* args, luda_cpu_thread* t) {
  g_current = t;
  unsigned lin = 0;
  const luda_cpu_dim3 d = t->blockDim;
  for (unsigned z = 0; z < d.z; ++z)
    for (unsigned y = 0; y < d.y; ++y)
      for (unsigned x = 0; x < d.x; ++x) {
        t->threadIdx = {x, y, z};
        t->lane = lin++ & 31;
        Body(args);
      }
}

Dim3 dims(long long x) { return {x, 1, 1, 1}; }
Dim3 dims(long long x, long long y) { return {x, y, 1, 2}; }
Dim3 dims(long long x, long long y, long long z) { return {x, y, z, 3}; }

LaunchConfig config(Dim3 grid, Dim3 block, unsigned shared = 0) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.shared_mem = shared;
  return c;
}

std::string launch_error(const CpuKernel& k, const LaunchConfig& c, void* const* args) {
  try {
    cpu_launch(k, c, args);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// --- loop mode --------------------------------------------------------------------------

void saxpy(void* const* args) {  // z[i] = x[i] * w + b
  const float* x = arg<const float*>(args, 0);
  float w = arg<float>(args, 1), b = arg<float>(args, 2);
  float* z = arg<float*>(args, 3);
  long long n = arg<long long>(args, 4);
  long long i = static_cast<long long>(me().blockIdx.x) * me().blockDim.x + me().threadIdx.x;
  if (i < n) z[i] = x[i] * w + b;
}

TEST(CpuExecutor, LoopModeComputesEveryElement) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-10, 10);
  const long long n = 100003;  // not a multiple of the block
  std::vector<float> x(n), z(n, -1.0f);
  for (auto& v : x) v = u(rng);
  const float* xp = x.data();
  float* zp = z.data();
  float w = 1.5f, b = -0.25f;
  long long nn = n;
  void* args[] = {&xp, &w, &b, &zp, &nn};
  cpu_launch(kernel(saxpy, false), config(dims((n + 255) / 256), dims(256)), args);
  for (long long i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] * w + b) << i;
}

// Each thread records what it sees; every (block, thread) must appear exactly once.
struct Seen {
  luda_cpu_dim3 tid, bid, bdim, gdim;
  unsigned lane;
  unsigned long long shared_bytes;
  bool shared_aligned;
};

void record(void* const* args) {
  Seen* out = arg<Seen*>(args, 0);
  const luda_cpu_thread& t = me();
  out[global_tid()] = {t.threadIdx,
                       t.blockIdx,
                       t.blockDim,
                       t.gridDim,
                       t.lane,
                       t.dynamic_shared_bytes,
                       reinterpret_cast<std::uintptr_t>(t.dynamic_shared) % 16 == 0};
}

void record_with_barrier(void* const* args) {
  rt()->syncthreads(&me());
  record(args);
}

bool same(luda_cpu_dim3 a, luda_cpu_dim3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

TEST(CpuExecutor, IndexVariablesFor1D2D3DGridsAndBlocks) {
  struct Case {
    Dim3 grid, block;
  };
  const Case cases[] = {{dims(7), dims(33)},
                        {dims(3, 5), dims(8, 4)},
                        {dims(2, 3, 4), dims(4, 3, 5)},
                        {dims(1, 1, 3), dims(1, 70)}};
  CpuKernel with_block_entry = kernel(record, false);
  with_block_entry.run_block = block_entry<record>;
  const CpuKernel kernels[] = {kernel(record, false), with_block_entry, kernel(record_with_barrier, true)};
  for (const CpuKernel& k : kernels)
    for (const Case& c : cases) {
      SCOPED_TRACE(fmt::format("grid {} block {} fibers {} block entry {}", c.grid.str(), c.block.str(), k.needs_fibers,
                               k.run_block != nullptr));
      const long long total = c.grid.count() * c.block.count();
      std::vector<Seen> seen(total);
      Seen* p = seen.data();
      void* args[] = {&p};
      cpu_launch(k, config(c.grid, c.block, 24), args);
      long long i = 0;
      for (unsigned bz = 0; bz < c.grid.z; ++bz)
        for (unsigned by = 0; by < c.grid.y; ++by)
          for (unsigned bx = 0; bx < c.grid.x; ++bx)
            for (unsigned tz = 0; tz < c.block.z; ++tz)
              for (unsigned ty = 0; ty < c.block.y; ++ty)
                for (unsigned tx = 0; tx < c.block.x; ++tx, ++i) {
                  const Seen& s = seen[i];
                  ASSERT_TRUE(same(s.tid, {tx, ty, tz})) << i;
                  ASSERT_TRUE(same(s.bid, {bx, by, bz})) << i;
                  ASSERT_TRUE(same(s.bdim, {unsigned(c.block.x), unsigned(c.block.y), unsigned(c.block.z)}));
                  ASSERT_TRUE(same(s.gdim, {unsigned(c.grid.x), unsigned(c.grid.y), unsigned(c.grid.z)}));
                  ASSERT_EQ(s.lane, (tx + c.block.x * (ty + c.block.y * tz)) % 32) << i;
                  ASSERT_EQ(s.shared_bytes, 24u);
                  ASSERT_TRUE(s.shared_aligned);
                }
    }
}

// --- shared memory and barriers ----------------------------------------------------------

// Each thread writes its value into dynamic shared memory; after the barrier it reads its
// neighbour's. Blocks run concurrently on the pool, so a shared buffer that leaked
// between blocks would give another block's values.
void rotate_through_dynamic_shared(void* const* args) {
  const long long* in = arg<const long long*>(args, 0);
  long long* out = arg<long long*>(args, 1);
  long long* sh = static_cast<long long*>(me().dynamic_shared);
  unsigned n = block_threads(), t = linear_tid();
  sh[t] = in[global_tid()];
  rt()->syncthreads(&me());
  long long v = sh[(t + 1) % n];
  rt()->syncthreads(&me());
  sh[t] = v * 3;  // a second phase through the same memory
  rt()->syncthreads(&me());
  out[global_tid()] = sh[(t + n - 1) % n];
}

TEST(CpuExecutor, DynamicSharedMemoryIsPerBlock) {
  const unsigned blocks = 300, threads = 96;
  std::mt19937_64 rng(2);
  std::vector<long long> in(blocks * threads), out(blocks * threads, 0);
  for (auto& v : in) v = static_cast<long long>(rng() >> 8);
  const long long* ip = in.data();
  long long* op = out.data();
  void* args[] = {&ip, &op};
  cpu_launch(kernel(rotate_through_dynamic_shared, true),
             config(dims(blocks), dims(threads), threads * sizeof(long long)), args);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) ASSERT_EQ(out[b * threads + t], in[b * threads + t] * 3) << b << " " << t;
}

// A tree reduction through a static __shared__ array, as the cpu prelude compiles one.
void block_sum(void* const* args) {
  static thread_local long long partial[256];
  const long long* in = arg<const long long*>(args, 0);
  long long* sums = arg<long long*>(args, 1);
  unsigned t = linear_tid();
  partial[t] = in[global_tid()];
  rt()->syncthreads(&me());
  for (unsigned stride = block_threads() / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    rt()->syncthreads(&me());
  }
  if (t == 0) sums[linear_block()] = partial[0];
}

std::vector<long long> reference_block_sums(const std::vector<long long>& in, unsigned threads) {
  std::vector<long long> sums(in.size() / threads, 0);
  for (std::size_t i = 0; i < in.size(); ++i) sums[i / threads] += in[i];
  return sums;
}

TEST(CpuExecutor, BlockReductionWithBarriersOverManyBlocks) {
  const unsigned blocks = 2000, threads = 256;
  std::mt19937_64 rng(3);
  std::vector<long long> in(blocks * threads), sums(blocks, 0);
  for (auto& v : in) v = static_cast<long long>(rng() % 2000001) - 1000000;
  const long long* ip = in.data();
  long long* sp = sums.data();
  void* args[] = {&ip, &sp};
  cpu_launch(kernel(block_sum, true), config(dims(blocks), dims(threads)), args);
  EXPECT_EQ(sums, reference_block_sums(in, threads));
}

TEST(CpuExecutor, LaunchesFromSeveralHostThreadsAtOnce) {
  const unsigned blocks = 400, threads = 256, launches = 4;
  std::vector<std::vector<long long>> ins(launches), sums(launches);
  for (unsigned l = 0; l < launches; ++l) {
    std::mt19937_64 rng(10 + l);
    ins[l].resize(blocks * threads);
    for (auto& v : ins[l]) v = static_cast<long long>(rng() % 1000);
    sums[l].assign(blocks, 0);
  }
  std::vector<std::thread> hosts;
  for (unsigned l = 0; l < launches; ++l)
    hosts.emplace_back([&, l] {
      for (int repeat = 0; repeat < 5; ++repeat) {
        const long long* ip = ins[l].data();
        long long* sp = sums[l].data();
        void* args[] = {&ip, &sp};
        cpu_launch(kernel(block_sum, true), config(dims(blocks), dims(threads)), args);
      }
    });
  for (auto& h : hosts) h.join();
  for (unsigned l = 0; l < launches; ++l) EXPECT_EQ(sums[l], reference_block_sums(ins[l], threads));
}

// Threads with tid % 3 == 0 return at once; the others pass two barriers and read what
// the others wrote between them. No deadlock, and the values of the remaining threads.
void early_return(void* const* args) {
  static thread_local int slots[128];
  int* out = arg<int*>(args, 0);
  unsigned t = linear_tid();
  if (t % 3 == 0) return;
  slots[t] = static_cast<int>(t * 7);
  rt()->syncthreads(&me());
  int neighbour = (t + 1) % 3 == 0 ? -1 : slots[t + 1 < block_threads() ? t + 1 : t];
  rt()->syncthreads(&me());
  out[global_tid()] = neighbour;
}

TEST(CpuExecutor, ThreadReturningWhileOthersWaitAtABarrierDoesNotDeadlock) {
  const unsigned blocks = 20, threads = 100;
  std::vector<int> out(blocks * threads, -2);
  int* op = out.data();
  void* args[] = {&op};
  cpu_launch(kernel(early_return, true), config(dims(blocks), dims(threads)), args);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      int expected = t % 3 == 0 ? -2 : (t + 1) % 3 == 0 ? -1 : int((t + 1 < threads ? t + 1 : t) * 7);
      ASSERT_EQ(out[b * threads + t], expected) << b << " " << t;
    }
}

// Half of a warp waits in a full-mask shuffle while the other half waits at syncthreads
// (undefined in CUDA): the executor releases the barrier rather than hang, the barrier
// half returns, and the shuffle completes among the lanes that remain.
void divergent_barriers(void* const* args) {
  unsigned long long* out = arg<unsigned long long*>(args, 0);
  unsigned t = linear_tid();
  if (t < 16) out[t] = rt()->shfl(&me(), 0xffffffffu, 100 + t, 2 /*down*/, 1, 32);
  else rt()->syncthreads(&me());
}

TEST(CpuExecutor, DivergentBarriersDoNotDeadlock) {
  std::vector<unsigned long long> out(32, 0);
  unsigned long long* op = out.data();
  void* args[] = {&op};
  cpu_launch(kernel(divergent_barriers, true), config(dims(1), dims(32)), args);
  for (unsigned t = 0; t < 15; ++t) EXPECT_EQ(out[t], 100 + t + 1) << t;
  EXPECT_EQ(out[15], 115u);  // its source, lane 16, left: it reads its own value
}

// --- warp operations ---------------------------------------------------------------------

// The source lane of a shuffle as CUDA's programming guide defines it; -1 for "the
// caller's own value".
int reference_source(int lane, int mode, int arg, int width) {
  int first = lane / width * width;
  switch (mode) {
    case 0: return first + ((arg % width) + width) % width;       // srcLane modulo width
    case 1: return lane - arg >= first ? lane - arg : -1;         // up: stays in the segment
    case 2: return lane + arg < first + width ? lane + arg : -1;  // down: stays in the segment
    default: {
      int j = lane ^ arg;  // xor: a later segment gives the caller's own value
      return j < first + width ? j : -1;
    }
  }
}

// Lanes in masks[0] shuffle among themselves while the others shuffle with masks[1]:
// two groups of one warp exchange independently, as divergent branches do on a GPU.
void shuffle_kernel(void* const* args) {
  const unsigned long long* in = arg<const unsigned long long*>(args, 0);
  const int* lane_args = arg<const int*>(args, 1);
  unsigned long long* out = arg<unsigned long long*>(args, 2);
  int mode = arg<int>(args, 3), width = arg<int>(args, 4);
  unsigned mask = arg<unsigned>(args, 5);
  unsigned g = global_tid();
  unsigned my_mask = (mask >> me().lane & 1u) ? mask : ~mask;
  out[g] = rt()->shfl(&me(), my_mask, in[g], mode, lane_args[g], width);
}

TEST(CpuExecutor, ShufflesMatchCudaForEveryModeWidthAndMask) {
  const unsigned blocks = 3, threads = 64, n = blocks * threads;
  std::mt19937_64 rng(4);
  std::vector<unsigned long long> in(n);
  for (auto& v : in) v = rng();
  const unsigned masks[] = {0xffffffffu, 0x0000ffffu, 0xaaaaaaaau, 0x0ff0f00fu};
  long long checked = 0;
  for (unsigned mask : masks)
    for (int mode = 0; mode < 4; ++mode)
      for (int width : {32, 16, 8})
        // up/down/xor: an offset inside the segment, then one that may leave it.
        for (int offset : {static_cast<int>(rng() % width), static_cast<int>(rng() % 32)}) {
          SCOPED_TRACE(fmt::format("mask {:#x} mode {} width {} offset {}", mask, mode, width, offset));
          std::vector<int> lane_args(n);
          for (auto& a : lane_args) a = mode == 0 ? static_cast<int>(rng() % 64) : offset;
          std::vector<unsigned long long> out(n, 0);
          const unsigned long long* ip = in.data();
          const int* ap = lane_args.data();
          unsigned long long* op = out.data();
          void* args[] = {&ip, &ap, &op, &mode, &width, &mask};
          cpu_launch(kernel(shuffle_kernel, true), config(dims(blocks), dims(threads)), args);
          for (unsigned g = 0; g < n; ++g) {
            int lane = static_cast<int>(g % 32);
            unsigned group = (mask >> lane & 1u) ? mask : ~mask;
            int src = reference_source(lane, mode, lane_args[g], width);
            if (src >= 0 && !(group >> src & 1u)) continue;  // outside the group: undefined
            unsigned long long expected = src < 0 ? in[g] : in[g - lane + src];
            ASSERT_EQ(out[g], expected) << "thread " << g << " source " << src;
            ++checked;
          }
        }
  // Most lanes have a defined result: the check above is not vacuous.
  EXPECT_GT(checked, 4 * 4 * 3 * 2 * static_cast<long long>(n) / 2);
}

void ballot_kernel(void* const* args) {
  const int* pred = arg<const int*>(args, 0);
  unsigned* out = arg<unsigned*>(args, 1);
  unsigned mask = arg<unsigned>(args, 2);
  unsigned g = global_tid();
  unsigned my_mask = (mask >> me().lane & 1u) ? mask : ~mask;
  out[g] = rt()->ballot(&me(), my_mask, pred[g]);
}

TEST(CpuExecutor, BallotWithFullAndPartialMasks) {
  const unsigned blocks = 4, threads = 96, n = blocks * threads;
  std::mt19937 rng(5);
  for (unsigned mask : {0xffffffffu, 0x0000ffffu, 0x55555555u, 0x1234abcdu}) {
    std::vector<int> pred(n);
    for (auto& p : pred) p = static_cast<int>(rng() % 3) - 1;  // -1, 0, 1: nonzero is true
    std::vector<unsigned> out(n, 0);
    const int* pp = pred.data();
    unsigned* op = out.data();
    void* args[] = {&pp, &op, &mask};
    cpu_launch(kernel(ballot_kernel, true), config(dims(blocks), dims(threads)), args);
    for (unsigned g = 0; g < n; ++g) {
      unsigned lane = g % 32, group = (mask >> lane & 1u) ? mask : ~mask;
      unsigned expected = 0;
      for (unsigned l = 0; l < 32; ++l)
        if ((group >> l & 1u) && pred[g - lane + l] != 0) expected |= 1u << l;
      ASSERT_EQ(out[g], expected) << fmt::format("mask {:#x} thread {}", mask, g);
    }
  }
}

// syncwarp orders a warp's shared-memory writes before its reads, within the mask.
void syncwarp_kernel(void* const* args) {
  static thread_local unsigned slots[64];
  unsigned* out = arg<unsigned*>(args, 0);
  unsigned mask = arg<unsigned>(args, 1);
  unsigned t = linear_tid(), lane = me().lane;
  unsigned my_mask = (mask >> lane & 1u) ? mask : ~mask;
  slots[t] = t * 11 + linear_block();
  rt()->syncwarp(&me(), my_mask);
  // the next lane of my group, cyclically
  unsigned next = lane;
  do next = (next + 1) % 32;
  while (!(my_mask >> next & 1u));
  out[global_tid()] = slots[t - lane + next];
}

TEST(CpuExecutor, SyncwarpWithPartialMasks) {
  const unsigned blocks = 5, threads = 64;
  for (unsigned mask : {0xffffffffu, 0x000000ffu, 0x9249f00du}) {
    std::vector<unsigned> out(blocks * threads, 0);
    unsigned* op = out.data();
    void* args[] = {&op, &mask};
    cpu_launch(kernel(syncwarp_kernel, true), config(dims(blocks), dims(threads)), args);
    for (unsigned b = 0; b < blocks; ++b)
      for (unsigned t = 0; t < threads; ++t) {
        unsigned lane = t % 32, group = (mask >> lane & 1u) ? mask : ~mask, next = lane;
        do next = (next + 1) % 32;
        while (!(group >> next & 1u));
        ASSERT_EQ(out[b * threads + t], (t - lane + next) * 11 + b) << b << " " << t;
      }
  }
}

// A warp reduction by shfl down, as block_sum.lua does; the lanes past 20 return first.
void warp_sum_after_exits(void* const* args) {
  const unsigned long long* in = arg<const unsigned long long*>(args, 0);
  unsigned long long* out = arg<unsigned long long*>(args, 1);
  unsigned lane = me().lane;
  if (lane >= 20) return;
  unsigned long long v = in[global_tid()];
  for (int offset = 16; offset > 0; offset /= 2) v += rt()->shfl(&me(), 0xffffffffu, v, 2, offset, 32);
  out[global_tid()] = v;
}

TEST(CpuExecutor, WarpShuffleCompletesAmongTheLanesThatRemain) {
  std::vector<unsigned long long> in(64), out(64, 0);
  std::mt19937_64 rng(6);
  for (auto& v : in) v = rng() % 1000;
  const unsigned long long* ip = in.data();
  unsigned long long* op = out.data();
  void* args[] = {&ip, &op};
  cpu_launch(kernel(warp_sum_after_exits, true), config(dims(1), dims(64)), args);
  // Reference: the same steps, a returned lane's source gives the reader's own value.
  for (unsigned w = 0; w < 2; ++w) {
    std::vector<unsigned long long> v(in.begin() + w * 32, in.begin() + w * 32 + 20);
    for (int offset = 16; offset > 0; offset /= 2) {
      std::vector<unsigned long long> next = v;
      for (unsigned l = 0; l < 20; ++l) next[l] += l + offset < 20 ? v[l + offset] : v[l];
      v = next;
    }
    for (unsigned l = 0; l < 20; ++l) EXPECT_EQ(out[w * 32 + l], v[l]) << w << " " << l;
  }
}

// --- print, errors ------------------------------------------------------------------------

void print_kernel(void* const*) {
  char text[96];
  int n = std::snprintf(text, sizeof text, "block %u thread %u says hello to everyone here\n", linear_block(),
                        linear_tid());
  rt()->print(text, static_cast<unsigned long long>(n));
  rt()->syncthreads(&me());
}

TEST(CpuExecutor, PrintWritesEachCallInOnePiece) {
  const unsigned blocks = 64, threads = 64;
  testing::internal::CaptureStdout();
  cpu_launch(kernel(print_kernel, true), config(dims(blocks), dims(threads)), nullptr);
  std::fflush(stdout);
  std::string text = testing::internal::GetCapturedStdout();
  std::istringstream lines(text);
  std::set<std::string> seen;
  for (std::string line; std::getline(lines, line);) seen.insert(line);
  ASSERT_EQ(seen.size(), blocks * threads);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t)
      ASSERT_TRUE(seen.count(fmt::format("block {} thread {} says hello to everyone here", b, t))) << b << " " << t;
}

// After a launch that failed: the pool and this thread's runner still work.
void expect_still_works(bool fibers) {
  std::vector<Seen> seen(2 * 32);
  Seen* sp = seen.data();
  void* record_args[] = {&sp};
  cpu_launch(kernel(record, fibers), config(dims(2), dims(32)), record_args);
  EXPECT_EQ(seen[63].lane, 31u);
  EXPECT_EQ(seen[63].bid.x, 1u);
}

// --- containment (cpu_guard.h) -------------------------------------------------------------

// Thread 77 faults or fails; with `fibers` the others wait at barriers meanwhile. Never
// instrumented, as the host compiler builds kernels: a sanitizer build would stop at the
// null store itself, before the fault that the executor contains.
__attribute__((no_sanitize("address", "undefined"))) void faulting_kernel(void* const* args) {
  int how = arg<int>(args, 0);
  if (arg<bool>(args, 1)) rt()->syncthreads(&me());
  if (global_tid() == 77) {
    if (how == 0) *static_cast<volatile int*>(arg<int*>(args, 2)) = 1;  // a null pointer
    if (how == 1) rt()->fail(&me(), "called exit(3)");
  }
  if (arg<bool>(args, 1)) rt()->syncthreads(&me());
}

TEST(CpuExecutor, FaultsAndFailuresEndTheLaunchNotTheProcess) {
  for (bool fibers : {false, true}) {
    int* null = nullptr;
    int how = 0;
    void* args[] = {&how, &fibers, &null};
    EXPECT_EQ(launch_error(kernel(faulting_kernel, fibers), config(dims(64), dims(32)), args),
              "kernel crashed on the cpu device: invalid memory access at address 0x0 (SIGSEGV): a null or wild "
              "pointer, or an index out of range with bounds checks off. luda stopped the kernel, but what it "
              "wrote before the fault may have corrupted this process's memory")
        << fibers;
    how = 1;
    try {
      cpu_launch(kernel(faulting_kernel, fibers), config(dims(64), dims(32)), args, "raw_kernel 'k'");
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "raw_kernel 'k' called exit(3)");
    }
    expect_still_works(fibers);
  }
}

// A block that ends, in a grid too large to finish; and a block whose threads meet at a
// barrier forever: a stop request made from another thread ends either launch.
void short_block(void* const*) {}
void barrier_forever(void* const*) {
  for (;;) rt()->syncthreads(&me());
}

TEST(CpuExecutor, AStopRequestEndsTheLaunchBetweenBlocksAndAtBarriers) {
  using Body = void (*)(void* const*);
  for (auto [body, fibers] :
       {std::pair<Body, bool>{short_block, false}, std::pair<Body, bool>{barrier_forever, true}}) {
    std::thread stopper([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      request_interrupt();
    });
    try {
      cpu_launch(kernel(body, fibers), config(dims(2147483647), dims(64)), nullptr, "kernel 'k'");
      ADD_FAILURE() << "no error";
    } catch (const Interrupted& e) {
      EXPECT_STREQ(e.what(), "kernel 'k' was interrupted; the arrays it was writing may hold partial results");
    }
    stopper.join();
    EXPECT_FALSE(interrupt_requested());  // the launch that met it consumed it
  }
  // A request that no launch met waits for the next one.
  request_interrupt();
  EXPECT_THROW(cpu_launch(kernel(short_block, false), config(dims(4), dims(4)), nullptr), Interrupted);
  EXPECT_FALSE(interrupt_requested());
  cpu_launch(kernel(short_block, false), config(dims(4), dims(4)), nullptr);
}

void throwing_kernel(void* const* args) {
  int* ran = arg<int*>(args, 0);
  if (arg<bool>(args, 1)) rt()->syncthreads(&me());
  if (global_tid() == 77) throw Error("thread 77 failed");
  ran[global_tid()] = 1;
}

TEST(CpuExecutor, ExceptionFromAThreadReachesTheCaller) {
  for (bool fibers : {false, true}) {
    std::vector<int> ran(64 * 32, 0);
    int* rp = ran.data();
    void* args[] = {&rp, &fibers};
    EXPECT_EQ(launch_error(kernel(throwing_kernel, fibers), config(dims(64), dims(32)), args), "thread 77 failed");
    expect_still_works(fibers);
  }
}

void loop_kernel_calling_syncthreads(void* const*) { rt()->syncthreads(&me()); }

TEST(CpuExecutor, BarrierInAKernelNotMarkedForFibersIsAnInternalError) {
  EXPECT_EQ(launch_error(kernel(loop_kernel_calling_syncthreads, false), config(dims(2), dims(8)), nullptr),
            "internal error: a kernel called syncthreads but is not marked as needing fibers "
            "(its <entry>_cpu_needs_fibers is 0)");
}

TEST(CpuExecutor, LaunchConfigErrors) {
  CpuKernel k = kernel(saxpy, false);
  EXPECT_EQ(launch_error(k, config(dims(0), dims(32)), nullptr),
            "grid dimension x is 0: each grid and block dimension must be at least 1");
  EXPECT_EQ(launch_error(k, config(dims(4), dims(8, -1)), nullptr),
            "block dimension y is -1: each grid and block dimension must be at least 1");
  EXPECT_EQ(launch_error(k, config(dims(4), dims(2048)), nullptr),
            "block of (2048,) has 2048 threads; cpu allows at most 1024 per block");
  EXPECT_EQ(launch_error(k, config(dims(4), dims(1, 1, 65)), nullptr),
            "block dimension z is 65; cpu allows at most 64 in z");
  EXPECT_EQ(launch_error(k, config(dims(4, 70000), dims(32)), nullptr),
            "grid dimension y is 70000; cpu allows at most 65535 in y");
  EXPECT_EQ(launch_error(k, config(dims(4), dims(32), 300000), nullptr),
            "dynamic shared memory of 300000 bytes (293.0 KiB) is more than cpu allows per "
            "block (232448 bytes)");
}

TEST(CpuExecutor, ThreadCountFromTheEnvironment) {
  EXPECT_EQ(cpu_threads_from_env("3"), 3u);
  EXPECT_GE(cpu_threads_from_env(nullptr), 1u);
  EXPECT_GE(cpu_threads_from_env(""), 1u);
  for (const char* bad : {"abc", "0", "-2", "4x", "5000"}) {
    try {
      cpu_threads_from_env(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), fmt::format("LUDA_CPU_THREADS is '{}': expected a whole number of threads "
                                                   "from 1 to 1024",
                                                   bad));
    }
  }
  EXPECT_GE(cpu_thread_count(), 1u);
}

// --- speed (asserted in optimized builds only) -----------------------------------------

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// z = x*w + b over 16Mi float32, the cpu target's benchmark, next to the plain loop.
TEST(CpuExecutor, LoopModeSpeed16MiThreads) {
  const long long n = 16ll << 20;
  std::vector<float> x(n), z(n, 0), plain(n, 0);
  std::mt19937 rng(8);
  for (auto& v : x) v = static_cast<float>(rng() % 1000) * 0.25f;
  const float* xp = x.data();
  float* zp = z.data();
  float w = 1.5f, b = 0.5f;
  long long nn = n;
  void* args[] = {&xp, &w, &b, &zp, &nn};
  CpuKernel k = kernel(saxpy, false);
  cpu_launch(k, config(dims(n / 256), dims(256)), args);  // warm: pool, pages
  // The best of three of each: a machine busy with other work slows single runs.
  double s = 1e9, loop = 1e9;
  for (int trial = 0; trial < 3; ++trial) {
    auto start = std::chrono::steady_clock::now();
    cpu_launch(k, config(dims(n / 256), dims(256)), args);
    s = std::min(s, seconds_since(start));
    start = std::chrono::steady_clock::now();
    for (long long i = 0; i < n; ++i) plain[i] = x[i] * w + b;
    loop = std::min(loop, seconds_since(start));
  }
  ASSERT_EQ(z, plain);
  std::fill(z.begin(), z.end(), 0.0f);
  k.run_block = block_entry<saxpy>;
  auto start = std::chrono::steady_clock::now();
  cpu_launch(k, config(dims(n / 256), dims(256)), args);
  double block = seconds_since(start);
  ASSERT_EQ(z, plain);
  std::printf("[ speed    ] z = x*w+b over 16Mi float32 on %u threads: %.1f ms (%.2f ns/thread) "
              "with a call per thread, %.1f ms with a call per block; a plain one-thread loop: "
              "%.1f ms\n",
              cpu_thread_count(), s * 1e3, s * 1e9 / n, block * 1e3, loop * 1e3);
#ifdef NDEBUG
  // 10 ns a thread on a quiet machine; on a loaded one, within 40 plain loops' time (a
  // call per thread costs a few loops' worth).
  EXPECT_TRUE(s * 1e9 / n < 10.0 || s < 40 * loop) << s * 1e9 / n << " ns a thread, " << s / loop << " plain loops";
#endif
}

// The tiled transpose of examples/transpose.lua: 32x32 tiles through a padded static
// __shared__ array and one barrier.
void transpose_kernel(void* const* args) {
  static thread_local float tile[32][33];
  const float* in = arg<const float*>(args, 0);
  float* out = arg<float*>(args, 1);
  unsigned n = arg<unsigned>(args, 2);
  const luda_cpu_thread& t = me();
  unsigned x = t.blockIdx.x * 32 + t.threadIdx.x, y = t.blockIdx.y * 32 + t.threadIdx.y;
  tile[t.threadIdx.y][t.threadIdx.x] = in[y * n + x];
  rt()->syncthreads(&me());
  unsigned tx = t.blockIdx.y * 32 + t.threadIdx.x, ty = t.blockIdx.x * 32 + t.threadIdx.y;
  out[ty * n + tx] = tile[t.threadIdx.x][t.threadIdx.y];
}

TEST(CpuExecutor, FiberModeTiledTranspose1024) {
  unsigned n = 1024;
  std::vector<float> in(n * n), out(n * n, 0);
  std::mt19937 rng(7);
  for (auto& v : in) v = static_cast<float>(rng() % 100000);
  const float* ip = in.data();
  float* op = out.data();
  void* args[] = {&ip, &op, &n};
  auto start = std::chrono::steady_clock::now();
  cpu_launch(kernel(transpose_kernel, true), config(dims(32, 32), dims(32, 32)), args);
  double s = seconds_since(start);
  std::printf("[ speed    ] 1024x1024 tiled transpose, fiber mode: %.1f ms (first launch)\n", s * 1e3);
  start = std::chrono::steady_clock::now();
  cpu_launch(kernel(transpose_kernel, true), config(dims(32, 32), dims(32, 32)), args);
  std::printf("[ speed    ] again, warm: %.1f ms\n", seconds_since(start) * 1e3);
  for (unsigned y = 0; y < n; ++y)
    for (unsigned x = 0; x < n; ++x) ASSERT_EQ(out[x * n + y], in[y * n + x]) << y << " " << x;
#ifdef NDEBUG
  EXPECT_LT(s, 2.0);
#endif
}

// --- graphs of tasks ---------------------------------------------------------------------

// Random DAGs: each task starts only after every task it waits for has finished (checked
// by a clock that ticks at each start and finish), every task runs once, and tasks launch
// kernels of their own (saxpy) whose values are checked.
TEST(CpuRunGraph, RunsEachTaskOnceAfterItsPredecessors) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    const std::size_t n = rng() % 40;
    std::vector<std::vector<std::size_t>> after(n);
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (rng() % 4 == 0) after[i].push_back(j);
    std::atomic<long long> clock{0};
    std::vector<long long> started(n, -1), finished(n, -1);
    std::vector<int> runs(n, 0);
    const long long m = 1000;
    std::vector<std::vector<float>> out(n, std::vector<float>(m));
    cpu_run_graph(after, [&](std::size_t i) {
      started[i] = clock++;
      ++runs[i];
      std::vector<float> x(m, static_cast<float>(i));
      const float* xp = x.data();
      float* zp = out[i].data();
      float w = 2, b = 1;
      long long count = m;
      void* args[] = {&xp, &w, &b, &zp, &count};
      cpu_launch(kernel(saxpy, false), config(dims(4), dims(256)), args);
      finished[i] = clock++;
    });
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(1, runs[i]) << "task " << i;
      for (std::size_t p : after[i]) EXPECT_LT(finished[p], started[i]) << "task " << i << " after " << p;
      for (float v : out[i]) ASSERT_EQ(2.0f * static_cast<float>(i) + 1, v) << "task " << i;
    }
  }
}

// Two tasks that wait for each other run at the same time on two threads.
TEST(CpuRunGraph, RunsIndependentTasksAtTheSameTime) {
  if (cpu_thread_count() < 2) GTEST_SKIP() << "one cpu thread (LUDA_CPU_THREADS=1)";
  std::atomic<int> arrived{0};
  std::vector<std::vector<std::size_t>> after(2);
  // One atomic per task: std::vector<bool> packs both into one byte, whose two writers
  // would race.
  std::atomic<bool> met[2] = {false, false};
  cpu_run_graph(after, [&](std::size_t i) {
    ++arrived;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    met[i] = arrived.load() == 2;
  });
  EXPECT_TRUE(met[0] && met[1]);
}

// A task that throws: the tasks after it are skipped, the others run, and the first
// error by task index is rethrown once all are done.
TEST(CpuRunGraph, SkipsWhatFollowsAnErrorAndRethrowsTheFirst) {
  // 0 -> 1 -> 2, 3 independent, 4 -> 5; tasks 1 and 4 throw.
  std::vector<std::vector<std::size_t>> after{{}, {0}, {1}, {}, {}, {4}};
  std::vector<std::atomic<int>> ran(6);
  try {
    cpu_run_graph(after, [&](std::size_t i) {
      ++ran[i];
      if (i == 1 || i == 4) throw Error("task " + std::to_string(i) + " failed");
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ("task 1 failed", e.what());
  }
  EXPECT_EQ(1, ran[0]);
  EXPECT_EQ(1, ran[1]);
  EXPECT_EQ(0, ran[2]);
  EXPECT_EQ(1, ran[3]);
  EXPECT_EQ(1, ran[4]);
  EXPECT_EQ(0, ran[5]);
  // The threads stay usable.
  std::atomic<int> count{0};
  cpu_run_graph(std::vector<std::vector<std::size_t>>(5), [&](std::size_t) { ++count; });
  EXPECT_EQ(5, count.load());
  cpu_run_graph({}, [&](std::size_t) { FAIL() << "a task of no tasks"; });
}

}  // namespace
}  // namespace luda

#include "runtime/cpu_executor.h"

#include <link.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/cpu_block.h"
#include "runtime/cpu_guard.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace luda {

namespace {

constexpr const char* kAxes[3] = {"x", "y", "z"};
constexpr long long kMaxThreadsPerBlock = 1024;
constexpr long long kMaxBlockDim[3] = {1024, 1024, 64};
constexpr long long kMaxGridDim[3] = {2147483647, 65535, 65535};
constexpr unsigned kMaxDynamicShared = 227 * 1024;
constexpr unsigned kMaxPoolThreads = 1024;
// A cooperative grid's limits: each of its threads is a fiber with its own stack (two
// memory mappings: Linux allows about 65530 a process), and each block an OS thread.
constexpr unsigned long long kMaxCooperativeThreads = 16384;
constexpr unsigned long long kMaxCooperativeBlocks = 256;

long long dim(const Dim3& d, int axis) { return axis == 0 ? d.x : axis == 1 ? d.y : d.z; }

luda_cpu_dim3 to_dim3(const Dim3& d) {
  return {static_cast<unsigned>(d.x), static_cast<unsigned>(d.y), static_cast<unsigned>(d.z)};
}

// Block b of a grid, x fastest.
luda_cpu_dim3 block_index(unsigned long long b, const luda_cpu_dim3& grid) {
  const unsigned long long gx = grid.x, gxy = gx * grid.y;
  return {static_cast<unsigned>(b % gx), static_cast<unsigned>(b % gxy / gx), static_cast<unsigned>(b / gxy)};
}

// One launch in flight. It lives on the launching thread's stack; the pool refers to it
// only while it is queued or while a worker counts itself in `users`.
struct Job {
  const CpuKernel* kernel = nullptr;
  std::string_view who;  // "kernel 'k'": starts the errors of its code
  void* const* args = nullptr;
  luda_cpu_dim3 grid{}, block{};
  std::size_t shared = 0;
  unsigned long long total = 0;  // blocks
  unsigned long long chunk = 1;  // blocks claimed at once
  std::atomic<unsigned long long> next{0};
  int users = 0;             // workers running its blocks; under Pool::mutex_
  std::exception_ptr error;  // the first one; under Pool::mutex_
};

class Pool {
 public:
  explicit Pool(unsigned threads);
  ~Pool();
  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }
  void run(Job& job);
  // A task for the next free thread (graph nodes: cpu_run_graph); never throws.
  void post(std::function<void()> task);
  // Runs one posted task on the calling thread, if there is one.
  bool run_posted();

 private:
  void work();
  void run_blocks(Job& job);

  std::mutex mutex_;
  std::condition_variable work_ready_, job_left_;
  std::deque<Job*> queue_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// The launching thread runs blocks too, so the pool has one worker fewer than threads.
Pool::Pool(unsigned threads) {
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

// At exit (or when luda.so is unloaded), before the code the workers run goes away.
Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (auto& w : workers_) w.join();
}

// Signals meant for the process (Ctrl-C, termination, a child's end) go to the host's
// own threads, whose handlers expect them; faults and the stop signal stay deliverable.
// Called first by each thread luda starts to run blocks.
void block_process_signals() {
  sigset_t process_signals;
  sigemptyset(&process_signals);
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2, SIGWINCH, SIGPIPE})
    sigaddset(&process_signals, sig);
  pthread_sigmask(SIG_BLOCK, &process_signals, nullptr);
}

void Pool::work() {
  block_process_signals();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stop_ || !queue_.empty() || !tasks_.empty(); });
    if (stop_) return;
    if (!tasks_.empty()) {
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      continue;
    }
    Job* job = queue_.front();
    if (job->next.load(std::memory_order_relaxed) >= job->total) {  // every block taken
      queue_.pop_front();
      continue;
    }
    ++job->users;
    lock.unlock();
    run_blocks(*job);
    lock.lock();
    if (--job->users == 0) job_left_.notify_all();
  }
}

// Claims chunks of blocks until none is left. The first error stops the grid: blocks not
// yet claimed are skipped, as a GPU abandons a grid after a fault. A stop request is met
// before each block.
void Pool::run_blocks(Job& job) {
  CpuBlockRunner& runner = CpuBlockRunner::for_this_thread();
  for (;;) {
    unsigned long long first = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (first >= job.total) return;
    unsigned long long last = std::min(first + job.chunk, job.total);
    for (unsigned long long b = first; b < last; ++b) {
      const luda_cpu_dim3 idx = block_index(b, job.grid);
      std::exception_ptr e;
      if (detail::g_interrupt) [[unlikely]]
        e = cpu_guard::stop_error(*cpu_guard::this_thread().slot, cpu_guard::kInterrupt, job.who);
      else e = runner.run(*job.kernel, job.args, idx, job.block, job.grid, job.shared, job.who);
      if (e) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!job.error) job.error = std::move(e);
        job.next.store(job.total, std::memory_order_relaxed);
        return;
      }
    }
  }
}

void Pool::run(Job& job) {
  if (workers_.empty() || job.total == 1) {
    run_blocks(job);
  } else {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(&job);
    }
    work_ready_.notify_all();
    run_blocks(job);
    // Every block is claimed; wait for the workers still running some, and make sure no
    // queue entry outlives the job.
    std::unique_lock<std::mutex> lock(mutex_);
    if (auto it = std::find(queue_.begin(), queue_.end(), &job); it != queue_.end()) queue_.erase(it);
    job_left_.wait(lock, [&] { return job.users == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

void Pool::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  work_ready_.notify_one();
}

bool Pool::run_posted() {
  std::function<void()> task;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (tasks_.empty()) return false;
    task = std::move(tasks_.front());
    tasks_.pop_front();
  }
  task();
  return true;
}

Pool& pool() {
  // Made at the first launch, joined by its destructor at exit: a function-local static
  // (a second thread's first launch waits for the first to finish making it).
  static Pool instance(cpu_threads_from_env(std::getenv("LUDA_CPU_THREADS")));
  return instance;
}

// A cooperative launch: every block at once, block 0 on the calling thread and each other
// on an OS thread of its own (a block's static __shared__ arrays are thread_local, so
// blocks cannot share one), meeting at the grid barrier. The pool is not used: its
// threads are fewer than the blocks that must be resident.
void run_cooperative(Job& job) {
  CpuGridBarrier grid(job.total);
  std::mutex mutex;
  std::exception_ptr first;
  auto run_block = [&](unsigned long long b) noexcept {  // on a thread of its own: must not throw
    std::exception_ptr e;
    try {
      if (detail::g_interrupt) [[unlikely]]
        e = cpu_guard::stop_error(*cpu_guard::this_thread().slot, cpu_guard::kInterrupt, job.who);
      else
        e = CpuBlockRunner::for_this_thread().run(*job.kernel, job.args, block_index(b, job.grid), job.block, job.grid,
                                                  job.shared, job.who, &grid);
    } catch (...) {  // no guard slot or runner for this thread
      e = std::current_exception();
    }
    if (e) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!first) first = std::move(e);
      grid.abort();
    }
    grid.leave();
  };
  std::vector<std::thread> threads;
  std::exception_ptr start_error;
  try {
    threads.reserve(job.total - 1);
    for (unsigned long long b = 1; b < job.total; ++b)
      threads.emplace_back([&run_block, b] {
        block_process_signals();
        run_block(b);
      });
  } catch (const std::exception& e) {  // std::system_error: the system refused a thread
    start_error = std::make_exception_ptr(Error(fmt::format(
        "{}: could not start the {} threads its cooperative grid needs on the cpu device ({}); launch fewer "
        "blocks",
        job.who, job.total, e.what())));
    grid.abort();
    for (unsigned long long b = threads.size() + 1; b < job.total; ++b) grid.leave();  // never started
  }
  run_block(0);
  for (std::thread& t : threads) t.join();
  if (start_error) std::rethrow_exception(start_error);
  if (first) std::rethrow_exception(first);
}

}  // namespace

unsigned long long cpu_max_cooperative_blocks(long long threads_per_block) {
  if (threads_per_block < 1) return 0;
  return std::min<unsigned long long>(kMaxCooperativeBlocks,
                                      kMaxCooperativeThreads / static_cast<unsigned long long>(threads_per_block));
}

void validate_cpu_cooperative(const LaunchConfig& config) {
  const long long threads = config.block.count();
  const unsigned long long most = cpu_max_cooperative_blocks(threads);
  if (static_cast<unsigned long long>(config.grid.count()) > most)
    fail("a cooperative grid of {} blocks of {} threads is more than the cpu device runs at once: at most {} "
         "blocks of {} threads ({} threads and {} blocks in all); launch at most "
         "k:max_cooperative_grid_blocks({}) blocks and loop over the rest of the work (a grid-stride loop)",
         config.grid.count(), threads, most, threads, kMaxCooperativeThreads, kMaxCooperativeBlocks, threads);
}

unsigned cpu_threads_from_env(const char* value) {
  if (value == nullptr || *value == '\0') {
    unsigned n = std::thread::hardware_concurrency();
    return std::clamp(n, 1u, kMaxPoolThreads);
  }
  std::string_view text(value);
  unsigned n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxPoolThreads)
    fail("LUDA_CPU_THREADS is '{}': expected a whole number of threads from 1 to {}", text, kMaxPoolThreads);
  return n;
}

unsigned cpu_thread_count() { return pool().threads(); }

namespace {

// A graph's run (cpu_run_graph), shared by the tasks posted for it: the last of them may
// still be returning when the caller, seeing every task finished, returns.
struct GraphRun {
  const std::function<void(std::size_t)>* task = nullptr;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::size_t> waiting;            // predecessors not yet finished
  std::vector<std::vector<std::size_t>> next;  // successors
  std::vector<char> failed;                    // the task, or one it waits for, failed
  std::vector<std::exception_ptr> errors;
  std::size_t left = 0;      // tasks not finished
  std::uint64_t posted = 0;  // tasks posted so far
};

void post_node(const std::shared_ptr<GraphRun>& run, std::size_t i);

// Runs task i (skipped when one it waits for failed), then posts the tasks it frees.
void run_node(const std::shared_ptr<GraphRun>& run, std::size_t i) {
  bool skip;
  {
    std::lock_guard<std::mutex> lock(run->mutex);
    skip = run->failed[i];
  }
  std::exception_ptr e;
  if (!skip) {
    try {
      (*run->task)(i);
    } catch (...) {
      e = std::current_exception();
    }
  }
  std::vector<std::size_t> ready;
  {
    std::lock_guard<std::mutex> lock(run->mutex);
    if (e) run->errors[i] = e;
    for (std::size_t s : run->next[i]) {
      if (skip || e) run->failed[s] = 1;
      if (--run->waiting[s] == 0) ready.push_back(s);
    }
    --run->left;
  }
  for (std::size_t s : ready) post_node(run, s);
  run->changed.notify_all();
}

void post_node(const std::shared_ptr<GraphRun>& run, std::size_t i) {
  pool().post([run, i] { run_node(run, i); });
  std::lock_guard<std::mutex> lock(run->mutex);
  ++run->posted;
}

}  // namespace

void cpu_run_graph(std::span<const std::vector<std::size_t>> after, const std::function<void(std::size_t)>& task) {
  const std::size_t n = after.size();
  auto run = std::make_shared<GraphRun>();
  run->task = &task;
  run->waiting.resize(n);
  run->next.resize(n);
  run->failed.assign(n, 0);
  run->errors.resize(n);
  run->left = n;
  for (std::size_t i = 0; i < n; ++i) {
    run->waiting[i] = after[i].size();
    for (std::size_t p : after[i]) run->next.at(p).push_back(i);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (after[i].empty()) post_node(run, i);
  // The calling thread runs posted tasks too (every one with LUDA_CPU_THREADS=1), and
  // waits while the other threads have them all.
  for (;;) {
    std::uint64_t seen;
    {
      std::lock_guard<std::mutex> lock(run->mutex);
      if (run->left == 0) break;
      seen = run->posted;
    }
    if (pool().run_posted()) continue;
    std::unique_lock<std::mutex> lock(run->mutex);
    run->changed.wait(lock, [&] { return run->left == 0 || run->posted != seen; });
  }
  for (const std::exception_ptr& e : run->errors)
    if (e) std::rethrow_exception(e);
}

void validate_cpu_launch(const LaunchConfig& config) {
  for (const auto& [what, d] : {std::pair<const char*, const Dim3&>{"grid", config.grid}, {"block", config.block}})
    for (int axis = 0; axis < 3; ++axis)
      if (dim(d, axis) < 1)
        fail("{} dimension {} is {}: each grid and block dimension must be at least 1", what, kAxes[axis],
             dim(d, axis));
  if (config.block.count() > kMaxThreadsPerBlock)
    fail("block of {} has {} threads; cpu allows at most {} per block", config.block.str(), config.block.count(),
         kMaxThreadsPerBlock);
  for (int axis = 0; axis < 3; ++axis)
    if (dim(config.block, axis) > kMaxBlockDim[axis])
      fail("block dimension {} is {}; cpu allows at most {} in {}", kAxes[axis], dim(config.block, axis),
           kMaxBlockDim[axis], kAxes[axis]);
  for (int axis = 0; axis < 3; ++axis)
    if (dim(config.grid, axis) > kMaxGridDim[axis])
      fail("grid dimension {} is {}; cpu allows at most {} in {}", kAxes[axis], dim(config.grid, axis),
           kMaxGridDim[axis], kAxes[axis]);
  if (config.shared_mem > kMaxDynamicShared)
    fail("dynamic shared memory of {} bytes ({}) is more than cpu allows per block ({} bytes)", config.shared_mem,
         driver::format_bytes(config.shared_mem), kMaxDynamicShared);
}

void cpu_launch(const CpuKernel& kernel, const LaunchConfig& config, void* const* args, std::string_view who) {
  validate_cpu_launch(config);
  if (kernel.cooperative) {
    try {
      validate_cpu_cooperative(config);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", who, e.what()));
    }
  }
  LUDA_INTERNAL_CHECK(kernel.run_thread != nullptr && kernel.current_slot != nullptr);
  cpu_guard::start_watchdog();
  Pool& p = pool();
  detail::InterruptScope interrupt_scope;
  Job job;
  job.kernel = &kernel;
  job.who = who;
  job.args = args;
  job.grid = to_dim3(config.grid);
  job.block = to_dim3(config.block);
  job.shared = config.shared_mem;
  job.total = static_cast<unsigned long long>(config.grid.count());
  // Chunks small enough that every thread gets several (blocks differ in cost), large
  // enough that claiming is rare next to running.
  job.chunk = std::max(1ull, job.total / (16ull * p.threads()));
  try {
    if (kernel.cooperative) run_cooperative(job);
    else p.run(job);
  } catch (const Interrupted&) {
    interrupt_scope.consume();
    throw;
  }
}

void cpu_code_range(const void* address, const void** begin, const void** end) {
  struct Search {
    const char* address;
    const void* begin = nullptr;
    const void* end = nullptr;
  } search{static_cast<const char*>(address)};
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* data) -> int {
        auto& s = *static_cast<Search*>(data);
        auto segment = [&](int i, const char** lo, const char** hi) {
          const ElfW(Phdr)& ph = object->dlpi_phdr[i];
          *lo = reinterpret_cast<const char*>(object->dlpi_addr + ph.p_vaddr);
          *hi = *lo + ph.p_memsz;
          return ph.p_type == PT_LOAD;
        };
        bool holds = false;
        const char *lo = nullptr, *hi = nullptr;
        for (int i = 0; i < object->dlpi_phnum; ++i)
          if (segment(i, &lo, &hi) && lo <= s.address && s.address < hi) holds = true;
        if (!holds) return 0;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          if (!segment(i, &lo, &hi) || !(object->dlpi_phdr[i].p_flags & PF_X)) continue;
          if (!s.begin || lo < s.begin) s.begin = lo;
          if (!s.end || hi > s.end) s.end = hi;
        }
        return 1;
      },
      &search);
  *begin = search.begin;
  *end = search.end;
}

}  // namespace luda

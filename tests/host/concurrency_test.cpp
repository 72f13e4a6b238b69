// Host threads, each with its own lua_State, share one fresh disk cache and the devices:
// every thread defines a kernel of each kind (vectorize, elementwise, reduction, fuse,
// cuda.jit with and without a barrier, raw_kernel) and launches them thousands of times
// in all on small random
// arrays, checking every element against plain Lua. The threads race to compile the
// same kernels and to write the same cache files. A second pass in fresh states, with
// the process's loaded cpu modules forgotten, must find every kernel in the disk cache
// (nothing lost, no file half-written) and give the same results. Runs on cpu, and on
// cuda when a device is usable.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "jit/compile/disk_cache.h"
#include "jit/compile/host_compiler.h"
#include "runtime/device.h"
#include "tests/host/lua_host.h"

namespace {

using luda::test::LuaHost;
namespace fs = std::filesystem;

constexpr int kThreads = 8;
constexpr int kKinds = 7;         // kernels per round: the script's list
constexpr int kRounds = 400;      // per thread, first pass
constexpr int kRoundsAgain = 25;  // per thread, second pass

// The disk cache's folder is read once per process, at its first use: this binary's
// is a fresh one, made before any test runs and removed after the last.
class FreshCacheDir : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "luda-host-tests-XXXXXX").string();
    ASSERT_NE(nullptr, mkdtemp(pattern.data()));
    dir_ = pattern;
    setenv("LUDA_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  fs::path dir_;
};
const auto* const g_fresh_cache = ::testing::AddGlobalTestEnvironment(new FreshCacheDir);

// One thread's work: DEVICE, SEED and ROUNDS are set as globals. Sets LAUNCHES and
// CHECKED, the launches made and the elements checked; raises at the first wrong element.
constexpr const char* kScript = R"lua(
local dev = {device = DEVICE}
local cuda = luda.cuda
math.randomseed(SEED)
local function f32(x) return (string.unpack("f", string.pack("f", x))) end
local function close(got, want, tol)
  return math.abs(got - want) <= tol * math.max(1, math.abs(want))
end

local scale = luda.vectorize(function(x, y) return x * y - 0.5 * x end)
local axpy = luda.elementwise("T x, T y", "T z", "z = x + 2 * y", "axpy")
local sumsq = luda.reduction("T x", "T z", "x * x", "a + b", "z = a", "0", "sumsq")
local diff3 = luda.fuse(function(x, y) return (x - y) * 3 end)
local iota = luda.cuda.jit(function(x, out)
  local i = cuda.grid(1)
  if i < #out then out[i] = x[i] * 2 + i end
end)
-- Barriers: on cpu its blocks run as fibers.
local rotate = cuda.jit(function(x, out)
  local s = cuda.shared.array(64, "int64")
  local t, i = cuda.threadIdx.x, cuda.grid(1)
  s[t] = 0
  if i < #x then s[t] = x[i] end
  cuda.syncthreads()
  if i < #out then out[i] = s[(t + 1) % 64] end
end)
local sub = luda.raw_kernel([[
extern "C" __global__ void sub(const long long* a, const long long* b, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] - b[i];
}]], "sub")

local launches, checked = 0, 0
local function check(kind, round, got, want, tol)
  for i = 1, #want do
    local ok = tol and close(got[i], want[i], tol) or got[i] == want[i]
    if not ok then
      error(("%s, thread seed %d, round %d, element %d: got %s, want %s"):format(
        kind, SEED, round, i - 1, tostring(got[i]), tostring(want[i])), 0)
    end
  end
  checked = checked + #want
  launches = launches + 1
end

for round = 1, ROUNDS do
  local n = math.random(1, 300)
  local xf, yf, xi, yi = {}, {}, {}, {}
  for i = 1, n do
    xf[i], yf[i] = math.random() * 20 - 10, math.random() * 20 - 10
    xi[i], yi[i] = math.random(-1000, 1000), math.random(-1000, 1000)
  end
  local x64, y64 = luda.array(xf, "float64", dev), luda.array(yf, "float64", dev)
  local x32, y32 = luda.array(xf, "float32", dev), luda.array(yf, "float32", dev)
  local a, b = luda.array(xi, "int64", dev), luda.array(yi, "int64", dev)
  local w = {}

  for i = 1, n do w[i] = xf[i] * yf[i] - 0.5 * xf[i] end
  check("vectorize", round, scale(x64, y64):totable(), w, 1e-12)

  for i = 1, n do w[i] = f32(f32(xf[i]) + 2 * f32(yf[i])) end
  check("elementwise", round, axpy(x32, y32):totable(), w, 1e-6)

  local s = 0
  for i = 1, n do s = s + xi[i] * xi[i] end
  check("reduction", round, {sumsq(a):item()}, {s})

  for i = 1, n do w[i] = (xf[i] - yf[i]) * 3 end
  check("fuse", round, diff3(x64, y64):totable(), w, 1e-12)

  local out = luda.empty(n, "int64", dev)
  iota[{(n + 63) // 64, 64}](a, out)
  for i = 1, n do w[i] = xi[i] * 2 + (i - 1) end
  check("cuda.jit", round, out:totable(), w)

  rotate[{(n + 63) // 64, 64}](a, out)
  for i = 1, n do
    local from = (i - 1) // 64 * 64 + i % 64  -- 0-based: the next thread of the block, cyclically
    w[i] = from < n and xi[from + 1] or 0
  end
  check("cuda.jit with a barrier", round, out:totable(), w)

  sub({(n + 127) // 128}, {128}, {a, b, out, luda.int32(n)})
  for i = 1, n do w[i] = xi[i] - yi[i] end
  check("raw_kernel", round, out:totable(), w)
end
LAUNCHES, CHECKED = launches, checked
)lua";

struct Outcome {
  std::string error;
  long long launches = 0, checked = 0;
};

// kThreads threads at once, each with its own state, `rounds` rounds each on `device`.
std::vector<Outcome> run_threads(const std::string& device, int rounds, int seed_base) {
  std::vector<Outcome> outcomes(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      LuaHost lua;
      lua_pushstring(lua.L, device.c_str());
      lua_setglobal(lua.L, "DEVICE");
      lua_pushinteger(lua.L, seed_base + t);
      lua_setglobal(lua.L, "SEED");
      lua_pushinteger(lua.L, rounds);
      lua_setglobal(lua.L, "ROUNDS");
      Outcome& o = outcomes[static_cast<std::size_t>(t)];
      o.error = lua.run(kScript);
      lua_getglobal(lua.L, "LAUNCHES");
      o.launches = lua_tointeger(lua.L, -1);
      lua_getglobal(lua.L, "CHECKED");
      o.checked = lua_tointeger(lua.L, -1);
    });
  }
  for (auto& th : threads) th.join();
  return outcomes;
}

void expect_all_done(const std::vector<Outcome>& outcomes, int rounds, const char* pass) {
  long long launches = 0, checked = 0;
  for (std::size_t t = 0; t < outcomes.size(); ++t) {
    EXPECT_EQ("", outcomes[t].error) << pass << ", thread " << t;
    EXPECT_EQ(static_cast<long long>(rounds) * kKinds, outcomes[t].launches) << pass << ", thread " << t;
    launches += outcomes[t].launches;
    checked += outcomes[t].checked;
  }
  std::printf("%s: %d threads, %lld launches, %lld elements checked\n", pass, kThreads, launches, checked);
}

void run_both_passes(const std::string& device) {
  luda::jit::DiskCache& cache = luda::jit::DiskCache::global();
  ASSERT_EQ(fs::path(std::getenv("LUDA_CACHE_DIR")), cache.directory());
  cache.reset_stats();
  expect_all_done(run_threads(device, kRounds, 1000), kRounds, "first pass");
  auto first = cache.stats();
  EXPECT_GT(first.writes, 0u) << "the threads compiled nothing into a fresh cache";
  EXPECT_EQ(0u, first.corrupt);
  EXPECT_EQ(0u, first.write_failures);

  // Fresh states and no loaded cpu module: each kernel comes from its cache file.
  luda::jit::detail::forget_loaded_modules();
  cache.reset_stats();
  expect_all_done(run_threads(device, kRoundsAgain, 1000), kRoundsAgain, "second pass");
  auto again = cache.stats();
  EXPECT_GE(again.hits, static_cast<std::uint64_t>(kKinds)) << "second pass did not read the disk cache";
  EXPECT_EQ(0u, again.misses) << "a kernel compiled in the first pass was not found in the cache";
  EXPECT_EQ(0u, again.writes);
  EXPECT_EQ(0u, again.corrupt);
}

TEST(Concurrency, HostThreadsShareCacheAndCpuDevice) { run_both_passes("cpu"); }

TEST(Concurrency, HostThreadsShareCacheAndCudaDevice) {
  try {
    luda::require_cuda_device(0);
  } catch (const std::exception& e) {
    GTEST_SKIP() << e.what();
  }
  run_both_passes("cuda");
}

}  // namespace

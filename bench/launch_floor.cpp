// The floor for host dispatch: bare cuLaunchKernel of the kernels luda's dispatch
// benchmarks launch, timed in their loop shape (bench/raw_kernel.lua, bench/kinds.lua:
// `warm` calls, then 5 samples of `calls` calls back to back with no synchronization, a
// cuCtxSynchronize after each sample; the median), on the legacy default stream as luda
// uses when no stream is given.
//   build/bench/launch_floor [--calls N] [--warm N]      (defaults 20000 and 1000)
// The first line is the figure bench/peers_kinds.py reads ("n=1024: X us"); the "@@ key
// value" lines are for scripts. Rows:
//   4 args: the raw kernel add (x, y, z, n) of bench/raw_kernel.lua and bench/kinds.lua;
//   5 args: z = x*w+b (x, w, b, z, n), the elementwise kinds' shape at n=1024;
//   4 args + cuCtxGetCurrent: what any library that keeps its context current pays at
//   least (luda checks the current context once per launch).
// With --lua R, then R rounds in this one process, each timing the bare launch and the
// same launch from a Lua loop through luda (an elementwise kind, a raw kernel), in turns:
// on a host whose launch cost moves from process to process, the two meet the same host.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "luda/luda.h"
#include "runtime/device.h"
#include "runtime/driver.h"

namespace {

struct Loop {
  int calls = 20000;
  int warm = 1000;
  // Calls between synchronizations, untimed, within a sample (0: none). Back to back, tiny
  // launches fill the GPU's queue, and the host then waits for the GPU: the per-call time
  // becomes the GPU's per-kernel time. Batches shorter than the queue time the host alone.
  int batch = 0;
  int lua_rounds = 0;  // --lua: rounds of bare and luda launches in turns
};

// Median over 5 samples of the host time per call of `launch`, in microseconds.
double per_call_us(const Loop& loop, const std::function<void()>& launch) {
  using namespace luda;
  for (int i = 0; i < loop.warm; ++i) launch();
  LUDA_CU(cuCtxSynchronize);
  std::vector<double> us;
  for (int r = 0; r < 5; ++r) {
    double total = 0;
    for (int done = 0; done < loop.calls;) {
      int n = loop.batch > 0 ? std::min(loop.batch, loop.calls - done) : loop.calls;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) launch();
      auto t1 = std::chrono::steady_clock::now();
      total += std::chrono::duration<double, std::micro>(t1 - t0).count();
      done += n;
      if (loop.batch > 0) LUDA_CU(cuCtxSynchronize);
    }
    us.push_back(total / loop.calls);
    LUDA_CU(cuCtxSynchronize);
  }
  std::sort(us.begin(), us.end());
  return us[2];
}

}  // namespace

int main(int argc, char** argv) try {
  auto positive = [](const char* flag, const char* text) { return luda::bench::positive("launch_floor", flag, text); };
  using namespace luda;
  Loop loop;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--calls") loop.calls = positive("--calls", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "--warm") loop.warm = positive("--warm", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "--batch") loop.batch = positive("--batch", i + 1 < argc ? argv[++i] : nullptr);
    else if (a == "--lua") loop.lua_rounds = positive("--lua", i + 1 < argc ? argv[++i] : nullptr);
    else {
      std::fprintf(stderr, "usage: launch_floor [--calls N] [--warm N] [--batch N] [--lua ROUNDS]\n");
      return 2;
    }
  }
  const char* src = R"(
extern "C" __global__ void add(const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) z[i] = x[i] + y[i];
}
extern "C" __global__ void axpb(const float* x, const float* w, const float* b, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) z[i] = x[i] * w[i] + b[i];
})";
  const DeviceProperties& props = cuda_properties(0);
  ContextScope scope(0);
  CUmodule module = bench::load_module(src);
  CUfunction add, axpb;
  LUDA_CU(cuModuleGetFunction, &add, module, "add");
  LUDA_CU(cuModuleGetFunction, &axpb, module, "axpb");
  const long long n = 1024;
  CUdeviceptr x, y, z;
  LUDA_CU(cuMemAlloc, &x, n * sizeof(float));
  LUDA_CU(cuMemAlloc, &y, n * sizeof(float));
  LUDA_CU(cuMemAlloc, &z, n * sizeof(float));
  long long count = n;
  void* args4[] = {&x, &y, &z, &count};
  void* args5[] = {&x, &y, &y, &z, &count};
  const driver::Api& cu = driver::api();

  // The entry points called straight, as a C++ program of its own would.
  auto check = [](CUresult r, const char* call) {
    if (r != CUDA_SUCCESS) driver::check(r, call);
  };
  double bare4 = per_call_us(loop, [&] {
    check(cu.cuLaunchKernel(add, 4, 1, 1, 256, 1, 1, 0, nullptr, args4, nullptr), "cuLaunchKernel");
  });
  double bare5 = per_call_us(loop, [&] {
    check(cu.cuLaunchKernel(axpb, 1, 1, 1, 256, 1, 1, 0, nullptr, args5, nullptr), "cuLaunchKernel");
  });
  double with_ctx = per_call_us(loop, [&] {
    CUcontext current = nullptr;
    check(cu.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    check(cu.cuLaunchKernel(add, 4, 1, 1, 256, 1, 1, 0, nullptr, args4, nullptr), "cuLaunchKernel");
  });
  std::printf("bare cuLaunchKernel host dispatch, 4 args, n=1024: %.2f us per call\n", bare4);
  std::printf("bare cuLaunchKernel host dispatch, 5 args (z = x*w+b), n=1024: %.2f us per call\n", bare5);
  std::printf("bare cuLaunchKernel + cuCtxGetCurrent, 4 args, n=1024: %.2f us per call\n", with_ctx);
  std::printf("(%d calls per sample after %d warm-up calls, median of 5, default stream, %s)\n", loop.calls, loop.warm,
              props.name.c_str());
  std::printf("@@ bare_us %.4f\n@@ bare5_us %.4f\n@@ bare_ctx_us %.4f\n", bare4, bare5, with_ctx);
  if (loop.lua_rounds > 0) {
    luda::Engine lua;
    for (auto [name, p] : {std::pair{"x", x}, std::pair{"y", y}, std::pair{"z", z}})
      lua.set(name, luda::Array::wrap(reinterpret_cast<float*>(p), {n}, luda::Device::cuda(0)));
    lua.set("source", std::string(src));
    lua.run(R"(
      local k = luda.elementwise("T x, T w, T b", "T z", "z = (x * w) + b", "dnnLayerNode")
      local add = luda.raw_kernel(source, "add")
      local grid, block, args = {4}, {256}, {x, y, z, 1024}
      function elementwise_loop(calls) for _ = 1, calls do k(x, y, y, z) end end
      function raw_loop(calls) for _ = 1, calls do add(grid, block, args) end end
    )",
            "=launch_floor");
    auto lua_us = [&](const char* loop_name) {  // as per_call_us: one sample is one Lua loop
      lua.call(loop_name, {loop.warm});
      LUDA_CU(cuCtxSynchronize);
      std::vector<double> us;
      for (int r = 0; r < 5; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        lua.call(loop_name, {loop.calls});
        auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / loop.calls);
        LUDA_CU(cuCtxSynchronize);
      }
      std::sort(us.begin(), us.end());
      return us[2];
    };
    std::vector<double> b5, ew, b4, raw;
    for (int r = 0; r < loop.lua_rounds; ++r) {
      b5.push_back(per_call_us(loop, [&] {
        check(cu.cuLaunchKernel(axpb, 1, 1, 1, 256, 1, 1, 0, nullptr, args5, nullptr), "cuLaunchKernel");
      }));
      ew.push_back(lua_us("elementwise_loop"));
      b4.push_back(per_call_us(loop, [&] {
        check(cu.cuLaunchKernel(add, 4, 1, 1, 256, 1, 1, 0, nullptr, args4, nullptr), "cuLaunchKernel");
      }));
      raw.push_back(lua_us("raw_loop"));
      std::printf("round %d: bare 5 args %.2f, elementwise %.2f (%.2fx); bare 4 args %.2f, raw_kernel %.2f (%.2fx)\n",
                  r + 1, b5.back(), ew.back(), ew.back() / b5.back(), b4.back(), raw.back(), raw.back() / b4.back());
    }
    using bench::median;
    std::printf(
        "in one process, medians of %d rounds: elementwise %.2f us = %.2fx bare, raw_kernel %.2f us = %.2fx bare\n",
        loop.lua_rounds, median(ew), median(ew) / median(b5), median(raw), median(raw) / median(b4));
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "launch_floor: %s\n", e.what());
  return 1;
}

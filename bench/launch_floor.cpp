// The floor for host dispatch: bare cuLaunchKernel of the same 4-argument add that
// bench/raw_kernel.lua launches through luda, timed the same way (n=1024, no sync).
//   build/bench/launch_floor
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "jit/nvrtc.h"
#include "runtime/device.h"
#include "runtime/driver.h"

int main() try {
  using namespace luda;
  const char* src = R"(
extern "C" __global__ void add(const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (; i < n; i += stride) z[i] = x[i] + y[i];
})";
  const DeviceProperties& props = cuda_properties(0);
  jit::CompileRequest request;
  request.source = src;
  request.arch = props.major * 10 + props.minor;
  jit::CompiledProgram program = jit::compile(request);
  ContextScope scope(0);
  CUmodule module;
  CUfunction f;
  LUDA_CU(cuModuleLoadData, &module, program.image.c_str());
  LUDA_CU(cuModuleGetFunction, &f, module, "add");
  CUdeviceptr buf;
  LUDA_CU(cuMemAlloc, &buf, 1024 * sizeof(float));
  long long n = 1024;
  void* args[] = {&buf, &buf, &buf, &n};
  auto launch = [&] { LUDA_CU(cuLaunchKernel, f, 4, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr); };
  for (int i = 0; i < 1000; ++i) launch();
  LUDA_CU(cuCtxSynchronize);
  const int calls = 20000;
  std::vector<double> us;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) launch();
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    LUDA_CU(cuCtxSynchronize);
  }
  std::sort(us.begin(), us.end());
  std::printf("bare cuLaunchKernel host dispatch, 4 args, n=1024: %.2f us per call\n", us[2]);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "launch_floor: %s\n", e.what());
  return 1;
}

// Replay cost per node of a graph, in one process on one GPU: a chain of 64 small kernels
// (z = x + y over 1024 floats, each after the one before), as
//   bare: a driver graph of the 64 kernel nodes built by hand (cuGraphAddKernelNode),
//         instantiated once, replayed with cuGraphLaunch (the floor);
//   luda graph: the same 64 launches of a raw kernel recorded with luda.graph, replayed
//         with g:launch() from a Lua loop;
//   luda eager: the 64 launches from Lua, one after another.
// Each is timed as `replays` replays back to back and one synchronization (the median of
// 5 samples), and given per node. Rounds alternate the three, so all meet the same host.
//   build/bench/graph_floor [--nodes N] [--replays R] [--rounds K]   (64, 2000, 5)
// The "@@ key value" lines are for scripts.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "luda/luda.h"

int main(int argc, char** argv) try {
  using namespace luda;
  using bench::median;
  auto positive = [](const char* flag, const char* text) { return bench::positive("graph_floor", flag, text); };
  int nodes = 64, replays = 2000, rounds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[++i] : nullptr;
    if (a == "--nodes") nodes = positive("--nodes", next);
    else if (a == "--replays") replays = positive("--replays", next);
    else if (a == "--rounds") rounds = positive("--rounds", next);
    else {
      std::fprintf(stderr, "usage: graph_floor [--nodes N] [--replays R] [--rounds K]\n");
      return 2;
    }
  }
  const char* src = R"(
extern "C" __global__ void add(const float* x, const float* y, float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
})";
  const DeviceProperties& props = cuda_properties(0);
  ContextScope scope(0);
  const driver::Api& cu = driver::api();
  CUmodule module = bench::load_module(src);
  CUfunction add;
  LUDA_CU(cuModuleGetFunction, &add, module, "add");
  const long long n = 1024;
  CUdeviceptr x, y, z;
  LUDA_CU(cuMemAlloc, &x, n * sizeof(float));
  LUDA_CU(cuMemAlloc, &y, n * sizeof(float));
  LUDA_CU(cuMemAlloc, &z, n * sizeof(float));
  long long count = n;
  void* args[] = {&x, &y, &z, &count};

  // The bare graph: a chain of `nodes` kernel nodes.
  CUgraph graph;
  CUgraphExec exec;
  LUDA_CU(cuGraphCreate, &graph, 0);
  CUgraphNode previous = nullptr;
  for (int i = 0; i < nodes; ++i) {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = add;
    p.gridDimX = 4, p.gridDimY = 1, p.gridDimZ = 1;
    p.blockDimX = 256, p.blockDimY = 1, p.blockDimZ = 1;
    p.kernelParams = args;
    CUgraphNode node;
    LUDA_CU(cuGraphAddKernelNode, &node, graph, previous ? &previous : nullptr, previous ? 1 : 0, &p);
    previous = node;
  }
  LUDA_CU(cuGraphInstantiate, &exec, graph, 0);

  luda::Engine lua;
  for (auto [name, p] : {std::pair{"x", x}, std::pair{"y", y}, std::pair{"z", z}})
    lua.set(name, luda::Array::wrap(reinterpret_cast<float*>(p), {n}, luda::Device::cuda(0)));
  lua.set("source", std::string(src));
  lua.set("nodes", static_cast<long long>(nodes));
  lua.run(R"(
    local add = luda.raw_kernel(source, "add")
    local grid, block, args = {4}, {256}, {x, y, z, 1024}
    local function chain() for _ = 1, nodes do add(grid, block, args) end end
    local g = luda.graph(chain)
    g()
    assert(g:stats().nodes == nodes and g:stats().edges == nodes - 1, "the chain is not a chain: " .. tostring(g))
    function graph_loop(replays) for _ = 1, replays do g:launch() end luda.cuda.synchronize() end
    function eager_loop(replays) for _ = 1, replays do chain() end luda.cuda.synchronize() end
  )",
          "=graph_floor");

  // Microseconds per node of one sample: `replays` replays, then a synchronization.
  auto sample = [&](const std::function<void()>& body) {
    body();  // warm
    std::vector<double> us;
    for (int s = 0; s < 5; ++s) {
      auto t0 = std::chrono::steady_clock::now();
      body();
      auto t1 = std::chrono::steady_clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / replays / nodes);
    }
    return median(us);
  };
  std::vector<double> bare, graphed, eager;
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(sample([&] {
      for (int i = 0; i < replays; ++i)
        if (CUresult e = cu.cuGraphLaunch(exec, nullptr); e != CUDA_SUCCESS) driver::check(e, "cuGraphLaunch");
      LUDA_CU(cuCtxSynchronize);
    }));
    graphed.push_back(sample([&] { lua.call("graph_loop", {replays}); }));
    eager.push_back(sample([&] { lua.call("eager_loop", {replays / 10 + 1}); }));
    eager.back() *= static_cast<double>(replays) / (replays / 10 + 1);  // eager ran a tenth as many
    std::printf("round %d: bare graph %.3f us/node, luda graph %.3f us/node (%.2fx), luda eager %.3f us/node\n", r + 1,
                bare.back(), graphed.back(), graphed.back() / bare.back(), eager.back());
  }
  const double b = median(bare), g = median(graphed), e = median(eager);
  std::printf("chain of %d kernels, %d replays a sample, medians of %d rounds, %s:\n", nodes, replays, rounds,
              props.name.c_str());
  std::printf("  bare driver graph %.3f us per node; luda graph %.3f us per node (%.2fx bare); luda eager %.3f us per "
              "node (%.1fx the luda graph)\n",
              b, g, g / b, e, e / g);
  std::printf("@@ bare_graph_us_per_node %.4f\n@@ luda_graph_us_per_node %.4f\n@@ luda_eager_us_per_node %.4f\n", b, g,
              e);
  cu.cuGraphExecDestroy(exec);
  cu.cuGraphDestroy(graph);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "graph_floor: %s\n", e.what());
  return 1;
}

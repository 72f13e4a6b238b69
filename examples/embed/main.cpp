// A C++ host that embeds luda: a particle simulation whose update step is a Lua script
// (particles.lua) that the user may edit. The host keeps the particles in its own buffers
// and lends them to the script without a copy; the script's kernel updates them in place,
// on the cpu or on a GPU; the host reads the results back and checks them against the same
// simulation written in C++.
//
//   particles [script.lua] [steps]       (LUDA_DEVICE=cpu or cuda:0 chooses the device)
//
// Built against an installed luda with CMake (find_package(luda), CMakeLists.txt here) or
// with pkg-config (c++ -std=c++17 main.cpp $(pkg-config --cflags --libs luda)).
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <luda/luda.h>

#ifndef PARTICLES_SCRIPT
#define PARTICLES_SCRIPT "particles.lua"
#endif

namespace {

// Device memory the host owns. A host that uses CUDA has its own (cudaMalloc, a framework's
// tensors); this one links no CUDA library, so it asks the driver directly.
class DeviceMemory {
 public:
  explicit DeviceMemory(int ordinal) {
    lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) throw std::runtime_error("no CUDA driver (libcuda.so.1)");
    auto sym = [&](const char* name) {
      void* f = dlsym(lib_, name);
      if (!f) throw std::runtime_error(std::string("the CUDA driver lacks ") + name);
      return f;
    };
    auto init = reinterpret_cast<int (*)(unsigned)>(sym("cuInit"));
    auto get = reinterpret_cast<int (*)(int*, int)>(sym("cuDeviceGet"));
    auto retain = reinterpret_cast<int (*)(void**, int)>(sym("cuDevicePrimaryCtxRetain"));
    auto set_current = reinterpret_cast<int (*)(void*)>(sym("cuCtxSetCurrent"));
    alloc_ = reinterpret_cast<int (*)(unsigned long long*, std::size_t)>(sym("cuMemAlloc_v2"));
    free_ = reinterpret_cast<int (*)(unsigned long long)>(sym("cuMemFree_v2"));
    int device = 0;
    void* context = nullptr;  // the device's primary context, which luda uses too
    if (init(0) || get(&device, ordinal) || retain(&context, device) || set_current(context))
      throw std::runtime_error("cannot make the GPU's context current");
  }
  // `n` floats on the GPU, freed when the last holder of the returned owner lets go.
  std::shared_ptr<void> floats(std::size_t n) {
    unsigned long long p = 0;
    if (alloc_(&p, n * sizeof(float))) throw std::runtime_error("cuMemAlloc failed");
    auto free = free_;
    return std::shared_ptr<void>(reinterpret_cast<void*>(p),
                                 [free](void* q) { free(reinterpret_cast<unsigned long long>(q)); });
  }

 private:
  void* lib_ = nullptr;
  int (*alloc_)(unsigned long long*, std::size_t) = nullptr;
  int (*free_)(unsigned long long) = nullptr;
};

struct Particles {
  std::vector<float> x, y, vx, vy;
};

Particles random_particles(std::size_t n) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> position(0.05f, 0.95f), speed(-2.0f, 2.0f);
  Particles p{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    p.x[i] = position(rng);
    p.y[i] = position(rng);
    p.vx[i] = speed(rng);
    p.vy[i] = speed(rng);
  }
  return p;
}

// particles.lua's step, in C++: the reference the script's results are checked against.
void step_reference(Particles& p, float dt) {
  const float g = -9.81f, e = 0.9f;
  for (std::size_t i = 0; i < p.x.size(); ++i) {
    float vx = p.vx[i], vy = p.vy[i] + g * dt;
    float x = p.x[i] + vx * dt, y = p.y[i] + vy * dt;
    if (x < 0) {
      x = -x;
      vx = -vx * e;
    }
    if (x > 1) {
      x = 2 - x;
      vx = -vx * e;
    }
    if (y < 0) {
      y = -y;
      vy = -vy * e;
    }
    if (y > 1) {
      y = 2 - y;
      vy = -vy * e;
    }
    p.x[i] = x;
    p.y[i] = y;
    p.vx[i] = vx;
    p.vy[i] = vy;
  }
}

int run(const std::string& script, int steps) {
  const std::size_t n = 20000;
  const float dt = 1e-3f;
  Particles host = random_particles(n), reference = host;

  luda::Engine lua;
  luda::Device device = luda::current_device();  // cuda:0 when a GPU is usable, else cpu
  std::printf("%zu particles on %s, %d steps of %s\n", n, device.str().c_str(), steps, script.c_str());

  // The particles as arrays on the simulation's device, over the host's own memory.
  std::vector<float>* fields[4] = {&host.x, &host.y, &host.vx, &host.vy};
  const char* names[4] = {"x", "y", "vx", "vy"};
  luda::Array arrays[4];
  std::unique_ptr<DeviceMemory> gpu;
  bool shared = true;
  for (int k = 0; k < 4; ++k) {
    std::vector<float>& v = *fields[k];
    luda::Array on_host = luda::Array::wrap(v);  // no copy: the vector's own elements
    shared = shared && on_host.data() == v.data();
    if (device.is_cpu()) {
      arrays[k] = on_host;
    } else {
      if (!gpu) gpu = std::make_unique<DeviceMemory>(device.index);
      std::shared_ptr<void> buffer = gpu->floats(n);
      arrays[k] = luda::Array::wrap(static_cast<float*>(buffer.get()), {static_cast<std::int64_t>(n)}, device, {},
                                    buffer);
      shared = shared && arrays[k].data() == buffer.get();
      arrays[k].assign(on_host);  // upload once
    }
    lua.set(names[k], arrays[k]);
  }

  lua.run_file(script);
  for (int s = 0; s < steps; ++s) {
    lua.call("step", {dt});
    step_reference(reference, dt);
  }
  luda::Array energy = lua.call("energy")[0].as_array();  // an array the script made
  if (device.is_cuda())
    for (int k = 0; k < 4; ++k) luda::Array::wrap(*fields[k]).assign(arrays[k]);  // download

  // The script's results against the C++ simulation: the same arithmetic, so they agree
  // up to rounding, save a particle that met a wall in one and not, by a hair, in the other.
  const std::vector<float>* expected[4] = {&reference.x, &reference.y, &reference.vx, &reference.vy};
  std::size_t off = 0;
  double worst = 0;
  for (int k = 0; k < 4; ++k)
    for (std::size_t i = 0; i < n; ++i) {
      double d = std::fabs(static_cast<double>((*fields[k])[i]) - (*expected[k])[i]);
      worst = std::max(worst, d);
      off += d > 1e-3;
    }
  std::vector<float> e = energy.to_vector<float>();
  double total = 0, expect = 0;
  for (std::size_t i = 0; i < n; ++i) {
    total += e[i];
    expect += 0.5 * (double(host.vx[i]) * host.vx[i] + double(host.vy[i]) * host.vy[i]);
  }
  std::printf("arrays share the host's memory: %s\n", shared ? "yes" : "NO");
  std::printf("kinetic energy %.6f (from the host's copy: %.6f)\n", total, expect);
  std::printf("largest difference from the C++ simulation %.3g; %zu values off by more than 1e-3\n", worst, off);

  // An edit with a mistake: the host catches it with its place, and the old step stays.
  try {
    lua.run("function step(dt)\n  move(x, y, vx, vy,, dt)\nend", "=edited step");
    std::printf("the broken edit loaded?\n");
    return 1;
  } catch (const luda::SourceError& err) {
    std::printf("a broken edit is refused: %s:%d:%d: %s\n", err.file().c_str(), err.line(), err.column(),
                err.message().c_str());
    if (err.line() != 2) return 1;
  }
  lua.call("step", {dt});

  bool ok = shared && off <= n / 1000 && std::fabs(total - expect) <= 1e-4 * std::max(1.0, expect);
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string script = argc > 1 ? argv[1] : PARTICLES_SCRIPT;
  int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  try {
    return run(script, steps);
  } catch (const luda::Error& e) {  // every mistake of the script's or the host's
    std::fprintf(stderr, "particles: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "particles: %s\n", e.what());
    return 1;
  }
}

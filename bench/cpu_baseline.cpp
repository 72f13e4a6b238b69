// The C++ side of bench/cpu.lua: z = x * w + b over n float32, the loop a C++ programmer
// writes, compiled by bench/cpu.lua with the host compiler and the flags the cpu target
// uses for kernels (jit/compile/host_compiler.h), so that the two differ only in what luda adds.
//   cpu_baseline N REPS   ->   "<best milliseconds> <checksum>"
// The inputs are the bench's: x[i] = (i % 1000) / 1024 - 0.5, w[i] = (i % 7) * 0.25 + 0.5,
// b[i] = (i % 13) * 0.125 - 0.75: exact in float32, and so is x * w, so that z is the same
// with or without a fused multiply-add and the checksums must agree exactly.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Not inlined into main, so that the compiler sees one loop over three inputs and one
// output, as the kernel's specialization does (restricted pointers: the arrays are disjoint).
__attribute__((noinline)) void layer(const float* __restrict__ x, const float* __restrict__ w,
                                     const float* __restrict__ b, float* __restrict__ z, long n) {
  for (long i = 0; i < n; ++i) z[i] = x[i] * w[i] + b[i];
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cpu_baseline N REPS\n");
    return 2;
  }
  long n = std::atol(argv[1]);
  int reps = std::atoi(argv[2]);
  std::vector<float> x(n), w(n), b(n), z(n);
  for (long i = 0; i < n; ++i) {
    x[i] = static_cast<float>((i % 1000) / 1024.0 - 0.5);
    w[i] = static_cast<float>((i % 7) * 0.25 + 0.5);
    b[i] = static_cast<float>((i % 13) * 0.125 - 0.75);
  }
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    layer(x.data(), w.data(), b.data(), z.data(), n);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ms < best) best = ms;
  }
  double sum = 0;
  for (long i = 0; i < n; ++i) sum += z[i];
  std::printf("%.6f %.17g\n", best, sum);
  return 0;
}

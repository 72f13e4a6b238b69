#line 1 "luda_kind"
#line 1 "elementwise 'axpy'"
static __device__ float axpy_a67f229d(float x, float y, float a, long long i, long long n) {
#line 1 "elementwise 'axpy'"
  float z = 0.0f;
#line 1 "elementwise 'axpy'"
  {
#line 1 "elementwise 'axpy'"
    z = (a * x) + y;
  }
#line 2 "elementwise 'axpy'"
  return z;
}

#line 1 "luda_elementwise"
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LUDA_K_STREAM 1
typedef long long luda_v2di __attribute__((vector_size(16)));
#else
#define LUDA_K_STREAM 0
#endif
static void axpy_fd321538_range(const float* const luda_in0, const float* const luda_in1, float const luda_in2, float* const luda_out0, long long const luda_n, const long long luda_lo, const long long luda_hi) {
  long long luda_i = luda_lo;
#if LUDA_K_STREAM
  // Streamed when the output passes 8 MiB, well past what the caches would keep.
  if (luda_n * (long long)sizeof(float) >= (8ll << 20)) {
    for (; luda_i < luda_hi && ((unsigned long long)(luda_out0 + luda_i) & 15); ++luda_i) {
      luda_out0[luda_i] = luda_cvt<float>(axpy_a67f229d(luda_cvt<float>(luda_in0[luda_i]), luda_cvt<float>(luda_in1[luda_i]), luda_in2, (long long)(luda_i), luda_n));
    }
    enum { kLudaV = 16 / sizeof(float) };
    for (long long luda_s = luda_i; luda_s + kLudaV <= luda_hi; luda_s += kLudaV, luda_i = luda_s) {
      float luda_tile[kLudaV];
      for (luda_i = luda_s; luda_i < luda_s + kLudaV; ++luda_i) {
        luda_tile[luda_i - luda_s] = luda_cvt<float>(axpy_a67f229d(luda_cvt<float>(luda_in0[luda_i]), luda_cvt<float>(luda_in1[luda_i]), luda_in2, (long long)(luda_i), luda_n));
      }
      luda_v2di luda_v;
      __builtin_memcpy(&luda_v, luda_tile, 16);
      __builtin_ia32_movntdq((luda_v2di*)(luda_out0 + luda_s), luda_v);
    }
  for (; luda_i < luda_hi; ++luda_i) {
    luda_out0[luda_i] = luda_cvt<float>(axpy_a67f229d(luda_cvt<float>(luda_in0[luda_i]), luda_cvt<float>(luda_in1[luda_i]), luda_in2, (long long)(luda_i), luda_n));
  }
    __builtin_ia32_sfence();  // the streamed lines are visible before the launch returns
    return;
  }
#endif
  for (; luda_i < luda_hi; ++luda_i) {
    luda_out0[luda_i] = luda_cvt<float>(axpy_a67f229d(luda_cvt<float>(luda_in0[luda_i]), luda_cvt<float>(luda_in1[luda_i]), luda_in2, (long long)(luda_i), luda_n));
  }
}
LUDA_CPU_EXPORT void axpy_fd321538_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {
  *luda_cpu_current_slot() = luda_t;
  const float* const luda_in0 = *(const float* const*)luda_args[0];
  const float* const luda_in1 = *(const float* const*)luda_args[1];
  float const luda_in2 = *(float const*)luda_args[2];
  float* const luda_out0 = *(float* const*)luda_args[3];
  long long const luda_n = *(long long const*)luda_args[4];
  const long long luda_g = gridDim.x;
  const long long luda_per = ((luda_n + luda_g - 1) / luda_g + 15) / 16 * 16;
  const long long luda_lo = (long long)blockIdx.x * luda_per;
  const long long luda_hi = luda_lo + luda_per < luda_n ? luda_lo + luda_per : luda_n;
  if (luda_lo >= luda_hi) return;
  axpy_fd321538_range(luda_in0, luda_in1, luda_in2, luda_out0, luda_n, luda_lo, luda_hi);
}
LUDA_CPU_EXPORT void axpy_fd321538_cpu(void* const* luda_args) { axpy_fd321538_cpu_block(luda_args, luda_cpu_self()); }
extern "C" { LUDA_CPU_VISIBLE int axpy_fd321538_cpu_needs_fibers = 0; }

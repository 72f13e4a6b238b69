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
static void axpy_20604bdc_range(luda_kshape<2> const luda_shape, luda_kop<const float, 2> const luda_in0, luda_kop<const float, 2> const luda_in1, float const luda_in2, luda_kop<float, 2> const luda_out0, long long const luda_n, const long long luda_lo, const long long luda_hi) {
  long long luda_c[2];
  luda_k_coords<2>(luda_lo, luda_shape.shape, luda_c);
  long long luda_o_in0 = luda_k_dot<2>(luda_c, luda_in0.strides);
  const long long luda_s_in0 = luda_in0.strides[1];
  long long luda_o_in1 = luda_k_dot<2>(luda_c, luda_in1.strides);
  const long long luda_s_in1 = luda_in1.strides[1];
  long long luda_o_out0 = luda_k_dot<2>(luda_c, luda_out0.strides);
  const long long luda_s_out0 = luda_out0.strides[1];
  const long long luda_last = luda_shape.shape[1];
  long long luda_i = luda_lo;
  while (luda_i < luda_hi) {
    long long luda_run = luda_last - luda_c[1];
    if (luda_run > luda_hi - luda_i) luda_run = luda_hi - luda_i;
    for (long long luda_q = 0; luda_q < luda_run; ++luda_q) {
      luda_out0.data[luda_o_out0 + luda_q * luda_s_out0] = luda_cvt<float>(axpy_a67f229d(luda_cvt<float>(luda_in0.data[luda_o_in0 + luda_q * luda_s_in0]), luda_cvt<float>(luda_in1.data[luda_o_in1 + luda_q * luda_s_in1]), luda_in2, (long long)(luda_i + luda_q), luda_n));
    }
    luda_i += luda_run;
    luda_o_in0 += luda_run * luda_s_in0;
    luda_o_in1 += luda_run * luda_s_in1;
    luda_o_out0 += luda_run * luda_s_out0;
    luda_c[1] += luda_run;
    for (int luda_a = 1; luda_a > 0 && luda_c[luda_a] == luda_shape.shape[luda_a]; --luda_a) {
      luda_c[luda_a] = 0;
      ++luda_c[luda_a - 1];
      luda_o_in0 += luda_in0.strides[luda_a - 1] - luda_shape.shape[luda_a] * luda_in0.strides[luda_a];
      luda_o_in1 += luda_in1.strides[luda_a - 1] - luda_shape.shape[luda_a] * luda_in1.strides[luda_a];
      luda_o_out0 += luda_out0.strides[luda_a - 1] - luda_shape.shape[luda_a] * luda_out0.strides[luda_a];
    }
  }
}
LUDA_CPU_EXPORT void axpy_20604bdc_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {
  *luda_cpu_current_slot() = luda_t;
  luda_kshape<2> const luda_shape = *(luda_kshape<2> const*)luda_args[0];
  luda_kop<const float, 2> const luda_in0 = *(luda_kop<const float, 2> const*)luda_args[1];
  luda_kop<const float, 2> const luda_in1 = *(luda_kop<const float, 2> const*)luda_args[2];
  float const luda_in2 = *(float const*)luda_args[3];
  luda_kop<float, 2> const luda_out0 = *(luda_kop<float, 2> const*)luda_args[4];
  long long const luda_n = *(long long const*)luda_args[5];
  const long long luda_g = gridDim.x;
  const long long luda_per = ((luda_n + luda_g - 1) / luda_g + 15) / 16 * 16;
  const long long luda_lo = (long long)blockIdx.x * luda_per;
  const long long luda_hi = luda_lo + luda_per < luda_n ? luda_lo + luda_per : luda_n;
  if (luda_lo >= luda_hi) return;
  axpy_20604bdc_range(luda_shape, luda_in0, luda_in1, luda_in2, luda_out0, luda_n, luda_lo, luda_hi);
}
LUDA_CPU_EXPORT void axpy_20604bdc_cpu(void* const* luda_args) { axpy_20604bdc_cpu_block(luda_args, luda_cpu_self()); }
extern "C" { LUDA_CPU_VISIBLE int axpy_20604bdc_cpu_needs_fibers = 0; }

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
extern "C" __global__ void __launch_bounds__(256) axpy_120ae356(const float* const luda_in0, const float* const luda_in1, float const luda_in2, float* const luda_out0, long long const luda_n) {
  const long long luda_tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long luda_step = (long long)gridDim.x * blockDim.x;
  long long luda_done = 0;
  for (long long luda_i = luda_done + luda_tid; luda_i < luda_n; luda_i += luda_step) {
    luda_out0[luda_i] = luda_cvt<float>(axpy_a67f229d(luda_cvt<float>(luda_in0[luda_i]), luda_cvt<float>(luda_in1[luda_i]), luda_in2, (long long)(luda_i), luda_n));
  }
}

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
extern "C" __global__ void __launch_bounds__(256) axpy_2d339135(luda_kshape<2> const luda_shape, luda_kop<const float, 2> const luda_in0, luda_kop<const float, 2> const luda_in1, float const luda_in2, luda_kop<float, 2> const luda_out0, long long const luda_n) {
  typedef unsigned luda_idx;
  const luda_idx luda_step = (luda_idx)gridDim.x * blockDim.x;
  for (luda_idx luda_i = (luda_idx)blockIdx.x * blockDim.x + threadIdx.x; luda_i < (luda_idx)luda_n; luda_i += luda_step) {
    luda_idx luda_rem = luda_i, luda_c;
    (void)luda_c;
    long long luda_o_in0 = 0;
    long long luda_o_in1 = 0;
    long long luda_o_out0 = 0;
    luda_c = luda_rem % (luda_idx)luda_shape.shape[1]; luda_rem /= (luda_idx)luda_shape.shape[1];
    luda_o_in0 += (long long)luda_c * luda_in0.strides[1];
    luda_o_in1 += (long long)luda_c * luda_in1.strides[1];
    luda_o_out0 += (long long)luda_c * luda_out0.strides[1];
    luda_o_in0 += (long long)luda_rem * luda_in0.strides[0];
    luda_o_in1 += (long long)luda_rem * luda_in1.strides[0];
    luda_o_out0 += (long long)luda_rem * luda_out0.strides[0];
    luda_out0.data[luda_o_out0] = luda_cvt<float>(axpy_a67f229d(luda_cvt<float>(luda_in0.data[luda_o_in0]), luda_cvt<float>(luda_in1.data[luda_o_in1]), luda_in2, (long long)(luda_i), luda_n));
  }
}

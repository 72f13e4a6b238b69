struct polar_distance_17a4230f_result { float v0; float v1; };
#line 9 "golden.lua"
static __device__ polar_distance_17a4230f_result polar_distance_17a4230f(float rho1, float theta1, float rho2, float theta2) {
#line 10 "golden.lua"
  float x1 = rho1 * cosf(theta1);
  float y1 = rho1 * sinf(theta1);
#line 11 "golden.lua"
  float x2 = rho2 * cosf(theta2);
  float y2 = rho2 * sinf(theta2);
#line 12 "golden.lua"
  return polar_distance_17a4230f_result{sqrtf(luda_pow2(x1 - x2) + luda_pow2(y1 - y2)), atan2f(y1 - y2, x1 - x2)};
}

#line 15 "golden.lua"
extern "C" __global__ void polar_8a009aba(luda_Array<float, 1> rho1, luda_Array<float, 1> theta1, luda_Array<float, 1> rho2, luda_Array<float, 1> theta2, luda_Array<float, 1> dist, luda_Array<float, 1> angle) {
#line 16 "golden.lua"
  long long i = luda_grid1();
#line 17 "golden.lua"
  if (i < rho1.shape[0]) {
#line 18 "golden.lua"
    auto luda_t1 = polar_distance_17a4230f(rho1.data[i * rho1.strides[0]], theta1.data[i * theta1.strides[0]], rho2.data[i * rho2.strides[0]], theta2.data[i * theta2.strides[0]]);
    float luda_v2 = luda_t1.v0;
    float luda_v3 = luda_t1.v1;
    dist.data[i * dist.strides[0]] = luda_v2;
    angle.data[i * angle.strides[0]] = luda_v3;
  }
}


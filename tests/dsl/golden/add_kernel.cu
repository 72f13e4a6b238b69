#line 2 "golden.lua"
extern "C" __global__ void add_kernel_2e9eed79(luda_Array<float, 1> x, luda_Array<float, 1> y, luda_Array<float, 1> out) {
#line 3 "golden.lua"
  long long start = luda_grid1();
  long long stride = luda_gridsize1();
#line 4 "golden.lua"
  {
    const long long luda_limit1 = luda_sub(x.shape[0], 1LL);
    for (long long i = start; stride > 0 ? i <= luda_limit1 : i >= luda_limit1; i += stride) {
#line 5 "golden.lua"
      out.data[i] = x.data[i] + y.data[i];
    }
  }
}


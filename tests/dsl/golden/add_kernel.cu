#line 2 "golden.lua"
extern "C" __global__ void add_kernel_87786664(luda_Array<float, 1> x, luda_Array<float, 1> y, luda_Array<float, 1> out) {
#line 3 "golden.lua"
  long long start = luda_grid1();
  long long stride = luda_gridsize1();
#line 4 "golden.lua"
  {
    const long long luda_first1 = start;
    const long long luda_limit2 = luda_sub(x.shape[0], 1LL);
    if (stride != 0 && (stride > 0 ? luda_first1 <= luda_limit2 : luda_first1 >= luda_limit2)) {
      const unsigned long long luda_count3 = stride > 0
          ? ((unsigned long long)luda_limit2 - (unsigned long long)luda_first1) / (unsigned long long)stride
          : ((unsigned long long)luda_first1 - (unsigned long long)luda_limit2) / ((unsigned long long)(-(stride + 1)) + 1ull);
      long long i = luda_first1;
      for (unsigned long long luda_n4 = luda_count3 + 1; luda_n4 != 0; --luda_n4, i = (long long)((unsigned long long)i + (unsigned long long)stride)) {
#line 5 "golden.lua"
        out.data[i] = x.data[i] + y.data[i];
      }
    }
  }
}


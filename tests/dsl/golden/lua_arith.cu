#line 38 "golden.lua"
extern "C" __global__ void lua_arith_5618b23b(luda_Array<int, 1> a, luda_Array<int, 1> b, luda_Array<int, 1> out) {
#line 39 "golden.lua"
  long long i = luda_grid1();
#line 40 "golden.lua"
  long long n = 0LL;
#line 41 "golden.lua"
  for (;;) {
#line 42 "golden.lua"
    out.data[i * out.strides[0]] = luda_sub(luda_add(luda_floordiv(a.data[i * a.strides[0]], b.data[i * b.strides[0]]), luda_mod(a.data[i * a.strides[0]], b.data[i * b.strides[0]])), luda_shr(a.data[i * a.strides[0]], 2LL));
#line 43 "golden.lua"
    n = luda_add(n, 1LL);
#line 44 "golden.lua"
    if (n >= 3LL) break;
  }
#line 45 "golden.lua"
  {
    for (long long j = 10LL; j >= 1LL; j += (-3LL)) {
#line 45 "golden.lua"
      out.data[i * out.strides[0]] = (int)(luda_add((long long)(out.data[i * out.strides[0]]), j));
    }
  }
}


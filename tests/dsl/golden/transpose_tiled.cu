#line 22 "golden.lua"
extern "C" __global__ void transpose_tiled_6855f14e(luda_Array<int, 2> a, luda_Array<int, 2> out, luda_BoundsRecord* luda_bounds) {
#line 23 "golden.lua"
  __shared__ int tile_storage[1056];
  luda_Array<int, 2> tile = {tile_storage, {32, 33}, {33, 1}};
#line 24 "golden.lua"
  int tx = (int)threadIdx.x;
  int ty = (int)threadIdx.y;
#line 25 "golden.lua"
  int x = luda_add(luda_mul((int)blockIdx.x, 32), tx);
#line 26 "golden.lua"
  int y = luda_add(luda_mul((int)blockIdx.y, 32), ty);
#line 27 "golden.lua"
  if (((long long)(y) < a.shape[0]) && ((long long)(x) < a.shape[1])) {
#line 28 "golden.lua"
    tile.data[(luda_check((long long)(ty), 32, luda_bounds, 28, 0)) * 33 + luda_check((long long)(tx), 33, luda_bounds, 28, 1)] = a.data[(luda_check((long long)(y), a.shape[0], luda_bounds, 28, 0)) * a.strides[0] + (luda_check((long long)(x), a.shape[1], luda_bounds, 28, 1)) * a.strides[1]];
  }
#line 30 "golden.lua"
  __syncthreads();
#line 31 "golden.lua"
  x = luda_add(luda_mul((int)blockIdx.y, 32), tx);
#line 32 "golden.lua"
  y = luda_add(luda_mul((int)blockIdx.x, 32), ty);
#line 33 "golden.lua"
  if (((long long)(y) < out.shape[0]) && ((long long)(x) < out.shape[1])) {
#line 34 "golden.lua"
    out.data[(luda_check((long long)(y), out.shape[0], luda_bounds, 34, 0)) * out.strides[0] + (luda_check((long long)(x), out.shape[1], luda_bounds, 34, 1)) * out.strides[1]] = tile.data[(luda_check((long long)(tx), 32, luda_bounds, 34, 0)) * 33 + luda_check((long long)(ty), 33, luda_bounds, 34, 1)];
  }
}


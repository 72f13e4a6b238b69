#line 1 "luda_kind"
#line 1 "reduction 'l2norm' map"
static __device__ float l2norm_map_6b5e329c(float x, long long _j) {
#line 1 "reduction 'l2norm' map"
  return x * x;
}

#line 1 "reduction 'l2norm' reduce"
static __device__ float l2norm_reduce_ac1d37ed(float a, float b) {
#line 1 "reduction 'l2norm' reduce"
  return a + b;
}

#line 1 "reduction 'l2norm' post"
static __device__ float l2norm_post_adde5299(float a) {
#line 1 "reduction 'l2norm' post"
  float y = 0.0f;
#line 1 "reduction 'l2norm' post"
  {
#line 1 "reduction 'l2norm' post"
    y = sqrtf(a);
  }
#line 2 "reduction 'l2norm' post"
  return y;
}

#line 1 "reduction 'l2norm' identity"
static __device__ float l2norm_identity_cafe63e1() {
#line 1 "reduction 'l2norm' identity"
  return 0.0f;
}

#line 1 "luda_reduction"
#define LUDA_K_KDIM 1
#define LUDA_K_RDIM 1
#define LUDA_K_VEC 1
#define LUDA_K_WARP 0
#define LUDA_K_GENERAL 0
#define LUDA_K_ORDERED 1
typedef float luda_R;
LUDA_INLINE luda_R luda_k_identity() { return luda_cvt<luda_R>(l2norm_identity_cafe63e1()); }
LUDA_INLINE luda_R luda_k_reduce(luda_R a, luda_R b) { return luda_cvt<luda_R>(l2norm_reduce_ac1d37ed(a, b)); }
LUDA_INLINE luda_R luda_k_partial(luda_R* p, long long i) { return luda_volatile_load((volatile luda_R*)p + i); }
struct luda_k_in { alignas(8) luda_rop<const float, 1, 1> a0; };
struct luda_k_out { luda_kop<float, 1> o0; };
struct luda_k_row { char luda_unused; const float* p0; };
LUDA_INLINE luda_k_row luda_k_row_at(const luda_k_in& in, const luda_kshape<1>& ks, long long row) {
  long long c[1];
  luda_k_coords<1>(row, ks.shape, c);
  luda_k_row r;
  r.luda_unused = 0;
  r.p0 = in.a0.data + luda_k_dot<1>(c, in.a0.ks);
  return r;
}
LUDA_INLINE luda_R luda_k_map_row(const luda_k_in& in, const luda_k_row& r, long long j) {
  return luda_cvt<luda_R>(l2norm_map_6b5e329c(luda_cvt<float>(r.p0[j]), (long long)(j)));
}
LUDA_INLINE void luda_k_store(const luda_k_in& in, const luda_k_out& out, const luda_kshape<1>& ks, long long row, luda_R a) {
  (void)in;
  long long c[1];
  luda_k_coords<1>(row, ks.shape, c);
  out.o0.data[luda_k_dot<1>(c, out.o0.strides)] = luda_cvt<float>(l2norm_post_adde5299(a));
}
#line 1 "luda_reduce_combine"
template <class T> LUDA_INLINE T luda_k_shfl_down(T v, int d) {
  if constexpr (sizeof(T) <= 4) {
    union { T t; int i; } u;
    u.i = 0;
    u.t = v;
    u.i = __shfl_down_sync(0xffffffffu, u.i, d);
    return u.t;
  } else if constexpr (sizeof(T) <= 8) {
    union { T t; long long i; } u;
    u.t = v;
    u.i = __shfl_down_sync(0xffffffffu, u.i, d);
    return u.t;
  } else {  // several accumulators (a struct): word by word
    union { T t; int i[(sizeof(T) + 3) / 4]; } u;
    u.t = v;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(T) + 3) / 4; ++k) u.i[k] = __shfl_down_sync(0xffffffffu, u.i[k], d);
    return u.t;
  }
}
LUDA_INLINE luda_R luda_k_warp_reduce(luda_R v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = luda_k_reduce(v, luda_k_shfl_down(v, d));
  return v;
}
// The block's value in thread 0. Every thread of the block calls it.
LUDA_INLINE luda_R luda_k_block_reduce(luda_R v) {
  __shared__ luda_R luda_s[32];
  const int luda_w = threadIdx.x >> 5, luda_lane = threadIdx.x & 31;
  v = luda_k_warp_reduce(v);
  if (luda_lane == 0) luda_s[luda_w] = v;
  __syncthreads();
  if (luda_w == 0) v = luda_k_warp_reduce(luda_lane < (int)(blockDim.x >> 5) ? luda_s[luda_lane] : luda_k_identity());
  __syncthreads();  // luda_s is reused by the next call
  return v;
}
#line 1 "luda_reduce_rows"
extern "C" __global__ void __launch_bounds__(256) l2norm_bdfc38d8(const luda_k_launch luda_l, const luda_kshape<LUDA_K_KDIM> luda_ks,
    const luda_kshape<LUDA_K_RDIM> luda_rs, const luda_k_in luda_in, const luda_k_out luda_out, luda_R* luda_partials,
    unsigned* luda_counters) {
#if LUDA_K_WARP
  const int luda_t = threadIdx.x & 31;
  const long long luda_lanes = 32;
  const long long luda_row = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (luda_row >= luda_l.rows) return;  // a whole warp
#else
  const int luda_t = threadIdx.x;
  const long long luda_lanes = blockDim.x;
  const long long luda_row = blockIdx.x;
#endif
  const long long luda_j0 = (long long)blockIdx.y * luda_l.seg;
  const long long luda_j1 = luda_l.len < luda_j0 + luda_l.seg ? luda_l.len : luda_j0 + luda_l.seg;
  const luda_k_row luda_r = luda_k_row_at(luda_in, luda_ks, luda_row);
  luda_R luda_acc = luda_k_identity();
  // Four steps per trip into four accumulators, with no branch between them: the four
  // loads of a trip are all in flight at once. (`#pragma unroll 4` on the plain loop keeps a
  // bound check after each step, and ptxas then issues one load at a time: 0.89 of copy
  // for a full float32 sum, against 0.95 with this form.) reduce is associative and
  // commutative, and the order stays fixed, so results are deterministic.
  luda_R luda_a1 = luda_acc, luda_a2 = luda_acc, luda_a3 = luda_acc;
#if LUDA_K_GENERAL
  long long luda_j = luda_j0 + luda_t;
  for (; luda_j + 3 * luda_lanes < luda_j1; luda_j += 4 * luda_lanes) {
    luda_acc = luda_k_reduce(luda_acc, luda_k_map_gen(luda_in, luda_r, luda_rs, luda_j));
    luda_a1 = luda_k_reduce(luda_a1, luda_k_map_gen(luda_in, luda_r, luda_rs, luda_j + luda_lanes));
    luda_a2 = luda_k_reduce(luda_a2, luda_k_map_gen(luda_in, luda_r, luda_rs, luda_j + 2 * luda_lanes));
    luda_a3 = luda_k_reduce(luda_a3, luda_k_map_gen(luda_in, luda_r, luda_rs, luda_j + 3 * luda_lanes));
  }
  for (; luda_j < luda_j1; luda_j += luda_lanes)
    luda_acc = luda_k_reduce(luda_acc, luda_k_map_gen(luda_in, luda_r, luda_rs, luda_j));
#else
#if LUDA_K_VEC > 1
  // Segments start at multiples of LUDA_K_VEC: whole vectors, then the row's tail.
  const long long luda_v1 = luda_j1 / LUDA_K_VEC;
  long long luda_v = luda_j0 / LUDA_K_VEC + luda_t;
  for (; luda_v + 3 * luda_lanes < luda_v1; luda_v += 4 * luda_lanes) {
    luda_acc = luda_k_map_vec(luda_acc, luda_in, luda_r, luda_v);
    luda_a1 = luda_k_map_vec(luda_a1, luda_in, luda_r, luda_v + luda_lanes);
    luda_a2 = luda_k_map_vec(luda_a2, luda_in, luda_r, luda_v + 2 * luda_lanes);
    luda_a3 = luda_k_map_vec(luda_a3, luda_in, luda_r, luda_v + 3 * luda_lanes);
  }
  for (; luda_v < luda_v1; luda_v += luda_lanes) luda_acc = luda_k_map_vec(luda_acc, luda_in, luda_r, luda_v);
  const long long luda_jt = luda_v1 * LUDA_K_VEC > luda_j0 ? luda_v1 * LUDA_K_VEC : luda_j0;
  long long luda_j = luda_jt + luda_t;
#else
  long long luda_j = luda_j0 + luda_t;
  for (; luda_j + 3 * luda_lanes < luda_j1; luda_j += 4 * luda_lanes) {
    luda_acc = luda_k_reduce(luda_acc, luda_k_map_row(luda_in, luda_r, luda_j));
    luda_a1 = luda_k_reduce(luda_a1, luda_k_map_row(luda_in, luda_r, luda_j + luda_lanes));
    luda_a2 = luda_k_reduce(luda_a2, luda_k_map_row(luda_in, luda_r, luda_j + 2 * luda_lanes));
    luda_a3 = luda_k_reduce(luda_a3, luda_k_map_row(luda_in, luda_r, luda_j + 3 * luda_lanes));
  }
#endif
  for (; luda_j < luda_j1; luda_j += luda_lanes)
    luda_acc = luda_k_reduce(luda_acc, luda_k_map_row(luda_in, luda_r, luda_j));
#endif
  luda_acc = luda_k_reduce(luda_k_reduce(luda_acc, luda_a1), luda_k_reduce(luda_a2, luda_a3));
#if LUDA_K_WARP
  luda_acc = luda_k_warp_reduce(luda_acc);
  if (luda_t == 0) luda_k_store(luda_in, luda_out, luda_ks, luda_row, luda_acc);
#else
  luda_acc = luda_k_block_reduce(luda_acc);
  if (gridDim.y == 1) {
    if (luda_t == 0) luda_k_store(luda_in, luda_out, luda_ks, luda_row, luda_acc);
    return;
  }
  __shared__ bool luda_last;
  if (luda_t == 0) {
    luda_partials[luda_row * gridDim.y + blockIdx.y] = luda_acc;
    __threadfence();
    luda_last = atomicInc(&luda_counters[luda_row], gridDim.y - 1) == gridDim.y - 1;
  }
  __syncthreads();
  if (!luda_last) return;
  __threadfence();
  luda_acc = luda_k_identity();
  for (unsigned luda_k = luda_t; luda_k < gridDim.y; luda_k += blockDim.x)
    luda_acc = luda_k_reduce(luda_acc, luda_k_partial(luda_partials, luda_row * gridDim.y + luda_k));
  luda_acc = luda_k_block_reduce(luda_acc);
  if (luda_t == 0) luda_k_store(luda_in, luda_out, luda_ks, luda_row, luda_acc);
#endif
}

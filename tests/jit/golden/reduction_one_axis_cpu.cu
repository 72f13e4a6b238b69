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
LUDA_INLINE luda_R luda_k_map_col(const luda_k_in& in, const luda_k_row& r, int e, long long j) {
  (void)e;
  return luda_cvt<luda_R>(l2norm_map_6b5e329c(luda_cvt<float>(r.p0[e + j * in.a0.rs[0]]), (long long)(j)));
}
LUDA_INLINE void luda_k_store(const luda_k_in& in, const luda_k_out& out, const luda_kshape<1>& ks, long long row, luda_R a) {
  (void)in;
  long long c[1];
  luda_k_coords<1>(row, ks.shape, c);
  out.o0.data[luda_k_dot<1>(c, out.o0.strides)] = luda_cvt<float>(l2norm_post_adde5299(a));
}
#line 1 "luda_reduce_order_cpu"
#define LUDA_K_LEAF 128
#if LUDA_K_GENERAL
#define LUDA_K_MAP(j) luda_k_map_gen(luda_in, luda_r, luda_rs, (j))
#else
#define LUDA_K_MAP(j) luda_k_map_row(luda_in, luda_r, (j))
#endif
LUDA_INLINE luda_R luda_k_lanes(const luda_R* luda_a) {
  return luda_k_reduce(luda_k_reduce(luda_k_reduce(luda_a[0], luda_a[1]), luda_k_reduce(luda_a[2], luda_a[3])),
                       luda_k_reduce(luda_k_reduce(luda_a[4], luda_a[5]), luda_k_reduce(luda_a[6], luda_a[7])));
}
// Values pushed in index order combine as the perfect binary tree over their indices: a
// binary counter whose level k holds the value of the last complete run of 2^k of them.
struct luda_k_pairwise { luda_R luda_s[48]; long long luda_n; int luda_top; };
LUDA_INLINE void luda_k_start(luda_k_pairwise& luda_p) { luda_p.luda_n = 0; luda_p.luda_top = 0; }
LUDA_INLINE void luda_k_push(luda_k_pairwise& luda_p, luda_R luda_v) {
  for (long long luda_k = luda_p.luda_n; luda_k & 1; luda_k >>= 1)
    luda_v = luda_k_reduce(luda_p.luda_s[--luda_p.luda_top], luda_v);
  luda_p.luda_s[luda_p.luda_top++] = luda_v;
  ++luda_p.luda_n;
}
LUDA_INLINE luda_R luda_k_fold(const luda_k_pairwise& luda_p) {
  if (luda_p.luda_top == 0) return luda_k_identity();
  luda_R luda_v = luda_p.luda_s[luda_p.luda_top - 1];
  for (int luda_k = luda_p.luda_top - 2; luda_k >= 0; --luda_k) luda_v = luda_k_reduce(luda_p.luda_s[luda_k], luda_v);
  return luda_v;
}
#line 1 "luda_reduce_columns_cpu"
#define LUDA_K_TILE 32
LUDA_CPU_EXPORT void l2norm_171162ba_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {
  *luda_cpu_current_slot() = luda_t;
  const luda_k_launch& luda_l = *(const luda_k_launch*)luda_args[0];
  const luda_kshape<LUDA_K_KDIM>& luda_ks = *(const luda_kshape<LUDA_K_KDIM>*)luda_args[1];
  const luda_kshape<LUDA_K_RDIM>& luda_rs = *(const luda_kshape<LUDA_K_RDIM>*)luda_args[2];
  const luda_k_in& luda_in = *(const luda_k_in*)luda_args[3];
  const luda_k_out& luda_out = *(const luda_k_out*)luda_args[4];
  luda_R* const luda_partials = *(luda_R* const*)luda_args[5];
  unsigned* const luda_counters = *(unsigned* const*)luda_args[6];
  (void)luda_rs;
  const long long luda_j0 = (long long)blockIdx.y * luda_l.seg;
  const long long luda_j1 = luda_l.len < luda_j0 + luda_l.seg ? luda_l.len : luda_j0 + luda_l.seg;
  const long long luda_row0 = (long long)blockIdx.x * luda_l.rows_per_block;
  const long long luda_row1 = luda_l.rows < luda_row0 + luda_l.rows_per_block ? luda_l.rows : luda_row0 + luda_l.rows_per_block;
  for (long long luda_cc = luda_row0; luda_cc < luda_row1; luda_cc += LUDA_K_TILE) {
    const int luda_w = (int)(luda_row1 - luda_cc < LUDA_K_TILE ? luda_row1 - luda_cc : LUDA_K_TILE);
    const luda_k_row luda_r = luda_k_row_at(luda_in, luda_ks, luda_cc);
    luda_R luda_acc[LUDA_K_TILE];
#if LUDA_K_ORDERED
    luda_k_pairwise luda_p[LUDA_K_TILE];
    for (int luda_e = 0; luda_e < luda_w; ++luda_e) luda_k_start(luda_p[luda_e]);
    for (long long luda_j = luda_j0; luda_j < luda_j1; luda_j += LUDA_K_LEAF) {
      const long long luda_je = luda_j1 < luda_j + LUDA_K_LEAF ? luda_j1 : luda_j + LUDA_K_LEAF;
      luda_R luda_a[8][LUDA_K_TILE];
      for (int luda_q = 0; luda_q < 8; ++luda_q)
        for (int luda_e = 0; luda_e < luda_w; ++luda_e) luda_a[luda_q][luda_e] = luda_k_identity();
      for (long long luda_k = luda_j; luda_k < luda_je; ++luda_k) {
        luda_R* const luda_lane = luda_a[(luda_k - luda_j) & 7];
        for (int luda_e = 0; luda_e < luda_w; ++luda_e)
          luda_lane[luda_e] = luda_k_reduce(luda_lane[luda_e], luda_k_map_col(luda_in, luda_r, luda_e, luda_k));
      }
      for (int luda_e = 0; luda_e < luda_w; ++luda_e) {
        luda_R luda_v[8];
        for (int luda_q = 0; luda_q < 8; ++luda_q) luda_v[luda_q] = luda_a[luda_q][luda_e];
        luda_k_push(luda_p[luda_e], luda_k_lanes(luda_v));
      }
    }
    for (int luda_e = 0; luda_e < luda_w; ++luda_e) luda_acc[luda_e] = luda_k_fold(luda_p[luda_e]);
#else
    for (int luda_e = 0; luda_e < luda_w; ++luda_e) luda_acc[luda_e] = luda_k_identity();
    for (long long luda_j = luda_j0; luda_j < luda_j1; ++luda_j)
      for (int luda_e = 0; luda_e < luda_w; ++luda_e)
        luda_acc[luda_e] = luda_k_reduce(luda_acc[luda_e], luda_k_map_col(luda_in, luda_r, luda_e, luda_j));
#endif
    for (int luda_e = 0; luda_e < luda_w; ++luda_e) {
      if (gridDim.y == 1) luda_k_store(luda_in, luda_out, luda_ks, luda_cc + luda_e, luda_acc[luda_e]);
      else luda_partials[(long long)blockIdx.y * luda_l.rows + luda_cc + luda_e] = luda_acc[luda_e];
    }
  }
  if (gridDim.y == 1) return;
  __threadfence();
  if (atomicInc(&luda_counters[blockIdx.x], gridDim.y - 1) != gridDim.y - 1) return;
  __threadfence();
  for (long long luda_c = luda_row0; luda_c < luda_row1; ++luda_c) {
    luda_k_pairwise luda_p;
    luda_k_start(luda_p);
    for (unsigned luda_k = 0; luda_k < gridDim.y; ++luda_k)
      luda_k_push(luda_p, luda_k_partial(luda_partials, (long long)luda_k * luda_l.rows + luda_c));
    luda_k_store(luda_in, luda_out, luda_ks, luda_c, luda_k_fold(luda_p));
  }
}
LUDA_CPU_EXPORT void l2norm_171162ba_cpu(void* const* luda_args) { l2norm_171162ba_cpu_block(luda_args, luda_cpu_self()); }
extern "C" { LUDA_CPU_VISIBLE int l2norm_171162ba_cpu_needs_fibers = 0; }

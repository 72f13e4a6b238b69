// The cpu target's reduction skeletons (jit/kinds/templates.cpp puts them around a kind's
// glue): the block's arguments, the fixed order of float reductions, rows and columns.
#pragma once

#include <string_view>

namespace luda::jit::cpu_reduction {

// The cpu target's reductions: a block is one thread with a tile of rows (rows_per_block)
// and one segment of the reduced range (gridDim.y segments finish as on cuda).
inline constexpr std::string_view kCpuArgs = R"cu(  *luda_cpu_current_slot() = luda_t;
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
)cu";

// The order in which the cpu target combines the values of a reduction whose accumulators
// round (floats and complex numbers; LUDA_K_ORDERED): one that depends on the reduced
// length alone, so that the result is the same for any thread count and any split of the
// work (docs/kinds.md, "The order of a reduction"). The reduced range is cut into leaves
// of LUDA_K_LEAF elements; a leaf is 8 lanes (lane l takes elements l, l + 8, ..., each
// from the identity), then ((0+1)+(2+3))+((4+5)+(6+7)), as NumPy's pairwise sum does with
// its blocks of 128; the leaves combine in the perfect binary tree over their indices, a
// missing subtree skipped (luda_k_pairwise). A segment (gridDim.y > 1) is an aligned run
// of 2^k leaves, a subtree of that tree, so that its partial continues the same tree.
inline constexpr std::string_view kCpuOrdered = R"cu(#line 1 "luda_reduce_order_cpu"
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
)cu";

inline constexpr std::string_view kCpuRows = R"cu(#line 1 "luda_reduce_rows_cpu"
LUDA_CPU_EXPORT void LUDA_K_ENTRY_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {
LUDA_K_CPU_ARGS
  for (long long luda_row = luda_row0; luda_row < luda_row1; ++luda_row) {
    const luda_k_row luda_r = luda_k_row_at(luda_in, luda_ks, luda_row);
#if LUDA_K_ORDERED
    luda_k_pairwise luda_p;
    luda_k_start(luda_p);
    for (long long luda_j = luda_j0; luda_j < luda_j1; luda_j += LUDA_K_LEAF) {
      luda_R luda_a[8];
      for (int luda_e = 0; luda_e < 8; ++luda_e) luda_a[luda_e] = luda_k_identity();
      if (luda_j + LUDA_K_LEAF <= luda_j1) {
        for (int luda_i = 0; luda_i < LUDA_K_LEAF; luda_i += 8)
          for (int luda_e = 0; luda_e < 8; ++luda_e)
            luda_a[luda_e] = luda_k_reduce(luda_a[luda_e], LUDA_K_MAP(luda_j + luda_i + luda_e));
      } else {
        for (long long luda_k = luda_j; luda_k < luda_j1; ++luda_k)
          luda_a[(luda_k - luda_j) & 7] = luda_k_reduce(luda_a[(luda_k - luda_j) & 7], LUDA_K_MAP(luda_k));
      }
      luda_k_push(luda_p, luda_k_lanes(luda_a));
    }
    const luda_R luda_acc = luda_k_fold(luda_p);
#else
    // Exact reductions (integers, booleans, min and max): any order gives the same value,
    // and one accumulator, which GCC vectorizes. (GCC 12 miscompiles a vectorized loop of
    // four accumulators for integer sums of narrower elements, at -O2 with the cheap cost
    // model and at -O3: ones(64, "int8") summed to 280, not 2016.)
    luda_R luda_acc = luda_k_identity();
    for (long long luda_j = luda_j0; luda_j < luda_j1; ++luda_j) luda_acc = luda_k_reduce(luda_acc, LUDA_K_MAP(luda_j));
#endif
    if (gridDim.y == 1) luda_k_store(luda_in, luda_out, luda_ks, luda_row, luda_acc);
    else luda_partials[luda_row * gridDim.y + blockIdx.y] = luda_acc;
  }
  if (gridDim.y == 1) return;
  // Split rows come one per block; the segments' partials continue the tree in index order.
  __threadfence();
  if (atomicInc(&luda_counters[luda_row0], gridDim.y - 1) != gridDim.y - 1) return;
  __threadfence();
  luda_k_pairwise luda_p;
  luda_k_start(luda_p);
  for (unsigned luda_k = 0; luda_k < gridDim.y; ++luda_k)
    luda_k_push(luda_p, luda_k_partial(luda_partials, luda_row0 * gridDim.y + luda_k));
  luda_k_store(luda_in, luda_out, luda_ks, luda_row0, luda_k_fold(luda_p));
}
)cu";

// Columns: tiles of LUDA_K_TILE outputs, whose inner loops run along contiguous memory (and
// vectorize); each output's values in the order above.
inline constexpr std::string_view kCpuColumns = R"cu(#line 1 "luda_reduce_columns_cpu"
#define LUDA_K_TILE 32
LUDA_CPU_EXPORT void LUDA_K_ENTRY_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {
LUDA_K_CPU_ARGS
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
)cu";

}  // namespace luda::jit::cpu_reduction

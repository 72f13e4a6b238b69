#include "jit/kinds/templates.h"

#include <cctype>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "dsl/device_function.h"
#include "dsl/infer.h"
#include "jit/compile/cpu_prelude.h"
#include "jit/kinds/cpu_reduction_text.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luda::jit {
namespace {

using Kind = KindOperand::Kind;

// What every kind program holds after the target's prelude: vectors for 16-byte loads,
// the strided operand structs of the ABI (kind_templates.h), index arithmetic.
constexpr std::string_view kKindPrelude = R"cu(#line 1 "luda_kinds"
template <class T, int V> struct alignas(sizeof(T) * V) luda_vec { T v[V]; };
template <int N> struct luda_kshape { long long shape[N]; };
template <class T, int N> struct luda_kop { T* data; long long strides[N]; };
template <class T, int K, int R> struct luda_rop { T* data; long long ks[K]; long long rs[R]; };
struct luda_k_launch { long long rows, len, seg, rows_per_block; };
// The C-order coordinates of flat index i, and an offset from coordinates and strides.
template <int N> LUDA_INLINE void luda_k_coords(long long i, const long long* shape, long long* c) {
#pragma unroll
  for (int k = N - 1; k > 0; --k) { c[k] = i % shape[k]; i /= shape[k]; }
  c[0] = i;
}
template <int N> LUDA_INLINE long long luda_k_dot(const long long* c, const long long* s) {
  long long o = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) o += c[k] * s[k];
  return o;
}
)cu";

// The cuda reductions' warp and block combining: shuffles down the warp, then one value
// per warp through shared memory.
constexpr std::string_view kCudaCombine = R"cu(#line 1 "luda_reduce_combine"
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
)cu";

// Rows and General on cuda: a warp (LUDA_K_WARP) or a block per output row; a row split
// over gridDim.y segments finishes in its last block.
constexpr std::string_view kCudaRows = R"cu(#line 1 "luda_reduce_rows"
extern "C" __global__ void __launch_bounds__(256) LUDA_K_ENTRY(const luda_k_launch luda_l, const luda_kshape<LUDA_K_KDIM> luda_ks,
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
)cu";

// Columns on cuda: blocks of 32 x 8 threads; a thread owns LUDA_K_VEC neighbouring outputs
// (one vector load per reduced index), the 8 thread rows walk the reduced axis together,
// and gridDim.y segments of it finish in the last block of their column group.
constexpr std::string_view kCudaColumns = R"cu(#line 1 "luda_reduce_columns"
extern "C" __global__ void __launch_bounds__(256) LUDA_K_ENTRY(const luda_k_launch luda_l, const luda_kshape<LUDA_K_KDIM> luda_ks,
    const luda_kshape<LUDA_K_RDIM> luda_rs, const luda_k_in luda_in, const luda_k_out luda_out, luda_R* luda_partials,
    unsigned* luda_counters) {
  const int luda_tx = threadIdx.x, luda_ty = threadIdx.y;
  const long long luda_c = ((long long)blockIdx.x * 32 + luda_tx) * LUDA_K_VEC;
  const long long luda_j0 = (long long)blockIdx.y * luda_l.seg;
  const long long luda_j1 = luda_l.len < luda_j0 + luda_l.seg ? luda_l.len : luda_j0 + luda_l.seg;
  luda_R luda_acc[LUDA_K_VEC];
#pragma unroll
  for (int luda_e = 0; luda_e < LUDA_K_VEC; ++luda_e) luda_acc[luda_e] = luda_k_identity();
  if (luda_c < luda_l.rows) {
    const luda_k_row luda_r = luda_k_row_at(luda_in, luda_ks, luda_c);
#if LUDA_K_VEC > 1
    if (luda_c + LUDA_K_VEC <= luda_l.rows) {
#pragma unroll 4
      for (long long luda_j = luda_j0 + luda_ty; luda_j < luda_j1; luda_j += 8) luda_k_map_colvec(luda_acc, luda_in, luda_r, luda_j);
    } else
#endif
    {
#pragma unroll 4
      for (long long luda_j = luda_j0 + luda_ty; luda_j < luda_j1; luda_j += 8)
        for (int luda_e = 0; luda_e < LUDA_K_VEC && luda_c + luda_e < luda_l.rows; ++luda_e)
          luda_acc[luda_e] = luda_k_reduce(luda_acc[luda_e], luda_k_map_col(luda_in, luda_r, luda_e, luda_j));
    }
  }
  __shared__ luda_R luda_s[8][32 * LUDA_K_VEC];
  __shared__ bool luda_last;
#pragma unroll
  for (int luda_e = 0; luda_e < LUDA_K_VEC; ++luda_e) luda_s[luda_ty][luda_tx * LUDA_K_VEC + luda_e] = luda_acc[luda_e];
  __syncthreads();
  if (luda_ty == 0)
    for (int luda_y = 1; luda_y < 8; ++luda_y)
#pragma unroll
      for (int luda_e = 0; luda_e < LUDA_K_VEC; ++luda_e)
        luda_acc[luda_e] = luda_k_reduce(luda_acc[luda_e], luda_s[luda_y][luda_tx * LUDA_K_VEC + luda_e]);
  if (gridDim.y == 1) {
    if (luda_ty == 0)
      for (int luda_e = 0; luda_e < LUDA_K_VEC && luda_c + luda_e < luda_l.rows; ++luda_e)
        luda_k_store(luda_in, luda_out, luda_ks, luda_c + luda_e, luda_acc[luda_e]);
    return;
  }
  if (luda_ty == 0) {
    for (int luda_e = 0; luda_e < LUDA_K_VEC && luda_c + luda_e < luda_l.rows; ++luda_e)
      luda_partials[(long long)blockIdx.y * luda_l.rows + luda_c + luda_e] = luda_acc[luda_e];
    __threadfence();
  }
  __syncthreads();
  if (luda_tx == 0 && luda_ty == 0) luda_last = atomicInc(&luda_counters[blockIdx.x], gridDim.y - 1) == gridDim.y - 1;
  __syncthreads();
  if (!luda_last) return;
  __threadfence();
#pragma unroll
  for (int luda_e = 0; luda_e < LUDA_K_VEC; ++luda_e) luda_acc[luda_e] = luda_k_identity();
  for (unsigned luda_k = luda_ty; luda_k < gridDim.y; luda_k += 8)
    for (int luda_e = 0; luda_e < LUDA_K_VEC && luda_c + luda_e < luda_l.rows; ++luda_e)
      luda_acc[luda_e] = luda_k_reduce(luda_acc[luda_e],
                                       luda_k_partial(luda_partials, (long long)luda_k * luda_l.rows + luda_c + luda_e));
#pragma unroll
  for (int luda_e = 0; luda_e < LUDA_K_VEC; ++luda_e) luda_s[luda_ty][luda_tx * LUDA_K_VEC + luda_e] = luda_acc[luda_e];
  __syncthreads();
  if (luda_ty != 0) return;
  for (int luda_y = 1; luda_y < 8; ++luda_y)
#pragma unroll
    for (int luda_e = 0; luda_e < LUDA_K_VEC; ++luda_e)
      luda_acc[luda_e] = luda_k_reduce(luda_acc[luda_e], luda_s[luda_y][luda_tx * LUDA_K_VEC + luda_e]);
  for (int luda_e = 0; luda_e < LUDA_K_VEC && luda_c + luda_e < luda_l.rows; ++luda_e)
    luda_k_store(luda_in, luda_out, luda_ks, luda_c + luda_e, luda_acc[luda_e]);
}
)cu";

// The cpu entry points runtime/cpu_abi.h asks for, around <entry>_cpu_block.
constexpr std::string_view kCpuEntries =
    R"cu(LUDA_CPU_EXPORT void LUDA_K_ENTRY_cpu(void* const* luda_args) { LUDA_K_ENTRY_cpu_block(luda_args, luda_cpu_self()); }
extern "C" { LUDA_CPU_VISIBLE int LUDA_K_ENTRY_cpu_needs_fibers = 0; }
)cu";

const char* c_of(dsl::Scalar s) { return dsl::scalar_c_type(s); }

std::string raw_c_type(const dsl::Type& t) { return fmt::format("luda_Array<{}, {}>", c_of(t.scalar), t.ndim); }

std::string prelude(dsl::Target target) {
  std::string out = target == dsl::Target::Cpu ? std::string(cpu_generated_prelude()) : dsl::device_prelude();
  out += kKindPrelude;
  return out;
}

// A C identifier from the kind's name, then a hash of the generated text.
// GCC's -O2 vectorizes only loops whose trip count needs no scalar epilogue ("very-cheap"
// cost model): the cpu kinds' loops over a tile want the "cheap" one. (Clang vectorizes
// at -O2 already and ignores the pragma.)
constexpr std::string_view kCpuVectorize = R"cu(#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=cheap")
#endif
)cu";

KindSource finish(std::string_view name, dsl::Target target, std::string body) {
  std::string id = dsl::c_identifier(name);
  auto h = static_cast<std::uint32_t>(XXH3_64bits(body.data(), body.size()));
  KindSource out;
  out.entry = fmt::format("{}_{:08x}", id, h);
  for (std::size_t at = body.find("LUDA_K_ENTRY"); at != std::string::npos; at = body.find("LUDA_K_ENTRY", at))
    body.replace(at, 12, out.entry);
  out.code = prelude(target);
  if (target == dsl::Target::Cpu) out.code += kCpuVectorize;
  out.code += "#line 1 \"luda_kind\"\n";
  out.code += body;
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// elementwise

// Where one element's operands are: expressions for input k's element (arrays), output k's
// current value and its place, and the flat index.
struct ElementAccess {
  std::function<std::string(std::size_t)> input, read, write;
  std::string index;
};

// One element: the element function called on the operands, its results stored.
std::string element_statement(const ElementCode& c, const ElementwiseTemplate& t, const ElementAccess& a) {
  std::vector<std::string> args;
  for (std::size_t k = 0; k < t.inputs.size(); ++k) {
    if (t.inputs[k].kind == Kind::Array)
      args.push_back(fmt::format("luda_cvt<{}>({})", c_of(c.params[k].scalar), a.input(k)));
    else args.push_back(fmt::format("luda_in{}", k));
  }
  for (std::size_t k = 0; k < t.outputs.size(); ++k)
    if (t.out_read[k]) args.push_back(a.read(k));
  if (t.index_args) {
    args.push_back(fmt::format("(long long)({})", a.index));
    args.push_back("luda_n");
  }
  if (c.bounds_record) args.push_back("luda_bounds");
  std::string call = fmt::format("{}({})", c.call, join(args));
  if (t.outputs.empty()) return call + ";";
  if (t.outputs.size() == 1) return fmt::format("{} = luda_cvt<{}>({});", a.write(0), c_of(t.outputs[0]), call);
  std::string out = fmt::format("{{ const auto luda_r = {};", call);
  for (std::size_t k = 0; k < t.outputs.size(); ++k)
    out += fmt::format(" {} = luda_cvt<{}>(luda_r.v{});", a.write(k), c_of(t.outputs[k]), k);
  return out + " }";
}

// The kernel's parameters (type, name), in the ABI's order.
std::vector<std::pair<std::string, std::string>> elementwise_params(const ElementCode& c,
                                                                    const ElementwiseTemplate& t) {
  std::vector<std::pair<std::string, std::string>> p;
  const char* restrict_ = t.noalias ? " __restrict__" : "";
  if (!t.contiguous) p.emplace_back(fmt::format("luda_kshape<{}>", t.ndim), "luda_shape");
  for (std::size_t k = 0; k < t.inputs.size(); ++k) {
    const KindOperand& in = t.inputs[k];
    std::string type;
    if (in.kind == Kind::Raw) type = raw_c_type(in.raw);
    else if (in.kind == Kind::Scalar) type = c_of(c.params[k].scalar);
    else if (t.contiguous) type = fmt::format("const {}*{}", c_of(in.dtype), restrict_);
    else type = fmt::format("luda_kop<const {}, {}>", c_of(in.dtype), t.ndim);
    p.emplace_back(std::move(type), fmt::format("luda_in{}", k));
  }
  for (std::size_t k = 0; k < t.outputs.size(); ++k) {
    std::string type = t.contiguous ? fmt::format("{}*{}", c_of(t.outputs[k]), restrict_)
                                    : fmt::format("luda_kop<{}, {}>", c_of(t.outputs[k]), t.ndim);
    p.emplace_back(std::move(type), fmt::format("luda_out{}", k));
  }
  p.emplace_back("long long", "luda_n");
  if (c.bounds_record) p.emplace_back("luda_BoundsRecord*", "luda_bounds");
  return p;
}

std::string param_list(const std::vector<std::pair<std::string, std::string>>& params) {
  std::vector<std::string> parts;
  for (const auto& [type, name] : params) parts.push_back(fmt::format("{} const {}", type, name));
  return join(parts);
}

std::string cuda_contiguous(const ElementCode& c, const ElementwiseTemplate& t, const std::string& params) {
  std::string s = fmt::format("extern \"C\" __global__ void __launch_bounds__({}) LUDA_K_ENTRY({}) {{\n", kKindBlock,
                              params);
  s += "  const long long luda_tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  const long long luda_step = (long long)gridDim.x * blockDim.x;\n"
       "  long long luda_done = 0;\n";
  if (t.vector > 1) {
    int v = t.vector;
    s += fmt::format("  const long long luda_nv = luda_n / {};\n", v);
    s += "  for (long long luda_v = luda_tid; luda_v < luda_nv; luda_v += luda_step) {\n";
    for (std::size_t k = 0; k < t.inputs.size(); ++k)
      if (t.inputs[k].kind == Kind::Array)
        s += fmt::format("    const luda_vec<{0}, {1}> luda_x{2} = ((const luda_vec<{0}, {1}>*)luda_in{2})[luda_v];\n",
                         c_of(t.inputs[k].dtype), v, k);
    for (std::size_t k = 0; k < t.outputs.size(); ++k) {
      if (t.out_read[k])
        s += fmt::format("    const luda_vec<{0}, {1}> luda_y{2} = ((const luda_vec<{0}, {1}>*)luda_out{2})[luda_v];\n",
                         c_of(t.outputs[k]), v, k);
      s += fmt::format("    luda_vec<{}, {}> luda_z{};\n", c_of(t.outputs[k]), v, k);
    }
    ElementAccess a;
    a.input = [](std::size_t k) { return fmt::format("luda_x{}.v[luda_e]", k); };
    a.read = [](std::size_t k) { return fmt::format("luda_y{}.v[luda_e]", k); };
    a.write = [](std::size_t k) { return fmt::format("luda_z{}.v[luda_e]", k); };
    a.index = fmt::format("luda_v * {} + luda_e", v);
    s += fmt::format("#pragma unroll\n    for (int luda_e = 0; luda_e < {}; ++luda_e) {{\n      {}\n    }}\n", v,
                     element_statement(c, t, a));
    for (std::size_t k = 0; k < t.outputs.size(); ++k)
      s += fmt::format("    ((luda_vec<{0}, {1}>*)luda_out{2})[luda_v] = luda_z{2};\n", c_of(t.outputs[k]), v, k);
    s += "  }\n";
    s += fmt::format("  luda_done = luda_nv * {};\n", v);
  }
  ElementAccess a;
  a.input = [](std::size_t k) { return fmt::format("luda_in{}[luda_i]", k); };
  a.read = a.write = [](std::size_t k) { return fmt::format("luda_out{}[luda_i]", k); };
  a.index = "luda_i";
  s += fmt::format(
      "  for (long long luda_i = luda_done + luda_tid; luda_i < luda_n; luda_i += luda_step) {{\n    {}\n  }}\n}}\n",
      element_statement(c, t, a));
  return s;
}

// The offsets of each array operand for coordinates decomposed from `index`.
std::vector<std::string> array_operands(const ElementwiseTemplate& t) {
  std::vector<std::string> ops;
  for (std::size_t k = 0; k < t.inputs.size(); ++k)
    if (t.inputs[k].kind == Kind::Array) ops.push_back(fmt::format("luda_in{}", k));
  for (std::size_t k = 0; k < t.outputs.size(); ++k) ops.push_back(fmt::format("luda_out{}", k));
  return ops;
}

ElementAccess strided_access(std::string_view offset_suffix, std::string index) {
  ElementAccess a;
  std::string suffix(offset_suffix);
  a.input = [suffix](std::size_t k) { return fmt::format("luda_in{0}.data[luda_o_in{0}{1}]", k, suffix); };
  a.read = a.write = [suffix](std::size_t k) { return fmt::format("luda_out{0}.data[luda_o_out{0}{1}]", k, suffix); };
  a.index = std::move(index);
  return a;
}

std::string cuda_general(const ElementCode& c, const ElementwiseTemplate& t, const std::string& params) {
  const char* idx = t.index32 ? "unsigned" : "long long";
  std::string s = fmt::format("extern \"C\" __global__ void __launch_bounds__({}) LUDA_K_ENTRY({}) {{\n", kKindBlock,
                              params);
  s += fmt::format("  typedef {} luda_idx;\n", idx);
  s +=
      "  const luda_idx luda_step = (luda_idx)gridDim.x * blockDim.x;\n"
      "  for (luda_idx luda_i = (luda_idx)blockIdx.x * blockDim.x + threadIdx.x; luda_i < (luda_idx)luda_n; luda_i += luda_step) {\n"
      "    luda_idx luda_rem = luda_i, luda_c;\n    (void)luda_c;\n";
  std::vector<std::string> ops = array_operands(t);
  for (const std::string& op : ops) s += fmt::format("    long long luda_o_{} = 0;\n", op.substr(5));
  for (int axis = t.ndim - 1; axis > 0; --axis) {
    s += fmt::format(
        "    luda_c = luda_rem % (luda_idx)luda_shape.shape[{0}]; luda_rem /= (luda_idx)luda_shape.shape[{0}];\n",
        axis);
    for (const std::string& op : ops)
      s += fmt::format("    luda_o_{} += (long long)luda_c * {}.strides[{}];\n", op.substr(5), op, axis);
  }
  for (const std::string& op : ops)
    s += fmt::format("    luda_o_{} += (long long)luda_rem * {}.strides[0];\n", op.substr(5), op);
  s += fmt::format("    {}\n  }}\n}}\n", element_statement(c, t, strided_access("", "luda_i")));
  return s;
}

// The cpu block entry: unpacks the arguments and runs this block's tile of [0, n)
// through <entry>_range (a tile per block: elements in multiples of 16).
std::string cpu_block_entry(const ElementCode& c, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string s = "LUDA_CPU_EXPORT void LUDA_K_ENTRY_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {\n"
                  "  *luda_cpu_current_slot() = luda_t;\n";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& [type, name] = params[i];
    s += fmt::format("  {0} const {1} = *({0} const*)luda_args[{2}];\n", type, name, i);
    names.push_back(name);
  }
  s += "  const long long luda_g = gridDim.x;\n"
       "  const long long luda_per = ((luda_n + luda_g - 1) / luda_g + 15) / 16 * 16;\n"
       "  const long long luda_lo = (long long)blockIdx.x * luda_per;\n"
       "  const long long luda_hi = luda_lo + luda_per < luda_n ? luda_lo + luda_per : luda_n;\n"
       "  if (luda_lo >= luda_hi) return;\n";
  std::string call = fmt::format("LUDA_K_ENTRY_range({}, luda_lo, luda_hi);", join(names));
  // Only a failed bounds check throws (it ends the tile, as it ends a GPU thread).
  if (c.bounds_record) s += fmt::format("  try {{ {} }} catch (const luda_cpu_exit&) {{}}\n}}\n", call);
  else s += fmt::format("  {}\n}}\n", call);
  s += kCpuEntries;
  return s;
}

// Non-temporal stores for the cpu target: x86-64's movntdq, through GCC's builtin (no
// header: <immintrin.h> would cost more compile time than the kernel). A store that would
// first read its cache line (read-for-ownership) writes it whole instead: z = x*w+b over
// 64 MiB arrays moves 4 streams, not 5 (about 1.7x faster on the development VM).
constexpr std::string_view kCpuStreamStores = R"cu(#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LUDA_K_STREAM 1
typedef long long luda_v2di __attribute__((vector_size(16)));
#else
#define LUDA_K_STREAM 0
#endif
)cu";

// Contiguous on the cpu: a plain loop (the compiler vectorizes it). One output larger than
// the caches is computed 16 bytes at a time into a register and streamed out
// (kCpuStreamStores), unless the element function reads it.
std::string cpu_contiguous(const ElementCode& c, const ElementwiseTemplate& t, const std::string& params) {
  ElementAccess a;
  a.input = [](std::size_t k) { return fmt::format("luda_in{}[luda_i]", k); };
  a.read = a.write = [](std::size_t k) { return fmt::format("luda_out{}[luda_i]", k); };
  a.index = "luda_i";
  std::string plain = element_statement(c, t, a);
  std::string loop = fmt::format("  for (; luda_i < luda_hi; ++luda_i) {{\n    {}\n  }}\n", plain);
  if (t.outputs.size() != 1 || t.out_read[0])
    return fmt::format("static void LUDA_K_ENTRY_range({}, const long long luda_lo, const long long luda_hi) {{\n"
                       "  long long luda_i = luda_lo;\n{}}}\n",
                       params, loop);
  a.write = [](std::size_t) { return std::string("luda_tile[luda_i - luda_s]"); };
  std::string type = c_of(t.outputs[0]);
  return std::string(kCpuStreamStores) +
         fmt::format(
             "static void LUDA_K_ENTRY_range({0}, const long long luda_lo, const long long luda_hi) {{\n"
             "  long long luda_i = luda_lo;\n"
             "#if LUDA_K_STREAM\n"
             "  // Streamed when the output passes 8 MiB, well past what the caches would keep.\n"
             "  if (luda_n * (long long)sizeof({1}) >= (8ll << 20)) {{\n"
             "    for (; luda_i < luda_hi && ((unsigned long long)(luda_out0 + luda_i) & 15); ++luda_i) {{\n      {3}\n    }}\n"
             "    enum {{ kLudaV = 16 / sizeof({1}) }};\n"
             "    for (long long luda_s = luda_i; luda_s + kLudaV <= luda_hi; luda_s += kLudaV, luda_i = luda_s) {{\n"
             "      {1} luda_tile[kLudaV];\n"
             "      for (luda_i = luda_s; luda_i < luda_s + kLudaV; ++luda_i) {{\n        {2}\n      }}\n"
             "      luda_v2di luda_v;\n"
             "      __builtin_memcpy(&luda_v, luda_tile, 16);\n"
             "      __builtin_ia32_movntdq((luda_v2di*)(luda_out0 + luda_s), luda_v);\n"
             "    }}\n"
             "{4}"
             "    __builtin_ia32_sfence();  // the streamed lines are visible before the launch returns\n"
             "    return;\n"
             "  }}\n"
             "#endif\n"
             "{4}}}\n",
             params, type, element_statement(c, t, a), plain, loop);
}

// Strided on the cpu: coordinates are decomposed once per tile, then runs along the last
// axis advance the offsets (no division per element).
std::string cpu_general(const ElementCode& c, const ElementwiseTemplate& t, const std::string& params) {
  int d = t.ndim;
  std::vector<std::string> ops = array_operands(t);
  std::string s =
      fmt::format("static void LUDA_K_ENTRY_range({}, const long long luda_lo, const long long luda_hi) {{\n", params);
  s += fmt::format("  long long luda_c[{0}];\n  luda_k_coords<{0}>(luda_lo, luda_shape.shape, luda_c);\n", d);
  for (const std::string& op : ops) {
    std::string o = op.substr(5);
    s += fmt::format("  long long luda_o_{0} = luda_k_dot<{1}>(luda_c, {2}.strides);\n", o, d, op);
    s += fmt::format("  const long long luda_s_{0} = {1}.strides[{2}];\n", o, op, d - 1);
  }
  s += fmt::format("  const long long luda_last = luda_shape.shape[{}];\n", d - 1);
  s += "  long long luda_i = luda_lo;\n  while (luda_i < luda_hi) {\n";
  s += fmt::format("    long long luda_run = luda_last - luda_c[{}];\n", d - 1);
  s += "    if (luda_run > luda_hi - luda_i) luda_run = luda_hi - luda_i;\n"
       "    for (long long luda_q = 0; luda_q < luda_run; ++luda_q) {\n";
  ElementAccess a;
  a.input = [](std::size_t k) { return fmt::format("luda_in{0}.data[luda_o_in{0} + luda_q * luda_s_in{0}]", k); };
  a.read = a.write = [](std::size_t k) {
    return fmt::format("luda_out{0}.data[luda_o_out{0} + luda_q * luda_s_out{0}]", k);
  };
  a.index = "luda_i + luda_q";
  s += fmt::format("      {}\n    }}\n", element_statement(c, t, a));
  s += "    luda_i += luda_run;\n";
  for (const std::string& op : ops) s += fmt::format("    luda_o_{0} += luda_run * luda_s_{0};\n", op.substr(5));
  s += fmt::format("    luda_c[{}] += luda_run;\n", d - 1);
  s += fmt::format("    for (int luda_a = {}; luda_a > 0 && luda_c[luda_a] == luda_shape.shape[luda_a]; --luda_a) {{\n",
                   d - 1);
  s += "      luda_c[luda_a] = 0;\n      ++luda_c[luda_a - 1];\n";
  for (const std::string& op : ops)
    s += fmt::format("      luda_o_{0} += {1}.strides[luda_a - 1] - luda_shape.shape[luda_a] * {1}.strides[luda_a];\n",
                     op.substr(5), op);
  s += "    }\n  }\n}\n";
  return s;
}

}  // namespace

KindSource elementwise_source(const ElementCode& code, const ElementwiseTemplate& t, std::string_view name) {
  auto params = elementwise_params(code, t);
  std::string list = param_list(params);
  std::string body = code.functions;
  if (!body.empty() && body.back() != '\n') body += '\n';
  body += "#line 1 \"luda_elementwise\"\n";
  if (t.target == dsl::Target::Cpu) {
    body += t.contiguous ? cpu_contiguous(code, t, list) : cpu_general(code, t, list);
    body += cpu_block_entry(code, params);
  } else {
    body += t.contiguous ? cuda_contiguous(code, t, list) : cuda_general(code, t, list);
  }
  return finish(name, t.target, std::move(body));
}

// ---------------------------------------------------------------------------------------
// reductions

namespace {

std::string map_call(const ReductionCode& c, const ReductionTemplate& t,
                     const std::function<std::string(std::size_t)>& value, std::string_view j) {
  std::vector<std::string> args;
  for (std::size_t k = 0; k < t.inputs.size(); ++k) {
    if (t.inputs[k].kind == Kind::Array)
      args.push_back(fmt::format("luda_cvt<{}>({})", c_of(c.map_params[k].scalar), value(k)));
    else args.push_back(fmt::format("in.a{}", k));
  }
  args.push_back(fmt::format("(long long)({})", j));
  return fmt::format("{}({}({}))", c.accumulators.empty() ? "luda_cvt<luda_R>" : "luda_k_to_R", c.map, join(args));
}

// The glue the skeletons call: operand structs, row bases, map at an element, store.
std::string reduction_glue(const ReductionCode& c, const ReductionTemplate& t) {
  const int K = t.kept_ndim, R = t.reduced_ndim, V = t.vector;
  std::string s;
  if (c.accumulators.empty()) {
    s += fmt::format("typedef {} luda_R;\n", c_of(c.reduce_type));
    s += fmt::format("LUDA_INLINE luda_R luda_k_identity() {{ return luda_cvt<luda_R>({}()); }}\n", c.identity);
    s += fmt::format("LUDA_INLINE luda_R luda_k_reduce(luda_R a, luda_R b) {{ return luda_cvt<luda_R>({}(a, b)); }}\n",
                     c.reduce);
    s +=
        "LUDA_INLINE luda_R luda_k_partial(luda_R* p, long long i) { return luda_volatile_load((volatile luda_R*)p + i); }\n";
  } else {
    // One field per reduction, each with its own identity and reduce.
    std::string fields, identity, reduce, partial, to_r;
    for (std::size_t k = 0; k < c.accumulators.size(); ++k) {
      const ReductionCode::Accumulator& a = c.accumulators[k];
      fields += fmt::format(" {} v{};", c_of(a.type), k);
      identity += fmt::format(" r.v{} = luda_cvt<{}>({}());", k, c_of(a.type), a.identity);
      reduce += fmt::format(" r.v{0} = luda_cvt<{1}>({2}(a.v{0}, b.v{0}));", k, c_of(a.type), a.reduce);
      partial += fmt::format(" r.v{0} = luda_volatile_load(&((volatile luda_R*)p)[i].v{0});", k);
      to_r += fmt::format(" r.v{0} = luda_cvt<{1}>(t.v{0});", k, c_of(a.type));
    }
    s += fmt::format("struct luda_R {{{} }};\n", fields);
    s += fmt::format("LUDA_INLINE luda_R luda_k_identity() {{ luda_R r;{} return r; }}\n", identity);
    s += fmt::format("LUDA_INLINE luda_R luda_k_reduce(luda_R a, luda_R b) {{ luda_R r;{} return r; }}\n", reduce);
    s += fmt::format("LUDA_INLINE luda_R luda_k_partial(luda_R* p, long long i) {{ luda_R r;{} return r; }}\n",
                     partial);
    s += fmt::format("template <class T> LUDA_INLINE luda_R luda_k_to_R(const T& t) {{ luda_R r;{} return r; }}\n",
                     to_r);
  }
  s += "struct luda_k_in {";
  for (std::size_t k = 0; k < t.inputs.size(); ++k) {
    if (t.inputs[k].kind == Kind::Array)
      s += fmt::format(" alignas(8) luda_rop<const {}, {}, {}> a{};", c_of(t.inputs[k].dtype), K, R, k);
    else
      s += fmt::format(" alignas({}) {} a{};", dsl::scalar_bits(c.map_params[k].scalar) > 64 ? 16 : 8,
                       c_of(c.map_params[k].scalar), k);
  }
  s += " };\nstruct luda_k_out {";
  for (std::size_t k = 0; k < t.outputs.size(); ++k)
    s += fmt::format(" luda_kop<{}, {}> o{};", c_of(t.outputs[k]), K, k);
  s += " };\nstruct luda_k_row { char luda_unused;";
  for (std::size_t k = 0; k < t.inputs.size(); ++k)
    if (t.inputs[k].kind == Kind::Array) s += fmt::format(" const {}* p{};", c_of(t.inputs[k].dtype), k);
  s += " };\n";
  s += fmt::format(
      "LUDA_INLINE luda_k_row luda_k_row_at(const luda_k_in& in, const luda_kshape<{0}>& ks, long long row) {{\n"
      "  long long c[{0}];\n  luda_k_coords<{0}>(row, ks.shape, c);\n  luda_k_row r;\n  r.luda_unused = 0;\n",
      K);
  for (std::size_t k = 0; k < t.inputs.size(); ++k)
    if (t.inputs[k].kind == Kind::Array)
      s += fmt::format("  r.p{0} = in.a{0}.data + luda_k_dot<{1}>(c, in.a{0}.ks);\n", k, K);
  s += "  return r;\n}\n";
  auto bcast = [&](std::size_t k) { return t.inputs[k].broadcast; };
  switch (t.strategy) {
    case ReductionStrategy::Rows:
      s += fmt::format(
          "LUDA_INLINE luda_R luda_k_map_row(const luda_k_in& in, const luda_k_row& r, long long j) {{\n  return {};\n}}\n",
          map_call(
              c, t, [&](std::size_t k) { return fmt::format(fmt::runtime(bcast(k) ? "r.p{}[0]" : "r.p{}[j]"), k); },
              "j"));
      if (V > 1) {
        s +=
            "LUDA_INLINE luda_R luda_k_map_vec(luda_R acc, const luda_k_in& in, const luda_k_row& r, long long jv) {\n";
        for (std::size_t k = 0; k < t.inputs.size(); ++k) {
          if (t.inputs[k].kind != Kind::Array) continue;
          if (bcast(k)) s += fmt::format("  const {} x{} = r.p{}[0];\n", c_of(t.inputs[k].dtype), k, k);
          else
            s += fmt::format("  const luda_vec<{0}, {1}> x{2} = ((const luda_vec<{0}, {1}>*)r.p{2})[jv];\n",
                             c_of(t.inputs[k].dtype), V, k);
        }
        // The vector's values combine as a tree, then once into acc: one dependent step
        // on the accumulator per vector, not V.
        s += fmt::format("  luda_R m[{0}];\n#pragma unroll\n  for (int e = 0; e < {0}; ++e) m[e] = {1};\n"
                         "#pragma unroll\n  for (int w = 1; w < {0}; w *= 2)\n#pragma unroll\n"
                         "    for (int e = 0; e + w < {0}; e += 2 * w) m[e] = luda_k_reduce(m[e], m[e + w]);\n"
                         "  return luda_k_reduce(acc, m[0]);\n}}\n",
                         V,
                         map_call(
                             c, t,
                             [&](std::size_t k) { return fmt::format(fmt::runtime(bcast(k) ? "x{}" : "x{}.v[e]"), k); },
                             fmt::format("jv * {} + e", V)));
      }
      break;
    case ReductionStrategy::Columns:
      s += fmt::format(
          "LUDA_INLINE luda_R luda_k_map_col(const luda_k_in& in, const luda_k_row& r, int e, long long j) {{\n"
          "  (void)e;\n  return {};\n}}\n",
          map_call(
              c, t,
              [&](std::size_t k) {
                return fmt::format(fmt::runtime(bcast(k) ? "r.p{0}[j * in.a{0}.rs[0]]"
                                                         : "r.p{0}[e + j * in.a{0}.rs[0]]"),
                                   k);
              },
              "j"));
      if (V > 1) {
        s +=
            "LUDA_INLINE void luda_k_map_colvec(luda_R* acc, const luda_k_in& in, const luda_k_row& r, long long j) {\n";
        for (std::size_t k = 0; k < t.inputs.size(); ++k) {
          if (t.inputs[k].kind != Kind::Array) continue;
          if (bcast(k)) s += fmt::format("  const {0} x{1} = r.p{1}[j * in.a{1}.rs[0]];\n", c_of(t.inputs[k].dtype), k);
          else
            s += fmt::format(
                "  const luda_vec<{0}, {1}> x{2} = *(const luda_vec<{0}, {1}>*)(r.p{2} + j * in.a{2}.rs[0]);\n",
                c_of(t.inputs[k].dtype), V, k);
        }
        s += fmt::format("#pragma unroll\n  for (int e = 0; e < {}; ++e) acc[e] = luda_k_reduce(acc[e], {});\n}}\n", V,
                         map_call(
                             c, t,
                             [&](std::size_t k) { return fmt::format(fmt::runtime(bcast(k) ? "x{}" : "x{}.v[e]"), k); },
                             "j"));
      }
      break;
    case ReductionStrategy::General:
      s += fmt::format(
          "LUDA_INLINE luda_R luda_k_map_gen(const luda_k_in& in, const luda_k_row& r, const luda_kshape<{0}>& rs, long long j) {{\n"
          "  long long c[{0}];\n  luda_k_coords<{0}>(j, rs.shape, c);\n  return {1};\n}}\n",
          R,
          map_call(
              c, t, [&](std::size_t k) { return fmt::format("r.p{0}[luda_k_dot<{1}>(c, in.a{0}.rs)]", k, R); }, "j"));
      break;
  }
  // post(a, <its scalar inputs>) -> the outputs, at the output row's place.
  std::vector<std::string> post_args;
  if (c.accumulators.empty()) post_args.push_back("a");
  for (std::size_t k = 0; k < c.accumulators.size(); ++k)
    post_args.push_back(fmt::format("luda_cvt<{}>(a.v{})", c_of(c.accumulators[k].post_type), k));
  for (int k : c.post_inputs) post_args.push_back(fmt::format("in.a{}", k));
  s += fmt::format(
      "LUDA_INLINE void luda_k_store(const luda_k_in& in, const luda_k_out& out, const luda_kshape<{0}>& ks, long long row, luda_R a) {{\n"
      "  (void)in;\n  long long c[{0}];\n  luda_k_coords<{0}>(row, ks.shape, c);\n",
      K);
  std::string post = fmt::format("{}({})", c.post, join(post_args));
  if (t.outputs.size() == 1) {
    s += fmt::format("  out.o0.data[luda_k_dot<{}>(c, out.o0.strides)] = luda_cvt<{}>({});\n", K, c_of(t.outputs[0]),
                     post);
  } else {
    s += fmt::format("  const auto luda_r = {};\n", post);
    for (std::size_t k = 0; k < t.outputs.size(); ++k)
      s += fmt::format("  out.o{0}.data[luda_k_dot<{1}>(c, out.o{0}.strides)] = luda_cvt<{2}>(luda_r.v{0});\n", k, K,
                       c_of(t.outputs[k]));
  }
  s += "}\n";
  return s;
}

// Whether an accumulator rounds (a float or a complex number), so that the order of the
// reduction changes its value: the cpu templates then keep the fixed order (cpu_reduction_text.h).
bool rounding_accumulators(const ReductionCode& code) {
  auto rounds = [](dsl::Scalar s) { return dsl::is_float(s) || dsl::is_complex(s); };
  if (code.accumulators.empty()) return rounds(code.reduce_type);
  for (const ReductionCode::Accumulator& a : code.accumulators)
    if (rounds(a.type)) return true;
  return false;
}

}  // namespace

KindSource reduction_source(const ReductionCode& code, const ReductionTemplate& t, std::string_view name) {
  bool cpu = t.target == dsl::Target::Cpu;
  std::string body = code.functions;
  if (!body.empty() && body.back() != '\n') body += '\n';
  body += "#line 1 \"luda_reduction\"\n";
  body += fmt::format(
      "#define LUDA_K_KDIM {}\n#define LUDA_K_RDIM {}\n#define LUDA_K_VEC {}\n#define LUDA_K_WARP {}\n#define LUDA_K_GENERAL {}\n"
      "#define LUDA_K_ORDERED {}\n",
      t.kept_ndim, t.reduced_ndim, t.vector, t.warp ? 1 : 0, t.strategy == ReductionStrategy::General ? 1 : 0,
      rounding_accumulators(code) ? 1 : 0);
  body += reduction_glue(code, t);
  if (cpu) {
    std::string skeleton(t.strategy == ReductionStrategy::Columns ? cpu_reduction::kCpuColumns
                                                                  : cpu_reduction::kCpuRows);
    std::size_t at = skeleton.find("LUDA_K_CPU_ARGS\n");
    skeleton.replace(at, 16, cpu_reduction::kCpuArgs);
    body += cpu_reduction::kCpuOrdered;
    body += skeleton;
    body += kCpuEntries;
  } else {
    body += kCudaCombine;
    body += t.strategy == ReductionStrategy::Columns ? kCudaColumns : kCudaRows;
  }
  return finish(name, t.target, std::move(body));
}

}  // namespace luda::jit

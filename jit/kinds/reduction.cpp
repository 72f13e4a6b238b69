// ReductionKind: the call path (kinds.h), its caches, the strategy's grid and the scratch
// memory of split reductions. What both kinds share is in jit/kinds/core.h.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "jit/kinds/core.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/reduction.h"
#include "jit/kinds/templates.h"
#include "runtime/cpu_executor.h"
#include "runtime/device.h"

namespace luda::jit {

std::size_t accumulator_bytes(const ReductionCode& code) {
  if (code.accumulators.empty()) return itemsize(dtype_of(code.reduce_type));
  std::size_t size = 0, align = 1;
  for (const ReductionCode::Accumulator& a : code.accumulators) {
    std::size_t b = itemsize(dtype_of(a.type));
    size = (size + b - 1) / b * b + b;
    align = std::max(align, b);
  }
  return (size + align - 1) / align * align;
}

namespace {

using kind::KindKey;
using kind::ceil_div;
using kind::OpCode;

// Below this many elements a row is a warp's (else a block's, or several blocks').
constexpr long long kWarpRowLimit = 4096;
// The cpu target: work this small runs as one block; else tiles of about this much per block.
constexpr long long kCpuSmallWork = 32768;
constexpr long long kCpuSegment = 16384;
// The cpu templates' leaf (cpu_reduction_text.h, LUDA_K_LEAF): segments are runs of 2^k of them.
constexpr long long kCpuLeaf = 128;
// The blocks a split reduction's grid aims at on cuda: what an H100 holds at once (132
// SMs, 8 blocks of 256 threads each), a constant so that the grid, and with it the order
// of a float reduction, depends on the shape alone.
constexpr long long kCudaSplitTarget = 1056;
// The bytes of accumulators a thread of the Columns template keeps in shared memory (vector
// outputs): 256 threads of them fit the 48 KiB of static shared memory.
constexpr int kMaxAccumulatorBytes = 192;

KindKey types_key(const KindKey& call) {
  KindKey k;
  k.device = static_cast<std::int16_t>(call.device == kCpuDevice ? kCpuDevice : -1);
  k.count = call.count;
  for (std::size_t i = 0; i < call.count; ++i) {
    k.ops[i] = call.ops[i];
    k.ops[i].flags &= static_cast<std::uint8_t>(~OpCode::Broadcast);
    if (k.ops[i].kind == OpCode::Array) k.ops[i].kind = OpCode::Scalar;
  }
  return k;
}

// How a call's grid is cut (kind_templates.h: luda_k_launch and the grid).
struct Grid {
  Dim3 grid, block;
  long long seg = 1, rows_per_block = 1;
  long long counters = 0;  // split reductions: one counter per row or column group
};

long long round_up(long long a, long long m) { return ceil_div(a, m) * m; }

// The grid of a launch (kind_templates.h). cuda: blocks of 256 threads, a few per SM; rows
// split into segments when there are too few of them to fill the device.
Grid plan_grid(bool cpu, ReductionStrategy strategy, long long rows, long long len, int vector, bool warp) {
  Grid g;
  const long long lenp = std::max(len, 1LL);
  if (cpu) {
    const long long T = cpu_thread_count();
    g.grid = Dim3{1, 1, 1};
    g.rows_per_block = rows;
    g.seg = lenp;
    if (rows * lenp > kCpuSmallWork) {
      if (strategy == ReductionStrategy::Columns) {
        g.rows_per_block = std::max(64LL, round_up(ceil_div(rows, 4 * T), 64));
        g.grid.x = ceil_div(rows, g.rows_per_block);
        if (g.grid.x < T) g.grid.y = std::clamp(ceil_div(len, 1024), 1LL, ceil_div(4 * T, g.grid.x));
      } else if (rows >= T) {
        g.rows_per_block = ceil_div(rows, 4 * T);
        g.grid.x = ceil_div(rows, g.rows_per_block);
      } else {
        g.rows_per_block = 1;
        g.grid.x = rows;
        g.grid.y = std::clamp(ceil_div(len, kCpuSegment), 1LL, ceil_div(4 * T, rows));
      }
      // A segment is an aligned run of 2^k leaves (cpu_reduction_text.h, kCpuOrdered): a subtree
      // of the fixed order, whatever the thread count made of grid.y.
      const auto leaves = static_cast<unsigned long long>(ceil_div(ceil_div(lenp, kCpuLeaf), g.grid.y));
      g.seg = kCpuLeaf * static_cast<long long>(std::bit_ceil(leaves));
      g.grid.y = ceil_div(lenp, g.seg);
    }
  } else {
    // The cuda templates' order follows the grid, so the grid follows the shape alone, never
    // the device: the same float sum on every GPU (docs/kinds.md).
    const long long target = kCudaSplitTarget;
    g.seg = lenp;
    if (strategy == ReductionStrategy::Columns) {
      g.block = Dim3{32, 8, 1, 2};
      g.grid.x = ceil_div(rows, 32LL * vector);
      if (g.grid.x < target && len > 64) g.grid.y = std::min({ceil_div(target, g.grid.x), ceil_div(len, 64), 65535LL});
      g.seg = ceil_div(lenp, g.grid.y);
    } else if (warp) {
      g.block = Dim3{kKindBlock, 1, 1};
      g.grid.x = ceil_div(rows, kKindBlock / 32);
    } else {
      g.block = Dim3{kKindBlock, 1, 1};
      g.grid.x = rows;
      long long per_block = static_cast<long long>(kKindBlock) * vector * 4;
      if (rows < target && len > per_block)
        g.grid.y = std::min({ceil_div(target, rows), ceil_div(len, per_block), 65535LL});
      g.seg = round_up(ceil_div(lenp, g.grid.y), vector);
    }
    g.grid.y = ceil_div(lenp, g.seg);
  }
  if (g.grid.y > 1) g.counters = strategy == ReductionStrategy::Columns ? g.grid.x : rows;
  return g;
}

}  // namespace

struct ReductionKind::Impl {
  struct Spec {
    ReductionCode code;
    std::string last_source;
  };
  struct Loaded {
    Spec* spec = nullptr;
    LoadedProgram program;
  };
  // Partials and counters of split reductions, per device and stream: launches on one stream
  // run in order, so they share it; counters start at zero and every launch leaves them so.
  struct Scratch {
    int ordinal = 0;
    CUstream stream = nullptr;
    std::optional<Stream> keep;  // the stream outlives its scratch's use
    std::shared_ptr<Buffer> buffer;
    std::size_t counter_bytes = 0, partial_bytes = 0;
  };

  explicit Impl(const ReductionSetup& s) : core(s.kind, s.name, s.in_names, s.out_names, s.cache), setup(s) {}
  ~Impl() {
    for (Loaded& l : cache.entries()) unload_program(l.program);
  }

  // What a call reads from its operands before any code is looked up: where it runs,
  // the result's shape, the layout (operand k of it: input k's in_lay[k], or output o's
  // nl_in + o) and the key, whose flags say Warp and whose vector the loads' width.
  struct Plan {
    Device device;    // where the call runs and its outputs are made
    int ordinal = 0;  // its code's (target_ordinal)
    bool cpu = false;
    int in_lay[kMaxKindOperands];  // -1: a scalar input
    int nl_in = 0;
    std::int64_t result[kMaxKindDims];
    int rnd = 0;
    ReductionLayout layout;
    KindKey key;
  };
  // The launch's grid, and the scratch a split reduction's blocks combine through.
  struct Geometry {
    Grid grid;
    void* partials = nullptr;
    unsigned* counters = nullptr;
    // A split reduction on cuda keeps its scratch alive through its launch: another thread
    // may grow (and so free) it once the lock is released, and the free would be ordered
    // on the stream before this launch. Only split reductions, large ones, pay for the copy.
    std::shared_ptr<Buffer> hold;
  };
  // The steps of a call (ReductionKind::call): plan, the geometry once the code is known,
  // and pack.
  void plan(std::span<const KernelArg> inputs, std::span<const NDArray> outs, std::optional<std::span<const int>> axes,
            bool keepdims, Plan& p) const;
  Geometry geometry(const Plan& p, const Loaded& loaded, const Stream* stream, CUstream handle);
  ArgBuffer& pack(std::span<const KernelArg> inputs, std::span<const NDArray> outs, const Plan& p, const Loaded& loaded,
                  const Geometry& g) const;

  Spec& spec_for(const KindKey& types);
  Loaded& load(const KindKey& key);
  ReductionTemplate template_of(const KindKey& key, const ReductionCode& code) const;
  // The scratch for one launch: counters at its start, partials from counter_bytes on.
  const Scratch& scratch(int ordinal, const Stream* stream, CUstream handle, std::size_t counter_bytes,
                         std::size_t partial_bytes);

  kind::Core core;
  const ReductionSetup& setup;
  SpecCache<KindKey, Spec> specs;
  CallCache<Loaded, kMaxKindOperands> cache;  // its mutex guards the specs and scratch too
  std::vector<Scratch> scratches;
};

ReductionKind::Impl::Spec& ReductionKind::Impl::spec_for(const KindKey& types) {
  return specs.get(types, cache.counters(), [&] {
    std::vector<dsl::Type> in = kind::Core::input_types(types, core.nin(), {});
    std::vector<std::optional<dsl::Scalar>> out = kind::Core::output_types(types, core.nin());
    ReductionCode code = setup.frontend(in, out, types.device == kCpuDevice ? dsl::Target::Cpu : dsl::Target::Cuda);
    LUDA_INTERNAL_CHECK(code.map_params.size() == core.nin() && code.outputs.size() == core.nout());
    core.check_made_outputs(out, code.outputs, "the reduction");
    return Spec{std::move(code), {}};
  });
}

ReductionTemplate ReductionKind::Impl::template_of(const KindKey& key, const ReductionCode& code) const {
  ReductionTemplate t;
  t.target = key.device == kCpuDevice ? dsl::Target::Cpu : dsl::Target::Cuda;
  t.strategy = static_cast<ReductionStrategy>(key.layout - 1);
  t.kept_ndim = key.ndim;
  t.reduced_ndim = key.ndim2;
  t.vector = key.vector;
  t.warp = (key.flags & KindKey::Warp) != 0;
  for (std::size_t k = 0; k < core.nin(); ++k) {
    const OpCode& c = key.ops[k];
    KindOperand op;
    op.dtype = static_cast<dsl::Scalar>(c.scalar);
    op.kind = c.kind == OpCode::Array ? KindOperand::Kind::Array : KindOperand::Kind::Scalar;
    op.broadcast = (c.flags & OpCode::Broadcast) != 0;
    t.inputs.push_back(op);
  }
  t.outputs = code.outputs;
  return t;
}

ReductionKind::Impl::Loaded& ReductionKind::Impl::load(const KindKey& key) {
  Spec& spec = spec_for(types_key(key));
  KindSource source = reduction_source(spec.code, template_of(key, spec.code), setup.name);
  Loaded l;
  l.spec = &spec;
  l.program = load_program(core.program(source, spec.code.nvrtc_options, spec.code.chunks), key.device, core.cache(),
                           cache.counters());
  spec.last_source = std::move(source.code);
  return cache.add(std::move(l));
}

const ReductionKind::Impl::Scratch& ReductionKind::Impl::scratch(int ordinal, const Stream* stream, CUstream handle,
                                                                 std::size_t counter_bytes, std::size_t partial_bytes) {
  Scratch* s = nullptr;
  for (Scratch& x : scratches)
    if (x.ordinal == ordinal && x.stream == handle) s = &x;
  if (!s) {
    s = &scratches.emplace_back();
    s->ordinal = ordinal;
    s->stream = handle;
    if (stream) s->keep = *stream;
  }
  if (!s->buffer || s->counter_bytes < counter_bytes || s->partial_bytes < partial_bytes) {
    // Grown on the stream that uses it: the old one is freed in order behind the launches
    // that still use it.
    s->counter_bytes = std::max(s->counter_bytes,
                                static_cast<std::size_t>(round_up(static_cast<long long>(counter_bytes), 256)));
    s->partial_bytes = std::max(s->partial_bytes, partial_bytes);
    s->buffer = Buffer::allocate(Device::cuda(ordinal), s->counter_bytes + s->partial_bytes, stream);
    zero_bytes(Device::cuda(ordinal), s->buffer->data(), s->counter_bytes, handle);
  }
  return *s;
}

ReductionKind::ReductionKind(ReductionSetup setup) : setup_(std::move(setup)) {
  if (!setup_.frontend) fail("{} '{}' has no frontend", setup_.kind, setup_.name);
  impl_ = std::make_unique<Impl>(setup_);
}

ReductionKind::~ReductionKind() = default;

void ReductionKind::Impl::plan(std::span<const KernelArg> inputs, std::span<const NDArray> outs,
                               std::optional<std::span<const int>> axes, bool keepdims, Plan& p) const {
  if (inputs.size() != core.nin() || outs.size() != core.nout()) core.check_counts(inputs.size(), outs.size());
  const std::size_t nin = inputs.size(), nout = outs.size();
  p.device = call_device(core.who(), inputs, outs, core.names());
  p.ordinal = target_ordinal(p.device);
  p.cpu = p.ordinal == kCpuDevice;

  LayoutOperand lay[kMaxKindOperands];
  int nl = 0;
  // Inputs that are C-contiguous arrays of one shape (and not empty) need no broadcasting,
  // and reduced over every axis, no collapsing of axes either: x:sum() and its like.
  const NDArray* first = nullptr;
  bool flat = true;
  for (std::size_t k = 0; k < nin; ++k) {
    p.in_lay[k] = -1;
    if (inputs[k].kind == KernelArg::Kind::Array) {
      const NDArray& x = *inputs[k].array;
      p.in_lay[k] = nl;
      lay[nl++] = layout_operand(x);
      if (!first) first = &x;
      else flat = flat && x.shape() == first->shape();
      flat = flat && x.is_c_contiguous();
    }
  }
  flat = flat && first && first->size() > 0;
  BroadcastShape shape;
  if (flat) {
    shape.ndim = first->ndim();
    std::copy(first->shape().begin(), first->shape().end(), shape.shape.begin());
  } else if (!broadcast({lay, static_cast<std::size_t>(nl)}, shape)) {
    core.broadcast_error(inputs, {});
  }
  const int nl_in = p.nl_in = nl;

  bool reduced[kMaxKindDims] = {};
  if (!axes) {
    for (int a = 0; a < shape.ndim; ++a) reduced[a] = true;
  } else {
    for (int a : *axes) {
      if (a < 0 || a >= shape.ndim)
        fail("{}: axis {} is out of range for {}-dimensional operands (axes count from 1)", core.who(), a + 1,
             shape.ndim);
      if (reduced[a]) fail("{}: axis {} is given twice", core.who(), a + 1);
      reduced[a] = true;
    }
  }
  if (!setup.no_identity.empty())
    for (int a = 0; a < shape.ndim; ++a)
      if (reduced[a] && shape.shape[static_cast<std::size_t>(a)] == 0)
        fail("{}: zero-size array to reduction operation {} which has no identity", core.who(), setup.no_identity);
  std::int64_t* result = p.result;
  int& rnd = p.rnd;
  rnd = 0;
  for (int a = 0; a < shape.ndim; ++a)
    if (!reduced[a]) result[rnd++] = shape.shape[static_cast<std::size_t>(a)];
    else if (keepdims) result[rnd++] = 1;
  for (std::size_t k = 0; k < nout; ++k)
    if (outs[k].valid()) core.check_output(k, outs[k], result, rnd);
  if (nout > 1) core.check_outputs_disjoint(outs);

  std::int64_t out_strides[kMaxKindDims];
  std::int64_t step = 1;
  for (int a = rnd; a-- > 0;) {
    out_strides[a] = step;
    step *= result[a];
  }
  LayoutOperand out_lay[kMaxKindOperands];
  for (std::size_t o = 0; o < nout; ++o)
    out_lay[o] = outs[o].valid() ? layout_operand(outs[o]) : LayoutOperand{result, out_strides, rnd};
  ReductionLayout& layout = p.layout;
  bool all = true;
  for (int a = 0; a < shape.ndim; ++a) all = all && reduced[a];
  if (flat && all) {  // what reduction_layout gives: one row of size elements, read with stride 1
    layout.inputs = nl_in;
    layout.outputs = static_cast<int>(nout);
    layout.rows = 1;
    layout.len = first->size();
    layout.kept_ndim = layout.reduced_ndim = 1;
    layout.kept_shape[0] = 1;
    layout.reduced_shape[0] = layout.len;
    for (std::size_t k = 0; k < static_cast<std::size_t>(nl_in) + nout; ++k) {
      layout.kept_strides[k][0] = 1;
      layout.reduced_strides[k][0] = k < static_cast<std::size_t>(nl_in) || layout.len == 1 ? 1 : 0;
    }
    layout.strategy = ReductionStrategy::Rows;
  } else {
    reduction_layout({lay, static_cast<std::size_t>(nl_in)}, {out_lay, nout}, shape,
                     {reduced, static_cast<std::size_t>(shape.ndim)}, keepdims, layout);
  }
  const long long rows = layout.rows, len = layout.len;

  KindKey& key = p.key;
  key.device = static_cast<std::int16_t>(p.ordinal);
  key.count = static_cast<std::uint8_t>(nin + nout);
  kind::Core::input_codes(inputs, {}, key);
  const ReductionStrategy strategy = layout.strategy;
  for (std::size_t k = 0; k < nin; ++k) {
    if (p.in_lay[k] < 0) continue;
    auto li = static_cast<std::size_t>(p.in_lay[k]);
    std::int64_t walked = strategy == ReductionStrategy::Rows      ? layout.reduced_strides[li][0]
                          : strategy == ReductionStrategy::Columns ? layout.kept_strides[li][0]
                                                                   : 1;
    if (walked == 0) key.ops[k].flags |= OpCode::Broadcast;
  }
  kind::Core::output_codes(outs, key);
  key.layout = static_cast<std::uint8_t>(static_cast<int>(strategy) + 1);
  key.ndim = static_cast<std::uint8_t>(layout.kept_ndim);
  key.ndim2 = static_cast<std::uint8_t>(layout.reduced_ndim);
  // 16-byte loads: along a row (Rows) or across neighbouring outputs (Columns), when every
  // walked input's base and steps keep them aligned.
  int vector = 1;
  if (!p.cpu && strategy != ReductionStrategy::General) {
    std::size_t widest = 0;
    for (std::size_t k = 0; k < nin; ++k)
      if (p.in_lay[k] >= 0 && !(key.ops[k].flags & OpCode::Broadcast))
        widest = std::max(widest, itemsize(inputs[k].array->dtype()));
    if (widest > 0 && widest < 16) {
      vector = static_cast<int>(16 / widest);
      for (std::size_t k = 0; k < nin && vector > 1; ++k) {
        if (p.in_lay[k] < 0 || (key.ops[k].flags & OpCode::Broadcast)) continue;
        auto li = static_cast<std::size_t>(p.in_lay[k]);
        const NDArray& x = *inputs[k].array;
        bool ok = reinterpret_cast<std::uintptr_t>(x.data()) %
                      (static_cast<std::uintptr_t>(vector) * itemsize(x.dtype())) ==
                  0;
        if (strategy == ReductionStrategy::Rows)
          for (int a = 0; ok && a < layout.kept_ndim; ++a)
            ok = layout.kept_strides[li][static_cast<std::size_t>(a)] % vector == 0;
        else ok = ok && layout.reduced_strides[li][0] % vector == 0;
        if (!ok) vector = 1;
      }
    }
  }
  // Several accumulators: the Columns template keeps 256 * vector of them in shared memory
  // (at most 8 bytes each per reduction): at most 48 KiB.
  while (setup.accumulators > 1 && vector > 1 && vector * 8 * setup.accumulators > kMaxAccumulatorBytes) vector /= 2;
  key.vector = static_cast<std::uint8_t>(vector);
  const bool warp = !p.cpu && strategy != ReductionStrategy::Columns && rows > 1 && len < kWarpRowLimit;
  key.flags = warp ? KindKey::Warp : 0;
}

ReductionKind::Impl::Geometry ReductionKind::Impl::geometry(const Plan& p, const Loaded& loaded, const Stream* stream,
                                                            CUstream handle) {
  Geometry out;
  const long long rows = p.layout.rows;
  out.grid = plan_grid(p.cpu, p.layout.strategy, rows, p.layout.len, p.key.vector, (p.key.flags & KindKey::Warp) != 0);
  if (out.grid.counters == 0) return out;
  const std::size_t counter_bytes = sizeof(unsigned) * static_cast<std::size_t>(out.grid.counters);
  const std::size_t partial_bytes = accumulator_bytes(loaded.spec->code) *
                                    static_cast<std::size_t>(rows * out.grid.grid.y);
  unsigned char* scratch = nullptr;  // counters, then partials
  std::size_t counter_space = 0;
  if (GraphRecording* r = GraphRecording::active()) [[unlikely]] {
    // A recorded launch's own, kept by its graph: the thread's or the stream's scratch
    // would be reused (and regrown) by other launches before the graph runs. The counters
    // start at zero and each launch leaves them so (atomicInc wraps).
    const Device device = p.device;
    counter_space = static_cast<std::size_t>(round_up(static_cast<long long>(counter_bytes), 64));
    out.hold = Buffer::allocate(device, counter_space + partial_bytes);
    zero_bytes(device, out.hold->data(), counter_space);
    scratch = static_cast<unsigned char*>(out.hold->data());
    const auto lo = reinterpret_cast<std::uintptr_t>(scratch);
    r->access(r->of(out.hold, lo, lo + out.hold->size(), true));
  } else if (p.cpu) {  // this thread's: its launches are synchronous
    thread_local std::vector<std::uint64_t> host;
    counter_space = static_cast<std::size_t>(round_up(static_cast<long long>(counter_bytes), 64));
    std::size_t words = (counter_space + partial_bytes) / 8 + 1;
    if (host.size() < words) host.resize(words, 0);
    scratch = reinterpret_cast<unsigned char*>(host.data());
  } else {  // the stream's, under the cache's lock: only split reductions take it
    std::lock_guard lock(cache.mutex());
    const Scratch& s = this->scratch(p.ordinal, stream, handle, counter_bytes, partial_bytes);
    counter_space = s.counter_bytes;
    out.hold = s.buffer;
    scratch = static_cast<unsigned char*>(out.hold->data());
  }
  out.partials = scratch + counter_space;
  out.counters = reinterpret_cast<unsigned*>(scratch);
  return out;
}

// ORDER KIND ABI (kind_templates.h)
ArgBuffer& ReductionKind::Impl::pack(std::span<const KernelArg> inputs, std::span<const NDArray> outs, const Plan& p,
                                     const Loaded& loaded, const Geometry& g) const {
  const ReductionCode& code = loaded.spec->code;
  const ReductionLayout& layout = p.layout;
  const std::size_t nin = inputs.size(), nout = outs.size();
  ArgBuffer& buffer = launch_buffer();
  const long long launch[4] = {layout.rows, layout.len, g.grid.seg, g.grid.rows_per_block};
  buffer.put(launch, sizeof launch);
  const auto K = static_cast<std::size_t>(layout.kept_ndim), R = static_cast<std::size_t>(layout.reduced_ndim);
  buffer.put(layout.kept_shape.data(), 8 * K);
  buffer.put(layout.reduced_shape.data(), 8 * R);
  // The inputs' structs, then the outputs': 8-byte words, on the stack unless the
  // operands have very many axes.
  std::uint64_t stack_words[256];
  std::vector<std::uint64_t> heap_words;
  const std::size_t most = std::max(nin * (2 + K + R), nout * (1 + K)) + 2;
  std::uint64_t* words = stack_words;
  if (most > std::size(stack_words)) {
    heap_words.resize(most);
    words = heap_words.data();
  }
  std::size_t used = 0;
  bool wide = false;                       // a complex128 scalar: the inputs' struct is 16-byte aligned
  std::size_t pointers[kMaxKindOperands];  // the words of `words` that hold data pointers
  std::size_t npointers = 0;
  auto put_marked = [&] {
    const std::size_t at = buffer.put(words, 8 * used);
    for (std::size_t i = 0; i < npointers; ++i) buffer.mark_pointer(at + 8 * pointers[i]);
    npointers = 0;
  };
  auto put_strides = [&](const std::array<std::int64_t, kMaxKindDims>& strides, std::size_t count) {
    std::memcpy(words + used, strides.data(), 8 * count);
    used += count;
  };
  for (std::size_t k = 0; k < nin; ++k) {
    const KernelArg& a = inputs[k];
    if (a.kind == KernelArg::Kind::Array) {
      auto li = static_cast<std::size_t>(p.in_lay[k]);
      pointers[npointers++] = used;
      words[used++] = reinterpret_cast<std::uintptr_t>(a.array->data());
      put_strides(layout.kept_strides[li], K);
      put_strides(layout.reduced_strides[li], R);
    } else {
      // The scalar's slot: a word, two 16-byte aligned ones for a complex128 (luda_k_in's
      // alignas, jit/kinds/templates.cpp).
      const dsl::Scalar s = code.map_params[k].scalar;
      const std::size_t n = dsl::scalar_bits(s) > 64 ? 2 : 1;
      if (n == 2) {
        if (used & 1) words[used++] = 0;
        wide = true;
      }
      std::memset(words + used, 0, 8 * n);
      core.scalar_value(k, a, s).store(&words[used]);
      used += n;
    }
  }
  if (used == 0) words[used++] = 0;
  if (wide && (used & 1)) words[used++] = 0;  // the struct's size is a multiple of 16
  put_marked();
  used = 0;
  for (std::size_t o = 0; o < nout; ++o) {
    pointers[npointers++] = used;
    words[used++] = reinterpret_cast<std::uintptr_t>(outs[o].data());
    put_strides(layout.kept_strides[static_cast<std::size_t>(p.nl_in) + o], K);
  }
  if (used == 0) words[used++] = 0;
  put_marked();
  buffer.put(&g.partials, sizeof g.partials);
  buffer.put(&g.counters, sizeof g.counters);
  return buffer;
}

void ReductionKind::call(std::span<const KernelArg> inputs, std::span<NDArray> outs,
                         std::optional<std::span<const int>> axes, bool keepdims, const Stream* stream) {
  Impl& m = *impl_;
  kind::Core& core = m.core;
  // plan
  Impl::Plan p;
  m.plan(inputs, outs, axes, keepdims, p);
  // overlap: an output over an input, which other outputs may still read once it is
  // overwritten: the input is copied first (NumPy's rule)
  if (const std::uint64_t over = inputs_over_outputs(inputs, outs)) [[unlikely]] {
    if (stream) core.stream_handle(stream, p.device);  // refuses a stream of another device before the copy uses it
    std::vector<NDArray> copies;
    call(with_copies(inputs, over, copies, p.cpu ? nullptr : stream), outs, axes, keepdims, stream);
    return;
  }
  // lookup
  CUstream cu_stream = stream ? core.stream_handle(stream, p.device) : nullptr;
  auto [loaded, code] = kind::lookup(m, p.key, p.layout.rows > 0, [&] { return types_key(p.key); });
  core.check_weak_ints(inputs, code->weak_int_uses);
  kind::Core::allocate_outputs(outs, p.result, p.rnd, code->outputs, p.device, stream);
  if (p.layout.rows == 0) return;
  // the grid and the scratch of split reductions; pack
  const Impl::Geometry g = m.geometry(p, *loaded, stream, cu_stream);
  note_operands(inputs, outs, false);
  ArgBuffer& buffer = m.pack(inputs, outs, p, *loaded, g);
  // launch
  LaunchConfig config;
  config.grid = g.grid.grid;
  config.block = g.grid.block;
  config.stream = cu_stream;
  jit::launch(loaded->program, p.device, config, buffer.pointers(), core.name());
}

std::string ReductionKind::inspect(std::string_view what, std::span<const dsl::Type> inputs, Device device, int arch) {
  Impl& m = *impl_;
  if (what != "types" && what != "cuda" && what != "ptx")
    fail("{}: unknown inspect kind '{}'; expected \"types\", \"cuda\" or \"ptx\"", m.core.who(), what);
  if (inputs.size() != m.core.nin()) m.core.check_counts(inputs.size(), m.core.nout());
  // PTX is the cuda target's, whatever device the call names.
  bool cpu = device.is_cpu() && what != "ptx";
  KindKey types;
  types.device = static_cast<std::int16_t>(cpu ? kCpuDevice : -1);
  types.count = static_cast<std::uint8_t>(inputs.size() + m.core.nout());
  for (std::size_t k = 0; k < types.count; ++k) types.ops[k] = OpCode{};
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    types.ops[k].kind = OpCode::Scalar;
    types.ops[k].scalar = static_cast<std::uint8_t>(inputs[k].scalar);
    types.ops[k].flags = inputs[k].weak ? OpCode::Weak : 0;
  }
  std::lock_guard lock(m.cache.mutex());
  Impl::Spec& spec = m.spec_for(types);
  if (what == "types") return spec.code.typed;
  if (what == "cuda" && !spec.last_source.empty()) return spec.last_source;
  KindKey key = types;  // not run yet, or PTX: a contiguous full reduction
  key.device = static_cast<std::int16_t>(cpu ? kCpuDevice : device.is_cpu() ? 0 : device.index);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!inputs[k].weak) key.ops[k].kind = OpCode::Array;
  key.layout = static_cast<std::uint8_t>(static_cast<int>(ReductionStrategy::Rows) + 1);
  key.ndim = key.ndim2 = key.vector = 1;
  KindSource source = reduction_source(spec.code, m.template_of(key, spec.code), setup_.name);
  if (what == "cuda") return source.code;
  return program_ptx(m.core.program(source, spec.code.nvrtc_options, spec.code.chunks),
                     arch ? arch : current_arch_for(m.core.who()));
}

JitStats ReductionKind::stats() const { return impl_->cache.stats(); }

}  // namespace luda::jit

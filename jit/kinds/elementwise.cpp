// ElementwiseKind: the call path (kinds.h) and its caches. Reductions are in
// jit/kinds/reduction.cpp; what both share is in jit/kinds/core.h.
#include "jit/kinds/elementwise.h"
#include "jit/kinds/reduction.h"

#include <chrono>
#include <climits>

#include <fmt/format.h>

#include "jit/kinds/core.h"
#include "jit/kinds/templates.h"
#include "runtime/cpu_executor.h"
#include "runtime/device.h"

namespace luda::jit {
namespace {

using kind::KindKey;
using kind::OpCode;

// Elements per block of the cpu target's elementwise grid (a tile per block).
constexpr long long kCpuTile = 16384;

// The frontend's signature: the call's operand types with what only the launch needs left
// out. Array and scalar inputs of one dtype type alike (strong); weak ones and raw arrays
// stay what they are.
KindKey types_key(const KindKey& call) {
  KindKey k;
  k.device = static_cast<std::int16_t>(call.device == kCpuDevice ? kCpuDevice : -1);
  k.count = call.count;
  for (std::size_t i = 0; i < call.count; ++i) {
    k.ops[i] = call.ops[i];
    if (k.ops[i].kind == OpCode::Array) k.ops[i].kind = OpCode::Scalar;
  }
  return k;
}

// A types key from frontend types (compile and inspect): outputs not given.
KindKey key_of_types(std::span<const dsl::Type> inputs, std::size_t nout, int device) {
  if (inputs.size() + nout > static_cast<std::size_t>(kMaxKindOperands))
    fail("a kernel kind takes at most {} operands, got {}", kMaxKindOperands, inputs.size() + nout);
  KindKey k;
  k.device = static_cast<std::int16_t>(device);
  k.count = static_cast<std::uint8_t>(inputs.size() + nout);
  operand_codes(inputs, k.ops.data());
  for (std::size_t i = inputs.size(); i < k.count; ++i) k.ops[i] = OpCode{};
  return k;
}

}  // namespace

struct ElementwiseKind::Impl {
  struct Spec {  // per operand types and target: the frontend's code
    ElementCode code;
    std::string last_source;  // the CUDA C++ made last from it (inspect)
  };
  struct Loaded {  // per call key
    Spec* spec = nullptr;
    LoadedProgram program;
    long long resident_blocks = 0;   // cuda: blocks of kKindBlock threads the device holds at once
    std::shared_ptr<Buffer> bounds;  // the BoundsRecord, when the code takes one
  };

  Impl(const ElementwiseSetup& s) : core(s.kind, s.name, s.in_names, s.out_names, s.cache), setup(s) {
    for (std::size_t k = 0; k < s.raw.size() && k < raw.size(); ++k) {
      raw[k] = s.raw[k];
      if (raw[k]) raw_mask |= std::uint64_t{1} << k;
    }
  }
  ~Impl() {
    for (Loaded& l : cache.entries()) unload_program(l.program);
  }

  // What a call reads from its operands before any code is looked up: where it runs, the
  // broadcast shape, the collapsed layout (operand k of it: input k's in_lay[k], or
  // output o's nl_in + o), and the key.
  struct Plan {
    Device device;    // where the call runs and its outputs are made
    int ordinal = 0;  // its code's (target_ordinal)
    bool cpu = false;
    int in_lay[kMaxKindOperands];  // -1: a scalar or raw input
    int nl_in = 0;
    BroadcastShape shape;
    ElementwiseLayout layout;
    KindKey key;
  };
  // The steps of a call (ElementwiseKind::call): plan, overlap (the inputs to copy first,
  // else 0, with NoAlias set in the key when nothing overlaps), pack and the launch's grid.
  void plan(std::span<const KernelArg> inputs, std::span<const NDArray> outs, std::int64_t size, Plan& p) const;
  std::uint64_t overlap(std::span<const KernelArg> inputs, std::span<const NDArray> outs, Plan& p) const;
  ArgBuffer& pack(std::span<const KernelArg> inputs, std::span<const NDArray> outs, const Plan& p, const Loaded& loaded,
                  CUstream stream) const;
  LaunchConfig launch_config(const Plan& p, const Loaded& loaded, CUstream stream) const;

  Spec& spec_for(const KindKey& types);
  Loaded& load(const KindKey& key);
  ElementwiseTemplate template_of(const KindKey& key, const ElementCode& code) const;
  std::span<const bool> raw_span() const { return {raw.data(), core.nin()}; }

  kind::Core core;
  const ElementwiseSetup& setup;
  std::array<bool, kMaxKindOperands> raw{};
  std::uint64_t raw_mask = 0;  // raw, as bits
  SpecCache<KindKey, Spec> specs;
  CallCache<Loaded, kMaxKindOperands> cache;  // its mutex guards the specs and scratch too
};

ElementwiseKind::Impl::Spec& ElementwiseKind::Impl::spec_for(const KindKey& types) {
  return specs.get(types, cache.counters(), [&] {
    std::vector<dsl::Type> in = kind::Core::input_types(types, core.nin(), raw_span());
    std::vector<std::optional<dsl::Scalar>> out = kind::Core::output_types(types, core.nin());
    ElementCode code = setup.frontend(in, out, types.device == kCpuDevice ? dsl::Target::Cpu : dsl::Target::Cuda);
    LUDA_INTERNAL_CHECK(code.params.size() == core.nin() && code.outputs.size() == core.nout());
    core.check_made_outputs(out, code.outputs, "the kernel");
    return Spec{std::move(code), {}};
  });
}

ElementwiseTemplate ElementwiseKind::Impl::template_of(const KindKey& key, const ElementCode& code) const {
  ElementwiseTemplate t;
  t.target = key.device == kCpuDevice ? dsl::Target::Cpu : dsl::Target::Cuda;
  t.contiguous = key.layout == 0;
  t.ndim = key.ndim;
  t.vector = key.vector;
  t.index32 = (key.flags & KindKey::Index32) != 0;
  t.noalias = (key.flags & KindKey::NoAlias) != 0;
  for (std::size_t k = 0; k < core.nin(); ++k) {
    const OpCode& c = key.ops[k];
    KindOperand op;
    op.dtype = static_cast<dsl::Scalar>(c.scalar);
    if (c.kind == OpCode::Whole) {
      op.kind = KindOperand::Kind::Raw;
      op.raw = dsl::Type::array_of(op.dtype, c.ndim, (c.flags & OpCode::CContiguous) != 0);
    } else {
      op.kind = c.kind == OpCode::Array ? KindOperand::Kind::Array : KindOperand::Kind::Scalar;
    }
    t.inputs.push_back(op);
  }
  t.outputs = code.outputs;
  t.out_read.assign(core.nout(), false);
  for (std::size_t k = 0; k < setup.out_read.size() && k < t.out_read.size(); ++k) t.out_read[k] = setup.out_read[k];
  t.index_args = setup.index_args;
  return t;
}

ElementwiseKind::Impl::Loaded& ElementwiseKind::Impl::load(const KindKey& key) {
  Spec& spec = spec_for(types_key(key));
  KindSource source = elementwise_source(spec.code, template_of(key, spec.code), setup.name);
  Loaded l;
  l.spec = &spec;
  l.program = load_program(core.program(source, spec.code.nvrtc_options, spec.code.chunks), key.device, core.cache(),
                           cache.counters());
  if (key.device != kCpuDevice) {
    ContextScope scope(key.device);
    l.resident_blocks = static_cast<long long>(cuda_properties(key.device).multiprocessors) *
                        kind::resident_blocks_per_sm(l.program.function, key.device, kKindBlock);
  }
  if (spec.code.bounds_record)
    l.bounds = Buffer::allocate(key.device == kCpuDevice ? Device::cpu() : Device::cuda(key.device),
                                sizeof(dsl::BoundsRecord));
  spec.last_source = std::move(source.code);
  return cache.add(std::move(l));
}

ElementwiseKind::ElementwiseKind(ElementwiseSetup setup) : setup_(std::move(setup)) {
  if (!setup_.frontend) fail("{} '{}' has no frontend", setup_.kind, setup_.name);
  setup_.options.boundscheck = boundscheck_with_env(setup_.options.boundscheck);
  impl_ = std::make_unique<Impl>(setup_);
}

ElementwiseKind::~ElementwiseKind() = default;

void ElementwiseKind::Impl::plan(std::span<const KernelArg> inputs, std::span<const NDArray> outs, std::int64_t size,
                                 Plan& p) const {
  if (inputs.size() != core.nin() || outs.size() != core.nout()) core.check_counts(inputs.size(), outs.size());
  const std::size_t nin = inputs.size(), nout = outs.size();
  p.device = call_device(core.who(), inputs, outs, core.names());
  p.ordinal = target_ordinal(p.device);
  p.cpu = p.ordinal == kCpuDevice;

  // The operands' layout. Most calls pass C-contiguous arrays of one shape (outputs given
  // or not): one flat loop, known without broadcasting or collapsing axes.
  LayoutOperand lay[kMaxKindOperands];
  int nl = 0;
  const NDArray* first = nullptr;
  bool flat = true;
  auto see = [&](const NDArray& a) {
    if (!first) first = &a;
    else flat = flat && a.shape() == first->shape();
    flat = flat && a.is_c_contiguous();
  };
  for (std::size_t k = 0; k < nin; ++k) {
    p.in_lay[k] = -1;
    if (inputs[k].kind == KernelArg::Kind::Array && !raw[k]) {
      p.in_lay[k] = nl;
      lay[nl++] = layout_operand(*inputs[k].array);
      see(*inputs[k].array);
    }
  }
  const int nl_in = p.nl_in = nl;
  for (const NDArray& o : outs)
    if (o.valid()) see(o);
  flat = flat && first && first->size() > 0;
  BroadcastShape& shape = p.shape;
  ElementwiseLayout& layout = p.layout;
  if (flat) {
    shape.ndim = first->ndim();
    std::copy(first->shape().begin(), first->shape().end(), shape.shape.begin());
    layout.size = first->size();
    layout.ndim = layout.size == 1 ? 0 : 1;  // as collapsing gives
    layout.operands = nl_in + static_cast<int>(nout);
    layout.shape[0] = layout.size;
    for (int k = 0; k < layout.operands; ++k) layout.strides[static_cast<std::size_t>(k)][0] = 1;
  } else {
    // Broadcasting: the inputs together, then with the given outputs, which must have the
    // result's shape.
    if (!broadcast({lay, static_cast<std::size_t>(nl)}, shape)) core.broadcast_error(inputs, raw_span());
    const std::int64_t sized[1] = {size};
    const LayoutOperand loop{sized, sized, 1};  // size=: the loop's shape, as an operand (strides unread)
    if (size >= 0 && nl == 0) lay[nl++] = loop;
    const int nl_shape = nl;
    for (const NDArray& o : outs)
      if (o.valid()) lay[nl++] = layout_operand(o);
    BroadcastShape with_outputs;
    if (!broadcast({lay, static_cast<std::size_t>(nl)}, with_outputs)) with_outputs = shape;
    if (nl_shape > nl_in) {  // size=: the outputs have its shape
      broadcast({lay + nl_in, 1}, shape);
      with_outputs = shape;
    }
    for (std::size_t k = 0; k < nout; ++k)
      if (outs[k].valid()) core.check_output(k, outs[k], with_outputs.shape.data(), with_outputs.ndim);
    shape = with_outputs;

    // Every output as the layout sees it (the missing ones C-contiguous, as allocated).
    std::int64_t c_strides_of[kMaxKindDims];
    std::int64_t step = 1;
    for (int a = shape.ndim; a-- > 0;) {
      c_strides_of[a] = step;
      step *= shape.shape[static_cast<std::size_t>(a)];
    }
    nl = nl_in;
    for (const NDArray& o : outs)
      lay[nl++] = o.valid() ? layout_operand(o) : LayoutOperand{shape.shape.data(), c_strides_of, shape.ndim};
    elementwise_layout({lay, static_cast<std::size_t>(nl)}, shape, layout);
  }
  if (nout > 1) core.check_outputs_disjoint(outs);

  // The key: operands, layout class, vector width (16-byte loads need every pointer
  // aligned to them), index width; the overlap step adds NoAlias.
  KindKey& key = p.key;
  key.device = static_cast<std::int16_t>(p.ordinal);
  key.count = static_cast<std::uint8_t>(nin + nout);
  kind::Core::input_codes(inputs, raw_span(), key);
  kind::Core::output_codes(outs, key);
  const bool contiguous = layout.contiguous();
  key.layout = contiguous ? 0 : 1;
  key.ndim = static_cast<std::uint8_t>(contiguous ? 0 : layout.ndim);
  int vector = 1;
  if (!p.cpu && contiguous) {
    std::size_t widest = 0;
    for (std::size_t k = 0; k < nin; ++k)
      if (p.in_lay[k] >= 0) widest = std::max(widest, itemsize(inputs[k].array->dtype()));
    for (const NDArray& o : outs)
      if (o.valid()) widest = std::max(widest, itemsize(o.dtype()));
    if (widest > 0 && widest < 16) {
      vector = static_cast<int>(16 / widest);
      auto aligned = [&](const NDArray& a) {
        return reinterpret_cast<std::uintptr_t>(a.data()) %
                   (static_cast<std::uintptr_t>(vector) * itemsize(a.dtype())) ==
               0;
      };
      for (std::size_t k = 0; k < nin && vector > 1; ++k)
        if (p.in_lay[k] >= 0 && !aligned(*inputs[k].array)) vector = 1;
      for (std::size_t k = 0; k < nout && vector > 1; ++k)
        if (outs[k].valid() && !aligned(outs[k])) vector = 1;
    }
  }
  key.vector = static_cast<std::uint8_t>(vector);
  key.flags = !p.cpu && !contiguous && layout.size <= INT_MAX ? KindKey::Index32 : 0;
}

std::uint64_t ElementwiseKind::Impl::overlap(std::span<const KernelArg> inputs, std::span<const NDArray> outs,
                                             Plan& p) const {
  // Outputs over inputs: the same element read then written by one thread is fine; any
  // other overlap would read elements already written, so those inputs are copied first
  // (NumPy's rule). A raw input may be indexed anywhere: it is never copied, and its
  // overlap with an output, or with another input, only turns off the contiguous
  // template's __restrict__.
  const std::size_t nin = inputs.size(), nout = outs.size();
  bool noalias = true;
  if (const std::uint64_t over = p.layout.size > 0 ? inputs_over_outputs(inputs, outs) : 0) [[unlikely]] {
    noalias = false;
    const std::uint64_t copy = over & ~raw_mask;
    auto in_place = [&](std::size_t k, std::size_t o) {  // input k is output o, element for element
      const NDArray& x = *inputs[k].array;
      if (x.data() != outs[o].data() || x.dtype() != outs[o].dtype()) return false;
      auto li = static_cast<std::size_t>(p.in_lay[k]), lo = static_cast<std::size_t>(p.nl_in) + o;
      for (int a = 0; a < p.layout.ndim; ++a)
        if (p.layout.strides[li][static_cast<std::size_t>(a)] != p.layout.strides[lo][static_cast<std::size_t>(a)])
          return false;
      return true;
    };
    for (std::size_t k = 0; k < nin; ++k)
      for (std::size_t o = 0; o < nout && (copy >> k & 1); ++o)
        if (may_share_memory(*inputs[k].array, outs[o]) && !in_place(k, o)) return copy;
  }
  for (std::size_t k = 0; k < nin && noalias && raw_mask; ++k)  // a raw input may alias an array one
    if (raw[k] && inputs[k].kind == KernelArg::Kind::Array)
      for (std::size_t j = 0; j < nin && noalias; ++j)
        if (j != k && inputs[j].kind == KernelArg::Kind::Array && may_share_memory(*inputs[k].array, *inputs[j].array))
          noalias = false;
  if (noalias) p.key.flags |= KindKey::NoAlias;
  return 0;
}

// ORDER KIND ABI (kind_templates.h)
ArgBuffer& ElementwiseKind::Impl::pack(std::span<const KernelArg> inputs, std::span<const NDArray> outs, const Plan& p,
                                       const Loaded& loaded, CUstream stream) const {
  const ElementCode& code = loaded.spec->code;
  const ElementwiseLayout& layout = p.layout;
  const bool contiguous = p.key.layout == 0;
  ArgBuffer& buffer = launch_buffer();
  const int nd = layout.ndim;
  auto put_strided = [&](const void* data, std::size_t li) {
    std::uint64_t words[1 + kMaxKindDims];
    auto ptr = reinterpret_cast<std::uintptr_t>(data);
    words[0] = ptr;
    std::memcpy(words + 1, layout.strides[li].data(), sizeof(std::int64_t) * static_cast<std::size_t>(nd));
    buffer.mark_pointer(buffer.put(words, 8 * (1 + static_cast<std::size_t>(nd))));
  };
  if (!contiguous) buffer.put(layout.shape.data(), 8 * static_cast<std::size_t>(nd));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const KernelArg& a = inputs[k];
    if (a.kind != KernelArg::Kind::Array) {
      put_scalar(buffer, core.scalar_value(k, a, code.params[k].scalar));
    } else if (raw[k]) {
      put_array(buffer, *a.array);
    } else if (contiguous) {
      void* ptr = a.array->data();
      buffer.mark_pointer(buffer.put(&ptr, sizeof ptr));
    } else {
      put_strided(a.array->data(), static_cast<std::size_t>(p.in_lay[k]));
    }
  }
  for (std::size_t k = 0; k < outs.size(); ++k) {
    if (contiguous) {
      void* ptr = outs[k].data();
      buffer.mark_pointer(buffer.put(&ptr, sizeof ptr));
    } else {
      put_strided(outs[k].data(), static_cast<std::size_t>(p.nl_in) + k);
    }
  }
  buffer.put(&layout.size, sizeof layout.size);
  if (code.bounds_record) {
    dsl::BoundsRecord* record = zero_bounds_record(*loaded.bounds, stream);
    buffer.put(&record, sizeof record);
  }
  return buffer;
}

LaunchConfig ElementwiseKind::Impl::launch_config(const Plan& p, const Loaded& loaded, CUstream stream) const {
  const std::int64_t n = p.layout.size;
  LaunchConfig config;
  if (p.cpu) {
    config.grid.x = std::min<long long>(kind::ceil_div(n, kCpuTile), 4LL * cpu_thread_count());
  } else {
    long long work = p.key.layout == 0 ? kind::ceil_div(n, p.key.vector) : n;
    config.grid.x = std::max(std::min(kind::ceil_div(work, kKindBlock), loaded.resident_blocks), 1LL);
    config.block.x = kKindBlock;
    config.stream = stream;
  }
  return config;
}

void ElementwiseKind::call(std::span<const KernelArg> inputs, std::span<NDArray> outs, const Stream* stream,
                           std::int64_t size) {
  Impl& m = *impl_;
  kind::Core& core = m.core;
  // plan
  Impl::Plan p;
  m.plan(inputs, outs, size, p);
  // overlap
  if (const std::uint64_t copy = m.overlap(inputs, outs, p)) [[unlikely]] {
    if (stream) core.stream_handle(stream, p.device);  // refuses a stream of another device before the copy uses it
    std::vector<NDArray> copies;
    call(with_copies(inputs, copy, copies, p.cpu ? nullptr : stream), outs, stream);
    return;
  }
  // lookup
  const std::int64_t n = p.layout.size;
  auto [loaded, code] = kind::lookup(m, p.key, n > 0, [&] { return types_key(p.key); });
  core.check_weak_ints(inputs, code->weak_int_uses);
  CUstream cu_stream = stream ? core.stream_handle(stream, p.device) : nullptr;
  kind::Core::allocate_outputs(outs, p.shape.shape.data(), p.shape.ndim, code->outputs, p.device, stream);
  if (n == 0) return;
  // pack
  note_operands(inputs, outs, false);
  ArgBuffer& buffer = m.pack(inputs, outs, p, *loaded, cu_stream);
  // launch
  jit::launch(loaded->program, p.device, m.launch_config(p, *loaded, cu_stream), buffer.pointers(), core.name());
  if (code->bounds_record) {
    const auto& chunks = code->chunks;
    check_bounds_record(*loaded->bounds, cu_stream, core.who(), chunks.empty() || !chunks[0] ? "?" : chunks[0]->name);
  }
}

void ElementwiseKind::compile(std::span<const dsl::Type> inputs, Device device) {
  Impl& m = *impl_;
  if (inputs.size() != m.core.nin()) m.core.check_counts(inputs.size(), m.core.nout());
  require_device(device);
  int ordinal = target_ordinal(device);
  // The call most likely to come: contiguous arrays (strong types) with weak scalars,
  // outputs allocated, nothing overlapping.
  KindKey key = key_of_types(inputs, m.core.nout(), ordinal);
  std::size_t widest = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (key.ops[k].kind == OpCode::Scalar && !(key.ops[k].flags & OpCode::Weak)) {
      key.ops[k].kind = OpCode::Array;
      widest = std::max(widest, itemsize(dtype_of(inputs[k].scalar)));
    }
  }
  key.vector = static_cast<std::uint8_t>(ordinal != kCpuDevice && widest > 0 && widest < 16 ? 16 / widest : 1);
  key.flags = KindKey::NoAlias;
  std::lock_guard lock(m.cache.mutex());
  m.cache.find_locked(key, [&](const KindKey& k) -> Impl::Loaded& { return m.load(k); });
}

std::string ElementwiseKind::inspect(std::string_view what, std::span<const dsl::Type> inputs, Device device,
                                     int arch) {
  Impl& m = *impl_;
  if (what != "types" && what != "cuda" && what != "ptx")
    fail("{}: unknown inspect kind '{}'; expected \"types\", \"cuda\" or \"ptx\"", m.core.who(), what);
  if (inputs.size() != m.core.nin()) m.core.check_counts(inputs.size(), m.core.nout());
  // PTX is the cuda target's, whatever device the call names.
  bool cpu = device.is_cpu() && what != "ptx";
  KindKey types = key_of_types(inputs, m.core.nout(), cpu ? kCpuDevice : -1);
  std::lock_guard lock(m.cache.mutex());
  Impl::Spec& spec = m.spec_for(types);
  if (what == "types") return spec.code.typed;
  if (what == "cuda" && !spec.last_source.empty()) return spec.last_source;
  KindKey key = types;  // not run yet, or PTX: the contiguous template
  key.device = static_cast<std::int16_t>(cpu ? kCpuDevice : device.is_cpu() ? 0 : device.index);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (key.ops[k].kind == OpCode::Scalar && !(key.ops[k].flags & OpCode::Weak)) key.ops[k].kind = OpCode::Array;
  key.vector = 1;
  KindSource source = elementwise_source(spec.code, m.template_of(key, spec.code), setup_.name);
  if (what == "cuda") return source.code;
  return program_ptx(m.core.program(source, spec.code.nvrtc_options, spec.code.chunks),
                     arch ? arch : current_arch_for(m.core.who()));
}

JitStats ElementwiseKind::stats() const { return impl_->cache.stats(); }

}  // namespace luda::jit

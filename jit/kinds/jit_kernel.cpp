#include "jit/kinds/jit_kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/call/overlap.h"
#include "jit/compile/cpu_prelude.h"
#include "jit/compile/nvrtc.h"
#include "runtime/cpu_executor.h"
#include "runtime/device.h"
#include "runtime/driver.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luda::jit {

// ORDER MAXDIMS: a kernel's array parameter type never has more axes than an array.
static_assert(dsl::kMaxArrayDims == kMaxNdim);

// ---------------------------------------------------------------------------------------
// options and signature keys

std::optional<bool> boundscheck_from_env() {
  const char* v = std::getenv("LUDA_BOUNDSCHECK");
  if (v == nullptr || *v == '\0') return std::nullopt;
  if (std::strcmp(v, "0") == 0) return false;
  if (std::strcmp(v, "1") == 0) return true;
  fail("LUDA_BOUNDSCHECK is '{}': expected 0 (bounds checks off) or 1 (on), or leave it unset for each "
       "kernel's boundscheck option (default: on for the cpu device, off for cuda)",
       v);
}

std::optional<bool> boundscheck_with_env(std::optional<bool> option) {
  std::optional<bool> env = boundscheck_from_env();
  return env ? env : option;
}

std::vector<dsl::Type> argument_types(std::span<const KernelArg> args) {
  // The widest floating dtype among the arrays: what a weak Lua float becomes.
  std::optional<dsl::Scalar> widest;
  for (const KernelArg& a : args)
    if (a.kind == KernelArg::Kind::Array && a.array && a.array->valid() && is_float(a.array->dtype()))
      widest = scalar_of(widest ? promote_types(dtype_of(*widest), a.array->dtype()) : a.array->dtype());
  std::vector<dsl::Type> out;
  out.reserve(args.size());
  for (const KernelArg& a : args) {
    switch (a.kind) {
      case KernelArg::Kind::Array: {
        const NDArray& x = *a.array;
        out.push_back(dsl::Type::array_of(scalar_of(x.dtype()), x.ndim(), x.is_c_contiguous()));
        break;
      }
      case KernelArg::Kind::Typed: out.push_back(dsl::Type::scalar_of(scalar_of(a.typed.dtype), a.typed.weak)); break;
      case KernelArg::Kind::Int: out.push_back(dsl::Type::scalar_of(dsl::Scalar::Int64, true)); break;
      case KernelArg::Kind::Float:
        out.push_back(dsl::Type::scalar_of(widest.value_or(dsl::Scalar::Float64), true));
        break;
      case KernelArg::Kind::Bool: out.push_back(dsl::Type::scalar_of(dsl::Scalar::Bool)); break;
    }
  }
  return out;
}

SignatureKey signature_key(std::span<const dsl::Type> types, int device, bool noalias) {
  if (types.size() > static_cast<std::size_t>(kMaxJitArgs))
    fail("a cuda.jit kernel takes at most {} arguments, got {}", kMaxJitArgs, types.size());
  SignatureKey k;
  k.device = static_cast<std::int16_t>(device);
  k.count = static_cast<std::uint8_t>(types.size());
  k.flags = noalias ? SignatureKey::NoAlias : 0;
  operand_codes(types, k.ops.data());
  return k;
}

SignatureKey signature_key(std::span<const KernelArg> args, int device) {
  if (args.size() > static_cast<std::size_t>(kMaxJitArgs))
    fail("a cuda.jit kernel takes at most {} arguments, got {}", kMaxJitArgs, args.size());
  // The same codes as argument_types gives, without building the vector (the hot path).
  SignatureKey k;
  k.device = static_cast<std::int16_t>(device);
  k.count = static_cast<std::uint8_t>(args.size());
  k.flags = arrays_disjoint(args) ? SignatureKey::NoAlias : 0;
  operand_codes(
      args, [](std::size_t) { return true; }, k.ops.data());
  return k;
}

// ---------------------------------------------------------------------------------------
// JitKernel

JitKernel::JitKernel(Setup setup, dsl::Environment& env)
    : function_(std::move(setup.function)),
      handle_(setup.handle),
      name_(setup.name.empty() ? "kernel" : std::move(setup.name)),
      what_(fmt::format("kernel '{}'", name_)),
      label_(driver::intern_label(
          function_.chunk ? fmt::format("{} ({}:{})", what_, function_.chunk->name, function_.line_defined) : what_)),
      param_names_(std::move(setup.param_names)),
      options_(setup.options),
      link_(std::move(setup.link)),
      frontend_(setup.frontend ? std::move(setup.frontend) : Frontend(dsl::compile_kernel)),
      disk_cache_(setup.cache ? setup.cache : &DiskCache::global()),
      env_(env) {
  options_.boundscheck = boundscheck_with_env(options_.boundscheck);
}

JitKernel::~JitKernel() {
  for (Loaded& l : cache_.entries()) unload_program(l.program);
}

void JitKernel::check_count(std::size_t n) const {
  int expected = function_.nparams;
  if (expected < 0 && !param_names_.empty()) expected = static_cast<int>(param_names_.size());
  if (expected < 0 || n == static_cast<std::size_t>(expected)) return;
  std::string names = param_names_.empty() ? "" : fmt::format(" ({})", fmt::join(param_names_, ", "));
  if (expected == 0) fail("kernel '{}' takes no arguments, got {}", name_, n);
  fail("kernel '{}' takes {} argument{}{}, got {}", name_, expected, expected == 1 ? "" : "s", names, n);
}

JitKernel::Specialization& JitKernel::specialize(const std::vector<dsl::Type>& types, bool from_signature, bool noalias,
                                                 dsl::Target target) {
  SignatureKey key = signature_key(types, target == dsl::Target::Cpu ? kCpuDevice : -1, noalias);
  Specialization& s = specs_.get(key, cache_.counters(), [&] {
    dsl::KernelRequest request;
    request.function = function_;
    request.handle = handle_;
    request.name = name_;
    request.args = types;
    request.options.target = target;
    request.options.boundscheck = checks_bounds(options_.boundscheck, target);
    request.options.fastmath = options_.fastmath;
    request.options.debug = options_.debug;
    request.options.noalias = noalias;
    request.link = link_;
    dsl::CudaKernel kernel = frontend_(request, env_);
    bool linked_fibers = false;
    // The cpu target's code comes without a prelude (dsl/compile.h, Target): ours goes first,
    // then the declared functions and the sources that define them, read as raw sources are.
    if (target == dsl::Target::Cpu) {
      std::string head(cpu_generated_prelude());
      head += kernel.declarations;
      for (const auto& c : kernel.link) {
        head += cpu_raw_source(c->text, c->name) + "\n";
        linked_fibers = linked_fibers || raw_source_needs_fibers(c->text);
      }
      if (!kernel.link.empty()) head += "#line 1 \"luda_generated\"\n";
      kernel.code.insert(0, head);
    }
    LUDA_INTERNAL_CHECK(kernel.params.size() == types.size());
    std::vector<std::shared_ptr<const dsl::Chunk>> chunks = kernel.link;
    if (function_.chunk) chunks.push_back(function_.chunk);
    return Specialization{types, target, std::move(kernel), from_signature, noalias, std::move(chunks), linked_fibers};
  });
  s.from_signature = s.from_signature || from_signature;
  return s;
}

JitKernel::Specialization* JitKernel::find_convertible(std::span<const KernelArg> args, dsl::Target target) {
  for (Specialization& s : specs_) {
    if (!s.from_signature || s.target != target || s.types.size() != args.size()) continue;
    bool ok = true;
    for (std::size_t i = 0; ok && i < args.size(); ++i) {
      const dsl::Type& p = s.types[i];
      const KernelArg& a = args[i];
      if (p.kind == dsl::Type::Kind::Array) {
        ok = a.kind == KernelArg::Kind::Array && scalar_of(a.array->dtype()) == p.scalar && a.array->ndim() == p.ndim &&
             (!p.c_contiguous || a.array->is_c_contiguous());
      } else if (a.kind == KernelArg::Kind::Typed) {
        ok = scalar_of(a.typed.dtype) == p.scalar;
      } else if (a.kind == KernelArg::Kind::Bool) {
        ok = p.scalar == dsl::Scalar::Bool;
      } else {  // a weak Lua number converts to any number type (checked when packed)
        ok = a.kind != KernelArg::Kind::Array && p.scalar != dsl::Scalar::Bool;
      }
    }
    if (ok) return &s;
  }
  return nullptr;
}

ProgramText JitKernel::program_text(const Specialization& spec) const {
  ProgramText p;
  p.code = spec.kernel.code;
  p.entry = spec.kernel.entry;
  p.options = spec.kernel.nvrtc_options;  // what the code needs (dsl decides)
  p.name = name_;
  p.what = what_;
  p.chunks = spec.chunks;
  p.local_bytes = spec.kernel.local_bytes;
  return p;
}

JitKernel::Loaded& JitKernel::load(Specialization& spec, int ordinal) {
  for (Loaded& l : cache_.entries())
    if (l.spec == &spec && l.program.ordinal == ordinal) return l;
  Loaded l;
  l.spec = &spec;
  l.program = load_program(program_text(spec), ordinal, *disk_cache_, cache_.counters());
  // The generated entry knows only the Lua code's needs; a linked source's barriers need
  // the block's threads to interleave too.
  if (spec.linked_needs_fibers) l.program.cpu.needs_fibers = true;
  l.program.cooperative = spec.kernel.cooperative;
  if (spec.kernel.bounds_record)
    l.bounds = Buffer::allocate(ordinal == kCpuDevice ? Device::cpu() : Device::cuda(ordinal),
                                sizeof(dsl::BoundsRecord));
  return cache_.add(std::move(l));
}

// The launch's arguments laid out as the kernel's parameters expect (the same ABI on both
// targets), after the checks that need the kernel. The buffer is this thread's, reused.
ArgBuffer& JitKernel::pack(const dsl::CudaKernel& kernel, const LaunchConfig& config,
                           std::span<const KernelArg> args) const {
  if (kernel.dynamic_shared && config.shared_mem == 0)
    fail("kernel '{}' uses cuda.shared.dynamic, but the launch gives it no shared memory; give its size in "
         "bytes: {}[{{grid = g, block = b, shared = bytes}}](...)",
         name_, name_);
  if (const dsl::WeakIntUse* u = weak_int_out_of_bounds(args, kernel.weak_int_uses)) [[unlikely]] {
    auto i = static_cast<std::size_t>(u->param);
    std::string argument = fmt::format("argument {}", i + 1);
    if (i < param_names_.size()) argument += fmt::format(" '{}'", param_names_[i]);
    weak_int_error(what_, argument, *u, args[i].i);
  }
  ArgBuffer& buffer = launch_buffer();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const dsl::Type& p = kernel.params[i];
    const KernelArg& a = args[i];
    if (p.kind == dsl::Type::Kind::Array) {
      LUDA_INTERNAL_CHECK(a.array->ndim() == p.ndim && scalar_of(a.array->dtype()) == p.scalar);
      put_array(buffer, *a.array);
    } else {
      std::string_view param = i < param_names_.size() ? std::string_view(param_names_[i]) : std::string_view{};
      put_scalar(buffer, convert_scalar(name_, i, param, dtype_of(p.scalar), a));
    }
  }
  return buffer;
}

void JitKernel::launch(const LaunchConfig& config, std::span<const KernelArg> args) {
  // plan: where the arrays are and the arguments' signature, with the overlap step's
  // NoAlias when no two arrays may share memory
  check_count(args.size());
  const Device device = call_device(what_, args, {}, param_names_);
  const int ordinal = target_ordinal(device);
  const dsl::Target target = ordinal == kCpuDevice ? dsl::Target::Cpu : dsl::Target::Cuda;
  const SignatureKey key = signature_key(args, ordinal);
  // lookup
  Loaded* loaded = &cache_.find(key, [&](const SignatureKey& k) -> Loaded& {
    // Disjoint arrays get their own specialization with restricted pointers (made on
    // first such call); a signature compiled ahead serves both kinds of call.
    const bool noalias = (k.flags & SignatureKey::NoAlias) != 0;
    std::vector<dsl::Type> types = argument_types(args);
    SignatureKey type_key = signature_key(types, ordinal == kCpuDevice ? kCpuDevice : -1, noalias);
    Specialization* spec = nullptr;
    if (Specialization* t = specs_.find(type_key)) spec = t;
    if (!spec) spec = find_convertible(args, target);
    if (!spec) spec = &specialize(types, false, noalias, target);
    return load(*spec, ordinal);
  });
  // pack
  const dsl::CudaKernel& kernel = loaded->spec->kernel;
  check_launch_config(config, ordinal, what_);
  note_operands(args, {}, true);  // a kernel may write any array it is given
  ArgBuffer& buffer = pack(kernel, config, args);
  if (kernel.bounds_record) {
    dsl::BoundsRecord* record = zero_bounds_record(*loaded->bounds, config.stream);
    buffer.put(&record, sizeof record);
  }
  // launch
  jit::launch(loaded->program, device, config, buffer.pointers(), LaunchName{what_, label_});
  if (kernel.bounds_record)
    check_bounds_record(*loaded->bounds, config.stream, what_, function_.chunk ? function_.chunk->name : "?");
}

// ---------------------------------------------------------------------------------------
// ahead-of-time compile and inspection

namespace {

std::vector<dsl::Type> kernel_signature(std::string_view text, const std::string& name) {
  dsl::Signature sig = dsl::parse_signature(text);
  if (sig.result.kind != dsl::Type::Kind::Void)
    fail("kernel '{}': a kernel returns nothing, so its signature starts with void, as in "
         "\"void(float32[:], int64)\"; got \"{}\"",
         name, text);
  return sig.params;
}

}  // namespace

void JitKernel::compile(std::string_view signature) {
  std::vector<dsl::Type> types = kernel_signature(signature, name_);
  check_count(types.size());
  Device d = current_device();
  const int ordinal = target_ordinal(d);
  std::lock_guard lock(cache_.mutex());
  Specialization& spec = specialize(types, true, false, d.is_cpu() ? dsl::Target::Cpu : dsl::Target::Cuda);
  cache_.find_locked(signature_key(types, ordinal),
                     [&](const SignatureKey&) -> Loaded& { return load(spec, ordinal); });
}

JitKernel::Specialization& JitKernel::only_or_named(std::string_view signature) {
  if (!signature.empty()) {
    std::vector<dsl::Type> types = kernel_signature(signature, name_);
    check_count(types.size());
    return specialize(types, true);
  }
  if (specs_.empty())
    fail("kernel '{}' has no specialization yet; name a signature: {}:inspect(\"cuda\", \"void(float32[:], ...)\")",
         name_, name_);
  std::vector<std::string> names = signatures_locked();
  if (names.size() == 1) {
    // One signature, perhaps compiled twice: show what a call with disjoint arrays runs.
    for (Specialization& s : specs_)
      if (s.noalias) return s;
    return *specs_.begin();
  }
  fail("kernel '{}' has {} specializations ({}); name one as the second argument", name_, names.size(),
       fmt::join(names, ", "));
}

std::string JitKernel::inspect(std::string_view kind, std::string_view signature, int arch) {
  if (kind != "types" && kind != "cuda" && kind != "ptx")
    fail("kernel '{}': unknown inspect kind '{}'; expected \"types\", \"cuda\" or \"ptx\"", name_, kind);
  std::lock_guard lock(cache_.mutex());
  Specialization* named = &only_or_named(signature);
  if (kind == "types") return named->kernel.typed;
  if (kind == "cuda") return named->kernel.code;
  // PTX is the cuda target's: a kernel that ran on the cpu is emitted for it too.
  if (named->target == dsl::Target::Cpu) named = &specialize(named->types, false, named->noalias);
  Specialization& spec = *named;
  if (arch == 0) arch = current_arch_for(what_);
  return program_ptx(program_text(spec), arch);
}

long long JitKernel::max_cooperative_grid_blocks(const Dim3& block, unsigned shared_mem) {
  Device d = current_device();
  if (d.is_cpu()) return static_cast<long long>(cpu_max_cooperative_blocks(block.count()));
  std::lock_guard lock(cache_.mutex());
  for (const Loaded& l : cache_.entries())
    if (l.program.ordinal == d.index) return jit::max_cooperative_grid_blocks(l.program, block, shared_mem);
  fail("kernel '{}' is not compiled for {} yet, and its limit depends on its registers and shared memory; "
       "call it once, or compile it first: {}:compile(\"void(...)\")",
       name_, d.str(), name_);
}

std::vector<std::string> JitKernel::signatures() const {
  std::lock_guard lock(cache_.mutex());
  return signatures_locked();
}

// Each argument signature once: its noalias twin (for disjoint arrays) is not another.
std::vector<std::string> JitKernel::signatures_locked() const {
  std::vector<std::string> out;
  for (const Specialization& s : specs_) {
    std::string name = dsl::Signature{dsl::Type::void_(), s.types}.str();
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

JitStats JitKernel::stats() const { return cache_.stats(); }

}  // namespace luda::jit

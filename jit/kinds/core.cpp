#include "jit/kinds/core.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/cpu_executor.h"
#include "runtime/device.h"
#include "runtime/driver.h"

namespace luda::jit::kind {

Core::Core(std::string kind, std::string name, std::vector<std::string> in_names, std::vector<std::string> out_names,
           DiskCache* cache)
    : who_(fmt::format("{} '{}'", kind, name)),
      label_(driver::intern_label(who_)),
      name_(std::move(name)),
      nin_(in_names.size()),
      cache_(cache ? cache : &DiskCache::global()) {
  if (in_names.size() + out_names.size() > static_cast<std::size_t>(kMaxKindOperands))
    fail("{} has {} parameters; a kernel kind takes at most {}", who_, in_names.size() + out_names.size(),
         kMaxKindOperands);
  names_ = std::move(in_names);
  names_.insert(names_.end(), out_names.begin(), out_names.end());
}

std::string Core::input_label(std::size_t k) const {
  return names_[k].empty() ? fmt::format("argument {}", k + 1) : fmt::format("argument {} '{}'", k + 1, names_[k]);
}

std::string Core::output_label(std::size_t k) const {
  const std::string& n = names_[nin_ + k];
  return n.empty() ? fmt::format("output {}", k + 1) : fmt::format("output {} '{}'", k + 1, n);
}

void Core::check_counts(std::size_t inputs, std::size_t outputs) const {
  auto listed = [](std::span<const std::string> names) {
    return names.empty() ? std::string() : fmt::format(" ({})", fmt::join(names, ", "));
  };
  std::span<const std::string> all(names_);
  if (inputs != nin_)
    fail("{} takes {} input{}{}, got {}", who_, nin_, nin_ == 1 ? "" : "s", listed(all.first(nin_)), inputs);
  if (outputs != nout())
    fail("{} has {} output{}{}, got {}", who_, nout(), nout() == 1 ? "" : "s", listed(all.subspan(nin_)), outputs);
}

CUstream Core::stream_handle(const Stream* stream, Device device) const {
  if (!stream || device.is_cpu()) return nullptr;  // the cpu target runs synchronously
  if (stream->device() != device)
    fail("{}: the stream is on {} but the arrays are on {}; use a stream of {}", who_, stream->device().str(),
         device.str(), device.str());
  return stream->handle();
}

void Core::broadcast_error(std::span<const KernelArg> inputs, std::span<const bool> skip) const {
  std::vector<std::string> shapes;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].kind == KernelArg::Kind::Array && !(k < skip.size() && skip[k]))
      shapes.push_back(shape_str(inputs[k].array->shape()));
  fail("{}: operands could not be broadcast together with shapes {}", who_, fmt::join(shapes, " "));
}

void Core::check_output(std::size_t k, const NDArray& out, const std::int64_t* shape, int ndim) const {
  bool same = out.ndim() == ndim;
  for (int a = 0; same && a < ndim; ++a) same = out.shape()[static_cast<std::size_t>(a)] == shape[a];
  if (!same)
    fail("{}: {} has shape {} but the result has shape {}", who_, output_label(k), shape_str(out.shape()),
         shape_str(Shape(shape, shape + ndim)));
  for (int a = 0; a < ndim && out.size() > 0; ++a)  // an empty output has no elements to overlap
    if (shape[a] > 1 && out.strides()[static_cast<std::size_t>(a)] == 0)
      fail("{}: {} is a broadcast view (stride 0 along axis {}): its elements overlap; pass an array that owns "
           "each element",
           who_, output_label(k), a + 1);
}

void Core::check_outputs_disjoint(std::span<const NDArray> outs) const {
  if (auto pair = shared_outputs(outs))
    fail("{}: {} and {} share memory; pass separate arrays", who_, output_label(pair->first),
         output_label(pair->second));
}

void Core::check_made_outputs(std::span<const std::optional<dsl::Scalar>> given, std::span<const dsl::Scalar> made,
                              std::string_view maker) const {
  auto a_dtype = [](dsl::Scalar s) {
    std::string_view n = dsl::scalar_name(s);
    return fmt::format("{} {}", n.front() == 'i' ? "an" : "a", n);
  };
  for (std::size_t k = 0; k < given.size(); ++k)
    if (given[k] && *given[k] != made[k])
      fail("{}: {} is {} array but {} makes {}; pass {} array or none", who(), output_label(k), a_dtype(*given[k]),
           maker, dsl::scalar_name(made[k]), a_dtype(made[k]));
}

Scalar Core::scalar_value(std::size_t k, const KernelArg& a, dsl::Scalar want) const {
  const DType to = dtype_of(want);
  if (a.kind == KernelArg::Kind::Typed) return a.typed.dtype == to ? a.typed : a.typed.cast(to);
  if (a.kind == KernelArg::Kind::Int && is_integer(to) && !integer_fits(a.i, to)) [[unlikely]] {
    IntegerRange r = integer_range(to);
    fail("{}: Lua integer {} out of bounds for {}, the dtype of {} ({} to {})", who_, a.i, dtype_name(to),
         input_label(k), r.lo, r.hi);
  }
  try {
    return convert_scalar(name_, k, names_[k], to, a);
  } catch (const Error& e) {
    // convert_scalar speaks of "kernel '<name>'"; the kind's name comes first here.
    std::string_view msg = e.what();
    std::string prefix = fmt::format("kernel '{}'", name_);
    if (msg.starts_with(prefix)) msg.remove_prefix(prefix.size());
    throw Error(fmt::format("{}{}", who_, msg));
  }
}

std::vector<dsl::Type> Core::input_types(const KindKey& key, std::size_t nin, std::span<const bool> raw) {
  std::vector<dsl::Type> out;
  for (std::size_t k = 0; k < nin; ++k) {
    const OpCode& c = key.ops[k];
    auto s = static_cast<dsl::Scalar>(c.scalar);
    if (c.kind == OpCode::Whole || (k < raw.size() && raw[k]))
      out.push_back(dsl::Type::array_of(s, c.ndim, (c.flags & OpCode::CContiguous) != 0));
    else out.push_back(dsl::Type::scalar_of(s, (c.flags & OpCode::Weak) != 0));
  }
  return out;
}

std::vector<std::optional<dsl::Scalar>> Core::output_types(const KindKey& key, std::size_t nin) {
  std::vector<std::optional<dsl::Scalar>> out;
  for (std::size_t k = nin; k < key.count; ++k) {
    const OpCode& c = key.ops[k];
    if (c.kind == OpCode::Missing) out.emplace_back();
    else out.emplace_back(static_cast<dsl::Scalar>(c.scalar));
  }
  return out;
}

void Core::allocate_outputs(std::span<NDArray> outs, const std::int64_t* shape, int ndim,
                            std::span<const dsl::Scalar> dtypes, Device device, const Stream* stream) {
  const bool cpu = device.is_cpu();
  for (std::size_t k = 0; k < outs.size(); ++k)
    if (!outs[k].valid())
      outs[k] = NDArray::empty(Shape(shape, shape + ndim), dtype_of(dtypes[k]), device, cpu ? nullptr : stream);
}

ProgramText Core::program(const KindSource& source, const std::vector<std::string>& options,
                          const std::vector<std::shared_ptr<const dsl::Chunk>>& chunks) const {
  ProgramText p;
  p.code = source.code;
  p.entry = source.entry;
  p.options = options;
  p.name = name_;
  p.what = who_;
  p.chunks = chunks;
  return p;
}

int resident_blocks_per_sm(CUfunction f, int ordinal, int threads) {
  const driver::Api& cu = driver::api();
  auto func = [&](CUfunction_attribute a) {
    int v = 0;
    driver::check(cu.cuFuncGetAttribute(&v, a, f), "cuFuncGetAttribute");
    return v;
  };
  CUdevice dev = 0;
  driver::check(cu.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  auto device = [&](CUdevice_attribute a) {
    int v = 0;
    driver::check(cu.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
    return v;
  };
  const int warps = (threads + 31) / 32;
  const int regs_per_warp = std::max(1, (func(CU_FUNC_ATTRIBUTE_NUM_REGS) * 32 + 255) / 256 * 256);
  int blocks = device(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / threads;
  blocks = std::min(blocks, device(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR) / (regs_per_warp * warps));
  blocks = std::min(blocks, device(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR));
  if (int shared = func(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES); shared > 0)
    blocks = std::min(blocks, device(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) / (shared + 1024));
  return std::max(blocks, 1);
}

}  // namespace luda::jit::kind

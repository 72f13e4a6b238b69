#include "jit/raw/arguments.h"

#include <fmt/format.h>

#include "runtime/error.h"

namespace luda::jit {
namespace {

// Packs into `out`, reusing its storage. Nothing is formatted unless an argument is
// wrong: this runs on every launch of a raw kernel.
class Packer {
 public:
  Packer(const std::string& kernel, ArgBuffer& out) : kernel_(kernel), out_(out) {}

  void at(std::size_t index, const KernelParam* param) {
    index_ = index;
    param_ = param;
  }

  // "raw_kernel 'k': argument 2 'x2' is 'const float* x2'" + the rest.
  template <class... Args>
  [[noreturn]] void error(fmt::format_string<Args...> f, Args&&... args) {
    throw Error(fmt::format("raw_kernel '{}': {}{}", kernel_, where(), fmt::format(f, std::forward<Args>(args)...)));
  }

  // The arrays' device was checked (arrays_device) before packing.
  void pointer(const NDArray& a) {
    if (!a.valid()) error(" but got an empty array handle; pass an array");
    void* p = a.data();
    out_.mark_pointer(out_.put(&p, sizeof p));
  }

  void scalar(Scalar v) { put_scalar(out_, v); }

 private:
  // "argument 2 'x2' is 'const float* x2'" or, for an unnamed parameter,
  // "argument 2 is 'const float*'"; without a signature "argument 2".
  std::string where() const {
    std::string out = fmt::format("argument {}", index_ + 1);
    if (param_ && !param_->name.empty()) out += fmt::format(" '{}'", param_->name);
    if (param_) {
      out += fmt::format(" is '{}", param_->type.spelling);
      if (!param_->name.empty()) out += " " + param_->name;
      out += "'";
    }
    return out;
  }

  const std::string& kernel_;
  ArgBuffer& out_;
  std::size_t index_ = 0;
  const KernelParam* param_ = nullptr;
};

// CuPy's rule, for lists we cannot read.
void pass_unchecked(Packer& p, const KernelArg& a) {
  switch (a.kind) {
    case KernelArg::Kind::Array: p.pointer(*a.array); return;
    case KernelArg::Kind::Typed: p.scalar(a.typed); return;
    case KernelArg::Kind::Int: p.scalar(Scalar::of_int(a.i)); return;
    case KernelArg::Kind::Float: p.scalar(Scalar::of_float(a.f)); return;
    case KernelArg::Kind::Bool: p.scalar(Scalar::of_bool(a.b)); return;
  }
}

void pass_checked(Packer& p, const KernelParam& param, const KernelArg& a) {
  const ParamType& type = param.type;
  if (type.kind == ParamType::Kind::Opaque)
    p.error(", a type luda cannot pass; declare the parameter with a scalar type (int, float, "
            "double, ...) or as a pointer");
  if (type.kind == ParamType::Kind::Pointer) {
    if (a.kind != KernelArg::Kind::Array) p.error(" but got {}; pass an array", describe_arg(a));
    if (type.dtype && a.array->valid() && a.array->dtype() != *type.dtype)
      p.error(" but got {}; pass {} array", describe_arg(a), a_dtype(*type.dtype));
    p.pointer(*a.array);
    return;
  }
  DType want = *type.dtype;
  switch (a.kind) {
    case KernelArg::Kind::Array:
      p.error(" but got {}; pass a {}", describe_arg(a), want == DType::Bool ? "boolean" : "number");
    case KernelArg::Kind::Typed:
      if (a.typed.dtype != want)
        p.error(" but got {}; pass luda.{}(v) or a plain {}", describe_arg(a), dtype_name(want),
                want == DType::Bool ? "boolean" : "number");
      p.scalar(a.typed);
      return;
    case KernelArg::Kind::Bool:
      if (want != DType::Bool) p.error(" but got {}; pass a number", describe_arg(a));
      p.scalar(Scalar::of_bool(a.b));
      return;
    case KernelArg::Kind::Int:
      if (want == DType::Bool) p.error(" but got {}; pass true or false", describe_arg(a));
      if (!integer_fits(a.i, want)) p.error(" but {} does not fit in {}", a.i, dtype_name(want));
      p.scalar(is_float(want) ? Scalar::of_float(static_cast<double>(a.i), want) : Scalar::of_int(a.i, want));
      return;
    case KernelArg::Kind::Float:
      if (want == DType::Bool) p.error(" but got {}; pass true or false", describe_arg(a));
      if (is_float(want)) {
        p.scalar(Scalar::of_float(a.f, want));
        return;
      }
      // As Lua itself does: a float with an exact integer value is that integer.
      if (std::isfinite(a.f) && a.f == std::floor(a.f) && a.f >= -0x1p63 && a.f < 0x1p63) {
        auto i = static_cast<std::int64_t>(a.f);
        if (!integer_fits(i, want)) p.error(" but {} does not fit in {}", lua_float(a.f), dtype_name(want));
        p.scalar(Scalar::of_int(i, want));
        return;
      }
      p.error(" but got {}; pass an integer", describe_arg(a));
  }
}

}  // namespace

void pack_arguments(ArgBuffer& out, const std::string& kernel, const std::optional<KernelSignature>& signature,
                    std::span<const KernelArg> args) {
  out.clear();
  if (signature && signature->params.size() != args.size()) {
    std::vector<std::string> names;
    for (const auto& p : signature->params) names.push_back(p.name.empty() ? p.type.spelling : p.name);
    std::size_t n = names.size();
    if (n == 0) fail("raw_kernel '{}' takes no arguments, got {}", kernel, args.size());
    fail("raw_kernel '{}' takes {} argument{} ({}), got {}", kernel, n, n == 1 ? "" : "s", fmt::join(names, ", "),
         args.size());
  }
  std::optional<Device> device;
  if (!one_device(args, &device)) {  // the error, with the parameters' names
    std::vector<std::string> names;
    if (signature)
      for (const auto& param : signature->params) names.push_back(param.name);
    arrays_device(fmt::format("raw_kernel '{}'", kernel), args, names);
  }
  Packer p(kernel, out);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelParam* param = signature ? &signature->params[i] : nullptr;
    p.at(i, param);
    if (param) pass_checked(p, *param, args[i]);
    else pass_unchecked(p, args[i]);
  }
}

ArgBuffer pack_arguments(const std::string& kernel, const std::optional<KernelSignature>& signature,
                         std::span<const KernelArg> args) {
  ArgBuffer out;
  pack_arguments(out, kernel, signature, args);
  return out;
}

}  // namespace luda::jit

#include "jit/kernel_args.h"

#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "runtime/error.h"

namespace luda::jit {
namespace {

// "an int32", "a float64", "a uint8"
std::string a_dtype(DType t) {
  std::string_view n = dtype_name(t);
  return fmt::format("{} {}", n.front() == 'i' ? "an" : "a", n);
}



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

// The common case of arrays_device, with no allocation: every array argument valid and
// on one device. False when the slow path must find the error.
bool one_device(std::span<const KernelArg> args, std::optional<Device>* out) {
  std::optional<Device> found;
  for (const KernelArg& a : args) {
    if (a.kind != KernelArg::Kind::Array) continue;
    if (!a.array || !a.array->valid()) return false;
    Device d = a.array->device();
    if (!found) found = d;
    else if (*found != d) return false;
  }
  *out = found;
  return true;
}

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

// Lua's way of showing a float ("%.14g", then ".0" if it looks like an integer): 2.5,
// 1e+20, 3.0, inf; a NaN of either sign is "nan", as NumPy prints it (Lua's own text
// follows the sign bit: 0/0 prints as "-nan").
std::string lua_float(double f) {
  if (std::isnan(f)) return "nan";
  std::string s = fmt::format("{:.14g}", f);
  if (std::isfinite(f) && s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string describe_arg(const KernelArg& a) {
  switch (a.kind) {
    case KernelArg::Kind::Array:
      return a.array && a.array->valid() ? a_dtype(a.array->dtype()) + " array" : "an empty array handle";
    case KernelArg::Kind::Typed: return a_dtype(a.typed.dtype) + " scalar";
    case KernelArg::Kind::Int: return fmt::format("the integer {}", a.i);
    case KernelArg::Kind::Float: return fmt::format("a float {}", lua_float(a.f));
    case KernelArg::Kind::Bool: return fmt::format("the boolean {}", a.b);
  }
  return "?";
}

std::optional<Device> arrays_device(std::string_view who, std::span<const KernelArg> args,
                                    std::span<const std::string> names) {
  std::optional<Device> device;
  if (one_device(args, &device)) return device;
  struct Group {
    Device device;
    std::vector<std::string> names;
  };
  std::vector<Group> groups;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != KernelArg::Kind::Array) continue;
    bool named = i < names.size() && !names[i].empty();
    std::string name = named ? names[i] : fmt::format("argument {}", i + 1);
    if (!args[i].array || !args[i].array->valid())
      fail("{}: {} is an empty array handle; pass an array", who,
           named ? fmt::format("argument {} '{}'", i + 1, name) : name);
    Device d = args[i].array->device();
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.device == d; });
    if (g == groups.end()) groups.push_back({d, {std::move(name)}});
    else g->names.push_back(std::move(name));
  }
  if (groups.empty()) return std::nullopt;
  if (groups.size() == 1) return groups[0].device;
  // The fix moves the others to the first CUDA device (where the work is meant to run).
  auto target = std::find_if(groups.begin(), groups.end(), [](const Group& x) { return x.device.is_cuda(); });
  if (target == groups.end()) target = groups.begin();
  const Group& other = target == groups.begin() ? groups[1] : groups[0];
  std::string listed;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (k) listed += k + 1 == groups.size() ? " and " : ", ";
    listed += fmt::format("{} ({})", groups[k].device.str(), fmt::join(groups[k].names, ", "));
  }
  fail("{} got arrays on {}; put them on one device ({}:to(\"{}\"))", who, listed, other.names[0],
       target->device.str());
}

std::optional<Device> arrays_device(std::string_view kind, std::string_view name, std::span<const KernelArg> args,
                                    std::span<const std::string> names) {
  std::optional<Device> device;
  if (one_device(args, &device)) return device;
  return arrays_device(fmt::format("{} '{}'", kind, name), args, names);
}

void pack_arguments(ArgBuffer& out, const std::string& kernel, const std::optional<KernelSignature>& signature,
                    std::span<const KernelArg> args) {
  out.clear();
  if (signature && signature->params.size() != args.size()) {
    std::vector<std::string> names;
    for (const auto& p : signature->params) names.push_back(p.name.empty() ? p.type.spelling : p.name);
    std::size_t n = names.size();
    if (n == 0) fail("raw_kernel '{}' takes no arguments, got {}", kernel, args.size());
    fail("raw_kernel '{}' takes {} argument{} ({}), got {}", kernel, n, n == 1 ? "" : "s",
         fmt::join(names, ", "), args.size());
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

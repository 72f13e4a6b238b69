#include "jit/call/call_args.h"

#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "runtime/error.h"

namespace luda::jit {
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

std::string a_dtype(DType t) {
  std::string_view n = dtype_name(t);
  return fmt::format("{} {}", n.front() == 'i' ? "an" : "a", n);
}

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

}  // namespace luda::jit

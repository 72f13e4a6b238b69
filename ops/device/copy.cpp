#include "ops/device/copy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "jit/raw/raw_module.h"
#include "runtime/error.h"

namespace luda::ops::device {

namespace {

// The most axes a copy's layout keeps after merging (runtime/ndarray.h, copy_layout).
constexpr int kMaxAxes = 8;

const char* c_type(DType t) { return dtype_c_type(t); }

// An integer dtype's least and greatest values as C literals.
template <class T>
std::pair<std::string, std::string> limits_of() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_signed_v<T>)
    return {fmt::format("({}LL - 1)", static_cast<long long>(L::min()) + 1), fmt::format("{}LL", L::max())};
  else return {"0ULL", fmt::format("{}ULL", static_cast<unsigned long long>(L::max()))};
}
std::pair<std::string, std::string> limits(DType t) {
  switch (t) {
    case DType::Int8: return limits_of<std::int8_t>();
    case DType::Int16: return limits_of<std::int16_t>();
    case DType::Int32: return limits_of<std::int32_t>();
    case DType::Int64: return limits_of<std::int64_t>();
    case DType::UInt8: return limits_of<std::uint8_t>();
    case DType::UInt16: return limits_of<std::uint16_t>();
    case DType::UInt32: return limits_of<std::uint32_t>();
    case DType::UInt64: return limits_of<std::uint64_t>();
    default: throw InternalError("no integer limits");
  }
}

// "copy_float32_to_int32": the kernel's name, which graphs' nodes show.
std::string entry(DType to, DType from) { return fmt::format("copy_{}_to_{}", dtype_name(from), dtype_name(to)); }

// The statements that convert `v`, a real value of C type `from` (a 16-bit float already
// widened to float, a complex's real part), to To, as the host converts (runtime/dtype.h
// convert_element): nonzero is true; floats to integers truncate and saturate, NaN giving
// the minimum; 16-bit floats round once, from float32 or float64 (integers through float64).
std::string real_to(DType to, std::string_view from, bool from_float) {
  if (to == DType::Bool) return "return v != 0;";
  if (is_float(to) && itemsize(to) == 2)
    return std::string(from == "float" ? "return luda_to_half<To>(v);" : "return luda_to_half<To>((double)v);");
  if (is_complex(to))
    return fmt::format("To r;\n  r.re = ({0})v;\n  r.im = ({0})0;\n  return r;",
                       to == DType::Complex64 ? "float" : "double");
  if (from_float && !is_float(to)) {
    auto [lo, hi] = limits(to);
    return fmt::format("double f = (double)v;\n"
                       "  if (f != f) return (To)({0});\n"
                       "  if (f >= (double)({1})) return (To)({1});\n"
                       "  if (f <= (double)({0})) return (To)({0});\n"
                       "  return (To)f;",
                       lo, hi);
  }
  return "return (To)v;";
}

// The kernel's source for one pair: an element's conversion, then a grid-stride loop
// that finds each element's two byte offsets from its index.
std::string source(DType to, DType from) {
  // A bool is read as its byte, true for any nonzero one (whoever wrote it), as the host
  // reads it. A complex converts to bool when either part is nonzero, to a complex part
  // by part, to anything else as its real part does.
  std::string convert;
  if (to == from) {
    convert = "return x;";
  } else if (from == DType::Bool) {
    convert = "const bool v = x != 0;\n  " + real_to(to, "bool", false);
  } else if (is_complex(from) && to == DType::Bool) {
    convert = "return x.re != 0 || x.im != 0;";
  } else if (is_complex(from) && is_complex(to)) {
    convert = fmt::format("To r;\n  r.re = ({0})x.re;\n  r.im = ({0})x.im;\n  return r;",
                          to == DType::Complex64 ? "float" : "double");
  } else if (is_complex(from)) {
    const char* part = from == DType::Complex64 ? "float" : "double";
    convert = fmt::format("const {} v = x.re;\n  {}", part, real_to(to, part, true));
  } else if (is_float(from) && itemsize(from) == 2) {
    convert = "const float v = luda_h2f(x);\n  " + real_to(to, "float", true);
  } else {
    convert = fmt::format("const From v = x;\n  {}", real_to(to, c_type(from), is_float(from)));
  }
  std::string shape, dst, src;
  for (int k = 0; k < kMaxAxes; ++k) {
    shape += fmt::format(", long long n{}", k);
    dst += fmt::format(", long long d{}", k);
    src += fmt::format(", long long s{}", k);
  }
  std::string lists;
  for (const char* a : {"n", "d", "s"}) {
    lists += fmt::format("  const long long {}[{}] = {{", a, kMaxAxes);
    for (int k = 0; k < kMaxAxes; ++k) lists += fmt::format("{}{}{}", k ? ", " : "", a, k);
    lists += "};\n";
  }
  return fmt::format(
      "#line 1 \"luda_device_copy\"\n"
      "typedef {0} To;\n"
      "typedef {1} From;\n"
      "typedef {8} Source;\n"
      "__device__ __forceinline__ To luda_copy_element(From x) {{\n  {2}\n}}\n"
      "extern \"C\" __global__ void {7}(To* dst, const Source* src, long long count, int axes{3}{4}{5}) {{\n"
      "{6}"
      "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {{\n"
      "    long long rest = i, to = 0, at = 0;\n"
      "    for (int k = axes - 1; k >= 0; --k) {{\n"
      "      const long long c = rest % n[k];\n"
      "      rest /= n[k];\n"
      "      to += c * d[k];\n"
      "      at += c * s[k];\n"
      "    }}\n"
      "    *(To*)((char*)dst + to) = luda_copy_element(*(const From*)((const char*)src + at));\n"
      "  }}\n"
      "}}\n",
      c_type(to), from == DType::Bool ? "unsigned char" : c_type(from), convert, shape, dst, src, lists,
      entry(to, from), c_type(from));
}

jit::RawKernel& kernel(DType to, DType from) {
  static std::mutex mutex;
  static std::map<std::pair<DType, DType>, std::shared_ptr<jit::RawKernel>> kernels;
  std::lock_guard lock(mutex);
  auto& k = kernels[{to, from}];
  if (!k) k = jit::RawModule::create(source(to, from))->get_function(entry(to, from));
  return *k;
}

}  // namespace

std::string device_copy_source(DType to, DType from) { return source(to, from); }

void install_device_assign() {
  [[maybe_unused]] static const bool installed = (set_device_assign(&device_assign), true);
}

void device_assign(const NDArray& dst, const NDArray& src, CUstream stream) {
  if (dst.size() == 0) return;
  const CopyLayout l = copy_layout(dst.shape(), dst.strides(), static_cast<std::int64_t>(itemsize(dst.dtype())),
                                   broadcast_strides(src, dst.shape()),
                                   static_cast<std::int64_t>(itemsize(src.dtype())));
  if (l.shape.size() > static_cast<std::size_t>(kMaxAxes))
    fail("a copy of shape {} into a {} array of strides {} has {} axes that step unevenly; the device's copy kernel "
         "takes at most {}: copy through a contiguous array first",
         shape_str(src.shape()), dtype_name(dst.dtype()), fmt::join(dst.strides(), ", "), l.shape.size(), kMaxAxes);
  std::vector<jit::KernelArg> args{jit::KernelArg::of_array(dst), jit::KernelArg::of_array(src),
                                   jit::KernelArg::of_int(dst.size()),
                                   jit::KernelArg::of_int(static_cast<std::int64_t>(l.shape.size()))};
  for (const Strides* list : {&l.shape, &l.dst, &l.src})
    for (int k = 0; k < kMaxAxes; ++k)
      args.push_back(jit::KernelArg::of_int(k < static_cast<int>(list->size()) ? (*list)[k] : 1));
  constexpr long long kBlock = 256;
  LaunchConfig config;
  config.block = Dim3{kBlock, 1, 1};
  config.grid = Dim3{std::min<long long>((dst.size() + kBlock - 1) / kBlock, 1 << 16), 1, 1};
  config.stream = stream;
  if (stream) config.stream_device = dst.device();
  const bool written[] = {true, false};
  kernel(dst.dtype(), src.dtype()).launch(config, args, written);
}

}  // namespace luda::ops::device

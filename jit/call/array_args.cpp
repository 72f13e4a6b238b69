#include "jit/call/array_args.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "runtime/error.h"

namespace luda::jit {

void put_array(ArgBuffer& out, const NDArray& a) {
  // Built on the stack: at most 8 + 16 * kMaxNdim bytes (arrays are made no larger).
  int n = a.ndim();
  LUDA_INTERNAL_CHECK(n <= kMaxNdim);
  long long words[1 + 2 * kMaxNdim];
  auto data = reinterpret_cast<std::uintptr_t>(a.data());
  static_assert(sizeof data == sizeof(long long));
  std::memcpy(&words[0], &data, sizeof data);
  for (int i = 0; i < n; ++i) {
    words[1 + i] = a.shape()[static_cast<std::size_t>(i)];
    words[1 + n + i] = a.strides()[static_cast<std::size_t>(i)];
  }
  out.mark_pointer(out.put(words, array_struct_size(n)));
}

void weak_int_error(std::string_view who, std::string_view argument, const dsl::WeakIntUse& use, std::int64_t value) {
  std::string meets = use.where.empty() ? "" : fmt::format(", which {} meets at {}", argument, use.where);
  throw Error(fmt::format("{}: Lua integer {} out of bounds for {}{}; pass a typed scalar (luda.int64({})), which "
                          "promotes as an array does, or convert the arrays first (x:astype(\"int64\"))",
                          who, value, dsl::scalar_name(use.to), meets, value));
}

Scalar convert_scalar(std::string_view kernel, std::size_t index, std::string_view param, DType want,
                      const KernelArg& a) {
  // Formatted only for an error: this runs for every scalar of every launch.
  auto error = [&](std::string rest) -> Error {
    std::string subject = fmt::format("argument {}", index + 1);
    if (!param.empty()) subject += fmt::format(" '{}'", param);
    return Error(fmt::format("kernel '{}': {} is {} but {}", kernel, subject, dtype_name(want), rest));
  };
  const char* plain = want == DType::Bool ? "boolean" : "number";
  switch (a.kind) {
    case KernelArg::Kind::Array: throw error(fmt::format("got {}; pass a {}", describe_arg(a), plain));
    case KernelArg::Kind::Typed:
      if (a.typed.dtype != want)
        throw error(fmt::format("got {}; pass luda.{}(v) or a plain {}", describe_arg(a), dtype_name(want), plain));
      return a.typed;
    case KernelArg::Kind::Bool:
      if (want != DType::Bool) throw error(fmt::format("got {}; pass a number", describe_arg(a)));
      return Scalar::of_bool(a.b);
    case KernelArg::Kind::Int:
      if (want == DType::Bool) throw error(fmt::format("got {}; pass true or false", describe_arg(a)));
      if (!integer_fits(a.i, want)) throw error(fmt::format("{} does not fit in {}", a.i, dtype_name(want)));
      return is_inexact(want) ? Scalar::of_float(static_cast<double>(a.i), want) : Scalar::of_int(a.i, want);
    case KernelArg::Kind::Float:
      if (want == DType::Bool) throw error(fmt::format("got {}; pass true or false", describe_arg(a)));
      if (is_inexact(want)) return Scalar::of_float(a.f, want);
      // As Lua does: a float with an exact integer value is that integer.
      if (std::isfinite(a.f) && a.f == std::floor(a.f) && a.f >= -0x1p63 && a.f < 0x1p63) {
        auto i = static_cast<std::int64_t>(a.f);
        if (!integer_fits(i, want)) throw error(fmt::format("{} does not fit in {}", lua_float(a.f), dtype_name(want)));
        return Scalar::of_int(i, want);
      }
      throw error(fmt::format("got {}; pass an integer", describe_arg(a)));
  }
  throw InternalError("convert_scalar: unknown argument kind");
}

}  // namespace luda::jit

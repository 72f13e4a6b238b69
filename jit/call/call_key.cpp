#include "jit/call/call_key.h"

#include <optional>
#include <vector>

#include "runtime/device.h"
#include "runtime/error.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luda::jit {

std::size_t hash_key_bytes(const void* key, std::size_t n) { return static_cast<std::size_t>(XXH3_64bits(key, n)); }

Device call_device(std::string_view who, std::span<const KernelArg> args, std::span<const NDArray> outs,
                   std::span<const std::string> names) {
  std::optional<Device> d;
  bool odd = false;  // mixed devices or an empty handle: arrays_device says which
  auto see = [&](const NDArray* a) {
    if (!a || !a->valid()) {
      odd = true;
      return;
    }
    Device e = a->device();
    if (!d) d = e;
    else if (*d != e) odd = true;
  };
  for (const KernelArg& a : args)
    if (a.kind == KernelArg::Kind::Array) see(a.array);
  for (const NDArray& o : outs)
    if (o.valid()) see(&o);
  if (odd) [[unlikely]] {
    std::vector<KernelArg> all(args.begin(), args.end());
    for (const NDArray& o : outs) all.push_back(o.valid() ? KernelArg::of_array(o) : KernelArg::of_int(0));
    arrays_device(who, all, names);
    LUDA_INTERNAL_CHECK(false);
  }
  if (!d) d = current_device();
  return *d;
}

void operand_codes(std::span<const dsl::Type> types, OperandCode* ops) {
  for (std::size_t i = 0; i < types.size(); ++i) {
    const dsl::Type& t = types[i];
    OperandCode& c = ops[i];
    c = OperandCode{OperandCode::Scalar, static_cast<std::uint8_t>(t.scalar), 0, 0};
    if (t.kind == dsl::Type::Kind::Array) {
      c.kind = OperandCode::Whole;
      c.ndim = static_cast<std::uint8_t>(t.ndim);
      c.flags = t.c_contiguous ? OperandCode::CContiguous : 0;
    } else if (t.weak) {
      c.flags = OperandCode::Weak;
    }
  }
}

}  // namespace luda::jit

#include "jit/call_key.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luda::jit {

std::size_t hash_key_bytes(const void* key, std::size_t n) { return static_cast<std::size_t>(XXH3_64bits(key, n)); }

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

// The key of a call: what every kind of kernel (the kernel kinds, cuda.jit kernels, raw
// kernels) finds its loaded code by. The plan step builds it on the stack from the
// call's operands; the lookup step (jit/call/call_cache.h) compares and hashes its used bytes
// only, so a key costs what its operands do, not its capacity.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "dsl/types.h"
#include "jit/call/call_args.h"
#include "jit/compile/target.h"
#include "runtime/dtype.h"
#include "runtime/ndarray.h"

namespace luda::jit {

// One operand's part of a key (ORDER OPERANDCODE: what each field means).
//   kind: Array: an array broadcast element by element (a kind's input or output; its
//           dtype in scalar); Whole: an array passed whole (cuda.jit's, a kind's raw
//           input: dtype, ndim, C-contiguity); Scalar: a number or boolean (its dtype: a
//           Lua float takes the widest float dtype among the arrays; Weak for Lua
//           numbers); Missing: an output not given.
//   flags: Weak, CContiguous (Whole), Broadcast (a reduction's input not walked).
// No initializers: a key writes the codes it uses and leaves the rest.
struct OperandCode {
  enum Kind : std::uint8_t { Missing = 0, Array = 1, Scalar = 2, Whole = 3 };
  enum Flag : std::uint8_t { Weak = 1, CContiguous = 2, Broadcast = 4 };
  std::uint8_t kind, scalar, ndim, flags;
};
static_assert(sizeof(OperandCode) == 4);

// Whether the first `n` bytes of two keys are equal; n is a multiple of 4, at least 8.
// Inline and by words: a cached call compares one key.
inline bool same_key_bytes(const void* a, const void* b, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(a);
  const auto* q = static_cast<const unsigned char*>(b);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, p + i, 8);
    std::memcpy(&y, q + i, 8);
    if (x != y) return false;
  }
  if (i == n) return true;
  std::uint32_t x, y;
  std::memcpy(&x, p + i, 4);
  std::memcpy(&y, q + i, 4);
  return x == y;
}
std::size_t hash_key_bytes(const void* key, std::size_t n);  // XXH3

// A call's signature: its device, its operands' codes and the kind's template choices
// that follow from their layout. MaxOperands: the kernel kinds' kMaxKindOperands,
// cuda.jit's kMaxJitArgs, 0 for raw kernels (whose code depends on the device alone).
template <std::size_t MaxOperands>
struct CallKey {
  enum Flag : std::uint8_t { NoAlias = 1, Index32 = 2, Warp = 4 };
  std::int16_t device = 0;  // CUDA ordinal or kCpuDevice; -1 in a types key of the cuda target
  std::uint8_t count = 0;   // operands (a kind's: inputs, then outputs)
  // The template's choices. elementwise: layout 0 contiguous, 1 general; ndim: collapsed
  // axes. reductions: layout: the strategy + 1; ndim, ndim2: kept, reduced axes. vector:
  // elements per load. flags: NoAlias (restricted pointers), Index32, Warp.
  std::uint8_t layout = 0, ndim = 0, ndim2 = 0, vector = 0, flags = 0;
  std::array<OperandCode, MaxOperands> ops;  // the first `count` are set

  std::size_t bytes() const { return 8 + 4 * static_cast<std::size_t>(count); }
  bool operator==(const CallKey& o) const { return same_key_bytes(this, &o, bytes()); }
  std::size_t hash() const { return hash_key_bytes(this, bytes()); }
};
struct CallKeyHash {
  template <std::size_t N>
  std::size_t operator()(const CallKey<N>& k) const {
    return k.hash();
  }
};

// The device a call runs on (its outputs are made there; target_ordinal gives its code's
// ordinal): its arrays' (`outs`: the outputs a kind's call gives, invalid where not
// given), else the thread's current device. Mixed devices (cpu:0 and cpu:1 too) or an
// empty handle raise arrays_device's error after `who` ("vectorize 'f'"), naming the
// operands by `names` (inputs, then outputs). Allocates nothing when the arrays are valid
// and on one device.
Device call_device(std::string_view who, std::span<const KernelArg> args, std::span<const NDArray> outs,
                   std::span<const std::string> names);

// The operand codes of a call's arguments into ops[0, args.size()): arrays by dtype, and
// by ndim and C-contiguity too where `whole(k)` (an array passed whole); Lua numbers weak,
// a Lua float taking the widest float dtype among the arrays (float64 with none); typed
// scalars and booleans strong, but a weak complex (luda.complex(re, im)). Inline: every call builds its key with it.
template <class Whole>
void operand_codes(std::span<const KernelArg> args, Whole whole, OperandCode* ops) {
  auto widest = static_cast<std::uint8_t>(DType::Float64);
  bool any_float = false;
  for (const KernelArg& a : args)
    if (a.kind == KernelArg::Kind::Array && a.array->valid() && is_float(a.array->dtype()) &&
        (!any_float || a.array->dtype() != static_cast<DType>(widest))) {
      // float16 with bfloat16 is float32 (promote_types).
      widest = static_cast<std::uint8_t>(any_float ? promote_types(static_cast<DType>(widest), a.array->dtype())
                                                   : a.array->dtype());
      any_float = true;
    }
  for (std::size_t k = 0; k < args.size(); ++k) {
    const KernelArg& a = args[k];
    OperandCode& c = ops[k];
    c = OperandCode{OperandCode::Scalar, 0, 0, 0};
    switch (a.kind) {
      case KernelArg::Kind::Array:
        c.scalar = static_cast<std::uint8_t>(a.array->dtype());
        if (whole(k)) {
          c.kind = OperandCode::Whole;
          c.ndim = static_cast<std::uint8_t>(a.array->ndim());
          c.flags = a.array->is_c_contiguous() ? OperandCode::CContiguous : 0;
        } else {
          c.kind = OperandCode::Array;
        }
        break;
      case KernelArg::Kind::Typed:  // luda.complex(re, im) is weak, as Python's complex
        c.scalar = static_cast<std::uint8_t>(a.typed.dtype);
        if (a.typed.weak) c.flags = OperandCode::Weak;
        break;
      case KernelArg::Kind::Bool: c.scalar = static_cast<std::uint8_t>(DType::Bool); break;
      case KernelArg::Kind::Int:
        c.scalar = static_cast<std::uint8_t>(DType::Int64);
        c.flags = OperandCode::Weak;
        break;
      case KernelArg::Kind::Float:
        c.scalar = widest;
        c.flags = OperandCode::Weak;
        break;
    }
  }
}

// The codes of frontend types (a signature, compile, inspect): arrays whole, scalars
// weak or strong as typed.
void operand_codes(std::span<const dsl::Type> types, OperandCode* ops);

}  // namespace luda::jit

// What the two kernel kinds (jit/kinds/elementwise.h) share inside jit/ beyond the steps every
// kernel's call shares (jit/call/call_key.h, call_cache.h, overlap.h, arg_buffer.h,
// program.h): the checks and messages of a kind's operands, its keys' codes, the
// frontend's types from them and the outputs a call does not give. Not part of the
// public API.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "jit/call/array_args.h"
#include "jit/call/call_cache.h"
#include "jit/call/call_key.h"
#include "jit/call/launch.h"
#include "jit/call/overlap.h"
#include "jit/compile/program.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/layout.h"
#include "jit/kinds/reduction.h"
#include "jit/kinds/spec_cache.h"
#include "jit/kinds/templates.h"
#include "runtime/launch.h"

namespace luda::jit::kind {

// A kind's call key and its operand codes (jit/call/call_key.h): inputs, then outputs.
using KindKey = jit::CallKey<kMaxKindOperands>;
using OpCode = OperandCode;

// The kind-independent state of a kind object.
class Core {
 public:
  Core(std::string kind, std::string name, std::vector<std::string> in_names, std::vector<std::string> out_names,
       DiskCache* cache);

  const std::string& who() const { return who_; }  // "vectorize 'f'"
  const char* label() const { return label_; }     // who(), interned (driver::note_launch)
  LaunchName name() const { return {who_, label_}; }
  std::size_t nin() const { return nin_; }
  std::size_t nout() const { return names_.size() - nin_; }
  // "argument 2 'w'", "output 1 'z'"
  std::string input_label(std::size_t k) const;
  std::string output_label(std::size_t k) const;

  // Errors for the wrong number of inputs or outputs (a call compares the counts first).
  void check_counts(std::size_t inputs, std::size_t outputs) const;
  // The operands' names, inputs then outputs (call_device's errors).
  std::span<const std::string> names() const { return names_; }
  // The stream's handle, checked to be on the call's CUDA device (null: the default
  // stream, and for a cpu device's call, which runs when it is submitted).
  CUstream stream_handle(const Stream* stream, Device device) const;
  // The error for operands that do not broadcast: NumPy's message after who().
  [[noreturn]] void broadcast_error(std::span<const KernelArg> inputs, std::span<const bool> skip) const;
  // A given output must have exactly `shape`, and no zero stride along an axis longer than 1.
  void check_output(std::size_t k, const NDArray& out, const std::int64_t* shape, int ndim) const;
  // No two given outputs may share memory (jit/call/overlap.h).
  void check_outputs_disjoint(std::span<const NDArray> outs) const;
  // Each output the call gives must have the dtype the frontend made (`made`: "the
  // kernel", "the reduction").
  void check_made_outputs(std::span<const std::optional<dsl::Scalar>> given, std::span<const dsl::Scalar> made,
                          std::string_view maker) const;
  // A scalar argument converted to `want`, the type the code takes it as. A typed scalar
  // converts as an array of its dtype does (NumPy: a 0-d array); a Lua integer must fit an
  // integer `want` ("Lua integer 300 out of bounds for uint8"); else convert_scalar's
  // errors, after who().
  Scalar scalar_value(std::size_t k, const KernelArg& a, dsl::Scalar want) const;
  // The Lua integers among `inputs` must fit each type the code converts them to (uses:
  // ElementCode::weak_int_uses), else weak_int_error's message.
  void check_weak_ints(std::span<const KernelArg> inputs, std::span<const dsl::WeakIntUse> uses) const {
    if (const dsl::WeakIntUse* u = weak_int_out_of_bounds(inputs, uses)) [[unlikely]] {
      auto k = static_cast<std::size_t>(u->param);
      weak_int_error(who_, input_label(k), *u, inputs[k].i);
    }
  }

  // The frontend's type of each input (kinds.h): arrays strong by dtype (raw ones as array
  // types), Lua numbers weak. `raw` may be empty.
  static std::vector<dsl::Type> input_types(const KindKey& key, std::size_t nin, std::span<const bool> raw);
  static std::vector<std::optional<dsl::Scalar>> output_types(const KindKey& key, std::size_t nin);
  // The key's operand codes for the outputs: each given one's dtype, Missing for the others.
  static void output_codes(std::span<const NDArray> outs, KindKey& key) {
    const std::size_t nin = key.count - outs.size();
    for (std::size_t k = 0; k < outs.size(); ++k)
      key.ops[nin + k] = outs[k].valid() ? OpCode{OpCode::Array, static_cast<std::uint8_t>(outs[k].dtype()), 0, 0}
                                         : OpCode{};
  }
  // The outputs a call does not give, C-contiguous of `shape` with the dtypes the code
  // makes, on the call's device (ordered on `stream` on cuda).
  static void allocate_outputs(std::span<NDArray> outs, const std::int64_t* shape, int ndim,
                               std::span<const dsl::Scalar> dtypes, Device device, const Stream* stream);
  // The key's operand codes for the inputs (operand_codes: a raw input is passed whole).
  static void input_codes(std::span<const KernelArg> inputs, std::span<const bool> raw, KindKey& key) {
    operand_codes(
        inputs, [&](std::size_t k) { return k < raw.size() && raw[k]; }, key.ops.data());
  }

  DiskCache& cache() const { return *cache_; }
  ProgramText program(const KindSource& source, const std::vector<std::string>& options,
                      const std::vector<std::shared_ptr<const dsl::Chunk>>& chunks) const;

 private:
  std::string who_;
  const char* label_;  // who_, for driver::note_launch
  std::string name_;
  std::size_t nin_;
  std::vector<std::string> names_;  // inputs then outputs
  DiskCache* cache_;
};

// Blocks of `threads` threads of `f` that one SM of `ordinal` holds at once (registers,
// static shared memory, thread and block slots): grids of that many per SM run in one wave,
// with no tail of half-empty SMs.
int resident_blocks_per_sm(CUfunction f, int ordinal, int threads);
// ceil(a / b) for a >= 0 and positive b, for every such a: an empty array may have kept
// extents near 2^63, and a + b - 1 would overflow.
inline long long ceil_div(long long a, long long b) { return a / b + (a % b != 0); }

// The lookup step of a kind's call (`Impl`: the kind's, with its cache, load and
// spec_for). A call that runs gets the program loaded for `key` (the kind's load compiles
// it on a miss); one that runs nothing (an empty result) needs only the code of its
// operand types, for its outputs' dtypes, and gets no program. `types` makes that key:
// called only then, so a cached call copies no key.
template <class Impl, class TypesKey>
auto lookup(Impl& m, const KindKey& key, bool runs, TypesKey types) {
  using Loaded = typename Impl::Loaded;
  struct Found {
    Loaded* loaded;
    const std::remove_reference_t<decltype(m.spec_for(key).code)>* code;
  };
  if (!runs) {
    std::lock_guard lock(m.cache.mutex());
    return Found{nullptr, &m.spec_for(types()).code};
  }
  Loaded& l = m.cache.find(key, [&](const KindKey& k) -> Loaded& { return m.load(k); });
  return Found{&l, &l.spec->code};
}

}  // namespace luda::jit::kind

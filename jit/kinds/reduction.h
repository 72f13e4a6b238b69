// The reduction kernel kind: CuPy's ReductionKernel, fuse with a reduction, x:sum() and
// friends. As the elementwise kind (jit/kinds/elementwise.h), it owns its code's frontend,
// and wraps that code in the reduction templates (jit/kinds/templates.h) chosen by the
// operands' layout (jit/kinds/layout.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dsl/compile.h"
#include "dsl/types.h"
#include "jit/call/call_args.h"
#include "jit/compile/disk_cache.h"
#include "jit/kinds/jit_kernel.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"

namespace luda::jit {

// The code of one operand signature of a reduction: CuPy's map / reduce / post-map /
// identity, each a device function (dsl/kind_source.h ReductionFunctions):
//   map(<inputs converted to map_params>, long long j) -> reduce_type
//   reduce(reduce_type a, reduce_type b) -> reduce_type      (associative, commutative)
//   post(reduce_type a, <the inputs listed in post_inputs>) -> outputs (one or a tuple)
//   identity() -> reduce_type
struct ReductionCode {
  std::string functions;
  std::string map, reduce, post, identity;  // C names
  std::vector<dsl::Type> map_params;
  std::vector<int> post_inputs;  // scalar inputs post() takes, by input index
  dsl::Scalar reduce_type = dsl::Scalar::Float64;
  std::vector<dsl::Scalar> outputs;
  std::vector<std::string> nvrtc_options;
  std::string typed;
  std::vector<std::shared_ptr<const dsl::Chunk>> chunks;  // as ElementCode's
  std::vector<dsl::WeakIntUse> weak_int_uses;             // as ElementCode's (map's inputs)
  // Several reductions in one pass (fuse): the accumulator is a struct with one field per
  // entry (v0, v1, ...), each combined by its own reduce from its own identity (C names;
  // reduce and identity above are unused); map returns a tuple with as many values, and
  // post takes each field converted to its post_type, then its scalar inputs. Empty: one
  // accumulator of reduce_type.
  struct Accumulator {
    dsl::Scalar type = dsl::Scalar::Float64;
    std::string reduce, identity;
    dsl::Scalar post_type = dsl::Scalar::Float64;
  };
  std::vector<Accumulator> accumulators;
};

// The bytes of one accumulator (a partial result) of `code` on the device: reduce_type's,
// or the struct of its accumulators (C's layout).
std::size_t accumulator_bytes(const ReductionCode& code);

struct ReductionSetup {
  std::string kind;  // "reduction", "fuse", "sum", ...
  std::string name;
  std::vector<std::string> in_names;
  std::vector<std::string> out_names;
  // NumPy's name of an operation with no identity ("maximum"): identity() then only pads
  // partial results, and a call with an empty reduced axis raises, whatever the result's
  // size (NumPy's rule): "fuse 'f': zero-size array to reduction operation maximum which
  // has no identity". Empty: identity() is the operation's own.
  std::string no_identity;
  // How many accumulators the code carries at most (fuse: its reductions, each of at most
  // 8 bytes): bounds the vector width, whose accumulators the Columns template keeps in
  // shared memory. At most dsl::kMaxFusedReductions.
  int accumulators = 1;
  std::function<ReductionCode(std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>> outputs,
                              dsl::Target target)>
      frontend;
  JitOptions options;
  DiskCache* cache = nullptr;
};

class ReductionKind {
 public:
  explicit ReductionKind(ReductionSetup setup);
  ~ReductionKind();
  ReductionKind(const ReductionKind&) = delete;
  ReductionKind& operator=(const ReductionKind&) = delete;

  const ReductionSetup& setup() const { return setup_; }

  // Broadcasts the array inputs, reduces over `axes` (0-based, distinct, sorted; nullopt:
  // every axis), keeps them as size-1 axes with keepdims, and writes the outputs (allocated
  // where `outs[k]` is invalid; a given one must have the result's shape). An empty
  // reduction gives identity() mapped by post(), or raises for a setup with no_identity.
  // Errors start "<kind> '<name>'"; axes in
  // them count from 1, as Lua shows them:
  //   reduction 'rsum': axis 3 is out of range for 2-dimensional operands (axes count from 1)
  //   reduction 'rsum': axis 2 is given twice
  //   reduction 'rsum': output 1 'z' has shape (5,) but the result has shape (4,)
  //   reduction 'rsum': output 1 'z' is a float64 array but the reduction makes float32; pass a float32 array or none
  // An input that overlaps an output is copied first. Results are deterministic: a
  // reduction split over several blocks combines their partials in a fixed order.
  // (`axes` is a span so that a call passes them from the stack: a std::vector<int> or an
  // optional of one converts.)
  void call(std::span<const KernelArg> inputs, std::span<NDArray> outs, std::optional<std::span<const int>> axes,
            bool keepdims, const Stream* stream = nullptr);

  std::string inspect(std::string_view what, std::span<const dsl::Type> inputs, Device device, int arch = 0);
  JitStats stats() const;

 private:
  struct Impl;
  ReductionSetup setup_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace luda::jit

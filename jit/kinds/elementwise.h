// The elementwise kernel kind: Numba's vectorize, CuPy's ElementwiseKernel and fuse, array
// arithmetic. A kind owns the per-element code's frontend (jit/kinds/frontend.h); the kind
// wraps that code in its templates (jit/kinds/templates.h), compiles it per operand
// signature and device (the disk cache, NVRTC or the host compiler: the same path as
// cuda.jit kernels, jit/compile/program.h) and launches it where the arrays are.
//
// A call takes the steps every kernel's call takes (plan, overlap, lookup, pack, launch),
// the kind's own plan and pack among them. One whose signature was seen before is a
// fixed-size key built on the stack, compared with the last call's or looked up once,
// packing into the thread's reused buffer and one launch: no allocation but missing
// outputs.
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

// The per-element code of one operand signature, as the kind's frontend makes it.
// The element function takes, in order: each input's value converted to params[k] (or, for
// a raw input, its array struct of compile.h's ABI); then the current value of each output
// whose out_read is set; then, with index_args, the element's C-order flat index and the
// size, as int64. It returns the outputs: one value, or a tuple in output order; each is
// converted to its output's dtype as C converts.
struct ElementCode {
  std::string functions;             // dsl::DeviceFunction::code (no prelude)
  std::string call;                  // the element function's C name
  std::vector<dsl::Type> params;     // what it takes for the inputs (after conversion)
  std::vector<dsl::Scalar> outputs;  // each output's dtype
  std::vector<std::string> nvrtc_options;
  std::string typed;  // for inspect("types")
  // Where the functions' #line directives point: a compiler failure
  // is told at the first of these chunks that its log names.
  std::vector<std::shared_ptr<const dsl::Chunk>> chunks;
  // The element function takes a trailing luda_BoundsRecord* (a raw
  // input indexed with boundscheck on, dsl::DeviceFunction::uses_bounds): an index out of
  // range raises "<kind> '<name>' at <chunk>:<line>: index 7 out of range for axis 0 of size 5".
  bool bounds_record = false;
  // The Lua integer inputs the code converts to narrower integer types: each call checks
  // their values first, as NumPy 2 refuses a Python int out of the bounds of the dtype it
  // meets (Core::check_weak_ints: "Lua integer 300 out of bounds for uint8").
  std::vector<dsl::WeakIntUse> weak_int_uses;
};

struct ElementwiseSetup {
  std::string kind;                   // "vectorize", "elementwise", "fuse": starts messages
  std::string name;                   // "layer": messages and the kernel's entry name
  std::vector<std::string> in_names;  // for messages ("argument 2 'w'")
  std::vector<std::string> out_names;
  std::vector<bool> raw;       // per input: passed whole, not broadcast
  std::vector<bool> out_read;  // per output: the element function reads it
  bool index_args = false;
  // Code for these input types (array inputs: their dtype, strong; Lua numbers: weak
  // scalars; raw inputs: array types) and output dtypes (nullopt where not given). Throws
  // luda::Error or dsl::SourceError for a user mistake.
  std::function<ElementCode(std::span<const dsl::Type> inputs, std::span<const std::optional<dsl::Scalar>> outputs,
                            dsl::Target target)>
      frontend;
  JitOptions options;
  DiskCache* cache = nullptr;  // null -> DiskCache::global()
};

class ElementwiseKind {
 public:
  explicit ElementwiseKind(ElementwiseSetup setup);
  ~ElementwiseKind();
  ElementwiseKind(const ElementwiseKind&) = delete;
  ElementwiseKind& operator=(const ElementwiseKind&) = delete;

  const ElementwiseSetup& setup() const { return setup_; }

  // Broadcasts the non-raw inputs together with the given outputs (NumPy's rules: an
  // output must have the broadcast shape), allocates each output that `outs[k]` leaves
  // invalid (C-contiguous, on the arrays' device, the thread's current device when all
  // inputs are scalars), and launches on `stream` (null: the device's default stream;
  // the cpu target runs synchronously). Errors start "<kind> '<name>'": mixed devices
  // (naming the arguments), shapes that do not broadcast, an output of the wrong dtype.
  // Exact texts, pinned in tests/jit/kinds/kinds_test.cpp:
  //   elementwise 'axpb' takes 3 inputs (x, w, b), got 2
  //   elementwise 'axpb' has 1 output (z), got 2
  //   elementwise 'axpb': operands could not be broadcast together with shapes (2, 3) (4,) (2, 3)
  //   elementwise 'axpb': output 1 'z' has shape (3,) but the result has shape (2, 3)
  //   elementwise 'axpb': output 1 'z' is a float64 array but the kernel makes float32; pass a float32 array or none
  //   elementwise 'axpb': output 1 'z' is a broadcast view (stride 0 along axis 1): its elements overlap; ...
  //   vectorize 'split': output 1 'y' and output 2 'z' share memory; pass separate arrays
  //   elementwise 'scale': argument 2 'k' is int32 but got a float 2.5; pass an integer
  //   elementwise 'scale': Lua integer 3000000000 out of bounds for int32, the dtype of argument 2 'k' (...)
  //   elementwise 'weak': Lua integer 3000000000 out of bounds for int32, which argument 2 'k' meets at ...
  //   elementwise 'axpb': the stream is on cuda:1 but the arrays are on cuda:0; use a stream of cuda:0
  // and arrays_device's (kernel_args.h) for mixed devices and empty handles.
  // Overlaps: an output that is exactly an input (z = x + z: same elements, same strides)
  // is read and written element by element in place; an input that overlaps an output in
  // any other way is copied first (NumPy's rule), so the result is as if every input were
  // read before any output was written. A raw input is never copied (the element code
  // indexes it freely); its overlap with an output or with another input only turns off
  // __restrict__ (ElementwiseTemplate::noalias, jit/kinds/templates.h).
  // A call whose key was seen before allocates nothing but missing outputs.
  // `size` (CuPy's size=), when not negative, is the loop's size where no operand gives it
  // (every array raw, no output that is not); the outputs have shape (size,) then.
  void call(std::span<const KernelArg> inputs, std::span<NDArray> outs, const Stream* stream = nullptr,
            std::int64_t size = -1);

  // Compiles the code for these input types on `device` ahead of a call (vectorize's
  // eager signatures): the variant for C-contiguous, aligned, non-overlapping arrays (strong
  // types) and weak scalars with the outputs allocated, the call most likely to come.
  void compile(std::span<const dsl::Type> inputs, Device device);
  // "types" / "cuda" for the signature compiled last with these input types (not run yet:
  // the contiguous template's text); "ptx": NVRTC's PTX of the contiguous template for
  // `arch` (0: the current device's). Any other `what` is an error.
  std::string inspect(std::string_view what, std::span<const dsl::Type> inputs, Device device, int arch = 0);
  JitStats stats() const;

 private:
  struct Impl;
  ElementwiseSetup setup_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace luda::jit

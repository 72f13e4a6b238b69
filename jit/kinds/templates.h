// The CUDA C++ of the kernel kinds: a kind's element code (jit/kinds/elementwise.h ElementCode /
// ReductionCode) wrapped in the template that the operands' layout picks
// (jit/kinds/layout.h), for the cuda target (grid-stride loops, 16-byte vector loads and
// stores, warp shuffles, single-pass multi-block reductions) or the cpu target (plain
// loops over one tile per block of one thread: no fibers, and loops the host compiler
// can vectorize). Pure text: no CUDA, no compiler.
//
// The kernels' parameters, in order (jit/kinds/elementwise.cpp packs them; ORDER KIND ABI):
//  elementwise, contiguous (one flat index over every array operand):
//    per input: `const T*` (array), `P` (scalar, already the element function's parameter
//    type), `luda_Array<T, N>` (raw, compile.h's ABI); per output `T*`; `long long n`;
//    `luda_BoundsRecord*` when the element code takes one.
//  elementwise, general (D collapsed axes): `luda_kshape<D>`; per input `luda_kop<const T,
//    D>` (array: data and element strides, 0 where broadcast), `P` or `luda_Array` as
//    above; per output `luda_kop<T, D>`; `long long n`; `luda_BoundsRecord*` when taken.
//  reductions (K kept axes, R reduced axes, jit/kinds/layout.h ReductionLayout):
//    `luda_k_launch` {rows, len, seg, rows_per_block}; `luda_kshape<K>`; `luda_kshape<R>`;
//    `luda_k_in` (per input, each field 8-byte aligned: `luda_rop<const T, K, R>` {data,
//    kept strides, reduced strides} or the scalar in an 8-byte slot); `luda_k_out` (per
//    output `luda_kop<T, K>`); `R* partials`; `unsigned* counters`.
//  Reductions split over gridDim.y segments of the reduced range: each block writes its
//  partial, and the last block of a row (counted with atomicInc, which wraps the counter
//  back to 0 for the next launch) reduces the partials in a fixed order and writes the
//  output: one launch, deterministic results.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/compile.h"
#include "dsl/types.h"
#include "jit/kinds/elementwise.h"
#include "jit/kinds/layout.h"
#include "jit/kinds/reduction.h"

namespace luda::jit {

struct KindOperand {
  enum class Kind : std::uint8_t { Array, Scalar, Raw };
  Kind kind = Kind::Array;
  dsl::Scalar dtype = dsl::Scalar::Float32;  // Array: element type; Scalar: as passed
  dsl::Type raw;                             // Raw: its array type
  // Reductions, Rows: stride 0 along the reduced axis; Columns: stride 0 along the kept one.
  bool broadcast = false;
};

struct ElementwiseTemplate {
  dsl::Target target = dsl::Target::Cuda;
  bool contiguous = true;
  int ndim = 1;          // general: the collapsed axes
  int vector = 1;        // contiguous, cuda: elements per vector load and store
  bool index32 = false;  // general, cuda: index arithmetic in 32 bits (n < 2^31)
  // No output overlaps an input and no raw input overlaps another input (jit/kinds/elementwise.cpp
  // decides per call): the contiguous template's array pointers are __restrict__. The
  // strided template's operands (luda_kop) never are.
  bool noalias = false;
  std::vector<KindOperand> inputs;
  std::vector<dsl::Scalar> outputs;
  std::vector<bool> out_read;
  bool index_args = false;
};

struct ReductionTemplate {
  dsl::Target target = dsl::Target::Cuda;
  ReductionStrategy strategy = ReductionStrategy::General;
  int kept_ndim = 1, reduced_ndim = 1;
  int vector = 1;     // Rows: elements of a row per load; Columns: outputs per thread
  bool warp = false;  // Rows / General on cuda: a warp per row (else a block per row)
  std::vector<KindOperand> inputs;
  std::vector<dsl::Scalar> outputs;
};

struct KindSource {
  std::string code;   // complete: the target's prelude first
  std::string entry;  // "<name>_<hash>"
};

// `name` is the kind's name (the entry starts with it, made a C identifier).
KindSource elementwise_source(const ElementCode& code, const ElementwiseTemplate& t, std::string_view name);
KindSource reduction_source(const ReductionCode& code, const ReductionTemplate& t, std::string_view name);

// Threads per block of every kind kernel on cuda (Columns: 32 x 8).
inline constexpr int kKindBlock = 256;

}  // namespace luda::jit

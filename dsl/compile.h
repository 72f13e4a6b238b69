// The front end's one entry point for jit/: a Lua function and the types of one call in,
// CUDA C++ out. Pure: no CUDA, no Lua VM; what it needs to know about the running Lua
// world (globals, upvalues, called functions) it asks through Environment.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dsl/types.h"

namespace luda::dsl {

// A chunk of Lua source: a file's text or a string given to load().
struct Chunk {
  std::string name;  // as errors show it: "hist.lua", "stdin", "[string \"...\"]"
  std::string text;
  // The first bytes of line 1 that luda generated (dsl/source.h Source): errors point
  // past them. Nonzero only for the functions dsl/kind_source.h builds around user text.
  std::size_t hidden_prefix = 0;
  // CUDA C++ linked into kernels (cuda.jit's link), not Lua: a compiler's error in it keeps
  // the compiler's column.
  bool is_cuda = false;
};

// A device function written in CUDA C++, declared with its signature (Numba's
// cuda.declare_device(name, sig)) and linked in: kernels call it as `name(args...)`, each
// argument converted to its parameter's type. Its source comes with it (`link`) or with
// the kernel (KernelRequest::link).
struct DeclaredFunction {
  std::string name;  // the C name, as the source defines it (extern "C" or not)
  Type result;       // a scalar, or void
  // Scalars, or arrays: passed as a pointer to their first element (`float32[:]` is a
  // `float*`), so an argument must be a C-contiguous array of that dtype and ndim.
  std::vector<Type> params;
  std::vector<std::shared_ptr<const Chunk>> link;
  std::string signature() const;  // "float32(float32, float32)"
};

// Where a function is: its chunk and what debug.getinfo(f, "Su") says of it. A function
// given as source text alone ("function(x, out) ... end") has line_defined 0: the text is
// then one function expression (optionally `return`ed).
struct FunctionSource {
  std::shared_ptr<const Chunk> chunk;
  int line_defined = 0;
  int last_line_defined = 0;
  int nparams = -1;  // -1: unknown
  // An element function that dsl/kind_source.h generates (an elementwise body, a
  // reduction's post_map): the names of its outputs, which its generated head declares (as
  // parameters, or as locals before the body). Each keeps its out_params type, as CuPy's
  // output references do: an assignment converts to it as a store into an array does.
  std::vector<std::string> outputs;
};

// An opaque handle to a Lua function that the Environment understands (stdlib passes the
// address of a registry entry); used to look up that function's upvalues and globals.
using FunctionHandle = const void*;

// A value outside the kernel (global or upvalue), as it is at specialization time.
struct ExternalValue {
  enum class Kind {
    Missing,  // nil / not defined
    Integer,  // Lua integer: weak int64 constant
    Float,    // Lua float: weak float64 constant
    Boolean,
    Typed,      // luda.float32(2.5) and friends: a strong constant of `scalar`
    Table,      // a table of numbers/booleans/tables: a constant namespace (cfg.TILE)
    Function,   // a Lua function: becomes a device function
    Declared,   // cuda.declare_device(name, sig): a CUDA C++ device function
    Namespace,  // a builtin namespace: "math", "cuda", "luda", "luda.math"
    Array,      // an ndarray: an error (pass it as an argument)
    Other,      // anything else (string, userdata, ...): an error naming `describe`
  };
  Kind kind = Kind::Missing;
  std::int64_t integer = 0;
  double number = 0;
  bool boolean = false;
  Scalar scalar = Scalar::Float64;                   // Typed
  double imag = 0;                                   // Typed complex: the imaginary part (`number` the real)
  bool weak = false;                                 // Typed: luda.complex(re, im), a weak complex128
  std::map<std::string, ExternalValue> fields;       // Table (string keys; integer keys as "1", "2")
  FunctionSource function;                           // Function
  FunctionHandle handle = nullptr;                   // Function: for its own lookups
  std::shared_ptr<const DeclaredFunction> declared;  // Declared
  std::string name_space;                            // Namespace
  std::string describe;                              // Other/Array: "a string", "an ndarray"
};

class Environment {
 public:
  virtual ~Environment() = default;
  // The value `name` has for the function `fn`: its upvalue of that name, else the global.
  virtual ExternalValue lookup(FunctionHandle fn, const std::string& name) = 0;
};

// A weak integer parameter (a Lua integer argument) that the function converts, unchanged,
// to a narrower integer type: an operand of arithmetic, a builtin's argument, a store, a
// return, an argument of a device function that does one of these. NumPy 2 refuses a
// Python int out of the bounds of the dtype it meets (uint8 + 300 raises OverflowError,
// where C would wrap it to 44), so the launcher checks the value against `to` first.
// Comparisons do not convert: they compare the true values (int8 < 1000 is true).
struct WeakIntUse {
  int param = 0;  // 0-based parameter index
  Scalar to = Scalar::Int64;
  std::string where;  // "chunk:line" of the use, for the message
};

// Where a kernel runs. Cuda: NVRTC compiles kernel.code as is. Cpu: the host C++ compiler
// does (jit/compile/host_compiler.h), and kernel.code holds only the generated functions plus the
// per-thread entry `extern "C" void <entry>_cpu(void* const* args)` (args[i] points at
// argument i as the GPU ABI lays it out) and `int <entry>_cpu_needs_fibers`; jit/
// prepends the cpu prelude (jit/compile/cpu_prelude.h), which dsl/ cannot see.
enum class Target : unsigned char { Cuda, Cpu };

struct KernelOptions {
  Target target = Target::Cuda;
  bool boundscheck = false;
  bool fastmath = false;  // NVRTC's --use_fast_math (CudaKernel::nvrtc_options)
  bool debug = false;     // NVRTC's -G: device debug information, optimizations off
  // Set by the launcher, per call, when no two array arguments overlap in memory: the
  // kernel's array parameters that it only indexes get __restrict__ data pointers (const
  // where it only reads them), so loads may take the read-only path and be reordered past
  // stores. An array handed to a call (an atomic, a device function) keeps its plain
  // pointer, and a kernel with an array-typed local (a row a[i]) restricts none; device
  // functions never do.
  bool noalias = false;
};

struct KernelRequest {
  FunctionSource function;
  FunctionHandle handle = nullptr;  // the kernel function, for Environment lookups
  std::string name;                 // the Lua name ("add_kernel"), or "" -> "kernel"
  std::vector<Type> args;           // one per parameter: arrays and scalars of this call
  KernelOptions options;
  // CUDA C++ sources compiled with the kernel (cuda.jit's link): where the device functions
  // it declares (DeclaredFunction) are defined.
  std::vector<std::shared_ptr<const Chunk>> link;
};

// The ABI between generated code and the launcher (jit/):
// - an array parameter of element type T and ndim N is passed by value as
//     struct { T* data; long long shape[N]; long long strides[N]; }   (strides in elements)
// - a scalar parameter is passed as its C type;
// - with boundscheck, or when a 'for' step may be zero at run time (bounds_record), one
//   more trailing parameter: a pointer to a BoundsRecord in device memory, zeroed before
//   launch; a thread that indexes out of range or meets a zero 'for' step fills it (the
//   first one wins) and exits.
struct BoundsRecord {
  // ORDER RECORD: dsl/prelude.cpp luda_fail
  enum : int { kNone = 0, kIndex = 1, kForStep = 2, kShape = 3, kNoInteger = 4 };
  // what happened: kIndex (index out of range), kForStep ('for' step is zero), kShape
  // (a.shape[k] with k outside 1..ndim), kNoInteger (an index computed from a float that
  // is NaN, infinite or beyond int64; `index` holds the float64's bits)
  int hit;
  int line;  // Lua line of the indexing expression or the 'for'
  int axis;  // kIndex: 0-based axis
  int pad;
  long long index;   // kIndex: the offending index; kShape: k
  long long extent;  // kIndex: the size of that axis; kShape: ndim
};
// The host's error for a filled record: "<who> at <chunk>:<line>: index 7 out of range for
// axis 0 of size 5", "<who> at <chunk>:<line>: a.shape[3] is out of range: the array has 2
// dimensions (...)", "<who> at <chunk>:<line>: 'for' step is zero" (Lua's message), or
// "<who> at <chunk>:<line>: index nan has no integer representation (...)".
std::string record_message(std::string_view who, std::string_view chunk, const BoundsRecord& r);

struct CudaKernel {
  std::string code;             // complete CUDA C++ source (prelude included), with #line directives
  std::string entry;            // extern "C" name: the Lua name plus a short signature hash
  std::string typed;            // the typed function, for inspect("types")
  std::vector<Type> params;     // as launched (the BoundsRecord pointer not included)
  bool bounds_record = false;   // takes the BoundsRecord (above)
  bool dynamic_shared = false;  // uses cuda.shared.dynamic (sized at launch)
  // On the cpu target its threads must interleave (fibers) rather than run one after
  // another: it calls a barrier or a warp function (a builtin row with barrier, warp or
  // grid_barrier), or an atomic or a fence in a kernel with a while or repeat loop
  // (EmitInfo::needs_fibers, dsl/codegen_cuda.h).
  bool needs_fibers = false;
  // Calls cuda.cg.this_grid():sync(): launched cooperatively (cuLaunchCooperativeKernel on
  // cuda, every block resident at once on cpu), so its grid must fit on the device at once.
  bool cooperative = false;
  std::size_t local_bytes = 0;            // cuda.local_array storage of one thread, all functions together
  std::vector<WeakIntUse> weak_int_uses;  // of the kernel's parameters
  // Declared device functions (DeclaredFunction): `declarations` are their prototypes,
  // extern "C" __device__ as the signatures give them, and `link` the CUDA C++ sources
  // (the request's, then those that came with the declarations), which define them. On
  // the cuda target `code` holds both, after the prelude (the prototypes first, so that a
  // definition that disagrees with its signature is the compiler's error at its line); on
  // the cpu target jit/ puts them after its prelude.
  std::string declarations;
  std::vector<std::shared_ptr<const Chunk>> link;
  // NVRTC options the kernel's options ask for: fastmath -> --use_fast_math, debug -> -G.
  // jit/ passes them (and hashes them into the cache key); for the cpu target it reads
  // them as the host compiler's -ffast-math and -g (jit/compile/host_compiler.h).
  std::vector<std::string> nvrtc_options;
};

// Parses (once per chunk text, cached here), finds the function, types it for `args`,
// and emits CUDA C++. Throws SourceError (dsl/diagnostics.h) for any user mistake.
CudaKernel compile_kernel(const KernelRequest& request, Environment& env);

// The version of the generated code's prelude and conventions: part of every cache key.
inline constexpr int kPreludeVersion = 5;

}  // namespace luda::dsl

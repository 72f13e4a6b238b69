// luda for C++ hosts: arrays over the host's own memory, scripts that run kernels on them,
// kernels compiled and launched from C++, and graphs of such work recorded and replayed.
// C++17; no CUDA or Lua header is needed (the Lua bridge, for a host that works with the
// lua_State itself, is luda/lua.h).
//
//   luda::Engine lua;                                   // a lua_State with luda open
//   std::vector<float> x(1000, 1.0f);
//   lua.set("x", luda::Array::wrap(x));                 // no copy: the script sees x's memory
//   lua.run("y = luda.exp(x) * 2", "=update");
//   luda::Array y = lua.get("y").as_array();            // an array the script made
//   std::vector<float> host = y.to_vector<float>();
//
// Every failure is a luda::Error (luda/core.h): SourceError for a syntax or kernel-language
// error (file, line and column as fields), ScriptError for an error a script raised.
// docs/embedding.md documents all of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "luda/core.h"

struct lua_State;
struct DLManagedTensor;  // <dlpack/dlpack.h>

namespace luda {

class NDArray;  // the library's array, behind luda::Array

using Shape = std::vector<std::int64_t>;    // extents
using Strides = std::vector<std::int64_t>;  // in elements (NumPy's are in bytes); may be negative or 0

// ---- arrays ----------------------------------------------------------------------------------

// An n-dimensional array on one device (cpu, cpu:N or cuda:N): dtype, shape, element strides, over
// memory that luda allocated or that the host lent. Copies of an Array share the memory,
// as do views; the memory lives while any Array, view or script value holds it.
class Array {
 public:
  Array();  // refers to nothing: valid() is false
  ~Array();
  Array(const Array&);
  Array& operator=(const Array&);
  Array(Array&&) noexcept;
  Array& operator=(Array&&) noexcept;

  // New C-contiguous arrays on `device` (current_device() when not given); empty leaves
  // the elements unset.
  static Array empty(Shape shape, DType dtype, std::optional<Device> device = std::nullopt);
  static Array zeros(Shape shape, DType dtype, std::optional<Device> device = std::nullopt);
  // A C-contiguous copy of `data` (host memory in C order, `dtype`'s layout) on `device`.
  static Array copy_of(const void* data, Shape shape, DType dtype, std::optional<Device> device = std::nullopt);
  template <class T>
  static Array copy_of(const std::vector<T>& v, std::optional<Device> device = std::nullopt) {
    return copy_of(v.data(), {static_cast<std::int64_t>(v.size())}, dtype_of<T>(), device);
  }

  // The host's memory as an array, without a copy. `data` is the address of element
  // [0, ..., 0]; `device` says where it is: cpu for host memory (or cpu:N, to place it on
  // that cpu device), cuda:N for memory of that GPU (cuMemAlloc, cudaMalloc, a framework's
  // tensor). `strides` are in elements (empty:
  // C order) and may not reach outside what the host lent. luda never frees the memory:
  // `owner` (any shared_ptr, e.g. one whose deleter frees it) is held while any array or
  // view of it lives, and dropped after the last.
  static Array wrap(void* data, Shape shape, DType dtype, Device device = Device::cpu(), Strides strides = {},
                    std::shared_ptr<void> owner = nullptr);
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  static Array wrap(T* data, Shape shape, Device device = Device::cpu(), Strides strides = {},
                    std::shared_ptr<void> owner = nullptr) {
    return wrap(static_cast<void*>(data), std::move(shape), dtype_of<T>(), device, std::move(strides),
                std::move(owner));
  }
  // A vector's elements as a 1-D cpu array. The vector must outlive every use of the array
  // and keep its size (no reallocation).
  template <class T>
  static Array wrap(std::vector<T>& v) {
    return wrap(v.data(), {static_cast<std::int64_t>(v.size())});
  }
  // Page-locked host memory (cuMemHostAlloc, cudaHostAlloc, cudaHostRegister): a cpu array
  // whose copies to and from a GPU run asynchronously on a stream.
  static Array wrap_pinned(void* data, Shape shape, DType dtype, Strides strides = {},
                           std::shared_ptr<void> owner = nullptr);

  // DLPack (dlpack.h, version 0.6 and later): an array viewing a tensor of PyTorch, CuPy,
  // JAX or any other library, without a copy. It takes the tensor: its deleter runs when
  // the last array or view of it is gone. Devices kDLCPU, kDLCUDAHost (pinned cpu memory)
  // and kDLCUDA; dtypes bool, intN, uintN, float32 and float64 with one lane. On an Error
  // (another device or dtype) the tensor stays the caller's. Host memory comes in as cpu.
  static Array from_dlpack(DLManagedTensor* tensor);
  // A DLPack tensor viewing this array, without a copy; it holds the memory until the
  // consumer calls its deleter. Every cpu device's array is host memory: kDLCPU (or
  // kDLCUDAHost when pinned), device 0. Work queued on a GPU stream that writes the array is not
  // waited for: synchronize (or order the consumer's stream after it) first.
  DLManagedTensor* to_dlpack() const;

  bool valid() const;
  DType dtype() const;
  const Shape& shape() const;
  const Strides& strides() const;  // in elements
  int ndim() const;
  std::int64_t size() const;  // product of the shape; 1 for 0-d
  std::size_t nbytes() const;
  Device device() const;
  void* data() const;  // the address of element [0, ..., 0], on the array's device
  template <class T>
  T* data_as() const {  // Error unless T is the array's element type
    check_type(dtype_of<T>());
    return static_cast<T*>(data());
  }
  bool is_c_contiguous() const;

  // This array when it is on `device` already, else a C-contiguous copy there.
  Array to(Device device) const;
  Array copy() const;  // a C-contiguous copy on the same device
  // A view of another shape where the strides allow (-1 infers one extent), else a copy.
  Array reshape(Shape shape) const;
  // Writes src's elements into this array (a view writes through to its memory): the same
  // shape or one that broadcasts to it, any dtype (converted as C converts), any devices.
  void assign(const Array& src) const;
  // The elements in C order, copied to host memory: `bytes` must be nbytes().
  void copy_to_host(void* dst, std::size_t bytes) const;
  template <class T>
  std::vector<T> to_vector() const {
    check_type(dtype_of<T>());
    std::vector<T> out(static_cast<std::size_t>(size()));
    copy_to_host(out.data(), out.size() * sizeof(T));
    return out;
  }
  // NumPy's repr and str: "array([1., 2.], dtype=float32)", "[1. 2.]".
  std::string repr() const;
  std::string str() const;

  // The library's array (for luda's own bindings).
  explicit Array(NDArray a);
  const NDArray& ndarray() const;

 private:
  void check_type(DType t) const;
  std::shared_ptr<const NDArray> impl_;
};

// ---- kernels from C++ ---------------------------------------------------------------------

// An argument of a kernel: an array, or a scalar. Plain C++ numbers are weak, as Lua numbers
// and NumPy 2's Python scalars are: an integer or a float that takes the arrays' dtype
// (kinds) or the parameter's (raw kernels). typed() makes a scalar of a dtype of its own.
class Arg {
 public:
  Arg(const Array& a) : value_(a) {}  // NOLINT: arrays and numbers pass as they are
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Arg(T v) {  // NOLINT
    if constexpr (std::is_same_v<T, bool>) value_ = v;
    else if constexpr (std::is_floating_point_v<T>) value_ = static_cast<double>(v);
    else if constexpr (std::is_signed_v<T>) value_ = static_cast<std::int64_t>(v);
    else if (static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(INT64_MAX))
      value_ = static_cast<std::int64_t>(v);
    else value_ = Typed{DType::UInt64, 0, static_cast<std::uint64_t>(v), 0};  // past int64: NumPy's uint64
  }
  // A scalar of `dtype` (NumPy's numpy.float32(2.5)): strong, it promotes as an array of
  // its dtype does. Error when the value does not fit the dtype.
  static Arg typed(DType dtype, double value);
  static Arg typed(DType dtype, std::int64_t value);
  static Arg typed(DType dtype, std::uint64_t value);

  // A typed scalar: its value in the member that suits its dtype (i: bool and signed
  // integers, u: unsigned integers, f: floats).
  struct Typed {
    DType dtype;
    std::int64_t i;
    std::uint64_t u;
    double f;
  };
  using Value = std::variant<Array, bool, std::int64_t, double, Typed>;
  const Value& value() const { return value_; }

 private:
  Arg() = default;
  Value value_;
};

// Options of the kernel kinds, as luda.cuda.jit's and the kinds' options tables.
struct KernelOptions {
  bool fastmath = false;            // NVRTC's --use_fast_math; relaxed math on cpu too
  std::optional<bool> boundscheck;  // default: on for cpu, off for cuda ($LUDA_BOUNDSCHECK decides both)
  bool debug = false;               // device debug information (NVRTC -G)
};

// CuPy's ElementwiseKernel: typed parameter lists (with placeholders such as T), and a body
// in luda's kernel language (Lua), run once per element with broadcasting.
//   luda::ElementwiseKernel axpb("T x, T a, T b", "T y", "y = a * x + b", "axpb");
//   auto y = axpb({x, 2.0, 1.0})[0];
class ElementwiseKernel {
 public:
  ElementwiseKernel(std::string in_params, std::string out_params, std::string body, std::string name = "kernel",
                    KernelOptions options = {});
  // The inputs in order; `outputs` given are written (broadcast shape, their dtypes), the
  // rest are made. Returns every output. Runs where the arrays are, on `stream` (default: the
  // device's default stream); `size` is CuPy's size=, for kernels whose operands are all raw.
  std::vector<Array> operator()(const std::vector<Arg>& inputs, std::vector<Array> outputs = {},
                                const Stream& stream = {}, std::int64_t size = -1) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// How a reduction runs: over `axes` (0-based as in NumPy and C++, negative from the end; none:
// every axis), keeping them as size-1 axes with keepdims, into `out` when given.
struct ReduceOptions {
  std::optional<std::vector<int>> axes;
  bool keepdims = false;
  std::vector<Array> out;
  Stream stream;
};

// CuPy's ReductionKernel: map, reduce (of a and b), post-map and identity, in luda's kernel
// language. `reduce_type` is the accumulator's type (a dtype or a placeholder; empty: the
// first output's).
class ReductionKernel {
 public:
  ReductionKernel(std::string in_params, std::string out_params, std::string map_expr, std::string reduce_expr,
                  std::string post_map_expr, std::string identity, std::string name = "reduce_kernel",
                  std::string reduce_type = "", KernelOptions options = {});
  std::vector<Array> operator()(const std::vector<Arg>& inputs, const ReduceOptions& how = {}) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Numba's vectorize: a Lua function of scalars, given as its source text, applied
// elementwise with broadcasting; typed per call from its operands, or by `signatures`
// ("float32(float32, float32)").
//   luda::Vectorize gauss("function(x, s) return math.exp(-x * x / (2 * s * s)) end");
class Vectorize {
 public:
  explicit Vectorize(std::string function_text, std::vector<std::string> signatures = {}, KernelOptions options = {});
  std::vector<Array> operator()(const std::vector<Arg>& inputs, std::vector<Array> outputs = {},
                                const Stream& stream = {}) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// CuPy's RawKernel: CUDA C++ as it is, compiled by NVRTC for the device's architecture, or by
// the host compiler for the cpu device. Arguments are checked against the parameter types the
// compiler reads; arrays pass as pointers to their first element.
class RawKernel {
 public:
  // `options` go to the compiler (-DN=4, --use_fast_math); `cooperative` launches it
  // cooperatively, for cooperative_groups::this_grid().sync().
  RawKernel(std::string source, std::string name, std::vector<std::string> options = {}, bool cooperative = false);
  // Launches on the arrays' device (the current device when none is given), on `stream`.
  void operator()(Dim3 grid, Dim3 block, const std::vector<Arg>& args, unsigned shared_mem = 0,
                  const Stream& stream = {}) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// ---- graphs ------------------------------------------------------------------------------------

// luda.graph for C++ (docs/graphs.md): what a callable does with luda, recorded once as a
// task graph whose edges come from the data (an operation waits for another only where
// both touch common bytes and one of them writes), and replayed on new arrays: on a GPU as
// one launch of a driver graph, on the cpu with independent operations side by side.
//   luda::Graph g([&](const std::vector<luda::Array>& in) {
//     return std::vector<luda::Array>{axpb({in[0], 2.0, 1.0})[0]};
//   }, {x0});
//   luda::Array y = g({x})[0];        // x of x0's dtype, shape and device, at any address
class Graph {
 public:
  using Function = std::function<std::vector<Array>(const std::vector<Array>& args)>;

  // Calls fn(examples) once with luda recording instead of running: each kernel
  // (ElementwiseKernel, ReductionKernel, Vectorize, RawKernel), copy (assign, copy, to),
  // fill and new array becomes a node. Nothing runs on the examples: they give the dtypes,
  // shapes, strides and device (the first example's; none: current_device()). What needs a
  // result on the host while recording (to_vector, copy_to_host, repr, str) is an Error;
  // an exception in fn passes as it was thrown, and nothing is recorded. What fn returns
  // is, on each replay: an array fn made, a new array; an example (or a view of one), the
  // replay's argument; another array, itself. `name` titles dot().
  Graph(Function fn, const std::vector<Array>& examples, std::string name = "graph");

  // Runs the graph with `args` in place of the examples: arrays of the recorded dtypes,
  // shapes, strides and devices, at any address (Error otherwise), and over one buffer
  // where the examples were, at the same distance. The arrays fn made and returned are new
  // arrays, or `outputs` in order (C-contiguous, of their dtype and shape). Runs on
  // `stream` (default: the device's default stream), waits for it, and raises what
  // kernels' bounds checks found; launch() does neither.
  std::vector<Array> operator()(const std::vector<Array>& args, std::vector<Array> outputs = {},
                                const Stream& stream = {}) const;
  std::vector<Array> launch(const std::vector<Array>& args, std::vector<Array> outputs = {},
                            const Stream& stream = {}) const;

  // A recorded operation: its kind ("kernel", "copy", "fill" or "host": work the host
  // does on cpu memory, a conversion or a bounds check), its name ("elementwise 'axpb'", "copy
  // of 4096 bytes") and the nodes it waits for (0-based, in the order fn issued them).
  struct Node {
    std::string kind;
    std::string name;
    std::vector<std::size_t> after;
  };
  std::size_t node_count() const;
  std::vector<Node> nodes() const;
  std::size_t edge_count() const;
  // Graphviz's text of the nodes and their edges, each edge labelled with its buffer and
  // hazard ("argument 1 (read after write)"), as luda.graph's g:dot().
  std::string dot() const;
  std::uint64_t replays() const;  // runs so far

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// ---- scripts -----------------------------------------------------------------------------------

// A value passed between C++ and a script: nil, a boolean, an integer, a float, a string,
// an array or a stream. Another Lua value (a table, a function) reads as Other, with its
// type name.
class Value {
 public:
  enum class Type { Nil, Boolean, Integer, Number, String, Array, Stream, Other };

  Value() = default;  // nil
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Value(T v) {  // NOLINT: values convert as they would in Lua
    if constexpr (std::is_same_v<T, bool>) v_ = v;
    else if constexpr (std::is_floating_point_v<T>) v_ = static_cast<double>(v);
    else v_ = static_cast<std::int64_t>(v);
  }
  Value(const char* s) : v_(std::string(s)) {}  // NOLINT
  Value(std::string s) : v_(std::move(s)) {}    // NOLINT
  Value(Array a) : v_(std::move(a)) {}          // NOLINT
  Value(Stream s) : v_(std::move(s)) {}         // NOLINT
  static Value other(std::string type_name);

  Type type() const;
  bool is_nil() const { return v_.index() == 0; }
  // Each raises Error for another type ("expected an ndarray, got a number"); as_number
  // takes integers too.
  bool as_bool() const;
  std::int64_t as_integer() const;
  double as_number() const;
  const std::string& as_string() const;
  const Array& as_array() const;
  const Stream& as_stream() const;
  // "nil", "boolean", "integer", "number", "string", "ndarray", "stream", or Other's name.
  std::string type_name() const;

 private:
  struct OtherValue {
    std::string type_name;
  };
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Array, Stream, OtherValue> v_;
};

// A Lua 5.4 state with luda open, for running scripts on the host's arrays. One Engine is
// one lua_State: use it from one thread at a time (several Engines may run at once).
class Engine {
 public:
  // A new lua_State with Lua's standard libraries and luda open (the global `luda`).
  Engine();
  // The host's own lua_State: opens luda in it (the global `luda`) unless it is there. The
  // host keeps it, and closes it after the Engine is gone.
  explicit Engine(lua_State* L);
  ~Engine();  // closes the lua_State it made
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  lua_State* state() const;

  // Runs `code` as a chunk named `chunkname`, Lua's way: "=name" shows as name in messages,
  // "@path" as the file path. Its text is kept, so that kernels defined in it compile from
  // it. Returns what the chunk returns. A syntax error is a SourceError; an error while it
  // runs, a ScriptError.
  std::vector<Value> run(std::string_view code, std::string_view chunkname = "=(luda::Engine)");
  // Runs the file at `path` (chunk "@path"), keeping the text it read.
  std::vector<Value> run_file(const std::string& path);

  // Global variables.
  void set(std::string_view name, const Value& value);
  Value get(std::string_view name) const;
  // Calls the function at `function` (a global, or a path through tables: "sim.step") with
  // `args`; returns all its results. Errors as run's.
  std::vector<Value> call(std::string_view function, const std::vector<Value>& args = {});

 private:
  lua_State* L_ = nullptr;
  bool owned_ = false;
};

}  // namespace luda

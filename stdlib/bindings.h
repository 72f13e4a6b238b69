// What the binding files of the `luda` module share. Each open_* adds its functions to the
// module table on top of the stack and registers its metatables.
#pragma once

#include <optional>
#include <string_view>

#include "ops/indexing.h"
#include "runtime/launch.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"
#include "stdlib/lua_support.h"

namespace luda::jit {
struct JitStats;
}

namespace luda::lua {

void open_scalars(lua_State* L);             // scalar_bindings.cpp
void open_arrays(lua_State* L);              // array_bindings.cpp
void open_array_constructors(lua_State* L);  // array_constructors.cpp
void open_devices(lua_State* L);             // device_bindings.cpp
void open_math(lua_State* L);                // math_bindings.cpp: luda.math
void open_kernels(lua_State* L);             // raw_kernel_bindings.cpp
void open_random(lua_State* L);              // random_bindings.cpp: luda.random (after open_kinds)
void open_link(lua_State* L);                // link_bindings.cpp: luda.cuda.declare_device
void open_cuda_random(lua_State* L);         // cuda_random_bindings.cpp: luda.cuda.random
void open_routines(lua_State* L);            // routine_bindings.cpp: concatenate, eye, ... (after open_arrays)
void open_indexing(lua_State* L);            // indexing_bindings.cpp: take, put, nonzero, ... (after open_arrays)
void open_dist(lua_State* L);                // dist_bindings.cpp: luda.dist (MPI ranks, collectives)
void open_display(lua_State* L);             // display_bindings.cpp: luda.display
void open_array_files(lua_State* L);         // array_file_bindings.cpp: save, load_npy, x:tofile, ...
// The registry's field for a notebook's display sink: a function(bundle), bundle a table of
// MIME type -> bytes ("image/png", "text/plain"); luda.display shows pictures through it
// where it is set (the Jupyter kernel's Session sets it), else writes files.
inline constexpr char kDisplaySinkKey[] = "luda.display.sink";
// A new table of the C functions that only luda.chunked uses: qr_each (linalg_bindings.cpp);
// require "luda.internal" gives them (stdlib/lua_modules.cpp).
void push_chunked_helpers(lua_State* L);
// Adds to the table on top luda.chunked's view of the kernel kinds: kind_info, kind_call (the
// kinds' __call) and kind_reduce (vectorize's f:reduce) (kind_bindings.cpp).
void push_kind_helpers(lua_State* L);
// Adds to the table on top luda.random's helpers: random_stream, random_module_stream,
// random_state, random_advance, random_draw (random_bindings.cpp).
void push_random_helpers(lua_State* L);
void open_jit(lua_State* L);  // jit_bindings.cpp: luda.cuda.jit (last: it records
                              // the builtin namespaces by identity)

// ---- arrays -------------------------------------------------------------------------

// A shape argument: a number or a Lua sequence of numbers, none negative
// ("zeros: negative dimensions are not allowed (shape (2, -1))"). array_constructors.cpp.
Shape check_shape(lua_State* L, int arg, std::string_view fname);

void push_array(lua_State* L, NDArray a);
inline NDArray* test_array(lua_State* L, int idx) { return test_object<NDArray>(L, idx, kArrayType); }
inline NDArray& check_array(lua_State* L, int arg, std::string_view fname) {
  return check_object<NDArray>(L, arg, kArrayType, fname);
}

// An array built from the nested Lua table at idx (a sequence of sequences for N-d), with
// `dtype` or, when nullopt, the inferred one (bools -> bool, all integers -> int64, any
// float -> float64). Errors name the position: "ragged nested table: t[2] has 3 elements
// but t[1] has 2".
NDArray array_from_table(lua_State* L, int idx, std::optional<DType> dtype, Device device, std::string_view fname);

// ---- indexing (indexing_bindings.cpp) ------------------------------------------------

// Whether a string key of x[key] names a field or method (it starts with a name other
// than None, newaxis, True or False) rather than being an index in NumPy's syntax.
bool is_field_key(std::string_view key);
// The index of x:slice's arguments at first..last: integers, {start, stop, step} tables,
// arrays, booleans, luda.newaxis and luda.ellipsis, or one string in NumPy's syntax.
std::vector<ops::Index> slice_args(lua_State* L, int first, int last, const NDArray& x);
// The index of x[key] for a key at idx that is not a number: an index string, a table of
// x:slice's arguments, or one item (an array, a boolean, luda.newaxis, luda.ellipsis).
std::vector<ops::Index> index_key(lua_State* L, int idx, const NDArray& x);
// The value of x[index] = v at idx as an array: an array as it is, a nested table as x's
// dtype, a number, boolean or typed scalar as a 0-d array of x's dtype on x's device.
NDArray index_value(lua_State* L, int idx, const NDArray& x, std::string_view fname);
// Pushes ops::nonzero(x), one array per axis; returns how many (luda.nonzero, luda.where).
int push_nonzero(lua_State* L, const NDArray& x);

// ---- scalars ------------------------------------------------------------------------

// The Lua value at idx (number, boolean or typed scalar) as a value of `dtype`: integers
// must fit ("300 does not fit in int8 (-128 to 127)"), floats convert as C does
// (truncation toward zero). `what` names the value in errors.
Scalar to_scalar(lua_State* L, int idx, DType dtype, std::string_view fname, std::string_view what);
// A Lua integer or float as a value of `dtype`, with to_scalar's range check and error.
Scalar number_as(std::int64_t x, DType dtype, std::string_view fname, std::string_view what);
Scalar number_as(double x, DType dtype, std::string_view fname, std::string_view what);
// The dtype NumPy gives a Python scalar of this kind: boolean -> bool, integer -> int64,
// float -> float64, typed scalar -> its dtype; nullopt for anything else.
std::optional<DType> natural_dtype(lua_State* L, int idx);
// Pushes a Lua value: boolean, integer (integer dtypes; uint64 past maxinteger becomes a
// float), or float.
void push_scalar_value(lua_State* L, const Scalar& s);
inline Scalar* test_scalar(lua_State* L, int idx) { return test_object<Scalar>(L, idx, kScalarType); }

// ---- kernels -------------------------------------------------------------------------

// A kernel's counters as a Lua table (k:stats() of cuda.jit kernels and of the kinds, one
// set of fields): calls, memory_hits, specializations, disk_hits, disk_misses,
// nvrtc_compiles, host_compiles, loads, frontend_seconds, compile_seconds, load_seconds.
// jit_bindings.cpp.
void push_jit_stats(lua_State* L, const jit::JitStats& s);

// ---- graphs -------------------------------------------------------------------------

// luda.graph (graph_bindings.cpp), into the module table on top of the stack.
void open_graphs(lua_State* L);
// While a graph is recorded on this thread: the kernel object at idx (a kind, a cuda.jit
// launcher, a raw kernel) is kept as long as the graph, whose nodes run its code.
void keep_for_graph(lua_State* L, int idx);

// ---- devices and streams ------------------------------------------------------------

void push_device(lua_State* L, Device d);
inline Stream* test_stream(lua_State* L, int idx) { return test_object<Stream>(L, idx, kStreamType); }
// The `stream` option of the options table at arg (nullopt when absent).
std::optional<Stream> stream_option(lua_State* L, int arg, std::string_view fname);
// A launch on stream s: its handle, and its device for the launch to check.
inline void set_stream(LaunchConfig& config, const Stream& s) {
  config.stream = s.handle();
  config.stream_device = s.device();
}

}  // namespace luda::lua

// The boundary between Lua and C++. Stock lua5.4 is C: lua_error longjmps. So no longjmp
// may cross a live C++ object, and no C++ exception may reach Lua. Every lua_CFunction of
// the module is `trampoline<impl>`: `impl` runs inside try/catch and reports a mistake by
// throwing luda::Error; the trampoline turns it into a Lua error ("file:line: message")
// from a frame that holds no C++ object. Inside an impl, read arguments with the readers
// below (they throw; luaL_check* would longjmp) and use only Lua API calls that cannot
// raise other than on memory exhaustion (rawget/rawgeti on tables, never lua_gettable).
#pragma once

#include <lua.hpp>

#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "jit/call/call_args.h"
#include "runtime/device.h"
#include "runtime/dtype.h"
#include "runtime/error.h"
#include "runtime/launch.h"

namespace luda::lua {

using Impl = int (*)(lua_State*);

// An impl returns this when it has left an error value on top of the stack that must be
// raised as is (luda.with_device rethrowing the error of the function it called).
inline constexpr int kRethrow = -1;

// Runs `impl`, catching every C++ exception. Returns impl's result count, or kRethrow with
// the error value (message prefixed with the caller's position) on top of the stack.
int call_protected(lua_State* L, Impl impl) noexcept;

// The exception behind the last Lua error that call_protected raised on this thread, and
// that error's message as Lua got it (the caller's "file:line: " in front where it was
// added). A host that catches a Lua error tells by the message whether luda raised it,
// and recovers the exception's type and fields (luda::Engine's errors).
struct RaisedError {
  std::exception_ptr exception;
  std::string message;
};
const RaisedError& last_raised_error();

// luda's form of NumPy's __array_function__: a call with an argument that is a table whose
// metatable has `__luda_function` (a chunked array, stdlib/lua/luda/chunked.lua) is handed
// to that function as __luda_function(f, args...), f being the called function itself, and
// returns what it returns; -1 when no argument asks for it. A loop over the arguments'
// types on the common path.
int defer_to_argument(lua_State* L);

template <Impl F>
int trampoline(lua_State* L) {
  if (int n = defer_to_argument(L); n >= 0) return n;
  int n = call_protected(L, F);  // no C++ object lives in this frame
  if (n == kRethrow) return lua_error(L);
  return n;
}

// ---- messages -------------------------------------------------------------------------

// Lua's name for a value's type, using the metatable's __name ("ndarray", "device", ...).
std::string type_name(lua_State* L, int idx);
// "2.5", "3", "true", "'text'", or the type name: a short picture of a value for messages.
std::string describe(lua_State* L, int idx);

// "bad argument #2 to 'zeros' (dtype expected, got number)" as luaL_argerror writes it:
// argument numbers skip `self` in a method call, and a bad self says "calling 'f' on bad self".
[[noreturn]] void arg_error(lua_State* L, int arg, std::string_view fname, std::string_view msg);
[[noreturn]] void type_error(lua_State* L, int arg, std::string_view fname, std::string_view expected);

// ---- argument readers (all throw luda::Error) ----------------------------------------

bool is_none_or_nil(lua_State* L, int idx);
// For `f(a, b [, x] [, y] [, {options}])`: an options table (a table with no metatable)
// given as the last argument at `first_optional` or later, before `options_at`, is moved
// there with nils before it, so that `zeros(shape, {device=})` reads as
// `zeros(shape, nil, {device=})`.
void move_options_to(lua_State* L, int first_optional, int options_at);
// An integer, or a float with an integral value ("number has no integer representation").
std::int64_t check_integer(lua_State* L, int arg, std::string_view fname);
// A 1-based axis among `count` (negative from the end) as a 0-based one. Error:
// "<who>: axis 3 is out of range<of> (axes are 1 to 2, or -1 for the last)", where `of`
// names the array (" for a 2-d array") or is empty.
int axis_arg(lua_State* L, int idx, int count, std::string_view who, std::string_view of = {});
// One axis (a number) or a sequence of them at idx, each as axis_arg reads it; none for nil.
std::optional<std::vector<int>> axes_arg(lua_State* L, int idx, int count, std::string_view who,
                                         std::string_view of = {});
std::optional<std::int64_t> opt_integer(lua_State* L, int arg, std::string_view fname);
double check_number(lua_State* L, int arg, std::string_view fname);
std::string_view check_string(lua_State* L, int arg, std::string_view fname);
// The whole of the string at idx (which must be one), embedded "\0" bytes included: a
// name, key or text read through a C string would end at the first of them, and
// "float32\0junk" would pass for "float32".
inline std::string_view string_at(lua_State* L, int idx) {
  std::size_t n = 0;
  const char* s = lua_tolstring(L, idx, &n);
  return {s, n};
}
void check_table(lua_State* L, int arg, std::string_view fname);
void check_function(lua_State* L, int arg, std::string_view fname);
// A Lua function or its source text (a string).
void check_function_or_text(lua_State* L, int arg, std::string_view fname);

// Converts the Lua value at idx to an integer of a table entry or option; `what` names it in
// the error ("shape[2]", "option 'shared_mem'").
std::int64_t to_integer(lua_State* L, int idx, std::string_view fname, std::string_view what);

// A dtype: a name ("float32") or a dtype constructor (luda.float32). nil gives `fallback`;
// no fallback makes nil an error.
DType check_dtype(lua_State* L, int arg, std::string_view fname);
std::optional<DType> opt_dtype(lua_State* L, int arg, std::string_view fname);
// Whether the value is a dtype constructor function; sets *out.
bool dtype_of_constructor(lua_State* L, int idx, DType* out);

// An options table: nil/none or a table whose keys are all among `allowed`, else
// "bad argument #3 to 'zeros' (unknown option 'devce'; expected device)".
bool check_options(lua_State* L, int arg, std::string_view fname, std::initializer_list<std::string_view> allowed);
// The first key of the table at arg that is not among `allowed`, described ("'devce'");
// empty when all are known.
std::string unknown_option(lua_State* L, int arg, std::initializer_list<std::string_view> allowed);
std::string option_list(std::initializer_list<std::string_view> allowed);  // "device, stream"
// Pushes options[key] (raw) and returns its type; pushes nil when there is no table.
int push_option(lua_State* L, int arg, const char* key);
// The `arch` option of the options table at arg for inspect("ptx"): "sm_90", "compute_90"
// or 90 give 90; 0 when absent (the caller takes the current device's).
int arch_option(lua_State* L, int arg, std::string_view fname);

// A device: "cpu", "cpu:N", "cuda", "cuda:N", a CUDA ordinal, or a device object. Devices
// are checked to exist (NoDeviceError otherwise).
Device to_device_spec(lua_State* L, int idx, std::string_view fname, std::string_view what);
// The `device` option of the options table at arg, else current_device().
Device device_option(lua_State* L, int arg, std::string_view fname);

// ---- upvalues -----------------------------------------------------------------------
// A luda function's upvalues are what luda put there, unless the debug library replaced
// them (debug.setupvalue); these read them checked, raising "a luda function's upvalue
// was replaced..." otherwise.

// Upvalue n, an integer in [lo, hi].
std::int64_t upvalue_integer(lua_State* L, int n, std::int64_t lo, std::int64_t hi);
// Upvalue n, a string.
std::string_view upvalue_string(lua_State* L, int n);
// Upvalue n is a table (lua_rawget on it is then safe).
void check_upvalue_table(lua_State* L, int n);
// Upvalue n, a userdata holding a T tagged tname.
template <class T>
T& upvalue_object(lua_State* L, int n, const char* tname);
[[noreturn]] void replaced_upvalue();

// Pushes methods[key] (key at index `key`) from the methods table that is upvalue 1 of
// an __index made by new_metatable_with_index, and returns true; false (nothing pushed)
// when there is no such method.
bool push_method(lua_State* L, int key);

// ---- userdata ------------------------------------------------------------------------

// Type names: each metatable's __name (which error messages show), and the tag that the
// userdata of that type carries (Box::tag). Arrays, so that each has one address.
inline constexpr char kArrayType[] = "ndarray";
inline constexpr char kDeviceType[] = "device";
inline constexpr char kStreamType[] = "stream";
inline constexpr char kEventType[] = "event";
inline constexpr char kScalarType[] = "scalar";
inline constexpr char kKernelType[] = "raw_kernel";
inline constexpr char kModuleType[] = "raw_module";
inline constexpr char kDeclaredType[] = "declared_device";
inline constexpr char kIndexConstantType[] = "index_constant";  // luda.newaxis, luda.ellipsis

// A C++ object stored in a full userdata. The type is told by `tag`, the address of its
// type name, written when the userdata is made: a script can give a userdata any
// metatable (debug.setmetatable) but cannot write into it, so what luda reads as an
// ndarray is one. `alive` turns false in __gc, so a resurrected userdata is reported
// rather than used after destruction.
template <class T>
struct Box {
  const char* tag;
  T value;
  bool alive = true;
};

// The first word of the full userdata at idx (its tag when it is luda's), else nullptr.
// Compare it with type names only: for another library's userdata it is any bits.
inline const void* userdata_tag(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) < sizeof(const char*)) return nullptr;
  return *static_cast<const char* const*>(lua_touserdata(L, idx));
}

// Pushes a new userdata holding `value`, tagged and given the metatable of type `tname`.
template <class T>
T& push_object(lua_State* L, const char* tname, T value, int user_values = 0) {
  void* mem = lua_newuserdatauv(L, sizeof(Box<T>), user_values);
  auto* box = new (mem) Box<T>{tname, std::move(value), true};
  luaL_setmetatable(L, tname);
  return box->value;
}

// The object at idx when it is a live userdata of type tname, else nullptr.
template <class T>
T* test_object(lua_State* L, int idx, const char* tname) {
  if (userdata_tag(L, idx) != tname) return nullptr;
  auto* box = static_cast<Box<T>*>(lua_touserdata(L, idx));
  if (!box->alive) fail("the {} was already freed (closed or garbage-collected)", tname);
  return &box->value;
}

// The object in the userdata at idx, whose tag is known to be tname.
template <class T>
T& object_at(lua_State* L, int idx, const char* tname) {
  auto* box = static_cast<Box<T>*>(lua_touserdata(L, idx));
  if (!box->alive) fail("the {} was already freed (closed or garbage-collected)", tname);
  return box->value;
}

template <class T>
T& check_object(lua_State* L, int arg, const char* tname, std::string_view fname) {
  if (T* p = test_object<T>(L, arg, tname)) return *p;
  type_error(L, arg, fname, tname);
}

// __gc for Box<T> of type `tname`: runs the destructor once. Another type's object, or
// another library's userdata, given this metatable is left alone (it is not finalized).
template <class T, const char* tname>
int gc_object(lua_State* L) {
  if (userdata_tag(L, 1) != tname) return 0;
  auto* box = static_cast<Box<T>*>(lua_touserdata(L, 1));
  if (box->alive) {
    box->alive = false;
    box->value.~T();
  }
  return 0;
}

// Creates the metatable `tname` (with __name and a type tag, for messages), sets `funcs` into
// it, and, when `methods` is given, a methods table as __index. Leaves the metatable on
// the stack. `tname` is a type-name constant (kArrayType, ...): its address is the tag of
// the userdata of that type, and messages may read a tag registered here as a name.
void new_metatable(lua_State* L, const char* tname, const luaL_Reg* funcs, const luaL_Reg* methods);

// As new_metatable, but __index is `index`, a closure whose upvalue 1 is the methods table
// (for types with fields as well as methods). Pops the metatable.
void new_metatable_with_index(lua_State* L, const char* tname, const luaL_Reg* funcs, const luaL_Reg* methods,
                              lua_CFunction index);

// Pushes a Lua sequence of integers.
void push_int_sequence(lua_State* L, const std::int64_t* values, std::size_t n);

template <class T>
T& upvalue_object(lua_State* L, int n, const char* tname) {
  if (userdata_tag(L, lua_upvalueindex(n)) != tname) replaced_upvalue();
  return object_at<T>(L, lua_upvalueindex(n), tname);
}

// ---- launches -------------------------------------------------------------------------

// Who a message is about, "<kind> '<name>'" ("raw_kernel 'add'"), or `kind` alone when
// `name` is empty. Launch paths pass this rather than a formatted string, so that a good
// call formats nothing: str() runs only for an error.
struct Subject {
  std::string_view kind;
  std::string_view name;
  std::string str() const;
};

// A launch's grid or block from the Lua value at idx: a number or a table of 1 to 3
// integers, each at least 1 (LaunchConfig::validate's text, checked with no device).
// Messages start with `who` ("kernel 'add'", "raw_kernel 'add'"); `hint` follows a
// value of the wrong kind in parentheses ("use the syntax add[{blocks, threads}](...)").
Dim3 read_launch_dim(lua_State* L, int idx, const Subject& who, std::string_view what, std::string_view hint);
Dim3 read_launch_dim(lua_State* L, int idx, std::string_view who, std::string_view what, std::string_view hint);
// k:max_cooperative_grid_blocks(block [, shared_bytes])'s arguments at 2 and 3 (either
// kernel kind's): the block, and the dynamic shared memory (0 when absent).
struct CooperativeQuery {
  Dim3 block;
  unsigned shared = 0;
};
CooperativeQuery read_cooperative_query(lua_State* L);
// The same without messages: false when the value is not a valid grid or block.
bool read_launch_dim_fast(lua_State* L, int idx, Dim3* out);

// The Lua value at idx as a kernel argument: an array, a typed scalar, a number (integer
// or float, weak) or a boolean; false for anything else. Throws only for a userdata freed
// already. Nothing is copied: an array argument points at the userdata's NDArray, which
// must stay on the stack through the launch.
bool to_kernel_arg(lua_State* L, int idx, jit::KernelArg* out);

// Room for N kernel arguments on the C stack, left uninitialized: to_kernel_arg fills the
// ones a call has (value-initializing 64 of them cost more than reading four).
template <std::size_t N>
class KernelArgStorage {
  static_assert(std::is_trivially_copyable_v<jit::KernelArg> && std::is_trivially_destructible_v<jit::KernelArg>);

 public:
  jit::KernelArg* data() { return reinterpret_cast<jit::KernelArg*>(bytes_); }

 private:
  alignas(jit::KernelArg) unsigned char bytes_[N * sizeof(jit::KernelArg)];
};

}  // namespace luda::lua

// The ndarray userdata: fields (shape, strides, dtype, ndim, size, device, T, itemsize,
// nbytes), 0-based element indexing x[i] (a number for 1-D, a view for N-d) and NumPy's
// indexing x[key] with any other key (stdlib/indexing_bindings.cpp), #x, tostring
// (NumPy's repr; a CUDA array prints the same repr, as CuPy does), and the methods get,
// copy_to_host, to, totable, item, reshape, transpose, slice, copy, astype, fill, and
// compute and persist (a chunked array's, for code written for both).
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/format.h"
#include "runtime/graph/recording.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

// A number key: an integer, or a float with an integral value.
std::int64_t integer_key(lua_State* L, int idx) {
  int isnum = 0;
  lua_Integer i = lua_tointegerx(L, idx, &isnum);
  if (!isnum)
    fail("ndarray index must be an integer (0-based), an array, a boolean, luda.newaxis, luda.ellipsis, a table of "
         "x:slice's items, an index string or a field name, got {}",
         describe(L, idx));
  return i;
}

std::optional<Stream> stream_arg(lua_State* L, int arg, std::string_view fname) {
  check_options(L, arg, fname, {"stream"});
  return stream_option(L, arg, fname);
}

// x:get({stream=}) and x:copy_to_host({stream=}): a C-contiguous copy on the cpu.
int l_get(lua_State* L) {
  NDArray& a = check_array(L, 1, "get");
  GraphRecording::refuse_if_recording("x:get()");
  std::optional<Stream> s = stream_arg(L, 2, "get");
  push_array(L, a.copy(Device::cpu(), s ? &*s : nullptr));
  return 1;
}

// x:to(device, {stream=}): x itself when already there, else a copy.
int l_to(lua_State* L) {
  NDArray& a = check_array(L, 1, "to");
  if (is_none_or_nil(L, 2)) type_error(L, 2, "to", "device");
  Device d = to_device_spec(L, 2, "to", "device");
  std::optional<Stream> s = stream_arg(L, 3, "to");
  push_array(L, a.to(d, s ? &*s : nullptr));
  return 1;
}

// x:compute([{device=, root=}]) and x:persist(): what a chunked array's methods of these
// names give (docs/chunked.md), for an array that is already one: x itself, or x:to(device)
// with `device`, so that code written for chunked arrays runs on plain ones. A plain
// array's values are computed (their kernels queued) when it is made, and it is whole on
// its rank, so `root` changes nothing.
int l_compute(lua_State* L) {
  check_array(L, 1, "compute");
  check_options(L, 2, "compute", {"device", "root"});
  if (push_option(L, 2, "root") != LUA_TNIL && !lua_isinteger(L, -1))
    fail("compute: option 'root' must be a rank (an integer), got {}", describe(L, -1));
  lua_pop(L, 1);
  const bool moved = push_option(L, 2, "device") != LUA_TNIL;
  lua_pop(L, 1);
  if (!moved) {
    lua_settop(L, 1);
    return 1;
  }
  NDArray& a = check_array(L, 1, "compute");
  Device d = device_option(L, 2, "compute");
  if (d == a.device()) lua_settop(L, 1);
  else push_array(L, a.to(d));
  return 1;
}

int l_persist(lua_State* L) {
  check_array(L, 1, "persist");
  if (!lua_isnone(L, 2))
    arg_error(L, 2, "persist", "x:persist() takes no arguments (an array's values are computed when it is made)");
  lua_settop(L, 1);
  return 1;
}

void push_elements(lua_State* L, const NDArray& a, const std::byte* data, std::size_t depth, std::size_t& cursor) {
  if (depth == a.shape().size()) {
    push_scalar_value(L, Scalar::load(data + cursor, a.dtype()));
    cursor += itemsize(a.dtype());
    return;
  }
  std::int64_t n = a.shape()[depth];
  lua_createtable(L, static_cast<int>(n), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    push_elements(L, a, data, depth + 1, cursor);
    lua_rawseti(L, -2, i + 1);
  }
}

// x:totable(): 1-based nested tables (a plain value for a 0-d array).
int l_totable(lua_State* L) {
  NDArray& a = check_array(L, 1, "totable");
  GraphRecording::refuse_if_recording("x:totable()");
  std::vector<std::byte> bytes = a.to_host_bytes();
  if (!lua_checkstack(L, a.ndim() + 8)) fail("totable: Lua stack overflow");
  std::size_t cursor = 0;
  push_elements(L, a, bytes.data(), 0, cursor);
  return 1;
}

// x:item(): the one element of a size-1 array as a Lua value.
int l_item(lua_State* L) {
  NDArray& a = check_array(L, 1, "item");
  GraphRecording::refuse_if_recording("x:item()");
  if (a.size() != 1)
    fail("item: the array has {} elements; item() reads an array of exactly one (use x:totable())", a.size());
  std::vector<std::byte> bytes = a.to_host_bytes();
  push_scalar_value(L, Scalar::load(bytes.data(), a.dtype()));
  return 1;
}

// Integers given either as one sequence table at `first` or as the arguments from `first` on.
std::vector<std::int64_t> int_list(lua_State* L, int first, std::string_view fname, std::string_view what) {
  std::vector<std::int64_t> out;
  if (lua_type(L, first) == LUA_TTABLE) {
    if (!lua_isnone(L, first + 1))
      arg_error(L, first + 1, fname, fmt::format("give the {} as one table or as numbers, not both", what));
    auto n = static_cast<int>(lua_rawlen(L, first));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, first, i);
      std::int64_t v = to_integer(L, -1, fname, fmt::format("{}[{}]", what, i));
      lua_pop(L, 1);
      out.push_back(v);
    }
    return out;
  }
  for (int i = first; i <= lua_gettop(L); ++i) {
    if (lua_type(L, i) != LUA_TNUMBER) type_error(L, i, fname, "integer");
    out.push_back(check_integer(L, i, fname));
  }
  return out;
}

// x:reshape(shape) or x:reshape(d1, d2, ...); -1 infers one extent.
int l_reshape(lua_State* L) {
  NDArray& a = check_array(L, 1, "reshape");
  if (lua_isnone(L, 2)) type_error(L, 2, "reshape", "shape");
  // Before reading a long table into a shape.
  check_ndim(lua_type(L, 2) == LUA_TTABLE ? lua_rawlen(L, 2) : static_cast<std::size_t>(lua_gettop(L) - 1));
  push_array(L, a.reshape(int_list(L, 2, "reshape", "shape")));
  return 1;
}

// x:transpose() reverses the axes; x:transpose(2, 1) or x:transpose({2, 1}) permutes them.
// Axes are 1-based like every Lua position (-1 is the last).
int l_transpose(lua_State* L) {
  NDArray& a = check_array(L, 1, "transpose");
  std::vector<std::int64_t> given = int_list(L, 2, "transpose", "axes");
  std::vector<int> axes;
  for (std::size_t i = 0; i < given.size(); ++i) {
    std::int64_t ax = given[i];
    if (ax == 0 || ax > a.ndim() || ax < -a.ndim())
      fail("transpose: axis {} is out of range for a {}-d array (axes are 1 to {}, or -1 for the last)", ax, a.ndim(),
           a.ndim());
    axes.push_back(static_cast<int>(ax > 0 ? ax - 1 : ax));
  }
  push_array(L, a.transpose(axes));
  return 1;
}

// x:slice(item, ...) or x:slice(text): NumPy's x[item, ...] (ops/indexing.h), a view for
// integers, slices, newaxis and '...', a new array when an array or a boolean is among them.
int l_slice(lua_State* L) {
  NDArray& a = check_array(L, 1, "slice");
  push_array(L, ops::get_item(a, slice_args(L, 2, lua_gettop(L), a)));
  return 1;
}

int l_copy(lua_State* L) {
  NDArray& a = check_array(L, 1, "copy");
  push_array(L, a.copy());
  return 1;
}

int l_astype(lua_State* L) {
  NDArray& a = check_array(L, 1, "astype");
  push_array(L, a.astype(check_dtype(L, 2, "astype")));
  return 1;
}

// x:fill(v): every element set to v (converted to x's dtype); returns x.
int l_fill(lua_State* L) {
  NDArray& a = check_array(L, 1, "fill");
  a.fill(to_scalar(L, 2, a.dtype(), "fill", ""));
  lua_settop(L, 1);
  return 1;
}

void push_field(lua_State* L, const NDArray& a, std::string_view key, int methods) {
  if (key == "shape") return push_int_sequence(L, a.shape().data(), a.shape().size());
  if (key == "strides") return push_int_sequence(L, a.strides().data(), a.strides().size());
  if (key == "dtype") return (void)lua_pushstring(L, std::string(dtype_name(a.dtype())).c_str());
  if (key == "ndim") return lua_pushinteger(L, a.ndim());
  if (key == "size") return lua_pushinteger(L, a.size());
  if (key == "itemsize") return lua_pushinteger(L, static_cast<lua_Integer>(itemsize(a.dtype())));
  if (key == "nbytes") return lua_pushinteger(L, static_cast<lua_Integer>(a.nbytes()));
  if (key == "device") return (void)lua_pushstring(L, a.device().str().c_str());
  if (key == "T") return push_array(L, a.transpose());
  lua_pushlstring(L, key.data(), key.size());
  if (lua_rawget(L, methods) != LUA_TNIL) return;
  lua_pop(L, 1);
  fail("ndarray has no field or method '{}'", printable(key));
}

// __index (upvalue 1: the methods table)
int l_index(lua_State* L) {
  NDArray& a = check_array(L, 1, "index");
  if (lua_type(L, 2) == LUA_TSTRING && is_field_key(string_at(L, 2))) {
    check_upvalue_table(L, 1);  // the methods
    push_field(L, a, string_at(L, 2), lua_upvalueindex(1));
    return 1;
  }
  if (lua_type(L, 2) != LUA_TNUMBER) {
    push_array(L, ops::get_item(a, index_key(L, 2, a)));
    return 1;
  }
  std::int64_t i = integer_key(L, 2);
  if (a.ndim() == 1) {
    std::int64_t at[1] = {i};
    push_scalar_value(L, a.get(at));
  } else {
    push_array(L, a.at(i));
  }
  return 1;
}

// Writes the Lua value at idx into dst: an ndarray or a nested table is assigned
// (broadcast, converted to dst's dtype, any devices), a number or boolean fills.
void assign_value(lua_State* L, NDArray& dst, int idx, std::string_view fname) {
  if (NDArray* src = test_array(L, idx)) {
    dst.assign(*src);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    dst.assign(array_from_table(L, idx, dst.dtype(), Device::cpu(), fname));
  } else {
    dst.fill(to_scalar(L, idx, dst.dtype(), fname, ""));
  }
}

// __newindex: x[i] = v. 1-D: v a number; N-d: v is assigned to the row x[i].
int l_newindex(lua_State* L) {
  NDArray& a = check_array(L, 1, "index assignment");
  if (lua_type(L, 2) == LUA_TSTRING && is_field_key(string_at(L, 2)))
    fail("cannot set field '{}': an ndarray's fields are read-only (reshape with x:reshape, change the dtype with "
         "x:astype)",
         printable(string_at(L, 2)));
  if (lua_type(L, 2) != LUA_TNUMBER) {
    const std::vector<ops::Index> index = index_key(L, 2, a);
    if (ops::is_basic(index)) {
      NDArray view = ops::get_item(a, index);
      assign_value(L, view, 3, "x[index] = v");
    } else {
      ops::set_item(a, index, index_value(L, 3, a, "x[index] = v"));
    }
    return 0;
  }
  std::int64_t i = integer_key(L, 2);
  std::string fname = fmt::format("x[{}] = v", i);
  if (a.ndim() == 1) {
    std::int64_t at[1] = {i};
    a.set(at, to_scalar(L, 3, a.dtype(), fname, ""));
    return 0;
  }
  NDArray row = a.at(i);
  assign_value(L, row, 3, fname);
  return 0;
}

// luda.copyto(dst, src): NumPy's copyto. src (an array, a nested table or a number) is
// written into dst without allocating dst anew; returns dst.
int l_copyto(lua_State* L) {
  NDArray& dst = check_array(L, 1, "copyto");
  assign_value(L, dst, 2, "copyto");
  lua_settop(L, 1);
  return 1;
}

int l_len(lua_State* L) {
  NDArray& a = check_array(L, 1, "length");
  if (a.ndim() == 0) fail("#x of a 0-d array: it has no first dimension (read its value with x:item())");
  lua_pushinteger(L, a.shape()[0]);
  return 1;
}

int l_tostring(lua_State* L) {
  NDArray& a = check_array(L, 1, "tostring");
  GraphRecording::refuse_if_recording("tostring(x) (and print(x))");
  std::string text = a.repr();
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// luda.array_str(x): NumPy's str of an array, "[0. 1.]".
int l_array_str(lua_State* L) {
  NDArray& a = check_array(L, 1, "array_str");
  GraphRecording::refuse_if_recording("luda.array_str(x)");
  std::string text = format_str(a);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

}  // namespace

// Lua's collector sees an array as its small userdata, not the device or host memory behind
// it, so a loop making large temporaries would hold them (and a GPU's memory pool would map
// ever more memory) until the Lua heap alone asked for a collection. So, as Go's collector
// paces itself by GOGC: once the buffers made by new arrays since the last collection add
// up to as much as luda's memory then live (at least kCollectFloor), Lua collects in full,
// which frees the garbage arrays. A full collection of a script's heap takes tens of
// microseconds, so it is paid at most once per that much memory made. A collector stopped
// by collectgarbage("stop") stays stopped.
namespace {
constexpr std::uint64_t kCollectFloor = std::uint64_t{256} << 20;

void count_external_bytes(lua_State* L, const NDArray& a) {
  const std::shared_ptr<Buffer>& b = a.buffer();
  if (!b || b.use_count() != 1) return;  // a view, or a buffer another handle holds
  static thread_local std::uint64_t made = 0, budget = kCollectFloor;
  made += b->size();
  if (made < budget) return;
  made = 0;
  if (lua_gc(L, LUA_GCISRUNNING)) lua_gc(L, LUA_GCCOLLECT);
  budget = std::max(kCollectFloor, Buffer::live_bytes());
}
}  // namespace

void push_array(lua_State* L, NDArray a) {
  count_external_bytes(L, a);
  push_object<NDArray>(L, kArrayType, std::move(a));
}

void open_arrays(lua_State* L) {
  static const luaL_Reg methods[] = {
      {"get", trampoline<l_get>},
      {"copy_to_host", trampoline<l_get>},
      {"to", trampoline<l_to>},
      {"totable", trampoline<l_totable>},
      {"item", trampoline<l_item>},
      {"reshape", trampoline<l_reshape>},
      {"transpose", trampoline<l_transpose>},
      {"slice", trampoline<l_slice>},
      {"copy", trampoline<l_copy>},
      {"astype", trampoline<l_astype>},
      {"fill", trampoline<l_fill>},
      {"compute", trampoline<l_compute>},
      {"persist", trampoline<l_persist>},
      {nullptr, nullptr},
  };
  static const luaL_Reg meta[] = {
      {"__newindex", trampoline<l_newindex>},      {"__len", trampoline<l_len>},
      {"__tostring", trampoline<l_tostring>},      {"__gc", gc_object<NDArray, kArrayType>},
      {"__close", gc_object<NDArray, kArrayType>}, {nullptr, nullptr},
  };
  new_metatable_with_index(L, kArrayType, meta, methods, trampoline<l_index>);
  lua_pushcfunction(L, trampoline<l_copyto>);
  lua_setfield(L, -2, "copyto");
  lua_pushcfunction(L, trampoline<l_array_str>);
  lua_setfield(L, -2, "array_str");
  lua_pushcfunction(L, trampoline<l_tostring>);
  lua_setfield(L, -2, "array_repr");
}

}  // namespace luda::lua

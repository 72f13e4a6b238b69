// Arrays in files (ops/array_files.h), NumPy's functions:
//   luda.save(path, x)                          numpy.save
//   luda.savez(path, x, y, ... [, {name = z, ...}]), luda.savez_compressed(...)
//                                               numpy.savez, numpy.savez_compressed
//   luda.load(path [, {device=}])               numpy.load of an existing file named *.npy or *.npz
//   luda.load_npy(path [, {device=}])           numpy.load of any file name: an array, or a table of them
//   x:tofile(path)                              ndarray.tofile
//   luda.fromfile(path [, dtype [, count]] [, {offset=, device=}])   numpy.fromfile
// luda.load is also Lua's load keeping a chunk's text (stdlib/chunk_texts.h): a string that
// names an existing regular file ending in .npy or .npz is loaded as NumPy's file, any
// other string as a chunk (no Lua chunk is both: it would have to be such a file's name).
#include <lua.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/array_files.h"
#include "stdlib/bindings.h"
#include "stdlib/chunk_texts.h"
#include "stdlib/lua_support.h"

namespace luda::lua {
namespace {

// A path argument: a string without zero bytes (a C path would end at the first).
std::string check_path(lua_State* L, int arg, std::string_view fname) {
  std::string_view path = check_string(L, arg, fname);
  if (path.find('\0') != std::string_view::npos) arg_error(L, arg, fname, "the path holds a zero byte");
  if (path.empty()) arg_error(L, arg, fname, "the path is empty");
  return std::string(path);
}

// luda.save(path, x)
int l_save(lua_State* L) {
  std::string path = check_path(L, 1, "save");
  const NDArray& x = check_array(L, 2, "save");
  if (lua_gettop(L) > 2) arg_error(L, 3, "save", "too many arguments; expected (path, x)");
  ops::save_npy(std::move(path), x, "save");
  return 0;
}

// luda.savez(path, x, y, ... [, {name = z, ...}]): the positional arrays are arr_0, arr_1,
// ... as numpy.savez names them; the table's are sorted by name.
template <bool Compressed>
int l_savez(lua_State* L) {
  const char* fname = Compressed ? "savez_compressed" : "savez";
  std::string path = check_path(L, 1, fname);
  std::vector<ops::NamedArray> arrays;
  const int top = lua_gettop(L);
  for (int i = 2; i <= top; ++i) {
    if (NDArray* x = test_array(L, i)) {
      arrays.push_back({"arr_" + std::to_string(i - 2), *x});
      continue;
    }
    if (lua_type(L, i) != LUA_TTABLE || lua_getmetatable(L, i) || i != top)
      type_error(L, i, fname, i == top ? "ndarray or table of name = ndarray" : "ndarray");
    std::vector<ops::NamedArray> named;
    lua_pushnil(L);
    while (lua_next(L, i)) {
      if (lua_type(L, -2) != LUA_TSTRING)
        arg_error(L, i, fname, fmt::format("the table's keys must be names (strings), got {}", describe(L, -2)));
      std::string name(string_at(L, -2));
      NDArray* x = test_array(L, -1);
      if (!x) arg_error(L, i, fname, fmt::format("the table's '{}' is {}, not an ndarray", name, describe(L, -1)));
      named.push_back({std::move(name), *x});
      lua_pop(L, 1);
    }
    std::sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (auto& n : named) {
      for (const auto& a : arrays)
        if (a.name == n.name)
          arg_error(L, i, fname,
                    fmt::format("the name '{}' is taken by a positional array; name it otherwise", n.name));
      arrays.push_back(std::move(n));
    }
  }
  ops::save_npz(std::move(path), arrays, Compressed, fname);
  return 0;
}

// luda.load_npy(path [, {device=}]), and luda.load's form for NumPy's files.
int load_arrays(lua_State* L, std::string_view fname) {
  std::string path = check_path(L, 1, fname);
  check_options(L, 2, fname, {"device"});
  Device device = device_option(L, 2, fname);
  auto loaded = ops::load(path, device, fname);
  if (NDArray* a = std::get_if<NDArray>(&loaded)) {
    push_array(L, std::move(*a));
    return 1;
  }
  auto& arrays = std::get<std::vector<ops::NamedArray>>(loaded);
  lua_createtable(L, 0, static_cast<int>(arrays.size()));
  for (auto& a : arrays) {
    lua_pushlstring(L, a.name.data(), a.name.size());
    push_array(L, std::move(a.array));
    lua_rawset(L, -3);
  }
  return 1;
}

int l_load_npy(lua_State* L) { return load_arrays(L, "load_npy"); }

// Whether luda.load's arguments name NumPy's file: a string ending in .npy or .npz that is
// an existing regular file, and no chunk name (a string) after it.
bool names_array_file(lua_State* L) {
  if (lua_type(L, 1) != LUA_TSTRING || (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))) return false;
  std::string_view path = string_at(L, 1);
  if (path.size() < 5 || path.find('\0') != std::string_view::npos) return false;
  std::string_view ext = path.substr(path.size() - 4);
  if (ext != ".npy" && ext != ".npz") return false;
  struct stat st;
  return ::stat(std::string(path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

int l_load_file(lua_State* L) { return load_arrays(L, "load"); }

// luda.load(path [, {device=}]) or Lua's load(chunk [, chunkname [, mode [, env]]]). Not
// under a trampoline itself: load_keeping_text raises Lua errors, which must not unwind
// through C++ frames.
int l_load(lua_State* L) { return names_array_file(L) ? trampoline<l_load_file>(L) : load_keeping_text(L); }

// x:tofile(path)
int l_tofile(lua_State* L) {
  const NDArray& x = check_array(L, 1, "tofile");
  std::string path = check_path(L, 2, "tofile");
  ops::tofile(x, path, "tofile");
  return 0;
}

// luda.fromfile(path [, dtype [, count]] [, {offset=, device=}]): dtype float64 and count
// -1 (all) by default, as numpy.fromfile's.
int l_fromfile(lua_State* L) {
  move_options_to(L, 2, 4);
  std::string path = check_path(L, 1, "fromfile");
  DType dtype = opt_dtype(L, 2, "fromfile").value_or(DType::Float64);
  std::optional<std::int64_t> count = opt_integer(L, 3, "fromfile");
  if (count && *count == -1) count.reset();
  check_options(L, 4, "fromfile", {"offset", "device"});
  std::int64_t offset = 0;
  if (push_option(L, 4, "offset") != LUA_TNIL) offset = to_integer(L, -1, "fromfile", "option 'offset'");
  lua_pop(L, 1);
  Device device = device_option(L, 4, "fromfile");
  push_array(L, ops::fromfile(path, dtype, count, offset, device, "fromfile"));
  return 1;
}

}  // namespace

void open_array_files(lua_State* L) {
  static const luaL_Reg functions[] = {
      {"save", trampoline<l_save>},
      {"savez", trampoline<l_savez<false>>},
      {"savez_compressed", trampoline<l_savez<true>>},
      {"load", l_load},
      {"load_npy", trampoline<l_load_npy>},
      {"fromfile", trampoline<l_fromfile>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, functions, 0);
  const int module = lua_gettop(L);
  luaL_getmetatable(L, kArrayType);
  lua_getfield(L, -1, "__index");
  LUDA_INTERNAL_CHECK(lua_getupvalue(L, -1, 1) != nullptr && lua_type(L, -1) == LUA_TTABLE);
  lua_pushcfunction(L, trampoline<l_tofile>);
  lua_setfield(L, -2, "tofile");
  lua_settop(L, module);
}

}  // namespace luda::lua

// The Lua bridge, for a host that works with its lua_State through Lua's C API as well as
// through luda::Engine: open the module, keep the text of the chunks it loads (so that
// kernels defined in them compile), and pass arrays across the stack. Needs Lua 5.4's
// headers (Debian: liblua5.4-dev).
#pragma once

#include <lua.hpp>

#include <string_view>

#include "luda/luda.h"

// Opens the module: luaL_requiref(L, "luda", luaopen_luda, 1) makes it the global `luda`.
// A stock lua5.4 loads the same function from luda.so with require "luda".
extern "C" int luaopen_luda(lua_State* L);

namespace luda {

// luaL_loadbufferx, keeping `text` as the text of the chunk `chunkname` when it loads (what
// kernels defined in it are compiled from). Returns what luaL_loadbufferx returns and leaves
// what it leaves: the function, or the error message.
int load_chunk(lua_State* L, std::string_view text, const char* chunkname, const char* mode = nullptr);

// luaL_loadfilex (nullptr: stdin, as "=stdin"), keeping the text it read, however the file
// changes afterwards. Lua's results and messages.
int load_file(lua_State* L, const char* filename, const char* mode = nullptr);

// Keeps `text` as a text of the chunk named `chunkname` (exactly the name given to lua_load),
// for a chunk loaded some other way. Returns LUA_OK, or LUA_ERRMEM when memory ran out.
int register_chunk(lua_State* L, const char* chunkname, std::string_view text);

// Pushes `a` as a luda ndarray (sharing its memory).
void push_array(lua_State* L, const Array& a);
// The ndarray at `index` (sharing its memory); Error "expected an ndarray at stack index 2, got
// a table" otherwise.
Array to_array(lua_State* L, int index);
bool is_array(lua_State* L, int index);
// Pushes any Value (an array, a stream, a number, ...).
void push_value(lua_State* L, const Value& v);
// The Lua value at `index` as a Value: tables, functions and other userdata read as Other.
Value to_value(lua_State* L, int index);

}  // namespace luda

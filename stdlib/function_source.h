// Where a Lua function's source is, for the kernel language's front end: the text of the
// chunk it was defined in (a file, the string given to load(), or a line typed at the
// REPL) and its span, from debug.getinfo(f, "Su").
#pragma once

#include <lua.hpp>

#include <string>
#include <vector>

#include "dsl/compile.h"

namespace luda::lua {

// The source of the Lua function at idx. A file's text is read once per file (again when
// it changes on disk). REPL and `-e` chunks are found through what remember_chunk
// recorded. Throws Error naming the function's place and the fix (pass the source text)
// when the text cannot be had: a C function, a chunk loaded under a name of its own,
// stripped bytecode, a file since removed.
dsl::FunctionSource function_source(lua_State* L, int idx);

// A function given as source text: luda.cuda.jit([[ function(x, out) ... end ]]). Its
// chunk is named as Lua names a string chunk: [string "function(x, out)..."].
dsl::FunctionSource text_source(std::string text);

// The name the source gives the function ("add_kernel" for `local function add_kernel(`,
// `local add_kernel = cuda.jit(function(`, `function M.add_kernel(`, `add = function(`),
// or "" when none shows.
std::string function_name(const dsl::FunctionSource& source);

// The parameter names of the Lua function at idx (empty for a C function).
std::vector<std::string> parameter_names(lua_State* L, int idx);

// For cli/: remember_chunk(chunk, text) records the text of a chunk just loaded from the
// REPL or -e (whose chunkname, "=stdin", does not hold the text), so that functions
// defined there can become kernels. A lua_CFunction: call it under lua_pcall.
int remember_chunk(lua_State* L);

}  // namespace luda::lua

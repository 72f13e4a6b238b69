// Where a Lua function's source is, for the kernel language's front end: the text of the
// chunk it was defined in, as kept when the chunk was loaded (stdlib/chunk_texts.h), and
// its span and parameter count, from debug.getinfo(f, "Su"). A function given as source
// text, and the name its text gives it: dsl/source_text.h.
#pragma once

#include <lua.hpp>

#include <string>
#include <vector>

#include "dsl/compile.h"

namespace luda::lua {

// The source of the Lua function at idx: the one text kept for its chunk name that
// defines a function of its line span and parameter count (texts holding the very same
// function count as one). load(text) chunks are their own name. A file nothing kept when
// it was loaded (luda opened by a stock lua5.4 after the file was loaded) is read now,
// once, and kept. Throws Error naming the function's place and the fix (pass the source
// text) when the text cannot be had: a C function, a main chunk, a chunk loaded under a
// name of its own without keeping its text, stripped bytecode, a file since removed; a
// SourceError when no kept text defines the function (a file changed before luda read
// it) or several different ones do.
dsl::FunctionSource function_source(lua_State* L, int idx);

// The parameter names of the Lua function at idx (empty for a C function).
std::vector<std::string> parameter_names(lua_State* L, int idx);

}  // namespace luda::lua

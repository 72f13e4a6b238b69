// The REPL's commands, in IPython's spirit: an input that starts with ':' (`:time expr`,
// `:devices`, `:cache [clear]`, `:cuda k`, `:ptx k`, `:types k`, `:help`).
#pragma once

struct lua_State;

namespace luda::cli {

// A lua_CFunction: pushes the function(line) that runs a command line (raising a Lua
// error with its message for a bad one). Needs luda loaded (package.loaded.luda).
int push_commands(lua_State* L);

}  // namespace luda::cli

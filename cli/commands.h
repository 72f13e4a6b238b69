// The REPL's commands, in IPython's spirit: an input that starts with ':' (`:time expr`,
// `:devices`, `:cache [clear]`, `:cuda k`, `:ptx k`, `:types k`, `:help [name]`), and help.
#pragma once

struct lua_State;

namespace luda::cli {

// A lua_CFunction of one argument, the REPL's picture of a value (a function of it giving
// text): pushes a table of functions: run(line), which runs a command line (a bad use
// prints what is wrong; an error of the code it runs is raised); help(value or name), the
// REPL's global `help`, and help_text(name), the API reference's entry (docs/api.md,
// embedded); complete(line) -> start, names; show(...) -> for each value {text =, html =}
// (an array's HTML table). Needs luda loaded (package.loaded.luda).
int push_commands(lua_State* L);

}  // namespace luda::cli

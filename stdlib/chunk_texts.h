// The text of every chunk a lua_State loaded, kept by chunk name, so that a kernel is
// compiled from exactly the text its Lua function was loaded from: never a file read again
// later, never a guess among chunks.
//
// A chunk's name is what lua_load was given and debug.getinfo(f, "S").source reports:
// "@path" for a file, "=name" for a name of the loader's choosing, or the text itself for
// load(text). The first two do not hold the text, so it is kept here when the chunk is
// loaded: by the `luda` command for everything it runs (scripts, stdin, -e, each REPL input,
// and what they load through require, dofile, loadfile and load), by luda.load in Lua, and
// by a C++ host through luda/lua.h's load_chunk, load_file and register_chunk. One name may be loaded with several texts (a
// host reloading "=config"): every distinct text is kept, and a function is looked up in
// each by its line span and parameter count (stdlib/function_source.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "luda/lua.h"

namespace luda {

namespace lua {

// What was kept under one chunk name. `read_late`: a file's text read after the file was
// loaded (a file that a stock lua5.4 loaded before luda was opened), which may differ
// from what was loaded.
struct ChunkText {
  std::string text;
  bool read_late = false;
};

// The texts kept under `chunkname`, oldest first.
std::vector<ChunkText> chunk_texts(lua_State* L, std::string_view chunkname);

// For a file chunk ("@path") that nothing kept when it was loaded: reads the file now and
// keeps its text as read late, so that it is never read again. False with `why` ("cannot
// open x.lua: No such file or directory") when it cannot be read.
bool keep_file_read_late(lua_State* L, std::string_view chunkname, std::string* why);

// At luaopen_luda: keeps, as read late, the text of every file chunk on the call stack
// (the script that requires luda, run by a stock lua5.4). Raises only on memory errors.
void keep_stack_chunks(lua_State* L);

// For the `luda` command: replaces load, loadfile, dofile and Lua's file searcher of
// require (package.searchers[2]) by versions that keep the text of what they load, with
// Lua's own results and messages. Raises only on memory errors.
void install_keeping_loaders(lua_State* L);

// luda.load(chunk [, chunkname [, mode [, env]]]): load, keeping the text.
int load_keeping_text(lua_State* L);

}  // namespace lua
}  // namespace luda

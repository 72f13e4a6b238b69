// Lua is C here: a Lua error longjmps. The lua_CFunctions below hold no C++ object; the
// functions a host calls (load_chunk, load_file, register_chunk) run every Lua call that
// can raise under lua_pcall, so that they return a status as Lua's own loaders do.
#include "stdlib/chunk_texts.h"

#include <lua.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace luda {
namespace lua {
namespace {

// registry["luda.chunks"][chunkname] = entry: entry[1..n] are the distinct texts, oldest
// first; entry[text] is true for a text kept when it was loaded, false for a file's text
// read late.
constexpr const char* kChunks = "luda.chunks";

// Only a text with the word `function` in it can define a function that becomes a kernel:
// the others (`return x + 1` loaded in a loop) are not worth keeping.
bool may_define_functions(const char* text, std::size_t n) { return memmem(text, n, "function", 8) != nullptr; }

// Keeps the text at index `text` under the chunk name at index `name`. Raises only on
// memory errors.
void keep_text(lua_State* L, int name, int text, bool read_late) {
  name = lua_absindex(L, name);
  text = lua_absindex(L, text);
  std::size_t n = 0;
  const char* s = lua_tolstring(L, text, &n);
  if (s == nullptr || (n > 0 && s[0] == LUA_SIGNATURE[0]) || !may_define_functions(s, n)) return;  // binary: no text
  luaL_checkstack(L, 4, "keeping a chunk's text");
  if (lua_getfield(L, LUA_REGISTRYINDEX, kChunks) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kChunks);
  }
  lua_pushvalue(L, name);
  if (lua_rawget(L, -2) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, name);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_pushvalue(L, text);
  int kept = lua_rawget(L, -2);
  lua_pop(L, 1);
  if (kept == LUA_TNIL) {
    lua_pushvalue(L, text);
    lua_rawseti(L, -2, static_cast<lua_Integer>(lua_rawlen(L, -2)) + 1);
  }
  if (kept == LUA_TNIL || !read_late) {  // a late text loaded again is kept as loaded
    lua_pushvalue(L, text);
    lua_pushboolean(L, !read_late);
    lua_rawset(L, -3);
  }
  lua_pop(L, 2);
}

struct TextToKeep {
  const char* chunkname;
  std::string_view text;
};

// (TextToKeep*): keep_text of its strings, under lua_pcall.
int keep_text_protected(lua_State* L) {
  const auto* t = static_cast<const TextToKeep*>(lua_touserdata(L, 1));
  lua_pushstring(L, t->chunkname);
  lua_pushlstring(L, t->text.data(), t->text.size());
  keep_text(L, -2, -1, false);
  return 0;
}

// Keeps `text` under `chunkname`; false (leaving nothing on the stack) on a memory error.
bool keep_text_from_host(lua_State* L, const char* chunkname, std::string_view text) {
  if (!lua_checkstack(L, 4)) return false;
  TextToKeep t{chunkname, text};
  lua_pushcfunction(L, keep_text_protected);
  lua_pushlightuserdata(L, &t);
  if (lua_pcall(L, 1, 0, 0) == LUA_OK) return true;
  lua_pop(L, 1);
  return false;
}

// ---- reading a file as luaL_loadfilex does ---------------------------------------------

struct FileLoad {
  FILE* file;  // nullptr: fopen failed with open_errno
  int open_errno;
  const char* filename;  // nullptr: stdin
  const char* mode;
  bool load;  // false: keep the text as read late, without loading it
};

// Pushes lauxlib's message for a failed `what` ("open", "read") of the chunk named at
// `name`, with errno's text when there is one.
void push_file_error(lua_State* L, const char* what, int name, int err) {
  const char* filename = lua_tostring(L, name) + 1;
  if (err != 0) lua_pushfstring(L, "cannot %s %s: %s", what, filename, std::strerror(err));
  else lua_pushfstring(L, "cannot %s %s", what, filename);
}

// (FileLoad*) -> status, then the loaded function (load) or nothing (not load), or the
// message. The text is what lua_load reads from the file in luaL_loadfilex: without a
// UTF-8 byte-order mark, and with a first line starting with '#' left empty (so that line
// numbers stay), or a binary chunk as is. Raises only on memory errors.
int read_file(lua_State* L) {
  const auto* req = static_cast<const FileLoad*>(lua_touserdata(L, 1));
  if (req->filename) lua_pushfstring(L, "@%s", req->filename);
  else lua_pushliteral(L, "=stdin");
  int name = lua_gettop(L);
  if (req->file == nullptr) {
    lua_pushinteger(L, LUA_ERRFILE);
    push_file_error(L, "open", name, req->open_errno);
    return 2;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  errno = 0;
  std::size_t got = 0;
  do {
    char* p = luaL_prepbuffer(&b);
    got = std::fread(p, 1, LUAL_BUFFERSIZE, req->file);
    luaL_addsize(&b, got);
  } while (got == LUAL_BUFFERSIZE);
  int err = errno;
  luaL_pushresult(&b);
  if (std::ferror(req->file)) {
    lua_pushinteger(L, LUA_ERRFILE);
    push_file_error(L, "read", name, err);
    return 2;
  }
  std::size_t n = 0;
  const char* s = lua_tolstring(L, -1, &n);
  std::size_t start = n >= 3 && std::memcmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  bool comment = start < n && s[start] == '#';
  if (comment) {
    const void* nl = std::memchr(s + start, '\n', n - start);
    start = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - s) + 1 : n;
  }
  if (comment && !(start < n && s[start] == LUA_SIGNATURE[0])) {
    lua_pushliteral(L, "\n");
    lua_pushlstring(L, s + start, n - start);
    lua_concat(L, 2);
  } else if (start > 0) {
    lua_pushlstring(L, s + start, n - start);
  }
  int text = lua_gettop(L);
  if (!req->load) {
    keep_text(L, name, text, true);
    lua_pushinteger(L, LUA_OK);
    lua_pushnil(L);
    return 2;
  }
  s = lua_tolstring(L, text, &n);
  int status = luaL_loadbufferx(L, s, n, lua_tostring(L, name), req->mode);
  if (status == LUA_OK) keep_text(L, name, text, false);
  lua_pushinteger(L, status);
  lua_insert(L, -2);
  return 2;
}

// Runs read_file for `req`; leaves its value (or the message of a memory error) and
// returns its status.
int run_read_file(lua_State* L, FileLoad* req) {
  lua_pushcfunction(L, read_file);
  lua_pushlightuserdata(L, req);
  int status = lua_pcall(L, 1, 2, 0);
  if (status != LUA_OK) return status;  // the message alone
  status = static_cast<int>(lua_tointeger(L, -2));
  lua_remove(L, -2);
  return status;
}

// ---- Lua's loaders, keeping the text -------------------------------------------------------

// lbaselib's load_aux: the function (with `env` as its first upvalue when given), or fail
// and the message.
int load_result(lua_State* L, int status, int env) {
  if (status == LUA_OK) {
    if (env != 0) {
      lua_pushvalue(L, env);
      if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    }
    return 1;
  }
  luaL_pushfail(L);
  lua_insert(L, -2);
  return 2;
}

// (reader) -> what the reader returns, joined, up to nil or "" (lbaselib's generic_reader
// reads the same pieces as lua_load asks for them).
int read_pieces(lua_State* L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (;;) {
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
    std::size_t n = 0;
    lua_tolstring(L, -1, &n);  // a number becomes its text, as lua_load reads it
    if (n == 0) {
      lua_pop(L, 1);
      break;
    }
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

int l_loadfile(lua_State* L) {
  const char* filename = luaL_optstring(L, 1, nullptr);
  const char* mode = luaL_optstring(L, 2, nullptr);
  int env = !lua_isnone(L, 3) ? 3 : 0;
  return load_result(L, load_file(L, filename, mode), env);
}

int dofile_continue(lua_State* L, int, lua_KContext) { return lua_gettop(L) - 1; }

int l_dofile(lua_State* L) {
  const char* filename = luaL_optstring(L, 1, nullptr);
  lua_settop(L, 1);
  if (load_file(L, filename, nullptr) != LUA_OK) return lua_error(L);
  lua_callk(L, 0, LUA_MULTRET, 0, dofile_continue);
  return dofile_continue(L, 0, 0);
}

// package.searchers[2], loadlib.c's searcher_Lua: upvalue 1 is the package table, 2 the
// package.searchpath it had when installed.
int searcher_lua(lua_State* L) {
  luaL_checkstring(L, 1);
  lua_getfield(L, lua_upvalueindex(1), "path");
  if (lua_tostring(L, -1) == nullptr) return luaL_error(L, "'package.%s' must be a string", "path");
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, -3);
  lua_call(L, 2, 2);  // the file, or nil and "no file '...'" for each place tried
  if (lua_isnil(L, -2)) return 1;
  lua_pop(L, 1);
  const char* filename = lua_tostring(L, -1);
  if (load_file(L, filename, nullptr) == LUA_OK) {
    lua_pushstring(L, filename);
    return 2;
  }
  return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", lua_tostring(L, 1), filename,
                    lua_tostring(L, -1));
}

}  // namespace

int load_keeping_text(lua_State* L) {
  std::size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);
  const char* mode = luaL_optstring(L, 3, "bt");
  int env = !lua_isnone(L, 4) ? 4 : 0;
  if (s == nullptr) {  // a reader function: the text is what it returns, joined
    luaL_optstring(L, 2, "=(load)");
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushcfunction(L, read_pieces);
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) return load_result(L, LUA_ERRRUN, env);
    lua_replace(L, 1);
    s = lua_tolstring(L, 1, &n);
    if (lua_isnoneornil(L, 2)) {
      lua_settop(L, 4);
      lua_pushliteral(L, "=(load)");
      lua_replace(L, 2);
    }
  }
  const char* chunkname = luaL_optstring(L, 2, s);
  int status = luaL_loadbufferx(L, s, n, chunkname, mode);
  if (status == LUA_OK && !lua_isnoneornil(L, 2)) keep_text(L, 2, 1, false);  // else the name is the text
  return load_result(L, status, env);
}

std::vector<ChunkText> chunk_texts(lua_State* L, std::string_view chunkname) {
  std::vector<ChunkText> out;
  if (!lua_checkstack(L, 4)) return out;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kChunks) == LUA_TTABLE) {
    lua_pushlstring(L, chunkname.data(), chunkname.size());
    if (lua_rawget(L, -2) == LUA_TTABLE) {
      auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
      for (lua_Integer i = 1; i <= n; ++i) {
        if (lua_rawgeti(L, -1, i) == LUA_TSTRING) {
          std::size_t len = 0;
          const char* s = lua_tolstring(L, -1, &len);
          lua_pushvalue(L, -1);
          bool kept = lua_rawget(L, -3) == LUA_TBOOLEAN && lua_toboolean(L, -1);
          lua_pop(L, 1);
          out.push_back(ChunkText{std::string(s, len), !kept});
        }
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return out;
}

bool keep_file_read_late(lua_State* L, std::string_view chunkname, std::string* why) {
  if (!lua_checkstack(L, 6)) {
    *why = "not enough memory (Lua stack)";
    return false;
  }
  std::string path(chunkname.substr(1));
  errno = 0;
  FILE* file = std::fopen(path.c_str(), "r");
  FileLoad req{file, errno, path.c_str(), nullptr, false};
  int status = run_read_file(L, &req);
  if (file) std::fclose(file);
  if (status != LUA_OK) {
    const char* message = lua_tostring(L, -1);
    *why = message ? message : "cannot read " + path;
  }
  lua_pop(L, 1);
  return status == LUA_OK;
}

void keep_stack_chunks(lua_State* L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "S", &ar) || ar.source == nullptr || ar.source[0] != '@') continue;
    std::string_view name(ar.source, ar.srclen);
    if (!chunk_texts(L, name).empty()) continue;
    std::string why;
    keep_file_read_late(L, name, &why);  // one that cannot be read says so when a kernel needs it
  }
}

void install_keeping_loaders(lua_State* L) {
  luaL_checkstack(L, 6, "installing luda's loaders");
  static const luaL_Reg loaders[] = {
      {"load", load_keeping_text},
      {"loadfile", l_loadfile},
      {"dofile", l_dofile},
      {nullptr, nullptr},
  };
  lua_pushglobaltable(L);
  luaL_setfuncs(L, loaders, 0);
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, LUA_LOADLIBNAME) == LUA_TTABLE) {
    if (lua_getfield(L, -1, "searchers") == LUA_TTABLE) {
      lua_pushvalue(L, -2);
      lua_getfield(L, -3, "searchpath");
      lua_pushcclosure(L, searcher_lua, 2);
      lua_rawseti(L, -2, 2);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

}  // namespace lua

int load_chunk(lua_State* L, std::string_view text, const char* chunkname, const char* mode) {
  int status = luaL_loadbufferx(L, text.data(), text.size(), chunkname, mode);
  // A memory error while keeping the text only loses the text: the chunk stays loaded.
  if (status == LUA_OK) lua::keep_text_from_host(L, chunkname, text);
  return status;
}

int load_file(lua_State* L, const char* filename, const char* mode) {
  if (!lua_checkstack(L, 6)) return LUA_ERRMEM;
  errno = 0;
  FILE* file = filename ? std::fopen(filename, "r") : stdin;
  lua::FileLoad req{file, errno, filename, mode, true};
  int status = lua::run_read_file(L, &req);
  if (filename && file) std::fclose(file);
  return status;
}

int register_chunk(lua_State* L, const char* chunkname, std::string_view text) {
  return lua::keep_text_from_host(L, chunkname, text) ? LUA_OK : LUA_ERRMEM;
}

}  // namespace luda

// luda::Engine (luda/luda.h): a lua_State with luda open, driven from C++. Lua raises errors
// with longjmp, so every Lua call that may raise runs in lua_pcall, inside a plain C
// function with no C++ object alive; the C++ side converts values before and after.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "dsl/diagnostics.h"
#include "dsl/find_function.h"
#include "luda/lua.h"
#include "stdlib/chunk_texts.h"
#include "stdlib/lua_support.h"

namespace luda {
namespace {

// The message handler of every protected call: the message with Lua's traceback after it.
int add_traceback(lua_State* L) {
  const char* message = lua_tostring(L, 1);
  if (!message) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) message = lua_tostring(L, -1);
    else message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, message, 1);
  return 1;
}

// Opens Lua's standard libraries and luda (the global `luda`) in a new state, with
// loaders that keep the text of what scripts load (require, dofile, loadfile, load).
int open_new_state(lua_State* L) {
  luaL_openlibs(L);
  luaL_requiref(L, "luda", luaopen_luda, 1);
  lua_pop(L, 1);
  lua::install_keeping_loaders(L);
  return 0;
}

// Opens luda in a host's state as the global `luda`, unless package.loaded has it.
int open_in_host_state(lua_State* L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "luda") != LUA_TNIL) return 0;
  luaL_requiref(L, "luda", luaopen_luda, 1);
  return 0;
}

int get_global(lua_State* L) {
  lua_getglobal(L, lua_tostring(L, 1));
  return 1;
}

int set_global(lua_State* L) {
  lua_settop(L, 2);
  lua_setglobal(L, lua_tostring(L, 1));
  return 0;
}

// Arguments: the path of a function ("step", "sim.step"), then its arguments. Calls it
// and returns what it returns.
int call_path(lua_State* L) {
  std::size_t n = 0;
  const char* path = lua_tolstring(L, 1, &n);
  const char* end = path + n;
  lua_pushglobaltable(L);
  for (const char* p = path;;) {
    const char* dot = static_cast<const char*>(std::memchr(p, '.', static_cast<std::size_t>(end - p)));
    const char* stop = dot ? dot : end;
    if (p != path && !lua_istable(L, -1)) {
      int value = lua_gettop(L);
      if (luaL_getmetafield(L, value, "__index") == LUA_TNIL) {
        const char* prefix = lua_pushlstring(L, path, static_cast<std::size_t>(p - 1 - path));
        return luaL_error(L, "no function '%s': '%s' is %s, not a table", path, prefix, luaL_typename(L, value));
      }
      lua_pop(L, 1);  // the __index field: indexing goes through it
    }
    lua_pushlstring(L, p, static_cast<std::size_t>(stop - p));
    lua_gettable(L, -2);
    lua_remove(L, -2);
    if (!dot) break;
    p = dot + 1;
  }
  if (!lua_isfunction(L, -1)) {
    int value = lua_gettop(L);
    if (luaL_getmetafield(L, value, "__call") == LUA_TNIL)
      return luaL_error(L, "no function '%s': it is %s", path, luaL_typename(L, value));
    lua_pop(L, 1);  // the __call field: calling goes through it
  }
  lua_replace(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Lua's luaO_chunkid: a chunk's name as messages show it.
std::string short_source(std::string_view name) {
  constexpr std::size_t kIdSize = 60 - 1;  // LUA_IDSIZE, less its terminating NUL
  if (name.starts_with("=")) return std::string(name.substr(1, kIdSize));
  if (name.starts_with("@")) {
    name.remove_prefix(1);
    if (name.size() <= kIdSize) return std::string(name);
    return "..." + std::string(name.substr(name.size() - (kIdSize - 3)));
  }
  std::string_view first = name.substr(0, name.find_first_of("\r\n"));
  constexpr std::size_t kRoom = kIdSize - 15;  // [string "..."] and its "..."
  bool cut = first.size() < name.size() || first.size() > kRoom;
  if (first.size() > kRoom) first = first.substr(0, kRoom);
  return "[string \"" + std::string(first) + (cut ? "...\"]" : "\"]");
}

// Splits Lua's "file:line: message" (the position luaL_where writes). `file` is the chunk
// as messages show it when known: the position is looked for after it first.
struct Position {
  std::string file;
  int line = 0;
  std::string message;
};
Position split_position(std::string_view text, std::string_view file = {}) {
  auto line_at = [&](std::size_t colon) -> Position {  // text[colon] == ':'
    std::size_t p = colon + 1, q = p;
    while (q < text.size() && text[q] >= '0' && text[q] <= '9' && q - p < 9) ++q;
    if (q == p || q + 1 >= text.size() || text[q] != ':' || text[q + 1] != ' ') return {};
    return {std::string(text.substr(0, colon)), std::stoi(std::string(text.substr(p, q - p))),
            std::string(text.substr(q + 2))};
  };
  if (!file.empty() && text.starts_with(file) && text.size() > file.size() && text[file.size()] == ':')
    if (Position at = line_at(file.size()); at.line > 0) return at;
  for (std::size_t colon = text.find(':'); colon != std::string_view::npos; colon = text.find(':', colon + 1))
    if (Position at = line_at(colon); at.line > 0) return at;
  return {"", 0, std::string(text)};
}

// The error a failed protected call left on top of the stack (the message handler's
// text), as the exception to throw: the kernel-language error a luda call raised, else a
// ScriptError at Lua's position, with the luda error behind it as its cause.
std::exception_ptr script_error(lua_State* L) {
  std::size_t n = 0;
  const char* s = lua_tolstring(L, -1, &n);
  std::string full = s ? std::string(s, n) : std::string("(error object is not a string)");
  std::string message = full, traceback;
  if (std::size_t at = full.find("\nstack traceback:"); at != std::string::npos) {
    message = full.substr(0, at);
    traceback = full.substr(at + 1);
  }
  std::exception_ptr cause;
  const lua::RaisedError& raised = lua::last_raised_error();
  if (raised.exception && raised.message == message) cause = raised.exception;
  if (cause) {
    try {
      std::rethrow_exception(cause);
    } catch (const SourceError&) {
      return cause;
    } catch (...) {
    }
  }
  Position at = split_position(message);
  return std::make_exception_ptr(ScriptError(full, at.file, at.line, at.message, traceback, cause));
}

// A chunk that did not load: Lua's syntax error as a SourceError, with the column that
// luda's own parser of the same text finds when it agrees on the line.
std::exception_ptr load_error(lua_State* L, int status, std::string_view text, std::string_view chunkname) {
  std::size_t n = 0;
  const char* s = lua_tolstring(L, -1, &n);
  std::string message = s ? std::string(s, n) : std::string("(error object is not a string)");
  if (status == LUA_ERRMEM) return std::make_exception_ptr(Error("not enough memory"));
  if (status != LUA_ERRSYNTAX) {  // a file that cannot be read (LUA_ERRFILE)
    Position at = split_position(message);
    return std::make_exception_ptr(ScriptError(message, at.file, at.line, at.message, ""));
  }
  std::string file = short_source(chunkname);
  Position at = split_position(message, file);
  try {
    dsl::parsed_chunk(dsl::Chunk{file, std::string(text)});
  } catch (const SourceError& e) {
    if (e.line() == at.line) return std::current_exception();
  } catch (...) {
  }
  return std::make_exception_ptr(
      SourceError(message, at.file.empty() ? file : at.file, at.line, 0, "syntax error", at.message));
}

}  // namespace

Engine::Engine() : L_(luaL_newstate()), owned_(true) {
  if (!L_) throw Error("luda::Engine: not enough memory for a lua_State");
  lua_pushcfunction(L_, add_traceback);
  lua_pushcfunction(L_, open_new_state);
  if (lua_pcall(L_, 0, 0, -2) != LUA_OK) {
    std::exception_ptr e = script_error(L_);
    lua_close(L_);
    std::rethrow_exception(e);
  }
  lua_pop(L_, 1);
}

Engine::Engine(lua_State* L) : L_(L), owned_(false) {
  if (!L_) throw Error("luda::Engine: the lua_State is null; pass the host's state, or use luda::Engine()");
  int base = lua_gettop(L_);
  lua_pushcfunction(L_, add_traceback);
  lua_pushcfunction(L_, open_in_host_state);
  if (lua_pcall(L_, 0, 0, base + 1) != LUA_OK) {
    std::exception_ptr e = script_error(L_);
    lua_settop(L_, base);
    std::rethrow_exception(e);
  }
  lua_settop(L_, base);
}

Engine::~Engine() {
  if (owned_ && L_) lua_close(L_);
}

Engine::Engine(Engine&& o) noexcept : L_(o.L_), owned_(o.owned_) {
  o.L_ = nullptr;
  o.owned_ = false;
}

Engine& Engine::operator=(Engine&& o) noexcept {
  if (this != &o) {
    if (owned_ && L_) lua_close(L_);
    L_ = o.L_;
    owned_ = o.owned_;
    o.L_ = nullptr;
    o.owned_ = false;
  }
  return *this;
}

lua_State* Engine::state() const { return L_; }

namespace {

lua_State* checked(lua_State* L) {
  if (!L) throw Error("luda::Engine: this engine was moved from; use the engine it was moved to");
  return L;
}

// Calls the function below `nargs` arguments on top of the stack, above the message handler
// at `base` + 1, and returns its results; the stack is back at `base` after.
std::vector<Value> call_collect(lua_State* L, int base, int nargs) {
  if (lua_pcall(L, nargs, LUA_MULTRET, base + 1) != LUA_OK) {
    std::exception_ptr e = script_error(L);
    lua_settop(L, base);
    std::rethrow_exception(e);
  }
  std::vector<Value> results;
  try {
    for (int i = base + 2; i <= lua_gettop(L); ++i) results.push_back(to_value(L, i));
  } catch (...) {
    lua_settop(L, base);
    throw;
  }
  lua_settop(L, base);
  return results;
}

// Pushes the message handler and `f`, checking the stack has room for `more` values after.
int begin_call(lua_State* L, lua_CFunction f, std::size_t more) {
  int base = lua_gettop(L);
  if (!lua_checkstack(L, static_cast<int>(more) + 4)) throw Error("luda::Engine: too many values for the Lua stack");
  lua_pushcfunction(L, add_traceback);
  if (f) lua_pushcfunction(L, f);
  return base;
}

}  // namespace

std::vector<Value> Engine::run(std::string_view code, std::string_view chunkname) {
  lua_State* L = checked(L_);
  int base = begin_call(L, nullptr, 0);
  std::string name(chunkname);
  int status = load_chunk(L, code, name.c_str());
  if (status != LUA_OK) {
    std::exception_ptr e = load_error(L, status, code, name);
    lua_settop(L, base);
    std::rethrow_exception(e);
  }
  return call_collect(L, base, 0);
}

std::vector<Value> Engine::run_file(const std::string& path) {
  lua_State* L = checked(L_);
  int base = begin_call(L, nullptr, 0);
  int status = load_file(L, path.c_str());
  if (status != LUA_OK) {
    std::exception_ptr e;
    if (status == LUA_ERRSYNTAX) {  // the text, for the column of the error
      std::ifstream in(path, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      e = load_error(L, status, text, "@" + path);
    } else {
      e = load_error(L, status, {}, "@" + path);
    }
    lua_settop(L, base);
    std::rethrow_exception(e);
  }
  return call_collect(L, base, 0);
}

void Engine::set(std::string_view name, const Value& value) {
  lua_State* L = checked(L_);
  int base = begin_call(L, set_global, 2);
  lua_pushlstring(L, name.data(), name.size());
  try {
    push_value(L, value);
  } catch (...) {
    lua_settop(L, base);
    throw;
  }
  call_collect(L, base, 2);
}

Value Engine::get(std::string_view name) const {
  lua_State* L = checked(L_);
  int base = begin_call(L, get_global, 1);
  lua_pushlstring(L, name.data(), name.size());
  std::vector<Value> results = call_collect(L, base, 1);
  return results.empty() ? Value() : results[0];
}

std::vector<Value> Engine::call(std::string_view function, const std::vector<Value>& args) {
  lua_State* L = checked(L_);
  int base = begin_call(L, call_path, args.size() + 1);
  lua_pushlstring(L, function.data(), function.size());
  try {
    for (const Value& v : args) push_value(L, v);
  } catch (...) {
    lua_settop(L, base);
    throw;
  }
  return call_collect(L, base, static_cast<int>(args.size()) + 1);
}

}  // namespace luda

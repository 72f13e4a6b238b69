#include "cli/session.h"

#include <lua.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "cli/commands.h"
#include "runtime/interrupt.h"
#include "stdlib/bindings.h"
#include "stdlib/chunk_texts.h"
#include "stdlib/module.h"

namespace luda::cli {
namespace {

// ---- interrupting running Lua code (lua.c's laction/lstop) --------------------------

lua_State* volatile g_running = nullptr;  // the state that a SIGINT stops

// Runs inside the Lua code that was running: raises there, a plain Lua error.
void stop_hook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted!");
}

// lua_sethook is safe to call from a signal handler, and so is request_interrupt, which
// stops a running cpu kernel or a wait for a GPU with an error of its own
// (runtime/interrupt.h). The hook counts instructions only (lua.c also hooks calls): a
// kernel's error then reaches the message handler, a C function, without the hook
// replacing it, and Lua code stops at its next instruction. A second Ctrl-C kills the
// process as usual.
bool g_second_interrupt_kills = true;

void on_interrupt(int sig) {
  if (g_second_interrupt_kills) std::signal(sig, SIG_DFL);
  luda::request_interrupt();
  lua_sethook(g_running, stop_hook, LUA_MASKCOUNT, 1);
}

// ---- protected functions: they hold no C++ object, so a Lua error may cross them -------

// ---- top-level locals of a REPL input outlive it ---------------------------------------
// Each input is a chunk of its own, so a `local` at its top level would end with it (as in
// lua.c). The REPL keeps them: when its chunk returns, or raises, the locals active in it
// become globals of the same names (the value each holds then), which later inputs read.
// A closure made in the input keeps the local itself, not the global.

constexpr char kChunkKey[] = "luda.repl.chunk";  // registry: the input's chunk while it runs

// Whether the function running at `ar` is the REPL's chunk.
bool is_repl_chunk(lua_State* L, lua_Debug* ar) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kChunkKey) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return false;
  }
  if (!lua_getinfo(L, "f", ar)) {
    lua_pop(L, 1);
    return false;
  }
  bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

// The locals active at `ar` as globals; Lua's own temporaries ("(for state)") stay.
void keep_locals(lua_State* L, lua_Debug* ar) {
  for (int i = 1;; ++i) {
    const char* name = lua_getlocal(L, ar, i);
    if (name == nullptr) break;
    if (name[0] == '(') {
      lua_pop(L, 1);
      continue;
    }
    lua_setglobal(L, name);
  }
}

// A notebook cell's output flush (Session::set_output_flush), called by the hook below
// (every 1000 instructions) at most once a period; null outside a cell.
struct OutputFlush {
  const std::function<void()>* flush = nullptr;
  std::chrono::milliseconds period{0};
  std::chrono::steady_clock::time_point last;
};
OutputFlush g_output_flush;

// The flush for the time of one cell, when one is set.
class CellOutputFlush {
 public:
  CellOutputFlush(const std::function<void()>& flush, std::chrono::milliseconds period) {
    if (flush) g_output_flush = {&flush, period, std::chrono::steady_clock::now()};
  }
  ~CellOutputFlush() { g_output_flush.flush = nullptr; }
  CellOutputFlush(const CellOutputFlush&) = delete;
  CellOutputFlush& operator=(const CellOutputFlush&) = delete;
};

// The hook while an input or a cell runs (Lua has one hook a state): returns keep the
// chunk's locals; counts, in a cell with a flush, flush its output.
void locals_hook(lua_State* L, lua_Debug* ar) {
  if (ar->event == LUA_HOOKRET && is_repl_chunk(L, ar)) {
    keep_locals(L, ar);
  } else if (ar->event == LUA_HOOKCOUNT && g_output_flush.flush) {
    auto now = std::chrono::steady_clock::now();
    if (now - g_output_flush.last < g_output_flush.period) return;
    g_output_flush.last = now;
    (*g_output_flush.flush)();
  }
}

// On an error: the locals of the REPL's chunk, if it is on the stack, as they are now.
void keep_locals_on_error(lua_State* L) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); ++level) {
    if (is_repl_chunk(L, &ar)) {
      keep_locals(L, &ar);
      return;
    }
  }
}

// lua.c's msghandler: the message plus a traceback; a non-string error object is shown
// through its __tostring, else by its type. (A REPL input's locals are kept first.)
int message_handler(lua_State* L) {
  keep_locals_on_error(L);
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

struct OpenRequest {
  const Options* options;
  int argc;
  char** argv;
};

// arg[0] is the script, arg[1..] its arguments, the interpreter and its options at
// negative indices; with no script, arg[0] is the interpreter (lua.c's createargtable).
void create_arg_table(lua_State* L, char** argv, int argc, int script) {
  if (script == argc) script = 0;
  lua_createtable(L, argc - (script + 1), script + 1);
  for (int i = 0; i < argc; ++i) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

int open_state(lua_State* L) {
  const auto* req = static_cast<const OpenRequest*>(lua_touserdata(L, 1));
  luaL_checkversion(L);
  if (req->options->ignore_env) {  // read by package's setpath
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  luda::lua::install_keeping_loaders(L);      // what the script loads keeps its text, for kernels
  luaL_requiref(L, "luda", luaopen_luda, 1);  // package.loaded.luda and the global
  lua_pop(L, 1);
  create_arg_table(L, req->argv, req->argc, req->options->script);
  if (req->options->warnings) lua_warning(L, "@on", 0);
  lua_gc(L, LUA_GCGEN, 0, 0);  // as lua.c: generational mode suits scripts
  return 0;
}

struct RequireRequest {
  const char* global;
  const char* module;
};

int require_into_global(lua_State* L) {
  const auto* req = static_cast<const RequireRequest*>(lua_touserdata(L, 1));
  lua_getglobal(L, "require");
  lua_pushstring(L, req->module);
  lua_call(L, 1, 1);
  lua_setglobal(L, req->global);
  return 0;
}

struct ScriptRequest {
  const char* path;  // nullptr: stdin
  bool with_args;
};

// Leaves the compiled script and its arguments (arg[1..#arg]); a load error is raised as
// is, without a traceback, as lua.c reports it. The script's text is kept for kernels.
int load_script(lua_State* L) {
  const auto* req = static_cast<const ScriptRequest*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  if (luda::load_file(L, req->path) != LUA_OK) return lua_error(L);
  if (!req->with_args) return 1;
  if (lua_getglobal(L, "arg") != LUA_TTABLE) return luaL_error(L, "'arg' is not a table");
  lua_Integer n = luaL_len(L, -1);
  luaL_checkstack(L, static_cast<int>(n) + 3, "too many arguments to script");
  for (lua_Integer i = 1; i <= n; ++i) lua_rawgeti(L, 2, i);
  lua_remove(L, 2);
  return static_cast<int>(n) + 1;
}

// The REPL's picture of a value: what tostring gives, but a table with neither __tostring
// nor __name is written as a constructor ({1, 2, 3}, {dtype = "float32", n = 4}): its
// list part, then its other keys in sorted order; nested tables to depth 3, at most 40
// entries each, a table met again as {...}.
constexpr char kPrettyLua[] = R"lua(
local function key_text(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  if type(k) == "string" then return ("[%q]"):format(k) end
  return "[" .. tostring(k) .. "]"
end
local function plain(v)
  local mt = getmetatable(v)
  return type(v) == "table" and not (type(mt) == "table" and (mt.__tostring or mt.__name))
end
local function pretty(v, depth, seen)
  if type(v) == "string" then return depth == 0 and v or ("%q"):format(v) end
  if not plain(v) then return tostring(v) end
  if seen[v] or depth >= 3 then return "{...}" end
  seen[v] = true
  local parts, n = {}, #v
  for i = 1, n do
    if #parts == 40 then parts[#parts + 1] = "..." break end
    parts[#parts + 1] = pretty(v[i], depth + 1, seen)
  end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then return a < b end
    return type(a) < type(b)
  end)
  for _, k in ipairs(keys) do
    if #parts >= 40 then parts[#parts + 1] = "..." break end
    parts[#parts + 1] = key_text(k) .. " = " .. pretty(v[k], depth + 1, seen)
  end
  seen[v] = nil
  return "{" .. table.concat(parts, ", ") .. "}"
end
return function(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = pretty((select(i, ...)), 0, {}) end
  return table.concat(out, "\t")
end
)lua";
constexpr char kPrettyKey[] = "luda.repl.pretty";
constexpr char kCommandsKey[] = "luda.repl.commands";

// Pushes the function of kPrettyLua (made once; it may raise).
void push_pretty(lua_State* L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kPrettyKey) == LUA_TFUNCTION) return;
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, kPrettyLua, sizeof(kPrettyLua) - 1, "=luda.repl") != LUA_OK) lua_error(L);
  lua_call(L, 0, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kPrettyKey);
}

// Prints its arguments tab-separated, through the REPL's picture of each (kPrettyLua).
int print_values(lua_State* L) {
  int n = lua_gettop(L);
  push_pretty(L);
  lua_insert(L, 1);
  lua_call(L, n, 1);
  size_t len = 0;
  const char* s = lua_tolstring(L, -1, &len);
  std::fwrite(s, 1, len, stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  return 0;
}

constexpr char kEofMark[] = "<eof>";

// `_`, the last input's first value (IPython's), set raw: a metatable a script gave the
// globals (strict mode) cannot raise here, outside any protected call.
void set_last_value(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  lua_pushglobaltable(L);
  lua_pushliteral(L, "_");
  lua_pushvalue(L, idx);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

// The commands' table (cli/commands.h), given the REPL's picture of a value.
int make_commands(lua_State* L) {
  lua_pushcfunction(L, push_commands);
  push_pretty(L);
  lua_call(L, 1, 1);
  return 1;
}

}  // namespace

Session::Session() : L_(luaL_newstate()) {}

void Session::keep_running_on_interrupts() { g_second_interrupt_kills = false; }

Session::~Session() {
  if (L_) lua_close(L_);
}

int Session::call(int nargs, int nresults) {
  int base = lua_gettop(L_) - nargs;  // the function's index
  lua_pushcfunction(L_, message_handler);
  lua_insert(L_, base);
  g_running = L_;
  struct sigaction action {};
  struct sigaction previous {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous);
  int status = lua_pcall(L_, nargs, nresults, base);
  sigaction(SIGINT, &previous, nullptr);
  if (lua_gethook(L_) == stop_hook) lua_sethook(L_, nullptr, 0, 0);  // a late Ctrl-C
  luda::clear_interrupt();                                           // one that no kernel met stops nothing later
  lua_remove(L_, base);
  return status;
}

bool Session::report(int status, const char* prefix) {
  if (status == LUA_OK) return true;
  std::fflush(stdout);  // keep the order of output and errors when both go to one pipe
  const char* msg = lua_type(L_, -1) == LUA_TSTRING ? lua_tostring(L_, -1) : nullptr;
  if (msg) std::fprintf(stderr, "%s%s\n", prefix ? prefix : "", msg);
  else std::fprintf(stderr, "%s(error object is a %s value)\n", prefix ? prefix : "", luaL_typename(L_, -1));
  std::fflush(stderr);
  lua_pop(L_, 1);
  return false;
}

bool Session::open(const Options& options, int argc, char** argv) {
  OpenRequest req{&options, argc, argv};
  lua_pushcfunction(L_, open_state);
  lua_pushlightuserdata(L_, &req);
  return report(call(1, 0), "luda: ");
}

bool Session::execute(const std::string& code) {
  std::string name = "=(command line " + std::to_string(++executed_) + ")";
  int status = luda::load_chunk(L_, code, name.c_str());
  if (status == LUA_OK) status = call(0, 0);
  return report(status, "luda: ");
}

bool Session::require_library(const std::string& spec) {
  std::string global = spec, module = spec;
  if (auto eq = spec.find('='); eq != std::string::npos) {
    global = spec.substr(0, eq);
    module = spec.substr(eq + 1);
  } else if (auto dash = spec.find('-'); dash != std::string::npos) {
    global = spec.substr(0, dash);  // lua.c: "-l mod-v2" loads mod-v2 into the global mod
  }
  RequireRequest req{global.c_str(), module.c_str()};
  lua_pushcfunction(L_, require_into_global);
  lua_pushlightuserdata(L_, &req);
  return report(call(1, 0), "luda: ");
}

bool Session::run_script(const Options& options, char** argv) {
  ScriptRequest req{options.script_from_stdin ? nullptr : argv[options.script], true};
  int top = lua_gettop(L_);
  lua_pushcfunction(L_, load_script);
  lua_pushlightuserdata(L_, &req);
  int status = lua_pcall(L_, 1, LUA_MULTRET, 0);
  if (status == LUA_OK) status = call(lua_gettop(L_) - top - 1, 0);
  return report(status, "luda: ");
}

bool Session::run_stdin() {
  ScriptRequest req{nullptr, false};
  lua_pushcfunction(L_, load_script);
  lua_pushlightuserdata(L_, &req);
  int status = lua_pcall(L_, 1, 1, 0);
  if (status == LUA_OK) status = call(0, 0);
  return report(status, "luda: ");
}

void Session::begin_input() { input_name_ = "=stdin[" + std::to_string(++inputs_) + "]"; }

Session::Load Session::load(std::string_view code) {
  if (inputs_ == 0) begin_input();
  int status = luda::load_chunk(L_, code, input_name_.c_str());
  if (status == LUA_OK) return Load::Ok;
  if (status == LUA_ERRSYNTAX) {
    size_t len = 0;
    const char* msg = lua_tolstring(L_, -1, &len);
    constexpr size_t mark = sizeof(kEofMark) - 1;
    if (msg && len >= mark && std::strcmp(msg + len - mark, kEofMark) == 0) return Load::Incomplete;
  }
  return Load::Failed;
}

void Session::discard_message() { lua_pop(L_, 1); }

void Session::report_message() { report(LUA_ERRSYNTAX, nullptr); }

int Session::call_keeping_locals() {
  lua_pushvalue(L_, -1);
  lua_setfield(L_, LUA_REGISTRYINDEX, kChunkKey);
  if (g_output_flush.flush) lua_sethook(L_, locals_hook, LUA_MASKRET | LUA_MASKCOUNT, 1000);
  else lua_sethook(L_, locals_hook, LUA_MASKRET, 0);
  int status = call(0, LUA_MULTRET);
  if (lua_gethook(L_) == locals_hook) lua_sethook(L_, nullptr, 0, 0);
  lua_pushnil(L_);
  lua_setfield(L_, LUA_REGISTRYINDEX, kChunkKey);
  return status;
}

void Session::call_and_print() {
  int base = lua_gettop(L_) - 1;  // below the chunk
  int status = call_keeping_locals();
  if (status == LUA_OK) {
    int n = lua_gettop(L_) - base;
    if (n > 0 && !lua_isnil(L_, base + 1)) set_last_value(L_, base + 1);
    if (n > 0 && lua_checkstack(L_, LUA_MINSTACK)) {
      lua_pushcfunction(L_, print_values);
      lua_insert(L_, base + 1);
      status = call(n, 0);
    } else if (n > 0) {
      lua_settop(L_, base);
      std::fflush(stdout);
      std::fputs("too many results to print\n", stderr);
    }
  }
  report(status, nullptr);
  lua_settop(L_, base);
}

// Pushes the commands' table (cli/commands.h), made once; false after reporting an error.
bool Session::push_commands_table() {
  if (lua_getfield(L_, LUA_REGISTRYINDEX, kCommandsKey) == LUA_TTABLE) return true;
  lua_pop(L_, 1);
  lua_pushcfunction(L_, make_commands);
  if (!report(call(0, 1), nullptr)) return false;
  lua_pushvalue(L_, -1);
  lua_setfield(L_, LUA_REGISTRYINDEX, kCommandsKey);
  return true;
}

void Session::prepare_repl() {
  int base = lua_gettop(L_);
  if (lua_getglobal(L_, "help") == LUA_TNIL && push_commands_table()) {
    lua_getfield(L_, -1, "help");
    lua_setglobal(L_, "help");
  }
  lua_settop(L_, base);
}

std::vector<std::string> Session::complete(std::string_view line, std::size_t* start) {
  std::vector<std::string> out;
  *start = line.size();
  int base = lua_gettop(L_);
  if (push_commands_table()) {
    lua_getfield(L_, -1, "complete");
    lua_pushlstring(L_, line.data(), line.size());
    if (call(1, 2) == LUA_OK && lua_istable(L_, -1)) {
      *start = static_cast<std::size_t>(lua_tointeger(L_, -2) - 1);
      lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L_, -1));
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L_, -1, i);
        std::size_t len = 0;
        if (const char* s = lua_tolstring(L_, -1, &len)) out.emplace_back(s, len);
        lua_pop(L_, 1);
      }
    }
  }
  lua_settop(L_, base);
  return out;
}

namespace {
// The display sink luda.display calls (upvalue 1: the Session's DisplaySink): the bundle's
// string fields, copied out before the callback runs (which may not raise into Lua).
// Calls the sink with the bundle at index 1; false after pushing the message of what it threw.
bool deliver(lua_State* L, Session::DisplaySink& sink) noexcept {
  try {
    std::vector<std::pair<std::string, std::string>> bundle;
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {  // a plain table of strings (luda.display's): nothing raises
      if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
        std::size_t len = 0;
        const char* v = lua_tolstring(L, -1, &len);
        bundle.emplace_back(lua_tostring(L, -2), std::string(v, len));
      }
      lua_pop(L, 1);
    }
    sink(bundle);
    return true;
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());
  } catch (...) {
    lua_pushliteral(L, "the notebook's display failed");
  }
  return false;
}

int call_display_sink(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  auto* sink = static_cast<Session::DisplaySink*>(lua_touserdata(L, lua_upvalueindex(1)));
  if (!deliver(L, *sink)) return lua_error(L);
  return 0;
}
}  // namespace

void Session::set_output_flush(std::function<void()> flush, std::chrono::milliseconds period) {
  output_flush_ = std::move(flush);
  flush_period_ = period;
}

void Session::set_display_sink(DisplaySink sink) {
  display_sink_ = std::move(sink);
  if (display_sink_) {
    lua_pushlightuserdata(L_, &display_sink_);
    lua_pushcclosure(L_, call_display_sink, 1);
  } else {
    lua_pushnil(L_);
  }
  lua_setfield(L_, LUA_REGISTRYINDEX, luda::lua::kDisplaySinkKey);
}

Session::Load Session::check(std::string_view code) {
  int base = lua_gettop(L_);
  Load status = load(code);
  lua_settop(L_, base);
  if (status != Load::Ok) {  // an expression alone ("x +" is not one) is whole too
    std::string expr = "return " + std::string(code) + ";";
    if (load(expr) == Load::Ok) status = Load::Ok;
    lua_settop(L_, base);
  }
  return status;
}

std::string Session::help_at(std::string_view code, std::size_t cursor) {
  cursor = std::min(cursor, code.size());
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
  };
  std::size_t from = cursor, to = cursor;
  while (from > 0 && name_char(code[from - 1])) --from;
  while (to < code.size() && name_char(code[to])) ++to;
  std::string name(code.substr(from, to - from));
  while (!name.empty() && (name.back() == '.' || name.back() == ':')) name.pop_back();
  std::string text;
  if (name.empty()) return text;
  int base = lua_gettop(L_);
  if (push_commands_table()) {
    lua_getfield(L_, -1, "help_text");
    lua_pushlstring(L_, name.data(), name.size());
    if (call(1, 1) == LUA_OK && lua_type(L_, -1) == LUA_TSTRING) {
      std::size_t len = 0;
      const char* s = lua_tolstring(L_, -1, &len);
      if (std::string_view(s, len).find("no entry") != 0) text.assign(s, len);
    }
  }
  lua_settop(L_, base);
  return text;
}

namespace {
// Splits a message handler's "message\nstack traceback:\n..." into the two.
void split_error(std::string_view full, Session::CellResult* r) {
  r->ok = false;
  std::size_t at = full.find("\nstack traceback:");
  r->error = std::string(full.substr(0, at));
  if (at != std::string_view::npos) r->traceback = std::string(full.substr(at + 1));
}
}  // namespace

Session::CellResult Session::run_cell(std::string_view code) {
  CellResult r;
  input_name_ = "=cell[" + std::to_string(++inputs_) + "]";
  int base = lua_gettop(L_);
  CellOutputFlush flushing(output_flush_, flush_period_);
  std::size_t first = code.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (code[first] == ':' || code[first] == '?')) {
    run_command_cell(code, &r);
    lua_settop(L_, base);
    return r;
  }
  // The chunks to run: the whole as an expression; else the whole as statements, or its
  // lines before the last as statements and the last as an expression.
  std::string whole(code);
  std::string head, last;
  bool split = false;
  if (load("return " + whole + ";") != Load::Ok) {
    lua_settop(L_, base);
    std::size_t end = whole.find_last_not_of(" \t\r\n");
    std::size_t nl = end == std::string::npos ? std::string::npos : whole.rfind('\n', end);
    if (nl != std::string::npos) {
      head = whole.substr(0, nl);
      last = whole.substr(nl + 1);
      split = load("return " + last + ";") == Load::Ok;
      lua_settop(L_, base);
      if (split) {
        split = load(head) == Load::Ok;
        lua_settop(L_, base);
      }
    }
    Load status = load(split ? head : whole);
    if (status != Load::Ok) {
      const char* msg = lua_tostring(L_, -1);
      split_error(msg ? msg : "syntax error", &r);
      lua_settop(L_, base);
      return r;
    }
  }
  // The last line's chunk keeps its line number: as many newlines before it as lines before.
  std::string last_chunk;
  if (split) {
    last_chunk.assign(static_cast<std::size_t>(std::count(head.begin(), head.end(), '\n') + 1), '\n');
    last_chunk += "return " + last + ";";
  }
  for (int step = 0; step < (split ? 2 : 1); ++step) {
    if (step == 1 && load(last_chunk) != Load::Ok) break;
    int status = call_keeping_locals();
    if (status != LUA_OK) {
      const char* msg = lua_tostring(L_, -1);
      split_error(msg ? msg : "(error object is not a string)", &r);
      lua_settop(L_, base);
      return r;
    }
    if (split && step == 0) {
      lua_settop(L_, base);
      continue;
    }
    int n = lua_gettop(L_) - base;
    if (n > 0 && !lua_isnil(L_, base + 1)) set_last_value(L_, base + 1);
    if (n > 0 && lua_checkstack(L_, LUA_MINSTACK) && push_commands_table()) {
      lua_getfield(L_, -1, "show");
      lua_remove(L_, -2);
      lua_insert(L_, base + 1);
      if (call(n, 1) == LUA_OK && lua_istable(L_, -1)) {
        lua_Integer count = static_cast<lua_Integer>(lua_rawlen(L_, -1));
        for (lua_Integer i = 1; i <= count; ++i) {
          lua_rawgeti(L_, -1, i);
          Shown shown;
          if (lua_getfield(L_, -1, "text") == LUA_TSTRING) shown.text = lua_tostring(L_, -1);
          lua_pop(L_, 1);
          if (lua_getfield(L_, -1, "html") == LUA_TSTRING) shown.html = lua_tostring(L_, -1);
          lua_pop(L_, 2);
          r.values.push_back(std::move(shown));
        }
      } else if (const char* msg = lua_tostring(L_, -1)) {
        split_error(msg, &r);
      }
    }
  }
  lua_settop(L_, base);
  return r;
}

void Session::run_command_cell(std::string_view code, CellResult* r) {
  int line_number = 0;
  for (std::size_t at = 0; at <= code.size();) {
    std::size_t end = code.find('\n', at);
    if (end == std::string_view::npos) end = code.size();
    std::string_view line = code.substr(at, end - at);
    at = end + 1;
    ++line_number;
    std::size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string_view::npos) continue;
    line = line.substr(b, e - b + 1);
    std::string command(line);
    if (line[0] == '?') command = ":help " + std::string(line.substr(1));
    else if (line[0] != ':') {
      r->ok = false;
      r->error = fmt::format(
          "cell[{}]:{}: a cell that starts with a command (':time expr', '?name') holds only commands, one a line; "
          "put Lua code in a cell of its own",
          inputs_, line_number);
      return;
    }
    int status = call_command(command, true);
    if (status != LUA_OK) {
      const char* msg = status == -1 ? "the REPL's commands could not be loaded" : lua_tostring(L_, -1);
      split_error(msg ? msg : "(error object is not a string)", r);
      return;
    }
  }
}

int Session::call_command(std::string_view line, bool raises) {
  if (!push_commands_table()) return -1;
  lua_getfield(L_, -1, "run");
  lua_remove(L_, -2);
  lua_pushlstring(L_, line.data(), line.size());
  lua_pushboolean(L_, raises);
  int status = call(2, 0);
  std::fflush(stdout);
  return status;
}

void Session::run_command(std::string_view line) {
  int base = lua_gettop(L_);
  int status = call_command(line, false);
  if (status != -1) report(status, nullptr);
  lua_settop(L_, base);
}

}  // namespace luda::cli

#include "stdlib/function_source.h"

#include <sys/stat.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "runtime/error.h"

namespace luda::lua {
namespace {

// registry["luda.chunks"]: [lightuserdata(id of a chunk's _ENV upvalue)] = its text, and
// [chunk function] = true (keeping the chunk, hence that upvalue and its id, alive).
constexpr const char* kChunks = "luda.chunks";
constexpr const char* kNewest = "newest";  // chunks.newest: the text recorded last

constexpr const char* kFix = "pass the source text instead: luda.cuda.jit([[ function(x, out) ... end ]])";

// A file's text, read once and again when its size or mtime changes.
std::shared_ptr<const dsl::Chunk> file_chunk(const std::string& path, const std::string& name, std::string* why) {
  struct Entry {
    long long size = -1;
    long long mtime_ns = -1;
    std::shared_ptr<const dsl::Chunk> chunk;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> files;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *why = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return nullptr;
  }
  long long mtime = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  std::lock_guard lock(mutex);
  Entry& e = files[path];
  if (e.chunk && e.size == st.st_size && e.mtime_ns == mtime && e.chunk->name == name) return e.chunk;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) {
    *why = fmt::format("cannot read {}", path);
    return nullptr;
  }
  e.size = st.st_size;
  e.mtime_ns = mtime;
  e.chunk = std::make_shared<const dsl::Chunk>(dsl::Chunk{name, std::move(text).str()});
  return e.chunk;
}

std::size_t find_word(std::string_view line, std::string_view word);
std::string_view line_of(std::string_view text, int line);

int count_lines(std::string_view text) {
  int n = 1;
  for (char c : text) n += c == '\n';
  return n;
}

// The text remember_chunk recorded for the chunk that defined the function at idx, found
// by the identity of its _ENV upvalue (shared by every function of one chunk). A function
// that reads no global has no _ENV: then the newest chunk is taken when it is long enough
// and has a function at that line (the usual case: `k = cuda.jit(function ... end)` typed
// as one input).
std::optional<std::string> remembered_text(lua_State* L, int idx, int first_line, int last_line, std::string* why) {
  int env = 0;
  for (int n = 1;; ++n) {
    const char* name = lua_getupvalue(L, idx, n);
    if (!name) break;
    lua_pop(L, 1);
    if (std::strcmp(name, "_ENV") == 0) {
      env = n;
      break;
    }
  }
  std::optional<std::string> text;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kChunks) == LUA_TTABLE) {
    if (env > 0) lua_pushlightuserdata(L, lua_upvalueid(L, idx, env));
    else lua_pushstring(L, kNewest);
    if (lua_rawget(L, -2) == LUA_TSTRING) {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      text.emplace(s, n);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (text && env == 0 &&
      (count_lines(*text) < last_line || find_word(line_of(*text, first_line), "function") == std::string_view::npos))
    text.reset();
  if (!text)
    *why = env > 0 ? "its chunk was not recorded (only the luda REPL and -e record what they run)"
                   : "a function typed at the prompt that reads no global can only be traced to the latest input";
  return text;
}

// Lua's chunkid for a string chunk: [string "first line..."].
std::string string_chunk_name(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::size_t nl = text.find_first_of("\r\n");
  std::string_view first = text.substr(0, nl);
  bool cut = nl != std::string_view::npos || first.size() > kMax;
  if (first.size() > kMax) first = first.substr(0, kMax);
  return fmt::format("[string \"{}{}\"]", first, cut ? "..." : "");
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The identifier ending just before `end` in `s` (after skipping spaces), or "".
std::string ident_before(std::string_view s, std::size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  std::size_t start = end;
  while (start > 0 && ident_char(s[start - 1])) --start;
  if (start == end || std::isdigit(static_cast<unsigned char>(s[start]))) return {};
  return std::string(s.substr(start, end - start));
}

// Where the keyword `word` starts in `line` as a whole word, or npos.
std::size_t find_word(std::string_view line, std::string_view word) {
  for (std::size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
    bool before = at > 0 && ident_char(line[at - 1]);
    bool after = at + word.size() < line.size() && ident_char(line[at + word.size()]);
    if (!before && !after) return at;
  }
  return std::string_view::npos;
}

// The name one line gives the function defined on it: `function a.b:NAME(`, else
// `NAME = ... function(` (the last assignment before the keyword). `before_only`: the
// keyword is on a later line, so the whole line is the part before it.
std::string name_on_line(std::string_view line, bool before_only) {
  std::size_t at = line.size();
  if (!before_only) {
    at = find_word(line, "function");
    if (at == std::string_view::npos) return {};
    std::size_t p = std::min(line.size(), line.find_first_not_of(" \t", at + 8));
    std::size_t start = p, last = p;
    while (p < line.size() && (ident_char(line[p]) || line[p] == '.' || line[p] == ':')) {
      if (line[p] == '.' || line[p] == ':') last = p + 1;
      ++p;
    }
    if (p > start && p > last) return std::string(line.substr(last, p - last));
  }
  // Walking left from the keyword: an '=' inside a group closed before it
  // (`jit({boundscheck = true})(function`) is not the assignment.
  int closed = 0;
  for (std::size_t i = at; i-- > 0;) {
    char c = line[i];
    if (c == ')' || c == '}' || c == ']') ++closed;
    else if ((c == '(' || c == '{' || c == '[') && closed > 0) --closed;
    else if (c == '=' && closed == 0) {
      bool comparison = (i + 1 < line.size() && line[i + 1] == '=') ||
                        (i > 0 && (line[i - 1] == '=' || line[i - 1] == '~' || line[i - 1] == '<' || line[i - 1] == '>'));
      if (!comparison) return ident_before(line, i);
      if (i > 0 && line[i - 1] == '=') --i;  // skip the other half of '=='
    }
  }
  return {};
}

std::string_view line_of(std::string_view text, int line) {
  std::size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  std::size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

}  // namespace

dsl::FunctionSource function_source(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  lua_Debug ar;
  lua_pushvalue(L, idx);
  lua_getinfo(L, ">Su", &ar);
  std::string where = fmt::format("{}:{}", ar.short_src, ar.linedefined);
  if (std::strcmp(ar.what, "C") == 0)
    fail("a C function cannot become a kernel: pass a Lua function, or its source text "
         "(luda.cuda.jit([[ function(x, out) ... end ]]))");
  dsl::FunctionSource out;
  out.line_defined = ar.linedefined;
  out.last_line_defined = ar.lastlinedefined;
  out.nparams = ar.nparams;
  std::string_view source(ar.source, ar.srclen);
  std::string why;
  if (source.starts_with("@")) {
    out.chunk = file_chunk(std::string(source.substr(1)), ar.short_src, &why);
  } else if (source.starts_with("=")) {
    if (source == "=stdin" || source == "=(command line)") {
      if (auto text = remembered_text(L, idx, ar.linedefined, ar.lastlinedefined, &why))
        out.chunk = std::make_shared<const dsl::Chunk>(dsl::Chunk{ar.short_src, std::move(*text)});
    } else {
      why = fmt::format("its chunk was loaded under the name '{}', which does not hold its text",
                        source.substr(1));
    }
  } else {  // load(text): the source is the text itself
    out.chunk = std::make_shared<const dsl::Chunk>(dsl::Chunk{ar.short_src, std::string(source)});
  }
  if (!out.chunk) fail("cannot find the source of the function defined at {}: {}; {}", where, why, kFix);
  return out;
}

dsl::FunctionSource text_source(std::string text) {
  dsl::FunctionSource out;
  std::string name = string_chunk_name(text);
  out.chunk = std::make_shared<const dsl::Chunk>(dsl::Chunk{std::move(name), std::move(text)});
  return out;
}

std::string function_name(const dsl::FunctionSource& source) {
  if (!source.chunk) return {};
  std::string_view text = source.chunk->text;
  if (source.line_defined == 0) {  // source text: `[return] [local] function NAME(` names it
    std::string_view rest = text.substr(std::min(text.size(), text.find_first_not_of(" \t\r\n")));
    for (std::string_view word : {"return", "local"})
      if (find_word(rest, word) == 0)
        rest = rest.substr(std::min(rest.size(), rest.find_first_not_of(" \t\r\n", word.size())));
    return find_word(rest, "function") == 0 ? name_on_line(line_of(rest, 1), false) : std::string();
  }
  std::string name = name_on_line(line_of(text, source.line_defined), false);
  if (!name.empty()) return name;
  // `add_kernel = cuda.jit(` on the line before a `function(` that starts its own line.
  std::string_view line = line_of(text, source.line_defined);
  std::size_t first = line.find_first_not_of(" \t");
  if (source.line_defined > 1 && first != std::string_view::npos && line.substr(first).starts_with("function"))
    return name_on_line(line_of(text, source.line_defined - 1), true);
  return {};
}

std::vector<std::string> parameter_names(lua_State* L, int idx) {
  std::vector<std::string> out;
  if (lua_type(L, idx) != LUA_TFUNCTION || lua_iscfunction(L, idx)) return out;
  lua_pushvalue(L, idx);
  for (int i = 1;; ++i) {
    const char* name = lua_getlocal(L, nullptr, i);  // with a function on top: its parameters
    if (!name) break;
    out.emplace_back(name);
  }
  lua_pop(L, 1);
  return out;
}

int remember_chunk(lua_State* L) {
  if (lua_type(L, 1) != LUA_TFUNCTION || lua_type(L, 2) != LUA_TSTRING) return 0;
  if (lua_getupvalue(L, 1, 1) == nullptr) return 0;  // a main chunk's only upvalue is _ENV
  lua_pop(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, kChunks) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kChunks);
  }
  lua_pushlightuserdata(L, lua_upvalueid(L, 1, 1));
  lua_pushvalue(L, 2);
  lua_rawset(L, -3);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, kNewest);
  return 0;
}

}  // namespace luda::lua

#include "stdlib/function_source.h"

#include <cstring>

#include "dsl/diagnostics.h"
#include "dsl/find_function.h"
#include "runtime/error.h"
#include "stdlib/chunk_texts.h"

namespace luda::lua {
namespace {

constexpr const char* kFix = "pass the source text instead: luda.cuda.jit([[ function(x, out) ... end ]])";

std::string parameters(int n) { return n == 1 ? "1 parameter" : fmt::format("{} parameters", n); }

std::string lines(int first, int last) {
  return first == last ? fmt::format("line {}", first) : fmt::format("lines {}-{}", first, last);
}

// One text kept for a chunk, parsed, with the functions at the span asked for.
struct Candidate {
  std::shared_ptr<const dsl::Chunk> chunk;
  std::shared_ptr<const dsl::Ast> ast;
  const dsl::FunctionExpr* function;
};

// The text, among those kept for the chunk `chunkname`, that defines the function of that
// span and parameter count: the only one that does, or several that hold the very same
// function text. `display` is the chunk as messages show it (short_src).
std::shared_ptr<const dsl::Chunk> choose_text(const std::vector<ChunkText>& texts, std::string_view chunkname,
                                              const std::string& display, int first, int last, int nparams) {
  std::vector<Candidate> found;
  for (const ChunkText& t : texts) {
    auto chunk = std::make_shared<const dsl::Chunk>(dsl::Chunk{display, t.text});
    auto ast = dsl::parsed_chunk(*chunk);  // a syntax error is raised: Lua loaded this text
    std::vector<const dsl::FunctionExpr*> at = dsl::functions_at(*ast, first, last, nparams);
    if (at.size() > 1) dsl::find_function(*ast, first, last, nparams);  // raises: two on one span
    if (!at.empty()) found.push_back({std::move(chunk), std::move(ast), at[0]});
  }
  std::string what = fmt::format("function with {}", parameters(nparams));
  if (found.empty()) {
    std::string message;
    if (texts.size() == 1 && texts[0].read_late)
      message = fmt::format("no {} is defined on {} of {} as luda read it, after it was loaded: the file has "
                            "changed since. Load the file after require \"luda\" (luda then keeps the text it was "
                            "loaded from), or pass the kernel's source as a string",
                            what, fmt::format("lines {}-{}", first, last), display);
    else
      message = fmt::format("no {} is defined on {} of the {} kept for the chunk name '{}': was the chunk "
                            "loaded with another text than the one kept? Keep the text it is loaded from "
                            "(luda::load_chunk), or pass the kernel's source as a string",
                            what, fmt::format("lines {}-{}", first, last),
                            texts.size() == 1 ? std::string("text") : fmt::format("{} texts", texts.size()), chunkname);
    throw dsl::source_error(display, dsl::Location{first, 1}, dsl::error_kind::source, message);
  }
  for (const Candidate& c : found)
    if (dsl::function_text(*c.ast, *c.function) != dsl::function_text(*found[0].ast, *found[0].function))
      throw dsl::source_error(
          found[0].ast->source(), found[0].function->loc, dsl::error_kind::source,
          fmt::format("the chunk name '{}' was loaded with {} different texts that each define a {} on {}, and "
                      "luda cannot tell which one is meant: give each chunk its own name, or pass the kernel's "
                      "source as a string, e.g. cuda.jit([[function(x, out) ... end]])",
                      chunkname, found.size(), what, lines(first, last)));
  return found[0].chunk;
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
  if (std::strcmp(ar.what, "main") == 0)
    fail("the main chunk of {} cannot become a kernel: pass a function defined in it", ar.short_src);
  dsl::FunctionSource out;
  out.line_defined = ar.linedefined;
  out.last_line_defined = ar.lastlinedefined;
  out.nparams = ar.nparams;
  std::string_view chunkname(ar.source, ar.srclen);
  std::vector<ChunkText> texts = chunk_texts(L, chunkname);
  if (texts.empty()) {
    if (chunkname.starts_with("@")) {  // a file nothing kept when it was loaded: read once, now
      std::string why;
      if (!keep_file_read_late(L, chunkname, &why))
        fail("cannot find the source of the function defined at {}: {}; {}", where, why, kFix);
      texts = chunk_texts(L, chunkname);
    } else if (chunkname.starts_with("=")) {
      fail("cannot find the source of the function defined at {}: its chunk '{}' was loaded without keeping its "
           "text: load it with luda::load_chunk (from Lua: luda.load), or register the text with "
           "luda::register_chunk, or {}",
           where, chunkname, kFix);
    } else {  // load(text) with no name: the name is the text
      texts.push_back(ChunkText{std::string(chunkname), false});
    }
    if (texts.empty())
      fail("cannot find the source of the function defined at {}: its text was not kept; {}", where, kFix);
  }
  out.chunk = choose_text(texts, chunkname, ar.short_src, out.line_defined, out.last_line_defined, out.nparams);
  return out;
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

}  // namespace luda::lua

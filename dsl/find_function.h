// Finding a kernel's function in its chunk. luda gets a Lua function as debug.getinfo
// describes it (chunk text, linedefined, lastlinedefined, nparams) and needs its tree:
// it parses the whole chunk (once per process per chunk, cached here) and picks the one
// function with that line span and parameter count. Source text given directly
// (`function(x, out) ... end`) is parsed as one function.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "dsl/ast.h"
#include "dsl/compile.h"

namespace luda::dsl {

struct FoundFunction {
  std::shared_ptr<const Ast> ast;  // keeps the tree alive
  const FunctionExpr* function = nullptr;
};

// `where.line_defined > 0`: the function of that span and (when nparams >= 0) parameter
// count in the parsed chunk. `where.line_defined == 0`: the chunk's text is one function
// (dsl/parser.h parse_function_text). Throws SourceError: the chunk's syntax errors; no
// such function ("source error", the chunk changed since it was loaded); two candidates
// (asks for the source string form).
FoundFunction find_function(const FunctionSource& where);

// The function of that span and parameter count (-1: any) in an already parsed chunk.
const FunctionExpr& find_function(const Ast& ast, int line_defined, int last_line_defined, int nparams);

// Every function of that span and parameter count (-1: any) in a parsed chunk: what
// find_function chooses from.
std::vector<const FunctionExpr*> functions_at(const Ast& ast, int line_defined, int last_line_defined, int nparams);

// The text of a function of the chunk, from its `function` keyword to its `end`.
std::string_view function_text(const Ast& ast, const FunctionExpr& f);

// Whether `text` is written as source text of one function: its first token (after
// blanks and comments) is `function`, or `local` or `return` before it. A Numba
// signature ("float32(float32)") never is. False for text that does not lex.
bool is_function_text(std::string_view text);

// The parsed chunk, from the process-wide cache (key: chunk name and text). Thread-safe;
// a chunk that fails to parse is not cached (its error is raised again on every call).
enum class ChunkForm : std::uint8_t { Chunk, FunctionText };
std::shared_ptr<const Ast> parsed_chunk(const Chunk& chunk, ChunkForm form = ChunkForm::Chunk);

struct ParseCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;  // parses done
  std::size_t entries = 0;
};
ParseCacheStats parse_cache_stats();

}  // namespace luda::dsl

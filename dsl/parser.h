// The Lua 5.4 parser: recursive descent after lparser.c, the same grammar, operator
// priorities and associativity, and the same compile-time checks (break outside a loop,
// goto without a visible label or into a local's scope, repeated labels, unknown
// attributes, several to-be-closed variables, assignment to a <const>/<close> variable,
// '...' outside a vararg function). Builds the tree of dsl/ast.h.
#pragma once

#include <memory>

#include "dsl/ast.h"
#include "dsl/source.h"

namespace luda::dsl {

// Parses a whole chunk. Throws SourceError (kind "syntax error"), worded as Lua words it:
//   hist.lua:3:9: syntax error: '=' expected near 'x'
//   hist.lua:9:1: syntax error: 'end' expected (to close 'function' at line 3) near <eof>
std::unique_ptr<Ast> parse_chunk(std::shared_ptr<const Source> source);

// Parses source text that is one function (the C++ API, the REPL, cuda.jit("...")):
//   functext -> [RETURN] FUNCTION body [';'] EOF
//             | LOCAL FUNCTION NAME body [';'] EOF
//             | FUNCTION funcname body [';'] EOF
// The tree is that of the equivalent chunk (an anonymous function is returned by the main
// chunk), so ast.functions()[0] is the function. Throws SourceError otherwise.
std::unique_ptr<Ast> parse_function_text(std::shared_ptr<const Source> source);

}  // namespace luda::dsl

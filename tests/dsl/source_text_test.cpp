// A function given as source text, and the name that source gives a function, read from
// the text alone.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "dsl/source_text.h"

namespace luda::dsl {
namespace {

// The function defined on `line` of `text` (a chunk, as debug.getinfo describes it).
FunctionSource at_line(std::string text, int line) {
  FunctionSource s;
  s.chunk = std::make_shared<const Chunk>(Chunk{"k.lua", std::move(text)});
  s.line_defined = line;
  s.last_line_defined = line;
  return s;
}

TEST(SourceText, TextSourceIsOneFunctionInAStringChunk) {
  FunctionSource s = text_source("function(x, out) out[0] = x[0] end");
  ASSERT_TRUE(s.chunk);
  EXPECT_EQ(s.chunk->name, "[string \"function(x, out) out[0] = x[0] end\"]");
  EXPECT_EQ(s.chunk->text, "function(x, out) out[0] = x[0] end");
  EXPECT_EQ(s.line_defined, 0);
  EXPECT_EQ(s.nparams, -1);
}

TEST(SourceText, TextSourceNamesItsChunkByItsFirstLine) {
  // As Lua's chunkid: the first line, and "..." when more follows.
  EXPECT_EQ(text_source("function(x)\n  return x\nend").chunk->name, "[string \"function(x)...\"]");
  EXPECT_EQ(text_source("function(x)\r\nreturn x end").chunk->name, "[string \"function(x)...\"]");
  EXPECT_EQ(text_source("").chunk->name, "[string \"\"]");
}

TEST(SourceText, FunctionNameOfSourceText) {
  EXPECT_EQ(function_name(text_source("function add(a, b) return a + b end")), "add");
  EXPECT_EQ(function_name(text_source("  local function add(a, b) return a + b end")), "add");
  EXPECT_EQ(function_name(text_source("return function M.scale(v) return v end")), "scale");
  EXPECT_EQ(function_name(text_source("\n\tfunction obj:step(v) return v end")), "step");
  EXPECT_EQ(function_name(text_source("function(a, b) return a + b end")), "");
  EXPECT_EQ(function_name(text_source("x = function(a) return a end")), "");  // not `function` first
  EXPECT_EQ(function_name(text_source("functional(a)")), "");
}

TEST(SourceText, FunctionNameOfAChunksFunction) {
  EXPECT_EQ(function_name(at_line("local function add_kernel(x, out)", 1)), "add_kernel");
  EXPECT_EQ(function_name(at_line("local add_kernel = cuda.jit(function(x, out)", 1)), "add_kernel");
  EXPECT_EQ(function_name(at_line("function M.add_kernel(x, out)", 1)), "add_kernel");
  EXPECT_EQ(function_name(at_line("function M:add_kernel(x, out)", 1)), "add_kernel");
  EXPECT_EQ(function_name(at_line("  add = function(a, b)", 1)), "add");
  // The '=' of an option table closed before the keyword is not the assignment.
  EXPECT_EQ(function_name(at_line("k = cuda.jit({boundscheck = true})(function(x)", 1)), "k");
  EXPECT_EQ(function_name(at_line("cuda.jit({boundscheck = true})(function(x)", 1)), "");
  // Comparisons are not assignments.
  EXPECT_EQ(function_name(at_line("f = a == b and g(function(x)", 1)), "f");
  EXPECT_EQ(function_name(at_line("g(a ~= b, function(x)", 1)), "");
  // Line 2 of the chunk.
  EXPECT_EQ(function_name(at_line("local luda = require 'luda'\nlocal scale = luda.vectorize(function(v)", 2)),
            "scale");
}

TEST(SourceText, FunctionNameFromTheLineBeforeAFunctionOnItsOwnLine) {
  FunctionSource s = at_line("local add_kernel = cuda.jit(\n  function(x, out)\n", 2);
  EXPECT_EQ(function_name(s), "add_kernel");
  // Only when `function` starts the line: on line 2 after another call, no name shows.
  EXPECT_EQ(function_name(at_line("local k = cuda.jit(\n  g(function(x, out)\n", 2)), "");
  EXPECT_EQ(function_name(at_line("  function(x, out)\n", 1)), "");  // no line before
}

TEST(SourceText, FunctionNameWithoutAChunk) {
  EXPECT_EQ(function_name(FunctionSource{}), "");
  EXPECT_EQ(function_name(at_line("local a = 1", 5)), "");  // past the text
}

}  // namespace
}  // namespace luda::dsl

// Finding a kernel's function in its chunk from what debug.getinfo says of it, and
// taking source text that is one function; the process-wide parse cache.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "dsl/find_function.h"

namespace luda::dsl {
namespace {

FunctionSource where(std::shared_ptr<const Chunk> chunk, int line, int last, int nparams) {
  FunctionSource w;
  w.chunk = std::move(chunk);
  w.line_defined = line;
  w.last_line_defined = last;
  w.nparams = nparams;
  return w;
}

std::string error_of(const FunctionSource& w) {
  try {
    find_function(w);
  } catch (const SourceError& e) {
    return e.what();
  }
  return "no error";
}

const char* kHist = "local luda = require 'luda'\n"              // 1
                    "local cuda = luda.cuda\n"                   // 2
                    "local hist = cuda.jit(function(x, bins)\n"  // 3
                    "  local i = cuda.grid(1)\n"                 // 4
                    "  if i < #x then cuda.atomic.add(bins, x[i], 1) end\n"
                    "end)\n"                                         // 6
                    "local function scale(v, s) return v * s end\n"  // 7
                    "local k = cuda.jit(function(x, out)\n"          // 8
                    "  out[0] = scale(x[0], 2)\n"
                    "end)\n";  // 10

TEST(FindFunction, BySpanAndParameterCount) {
  auto chunk = std::make_shared<Chunk>(Chunk{"hist.lua", kHist});
  FoundFunction f = find_function(where(chunk, 3, 6, 2));
  ASSERT_NE(f.function, nullptr);
  EXPECT_EQ(f.function->params.at(1).text, "bins");
  EXPECT_EQ(f.function->loc, (Location{3, 23}));
  FoundFunction g = find_function(where(chunk, 7, 7, 2));
  EXPECT_EQ(g.function->name, "scale");
  FoundFunction k = find_function(where(chunk, 8, 10, -1));  // nparams unknown
  EXPECT_EQ(k.function->params.at(1).text, "out");
  EXPECT_EQ(f.ast.get(), k.ast.get());  // one parse for the chunk
}

TEST(FindFunction, NoSuchFunction) {
  auto chunk = std::make_shared<Chunk>(Chunk{"hist.lua", kHist});
  EXPECT_EQ(error_of(where(chunk, 3, 6, 3)),
            "hist.lua:3:1: source error: no function with 3 parameters is defined on lines 3-6 of this chunk: "
            "has the file changed since it was loaded? Reload it, or pass the kernel's source as a string");
  EXPECT_EQ(error_of(where(chunk, 4, 6, -1)),
            "hist.lua:4:1: source error: no function is defined on lines 4-6 of this chunk: "
            "has the file changed since it was loaded? Reload it, or pass the kernel's source as a string");
}

TEST(FindFunction, TwoFunctionsOnOneSpanAskForTheSourceString) {
  auto chunk = std::make_shared<Chunk>(
      Chunk{"two.lua", "local a, b = cuda.jit(function(x, y) end), cuda.jit(function(p, q) end)\n"});
  EXPECT_EQ(error_of(where(chunk, 1, 1, 2)),
            "two.lua:1:53: source error: two functions with 2 parameters are defined on line 1 (the other at "
            "column 23), and luda cannot tell which one is meant: put them on separate lines, or pass the "
            "kernel's source as a string, e.g. cuda.jit([[function(x, out) ... end]])\n"
            "    local a, b = cuda.jit(function(x, y) end), cuda.jit(function(p, q) end)\n"
            "                                                        ^");
  // A different parameter count tells them apart.
  auto chunk2 = std::make_shared<Chunk>(Chunk{"two.lua", "local a, b = function(x) end, function(p, q) end\n"});
  EXPECT_EQ(find_function(where(chunk2, 1, 1, 2)).function->params[0].text, "p");
}

TEST(FindFunction, SyntaxErrorsOfTheChunkAreRaised) {
  auto chunk = std::make_shared<Chunk>(Chunk{"bad.lua", "local k = cuda.jit(function(x)\n  x[0] = = 1\nend)\n"});
  EXPECT_EQ(error_of(where(chunk, 1, 3, 1)),
            "bad.lua:2:10: syntax error: unexpected symbol near '='\n    x[0] = = 1\n           ^");
}

TEST(FindFunction, SourceTextForms) {
  struct Case {
    const char* text;
    const char* params;
    const char* name;
  };
  for (Case c : {Case{"function(x, out) out[0] = x[0] end", "x out", ""},
                 Case{"  return function(x, out)\n  out[0] = x[0]\nend;", "x out", ""},
                 Case{"-- a kernel\nlocal function add(a, b, c) c[0] = a[0] + b[0] end\n", "a b c", "add"},
                 Case{"function lib.k:run(n) end", "self n", "lib.k:run"}}) {
    auto chunk = std::make_shared<Chunk>(Chunk{"[string]", c.text});
    FoundFunction f = find_function(where(chunk, 0, 0, -1));
    ASSERT_NE(f.function, nullptr) << c.text;
    std::string params;
    for (const Name& p : f.function->params) params += (params.empty() ? "" : " ") + p.text;
    EXPECT_EQ(params, c.params) << c.text;
    EXPECT_EQ(f.function->name, c.name) << c.text;
  }
}

TEST(FindFunction, SourceTextThatIsNotOneFunction) {
  auto error_for = [](const char* text) {
    return error_of(where(std::make_shared<Chunk>(Chunk{"[string]", text}), 0, 0, -1));
  };
  EXPECT_EQ(error_for("x = 1"),
            "[string]:1:1: syntax error: function expected (the source text must be one function, as in "
            "'function(x, out) ... end') near 'x'\n    x = 1\n    ^");
  EXPECT_EQ(error_for("function(x) end\nprint(1)"),
            "[string]:2:1: syntax error: <eof> expected (the source text must be one function, and nothing "
            "may follow its 'end') near 'print'\n    print(1)\n    ^~~~~");
  EXPECT_EQ(error_for("return 42"),
            "[string]:1:8: syntax error: function expected (the source text must be one function, as in "
            "'function(x, out) ... end') near '42'\n    return 42\n           ^~");
  EXPECT_EQ(error_for("function(x)\n  return x +\nend"),
            "[string]:3:1: syntax error: unexpected symbol near 'end'\n    end\n    ^~~");
}

TEST(FindFunction, EachChunkIsParsedOncePerProcess) {
  std::string text = "local function k(x) return x end\n-- unique " +
                     std::to_string(::testing::UnitTest::GetInstance()->random_seed());
  ParseCacheStats before = parse_cache_stats();
  auto chunk = std::make_shared<Chunk>(Chunk{"once.lua", text});
  std::vector<std::thread> threads;
  std::vector<const Ast*> seen(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) seen[t] = find_function(where(chunk, 1, 1, 1)).ast.get();
    });
  for (auto& th : threads) th.join();
  ParseCacheStats after = parse_cache_stats();
  // Threads racing on the first lookup may each parse, but only one tree is kept.
  EXPECT_GE(after.misses - before.misses, 1u);
  EXPECT_LE(after.misses - before.misses, 8u);
  EXPECT_EQ(after.hits + after.misses - before.hits - before.misses, 400u);
  for (const Ast* a : seen) EXPECT_EQ(a, seen[0]);
  // The same text under another name is another chunk (its errors name it).
  auto other = std::make_shared<Chunk>(Chunk{"other.lua", text});
  EXPECT_NE(find_function(where(other, 1, 1, 1)).ast.get(), seen[0]);
  EXPECT_EQ(find_function(where(other, 1, 1, 1)).ast->source().name(), "other.lua");
}

}  // namespace
}  // namespace luda::dsl

namespace luda::dsl {
namespace {

TEST(FindFunction, EveryFunctionAtASpanAndItsText) {
  auto chunk = std::make_shared<Chunk>(
      Chunk{"two.lua", "local a, b = f(function(x, y) end), g(function(p, q) return p end) -- c\n"});
  auto ast = parsed_chunk(*chunk);
  std::vector<const FunctionExpr*> both = functions_at(*ast, 1, 1, 2);
  ASSERT_EQ(2u, both.size());
  EXPECT_EQ("function(x, y) end", function_text(*ast, *both[0]));
  EXPECT_EQ("function(p, q) return p end", function_text(*ast, *both[1]));
  EXPECT_TRUE(functions_at(*ast, 1, 1, 3).empty());
  EXPECT_EQ(2u, functions_at(*ast, 1, 1, -1).size());
}

TEST(FindFunction, SourceTextIsToldFromASignatureByItsFirstWord) {
  for (const char* text : {"function(x) end", "  -- a kernel\n local function k(x) end", "return function() end",
                           "--[[ long\n comment ]] function(a) return a end"})
    EXPECT_TRUE(is_function_text(text)) << text;
  for (const char* text : {"float32(float32, float32)", "void(int64[:])", "", "x = 1", "\"unterminated"})
    EXPECT_FALSE(is_function_text(text)) << text;
}

}  // namespace
}  // namespace luda::dsl

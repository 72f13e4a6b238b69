// The parser on all of Lua 5.4's syntax: every construct (kernels may use few of them, but
// a kernel's chunk is a whole file), priorities and associativity as lparser.c has them,
// node locations, function spans as debug.getinfo reports them, and the exact text of
// syntax errors. Then every real Lua file at hand parses.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsl/ast.h"
#include "dsl/parser.h"

namespace luda::dsl {
namespace {

std::unique_ptr<Ast> parse(const std::string& text, const std::string& name = "t.lua") {
  return parse_chunk(std::make_shared<Source>(name, text));
}

std::string chunk(const std::string& text) { return dump(*parse(text)->main().body); }

// The S-expression of one expression.
std::string ex(const std::string& text) {
  auto ast = parse("return " + text);
  const auto& ret = ast->main().body->stats.at(0)->as<ReturnStat>();
  EXPECT_EQ(ret.values.size(), 1u);
  return dump(*ret.values.at(0));
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const SourceError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Parser, BinaryPriorities) {
  EXPECT_EQ(ex("1 + 2 * 3"), "(+ 1 (* 2 3))");
  EXPECT_EQ(ex("1 * 2 + 3"), "(+ (* 1 2) 3)");
  EXPECT_EQ(ex("a or b and c"), "(or a (and b c))");
  EXPECT_EQ(ex("a and b or c and d"), "(or (and a b) (and c d))");
  EXPECT_EQ(ex("a < b and c"), "(and (< a b) c)");
  EXPECT_EQ(ex("a | b < c"), "(< (| a b) c)");
  EXPECT_EQ(ex("a | b ~ c"), "(| a (~ b c))");
  EXPECT_EQ(ex("a ~ b & c"), "(~ a (& b c))");
  EXPECT_EQ(ex("a & b << c"), "(& a (<< b c))");
  EXPECT_EQ(ex("a << b .. c"), "(<< a (.. b c))");
  EXPECT_EQ(ex("a .. b + c"), "(.. a (+ b c))");
  EXPECT_EQ(ex("a + b % c"), "(+ a (% b c))");
  EXPECT_EQ(ex("a // b * c"), "(* (// a b) c)");
  EXPECT_EQ(ex("a / b // c % d"), "(% (// (/ a b) c) d)");
  EXPECT_EQ(ex("-a ^ b"), "(- (^ a b))");  // ^ binds tighter than unary minus
  EXPECT_EQ(ex("-a * b"), "(* (- a) b)");
  EXPECT_EQ(ex("not a == b"), "(== (not a) b)");
  EXPECT_EQ(ex("#t + 1"), "(+ (# t) 1)");
  EXPECT_EQ(ex("~a & b"), "(& (~ a) b)");
  EXPECT_EQ(ex("2 ^ -3"), "(^ 2 (- 3))");
  EXPECT_EQ(ex("- - -x"), "(- (- (- x)))");
  EXPECT_EQ(ex("a == b ~= c"), "(~= (== a b) c)");
  EXPECT_EQ(ex("a <= b >= c > d"), "(> (>= (<= a b) c) d)");
  EXPECT_EQ(ex("a >> b << c"), "(<< (>> a b) c)");
}

TEST(Parser, Associativity) {
  EXPECT_EQ(ex("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(ex("a / b / c"), "(/ (/ a b) c)");
  EXPECT_EQ(ex("a ^ b ^ c"), "(^ a (^ b c))");      // right
  EXPECT_EQ(ex("a .. b .. c"), "(.. a (.. b c))");  // right
  EXPECT_EQ(ex("a or b or c"), "(or (or a b) c)");
  EXPECT_EQ(ex("(a - b) - (c - d)"), "(- (paren (- a b)) (paren (- c d)))");
  EXPECT_EQ(ex("a ^ -b ^ c"), "(^ a (- (^ b c)))");
}

TEST(Parser, SimpleExpressions) {
  EXPECT_EQ(ex("nil"), "nil");
  EXPECT_EQ(ex("true"), "true");
  EXPECT_EQ(ex("false"), "false");
  EXPECT_EQ(ex("..."), "...");
  EXPECT_EQ(ex("0x10"), "0x10");
  EXPECT_EQ(ex("'a\\tb'"), "\"a\\tb\"");
  EXPECT_EQ(ex("[[long]]"), "\"long\"");
  EXPECT_EQ(ex("a.b.c"), "(. (. a b) c)");
  EXPECT_EQ(ex("a[b][c]"), "(index (index a b) c)");
  EXPECT_EQ(ex("a['b']"), "(index a \"b\")");  // stays an Index, not a Field
  EXPECT_EQ(ex("f()"), "(call f)");
  EXPECT_EQ(ex("f(1, g(2), ...)"), "(call f 1 (call g 2) ...)");
  EXPECT_EQ(ex("f 'str'"), "(call f \"str\")");
  EXPECT_EQ(ex("f [[s]]"), "(call f \"s\")");
  EXPECT_EQ(ex("f {1}"), "(call f (table 1))");
  EXPECT_EQ(ex("o:m(1)"), "(: o m 1)");
  EXPECT_EQ(ex("o:m 's'"), "(: o m \"s\")");
  EXPECT_EQ(ex("o:m {}"), "(: o m (table))");
  EXPECT_EQ(ex("a.b:c(d).e[f]()"), "(call (index (. (: (. a b) c d) e) f))");
  EXPECT_EQ(ex("(f)()"), "(call (paren f))");
  EXPECT_EQ(ex("cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x"),
            "(+ (. (. cuda threadIdx) x) (* (. (. cuda blockIdx) x) (. (. cuda blockDim) x)))");
}

TEST(Parser, TableConstructors) {
  EXPECT_EQ(ex("{}"), "(table)");
  EXPECT_EQ(ex("{1, 2; 3,}"), "(table 1 2 3)");
  EXPECT_EQ(ex("{x = 1, ['y'] = 2, 3, [f(x)] = {z = {}}; }"),
            "(table (= x 1) ([] \"y\" 2) 3 ([] (call f x) (table (= z (table)))))");
  EXPECT_EQ(ex("{x}"), "(table x)");
  EXPECT_EQ(ex("{x == 1}"), "(table (== x 1))");  // a Name not followed by '=' is a value
  EXPECT_EQ(ex("{f = function(...) return ... end}"), "(table (= f (function (...) (block (return ...)))))");
}

TEST(Parser, FunctionsAndClosures) {
  EXPECT_EQ(ex("function() end"), "(function () (block))");
  EXPECT_EQ(ex("function(a, b, ...) return a end"), "(function (a b ...) (block (return a)))");
  EXPECT_EQ(ex("function(...) local t = {...} return select('#', ...) end"),
            "(function (...) (block (local (t) ((table ...))) (return (call select \"#\" ...))))");
  EXPECT_EQ(chunk("function f(x) return function(y) return x + y end end"),
            "(block (function-stat f (function (x) (block (return (function (y) (block (return (+ x y)))))))))");
  EXPECT_EQ(chunk("function a.b.c:m(x) return self end"),
            "(block (function-stat a.b.c:m (function (self x) (block (return self)))))");
  EXPECT_EQ(chunk("local function f(n) if n < 2 then return n end return f(n - 1) + f(n - 2) end"),
            "(block (local-function f (function (n) (block (if (< n 2) (block (return n))) "
            "(return (+ (call f (- n 1)) (call f (- n 2))))))))");
  auto ast = parse("function a.b:m() end");
  const auto& fs = ast->main().body->stats[0]->as<FunctionStat>();
  ASSERT_EQ(fs.path.size(), 3u);
  EXPECT_EQ(fs.path[2].text, "m");
  EXPECT_TRUE(fs.is_method);
  EXPECT_TRUE(fs.function->is_method);
  EXPECT_EQ(fs.function->nparams(), 1);
  EXPECT_EQ(fs.function->name, "a.b:m");
}

TEST(Parser, Statements) {
  EXPECT_EQ(chunk("local a, b <const>, c <close> = 1, 2"), "(block (local (a b<const> c<close>) (1 2)))");
  EXPECT_EQ(chunk("local x"), "(block (local (x) ()))");
  EXPECT_EQ(chunk("a, b.c, d[1] = f()"), "(block (= (a (. b c) (index d 1)) ((call f))))");
  EXPECT_EQ(chunk("f(x); g:h(y);;"), "(block (call f x) (: g h y))");
  EXPECT_EQ(chunk("do local x = 1 end"), "(block (do (block (local (x) (1)))))");
  EXPECT_EQ(chunk("while i < n do i = i + 1 end"), "(block (while (< i n) (block (= (i) ((+ i 1))))))");
  EXPECT_EQ(chunk("repeat local x = f() until x > 0"), "(block (repeat (block (local (x) ((call f)))) (> x 0)))");
  EXPECT_EQ(chunk("if a then b() elseif c then d() elseif e then else f() end"),
            "(block (if a (block (call b)) elseif c (block (call d)) elseif e (block) else (block (call f))))");
  EXPECT_EQ(chunk("if a then end"), "(block (if a (block)))");
  EXPECT_EQ(chunk("for i = 1, 10 do end"), "(block (for i 1 10 (block)))");
  EXPECT_EQ(chunk("for i = n, 1, -1 do break end"), "(block (for i n 1 (- 1) (block (break))))");
  EXPECT_EQ(chunk("for k, v in pairs(t) do print(k, v) end"),
            "(block (forin (k v) ((call pairs t)) (block (call print k v))))");
  EXPECT_EQ(chunk("for k in next, t, nil do end"), "(block (forin (k) (next t nil) (block)))");
  EXPECT_EQ(chunk("return"), "(block (return))");
  EXPECT_EQ(chunk("return;"), "(block (return))");
  EXPECT_EQ(chunk("return 1, 2;"), "(block (return 1 2))");
  EXPECT_EQ(chunk("do return end"), "(block (do (block (return))))");
  EXPECT_EQ(chunk("::top:: goto top"), "(block (label top) (goto top))");
  EXPECT_EQ(chunk("goto continue; ::continue::"), "(block (goto continue) (label continue))");
  EXPECT_EQ(chunk("for i = 1, 3 do if i == 2 then goto next end print(i) ::next:: end"),
            "(block (for i 1 3 (block (if (== i 2) (block (goto next))) (call print i) (label next))))");
  EXPECT_EQ(chunk("while true do local x = 1; goto done end ::done::"),
            "(block (while true (block (local (x) (1)) (goto done))) (label done))");
  EXPECT_EQ(chunk("local goto_ = 1"), "(block (local (goto_) (1)))");
}

TEST(Parser, MetamethodStyleCodeAndVarargs) {
  const char* text = R"(
local mt = {}
mt.__index = function(t, k) return rawget(t, '_' .. k) end
mt.__add = function(a, b) return setmetatable({v = a.v + b.v}, mt) end
mt.__call = function(self, ...) return select('#', ...) end
mt.__close = function() end
local obj <close> = setmetatable({}, mt)
local s = ("%d"):format(#obj)
local co = coroutine.wrap(function(...) coroutine.yield(...) end)
return obj, s, co
)";
  auto ast = parse(text);
  EXPECT_EQ(ast->main().body->stats.size(), 9u);
  EXPECT_EQ(ast->functions().size(), 5u);
  EXPECT_EQ(dump(*ast->main().body->stats[6]), "(local (s) ((: (paren \"%d\") format (# obj))))");
}

TEST(Parser, Locations) {
  auto ast = parse("local y = a +\n  b * c\nout[i] = f(x)\n");
  const auto& local = ast->main().body->stats[0]->as<LocalStat>();
  EXPECT_EQ(local.loc, (Location{1, 1}));
  EXPECT_EQ(local.end, (Location{2, 7}));
  EXPECT_EQ(local.vars[0].name.loc, (Location{1, 7}));
  const auto& add = local.values[0]->as<BinaryExpr>();
  EXPECT_EQ(add.loc, (Location{1, 11}));
  EXPECT_EQ(add.op_loc, (Location{1, 13}));
  EXPECT_EQ(add.end, (Location{2, 7}));
  const auto& mul = add.rhs->as<BinaryExpr>();
  EXPECT_EQ(mul.loc, (Location{2, 3}));
  EXPECT_EQ(mul.op_loc, (Location{2, 5}));
  const auto& assign = ast->main().body->stats[1]->as<AssignStat>();
  EXPECT_EQ(assign.eq, (Location{3, 8}));
  const auto& index = assign.targets[0]->as<IndexExpr>();
  EXPECT_EQ(index.loc, (Location{3, 1}));
  EXPECT_EQ(index.bracket, (Location{3, 4}));
  EXPECT_EQ(index.end, (Location{3, 6}));
  const auto& call = assign.values[0]->as<CallExpr>();
  EXPECT_EQ(call.loc, (Location{3, 10}));
  EXPECT_EQ(call.open, (Location{3, 11}));
  EXPECT_EQ(call.end, (Location{3, 13}));
  // Every node has a distinct id that finds it again.
  for (int id = 0; id < ast->node_count(); ++id) EXPECT_EQ(ast->node(id).id, id);
}

TEST(Parser, ErrorsAtANodeUnderlineIt) {
  auto ast = parse("local function g(x, y)\n  return (x > 0) + y\nend\n", "gauss.lua");
  const auto& f = *ast->functions().at(0);
  const auto& ret = f.body->stats[0]->as<ReturnStat>();
  EXPECT_STREQ(node_error(*ast, *ret.values[0], error_kind::type, "cannot apply '+' to bool and float32").what(),
               "gauss.lua:2:18: type error: cannot apply '+' to bool and float32\n"
               "    return (x > 0) + y\n"
               "           ~~~~~~~~^~~");
}

TEST(Parser, FunctionSpansMatchDebugGetinfo) {
  // linedefined as lparser.c records it: a function statement's keyword line; a function
  // expression's and a local function's `(` line; lastlinedefined: the `end` line.
  auto ast = parse("function f(a)\n"                                           // 1
                   "end\n"                                                     // 2
                   "local g = function\n"                                      // 3
                   "  (a, b) return a end\n"                                   // 4
                   "local function\n"                                          // 5
                   "  h\n"                                                     // 6
                   "  (...) end\n"                                             // 7
                   "t = { m = function(self) return function() end end }\n");  // 8
  const auto& fs = ast->functions();
  ASSERT_EQ(fs.size(), 5u);
  EXPECT_EQ(fs[0]->name, "f");
  EXPECT_EQ(fs[0]->line_defined, 1);
  EXPECT_EQ(fs[0]->last_line_defined, 2);
  EXPECT_EQ(fs[1]->line_defined, 4);
  EXPECT_EQ(fs[1]->last_line_defined, 4);
  EXPECT_EQ(fs[1]->nparams(), 2);
  EXPECT_EQ(fs[2]->name, "h");
  EXPECT_EQ(fs[2]->line_defined, 7);
  EXPECT_TRUE(fs[2]->is_vararg);
  EXPECT_EQ(fs[2]->nparams(), 0);
  EXPECT_EQ(fs[3]->line_defined, 8);
  EXPECT_EQ(fs[4]->line_defined, 8);  // nested: listed after its parent
  EXPECT_EQ(fs[3]->loc, (Location{8, 11}));
  EXPECT_EQ(ast->main().line_defined, 0);
  EXPECT_TRUE(ast->main().is_vararg);
}

TEST(Parser, SyntaxErrors) {
  EXPECT_EQ(error_of("local x = 1\nx y"), "t.lua:2:3: syntax error: '=' expected near 'y'\n    x y\n      ^");
  EXPECT_EQ(error_of("local y x"), "t.lua:1:10: syntax error: '=' expected near <eof>\n    local y x\n             ^");
  EXPECT_EQ(error_of("x = 1\nfunction f()\n  return x\n"),
            "t.lua:3:11: syntax error: 'end' expected (to close 'function' at line 2) near <eof>\n"
            "    return x\n"
            "            ^");
  EXPECT_EQ(
      error_of("if x then y() end end"),
      "t.lua:1:19: syntax error: <eof> expected near 'end'\n    if x then y() end end\n                      ^~~");
  EXPECT_EQ(error_of("if x then y() )"),
            "t.lua:1:15: syntax error: unexpected symbol near ')'\n    if x then y() )\n                  ^");
  EXPECT_EQ(error_of("x = = 2"), "t.lua:1:5: syntax error: unexpected symbol near '='\n    x = = 2\n        ^");
  EXPECT_EQ(error_of("x = 1 +"), "t.lua:1:8: syntax error: unexpected symbol near <eof>\n    x = 1 +\n           ^");
  EXPECT_EQ(error_of("for i do end"),
            "t.lua:1:7: syntax error: '=' or 'in' expected near 'do'\n    for i do end\n          ^~");
  EXPECT_EQ(error_of("f(a b)"), "t.lua:1:5: syntax error: ')' expected near 'b'\n    f(a b)\n        ^");
  EXPECT_EQ(error_of("f(a,\n\nb"),
            "t.lua:3:2: syntax error: ')' expected (to close '(' at line 1) near <eof>\n    b\n     ^");
  EXPECT_EQ(error_of("t = {1, 2"), "t.lua:1:10: syntax error: '}' expected near <eof>\n    t = {1, 2\n             ^");
  EXPECT_EQ(error_of("x = a.1"), "t.lua:1:6: syntax error: unexpected symbol near '.1'\n    x = a.1\n         ^~");
  EXPECT_EQ(error_of("local function(x) end"),
            "t.lua:1:15: syntax error: <name> expected near '('\n    local function(x) end\n                  ^");
  EXPECT_EQ(error_of("function f(a, 1) end"),
            "t.lua:1:15: syntax error: <name> expected near '1'\n    function f(a, 1) end\n                  ^");
  EXPECT_EQ(error_of("x = y @ z"), "t.lua:1:7: syntax error: unexpected symbol near '@'\n    x = y @ z\n          ^");
  EXPECT_EQ(error_of("return 1 x = 2"),
            "t.lua:1:10: syntax error: <eof> expected near 'x'\n    return 1 x = 2\n             ^");
  EXPECT_EQ(error_of("while true do\n  x = 1\n"),
            "t.lua:2:8: syntax error: 'end' expected (to close 'while' at line 1) near <eof>\n    x = 1\n         ^");
  EXPECT_EQ(error_of("repeat x = 1"),
            "t.lua:1:13: syntax error: 'until' expected near <eof>\n    repeat x = 1\n                ^");
  EXPECT_EQ(error_of("x = 'a' 'b'"),
            "t.lua:1:9: syntax error: unexpected symbol near ''b''\n    x = 'a' 'b'\n            ^~~");
}

TEST(Parser, CompileTimeChecksAsLuaMakesThem) {
  EXPECT_EQ(error_of("f() = 1"), "t.lua:1:5: syntax error: cannot assign to a function call\n    f() = 1\n        ^");
  EXPECT_EQ(error_of("(a) = 1"),
            "t.lua:1:5: syntax error: cannot assign to a parenthesized expression\n    (a) = 1\n        ^");
  EXPECT_EQ(error_of("local x <foo> = 1"),
            "t.lua:1:10: syntax error: unknown attribute 'foo'\n    local x <foo> = 1\n             ^");
  EXPECT_EQ(error_of("local a <close>, b <close> = f()"),
            "t.lua:1:21: syntax error: multiple to-be-closed variables in local list\n"
            "    local a <close>, b <close> = f()\n                        ^");
  EXPECT_EQ(error_of("local x <const> = 1\nx = 2"),
            "t.lua:2:1: syntax error: attempt to assign to const variable 'x'\n    x = 2\n    ^");
  EXPECT_EQ(
      error_of("local x <const> = 1\nfunction g() x = 2 end"),
      "t.lua:2:14: syntax error: attempt to assign to const variable 'x'\n    function g() x = 2 end\n                 ^");
  EXPECT_EQ(error_of("local x <const> = 1\nfunction x() end"),
            "t.lua:2:10: syntax error: attempt to assign to const variable 'x'\n    function x() end\n             ^");
  EXPECT_EQ(error_of("local x <const> = 1\ndo local x = 2; x = 3 end x2 = 1"), "no error");  // shadowed
  EXPECT_EQ(error_of("if x then break end"),
            "t.lua:1:11: syntax error: break outside a loop\n    if x then break end\n              ^");
  EXPECT_EQ(error_of("while x do local f = function() break end end"),
            "t.lua:1:33: syntax error: break outside a loop\n"
            "    while x do local f = function() break end end\n                                    ^");
  EXPECT_EQ(error_of("goto nowhere"),
            "t.lua:1:1: syntax error: no visible label 'nowhere' for goto\n    goto nowhere\n    ^");
  EXPECT_EQ(error_of("do ::a:: end goto a"),
            "t.lua:1:14: syntax error: no visible label 'a' for goto\n    do ::a:: end goto a\n                 ^");
  EXPECT_EQ(error_of("::a:: do ::a:: end"),
            "t.lua:1:12: syntax error: label 'a' already defined on line 1\n    ::a:: do ::a:: end\n               ^");
  EXPECT_EQ(error_of("goto a; local x; ::a:: print(x)"),
            "t.lua:1:1: syntax error: <goto a> at line 1 jumps into the scope of local 'x'\n"
            "    goto a; local x; ::a:: print(x)\n    ^");
  EXPECT_EQ(error_of("do goto a; local x; ::a:: end"), "no error");  // the label ends the block
  EXPECT_EQ(error_of("function f() return ... end"),
            "t.lua:1:21: syntax error: cannot use '...' outside a vararg function near '...'\n"
            "    function f() return ... end\n                        ^~~");
  EXPECT_EQ(error_of("return ..."), "no error");
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string deep(5000, '(');
  std::string text = "x = " + deep + "1" + std::string(5000, ')');
  EXPECT_NE(error_of(text).find("syntax error: chunk nested too deeply (more than 200 levels)"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 300; ++i) blocks += "do ";
  EXPECT_NE(error_of(blocks).find("nested too deeply"), std::string::npos);
  std::string ok = "x = " + std::string(150, '(') + "1" + std::string(150, ')');
  EXPECT_EQ(error_of(ok), "no error");
}

// ---------------------------------------------------------------- real files

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int parse_all_under(const std::filesystem::path& root) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".lua") continue;
    try {
      auto ast = parse(read_file(entry.path()), entry.path().string());
      EXPECT_GT(ast->node_count(), 0);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    ++files;
  }
  return files;
}

TEST(Parser, EveryInstalledLuaLibraryParses) {
  std::filesystem::path root = "/usr/share/lua/5.4";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << root << " is absent (apt-get install lua-busted)";
  int files = parse_all_under(root);
  EXPECT_GT(files, 10);
  std::printf("parsed %d files under %s\n", files, root.c_str());
}

TEST(Parser, TheRepositorysLuaFilesParse) {
  std::filesystem::path src = LUDA_SOURCE_DIR;
  int files = parse_all_under(src / "examples") + parse_all_under(src / "tests" / "lua");
  EXPECT_GT(files, 3);
}

TEST(Parser, AThousandLineFileParsesQuickly) {
  std::string text;
  for (int f = 0; f < 100; ++f) {
    text += "local function kernel" + std::to_string(f) +
            "(x, y, out, n)\n"
            "  local i = cuda.grid(1)\n"
            "  local s = 0.0\n"
            "  for k = 0, n - 1 do\n"
            "    s = s + x[i][k] * y[k] / (1 + math.sqrt(k * 0.5))\n"
            "  end\n"
            "  if i < #out and s > 0 then out[i] = s * 2 ^ -3 else out[i] = -s end\n"
            "  return s, i // 2 % 7\n"
            "end\n\n";
  }
  auto source = std::make_shared<Source>("big.lua", text);
  ASSERT_EQ(source->line_count(), 1001);
  double best = 1e9;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto ast = parse_chunk(source);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_EQ(ast->functions().size(), 100u);
  }
  std::printf("1000 lines: %.3f ms\n", best);
  EXPECT_LT(best, 100.0);  // a loose bound that even an unoptimized, sanitized build meets
}

}  // namespace
}  // namespace luda::dsl

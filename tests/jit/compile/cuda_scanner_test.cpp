// The tokens of CUDA C++ text: literals whole, comments as gaps, directives reported,
// offsets that give the source back.
#include "jit/compile/cuda_scanner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "jit/compile/cpu_prelude.h"

namespace luda::jit {
namespace {

using Kind = CudaToken::Kind;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Identifier: return "id";
    case Kind::Number: return "num";
    case Kind::String: return "str";
    case Kind::Char: return "chr";
    case Kind::HeaderName: return "hdr";
    case Kind::Punctuator: return "punct";
    case Kind::DirectiveStart: return "#";
    case Kind::DirectiveEnd: return "end";
    case Kind::End: return "eof";
  }
  return "?";
}

// "kind:text" for each token, the text as the source has it.
std::vector<std::string> shown(std::string_view source) {
  std::vector<std::string> out;
  for (const CudaToken& t : scan_cuda(source))
    out.push_back(std::string(kind_name(t.kind)) + ":" + std::string(t.text(source)));
  return out;
}

using Shown = std::vector<std::string>;

// The tokens in order, within the source, and the gaps between them only blanks and
// comments: the gaps with the tokens' texts give the source back, and a gap alone scans
// to no token.
void expect_tokens_tile(std::string_view source) {
  std::string rebuilt;
  std::size_t previous = 0;
  for (const CudaToken& t : scan_cuda(source)) {
    ASSERT_LE(previous, t.begin) << "tokens overlap at " << t.begin;
    ASSERT_LE(t.begin, t.end);
    ASSERT_LE(t.end, source.size());
    if (t.kind != Kind::DirectiveEnd) {
      ASSERT_LT(t.begin, t.end) << "an empty " << kind_name(t.kind) << " at " << t.begin;
    }
    std::string_view gap = source.substr(previous, t.begin - previous);
    EXPECT_TRUE(scan_cuda(gap).empty()) << "tokens in the gap before offset " << t.begin;
    rebuilt += gap;
    rebuilt += t.text(source);
    previous = t.end;
  }
  rebuilt += source.substr(previous);
  EXPECT_EQ(rebuilt, source);
}

TEST(CudaScanner, LiteralsOfEveryForm) {
  EXPECT_EQ(shown(R"(x = 1'000'000 + 0x1p-3f + .5e+3 + 1e-5 + 0b1010u + 12_km + 3.f;)"),
            (Shown{"id:x", "punct:=", "num:1'000'000", "punct:+", "num:0x1p-3f", "punct:+", "num:.5e+3", "punct:+",
                   "num:1e-5", "punct:+", "num:0b1010u", "punct:+", "num:12_km", "punct:+", "num:3.f", "punct:;"}));
  // Every prefix; a user-defined suffix belongs to its literal.
  EXPECT_EQ(shown(R"(L"w" u8"8" u"16" U"32" "plain"_s "a\"b\\")"),
            (Shown{R"(str:L"w")", R"(str:u8"8")", R"(str:u"16")", R"(str:U"32")", R"(str:"plain"_s)",
                   R"(str:"a\"b\\")"}));
  EXPECT_EQ(shown(R"('a' '\'' '\\' L'w' u8'8' u'6' U'3' 'x'_c '"')"),
            (Shown{"chr:'a'", R"(chr:'\'')", R"(chr:'\\')", "chr:L'w'", "chr:u8'8'", "chr:u'6'", "chr:U'3'",
                   "chr:'x'_c", R"(chr:'"')"}));
  // Raw strings with and without a delimiter: quotes, backslashes, newlines, a wrong
  // closing and a comment's opening are text.
  std::string raw = "R\"(a\"b\\)\" u8R\"xy(one )x\" )xy\"\n two LR\"(\\\n)\" uR\"(/* // \")\" UR\"d(\n)d\"_s";
  EXPECT_EQ(shown(raw), (Shown{"str:R\"(a\"b\\)\"", "str:u8R\"xy(one )x\" )xy\"", "id:two", "str:LR\"(\\\n)\"",
                               "str:uR\"(/* // \")\"", "str:UR\"d(\n)d\"_s"}));
  // A raw string's text keeps its splices: a backslash-newline is not removed there.
  std::vector<CudaToken> kept = scan_cuda("R\"(a\\\nb)\"");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_FALSE(kept[0].spliced);
  EXPECT_EQ(kept[0].spelling("R\"(a\\\nb)\""), "R\"(a\\\nb)\"");
  // No valid delimiter (17 characters, a blank): the prefix is a name, the quote starts
  // an ordinary string.
  EXPECT_EQ(shown(R"(R"abcdefghijklmnopq(x)abcdefghijklmnopq" R"a b(c)a b")"),
            (Shown{"id:R", R"(str:"abcdefghijklmnopq(x)abcdefghijklmnopq")", "id:R", R"(str:"a b(c)a b")"}));
  // Unterminated literals end before their newline; an unterminated raw string at the
  // source's end.
  EXPECT_EQ(shown("s = \"open\nt = 'x\nR\"(never closed\n x"),
            (Shown{"id:s", "punct:=", "str:\"open", "id:t", "punct:=", "chr:'x", "str:R\"(never closed\n x"}));
  // Names that are not prefixes, and a name before an apostrophe.
  EXPECT_EQ(shown(R"(LL"a" u16"b" x'y')"), (Shown{"id:LL", R"(str:"a")", "id:u16", R"(str:"b")", "id:x", "chr:'y'"}));
}

TEST(CudaScanner, PunctuatorsByMaximalMunch) {
  EXPECT_EQ(shown("a->b>>=c<=>d...e::f##g<<<h>>>i.*j->*k&&l||m++--n!=o"),
            (Shown{"id:a",     "punct:->", "id:b", "punct:>>=", "id:c",     "punct:<=>", "id:d",     "punct:...",
                   "id:e",     "punct:::", "id:f", "punct:##",  "id:g",     "punct:<<",  "punct:<",  "id:h",
                   "punct:>>", "punct:>",  "id:i", "punct:.*",  "id:j",     "punct:->*", "id:k",     "punct:&&",
                   "id:l",     "punct:||", "id:m", "punct:++",  "punct:--", "id:n",      "punct:!=", "id:o"}));
  EXPECT_EQ(shown("a..b @ $ `"), (Shown{"id:a", "punct:.", "punct:.", "id:b", "punct:@", "punct:$", "punct:`"}));
}

TEST(CudaScanner, CommentsAreGaps) {
  EXPECT_EQ(shown("a /* one\n two * / */ b // three\nc/**/d/*/ e */f"),
            (Shown{"id:a", "id:b", "id:c", "id:d", "id:f"}));
  // A line splice carries a // comment on to the next line, as the compiler reads it.
  EXPECT_EQ(shown("a // comment \\\n__global__ void hidden();\nb"), (Shown{"id:a", "id:b"}));
  EXPECT_EQ(shown("a // comment \\\r\nhidden\r\nb"), (Shown{"id:a", "id:b"}));
  // A splice between the slashes still opens a comment; an unterminated /* ends the source.
  EXPECT_EQ(shown("a /\\\n/ hidden\nb /\\\n* hidden *\\\n/ c /* open"), (Shown{"id:a", "id:b", "id:c"}));
  // A comment's text is no literal: its quotes open nothing.
  EXPECT_EQ(shown("a // don't\nb /* \" */ c"), (Shown{"id:a", "id:b", "id:c"}));
}

TEST(CudaScanner, DirectivesAreReported) {
  std::string source = "#include <cooperative_groups.h>\n"
                       "  #  define TWICE(x) \\\n    ((x) + \\\n     (x))\n"
                       "#if A /* a comment\n over lines */ && B // a note\n"
                       "int x # y;\n"
                       "#endif";
  EXPECT_EQ(shown(source), (Shown{"#:#",      "id:include", "hdr:<cooperative_groups.h>",
                                  "end:",     "#:#",        "id:define",
                                  "id:TWICE", "punct:(",    "id:x",
                                  "punct:)",  "punct:(",    "punct:(",
                                  "id:x",     "punct:)",    "punct:+",
                                  "punct:(",  "id:x",       "punct:)",
                                  "punct:)",  "end:",       "#:#",
                                  "id:if",    "id:A",       "punct:&&",
                                  "id:B",     "end:",       "id:int",
                                  "id:x",     "punct:#",    "id:y",
                                  "punct:;",  "#:#",        "id:endif",
                                  "end:"}));
  std::vector<CudaToken> t = scan_cuda(source);
  // The directive's tokens, its start and end included, are marked; the end is empty, at
  // the newline that ends it (after its continuations), or at the source's end.
  Shown outside;
  for (const CudaToken& token : t)
    if (!token.in_directive) outside.push_back(std::string(token.text(source)));
  EXPECT_EQ(outside, (Shown{"int", "x", "#", "y", ";"}));
  EXPECT_EQ(t[3].begin, source.find('\n'));
  EXPECT_EQ(t[3].end, t[3].begin);
  EXPECT_EQ(t[19].begin, source.find("(x))\n") + 4);
  EXPECT_EQ(t.back().begin, source.size());
  // An #include's <name> is one token only there; a line without '>' has none.
  EXPECT_EQ(shown("#include <a/b.h> // c\n#include \"d.h\"\n#include <e\nx < y > z\n#define F <g.h>"),
            (Shown{"#:#",     "id:include", "hdr:<a/b.h>", "end:",    "#:#",     "id:include", "str:\"d.h\"",
                   "end:",    "#:#",        "id:include",  "punct:<", "id:e",    "end:",       "id:x",
                   "punct:<", "id:y",       "punct:>",     "id:z",    "#:#",     "id:define",  "id:F",
                   "punct:<", "id:g",       "punct:.",     "id:h",    "punct:>", "end:"}));
  // A '#' after a comment that starts the line starts a directive; after a comment that
  // spans lines from an earlier token, it does not (the comment is one blank).
  EXPECT_EQ(shown("/* c */ # a\nx /* \n */ # b"), (Shown{"#:#", "id:a", "end:", "id:x", "punct:#", "id:b"}));
}

TEST(CudaScanner, LineSplicesJoinWhatTheySplit) {
  std::string source = "__sync\\\nthreads(); 1'0\\\r\n00; \"a\\\nb\" \\\n x";
  std::vector<CudaToken> t = scan_cuda(source);
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[0].kind, Kind::Identifier);
  EXPECT_TRUE(t[0].spliced);
  EXPECT_EQ(t[0].text(source), "__sync\\\nthreads");
  EXPECT_EQ(t[0].spelling(source), "__syncthreads");
  EXPECT_TRUE(t[0].spells(source, "__syncthreads"));
  EXPECT_EQ(t[4].spelling(source), "1'000");
  EXPECT_EQ(t[6].spelling(source), "\"ab\"");
  EXPECT_FALSE(t[7].spliced);  // a splice before a token is the gap's
  EXPECT_EQ(t[7].text(source), "x");
  EXPECT_FALSE(t[1].spliced);
  EXPECT_EQ(t[1].spelling(source), "(");
}

TEST(CudaScanner, OffsetsGiveTheSourceBack) {
  expect_tokens_tile("");
  expect_tokens_tile("\\\n");
  expect_tokens_tile("#");
  expect_tokens_tile("a\\");
  expect_tokens_tile("R\"(x)\" R\"a(\" u8'\\\n' \"\\\n\" #x\n#define a b \\\n c /* d \n e */ f\n// g \\\n h\n");
  // The cpu prelude of generated kernels: thousands of lines of real C++ and directives.
  std::string_view prelude = cpu_generated_prelude();
  expect_tokens_tile(prelude);
  EXPECT_GT(scan_cuda(prelude).size(), 10000u);
  // Random text over the characters that open and close tokens, comments and directives.
  const std::string alphabet = "aRuL8_0'\"\\\n\r/*#<>()x. +-e";
  std::mt19937 random(20261207);
  for (int round = 0; round < 2000; ++round) {
    std::string text(random() % 64, ' ');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    expect_tokens_tile(text);
    if (testing::Test::HasFailure()) {
      ADD_FAILURE() << "source: " << testing::PrintToString(text);
      return;
    }
  }
}

// Each character is read a bounded number of times: sources are users' and may be built
// to make a backtracking scanner take quadratic time. A megabyte of each runs in well
// under a second; a quadratic scan would take hours.
TEST(CudaScanner, RunsInOnePass) {
  const std::size_t n = 1 << 20;
  auto repeated = [&](std::string_view piece) {
    std::string s;
    while (s.size() < n) s += piece;
    return s;
  };
  auto t0 = std::chrono::steady_clock::now();
  for (const std::string& source :
       {repeated("R\"0123456789abcdef("), repeated("R\"0123456789abcdefg"), repeated("/*"), repeated("#include <a\n"),
        repeated("'"), repeated("\""), repeated("\\\n"), repeated("1'"), repeated("a"), repeated("// \\\n"),
        repeated("R\"a(R\"a(b)a"), std::string(n, '.') + "5"}) {
    std::vector<CudaToken> t = scan_cuda(source);
    EXPECT_LE(t.size(), source.size() + 1);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

}  // namespace
}  // namespace luda::jit

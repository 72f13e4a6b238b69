// The one reporter: exact text of located errors, carets and underlines, and the line
// table under it.
#include <gtest/gtest.h>

#include "dsl/diagnostics.h"
#include "dsl/source.h"

namespace luda::dsl {
namespace {

TEST(Source, LocatesOffsetsAcrossEveryLineBreakKind) {
  Source s("t.lua", "ab\ncd\r\nef\n\rgh\rij");
  EXPECT_EQ(s.line_count(), 5);
  EXPECT_EQ(s.locate(0), (Location{1, 1}));
  EXPECT_EQ(s.locate(2), (Location{1, 3}));  // the '\n' itself ends line 1
  EXPECT_EQ(s.locate(3), (Location{2, 1}));
  EXPECT_EQ(s.locate(7), (Location{3, 1}));
  EXPECT_EQ(s.locate(11), (Location{4, 1}));
  EXPECT_EQ(s.locate(14), (Location{5, 1}));
  EXPECT_EQ(s.locate(16), (Location{5, 3}));  // the end of the text
  EXPECT_EQ(s.line_text(1), "ab");
  EXPECT_EQ(s.line_text(2), "cd");
  EXPECT_EQ(s.line_text(3), "ef");
  EXPECT_EQ(s.line_text(4), "gh");
  EXPECT_EQ(s.line_text(5), "ij");
  EXPECT_EQ(s.line_text(6), "");
  EXPECT_EQ(s.offset_of({3, 2}), 8u);
  for (std::size_t off = 0; off <= s.text().size(); ++off) {
    Location at = s.locate(off);
    if (s.text()[off] != '\n' && s.text()[off] != '\r') {
      EXPECT_EQ(s.offset_of(at), off) << off;
    }
  }
}

TEST(Diagnostics, CaretUnderTheOperatorOperandsUnderlined) {
  // A type error, byte for byte: leading blanks of the line replaced by 4 spaces,
  // the caret under the operator, the operands underlined.
  Source s("gauss.lua", std::string(11, '\n') + "  return (x > 0) + y\n");
  SourceError e = source_error(s, {12, 18}, error_kind::type, "cannot apply '+' to bool and float32",
                               Span{{12, 10}, {12, 20}});
  EXPECT_STREQ(e.what(), "gauss.lua:12:18: type error: cannot apply '+' to bool and float32\n"
                         "    return (x > 0) + y\n"
                         "           ~~~~~~~~^~~");
  EXPECT_EQ(e.file(), "gauss.lua");
  EXPECT_EQ(e.line(), 12);
  EXPECT_EQ(e.column(), 18);
  EXPECT_EQ(e.kind(), "type error");
  EXPECT_EQ(e.message(), "cannot apply '+' to bool and float32");
  EXPECT_EQ(e.headline(), "gauss.lua:12:18: type error: cannot apply '+' to bool and float32");
}

TEST(Diagnostics, CaretWithoutRange) {
  Source s("k.lua", "local x = 1\n\tlocal y = x + z\n");
  EXPECT_STREQ(source_error(s, {2, 16}, error_kind::name, "unknown name 'z'").what(),
               "k.lua:2:16: name error: unknown name 'z'\n"
               "    local y = x + z\n"
               "                  ^");
}

TEST(Diagnostics, TabsInsideTheLineCountAsOneColumn) {
  Source s("k.lua", "a\t=\tb + c");
  EXPECT_STREQ(source_error(s, {1, 7}, "type error", "bad").what(), "k.lua:1:7: type error: bad\n"
                                                                    "    a = b + c\n"
                                                                    "          ^");
}

TEST(Diagnostics, RangesSpanningLinesAreCutAtTheCaretLine) {
  Source s("k.lua", "x = f(a,\n      b) + g(c,\n  d)");
  // the range starts on line 1 and ends on line 3; the caret is on line 2
  EXPECT_STREQ(source_error(s, {2, 10}, "type error", "bad", Span{{1, 5}, {3, 4}}).what(),
               "k.lua:2:10: type error: bad\n"
               "    b) + g(c,\n"
               "    ~~~^~~~~~");
}

TEST(Diagnostics, CaretPastTheEndOfTheLine) {
  // A missing token: the caret sits one past the last character.
  Source s("k.lua", "local x =");
  EXPECT_STREQ(source_error(s, {1, 10}, error_kind::syntax, "unexpected symbol near <eof>").what(),
               "k.lua:1:10: syntax error: unexpected symbol near <eof>\n"
               "    local x =\n"
               "             ^");
}

TEST(Diagnostics, UnknownLocationOrBlankLineShowsTheHeadlineOnly) {
  Source s("k.lua", "x = 1\n\n");
  EXPECT_STREQ(source_error(s, {2, 1}, "type error", "bad").what(), "k.lua:2:1: type error: bad");
  EXPECT_STREQ(source_error(s, {}, "unsupported", "no").what(), "k.lua: unsupported: no");
  EXPECT_STREQ(source_error("sig", Location{1, 9}, error_kind::signature, "unknown type 'flaot32'").what(),
               "sig:1:9: signature error: unknown type 'flaot32'");
  EXPECT_EQ(caret_lines(s, {1, 3}), "    x = 1\n      ^");
}

TEST(Diagnostics, SourceErrorIsAStdException) {
  Source s("k.lua", "x");
  try {
    throw source_error(s, {1, 1}, "type error", "bad");
  } catch (const std::exception& e) {  // what jit/ and stdlib/ catch
    EXPECT_STREQ(e.what(), "k.lua:1:1: type error: bad\n    x\n    ^");
  }
}

TEST(Diagnostics, InternalCheckIsALogicError) {
  try {
    LUDA_DSL_CHECK(1 + 1 == 3);
    FAIL() << "no throw";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("internal error: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("1 + 1 == 3"), std::string::npos);
  }
}

}  // namespace
}  // namespace luda::dsl

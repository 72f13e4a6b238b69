// The lexer on every kind of Lua 5.4 token, numerals and escapes checked against the
// values Lua 5.4 gives them, and its errors' exact text.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dsl/diagnostics.h"
#include "dsl/lexer.h"

namespace luda::dsl {
namespace {

std::vector<Token> lex(const std::string& text) {
  Source source("t.lua", text);
  Lexer lexer(source);
  std::vector<Token> out;
  for (;;) {
    Token t;
    lexer.next(t);
    // raw points into `source`, which dies here: keep a copy in `string` for names/symbols.
    if (t.type != tok::String) t.string = std::string(t.raw);
    t.raw = {};
    bool eof = t.type == tok::Eof;
    out.push_back(std::move(t));
    if (eof) return out;
  }
}

std::string lex_error(const std::string& text) {
  try {
    lex(text);
  } catch (const SourceError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<int> types(const std::string& text) {
  std::vector<int> out;
  for (const Token& t : lex(text)) out.push_back(t.type);
  return out;
}

TEST(Lexer, EverySymbolAndReservedWord) {
  EXPECT_EQ(types("+ - * / % ^ # & ~ | << >> // == ~= <= >= < > = ( ) { } [ ] :: ; : , . .. ..."),
            (std::vector<int>{'+',      '-',         '*',       '/',     '%',     '^',     '#',          '&', '~', '|',
                              tok::Shl, tok::Shr,    tok::IDiv, tok::Eq, tok::Ne, tok::Le, tok::Ge,      '<', '>', '=',
                              '(',      ')',         '{',       '}',     '[',     ']',     tok::DbColon, ';', ':', ',',
                              '.',      tok::Concat, tok::Dots, tok::Eof}));
  EXPECT_EQ(types("and break do else elseif end false for function goto if in local nil not or "
                  "repeat return then true until while"),
            (std::vector<int>{tok::And,   tok::Break, tok::Do,       tok::Else,  tok::Elseif, tok::End,
                              tok::False, tok::For,   tok::Function, tok::Goto,  tok::If,     tok::In,
                              tok::Local, tok::Nil,   tok::Not,      tok::Or,    tok::Repeat, tok::Return,
                              tok::Then,  tok::True,  tok::Until,    tok::While, tok::Eof}));
  // Near-misses of reserved words are names; '~' then '=' with a space is two tokens.
  EXPECT_EQ(types("ends _end End goto_ x1 ~ ="),
            (std::vector<int>{tok::Name, tok::Name, tok::Name, tok::Name, tok::Name, '~', '=', tok::Eof}));
}

TEST(Lexer, TokenLocations) {
  auto ts = lex("local x\n  = 10 -- c\n\t[[a\nb]] y");
  ASSERT_EQ(ts.size(), 7u);
  EXPECT_EQ(ts[0].loc, (Location{1, 1}));
  EXPECT_EQ(ts[0].end, (Location{1, 5}));
  EXPECT_EQ(ts[1].loc, (Location{1, 7}));
  EXPECT_EQ(ts[2].loc, (Location{2, 3}));
  EXPECT_EQ(ts[3].loc, (Location{2, 5}));
  EXPECT_EQ(ts[3].end, (Location{2, 6}));
  EXPECT_EQ(ts[4].loc, (Location{3, 2}));  // a tab is one column
  EXPECT_EQ(ts[4].end, (Location{4, 3}));  // a long string ends on a later line
  EXPECT_EQ(ts[5].loc, (Location{4, 5}));
  EXPECT_EQ(ts[6].type, tok::Eof);
  EXPECT_EQ(ts[6].loc, (Location{4, 6}));  // just after the last token
}

TEST(Lexer, IntegerNumerals) {
  struct Case {
    const char* text;
    std::int64_t value;
  };
  for (Case c : {Case{"0", 0}, Case{"3", 3}, Case{"345", 345}, Case{"0xff", 255}, Case{"0XBEBADA", 0xBEBADA},
                 Case{"9223372036854775807", std::numeric_limits<std::int64_t>::max()},
                 Case{"0x7fffffffffffffff", std::numeric_limits<std::int64_t>::max()},
                 // hex integers wrap around modulo 2^64 (Lua: 0xffffffffffffffff == -1)
                 Case{"0xffffffffffffffff", -1}, Case{"0x10000000000000001", 1}}) {
    auto ts = lex(c.text);
    ASSERT_EQ(ts[0].type, tok::Integer) << c.text;
    EXPECT_EQ(ts[0].integer, c.value) << c.text;
    EXPECT_EQ(ts[0].string, c.text);
  }
}

TEST(Lexer, FloatNumerals) {
  struct Case {
    const char* text;
    double value;
  };
  for (Case c : {Case{"3.0", 3.0}, Case{"3.1416", 3.1416}, Case{"314.16e-2", 3.1416}, Case{"0.31416E1", 3.1416},
                 Case{"34e1", 340.0}, Case{".5", 0.5}, Case{"5.", 5.0}, Case{"1e+2", 100.0}, Case{"0x0.1E", 0.1171875},
                 Case{"0xA23p-4", 162.1875}, Case{"0x.8", 0.5}, Case{"0X1.921FB54442D18P+1", 3.141592653589793},
                 Case{"0x1p4", 16.0},
                 // a decimal integer numeral past int64 is read as a float, as Lua does
                 Case{"9223372036854775808", 9223372036854775808.0}, Case{"1e400", HUGE_VAL}}) {
    auto ts = lex(c.text);
    ASSERT_EQ(ts[0].type, tok::Float) << c.text;
    EXPECT_DOUBLE_EQ(ts[0].number, c.value) << c.text;
    EXPECT_EQ(ts[1].type, tok::Eof) << c.text;
  }
  // '..' after a name is concatenation; a numeral takes dots greedily as Lua's does.
  EXPECT_EQ(types("a..b"), (std::vector<int>{tok::Name, tok::Concat, tok::Name, tok::Eof}));
}

TEST(Lexer, MalformedNumbers) {
  EXPECT_EQ(lex_error("x = 3x"), "t.lua:1:5: syntax error: malformed number near '3x'\n    x = 3x\n        ^~");
  EXPECT_EQ(lex_error("x = 3..2"), "t.lua:1:5: syntax error: malformed number near '3..2'\n    x = 3..2\n        ^~~~");
  EXPECT_EQ(lex_error("0x"), "t.lua:1:1: syntax error: malformed number near '0x'\n    0x\n    ^~");
  EXPECT_EQ(lex_error("1e"), "t.lua:1:1: syntax error: malformed number near '1e'\n    1e\n    ^~");
  EXPECT_EQ(lex_error("0x1p"), "t.lua:1:1: syntax error: malformed number near '0x1p'\n    0x1p\n    ^~~~");
  EXPECT_EQ(lex_error("1.2.3"), "t.lua:1:1: syntax error: malformed number near '1.2.3'\n    1.2.3\n    ^~~~~");
}

TEST(Lexer, ShortStringEscapes) {
  auto value = [](const std::string& text) {
    auto ts = lex(text);
    EXPECT_EQ(ts[0].type, tok::String) << text;
    return ts[0].string;
  };
  EXPECT_EQ(value(R"("a\a\b\f\n\r\t\v\\\"\'z")"), "a\a\b\f\n\r\t\v\\\"'z");
  EXPECT_EQ(value(R"('it''s')"), "it");
  EXPECT_EQ(value(R"("\x41\x62\xff")"), "Ab\xff");
  EXPECT_EQ(value(R"("\65\066\0067\255")"), std::string("AB\x06"
                                                        "7\xff"));
  EXPECT_EQ(value(R"("\0")"), std::string(1, '\0'));
  EXPECT_EQ(value("\"a\\z  \n\t  b\""), "ab");  // \z skips blanks and line breaks
  EXPECT_EQ(value("\"a\\\nb\""), "a\nb");       // backslash-newline
  EXPECT_EQ(value("\"a\\\r\nb\""), "a\nb");     // ... with \r\n as one break
  EXPECT_EQ(value(R"("\u{48}\u{e9}\u{20AC}\u{10FFFF}")"), "H\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf");
  EXPECT_EQ(value(R"("\u{7FFFFFFF}")"), "\xfd\xbf\xbf\xbf\xbf\xbf");  // Lua's 6-byte extension
  auto ts = lex(R"(x"\65" )");
  EXPECT_EQ(ts[1].loc, (Location{1, 2}));
  EXPECT_EQ(ts[1].end, (Location{1, 6}));
}

TEST(Lexer, LongStringsAndComments) {
  auto ts = lex(
      "--[==[ a comment ]] still\n]==] [[\nfirst newline skipped]] [=[a]]b]=] --[[x]] [==[\r\nx\r\ny]==] -- [[ short");
  ASSERT_EQ(ts.size(), 4u);
  EXPECT_EQ(ts[0].string, "first newline skipped");
  EXPECT_TRUE(ts[0].long_string);
  EXPECT_EQ(ts[0].loc, (Location{2, 6}));
  EXPECT_EQ(ts[1].string, "a]]b");
  EXPECT_EQ(ts[2].string, "x\ny");  // any line break reads as \n
  EXPECT_EQ(ts[2].end, (Location{5, 5}));
  EXPECT_EQ(ts[3].type, tok::Eof);
  // '[=' not followed by '[' in a comment is a short comment
  EXPECT_EQ(types("--[= x\ny"), (std::vector<int>{tok::Name, tok::Eof}));
}

TEST(Lexer, ShebangLineIsSkipped) {
  auto ts = lex("#!/usr/bin/env lua\nreturn 1");
  EXPECT_EQ(ts[0].type, tok::Return);
  EXPECT_EQ(ts[0].loc, (Location{2, 1}));
}

TEST(Lexer, StringErrors) {
  EXPECT_EQ(lex_error("s = \"abc\nx"),
            "t.lua:1:5: syntax error: unfinished string near '\"abc'\n    s = \"abc\n        ^~~~");
  EXPECT_EQ(lex_error("s = 'abc"), "t.lua:1:5: syntax error: unfinished string near <eof>\n    s = 'abc\n        ^~~~");
  EXPECT_EQ(lex_error(R"(s = "ab\q")"),
            "t.lua:1:9: syntax error: invalid escape sequence near '\"ab\\q'\n    s = \"ab\\q\"\n        ~~~~^");
  EXPECT_EQ(lex_error(R"(s = "\xg1")"),
            "t.lua:1:8: syntax error: hexadecimal digit expected near '\"\\xg'\n    s = \"\\xg1\"\n        ~~~^");
  EXPECT_EQ(lex_error(R"(s = "\300")"),
            "t.lua:1:10: syntax error: decimal escape too large near '\"\\300\"'\n    s = \"\\300\"\n        ~~~~~^");
  EXPECT_EQ(lex_error(R"(s = "\u48")"),
            "t.lua:1:8: syntax error: missing '{' in \\u{xxxx} near '\"\\u4'\n    s = \"\\u48\"\n        ~~~^");
  EXPECT_EQ(
      lex_error(R"(s = "\u{48")"),
      "t.lua:1:11: syntax error: missing '}' in \\u{xxxx} near '\"\\u{48\"'\n    s = \"\\u{48\"\n        ~~~~~~^");
  EXPECT_EQ(lex_error(R"(s = "\u{80000000}")"),
            "t.lua:1:16: syntax error: UTF-8 value too large near '\"\\u{80000000'\n"
            "    s = \"\\u{80000000}\"\n        ~~~~~~~~~~~^");
  EXPECT_EQ(
      lex_error("s = [==[ abc\n ]=]"),
      "t.lua:1:5: syntax error: unfinished long string (no closing ']==]') near <eof>\n    s = [==[ abc\n        ^");
  EXPECT_EQ(
      lex_error("x = 1 --[[ comment"),
      "t.lua:1:7: syntax error: unfinished long comment (no closing ']]') near <eof>\n    x = 1 --[[ comment\n          ^");
  EXPECT_EQ(lex_error("s = [== x"),
            "t.lua:1:5: syntax error: invalid long string delimiter near '[=='\n    s = [== x\n        ^~~");
}

TEST(Lexer, NearTexts) {
  EXPECT_EQ(token_text(tok::End), "'end'");
  EXPECT_EQ(token_text(tok::Eof), "<eof>");
  EXPECT_EQ(token_text(tok::Name), "<name>");
  EXPECT_EQ(token_text('+'), "'+'");
  EXPECT_EQ(token_text(1), "'<\\1>'");
  Source source("t.lua", "abc 'q' 1.5 ==");
  Lexer lexer(source);
  Token t;
  std::vector<std::string> near;
  for (lexer.next(t); t.type != tok::Eof; lexer.next(t)) near.push_back(near_text(t));
  EXPECT_EQ(near, (std::vector<std::string>{"'abc'", "''q''", "'1.5'", "'=='"}));
}

}  // namespace
}  // namespace luda::dsl

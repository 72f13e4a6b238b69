// The Lua 5.4 lexer (llex.c's language): names, the 22 reserved words, every symbol,
// numerals (decimal and hex, integer and float, hex floats with 'p' exponents, a decimal
// integer that overflows int64 read as a float, a hex integer wrapping around), short
// strings with all escapes (\a \b \f \n \r \t \v \\ \" \' \newline \z \xXX \ddd \u{XXX}),
// long strings and comments of any level. A first line starting with '#' is skipped.
// Errors are SourceErrors in Lua's words ("malformed number near '3x'").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dsl/source.h"

namespace luda::dsl {

// A token type: a single-character symbol is its character ('+', '(', ...); the others
// follow. ORDER RESERVED: token_text() in lexer.cpp follows this order.
namespace tok {
enum : int {
  // reserved words
  And = 257,
  Break,
  Do,
  Else,
  Elseif,
  End,
  False,
  For,
  Function,
  Goto,
  If,
  In,
  Local,
  Nil,
  Not,
  Or,
  Repeat,
  Return,
  Then,
  True,
  Until,
  While,
  // multi-character symbols
  IDiv,
  Concat,
  Dots,
  Eq,
  Ge,
  Le,
  Ne,
  Shl,
  Shr,
  DbColon,
  // the rest
  Eof,
  Float,
  Integer,
  Name,
  String,
};
}  // namespace tok

struct Token {
  int type = tok::Eof;
  Location loc;              // first character
  Location end;              // last character (Eof: one past the last token)
  std::string_view raw;      // the text as written (a view into the Source)
  std::int64_t integer = 0;  // tok::Integer
  double number = 0;         // tok::Float
  std::string string;        // tok::String: decoded value
  bool long_string = false;  // tok::String written with long brackets
};

// How a token type reads in messages: "'end'", "'=='", "<eof>", "<name>", "'+'".
std::string token_text(int type);
// How a token reads after "near": its raw text quoted for names, strings and numerals
// ('x', '"abc"', '3.5'), else token_text.
std::string near_text(const Token& t);

class Lexer {
 public:
  explicit Lexer(const Source& source);
  // The next token; tok::Eof forever at the end. Throws SourceError (kind "syntax error").
  void next(Token& out);

 private:
  [[noreturn]] void fail(std::size_t at, std::string_view message, std::size_t near_from, std::size_t near_to,
                         bool near_eof = false);
  void newline();  // at a line break: consume it ("\r\n" and "\n\r" count once)
  Location here() const;
  Location at(std::size_t offset) const;  // offset on the current line
  int long_bracket_level();               // at '[': level of "[==[", -1 for "[" alone, -(2 + n) for n '=' then no '['
  void read_long_string(Token* out, int level, std::size_t start);
  void read_string(Token& out, char quote);
  void read_numeral(Token& out);
  void skip_whitespace_and_comments();

  const Source& source_;
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::size_t line_start_ = 0;
  Location last_end_{1, 0};  // end of the previous token (where Eof is placed)
};

}  // namespace luda::dsl

#include "dsl/lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "dsl/diagnostics.h"

namespace luda::dsl {

namespace {

// ORDER RESERVED
constexpr const char* kTokenNames[] = {
    "and",   "break", "do",    "else",     "elseif",    "end",    "false",    "for",    "function", "goto",
    "if",    "in",    "local", "nil",      "not",       "or",     "repeat",   "return", "then",     "true",
    "until", "while", "//",    "..",       "...",       "==",     ">=",       "<=",     "~=",       "<<",
    ">>",    "::",    "<eof>", "<number>", "<integer>", "<name>", "<string>",
};
constexpr int kFirstReserved = tok::And;
constexpr int kReservedCount = tok::While - tok::And + 1;

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_xdigit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char c) { return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }
bool is_newline(char c) { return c == '\n' || c == '\r'; }

// Reserved word or tok::Name. Switching on the length keeps this to one or two compares.
int classify_name(std::string_view s) {
  if (s.size() < 2 || s.size() > 8) return tok::Name;
  for (int i = 0; i < kReservedCount; ++i) {
    const char* word = kTokenNames[i];
    if (word[0] == s[0] && std::strlen(word) == s.size() && std::memcmp(word, s.data(), s.size()) == 0)
      return kFirstReserved + i;
  }
  return tok::Name;
}

// UTF-8 encoding extended to 6 bytes for values up to 2^31 (lobject.c luaO_utf8esc).
void append_utf8(std::string& out, unsigned long x) {
  if (x < 0x80) {
    out.push_back(static_cast<char>(x));
    return;
  }
  char buf[8];
  int n = 1;
  unsigned int mfb = 0x3f;  // largest value that fits in the first byte
  do {
    buf[8 - (n++)] = static_cast<char>(0x80 | (x & 0x3f));
    x >>= 6;
    mfb >>= 1;
  } while (x > mfb);
  buf[8 - n] = static_cast<char>((~mfb << 1) | x);
  out.append(buf + 8 - n, static_cast<std::size_t>(n));
}

}  // namespace

std::string token_text(int type) {
  if (type < kFirstReserved) {
    if (type >= 32 && type < 127) return fmt::format("'{}'", static_cast<char>(type));
    return fmt::format("'<\\{}>'", type);
  }
  const char* s = kTokenNames[type - kFirstReserved];
  if (type < tok::Eof) return fmt::format("'{}'", s);
  return s;
}

std::string near_text(const Token& t) {
  switch (t.type) {
    case tok::Name:
    case tok::String:
    case tok::Integer:
    case tok::Float: return fmt::format("'{}'", t.raw);
    default: return token_text(t.type);
  }
}

Lexer::Lexer(const Source& source) : source_(source), text_(source.text()), line_start_(source.hidden_prefix()) {
  if (!text_.empty() && text_[0] == '#') {  // "#!/usr/bin/env lua": skipped as luaL_loadfile does
    while (pos_ < text_.size() && !is_newline(text_[pos_])) ++pos_;
  }
}

Location Lexer::here() const { return at(pos_); }
Location Lexer::at(std::size_t offset) const {
  // A place inside a Source's hidden prefix (line 1 only) is column 1.
  return {line_, offset >= line_start_ ? static_cast<int>(offset - line_start_) + 1 : 1};
}

void Lexer::newline() {
  char c = text_[pos_++];
  if (pos_ < text_.size() && is_newline(text_[pos_]) && text_[pos_] != c) ++pos_;
  ++line_;
  line_start_ = pos_;
}

void Lexer::fail(std::size_t where, std::string_view message, std::size_t near_from, std::size_t near_to,
                 bool near_eof) {
  // The caret sits at `where`, the underline runs from the token's start; both may lie on
  // an earlier line than the lexer is on now (a string left open), so locate by offset.
  Location caret = source_.locate(where);
  Location begin = source_.locate(near_from);
  Location last = near_to > near_from ? source_.locate(near_to - 1) : begin;
  std::string near = near_eof ? std::string("<eof>")
                              : fmt::format("'{}'", text_.substr(near_from, near_to - near_from));
  throw source_error(source_, caret, error_kind::syntax, fmt::format("{} near {}", message, near),
                     Span{begin, std::max(last, caret)});
}

int Lexer::long_bracket_level() {
  // at '[': "[==[" -> 2, "[" -> -1, "[==" not followed by '[' -> -(2 + 2)
  std::size_t p = pos_ + 1;
  int level = 0;
  while (p < text_.size() && text_[p] == '=') ++p, ++level;
  if (p < text_.size() && text_[p] == '[') return level;
  return level == 0 ? -1 : -(2 + level);
}

void Lexer::read_long_string(Token* out, int level, std::size_t start) {
  Location open_loc = at(start);                                  // the '[' of a string, the '--' of a comment
  pos_ += static_cast<std::size_t>(level) + 2;                    // "[==["
  if (pos_ < text_.size() && is_newline(text_[pos_])) newline();  // a first newline is skipped
  std::size_t content = pos_;
  std::string value;
  for (;;) {
    if (pos_ >= text_.size()) {
      std::string closing(static_cast<std::size_t>(level) + 2, '=');  // "]==]" (GCC 12 warns on "]" + ...)
      closing.front() = closing.back() = ']';
      throw source_error(source_, open_loc, error_kind::syntax,
                         fmt::format("unfinished long {} (no closing '{}') near <eof>", out ? "string" : "comment",
                                     closing));
    }
    char c = text_[pos_];
    if (c == ']') {
      std::size_t p = pos_ + 1;
      int n = 0;
      while (p < text_.size() && text_[p] == '=') ++p, ++n;
      if (n == level && p < text_.size() && text_[p] == ']') {
        if (out) value.append(text_.substr(content, pos_ - content));
        pos_ = p + 1;
        break;
      }
      ++pos_;
    } else if (is_newline(c)) {
      // Any line break reads as "\n" inside the string.
      if (out) value.append(text_.substr(content, pos_ - content)).push_back('\n');
      newline();
      content = pos_;
    } else {
      ++pos_;
    }
  }
  if (out) {
    out->type = tok::String;
    out->string = std::move(value);
    out->long_string = true;
    out->raw = text_.substr(start, pos_ - start);
  }
}

void Lexer::read_string(Token& out, char quote) {
  std::size_t start = pos_++;
  std::string& value = out.string;
  value.clear();
  for (;;) {
    if (pos_ >= text_.size()) fail(start, "unfinished string", start, pos_, true);
    char c = text_[pos_];
    if (c == quote) {
      ++pos_;
      break;
    }
    if (is_newline(c)) fail(start, "unfinished string", start, pos_);
    if (c != '\\') {
      value.push_back(c);
      ++pos_;
      continue;
    }
    std::size_t escape = pos_++;  // at the backslash
    // An escape error shows the string up to and including the offending character.
    auto bad = [&](std::string_view message) {
      std::size_t to = pos_ < text_.size() ? pos_ + 1 : pos_;
      fail(pos_ < text_.size() ? pos_ : escape, message, start, to, pos_ >= text_.size());
    };
    if (pos_ >= text_.size()) bad("unfinished string");
    c = text_[pos_];
    switch (c) {
      case 'a':
        value.push_back('\a');
        ++pos_;
        break;
      case 'b':
        value.push_back('\b');
        ++pos_;
        break;
      case 'f':
        value.push_back('\f');
        ++pos_;
        break;
      case 'n':
        value.push_back('\n');
        ++pos_;
        break;
      case 'r':
        value.push_back('\r');
        ++pos_;
        break;
      case 't':
        value.push_back('\t');
        ++pos_;
        break;
      case 'v':
        value.push_back('\v');
        ++pos_;
        break;
      case '\\':
      case '"':
      case '\'':
        value.push_back(c);
        ++pos_;
        break;
      case '\n':
      case '\r':
        value.push_back('\n');
        newline();
        break;
      case 'x': {
        int r = 0;
        for (int i = 0; i < 2; ++i) {
          ++pos_;
          if (pos_ >= text_.size() || !is_xdigit(text_[pos_])) bad("hexadecimal digit expected");
          r = (r << 4) + hex_value(text_[pos_]);
        }
        ++pos_;
        value.push_back(static_cast<char>(r));
        break;
      }
      case 'z': {  // skip the following white space, line breaks included
        ++pos_;
        while (pos_ < text_.size()) {
          char w = text_[pos_];
          if (is_newline(w)) newline();
          else if (w == ' ' || w == '\t' || w == '\v' || w == '\f') ++pos_;
          else break;
        }
        break;
      }
      case 'u': {
        ++pos_;
        if (pos_ >= text_.size() || text_[pos_] != '{') bad("missing '{' in \\u{xxxx}");
        ++pos_;
        if (pos_ >= text_.size() || !is_xdigit(text_[pos_])) bad("hexadecimal digit expected");
        unsigned long r = 0;
        while (pos_ < text_.size() && is_xdigit(text_[pos_])) {
          r = (r << 4) + static_cast<unsigned long>(hex_value(text_[pos_]));
          if (r > 0x7FFFFFFFul) bad("UTF-8 value too large");
          ++pos_;
        }
        if (pos_ >= text_.size() || text_[pos_] != '}') bad("missing '}' in \\u{xxxx}");
        ++pos_;
        append_utf8(value, r);
        break;
      }
      default: {
        if (!is_digit(c)) bad("invalid escape sequence");
        int r = 0;
        for (int i = 0; i < 3 && pos_ < text_.size() && is_digit(text_[pos_]); ++i) r = 10 * r + (text_[pos_++] - '0');
        if (r > 255) bad("decimal escape too large");
        value.push_back(static_cast<char>(r));
        break;
      }
    }
  }
  out.type = tok::String;
  out.long_string = false;
  out.raw = text_.substr(start, pos_ - start);
}

void Lexer::read_numeral(Token& out) {
  // llex.c read_numeral: take every hex digit, '.', and signed exponent; a letter right
  // after the numeral is taken too so that "3x" is one malformed number.
  std::size_t start = pos_;
  bool hex = text_[pos_] == '0' && pos_ + 1 < text_.size() && (text_[pos_ + 1] | 0x20) == 'x';
  char expo = hex ? 'p' : 'e';
  if (hex) pos_ += 2;
  for (;;) {
    if (pos_ >= text_.size()) break;
    char c = text_[pos_];
    if ((c | 0x20) == expo) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    } else if (is_xdigit(c) || c == '.') {
      ++pos_;
    } else {
      break;
    }
  }
  if (pos_ < text_.size() && is_alpha(text_[pos_])) ++pos_;
  std::string_view s = text_.substr(start, pos_ - start);
  out.raw = s;
  auto malformed = [&] { fail(start, "malformed number", start, pos_); };

  bool is_float_form = false;
  for (char c : s.substr(hex ? 2 : 0)) {
    if (c == '.' || (c | 0x20) == expo) is_float_form = true;
    else if (!(hex ? is_xdigit(c) : is_digit(c)) && c != '+' && c != '-') malformed();
  }
  if (hex) {
    std::string_view digits = s.substr(2);
    if (digits.empty()) malformed();
    if (!is_float_form) {  // hex integers wrap around (lobject.c l_str2int)
      std::uint64_t v = 0;
      for (char c : digits) v = v * 16 + static_cast<std::uint64_t>(hex_value(c));
      out.type = tok::Integer;
      out.integer = static_cast<std::int64_t>(v);
      return;
    }
    double d = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), d, std::chars_format::hex);
    if (r.ptr != digits.data() + digits.size() || digits[0] == '+' || digits[0] == '-') malformed();
    if (r.ec == std::errc::result_out_of_range) d = std::strtod(std::string(s).c_str(), nullptr);
    out.type = tok::Float;
    out.number = d;
    return;
  }
  if (!is_float_form) {
    // A decimal integer that does not fit int64 is read as a float (lobject.c l_str2int).
    std::uint64_t v = 0;
    bool overflow = false;
    for (char c : s) {
      auto digit = static_cast<std::uint64_t>(c - '0');
      if (v > (static_cast<std::uint64_t>(INT64_MAX) - digit) / 10) overflow = true;
      v = v * 10 + digit;
    }
    if (!overflow) {
      out.type = tok::Integer;
      out.integer = static_cast<std::int64_t>(v);
      return;
    }
  }
  double d = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), d, std::chars_format::general);
  if (r.ptr != s.data() + s.size()) malformed();
  if (r.ec == std::errc::result_out_of_range) d = std::strtod(std::string(s).c_str(), nullptr);
  out.type = tok::Float;
  out.number = d;
}

void Lexer::skip_whitespace_and_comments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') {
      ++pos_;
    } else if (is_newline(c)) {
      newline();
    } else if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '-') {
      std::size_t start = pos_;
      pos_ += 2;
      if (pos_ < text_.size() && text_[pos_] == '[') {
        int level = long_bracket_level();
        if (level >= 0) {
          read_long_string(nullptr, level, start);
          continue;
        }
      }
      while (pos_ < text_.size() && !is_newline(text_[pos_])) ++pos_;
    } else {
      break;
    }
  }
}

void Lexer::next(Token& out) {
  skip_whitespace_and_comments();
  if (pos_ >= text_.size()) {
    out.type = tok::Eof;
    out.raw = {};
    // One past the last token, so that a caret for "expected near <eof>" lands on a
    // line with text rather than on a trailing blank line.
    out.loc = out.end = Location{last_end_.line, last_end_.col + 1};
    return;
  }
  std::size_t start = pos_;
  out.loc = here();
  char c = text_[pos_];
  auto symbol = [&](int type, std::size_t length) {
    out.type = type;
    pos_ += length;
  };
  auto peek = [&](std::size_t k) { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; };
  switch (c) {
    case '[': {
      int level = long_bracket_level();
      if (level >= 0) {
        read_long_string(&out, level, start);
      } else if (level == -1) {
        symbol('[', 1);
      } else {
        fail(start, "invalid long string delimiter", start, start + 1 + static_cast<std::size_t>(-level - 2));
      }
      break;
    }
    case '=': peek(1) == '=' ? symbol(tok::Eq, 2) : symbol('=', 1); break;
    case '<': peek(1) == '=' ? symbol(tok::Le, 2) : peek(1) == '<' ? symbol(tok::Shl, 2) : symbol('<', 1); break;
    case '>': peek(1) == '=' ? symbol(tok::Ge, 2) : peek(1) == '>' ? symbol(tok::Shr, 2) : symbol('>', 1); break;
    case '/': peek(1) == '/' ? symbol(tok::IDiv, 2) : symbol('/', 1); break;
    case '~': peek(1) == '=' ? symbol(tok::Ne, 2) : symbol('~', 1); break;
    case ':': peek(1) == ':' ? symbol(tok::DbColon, 2) : symbol(':', 1); break;
    case '"':
    case '\'': read_string(out, c); break;
    case '.':
      if (peek(1) == '.') {
        peek(2) == '.' ? symbol(tok::Dots, 3) : symbol(tok::Concat, 2);
      } else if (is_digit(peek(1))) {
        read_numeral(out);
      } else {
        symbol('.', 1);
      }
      break;
    default:
      if (is_digit(c)) {
        read_numeral(out);
      } else if (is_alpha(c)) {
        while (pos_ < text_.size() && is_alnum(text_[pos_])) ++pos_;
        out.type = classify_name(text_.substr(start, pos_ - start));
      } else {  // any other byte is a one-character token; the parser rejects it in place
        symbol(static_cast<unsigned char>(c), 1);
      }
  }
  if (out.type != tok::String && out.type != tok::Integer && out.type != tok::Float)
    out.raw = text_.substr(start, pos_ - start);
  out.end = at(pos_ - 1);
  last_end_ = out.end;
}

}  // namespace luda::dsl

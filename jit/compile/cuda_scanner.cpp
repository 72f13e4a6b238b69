#include "jit/compile/cuda_scanner.h"

#include <array>

namespace luda::jit {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Letters, '_', and the bytes of UTF-8 sequences (C++ takes Unicode letters in names).
bool identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool identifier_char(char c) { return identifier_start(c) || is_digit(c); }

// The length of the line splice at p (a backslash, then a newline or CR LF), or 0.
std::size_t splice_at(std::string_view s, std::size_t p) {
  if (p >= s.size() || s[p] != '\\') return 0;
  if (p + 1 < s.size() && s[p + 1] == '\n') return 2;
  if (p + 2 < s.size() && s[p + 1] == '\r' && s[p + 2] == '\n') return 3;
  return 0;
}

bool holds_splice(std::string_view text) {
  for (std::size_t p = text.find('\\'); p != std::string_view::npos; p = text.find('\\', p + 1))
    if (splice_at(text, p)) return true;
  return false;
}

// The text as the compiler reads it (translation phase 2).
std::string without_splices(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t p = 0; p < text.size();) {
    if (std::size_t n = splice_at(text, p)) {
      p += n;
    } else {
      out += text[p++];
    }
  }
  return out;
}

// The punctuators of more than one character, longest first (digraphs are not read).
constexpr std::array<std::string_view, 5> kThreeChar = {"<=>", "...", "<<=", ">>=", "->*"};
constexpr std::array<std::string_view, 22> kTwoChar = {"::", "->", ".*", "++", "--", "<<", ">>", "<=",
                                                       ">=", "==", "!=", "&&", "||", "+=", "-=", "*=",
                                                       "/=", "%=", "&=", "|=", "^=", "##"};

}  // namespace

std::string CudaToken::spelling(std::string_view source) const {
  return spliced ? without_splices(text(source)) : std::string(text(source));
}

CudaScanner::CudaScanner(std::string_view source) : s_(source) { p_ = skip_splices(0); }

std::size_t CudaScanner::skip_splices(std::size_t p) const {
  while (std::size_t n = splice_at(s_, p)) p += n;
  return p;
}

// gap -> { whitespace | line-splice | comment }; a newline ends a directive's gap.
void CudaScanner::skip_gap() {
  while (p_ < s_.size()) {
    char c = s_[p_];
    if (c == '\n') {
      if (in_directive_) return;
      line_start_ = true;
      p_ = after(p_);
    } else if (is_blank(c)) {
      p_ = after(p_);
    } else if (c == '/' && at(after(p_)) == '/') {
      p_ = line_comment_end(p_);
    } else if (c == '/' && at(after(p_)) == '*') {
      p_ = block_comment_end(p_);
    } else {
      return;
    }
  }
}

// '//' up to its newline (not included); a splice carries it on to the next line.
std::size_t CudaScanner::line_comment_end(std::size_t p) const {
  p = after(after(p));
  while (p < s_.size() && s_[p] != '\n') p = after(p);
  return p;
}

// '/*' ... '*/', or up to the end of the source.
std::size_t CudaScanner::block_comment_end(std::size_t p) const {
  p = after(after(p));
  while (p < s_.size()) {
    if (s_[p] == '*') {
      std::size_t q = after(p);
      if (at(q) == '/') return after(q);
      p = q;
    } else {
      p = after(p);
    }
  }
  return s_.size();
}

// The raw end of each token below: just past its last character, before any splice that
// follows it (a splice after a token is the gap's).

std::size_t CudaScanner::identifier_end(std::size_t p) const {
  std::size_t end = p;
  for (std::size_t q = p; q < s_.size() && identifier_char(s_[q]); q = skip_splices(end)) end = q + 1;
  return end;
}

// pp-number -> ('.')? digit { identifier-char | '.' | ''' identifier-char | [eEpP] [+-] }
std::size_t CudaScanner::number_end(std::size_t p) const {
  std::size_t end = p + 1;
  char previous = s_[p];
  for (std::size_t q = skip_splices(end); q < s_.size(); q = skip_splices(end)) {
    char c = s_[q];
    bool takes = identifier_char(c) || c == '.' || (c == '\'' && identifier_char(at(after(q)))) ||
                 ((c == '+' || c == '-') && (previous == 'e' || previous == 'E' || previous == 'p' || previous == 'P'));
    if (!takes) break;
    previous = c;
    end = q + 1;
  }
  return end;
}

// A "..." or '...' literal from its quote at p, escapes read; an unterminated one ends
// before its newline.
std::size_t CudaScanner::quoted_end(std::size_t p) const {
  char quote = s_[p];
  std::size_t end = p + 1;
  for (std::size_t q = skip_splices(end); q < s_.size() && s_[q] != '\n'; q = skip_splices(end)) {
    end = q + 1;
    if (s_[q] == quote) break;
    if (s_[q] == '\\') {
      std::size_t e = skip_splices(end);
      if (e < s_.size() && s_[e] != '\n') end = e + 1;
    }
  }
  return end;
}

// R"delim( ... )delim" from its quote: up to its closing, or the end of the source. npos
// when no valid delimiter (at most 16 characters, no blank, backslash nor parenthesis)
// follows the quote: then the prefix is a name and the quote starts an ordinary literal.
// Splices are not read inside: a raw string keeps its text.
std::size_t CudaScanner::raw_string_end(std::size_t quote) const {
  std::size_t open = quote + 1;
  for (; open < s_.size() && s_[open] != '('; ++open) {
    char c = s_[open];
    if (open - quote > 16 || c == ')' || c == '\\' || c == '"' || c == ' ' || c == '\t' || c == '\v' || c == '\f' ||
        c == '\n' || c == '\r')
      return std::string_view::npos;
  }
  if (open >= s_.size()) return std::string_view::npos;
  std::string close = ")" + std::string(s_.substr(quote + 1, open - quote - 1)) + "\"";
  std::size_t stop = s_.find(close, open + 1);  // at most 18 characters: linear
  return stop == std::string_view::npos ? s_.size() : stop + close.size();
}

// A literal's user-defined suffix ("km"_u, 'c'_x) from the literal's end: up to its end.
std::size_t CudaScanner::suffix_end(std::size_t end) const {
  std::size_t q = skip_splices(end);
  return q < s_.size() && identifier_start(s_[q]) ? identifier_end(q) : end;
}

// An #include's <name> from its '<' at p, or npos when its line has no '>'.
std::size_t CudaScanner::header_name_end(std::size_t p) const {
  for (std::size_t q = after(p); q < s_.size() && s_[q] != '\n'; q = after(q))
    if (s_[q] == '>') return q + 1;
  return std::string_view::npos;
}

std::size_t CudaScanner::punctuator_end(std::size_t p) const {
  std::size_t p2 = after(p);
  if (p2 >= s_.size()) return p + 1;
  std::size_t p3 = after(p2);
  char c1 = s_[p], c2 = s_[p2], c3 = at(p3);
  for (std::string_view op : kThreeChar)
    if (op[0] == c1 && op[1] == c2 && op[2] == c3) return p3 + 1;
  for (std::string_view op : kTwoChar)
    if (op[0] == c1 && op[1] == c2) return p2 + 1;
  return p + 1;
}

CudaToken CudaScanner::token(CudaToken::Kind kind, std::size_t begin, std::size_t end) {
  CudaToken t;
  t.kind = kind;
  t.begin = begin;
  t.end = end;
  t.in_directive = in_directive_;
  if (in_directive_) ++directive_tokens_;
  p_ = skip_splices(end);
  line_start_ = false;
  return t;
}

// token -> directive-start | identifier | number | string | char | header-name | punctuator
//          | directive-end
CudaToken CudaScanner::next() {
  using Kind = CudaToken::Kind;
  skip_gap();
  const std::size_t size = s_.size();
  if (in_directive_ && (p_ >= size || s_[p_] == '\n')) {
    CudaToken t = token(Kind::DirectiveEnd, p_, p_);
    in_directive_ = false;
    return t;
  }
  if (p_ >= size) {
    CudaToken t;
    t.begin = t.end = size;
    return t;
  }
  const std::size_t begin = p_;
  const char c = s_[p_];
  if (c == '#' && line_start_) {
    in_directive_ = true;
    directive_tokens_ = 0;
    include_directive_ = false;
    return token(Kind::DirectiveStart, begin, begin + 1);
  }
  CudaToken t;
  if (identifier_start(c)) {
    std::size_t end = identifier_end(begin);
    std::size_t quote = skip_splices(end);
    std::string prefix;  // an encoding prefix, with R for a raw string
    if ((at(quote) == '"' || at(quote) == '\'') && end - begin <= 12)
      prefix = without_splices(s_.substr(begin, end - begin));
    if (at(quote) == '"' && (prefix == "R" || prefix == "LR" || prefix == "u8R" || prefix == "uR" || prefix == "UR")) {
      if (std::size_t raw_end = raw_string_end(quote); raw_end != std::string_view::npos)
        return token(Kind::String, begin, suffix_end(raw_end));  // never spliced: the text is kept as written
    }
    if (prefix == "L" || prefix == "u8" || prefix == "u" || prefix == "U") {
      t = token(at(quote) == '"' ? Kind::String : Kind::Char, begin, suffix_end(quoted_end(quote)));
    } else {
      t = token(Kind::Identifier, begin, end);
      if (t.in_directive && directive_tokens_ == 2) {  // the directive's name
        std::string name = without_splices(t.text(s_));
        include_directive_ = name == "include" || name == "include_next" || name == "import";
      }
    }
  } else if (is_digit(c) || (c == '.' && is_digit(at(after(begin))))) {
    t = token(Kind::Number, begin, number_end(begin));
  } else if (c == '"' || c == '\'') {
    t = token(c == '"' ? Kind::String : Kind::Char, begin, suffix_end(quoted_end(begin)));
  } else if (std::size_t header = c == '<' && in_directive_ && include_directive_ && directive_tokens_ == 2
                                      ? header_name_end(begin)
                                      : std::string_view::npos;
             header != std::string_view::npos) {
    t = token(Kind::HeaderName, begin, header);
  } else {
    t = token(Kind::Punctuator, begin, punctuator_end(begin));
  }
  t.spliced = holds_splice(t.text(s_));
  return t;
}

std::vector<CudaToken> scan_cuda(std::string_view source) {
  std::vector<CudaToken> out;
  CudaScanner scanner(source);
  for (CudaToken t = scanner.next(); t.kind != CudaToken::Kind::End; t = scanner.next()) out.push_back(t);
  return out;
}

}  // namespace luda::jit

// The tokens of a CUDA C++ source, for the passes that read or rewrite a user's source
// without a compiler: finding its kernels and their parameter names (jit/raw/params.h),
// making it ready for the cpu target (jit/compile/cpu_prelude.h).
//
// Tokens are C++'s preprocessing tokens, told apart as far as those passes need: a keyword
// is an Identifier, a literal is kept whole (its contents never look like code), and each
// token knows where it stands in the source, so that a rewriter copies the text between
// tokens as it is. Comments and whitespace are the gaps between tokens. A preprocessor
// directive is reported, not dropped: a DirectiveStart token (its '#'), the directive's
// own tokens, then a DirectiveEnd token (empty, at the newline that ends it).
//
// Line splices (a backslash at a line's end) join lines as the compiler's translation
// phase 2 does: inside a token, a // comment, or a directive, which then goes on. One pass
// with no backtracking, each character read a bounded number of times (a raw string's
// closing is at most 18 characters; an #include's line is looked at for a <header> first),
// since sources are users' and may be huge or adversarial. Not read: digraphs (<: %:), '$'
// in names; the bytes of UTF-8 sequences are name characters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace luda::jit {

struct CudaToken {
  enum class Kind {
    Identifier,      // x, __global__, extern (keywords too)
    Number,          // a preprocessing number: 1'000, 0x1p-3f, 1e+5, .5, 12_km
    String,          // "...", u8"...", L"...", R"d(...)d", with any user-defined suffix
    Char,            // 'a', u'a', L'\n', 'a'_c
    HeaderName,      // <cooperative_groups.h>, only as an #include's operand
    Punctuator,      // ( :: -> >>= ... and any other character (maximal munch; no digraphs)
    DirectiveStart,  // the '#' first on a line, that starts a preprocessor directive
    DirectiveEnd,    // the end of a directive: empty, at its newline or the source's end
    End,             // the end of the source (empty); CudaScanner::next gives it again
  };
  Kind kind = Kind::End;
  std::size_t begin = 0, end = 0;  // source[begin, end) is the token's text
  bool in_directive = false;       // between a DirectiveStart and its DirectiveEnd (both included)
  bool spliced = false;            // the text holds a line splice (never for a raw string)

  // The text as the source has it.
  std::string_view text(std::string_view source) const { return source.substr(begin, end - begin); }
  // The text as the compiler reads it: line splices removed.
  std::string spelling(std::string_view source) const;
  // Whether the compiler reads the token as `s`.
  bool spells(std::string_view source, std::string_view s) const {
    return spliced ? spelling(source) == s : text(source) == s;
  }
};

class CudaScanner {
 public:
  explicit CudaScanner(std::string_view source);

  // The next token; an End token once the source is read.
  CudaToken next();

 private:
  std::size_t skip_splices(std::size_t p) const;
  std::size_t after(std::size_t p) const { return skip_splices(p + 1); }
  char at(std::size_t p) const { return p < s_.size() ? s_[p] : '\0'; }
  void skip_gap();
  std::size_t line_comment_end(std::size_t p) const;
  std::size_t block_comment_end(std::size_t p) const;
  std::size_t identifier_end(std::size_t p) const;
  std::size_t number_end(std::size_t p) const;
  std::size_t quoted_end(std::size_t p) const;
  std::size_t raw_string_end(std::size_t quote) const;
  std::size_t suffix_end(std::size_t end) const;
  std::size_t header_name_end(std::size_t p) const;
  std::size_t punctuator_end(std::size_t p) const;
  CudaToken token(CudaToken::Kind kind, std::size_t begin, std::size_t end);

  std::string_view s_;
  std::size_t p_ = 0;       // the next character (never at a line splice)
  bool line_start_ = true;  // only whitespace and comments since the last newline
  bool in_directive_ = false;
  int directive_tokens_ = 0;        // tokens of the current directive so far, its '#' included
  bool include_directive_ = false;  // the directive is #include (or #include_next, #import)
};

// Every token of the source, in order, without the End token.
std::vector<CudaToken> scan_cuda(std::string_view source);

}  // namespace luda::jit

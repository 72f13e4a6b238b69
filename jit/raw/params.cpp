#include "jit/raw/params.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

namespace luda::jit {
namespace {

// ---------------------------------------------------------------------------------------
// Tokens of CUDA C++, enough to find declarations: comments and preprocessor lines are
// dropped, literals kept whole so that their contents never look like code.

struct Token {
  enum class Kind { Ident, Number, String, Char, Punct };
  Kind kind;
  std::string text;  // a String holds its contents without quotes
  bool conditional = false;  // an identifier between #if (#ifdef, #ifndef) and its #endif
  bool is(std::string_view s) const { return kind != Kind::String && text == s; }
  bool ident(std::string_view s) const { return kind == Kind::Ident && text == s; }
};

struct Lexed {
  std::vector<Token> tokens;
  bool macro_kernels = false;  // a #define whose body holds __global__
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Lexer {
 public:
  explicit Lexer(std::string_view src) : s_(src) {}

  // Whether a #define it skipped holds __global__ (a macro that makes kernels).
  bool macro_kernels() const { return macro_kernels_; }

  // tokens -> { token | comment | preprocessor-line | whitespace }
  void run(std::vector<Token>& out) {
    bool line_start = true;
    while (p_ < s_.size()) {
      char c = s_[p_];
      if (c == '\n') { line_start = true; ++p_; continue; }
      if (c == '\\' && (starts("\\\n") || starts("\\\r\n"))) {  // a line splice
        p_ += s_[p_ + 1] == '\n' ? 2 : 3;
        continue;
      }
      if (std::isspace(static_cast<unsigned char>(c))) { ++p_; continue; }
      if (starts("//")) { skip_line(false); continue; }
      if (starts("/*")) {
        std::size_t end = s_.find("*/", p_ + 2);
        p_ = end == std::string_view::npos ? s_.size() : end + 2;
        continue;
      }
      if (c == '#' && line_start) { directive(); continue; }
      line_start = false;
      if (ident_start(c)) { ident_or_literal(out); continue; }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && p_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_ + 1])))) {
        number(out);
        continue;
      }
      if (c == '"') { out.push_back({Token::Kind::String, quoted('"')}); continue; }
      if (c == '\'') { out.push_back({Token::Kind::Char, quoted('\'')}); continue; }
      for (std::string_view two : {"::", "&&", "..."}) {
        if (starts(two)) {
          out.push_back({Token::Kind::Punct, std::string(two)});
          p_ += two.size();
          goto next;
        }
      }
      out.push_back({Token::Kind::Punct, std::string(1, c)});
      ++p_;
    next:;
    }
  }

 private:
  bool starts(std::string_view t) const { return s_.substr(p_, t.size()) == t; }

  // Up to the end of the line; with `continued`, a backslash before the newline joins
  // the next line (preprocessor lines). Returns the text skipped.
  std::string_view skip_line(bool continued) {
    std::size_t begin = p_;
    while (p_ < s_.size() && s_[p_] != '\n') {
      if (continued && s_[p_] == '\\' && p_ + 1 < s_.size() && s_[p_ + 1] == '\n') ++p_;
      ++p_;
    }
    return s_.substr(begin, p_ - begin);
  }

  // A preprocessor line, with its continuations: skipped (the compiler reads them), but
  // noted when it defines a macro that makes kernels.
  void directive() {
    std::string_view line = skip_line(true);
    std::size_t at = line.find_first_not_of(" \t", 1);
    if (at == std::string_view::npos) return;
    std::size_t end = at;
    while (end < line.size() && ident_char(line[end])) ++end;
    std::string_view name = line.substr(at, end - at);
    if (name == "define" && line.find("__global__") != std::string_view::npos) macro_kernels_ = true;
    if (name == "if" || name == "ifdef" || name == "ifndef") ++conditionals_;
    if (name == "endif" && conditionals_ > 0) --conditionals_;
  }

  void ident_or_literal(std::vector<Token>& out) {
    std::size_t begin = p_;
    while (p_ < s_.size() && ident_char(s_[p_])) ++p_;
    std::string_view word = s_.substr(begin, p_ - begin);
    bool quote = p_ < s_.size() && (s_[p_] == '"' || s_[p_] == '\'');
    if (quote && (word == "R" || word == "LR" || word == "u8R" || word == "uR" || word == "UR") &&
        s_[p_] == '"') {
      out.push_back({Token::Kind::String, raw_string()});
      return;
    }
    if (quote && (word == "L" || word == "u8" || word == "u" || word == "U")) {
      char q = s_[p_];
      out.push_back({q == '"' ? Token::Kind::String : Token::Kind::Char, quoted(q)});
      return;
    }
    out.push_back({Token::Kind::Ident, std::string(word), conditionals_ > 0});
  }

  void number(std::vector<Token>& out) {
    std::size_t begin = p_;
    while (p_ < s_.size()) {
      char c = s_[p_];
      if (ident_char(c) || c == '.' ||
          (c == '\'' && p_ + 1 < s_.size() && ident_char(s_[p_ + 1]))) {  // 1'000
        ++p_;
      } else if ((c == '+' || c == '-') && std::strchr("eEpP", s_[p_ - 1])) {
        ++p_;
      } else {
        break;
      }
    }
    out.push_back({Token::Kind::Number, std::string(s_.substr(begin, p_ - begin))});
  }

  // A "..." or '...' literal with escapes; unterminated runs to the end of the line.
  std::string quoted(char q) {
    std::string text;
    ++p_;
    while (p_ < s_.size() && s_[p_] != q && s_[p_] != '\n') {
      if (s_[p_] == '\\' && p_ + 1 < s_.size()) text += s_[p_++];
      text += s_[p_++];
    }
    if (p_ < s_.size() && s_[p_] == q) ++p_;
    return text;
  }

  // R"delim( ... )delim"
  std::string raw_string() {
    std::size_t open = s_.find('(', p_);
    if (open == std::string_view::npos) { p_ = s_.size(); return {}; }
    std::string close = ")" + std::string(s_.substr(p_ + 1, open - p_ - 1)) + "\"";
    std::size_t end = s_.find(close, open + 1);
    std::size_t stop = end == std::string_view::npos ? s_.size() : end;
    std::string text(s_.substr(open + 1, stop - open - 1));
    p_ = end == std::string_view::npos ? s_.size() : end + close.size();
    return text;
  }

  std::string_view s_;
  std::size_t p_ = 0;
  bool macro_kernels_ = false;
  int conditionals_ = 0;  // #if blocks open
};

Lexed lex(std::string_view source) {
  Lexed l;
  Lexer lexer(source);
  lexer.run(l.tokens);
  l.macro_kernels = lexer.macro_kernels();
  return l;
}

// ---------------------------------------------------------------------------------------
// Kernel definitions.

struct Definition {
  KernelDefinition def;
  std::size_t params_begin = 0, params_end = 0;  // tokens between the parentheses
};

// Attributes that may sit between __global__ and the name, each with a (...) argument.
bool is_attribute(const Token& t) {
  static const std::set<std::string> names = {"__launch_bounds__", "__attribute__", "__declspec",
                                              "alignas", "__cluster_dims__", "__maxnreg__"};
  return t.kind == Token::Kind::Ident && names.count(t.text);
}

// The index of the token closing the bracket opened at `open`, or tokens.size().
std::size_t matching(const std::vector<Token>& t, std::size_t open) {
  std::string o = t[open].text, c = o == "(" ? ")" : o == "[" ? "]" : "}";
  int depth = 0;
  for (std::size_t i = open; i < t.size(); ++i) {
    if (t[i].is(o)) ++depth;
    else if (t[i].is(c) && --depth == 0) return i;
  }
  return t.size();
}

// definition -> decl-specifiers '__global__' attributes* 'void' attributes* NAME
//               '(' params ')' '{'
std::vector<Definition> definitions(const std::vector<Token>& t) {
  std::vector<Definition> out;
  std::vector<bool> extern_c_scope;  // per open brace
  std::set<std::string> declared_c;  // extern "C" declarations seen so far
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].is("{")) {
      bool c = i >= 2 && t[i - 2].ident("extern") && t[i - 1].kind == Token::Kind::String &&
               t[i - 1].text == "C";
      extern_c_scope.push_back(c || (!extern_c_scope.empty() && extern_c_scope.back()));
      continue;
    }
    if (t[i].is("}")) {
      if (!extern_c_scope.empty()) extern_c_scope.pop_back();
      continue;
    }
    if (!t[i].ident("__global__")) continue;
    Definition d;
    d.def.conditional = t[i].conditional;
    d.def.extern_c = !extern_c_scope.empty() && extern_c_scope.back();
    for (std::size_t j = i; j-- > 0;) {  // the specifiers before __global__
      if (t[j].is(";") || t[j].is("{") || t[j].is("}")) break;
      if (t[j].ident("extern") && j + 1 < t.size() && t[j + 1].kind == Token::Kind::String &&
          t[j + 1].text == "C")
        d.def.extern_c = true;
      if (t[j].ident("template")) d.def.is_template = true;
    }
    std::size_t j = i + 1;
    std::size_t open = t.size();
    for (; j < t.size(); ++j) {
      if (is_attribute(t[j]) && j + 1 < t.size() && t[j + 1].is("(")) {
        j = matching(t, j + 1);
      } else if (t[j].is("[") && j + 1 < t.size() && t[j + 1].is("[")) {
        j = matching(t, j);  // [[attribute]]
      } else if (t[j].is("(")) {
        open = j;
        break;
      } else if (t[j].is(";") || t[j].is("{") || t[j].is("}")) {
        break;
      }
    }
    if (open == t.size() || open == 0 || t[open - 1].kind != Token::Kind::Ident) continue;
    std::size_t close = matching(t, open);
    if (close >= t.size()) continue;
    d.def.name = t[open - 1].text;
    d.params_begin = open + 1;
    d.params_end = close;
    i = close;
    if (close + 1 < t.size() && t[close + 1].is(";")) {  // a declaration: remember its linkage
      if (d.def.extern_c) declared_c.insert(d.def.name);
      continue;
    }
    if (declared_c.count(d.def.name)) d.def.extern_c = true;
    out.push_back(std::move(d));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Parameter names.

bool is_type_word(const std::string& w) {
  static const std::set<std::string> words = {"void",  "bool",     "char",         "short",    "int",
                                              "long",  "signed",   "unsigned",     "float",    "double",
                                              "const", "volatile", "__restrict__", "__restrict", "restrict",
                                              "register", "struct", "class", "enum", "union"};
  return words.count(w) > 0;
}

// The name a parameter declares, "" when it has none ("float*", "unsigned long", "T"):
//   param -> decl-words ('*' | '&' | '::' | qualifiers)* NAME? ('[' ... ']')? ('=' default)?
std::string parameter_name(const std::vector<Token>& toks) {
  std::size_t end = toks.size();
  for (std::size_t i = 0; i < toks.size(); ++i)
    if (toks[i].is("=") || toks[i].is("[")) {
      end = i;
      break;
    }
  // The last identifier that is not a type word nor part of a qualified name (std::size_t),
  // after at least one word or star of its type.
  int type_parts = 0;
  std::string name;
  for (std::size_t i = 0; i < end; ++i) {
    const Token& t = toks[i];
    bool qualified = (i > 0 && toks[i - 1].is("::")) || (i + 1 < end && toks[i + 1].is("::"));
    if (t.kind == Token::Kind::Ident && !is_type_word(t.text) && !qualified && type_parts > 0 && i + 1 == end)
      name = t.text;
    if (t.kind == Token::Kind::Ident || t.is("*") || t.is("&")) ++type_parts;
  }
  return name;
}

}  // namespace

std::vector<KernelDefinition> find_kernels(std::string_view source) {
  Lexed lexed = lex(source);
  std::vector<KernelDefinition> out;
  for (auto& d : definitions(lexed.tokens)) out.push_back(std::move(d.def));
  return out;
}

bool macros_define_kernels(std::string_view source) { return lex(source).macro_kernels; }

std::vector<std::string> list_kernels(std::string_view source) {
  std::vector<std::string> names;
  for (const auto& d : find_kernels(source))
    if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
  return names;
}

std::optional<std::vector<std::string>> find_parameter_names(std::string_view source, std::string_view name) {
  Lexed lexed = lex(source);
  std::vector<Definition> defs = definitions(lexed.tokens);
  const Definition* found = nullptr;
  for (const auto& d : defs) {
    if (d.def.name != name) continue;
    if (found) return std::nullopt;  // overloaded, or defined in both arms of an #if
    found = &d;
  }
  if (!found) return std::nullopt;
  std::vector<std::string> names;
  if (found->params_begin == found->params_end) return names;
  std::vector<Token> piece;
  int depth = 0;
  for (std::size_t i = found->params_begin; i <= found->params_end; ++i) {
    const Token* t = i < found->params_end ? &lexed.tokens[i] : nullptr;
    if (t && (t->is("(") || t->is("[") || t->is("{") || t->is("<"))) ++depth;
    if (t && (t->is(")") || t->is("]") || t->is("}") || t->is(">"))) --depth;
    if (!t || (t->is(",") && depth == 0)) {
      names.push_back(parameter_name(piece));
      piece.clear();
      continue;
    }
    piece.push_back(*t);
  }
  if (names.size() == 1 && names[0].empty() && found->params_end - found->params_begin == 1 &&
      lexed.tokens[found->params_begin].ident("void"))
    names.clear();  // (void)
  return names;
}

}  // namespace luda::jit

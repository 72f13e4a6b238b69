#include "jit/kernel_params.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
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
  bool is(std::string_view s) const { return kind != Kind::String && text == s; }
  bool ident(std::string_view s) const { return kind == Kind::Ident && text == s; }
};

struct Lexed {
  std::vector<Token> tokens;
  std::map<std::string, std::vector<Token>> macros;  // object-like #defines
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Lexer {
 public:
  explicit Lexer(std::string_view src) : s_(src) {}

  // tokens -> { token | comment | preprocessor-line | whitespace }
  void run(std::vector<Token>& out, std::map<std::string, std::vector<Token>>* macros) {
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
      if (c == '#' && line_start) { directive(macros); continue; }
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

  // directive -> '#' 'define' NAME body | '#' anything
  void directive(std::map<std::string, std::vector<Token>>* macros) {
    std::string line(skip_line(true));
    for (std::size_t i = 0; i + 1 < line.size(); ++i)
      if (line[i] == '\\' && line[i + 1] == '\n') line[i] = line[i + 1] = ' ';
    if (!macros) return;
    std::size_t at = line.find_first_not_of(" \t", 1);
    if (at == std::string::npos || line.compare(at, 6, "define") != 0) return;
    at = line.find_first_not_of(" \t", at + 6);
    if (at == std::string::npos || !ident_start(line[at])) return;
    std::size_t end = at;
    while (end < line.size() && ident_char(line[end])) ++end;
    if (end < line.size() && line[end] == '(') return;  // function-like: not expanded
    std::vector<Token> body;
    Lexer(std::string_view(line).substr(end)).run(body, nullptr);
    (*macros)[line.substr(at, end - at)] = std::move(body);
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
    out.push_back({Token::Kind::Ident, std::string(word)});
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
};

Lexed lex(std::string_view source) {
  Lexed l;
  Lexer(source).run(l.tokens, &l.macros);
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
// Parameter types.

const std::set<std::string>& builtin_words() {
  static const std::set<std::string> w = {"void", "bool", "char", "short", "int", "long",
                                          "signed", "unsigned", "float", "double"};
  return w;
}

bool is_qualifier(const std::string& w) {
  return w == "const" || w == "volatile" || w == "__restrict__" || w == "__restrict" ||
         w == "restrict" || w == "register" || w == "struct" || w == "class" || w == "enum" ||
         w == "union";
}

// Types a kernel may take by value that have no luda dtype: half, vectors, complex.
bool known_opaque(const std::string& w) {
  static const std::set<std::string> names = {
      "half", "__half", "half2", "__half2", "__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16",
      "nv_bfloat162", "dim3", "cuComplex", "cuDoubleComplex", "cuFloatComplex"};
  if (names.count(w)) return true;
  static const char* vectors[] = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                  "ulong", "longlong", "ulonglong", "float", "double"};
  for (const char* v : vectors) {
    std::string_view base(v);
    if (w.size() == base.size() + 1 && w.compare(0, base.size(), base) == 0 &&
        w.back() >= '1' && w.back() <= '4')
      return true;
  }
  return false;
}

// What a type name means: a dtype, void (nullopt with known), or opaque.
struct TypeMeaning {
  enum class Kind { Scalar, Void, Opaque, Unknown } kind = Kind::Unknown;
  DType dtype = DType::Int32;
};

struct Context {
  std::map<std::string, std::vector<std::string>> typedefs;  // name -> type words
  std::set<std::string> records;                             // struct/class/union/enum names
};

TypeMeaning meaning_of(std::vector<std::string> words, const Context& ctx, int depth = 0) {
  using K = TypeMeaning::Kind;
  TypeMeaning m;
  if (words.empty()) return m;
  bool all_builtin = std::all_of(words.begin(), words.end(),
                                 [](const std::string& w) { return builtin_words().count(w); });
  if (all_builtin) {
    std::map<std::string, int> n;
    for (const auto& w : words) ++n[w];
    bool is_unsigned = n["unsigned"] > 0;
    if (n["signed"] + n["unsigned"] > 1) return m;
    auto set = [&](DType s, DType u) {
      m.kind = K::Scalar;
      m.dtype = is_unsigned ? u : s;
      return m;
    };
    if (n["void"]) return words.size() == 1 ? TypeMeaning{K::Void, DType::Int32} : m;
    if (n["bool"]) return words.size() == 1 ? TypeMeaning{K::Scalar, DType::Bool} : m;
    if (n["float"]) return words.size() == 1 ? TypeMeaning{K::Scalar, DType::Float32} : m;
    if (n["double"]) {
      if (words.size() == 1) return {K::Scalar, DType::Float64};
      if (words.size() == 2 && n["long"] == 1) return {K::Opaque, DType::Int32};  // long double
      return m;
    }
    if (n["char"]) {
      if (n["char"] > 1 || n["short"] || n["long"] || n["int"]) return m;
      return set(DType::Int8, DType::UInt8);  // plain char is signed on x86-64 and aarch64 Linux
    }
    if (n["short"]) return n["short"] == 1 && !n["long"] ? set(DType::Int16, DType::UInt16) : m;
    if (n["long"] > 2 || n["int"] > 1) return m;
    if (n["long"]) return set(DType::Int64, DType::UInt64);  // LP64: long is 64 bits
    return set(DType::Int32, DType::UInt32);                 // int, signed, unsigned
  }
  if (words.size() != 1) return m;
  const std::string& w = words[0];
  static const std::map<std::string, DType> named = {
      {"size_t", DType::UInt64},   {"ptrdiff_t", DType::Int64}, {"ssize_t", DType::Int64},
      {"intptr_t", DType::Int64},  {"uintptr_t", DType::UInt64}, {"int8_t", DType::Int8},
      {"int16_t", DType::Int16},   {"int32_t", DType::Int32},   {"int64_t", DType::Int64},
      {"uint8_t", DType::UInt8},   {"uint16_t", DType::UInt16}, {"uint32_t", DType::UInt32},
      {"uint64_t", DType::UInt64}, {"__int64", DType::Int64}};
  if (auto it = named.find(w); it != named.end()) return {K::Scalar, it->second};
  if (auto it = ctx.typedefs.find(w); it != ctx.typedefs.end() && depth < 8)
    return meaning_of(it->second, ctx, depth + 1);
  if (known_opaque(w) || ctx.records.count(w)) return {K::Opaque, DType::Int32};
  return m;  // a macro or a type from a header we do not read
}

// Collects `typedef <type> NAME;`, `using NAME = <type>;` and `struct NAME` from the source.
Context context_of(const std::vector<Token>& t) {
  Context ctx;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if ((t[i].ident("struct") || t[i].ident("class") || t[i].ident("union") ||
         t[i].ident("enum")) &&
        i + 1 < t.size() && t[i + 1].kind == Token::Kind::Ident)
      ctx.records.insert(t[i + 1].text);
    if (t[i].ident("typedef")) {
      std::size_t end = i + 1;
      while (end < t.size() && !t[end].is(";") && !t[end].is("{")) ++end;
      if (end >= t.size() || t[end].is("{") || end - i < 3) continue;
      std::vector<std::string> words;
      bool plain = true;
      for (std::size_t k = i + 1; k + 1 < end; ++k) {
        if (t[k].kind != Token::Kind::Ident) plain = false;
        else if (!is_qualifier(t[k].text)) words.push_back(t[k].text);
      }
      if (plain && t[end - 1].kind == Token::Kind::Ident) ctx.typedefs[t[end - 1].text] = words;
    }
    if (t[i].ident("using") && i + 3 < t.size() && t[i + 1].kind == Token::Kind::Ident &&
        t[i + 2].is("=")) {
      std::vector<std::string> words;
      std::size_t k = i + 3;
      for (; k < t.size() && t[k].kind == Token::Kind::Ident; ++k)
        if (!is_qualifier(t[k].text)) words.push_back(t[k].text);
      if (k < t.size() && t[k].is(";")) ctx.typedefs[t[i + 1].text] = words;
    }
  }
  return ctx;
}

// Expands object-like macros in a parameter list (not recursively into themselves), to
// at most kMaxExpandedTokens: macros that multiply at each level (#define A B B, #define
// B C C, ...) would otherwise take memory without bound.
constexpr std::size_t kMaxExpandedTokens = 4096;
std::vector<Token> expand(std::vector<Token> tokens, const Lexed& lexed) {
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    std::vector<Token> out;
    for (const Token& tok : tokens) {
      auto it = tok.kind == Token::Kind::Ident ? lexed.macros.find(tok.text) : lexed.macros.end();
      if (it != lexed.macros.end()) {
        if (out.size() + it->second.size() > kMaxExpandedTokens) return {Token{Token::Kind::Punct, "("}};
        out.insert(out.end(), it->second.begin(), it->second.end());
        changed = true;
      } else {
        out.push_back(tok);
      }
    }
    tokens = std::move(out);
    if (!changed) return tokens;
  }
  return {Token{Token::Kind::Punct, "("}};  // self-referential (or too long): make the list unreadable
}

std::string spell(const std::vector<const Token*>& tokens) {
  std::string s;
  for (const Token* t : tokens) {
    if (!s.empty() && !t->is("*") && !t->is("::") && !(s.size() >= 2 && s.ends_with("::")))
      s += ' ';
    s += t->text;
  }
  return s;
}

// param -> type-words ('*' qualifiers*)* NAME? ('[' ... ']')? ('=' default)?
std::optional<KernelParam> parse_param(const std::vector<Token>& toks, const Context& ctx) {
  std::vector<const Token*> type;  // what the spelling shows
  std::size_t end = toks.size();
  for (std::size_t i = 0; i < toks.size(); ++i)
    if (toks[i].is("=")) { end = i; break; }
  int pointers = 0, arrays = 0;  // arrays: `[]` suffixes, counted in pointers too
  std::vector<std::string> before_star, after_star;  // identifiers, qualifiers dropped
  bool const_before_star = false;
  std::string name;
  for (std::size_t i = 0; i < end; ++i) {
    const Token& t = toks[i];
    if (t.is("*")) {
      ++pointers;
      type.push_back(&t);
      if (!after_star.empty()) return std::nullopt;  // `float* x* y`
      continue;
    }
    if (t.is("[")) {  // float x[] / float x[4]: a pointer, named by the word before
      std::size_t close = i + 1;
      while (close < end && !toks[close].is("]")) ++close;
      if (close >= end || close + 1 != end) return std::nullopt;
      auto& words = pointers == 0 ? before_star : after_star;
      if (!words.empty() && !builtin_words().count(words.back()) && !type.empty() &&
          type.back()->ident(words.back())) {
        name = words.back();
        words.pop_back();
        type.pop_back();
      }
      ++pointers;
      ++arrays;
      i = close;
      continue;
    }
    if (t.is("::")) {  // std::size_t -> size_t; ::int32_t -> int32_t
      if (!before_star.empty() && before_star.back() == "std") before_star.pop_back();
      if (!type.empty() && type.back()->ident("std")) type.pop_back();
      continue;
    }
    if (t.kind != Token::Kind::Ident) return std::nullopt;  // &, <, (, literals
    if (t.text == "const" && pointers == 0) const_before_star = true;
    type.push_back(&t);
    if (is_qualifier(t.text)) continue;
    (pointers == 0 ? before_star : after_star).push_back(t.text);
  }
  // The name is the last identifier after the stars; with no stars, the last of two or
  // more identifiers unless it is a builtin type word (`unsigned long` has no name).
  if (!name.empty()) {
    if (!after_star.empty()) return std::nullopt;  // `float* x y[]`
  } else if (pointers > 0 && !after_star.empty()) {
    if (after_star.size() != 1) return std::nullopt;
    name = after_star[0];
  } else if (pointers == 0 && before_star.size() >= 2 && !builtin_words().count(before_star.back())) {
    name = before_star.back();
    before_star.pop_back();
  }
  if (!name.empty() && arrays == 0)
    for (std::size_t k = type.size(); k-- > 0;)
      if (type[k]->ident(name)) { type.erase(type.begin() + static_cast<std::ptrdiff_t>(k)); break; }
  if (before_star.empty()) return std::nullopt;

  KernelParam p;
  p.name = name;
  p.type.spelling = spell(type);
  p.type.spelling += std::string(static_cast<std::size_t>(arrays), '*');  // x[] is a pointer
  TypeMeaning m = meaning_of(before_star, ctx);
  if (pointers > 0) {
    p.type.kind = ParamType::Kind::Pointer;
    p.type.is_const = const_before_star;
    if (pointers == 1 && m.kind == TypeMeaning::Kind::Scalar) p.type.dtype = m.dtype;
    return p;  // void*, struct*, T** and unknown pointees take any array
  }
  switch (m.kind) {
    case TypeMeaning::Kind::Scalar:
      p.type.kind = ParamType::Kind::Scalar;
      p.type.dtype = m.dtype;
      return p;
    case TypeMeaning::Kind::Opaque:
      p.type.kind = ParamType::Kind::Opaque;
      return p;
    default:
      return std::nullopt;  // `void x`, or a name we cannot see through (a macro)
  }
}

// params -> ε | 'void' | param (',' param)*
std::optional<std::vector<KernelParam>> parse_params(std::vector<Token> toks, const Lexed& lexed,
                                                     const Context& ctx) {
  toks = expand(std::move(toks), lexed);
  std::vector<KernelParam> params;
  if (toks.empty() || (toks.size() == 1 && toks[0].ident("void"))) return params;
  std::vector<std::vector<Token>> pieces(1);
  int depth = 0;
  for (const Token& t : toks) {
    if (t.is("(") || t.is("[") || t.is("{")) ++depth;
    if (t.is(")") || t.is("]") || t.is("}")) --depth;
    if (t.is(",") && depth == 0) {
      pieces.emplace_back();
      continue;
    }
    pieces.back().push_back(t);
  }
  for (const auto& piece : pieces) {
    auto p = parse_param(piece, ctx);
    if (!p) return std::nullopt;
    params.push_back(std::move(*p));
  }
  return params;
}

}  // namespace

std::vector<KernelDefinition> find_kernels(std::string_view source) {
  Lexed lexed = lex(source);
  std::vector<KernelDefinition> out;
  for (auto& d : definitions(lexed.tokens)) out.push_back(std::move(d.def));
  return out;
}

std::vector<std::string> list_kernels(std::string_view source) {
  std::vector<std::string> names;
  for (const auto& d : find_kernels(source))
    if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
  return names;
}

std::optional<KernelSignature> find_kernel_signature(std::string_view source, std::string_view name) {
  Lexed lexed = lex(source);
  std::vector<Definition> defs = definitions(lexed.tokens);
  const Definition* found = nullptr;
  for (const auto& d : defs) {
    if (d.def.name != name) continue;
    if (found) return std::nullopt;  // overloaded: which one runs depends on the arguments
    found = &d;
  }
  if (!found || found->def.is_template) return std::nullopt;
  Context ctx = context_of(lexed.tokens);
  std::vector<Token> toks(lexed.tokens.begin() + static_cast<std::ptrdiff_t>(found->params_begin),
                          lexed.tokens.begin() + static_cast<std::ptrdiff_t>(found->params_end));
  auto params = parse_params(std::move(toks), lexed, ctx);
  if (!params) return std::nullopt;
  KernelSignature sig;
  sig.name = found->def.name;
  sig.extern_c = found->def.extern_c;
  sig.params = std::move(*params);
  return sig;
}

}  // namespace luda::jit

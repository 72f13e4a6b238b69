#include "jit/raw/params.h"

#include <algorithm>
#include <set>

#include "jit/compile/cuda_scanner.h"

namespace luda::jit {
namespace {

// ---------------------------------------------------------------------------------------
// The source's tokens outside preprocessor directives (jit/compile/cuda_scanner.h), with
// what the directives tell: the compiler reads those, luda only notes them.

struct Token {
  using Kind = CudaToken::Kind;
  Kind kind;
  std::string text;          // as the compiler reads it: a String keeps its quotes and prefix
  bool conditional = false;  // an identifier between #if (#ifdef, #ifndef) and its #endif
  bool is(std::string_view s) const { return kind == Kind::Punctuator && text == s; }
  bool ident(std::string_view s) const { return kind == Kind::Identifier && text == s; }
};

struct Lexed {
  std::vector<Token> tokens;
  bool macro_kernels = false;  // a #define whose body holds __global__
};

// directive -> '#' NAME tokens* END: #define bodies holding __global__ (a macro that makes
// kernels) and the #if blocks open are noted.
Lexed lex(std::string_view source) {
  Lexed l;
  CudaScanner scanner(source);
  int conditionals = 0;   // #if blocks open
  std::string directive;  // the name of the directive being read
  int directive_tokens = 0;
  for (CudaToken t = scanner.next(); t.kind != CudaToken::Kind::End; t = scanner.next()) {
    if (t.in_directive) {
      if (t.kind == CudaToken::Kind::DirectiveStart) {
        directive.clear();
        directive_tokens = 0;
      }
      ++directive_tokens;
      if (t.kind != CudaToken::Kind::Identifier) continue;
      std::string word = t.spelling(source);
      if (directive_tokens == 2) {
        directive = word;
        if (word == "if" || word == "ifdef" || word == "ifndef") ++conditionals;
        if (word == "endif" && conditionals > 0) --conditionals;
      } else if (directive == "define" && word == "__global__") {
        l.macro_kernels = true;
      }
      continue;
    }
    Token token{t.kind, t.spelling(source)};
    token.conditional = t.kind == CudaToken::Kind::Identifier && conditionals > 0;
    l.tokens.push_back(std::move(token));
  }
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
  static const std::set<std::string> names = {"__launch_bounds__", "__attribute__",    "__declspec",
                                              "alignas",           "__cluster_dims__", "__maxnreg__"};
  return t.kind == Token::Kind::Identifier && names.count(t.text);
}

// The "C" of `extern "C"`.
bool is_c(const Token& t) { return t.kind == Token::Kind::String && t.text == "\"C\""; }

// For each bracket token, the index of the one that closes or opens it, tokens.size()
// when none does; other tokens get tokens.size(). One pass: brackets of each kind are
// paired among themselves.
std::vector<std::size_t> partners(const std::vector<Token>& t) {
  std::vector<std::size_t> out(t.size(), t.size());
  std::vector<std::size_t> open[3];  // ( [ {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != Token::Kind::Punctuator || t[i].text.size() != 1) continue;
    std::size_t kind = std::string_view("([{").find(t[i].text[0]);
    if (kind != std::string_view::npos) {
      open[kind].push_back(i);
      continue;
    }
    kind = std::string_view(")]}").find(t[i].text[0]);
    if (kind == std::string_view::npos || open[kind].empty()) continue;
    out[i] = open[kind].back();
    out[open[kind].back()] = i;
    open[kind].pop_back();
  }
  return out;
}

// definition -> decl-specifiers '__global__' attributes* 'void' attributes* NAME
//               '(' params ')' '{'
std::vector<Definition> definitions(const std::vector<Token>& t) {
  auto boundary = [&](std::size_t i) { return t[i].is(";") || t[i].is("{") || t[i].is("}"); };
  const std::vector<std::size_t> partner = partners(t);
  // The specifiers before each token, back to the last ';', '{' or '}'.
  std::vector<char> after_template(t.size()), after_extern_c(t.size());
  for (std::size_t i = 1; i < t.size(); ++i) {
    bool reset = boundary(i - 1);
    after_template[i] = !reset && (after_template[i - 1] || t[i - 1].ident("template"));
    after_extern_c[i] = !reset && (after_extern_c[i - 1] || (t[i - 1].ident("extern") && is_c(t[i])));
  }
  std::vector<Definition> out;
  std::vector<bool> extern_c_scope;  // per open brace
  std::set<std::string> declared_c;  // extern "C" declarations seen so far
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].is("{")) {
      bool c = i >= 2 && t[i - 2].ident("extern") && is_c(t[i - 1]);
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
    d.def.extern_c = (!extern_c_scope.empty() && extern_c_scope.back()) || after_extern_c[i];
    d.def.is_template = after_template[i];
    std::size_t j = i + 1;
    std::size_t open = t.size();
    for (; j < t.size(); ++j) {
      if (is_attribute(t[j]) && j + 1 < t.size() && t[j + 1].is("(")) {
        j = partner[j + 1];
      } else if (t[j].is("[") && j + 1 < t.size() && t[j + 1].is("[")) {
        j = partner[j];  // [[attribute]]
      } else if (t[j].is("(")) {
        open = j;
        break;
      } else if (boundary(j)) {
        break;
      }
    }
    std::size_t close = open < t.size() ? partner[open] : t.size();
    if (open == t.size() || open == 0 || t[open - 1].kind != Token::Kind::Identifier || close >= t.size()) {
      // Another __global__ on the way up to here would end the same: go on from here.
      i = std::max(i, std::min(j, t.size()) - 1);
      continue;
    }
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
  static const std::set<std::string> words = {"void",     "bool",     "char",         "short",      "int",
                                              "long",     "signed",   "unsigned",     "float",      "double",
                                              "const",    "volatile", "__restrict__", "__restrict", "restrict",
                                              "register", "struct",   "class",        "enum",       "union"};
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
    if (t.kind == Token::Kind::Identifier && !is_type_word(t.text) && !qualified && type_parts > 0 && i + 1 == end)
      name = t.text;
    if (t.kind == Token::Kind::Identifier || t.is("*") || t.is("&")) ++type_parts;
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
    if (t && t->is(">>")) depth -= 2;  // Pair<Pair<int, 3>> p
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

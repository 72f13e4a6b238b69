// parse_signature: Numba's signature notation.
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "dsl/compile.h"
#include "dsl/diagnostics.h"
#include "dsl/types.h"

namespace luda::dsl {
namespace {

constexpr std::string_view kTypeNames =
    "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64";

// A cursor over the signature text. Tokens are names, punctuation and `::1`; blanks
// between them are skipped. Columns are 1-based like every diagnostic's.
class SignatureParser {
 public:
  explicit SignatureParser(std::string_view text) : source_("signature", std::string(text)) {}

  // signature -> [result] '(' [param {',' param}] ')'
  Signature parse() {
    Signature sig;
    skip_blanks();
    if (peek() != '(') {
      std::size_t at = pos_;
      std::string name = name_token("a result type or '('");
      if (name == "void") {
        sig.result = Type::void_();
      } else {
        sig.result = Type::scalar_of(scalar_named(name, at));
        if (peek() == '[') fail(pos_, "a signature's result is a scalar or void, not an array");
      }
    }
    expect('(');
    if (peek() != ')') {
      sig.params.push_back(param());
      while (peek() == ',') {
        advance();
        sig.params.push_back(param());
      }
    }
    expect(')');
    if (pos_ < text().size()) fail(pos_, fmt::format("unexpected '{}' after the signature", text()[pos_]));
    return sig;
  }

 private:
  const std::string& text() const { return source_.text(); }

  // param -> scalar ['[' axis {',' axis} ']'];  axis -> ':' | '::1'
  Type param() {
    std::size_t at = pos_;
    std::string name = name_token("a type name");
    if (name == "void") fail(at, "'void' is only a result type");
    Scalar s = scalar_named(name, at);
    if (peek() != '[') return Type::scalar_of(s);
    advance();
    int ndim = 0;
    bool contiguous = false;
    for (;;) {
      std::size_t axis_at = pos_;
      if (text().compare(pos_, 3, "::1") == 0) {
        pos_ += 3;
        contiguous = true;
      } else if (peek() == ':') {
        advance();
        if (contiguous) fail(axis_at, "only the last axis may be marked '::1' (C order)");
      } else {
        fail(pos_, "expected ':' or '::1' for an array axis");
      }
      if (++ndim > kMaxArrayDims)
        fail(axis_at,
             fmt::format("maximum supported dimension for an ndarray is currently {}, found {}", kMaxArrayDims, ndim));
      skip_blanks();
      if (peek() == ',') {
        if (contiguous) fail(axis_at, "only the last axis may be marked '::1' (C order)");
        advance();
        continue;
      }
      break;
    }
    expect(']');
    return Type::array_of(s, ndim, contiguous);
  }

  Scalar scalar_named(const std::string& name, std::size_t at) {
    if (auto s = parse_scalar(name)) return *s;
    fail(at, fmt::format("unknown type '{}' (types: {})", name, kTypeNames));
  }

  std::string name_token(std::string_view what) {
    skip_blanks();
    std::size_t start = pos_;
    while (pos_ < text().size() && (std::isalnum(static_cast<unsigned char>(text()[pos_])) || text()[pos_] == '_'))
      ++pos_;
    if (start == pos_) fail(start, fmt::format("expected {}", what) + near());
    std::string name = text().substr(start, pos_ - start);
    skip_blanks();
    return name;
  }

  void expect(char c) {
    skip_blanks();
    if (peek() != c) fail(pos_, fmt::format("expected '{}'", c) + near());
    advance();
  }

  std::string near() const {
    if (pos_ >= text().size()) return " at the end";
    return fmt::format(" near '{}'", text()[pos_]);
  }

  char peek() {
    skip_blanks();
    return pos_ < text().size() ? text()[pos_] : '\0';
  }
  void advance() {
    ++pos_;
    skip_blanks();
  }
  void skip_blanks() {
    while (pos_ < text().size() && std::isspace(static_cast<unsigned char>(text()[pos_]))) ++pos_;
  }

  [[noreturn]] void fail(std::size_t at, const std::string& message) {
    throw source_error(source_, source_.locate(at), error_kind::signature, message);
  }

  Source source_;
  std::size_t pos_ = 0;
};

}  // namespace

Signature parse_signature(std::string_view text) { return SignatureParser(text).parse(); }

std::string DeclaredFunction::signature() const { return Signature{result, params}.str(); }

std::string Signature::str() const {
  std::string out = result.str() + "(";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i) out += ", ";
    const Type& p = params[i];
    if (p.kind != Type::Kind::Array) {
      out += p.str();
      continue;
    }
    out += std::string(scalar_name(p.scalar)) + "[";
    for (int d = 0; d < p.ndim; ++d) {
      if (d) out += ", ";
      out += (p.c_contiguous && d == p.ndim - 1) ? "::1" : ":";
    }
    out += "]";
  }
  return out + ")";
}

}  // namespace luda::dsl

#include "dsl/source_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace luda::dsl {
namespace {

// Lua's chunkid for a string chunk: [string "first line..."].
std::string string_chunk_name(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::size_t nl = text.find_first_of("\r\n");
  std::string_view first = text.substr(0, nl);
  bool cut = nl != std::string_view::npos || first.size() > kMax;
  if (first.size() > kMax) first = first.substr(0, kMax);
  return fmt::format("[string \"{}{}\"]", first, cut ? "..." : "");
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The identifier ending just before `end` in `s` (after skipping spaces), or "".
std::string ident_before(std::string_view s, std::size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  std::size_t start = end;
  while (start > 0 && ident_char(s[start - 1])) --start;
  if (start == end || std::isdigit(static_cast<unsigned char>(s[start]))) return {};
  return std::string(s.substr(start, end - start));
}

// Where the keyword `word` starts in `line` as a whole word, or npos.
std::size_t find_word(std::string_view line, std::string_view word) {
  for (std::size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
    bool before = at > 0 && ident_char(line[at - 1]);
    bool after = at + word.size() < line.size() && ident_char(line[at + word.size()]);
    if (!before && !after) return at;
  }
  return std::string_view::npos;
}

// The name one line gives the function defined on it: `function a.b:NAME(`, else
// `NAME = ... function(` (the last assignment before the keyword). `before_only`: the
// keyword is on a later line, so the whole line is the part before it.
std::string name_on_line(std::string_view line, bool before_only) {
  std::size_t at = line.size();
  if (!before_only) {
    at = find_word(line, "function");
    if (at == std::string_view::npos) return {};
    std::size_t p = std::min(line.size(), line.find_first_not_of(" \t", at + 8));
    std::size_t start = p, last = p;
    while (p < line.size() && (ident_char(line[p]) || line[p] == '.' || line[p] == ':')) {
      if (line[p] == '.' || line[p] == ':') last = p + 1;
      ++p;
    }
    if (p > start && p > last) return std::string(line.substr(last, p - last));
  }
  // Walking left from the keyword: an '=' inside a group closed before it
  // (`jit({boundscheck = true})(function`) is not the assignment.
  int closed = 0;
  for (std::size_t i = at; i-- > 0;) {
    char c = line[i];
    if (c == ')' || c == '}' || c == ']') ++closed;
    else if ((c == '(' || c == '{' || c == '[') && closed > 0) --closed;
    else if (c == '=' && closed == 0) {
      bool comparison = (i + 1 < line.size() && line[i + 1] == '=') ||
                        (i > 0 &&
                         (line[i - 1] == '=' || line[i - 1] == '~' || line[i - 1] == '<' || line[i - 1] == '>'));
      if (!comparison) return ident_before(line, i);
      if (i > 0 && line[i - 1] == '=') --i;  // skip the other half of '=='
    }
  }
  return {};
}

std::string_view line_of(std::string_view text, int line) {
  std::size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  std::size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

}  // namespace

FunctionSource text_source(std::string text) {
  FunctionSource out;
  std::string name = string_chunk_name(text);
  out.chunk = std::make_shared<const Chunk>(Chunk{std::move(name), std::move(text)});
  return out;
}

std::string function_name(const FunctionSource& source) {
  if (!source.chunk) return {};
  std::string_view text = source.chunk->text;
  if (source.line_defined == 0) {  // source text: `[return] [local] function NAME(` names it
    std::string_view rest = text.substr(std::min(text.size(), text.find_first_not_of(" \t\r\n")));
    for (std::string_view word : {"return", "local"})
      if (find_word(rest, word) == 0)
        rest = rest.substr(std::min(rest.size(), rest.find_first_not_of(" \t\r\n", word.size())));
    return find_word(rest, "function") == 0 ? name_on_line(line_of(rest, 1), false) : std::string();
  }
  std::string name = name_on_line(line_of(text, source.line_defined), false);
  if (!name.empty()) return name;
  // `add_kernel = cuda.jit(` on the line before a `function(` that starts its own line.
  std::string_view line = line_of(text, source.line_defined);
  std::size_t first = line.find_first_not_of(" \t");
  if (source.line_defined > 1 && first != std::string_view::npos && line.substr(first).starts_with("function"))
    return name_on_line(line_of(text, source.line_defined - 1), true);
  return {};
}

}  // namespace luda::dsl

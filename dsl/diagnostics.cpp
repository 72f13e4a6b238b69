#include "dsl/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

namespace luda::dsl {

namespace {

// SourceError::headline's text, for an error being made.
std::string headline_of(std::string_view chunk, int line, int col, std::string_view kind, std::string_view message) {
  if (line <= 0) return fmt::format("{}: {}: {}", chunk, kind, message);
  return fmt::format("{}:{}:{}: {}: {}", chunk, line, col, kind, message);
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

}  // namespace

std::string caret_lines(const Source& source, Location at, std::optional<Span> range) {
  std::string_view line = source.line_text(at.line);
  // Leading blanks are dropped (the 4-space indent replaces them) and so are trailing ones.
  std::size_t first = 0;
  while (first < line.size() && blank(line[first])) ++first;
  std::size_t last = line.size();
  while (last > first && blank(line[last - 1])) --last;
  if (first == last) return {};
  std::string shown(line.substr(first, last - first));
  std::replace(shown.begin(), shown.end(), '\t', ' ');  // a tab is one column

  // Columns, 0-based within `shown`; the caret may sit one past the end (a missing token).
  auto width = static_cast<long>(shown.size());
  auto column = [&](int col) { return std::clamp(static_cast<long>(col) - 1 - static_cast<long>(first), 0L, width); };
  long caret = column(at.col);
  long from = caret, to = caret;
  if (range) {
    from = range->begin.line < at.line ? 0 : range->begin.line > at.line ? caret : column(range->begin.col);
    to = range->end.line > at.line ? width - 1 : range->end.line < at.line ? caret : column(range->end.col);
    from = std::min(from, caret);
    to = std::max(to, caret);
  }
  std::string marks(static_cast<std::size_t>(to + 1), ' ');
  for (long i = from; i <= to; ++i) marks[static_cast<std::size_t>(i)] = '~';
  marks[static_cast<std::size_t>(caret)] = '^';
  return fmt::format("    {}\n    {}", shown, marks);
}

SourceError source_error(const Source& source, Location at, std::string_view kind, std::string_view message,
                         std::optional<Span> range) {
  std::string text = headline_of(source.name(), at.line, at.col, kind, message);
  if (at.known()) {
    std::string lines = caret_lines(source, at, range);
    if (!lines.empty()) text += "\n" + lines;
  }
  return SourceError(std::move(text), source.name(), at.line, at.col, std::string(kind), std::string(message));
}

SourceError source_error(std::string_view chunk, Location at, std::string_view kind, std::string_view message) {
  return SourceError(headline_of(chunk, at.line, at.col, kind, message), std::string(chunk), at.line, at.col,
                     std::string(kind), std::string(message));
}

void internal_error(std::string_view what, const char* file, int line) {
  throw std::logic_error(fmt::format("internal error: {}:{}: check failed: {}", file, line, what));
}

}  // namespace luda::dsl

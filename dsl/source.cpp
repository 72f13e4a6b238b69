#include "dsl/source.h"

#include <algorithm>

namespace luda::dsl {

Source::Source(std::string name, std::string text, std::size_t hidden_prefix)
    : name_(std::move(name)), text_(std::move(text)), hidden_prefix_(std::min(hidden_prefix, text_.size())) {
  line_starts_.push_back(0);
  // Lua counts "\n", "\r", "\r\n" and "\n\r" as one line break each (llex.c inclinenumber).
  for (std::size_t i = 0; i < text_.size(); ++i) {
    char c = text_[i];
    if (c != '\n' && c != '\r') continue;
    if (i + 1 < text_.size() && (text_[i + 1] == '\n' || text_[i + 1] == '\r') && text_[i + 1] != c) ++i;
    line_starts_.push_back(static_cast<std::uint32_t>(i + 1));
  }
}

Location Source::locate(std::size_t offset) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), static_cast<std::uint32_t>(offset));
  auto line = static_cast<int>(it - line_starts_.begin());  // >= 1: line_starts_[0] == 0
  std::size_t start = line == 1 ? hidden_prefix_ : line_starts_[static_cast<std::size_t>(line - 1)];
  return {line, offset >= start ? static_cast<int>(offset - start) + 1 : 1};
}

std::size_t Source::offset_of(Location at) const {
  if (at.line < 1) return 0;
  if (at.line > line_count()) return text_.size();
  std::size_t start = at.line == 1 ? hidden_prefix_ : line_starts_[static_cast<std::size_t>(at.line - 1)];
  return std::min(text_.size(), start + static_cast<std::size_t>(std::max(at.col, 1) - 1));
}

std::string_view Source::line_text(int line) const {
  if (line < 1 || line > line_count()) return {};
  std::size_t start = line == 1 ? hidden_prefix_ : line_starts_[static_cast<std::size_t>(line - 1)];
  std::size_t stop = line < line_count() ? line_starts_[static_cast<std::size_t>(line)] : text_.size();
  std::string_view s(text_.data() + start, stop - start);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace luda::dsl

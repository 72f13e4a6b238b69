#include "ops/slice_syntax.h"

#include <cctype>
#include <limits>
#include <optional>

#include "runtime/error.h"
#include "runtime/format.h"

namespace luda::ops {
namespace {

class IndexParser {
 public:
  explicit IndexParser(std::string_view text) : text_(text) {}

  // items -> [item {',' item} [',']]
  std::vector<IndexItem> parse(int ndim) {
    skip_space();
    while (pos_ < text_.size()) {
      item();
      skip_space();
      if (pos_ == text_.size()) break;
      if (text_[pos_] != ',') error(expected_after_item_);
      ++pos_;
      skip_space();
    }
    return expand(ndim);
  }

 private:
  // item -> '...' | [int] ':' [int] [':' [int]] | int
  void item() {
    if (text_.substr(pos_, 3) == "...") {
      if (ellipsis_at_) error_at(pos_ + 1, "an index can have only one '...'");
      ellipsis_at_ = items_.size() + 1;
      pos_ += 3;
      expected_after_item_ = "','";
      return;
    }
    std::optional<std::int64_t> start = integer();
    skip_space();
    if (!peek(':')) {
      if (!start) error("an integer, ':' or '...'");
      items_.emplace_back(*start);
      expected_after_item_ = "':' or ','";
      return;
    }
    ++pos_;
    Slice s;
    s.start = start;
    s.stop = integer();
    skip_space();
    expected_after_item_ = s.stop ? "':' or ','" : "an integer, ':' or ','";
    if (peek(':')) {
      ++pos_;
      std::optional<std::int64_t> step = integer();
      if (step && *step == 0) error_at(step_column_, "slice step cannot be zero");
      if (step) s.step = *step;
      expected_after_item_ = step ? "','" : "an integer or ','";
    }
    items_.emplace_back(s);
  }

  // int -> ['+' | '-'] digit {digit}
  std::optional<std::int64_t> integer() {
    skip_space();
    std::size_t begin = pos_;
    bool negative = false;
    if (peek('+') || peek('-')) {
      negative = text_[pos_] == '-';
      ++pos_;
      if (pos_ == text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
        error("digits after the sign");
    }
    if (pos_ == text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) return std::nullopt;
    step_column_ = begin + 1;
    unsigned long long value = 0;
    constexpr auto kMax = static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max());
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      value = value * 10 + static_cast<unsigned>(text_[pos_] - '0');
      if (value > kMax + (negative ? 1 : 0)) error_at(begin + 1, "integer out of range");
      ++pos_;
    }
    if (negative) return static_cast<std::int64_t>(0 - value);
    return static_cast<std::int64_t>(value);
  }

  std::vector<IndexItem> expand(int ndim) {
    if (!ellipsis_at_) return std::move(items_);
    std::vector<IndexItem> out;
    std::size_t at = ellipsis_at_ - 1;
    out.insert(out.end(), items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(at));
    int whole = ndim - static_cast<int>(items_.size());
    for (int i = 0; i < whole; ++i) out.emplace_back(Slice{});
    out.insert(out.end(), items_.begin() + static_cast<std::ptrdiff_t>(at), items_.end());
    return out;
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  [[noreturn]] void error(std::string_view expected) {
    std::string found = pos_ < text_.size() ? fmt::format("'{}'", printable(text_.substr(pos_, 1))) : "the end";
    fail("slice: syntax error in \"{}\" at column {}: expected {} but found {}", printable(text_), pos_ + 1,
         expected, found);
  }
  [[noreturn]] void error_at(std::size_t column, std::string_view what) {
    fail("slice: syntax error in \"{}\" at column {}: {}", printable(text_), column, what);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<IndexItem> items_;
  std::size_t ellipsis_at_ = 0;  // 1 + position of "..." among the items; 0 when none
  std::size_t step_column_ = 0;  // column of the last integer read
  std::string_view expected_after_item_ = "','";
};

}  // namespace

std::vector<IndexItem> parse_index_string(std::string_view text, int ndim) {
  return IndexParser(text).parse(ndim);
}

}  // namespace luda::ops

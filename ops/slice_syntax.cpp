#include "ops/slice_syntax.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>

#include "runtime/error.h"
#include "runtime/format.h"

namespace luda::ops {
namespace {

bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class IndexParser {
 public:
  IndexParser(std::string_view text, Device device) : text_(text), device_(device) {}

  // items -> [item {',' item} [',']]
  std::vector<Index> parse() {
    skip_space();
    while (pos_ < text_.size()) {
      item();
      skip_space();
      if (pos_ == text_.size()) break;
      if (text_[pos_] != ',') error(expected_after_item_);
      ++pos_;
      skip_space();
    }
    return std::move(items_);
  }

 private:
  // A list's values as they are read, in C order.
  struct List {
    std::vector<std::int64_t> values;
    bool all_bools = true;
  };

  // item -> '...' | 'None' | 'newaxis' | 'True' | 'False' | list | [int] ':' [int] [':' [int]] | int
  void item() {
    expected_after_item_ = "','";
    if (text_.substr(pos_, 3) == "...") {
      if (ellipsis_) error_at(pos_ + 1, "an index can have only one '...'");
      ellipsis_ = true;
      pos_ += 3;
      items_.emplace_back(Ellipsis{});
      return;
    }
    if (pos_ < text_.size() && word_start(text_[pos_])) {
      const std::size_t begin = pos_;
      std::string_view w = word();
      if (w == "None" || w == "newaxis") items_.emplace_back(NewAxis{});
      else if (w == "True" || w == "False") items_.emplace_back(w == "True");
      else {
        pos_ = begin;
        error(kItemStart);
      }
      return;
    }
    if (peek('[')) {
      List l;
      const Shape shape = list(l);
      items_.emplace_back(array_of(l, shape));
      return;
    }
    std::optional<std::int64_t> start = integer();
    skip_space();
    if (!peek(':')) {
      if (!start) error(kItemStart);
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

  // list -> '[' [element {',' element} [',']] ']'
  // element -> list | int | 'True' | 'False'
  // The elements are all lists of one shape, or all values (NumPy's rectangular arrays).
  // Returns the list's shape; its values go to l in C order.
  Shape list(List& l, int depth = 1) {
    const std::size_t open = pos_ + 1;
    // Before going deeper: an array has at most kMaxNdim axes, and the C stack is finite.
    if (depth > kMaxNdim)
      error_at(open, fmt::format("lists nested more than {} deep (the most axes an array may have)", kMaxNdim));
    ++pos_;  // '['
    std::int64_t count = 0;
    std::optional<Shape> inner;  // the elements' shape: () for values
    skip_space();
    while (!peek(']')) {
      Shape shape;
      if (peek('[')) {
        shape = list(l, depth + 1);
      } else {
        const std::size_t begin = pos_;
        std::optional<std::int64_t> v;
        bool is_bool = false;
        if (pos_ < text_.size() && word_start(text_[pos_])) {
          std::string_view w = word();
          is_bool = w == "True" || w == "False";
          if (is_bool) v = w == "True";
          else pos_ = begin;
        } else {
          v = integer();
        }
        if (!v) error(count == 0 ? "an integer, True, False, '[' or ']'" : "an integer, True, False or '['");
        l.values.push_back(*v);
        l.all_bools = l.all_bools && is_bool;
      }
      if (inner && *inner != shape) error_at(open, kRagged);
      inner = shape;
      ++count;
      skip_space();
      if (peek(',')) {
        ++pos_;
        skip_space();
      } else if (!peek(']')) {
        error("',' or ']'");
      }
    }
    ++pos_;  // ']'
    Shape shape{count};
    if (inner) shape.insert(shape.end(), inner->begin(), inner->end());
    return shape;
  }

  Index array_of(const List& l, const Shape& shape) {
    const bool bools = l.all_bools && !l.values.empty();
    if (bools) {
      std::vector<unsigned char> bytes(l.values.begin(), l.values.end());
      return NDArray::from_host(bytes.data(), shape, DType::Bool, device_);
    }
    if (l.values.empty()) return NDArray::empty(shape, DType::Int64, device_);
    return NDArray::from_host(l.values.data(), shape, DType::Int64, device_);
  }

  std::string_view word() {
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && word_char(text_[pos_])) ++pos_;
    return text_.substr(begin, pos_ - begin);
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

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  [[noreturn]] void error(std::string_view expected) {
    std::string found = pos_ < text_.size() ? fmt::format("'{}'", printable(text_.substr(pos_, 1))) : "the end";
    fail("slice: syntax error in \"{}\" at column {}: expected {} but found {}", printable(text_), pos_ + 1, expected,
         found);
  }
  [[noreturn]] void error_at(std::size_t column, std::string_view what) {
    fail("slice: syntax error in \"{}\" at column {}: {}", printable(text_), column, what);
  }

  static constexpr std::string_view kItemStart = "an integer, ':', '...', '[', None, newaxis, True or False";
  static constexpr std::string_view kRagged =
      "a ragged nested list (the lists inside one list must all have one shape, or all be values)";

  std::string_view text_;
  Device device_;
  std::size_t pos_ = 0;
  std::vector<Index> items_;
  bool ellipsis_ = false;
  std::size_t step_column_ = 0;  // column of the last integer read
  std::string_view expected_after_item_ = "','";
};

}  // namespace

std::vector<Index> parse_index_string(std::string_view text, Device device) {
  return IndexParser(text, device).parse();
}

}  // namespace luda::ops

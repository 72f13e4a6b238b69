// Follows numpy/_core/arrayprint.py (NumPy 2): _formatArray for the layout and line
// wrapping, BoolFormat / IntegerFormat / FloatingFormat for the elements. Float digits are
// the shortest that round-trip (std::to_chars), cut to `precision` fractional digits with
// exact rounding when longer, as NumPy's Dragon4 does in 'maxprec' mode.
#include "runtime/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <variant>

#include "runtime/error.h"

namespace luda {
namespace {

// ---- float digits ---------------------------------------------------------------------

// Digits of one float, split as NumPy's FloatingFormat splits them.
struct FloatParts {
  std::string int_part;   // with the sign: "-12"
  std::string frac_part;  // digits after the point, maybe empty
  std::string exp_part;   // scientific only: "+10", "-05"
};

// The float element types printing knows. T is float, double, Float16 or BFloat16; V is
// the C++ type its values are held in while printed (float for the 16-bit ones).
template <class T>
using Held = std::conditional_t<is_half_v<T>, float, T>;

// finfo(T).precision (bfloat16's as ml_dtypes gives it), which sets where NumPy turns to
// scientific notation.
template <class T>
constexpr int decimal_precision() {
  if constexpr (std::is_same_v<T, double>) return 15;
  else if constexpr (std::is_same_v<T, float>) return 6;
  else if constexpr (std::is_same_v<T, Float16>) return 3;
  else return 2;
}

// x rounded to T, held as Held<T>: what NumPy's comparisons in T's arithmetic see.
template <class T>
Held<T> in_type(double x) {
  if constexpr (is_half_v<T>) return T::from(x).value();
  else return static_cast<T>(x);
}

template <class V, class... Format>
std::string to_chars_text(V x, Format... format) {
  char buf[1200];  // fixed notation of a float64 can be 1100 characters long
  auto r = std::to_chars(buf, buf + sizeof buf, x, format...);
  LUDA_INTERNAL_CHECK(r.ec == std::errc());
  return std::string(buf, r.ptr);
}

// The shortest digits that read back as x in T (std::to_chars knows float and double;
// for the 16-bit types, the fewest digits whose value rounds to x's bits).
template <class T>
std::string chars(Held<T> x, std::chars_format format) {
  if constexpr (!is_half_v<T>) {
    return to_chars_text(x, format);
  } else {
    const std::uint16_t bits = T::from(x).bits;
    for (int digits = 0;; ++digits) {
      std::string s = to_chars_text(x, format, digits);
      double back = 0;
      std::from_chars(s.data(), s.data() + s.size(), back);
      if (T::from(back).bits == bits) return s;
    }
  }
}

template <class T>
std::string chars(Held<T> x, std::chars_format format, int precision) {
  return to_chars_text(x, format, precision);
}

void strip_trailing_zeros(std::string& frac) {
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
}

// Shortest round-trip digits in positional notation, at most `precision` after the point
// (rounded exactly when longer); trailing zeros trimmed. With `plus`, a '+' before a
// number without a minus (NumPy's sign='+').
template <class T>
FloatParts positional(Held<T> x, int precision, bool plus = false) {
  std::string s = chars<T>(x, std::chars_format::fixed);
  auto dot = s.find('.');
  if (dot != std::string::npos && static_cast<int>(s.size() - dot - 1) > precision) {
    s = chars<T>(x, std::chars_format::fixed, precision);
    dot = s.find('.');
  }
  FloatParts p;
  p.int_part = (plus && !std::signbit(x) ? "+" : "") + s.substr(0, dot);
  if (dot != std::string::npos) p.frac_part = s.substr(dot + 1);
  strip_trailing_zeros(p.frac_part);
  return p;
}

// The same in scientific notation: "1.5e+10" -> {"1", "5", "+10"}.
// With `exact_digits`, exactly `precision` digits of the exact value instead (Dragon4's
// min_digits: past the shortest digits come the true ones, not zeros).
template <class T>
FloatParts scientific(Held<T> x, int precision, bool exact_digits = false, bool plus = false) {
  std::string s = chars<T>(x, std::chars_format::scientific);
  auto e = s.find('e'), dot = s.find('.');
  if (exact_digits || (dot != std::string::npos && static_cast<int>(e - dot - 1) > precision)) {
    s = chars<T>(x, std::chars_format::scientific, precision);
    e = s.find('e');
  }
  FloatParts p;
  std::string mantissa = s.substr(0, e);
  p.exp_part = s.substr(e + 1);
  dot = mantissa.find('.');
  p.int_part = (plus && !std::signbit(x) ? "+" : "") + mantissa.substr(0, dot);
  if (dot != std::string::npos) p.frac_part = mantissa.substr(dot + 1);
  if (!exact_digits) strip_trailing_zeros(p.frac_part);
  return p;
}

// ---- element formats ------------------------------------------------------------------

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// Calls fn(pointer to element) for every element of a host array, in C order.
void for_each_element(const NDArray& h, const std::function<void(const std::byte*)>& fn) {
  if (h.size() == 0) return;
  const auto item = static_cast<std::int64_t>(itemsize(h.dtype()));
  const auto* base = static_cast<const std::byte*>(h.data());
  const int nd = h.ndim();
  std::vector<std::int64_t> pos(nd, 0);
  std::int64_t off = 0;
  for (;;) {
    fn(base + off * item);
    int k = nd - 1;
    for (; k >= 0; --k) {
      off += h.strides()[k];
      if (++pos[k] < h.shape()[k]) break;
      off -= h.strides()[k] * h.shape()[k];
      pos[k] = 0;
    }
    if (k < 0) return;
  }
}

// FloatingFormat(floatmode='maxprec', sign='-' or '+' (`plus`), suppress_small=False) of
// NumPy 2.
template <class T>
class FloatFormat {
  using V = Held<T>;

 public:
  FloatFormat(const std::vector<V>& data, int precision, bool plus = false) : plus_(plus) {
    std::vector<V> finite;
    bool has_neginf = plus;  // with sign='+', room for a sign before "inf" anyway
    for (V x : data) {
      if (std::isfinite(x)) finite.push_back(x);
      else if (std::isinf(x) && x < 0) has_neginf = true;
    }
    // Scientific when the nonzero magnitudes are large, tiny, or far apart (compared in T,
    // as NumPy compares in the array's dtype). "Large" is 10^min(8, finfo(T).precision):
    // 1e3 for float16, 1e6 for float32, 1e8 for float64.
    bool any_nonzero = false;
    V max_val = 0, min_val = std::numeric_limits<V>::infinity();
    for (V x : finite) {
      if (x == 0) continue;
      any_nonzero = true;
      max_val = std::max(max_val, std::abs(x));
      min_val = std::min(min_val, std::abs(x));
    }
    const double large = std::pow(10.0, std::min(8, decimal_precision<T>()));
    if (any_nonzero)
      exp_format_ = max_val >= in_type<T>(large) || min_val < in_type<T>(0.0001) ||
                    in_type<T>(static_cast<double>(max_val / min_val)) > in_type<T>(1000.);
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
      precision_ = precision;
    } else if (exp_format_) {
      std::size_t exp_len = 0, frac_len = 0, int_len = 0;
      for (V x : finite) {
        FloatParts p = scientific<T>(x, precision, false, plus_);
        exp_len = std::max(exp_len, p.exp_part.size());
        frac_len = std::max(frac_len, p.frac_part.size());
        int_len = std::max(int_len, p.int_part.size());
      }
      exp_size_ = static_cast<int>(exp_len) - 1;
      precision_ = static_cast<int>(frac_len);  // every number shows this many digits
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      std::size_t frac_len = 0, int_len = 0;
      for (V x : finite) {
        FloatParts p = positional<T>(x, precision, plus_);
        frac_len = std::max(frac_len, p.frac_part.size());
        int_len = std::max(int_len, p.int_part.size());
      }
      precision_ = precision;
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = static_cast<int>(frac_len);
    }
    if (finite.size() != data.size()) {  // room for "nan", "inf", "-inf"
      const int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (has_neginf ? 1 : 0) - offset});
    }
  }

  std::string operator()(V x) const {
    const auto width = static_cast<std::size_t>(pad_left_ + pad_right_ + 1);
    if (std::isnan(x)) return pad_left(plus_ ? "+nan" : "nan", width);
    if (std::isinf(x)) return pad_left(x < 0 ? "-inf" : plus_ ? "+inf" : "inf", width);
    if (exp_format_) {
      FloatParts p = scientific<T>(x, precision_, /*exact_digits=*/true, plus_);
      std::string digits = p.exp_part.substr(1);
      if (static_cast<int>(digits.size()) < exp_size_)
        digits.insert(0, static_cast<std::size_t>(exp_size_) - digits.size(), '0');
      return pad_left(p.int_part, static_cast<std::size_t>(pad_left_)) + "." + p.frac_part + "e" + p.exp_part[0] +
             digits;
    }
    FloatParts p = positional<T>(x, precision_, plus_);
    p.frac_part.resize(static_cast<std::size_t>(pad_right_), ' ');
    return pad_left(p.int_part, static_cast<std::size_t>(pad_left_)) + "." + p.frac_part;
  }

 private:
  bool plus_;
  bool exp_format_ = false;
  int precision_ = 8;
  int pad_left_ = 0, pad_right_ = 0;
  int exp_size_ = -1;
};

// ComplexFloatingFormat of NumPy 2: the real parts as one float column, the imaginary
// parts as another with their sign always shown, and a 'j' before the padding.
template <class T>
class ComplexFormat {
 public:
  ComplexFormat(const std::vector<std::complex<T>>& data, int precision)
      : real_(parts(data, false), precision), imag_(parts(data, true), precision, /*plus=*/true) {}

  std::string operator()(std::complex<T> z) const {
    std::string i = imag_(z.imag());
    const auto end = i.find_last_not_of(' ') + 1;
    return real_(z.real()) + i.substr(0, end) + "j" + i.substr(end);
  }

 private:
  static std::vector<T> parts(const std::vector<std::complex<T>>& data, bool imag) {
    std::vector<T> out;
    for (auto z : data) out.push_back(imag ? z.imag() : z.real());
    return out;
  }
  FloatFormat<T> real_, imag_;
};

// Loads every shown element as T, for a format of the whole column.
template <class T>
std::vector<T> elements_as(const NDArray& shown) {
  std::vector<T> v;
  for_each_element(shown, [&](const std::byte* p) {
    if constexpr (std::is_same_v<T, float>) {
      if (shown.dtype() == DType::Float16) return v.push_back(load_element<Float16>(p).value());
      if (shown.dtype() == DType::BFloat16) return v.push_back(load_element<BFloat16>(p).value());
    }
    v.push_back(load_element<T>(p));
  });
  return v;
}

// Formats the elements of one array, sized from the elements that will be shown.
class ElementFormat {
 public:
  ElementFormat(const NDArray& shown, int precision) : dtype_(shown.dtype()) {
    switch (dtype_) {
      case DType::Bool: true_str_ = shown.ndim() == 0 ? "True" : " True"; return;
      case DType::Float16: format_ = FloatFormat<Float16>(elements_as<float>(shown), precision); return;
      case DType::BFloat16: format_ = FloatFormat<BFloat16>(elements_as<float>(shown), precision); return;
      case DType::Float32: format_ = FloatFormat<float>(elements_as<float>(shown), precision); return;
      case DType::Float64: format_ = FloatFormat<double>(elements_as<double>(shown), precision); return;
      case DType::Complex64: format_ = ComplexFormat<float>(elements_as<std::complex<float>>(shown), precision); return;
      case DType::Complex128:
        format_ = ComplexFormat<double>(elements_as<std::complex<double>>(shown), precision);
        return;
      default: break;
    }
    {  // IntegerFormat: right-aligned to the wider of str(max) and str(min)
      std::size_t width = 0;
      for_each_element(shown, [&](const std::byte* p) { width = std::max(width, integer_str(p).size()); });
      width_ = width;
    }
  }

  std::string operator()(const std::byte* p) const {
    switch (dtype_) {
      case DType::Bool: return load_element<bool>(p) ? true_str_ : "False";
      case DType::Float16: return std::get<FloatFormat<Float16>>(format_)(load_element<Float16>(p).value());
      case DType::BFloat16: return std::get<FloatFormat<BFloat16>>(format_)(load_element<BFloat16>(p).value());
      case DType::Float32: return std::get<FloatFormat<float>>(format_)(load_element<float>(p));
      case DType::Float64: return std::get<FloatFormat<double>>(format_)(load_element<double>(p));
      case DType::Complex64: return std::get<ComplexFormat<float>>(format_)(load_element<std::complex<float>>(p));
      case DType::Complex128: return std::get<ComplexFormat<double>>(format_)(load_element<std::complex<double>>(p));
      default: return pad_left(integer_str(p), width_);
    }
  }

 private:
  std::string integer_str(const std::byte* p) const {
    Scalar s = Scalar::load(p, dtype_);
    return is_unsigned_integer(dtype_) ? std::to_string(s.v.u) : std::to_string(s.v.i);
  }

  DType dtype_;
  std::string true_str_;
  std::size_t width_ = 0;
  std::variant<std::monostate, FloatFormat<float>, FloatFormat<double>, FloatFormat<Float16>, FloatFormat<BFloat16>,
               ComplexFormat<float>, ComplexFormat<double>>
      format_;
};

// ---- layout ---------------------------------------------------------------------------

std::string rstrip(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

// A host array of the elements shown: along each axis longer than 2*edge, the first and
// last `edge` only. Only those parts of a device array are copied to the host.
NDArray summarize(const NDArray& a, int edge, int from_axis) {
  for (int k = from_axis; k < a.ndim(); ++k) {
    const std::int64_t n = a.shape()[k];
    if (n <= 2 * edge) continue;
    std::vector<IndexItem> head(k + 1, Slice{}), tail(k + 1, Slice{});
    head[k] = Slice{std::nullopt, edge, 1};
    tail[k] = Slice{n - edge, std::nullopt, 1};
    Shape shape = a.shape();
    for (int j = k; j < a.ndim(); ++j) shape[j] = std::min<std::int64_t>(shape[j], 2 * edge);
    NDArray out = NDArray::empty(shape, a.dtype(), Device::cpu());
    std::vector<IndexItem> lo(k + 1, Slice{}), hi(k + 1, Slice{});
    lo[k] = Slice{std::nullopt, edge, 1};
    hi[k] = Slice{edge, std::nullopt, 1};
    out.index(lo).assign(summarize(a.index(head), edge, k + 1));
    out.index(hi).assign(summarize(a.index(tail), edge, k + 1));
    return out;
  }
  return a.to(Device::cpu());
}

// numpy's _formatArray.
class Layout {
 public:
  Layout(const NDArray& shown, const Shape& shape, bool summary, const PrintOptions& options, std::string separator)
      : shown_(shown),
        shape_(shape),
        summary_(summary),
        edge_(options.edgeitems),
        separator_(std::move(separator)),
        format_(shown, options.precision) {}

  std::string recurse(std::vector<std::int64_t>& index, const std::string& hanging, int width) {
    const std::size_t axis = index.size();
    const std::size_t axes_left = shape_.size() - axis;
    if (axes_left == 0) return format_(element(index));
    const std::string next_hanging = hanging + " ";
    const int next_width = width - 1;  // room for the ']'
    const std::int64_t len = shape_[axis];
    const bool show_summary = summary_ && 2 * edge_ < len;
    const std::int64_t leading = show_summary ? edge_ : 0;
    const std::int64_t trailing = show_summary ? edge_ : len;
    std::string s;
    auto item = [&](std::int64_t i) {
      index.push_back(i);
      std::string r = recurse(index, next_hanging, next_width);
      index.pop_back();
      return r;
    };
    if (axes_left == 1) {
      const int elem_width = width - std::max<int>(static_cast<int>(rstrip(separator_).size()), 1);
      std::string line = hanging;
      auto extend = [&](const std::string& word) {
        bool wrap = static_cast<int>(line.size() + word.size()) > elem_width;
        if (line.size() <= hanging.size()) wrap = false;  // wrapping would not help
        if (wrap) {
          s += rstrip(line) + "\n";
          line = hanging;
        }
        line += word;
      };
      for (std::int64_t i = 0; i < leading; ++i) {
        extend(item(i));
        line += separator_;
      }
      if (show_summary) {
        extend("...");
        line += separator_;
      }
      for (std::int64_t i = trailing; i > 1; --i) {
        extend(item(-i));
        line += separator_;
      }
      extend(item(-1));
      s += line;
    } else {
      const std::string line_sep = rstrip(separator_) + std::string(axes_left - 1, '\n');
      for (std::int64_t i = 0; i < leading; ++i) s += hanging + item(i) + line_sep;
      if (show_summary) s += hanging + "..." + line_sep;
      for (std::int64_t i = trailing; i > 1; --i) s += hanging + item(-i) + line_sep;
      s += hanging + item(-1);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

 private:
  // Negative positions count from the end, of the shown elements as of the whole array.
  const std::byte* element(const std::vector<std::int64_t>& index) const {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < index.size(); ++k) {
      std::int64_t i = index[k] < 0 ? index[k] + shown_.shape()[k] : index[k];
      off += i * shown_.strides()[k];
    }
    return static_cast<const std::byte*>(shown_.data()) + off * static_cast<std::int64_t>(itemsize(shown_.dtype()));
  }

  const NDArray& shown_;
  const Shape& shape_;
  bool summary_;
  std::int64_t edge_;
  std::string separator_;
  ElementFormat format_;
};

// numpy's array2string for a non-empty array; `suffix_len` is taken off the line width.
std::string array2string(const NDArray& a, const PrintOptions& options, const std::string& separator,
                         const std::string& prefix, int suffix_len) {
  const bool summary = a.size() > options.threshold;
  NDArray shown = summary ? summarize(a, options.edgeitems, 0) : a.to(Device::cpu());
  Layout layout(shown, a.shape(), summary, options, separator);
  std::vector<std::int64_t> index;
  return layout.recurse(index, " " + std::string(prefix.size(), ' '), options.linewidth - suffix_len);
}

// float64, complex128, int64 and bool are what NumPy leaves out of a repr.
bool dtype_is_implied(DType t) {
  return t == DType::Float64 || t == DType::Complex128 || t == DType::Int64 || t == DType::Bool;
}

// Positional between 1e-4 and 10^finfo(T).precision (1e16 for float64), else
// scientific, as NumPy 2 does.
template <class T>
std::string float_scalar_str(Held<T> x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  const double m = std::abs(static_cast<double>(x));
  const double high = std::is_same_v<T, double> ? 1e16 : std::pow(10.0, decimal_precision<T>());
  if (m == 0 || (1e-4 <= m && m < high)) {
    std::string s = chars<T>(x, std::chars_format::fixed);
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
  }
  return chars<T>(x, std::chars_format::scientific);
}

// Python's complex repr, which NumPy's str of a complex scalar follows: "(1.5-2j)", "1j",
// "(-0-0j)", "(nan+infj)"; each part a float's str without a trailing ".0".
template <class T>
std::string complex_scalar_str(T re, T im) {
  auto part = [](T x) {
    std::string s = float_scalar_str<T>(x);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    return s;
  };
  if (re == 0 && !std::signbit(re)) return part(im) + "j";
  const bool minus = std::signbit(im) && !std::isnan(im);
  return "(" + part(re) + (minus ? "" : "+") + part(im) + "j)";
}

}  // namespace

std::string format_scalar(const Scalar& s) {
  if (s.dtype == DType::Bool) return s.v.b ? "True" : "False";
  switch (s.dtype) {
    case DType::Float16: return float_scalar_str<Float16>(static_cast<float>(s.v.f));
    case DType::BFloat16: return float_scalar_str<BFloat16>(static_cast<float>(s.v.f));
    case DType::Float32: return float_scalar_str<float>(static_cast<float>(s.v.f));
    case DType::Float64: return float_scalar_str<double>(s.v.f);
    case DType::Complex64: return complex_scalar_str(static_cast<float>(s.v.f), static_cast<float>(s.im));
    case DType::Complex128: return complex_scalar_str(s.v.f, s.im);
    default: break;
  }
  return is_unsigned_integer(s.dtype) ? std::to_string(s.v.u) : std::to_string(s.v.i);
}

std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto b = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (b < 0x20 || b == 0x7f) out += fmt::format("\\{}", static_cast<int>(b));
    else out += c;
  }
  return out;
}

std::string format_repr(const NDArray& a, const PrintOptions& options) {
  const std::string prefix = "array(";
  const std::string body = a.size() == 0 ? "[]" : array2string(a, options, ", ", prefix, 1);
  std::vector<std::string> extras;
  if ((a.size() == 0 && a.shape() != Shape{0}) || a.size() > options.threshold)
    extras.push_back("shape=" + shape_str(a.shape()));
  if (!dtype_is_implied(a.dtype()) || a.size() == 0) extras.push_back("dtype=" + std::string(dtype_name(a.dtype())));
  if (extras.empty()) return prefix + body + ")";
  const std::string head = prefix + body + ",";
  std::string tail;
  for (const auto& e : extras) tail += (tail.empty() ? "" : ", ") + e;
  tail += ")";
  const auto nl = head.rfind('\n');
  const std::size_t last_line = head.size() - (nl == std::string::npos ? 0 : nl + 1);
  // The extras go on a new line when they would run past the line width.
  const bool wrap = static_cast<int>(last_line + tail.size() + 1) > options.linewidth;
  return head + (wrap ? "\n" + std::string(prefix.size(), ' ') : " ") + tail;
}

std::string format_str(const NDArray& a, const PrintOptions& options) {
  if (a.ndim() == 0) return format_scalar(a.get({}));
  if (a.size() == 0) return "[]";
  return array2string(a, options, " ", "", 0);
}

}  // namespace luda

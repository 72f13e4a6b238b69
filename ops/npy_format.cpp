#include "ops/npy_format.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "runtime/error.h"
#include "runtime/graph/recording.h"

namespace luda::ops {
namespace {

static_assert(std::endian::native == std::endian::little, "luda's arrays are little-endian");

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;         // numpy.lib.format.ARRAY_ALIGN
constexpr std::size_t kGrowthDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

// A short printable picture of bytes for messages: printable ASCII as it is, the rest as
// \xNN, cut after `limit` bytes.
std::string printable(std::string_view bytes, std::size_t limit = 80) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') out += static_cast<char>(c);
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += fmt::format("\\x{:02x}", c);
  }
  if (bytes.size() > limit) out += "...";
  return out;
}

// ---- the header: a Python literal ----------------------------------------------------

// One value of the header's Python literal.
struct PyValue {
  enum Kind { String, Bool, None, Int, Tuple, List, Dict } kind = None;
  std::string text;            // String
  bool flag = false;           // Bool
  std::int64_t integer = 0;    // Int
  bool too_big = false;        // Int: past int64
  std::vector<PyValue> items;  // Tuple, List; Dict: key, value, key, value...
};

// A recursive-descent reader of the literals numpy.save writes (ast.literal_eval's
// subset that a header needs): strings, True, False, None, integers, tuples, lists, dicts.
class LiteralParser {
 public:
  LiteralParser(std::string_view text, std::string_view where) : s_(text), where_(where) {}

  // header -> value {space}
  PyValue header() {
    PyValue v = value(0);
    space();
    if (at_ != s_.size()) error("unexpected text after the dict");
    return v;
  }

 private:
  [[noreturn]] void error(std::string_view what) const {
    fail("{}: malformed .npy header: {} at byte {} of '{}'", where_, what, at_, printable(s_, 200));
  }
  void space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  bool take(char c) {
    space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c, std::string_view what) {
    if (!take(c)) error(fmt::format("expected '{}' {}", c, what));
  }

  // value -> string | integer | name | '(' items ')' | '[' items ']' | '{' pairs '}'
  PyValue value(int depth) {
    if (depth > 32) error("values nested too deeply");
    space();
    if (at_ >= s_.size()) error("the header ends where a value should be");
    char c = s_[at_];
    if (c == '\'' || c == '"') return string();
    if (c == '-' || (c >= '0' && c <= '9')) return integer();
    if (c == '(' || c == '[') return sequence(depth);
    if (c == '{') return dict(depth);
    return name();
  }

  // string -> quote {any character but the quote and backslash} quote
  PyValue string() {
    char quote = s_[at_++];
    std::size_t start = at_;
    while (at_ < s_.size() && s_[at_] != quote) {
      if (s_[at_] == '\\') error("escapes in strings are not read");
      ++at_;
    }
    if (at_ >= s_.size()) error("a string is not closed");
    PyValue v;
    v.kind = PyValue::String;
    v.text = std::string(s_.substr(start, at_ - start));
    ++at_;
    return v;
  }

  // integer -> ['-'] digit {digit} ['L' | 'l']   (the suffix of Python 2's headers)
  PyValue integer() {
    PyValue v;
    v.kind = PyValue::Int;
    bool negative = s_[at_] == '-';
    if (negative) ++at_;
    if (at_ >= s_.size() || s_[at_] < '0' || s_[at_] > '9') error("expected a digit");
    std::uint64_t n = 0;
    for (; at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9'; ++at_) {
      auto d = static_cast<std::uint64_t>(s_[at_] - '0');
      if (n > (std::numeric_limits<std::uint64_t>::max() - d) / 10) v.too_big = true;
      else n = n * 10 + d;
    }
    if (at_ < s_.size() && (s_[at_] == 'L' || s_[at_] == 'l')) ++at_;
    if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) v.too_big = true;
    v.integer = v.too_big ? 0 : (negative ? -static_cast<std::int64_t>(n) : static_cast<std::int64_t>(n));
    return v;
  }

  // name -> 'True' | 'False' | 'None'
  PyValue name() {
    PyValue v;
    for (std::string_view word : {"True", "False", "None"}) {
      if (s_.substr(at_, word.size()) == word) {
        at_ += word.size();
        v.kind = word == "None" ? PyValue::None : PyValue::Bool;
        v.flag = word == "True";
        return v;
      }
    }
    error(fmt::format("unexpected '{}'", printable(s_.substr(at_, 1))));
  }

  // sequence -> '(' [value {',' value} [',']] ')' | '[' ... ']'; "(v)" is v itself
  PyValue sequence(int depth) {
    char open = s_[at_++];
    char close = open == '(' ? ')' : ']';
    PyValue v;
    v.kind = open == '(' ? PyValue::Tuple : PyValue::List;
    bool comma = false;
    while (!take(close)) {
      if (!v.items.empty() && !comma) error(fmt::format("expected ',' or '{}'", close));
      v.items.push_back(value(depth + 1));
      comma = take(',');
    }
    if (open == '(' && v.items.size() == 1 && !comma) return std::move(v.items[0]);
    return v;
  }

  // dict -> '{' [value ':' value {',' value ':' value} [',']] '}'
  PyValue dict(int depth) {
    ++at_;
    PyValue v;
    v.kind = PyValue::Dict;
    bool comma = false;
    while (!take('}')) {
      if (!v.items.empty() && !comma) error("expected ',' or '}'");
      v.items.push_back(value(depth + 1));
      expect(':', "after a key");
      v.items.push_back(value(depth + 1));
      comma = take(',');
    }
    return v;
  }

  std::string_view s_;
  std::string_view where_;
  std::size_t at_ = 0;
};

// ---- dtypes ------------------------------------------------------------------------

struct Descr {
  DType dtype;
  const char* text;  // as luda writes it
};
constexpr Descr kDescrs[] = {
    // ORDER DTYPE
    {DType::Bool, "|b1"},     {DType::Int8, "|i1"},      {DType::Int16, "<i2"},       {DType::Int32, "<i4"},
    {DType::Int64, "<i8"},    {DType::UInt8, "|u1"},     {DType::UInt16, "<u2"},      {DType::UInt32, "<u4"},
    {DType::UInt64, "<u8"},   {DType::Float32, "<f4"},   {DType::Float64, "<f8"},     {DType::Float16, "<f2"},
    {DType::BFloat16, "<V2"}, {DType::Complex64, "<c8"}, {DType::Complex128, "<c16"},
};
static_assert(std::size(kDescrs) == kNumDTypes);
static_assert([] {
  for (int i = 0; i < kNumDTypes; ++i)
    if (static_cast<int>(kDescrs[i].dtype) != i) return false;
  return true;
}());

constexpr const char* kDescrList =
    "|b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, <f2, <f4, <f8, <c8, <c16 and <V2 (bfloat16), little- or big-endian";

// A descr string ('<f8', '>i4', '|b1', 'f8') as a dtype and byte order.
std::pair<DType, bool> parse_descr(const std::string& descr, std::string_view where) {
  std::string_view d = descr;
  bool big = false;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    big = d[0] == '>';
    d.remove_prefix(1);
  }
  if (!d.empty() && d[0] == 'O')
    fail("{}: dtype '{}' holds Python objects, which luda cannot read", where, printable(descr));
  if (d.size() >= 2) {
    std::string_view body = d;
    for (const Descr& e : kDescrs)
      if (body == std::string_view(e.text + 1)) return {e.dtype, big && itemsize(e.dtype) > 1};
  }
  fail("{}: unsupported dtype '{}'; luda reads {}", where, printable(descr), kDescrList);
}

// Swaps the bytes of each element (of each part, for a complex) in place.
void swap_bytes(std::byte* data, std::size_t bytes, DType dtype) {
  const std::size_t part = is_complex(dtype) ? itemsize(dtype) / 2 : itemsize(dtype);
  if (part == 1) return;
  for (std::size_t at = 0; at + part <= bytes; at += part) std::reverse(data + at, data + at + part);
}

// Reads exactly n bytes, or throws "<where>: <ends>" with how many came.
std::size_t read_fully(ByteSource& in, void* dst, std::size_t n) {
  std::size_t got = 0;
  auto* p = static_cast<char*>(dst);
  while (got < n) {
    std::size_t k = in.read(p + got, n - got);
    if (k == 0) break;
    got += k;
  }
  return got;
}

}  // namespace

std::size_t MemorySource::read(void* dst, std::size_t n) {
  n = std::min(n, bytes_.size() - at_);
  if (n) std::memcpy(dst, bytes_.data() + at_, n);
  at_ += n;
  return n;
}

std::string npy_descr(DType dtype) { return kDescrs[static_cast<int>(dtype)].text; }

std::string npy_wrap_header(std::string_view dict) {
  // Version 1.0 when its 2-byte length holds the padded header, else 2.0 (4 bytes); the
  // header is ASCII, so version 3.0 (a UTF-8 header) is never needed.
  for (int version : {1, 2}) {
    const std::size_t length_bytes = version == 1 ? 2 : 4;
    const std::size_t hlen = dict.size() + 1;  // and the '\n'
    const std::size_t pad = kAlign - (kMagicLen + 2 + length_bytes + hlen) % kAlign;
    const std::size_t total = hlen + pad;
    if (version == 1 && total > 0xffff) continue;
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(version);
    out += '\0';
    for (std::size_t b = 0; b < length_bytes; ++b) out += static_cast<char>((total >> (8 * b)) & 0xff);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  }
  fail("npy: a header of {} bytes does not fit the .npy format", dict.size());
}

std::string npy_preamble(DType dtype, const Shape& shape) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npy_descr(dtype),
                                 shape_str(shape));
  // numpy.save leaves room for the first extent to grow to 21 digits, so that a writer
  // appending along it can rewrite the header in place.
  if (!shape.empty()) dict.append(kGrowthDigits - std::to_string(shape[0]).size(), ' ');
  return npy_wrap_header(dict);
}

NpyHeader read_npy_header(ByteSource& in, std::string_view where) {
  unsigned char lead[8];
  const std::size_t got = read_fully(in, lead, 8);
  const std::string_view lead_text(reinterpret_cast<const char*>(lead), got);
  const std::string_view magic(kMagic, kMagicLen);
  if (lead_text.substr(0, kMagicLen) != magic.substr(0, std::min(got, kMagicLen)))
    fail("{}: not a NumPy .npy file (it starts with '{}'; NumPy's files start with '\\x93NUMPY')", where,
         printable(lead_text));
  if (got < 8) fail("{}: file ends inside the .npy preamble, after {} bytes", where, got);
  NpyHeader h;
  h.major_version = lead[6];
  if ((lead[6] < 1 || lead[6] > 3) || lead[7] != 0)
    fail("{}: unsupported .npy format version {}.{}; luda reads 1.0, 2.0 and 3.0", where, lead[6], lead[7]);
  std::size_t length_bytes = lead[6] == 1 ? 2 : 4;
  unsigned char len[4] = {0, 0, 0, 0};
  if (std::size_t n = read_fully(in, len, length_bytes); n < length_bytes)
    fail("{}: file ends inside the .npy preamble, after {} bytes", where, 8 + n);
  const std::size_t hlen = std::size_t{len[0]} | std::size_t{len[1]} << 8 | std::size_t{len[2]} << 16 |
                           std::size_t{len[3]} << 24;
  if (hlen > kNpyMaxHeader)
    fail("{}: header of {} bytes is longer than the {} bytes numpy.load accepts", where, hlen, kNpyMaxHeader);
  std::string text(hlen, '\0');
  if (std::size_t n = read_fully(in, text.data(), hlen); n < hlen)
    fail("{}: file ends inside the .npy header, after {} of its {} bytes", where, n, hlen);
  h.data_offset = 8 + length_bytes + hlen;

  PyValue dict = LiteralParser(text, where).header();
  if (dict.kind != PyValue::Dict) fail("{}: the .npy header is not a dict: '{}'", where, printable(text, 200));
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  std::string keys;
  bool wrong_keys = dict.items.size() != 6;
  for (std::size_t i = 0; i < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    keys += (i ? ", " : "") + (key.kind == PyValue::String ? "'" + printable(key.text) + "'" : std::string("?"));
    const PyValue* value = &dict.items[i + 1];
    if (key.kind == PyValue::String && key.text == "descr") descr = value;
    else if (key.kind == PyValue::String && key.text == "fortran_order") fortran = value;
    else if (key.kind == PyValue::String && key.text == "shape") shape = value;
    else wrong_keys = true;
  }
  if (wrong_keys || !descr || !fortran || !shape)
    fail("{}: the .npy header's keys are {}; it must have exactly 'descr', 'fortran_order' and 'shape'", where,
         keys.empty() ? "none" : keys);

  if (descr->kind == PyValue::List) fail("{}: structured dtypes (a list of fields) are not supported", where);
  if (descr->kind != PyValue::String)
    fail("{}: the .npy header's descr is not a dtype string: '{}'", where, printable(text, 200));
  std::tie(h.dtype, h.big_endian) = parse_descr(descr->text, where);

  if (fortran->kind != PyValue::Bool)
    fail("{}: the .npy header's fortran_order is not True or False: '{}'", where, printable(text, 200));
  h.fortran_order = fortran->flag;

  if (shape->kind != PyValue::Tuple)
    fail("{}: the .npy header's shape is not a tuple of integers: '{}'", where, printable(text, 200));
  if (shape->items.size() > static_cast<std::size_t>(kMaxNdim))
    fail("{}: shape has {} axes; luda arrays have at most {}", where, shape->items.size(), kMaxNdim);
  for (const PyValue& e : shape->items) {
    if (e.kind != PyValue::Int)
      fail("{}: the .npy header's shape is not a tuple of integers: '{}'", where, printable(text, 200));
    if (e.too_big) fail("{}: the .npy header's shape has an extent past 2^63: '{}'", where, printable(text, 200));
    if (e.integer < 0) fail("{}: the .npy header's shape has a negative extent {}", where, e.integer);
    h.shape.push_back(e.integer);
  }
  // Nonzero extents must multiply to less than 2^63, as any array's (NumPy's rule); the
  // bytes too, here, since all of them are read.
  std::uint64_t elements = 1;
  bool empty = false;
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (std::int64_t e : h.shape) {
    if (e == 0) {
      empty = true;
      continue;
    }
    if (elements > kMax / static_cast<std::uint64_t>(e))
      fail("{}: shape {} has 2^63 elements or more", where, shape_str(h.shape));
    elements *= static_cast<std::uint64_t>(e);
  }
  if (elements > kMax / itemsize(h.dtype))
    fail("{}: shape {} of {} needs 2^63 bytes or more", where, shape_str(h.shape), dtype_name(h.dtype));
  h.data_bytes = empty ? 0 : elements * itemsize(h.dtype);
  return h;
}

NDArray read_npy(ByteSource& in, std::string_view where, Device device) {
  GraphRecording::refuse_if_recording("reading an .npy file");
  const NpyHeader h = read_npy_header(in, where);
  if (h.data_bytes > in.remaining())
    fail("{}: file ends after {} of {} bytes of data", where, in.remaining(), h.data_bytes);
  // The elements as stored: C order of the shape, or of the reversed shape for Fortran
  // order (whose transpose is the array).
  Shape stored = h.shape;
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  NDArray host = NDArray::empty(stored, h.dtype, device.is_cpu() ? device : Device::cpu());
  auto* data = static_cast<std::byte*>(host.data());
  if (h.data_bytes) {
    if (std::size_t n = read_fully(in, data, h.data_bytes); n < h.data_bytes)
      fail("{}: file ends after {} of {} bytes of data", where, n, h.data_bytes);
  }
  if (h.big_endian) swap_bytes(data, h.data_bytes, h.dtype);
  if (h.dtype == DType::Bool)  // a bool is one byte, 0 or 1, whatever byte the file has
    for (std::size_t i = 0; i < h.data_bytes; ++i) data[i] = data[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  if (h.fortran_order && h.shape.size() > 1) host = host.transpose().contiguous();
  return host.to(device);
}

HostBytes host_bytes(const NDArray& x) {
  // A cpu array's memory is read directly: while a graph is recorded its work has not run.
  GraphRecording::refuse_if_recording("writing an array to a file");
  HostBytes b;
  b.size = x.nbytes();
  if (x.device().is_cpu() && x.is_c_contiguous()) {
    b.kept = x;
    b.data = static_cast<const std::byte*>(x.data());
  } else {
    b.copy = x.to_host_bytes();
    b.data = b.copy.data();
  }
  return b;
}

std::string npy_bytes(const NDArray& x) {
  std::string out = npy_preamble(x.dtype(), x.shape());
  HostBytes b = host_bytes(x);
  out.append(reinterpret_cast<const char*>(b.data), b.size);
  return out;
}

}  // namespace luda::ops

// luda::Value: a Lua value as C++ holds it (luda/luda.h).
#include "luda/luda.h"
#include "runtime/error.h"

namespace luda {

Value Value::other(std::string type_name) {
  Value v;
  v.v_ = OtherValue{std::move(type_name)};
  return v;
}

Value::Type Value::type() const {
  switch (v_.index()) {
    case 0: return Type::Nil;
    case 1: return Type::Boolean;
    case 2: return Type::Integer;
    case 3: return Type::Number;
    case 4: return Type::String;
    case 5: return Type::Array;
    case 6: return Type::Stream;
    default: return Type::Other;
  }
}

std::string Value::type_name() const {
  switch (type()) {
    case Type::Nil: return "nil";
    case Type::Boolean: return "boolean";
    case Type::Integer: return "integer";
    case Type::Number: return "number";
    case Type::String: return "string";
    case Type::Array: return "ndarray";
    case Type::Stream: return "stream";
    case Type::Other: return std::get<OtherValue>(v_).type_name;
  }
  return "?";
}

namespace {
[[noreturn]] void wrong_type(const Value& v, std::string_view expected) {
  std::string got = v.type_name();
  bool vowel = !got.empty() && (std::string_view("aeiou").find(got[0]) != std::string_view::npos || got == "ndarray");
  fail("expected {}, got {}{}", expected, v.is_nil() ? "" : vowel ? "an " : "a ", got);
}
}  // namespace

bool Value::as_bool() const {
  if (const bool* b = std::get_if<bool>(&v_)) return *b;
  wrong_type(*this, "a boolean");
}

std::int64_t Value::as_integer() const {
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v_)) return *i;
  wrong_type(*this, "an integer");
}

double Value::as_number() const {
  if (const double* d = std::get_if<double>(&v_)) return *d;
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
  wrong_type(*this, "a number");
}

const std::string& Value::as_string() const {
  if (const std::string* s = std::get_if<std::string>(&v_)) return *s;
  wrong_type(*this, "a string");
}

const Array& Value::as_array() const {
  if (const Array* a = std::get_if<Array>(&v_)) return *a;
  wrong_type(*this, "an ndarray");
}

const Stream& Value::as_stream() const {
  if (const Stream* s = std::get_if<Stream>(&v_)) return *s;
  wrong_type(*this, "a stream");
}

}  // namespace luda

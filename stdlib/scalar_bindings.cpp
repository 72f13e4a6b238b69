// Typed scalars: luda.bool, luda.int8 ... luda.complex128. Each is a function (value) -> a
// scalar of that dtype (strong, as numpy.float32(v) is), and is accepted wherever a dtype
// is expected. tostring gives "luda.float32(2.5)", as NumPy 2 prints np.float32(2.5).
// luda.complex(re, im) is a weak complex128, as Python's complex is to NumPy.
#include <cmath>
#include <limits>

#include "runtime/format.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

[[noreturn]] void out_of_range(std::string_view fname, std::string_view what, std::string_view value, DType t) {
  IntegerRange r = integer_range(t);
  fail("{}: {}{}{} is out of range for {} ({} to {})", fname, what, what.empty() ? "" : " = ", value, dtype_name(t),
       r.lo, r.hi);
}

// Python's repr of a float: the shortest text that reads back, with ".0" on integral values.
std::string float_text(double x, bool single) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::string s = single ? fmt::format("{}", static_cast<float>(x)) : fmt::format("{}", x);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string value_text(const Scalar& s) {
  if (s.dtype == DType::Bool) return s.v.b ? "true" : "false";
  if (is_signed_integer(s.dtype)) return std::to_string(s.v.i);
  if (is_unsigned_integer(s.dtype)) return std::to_string(s.v.u);
  if (s.weak) return float_text(s.v.f, false) + ", " + float_text(s.im, false);
  if (is_complex(s.dtype)) {  // NumPy's np.complex64(1+2j): Python's repr without its parentheses
    std::string text = format_scalar(s);
    return text.front() == '(' ? text.substr(1, text.size() - 2) : text;
  }
  if (s.dtype == DType::Float16 || s.dtype == DType::BFloat16) return format_scalar(s);
  return float_text(s.v.f, s.dtype == DType::Float32);
}

// A complex's part: a number, a boolean or a real typed scalar.
double complex_part(lua_State* L, int idx, std::string_view fname, std::string_view what) {
  if (Scalar* z = test_scalar(L, idx); z && is_complex(z->dtype))
    fail("{}: {} must be a real number, got a {}", fname, what, dtype_name(z->dtype));
  return to_scalar(L, idx, DType::Float64, fname, what).v.f;
}

int scalar_new(lua_State* L) {
  auto t = static_cast<DType>(upvalue_integer(L, 1, 0, kNumDTypes - 1));
  const std::string fname(dtype_name(t));
  Scalar s;
  if (is_complex(t) && !lua_isnoneornil(L, 2)) {  // luda.complex64(re, im)
    if (test_scalar(L, 1) && is_complex(test_scalar(L, 1)->dtype))
      fail("{}: give a complex alone, or its real and imaginary parts", fname);
    s = Scalar::of_complex(complex_part(L, 1, fname, "re"), complex_part(L, 2, fname, "im"), t);
  } else {
    s = to_scalar(L, 1, t, fname, "");
  }
  push_object<Scalar>(L, kScalarType, s);
  return 1;
}

// luda.complex(re [, im]): a weak complex128.
int complex_new(lua_State* L) {
  Scalar s = Scalar::of_complex(complex_part(L, 1, "complex", "re"),
                                lua_isnoneornil(L, 2) ? 0.0 : complex_part(L, 2, "complex", "im"));
  s.weak = true;
  push_object<Scalar>(L, kScalarType, s);
  return 1;
}

int scalar_value(lua_State* L) {
  const Scalar& s = check_object<Scalar>(L, 1, kScalarType, "value");
  if (is_complex(s.dtype)) {
    lua_pushnumber(L, s.v.f);
    lua_pushnumber(L, s.im);
    return 2;
  }
  push_scalar_value(L, s);
  return 1;
}

int scalar_index(lua_State* L) {
  Scalar& s = check_object<Scalar>(L, 1, kScalarType, "index");
  if (lua_type(L, 2) == LUA_TSTRING) {
    std::string_view key = string_at(L, 2);
    if (key == "dtype") {
      lua_pushstring(L, std::string(dtype_name(s.dtype)).c_str());
      return 1;
    }
    if (key == "value") {
      lua_pushcfunction(L, trampoline<scalar_value>);
      return 1;
    }
    if (key == "real" || key == "imag") {
      if (is_complex(s.dtype)) lua_pushnumber(L, key == "real" ? s.v.f : s.im);
      else if (key == "real") push_scalar_value(L, s);
      else lua_pushinteger(L, 0);
      return 1;
    }
  }
  fail("typed scalar has no field {} (it has .dtype, .real, .imag and :value())", describe(L, 2));
}

int scalar_tostring(lua_State* L) {
  Scalar& s = check_object<Scalar>(L, 1, kScalarType, "tostring");
  std::string text = fmt::format("luda.{}({})", s.weak ? "complex" : dtype_name(s.dtype), value_text(s));
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

}  // namespace

std::optional<DType> natural_dtype(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: return DType::Bool;
    case LUA_TNUMBER: return lua_isinteger(L, idx) ? DType::Int64 : DType::Float64;
    default:
      if (Scalar* s = test_scalar(L, idx)) return s->dtype;
      return std::nullopt;
  }
}

Scalar number_as(std::int64_t x, DType dtype, std::string_view fname, std::string_view what) {
  if (dtype == DType::Bool) return Scalar::of_bool(x != 0);
  if (!integer_fits(x, dtype)) out_of_range(fname, what, std::to_string(x), dtype);
  return Scalar::of_int(x).cast(dtype);
}

Scalar number_as(double x, DType dtype, std::string_view fname, std::string_view what) {
  if (is_integer(dtype)) {
    IntegerRange r = integer_range(dtype);
    // Truncation toward zero must land in range; 2^63 and 2^64 are exact doubles.
    double hi = static_cast<double>(r.hi) + 1.0;
    if (std::isnan(x) || std::trunc(x) < static_cast<double>(r.lo) || std::trunc(x) >= hi)
      out_of_range(fname, what, float_text(x, false), dtype);
  }
  return Scalar::of_float(x).cast(dtype);
}

Scalar to_scalar(lua_State* L, int idx, DType dtype, std::string_view fname, std::string_view what) {
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: return Scalar::of_bool(lua_toboolean(L, idx)).cast(dtype);
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) return number_as(static_cast<std::int64_t>(lua_tointeger(L, idx)), dtype, fname, what);
      return number_as(static_cast<double>(lua_tonumber(L, idx)), dtype, fname, what);
    default:
      if (Scalar* s = test_scalar(L, idx)) return s->cast(dtype);
      fail("{}: {} must be a number, a boolean or a typed scalar, got {}", fname, what.empty() ? "value" : what,
           lua_isnone(L, idx) ? "no value" : type_name(L, idx));
  }
}

void push_scalar_value(lua_State* L, const Scalar& s) {
  if (s.dtype == DType::Bool) {
    lua_pushboolean(L, s.v.b);
  } else if (is_signed_integer(s.dtype)) {
    lua_pushinteger(L, s.v.i);
  } else if (is_unsigned_integer(s.dtype)) {
    if (s.v.u <= static_cast<std::uint64_t>(std::numeric_limits<lua_Integer>::max()))
      lua_pushinteger(L, static_cast<lua_Integer>(s.v.u));
    else lua_pushnumber(L, static_cast<lua_Number>(s.v.u));
  } else if (is_complex(s.dtype)) {  // Lua has no complex number: the typed scalar
    Scalar z = s;
    z.weak = false;
    push_object<Scalar>(L, kScalarType, z);
  } else {
    lua_pushnumber(L, s.v.f);
  }
}

void open_scalars(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", trampoline<scalar_index>},
      {"__tostring", trampoline<scalar_tostring>},
      {nullptr, nullptr},
  };
  new_metatable(L, kScalarType, meta, nullptr);
  lua_pop(L, 1);

  // registry["luda.dtypes"][constructor] = dtype: how check_dtype recognizes luda.float32.
  lua_newtable(L);
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    std::string name(dtype_name(t));
    lua_pushinteger(L, i);
    lua_pushcclosure(L, trampoline<scalar_new>, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, name.c_str());  // luda[name] (the module table is below)
    lua_pushinteger(L, i);
    lua_rawset(L, -3);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, "luda.dtypes");
  lua_pushcfunction(L, trampoline<complex_new>);
  lua_setfield(L, -2, "complex");
}

}  // namespace luda::lua

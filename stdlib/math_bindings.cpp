// luda.math: host versions of the builtin math functions that Lua's `math` lacks, so a
// scalar function that calls luda.math.erf runs as plain Lua (f.lua(...)) with the same
// meaning it has in a kernel (dsl/builtins.cpp's "luda.math" rows name the same set).
#include <cmath>

#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

// These functions hold no C++ object, so luaL_checknumber's longjmp crosses nothing.
template <double (*F)(double)>
int unary(lua_State* L) {
  lua_pushnumber(L, F(luaL_checknumber(L, 1)));
  return 1;
}

template <double (*F)(double, double)>
int binary(lua_State* L) {
  lua_pushnumber(L, F(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
  return 1;
}

template <bool (*P)(double)>
int predicate(lua_State* L) {
  lua_pushboolean(L, P(luaL_checknumber(L, 1)));
  return 1;
}

double exp2_(double x) { return std::exp2(x); }
double log2_(double x) { return std::log2(x); }
double log10_(double x) { return std::log10(x); }
double log1p_(double x) { return std::log1p(x); }
double expm1_(double x) { return std::expm1(x); }
double sinh_(double x) { return std::sinh(x); }
double cosh_(double x) { return std::cosh(x); }
double tanh_(double x) { return std::tanh(x); }
double asinh_(double x) { return std::asinh(x); }
double acosh_(double x) { return std::acosh(x); }
double atanh_(double x) { return std::atanh(x); }
double erf_(double x) { return std::erf(x); }
double erfc_(double x) { return std::erfc(x); }
double lgamma_(double x) { return std::lgamma(x); }
double tgamma_(double x) { return std::tgamma(x); }
double cbrt_(double x) { return std::cbrt(x); }
double rsqrt_(double x) { return 1.0 / std::sqrt(x); }
double round_(double x) { return std::round(x); }     // halves away from zero, as CUDA's round
double rint_(double x) { return std::nearbyint(x); }  // halves to even: luda never changes the rounding mode
double trunc_(double x) { return std::trunc(x); }
double hypot_(double x, double y) { return std::hypot(x, y); }
double copysign_(double x, double y) { return std::copysign(x, y); }
double nextafter_(double x, double y) { return std::nextafter(x, y); }
double remainder_(double x, double y) { return std::remainder(x, y); }
bool isnan_(double x) { return std::isnan(x); }
bool isinf_(double x) { return std::isinf(x); }
bool isfinite_(double x) { return std::isfinite(x); }

// floor and ceil in x's type, as in a kernel: an integer as it is, a float as a float
// (Lua's math.floor gives an integer where the value fits).
template <double (*F)(double)>
int same_type(lua_State* L) {
  if (lua_isinteger(L, 1)) lua_pushinteger(L, lua_tointeger(L, 1));
  else lua_pushnumber(L, F(luaL_checknumber(L, 1)));
  return 1;
}
double floor_(double x) { return std::floor(x); }
double ceil_(double x) { return std::ceil(x); }

int fma_(lua_State* L) {
  lua_pushnumber(L, std::fma(luaL_checknumber(L, 1), luaL_checknumber(L, 2), luaL_checknumber(L, 3)));
  return 1;
}

}  // namespace

void open_math(lua_State* L) {
  static const luaL_Reg funcs[] = {
      {"exp2", unary<exp2_>},
      {"log2", unary<log2_>},
      {"log10", unary<log10_>},
      {"log1p", unary<log1p_>},
      {"expm1", unary<expm1_>},
      {"sinh", unary<sinh_>},
      {"cosh", unary<cosh_>},
      {"tanh", unary<tanh_>},
      {"erf", unary<erf_>},
      {"erfc", unary<erfc_>},
      {"lgamma", unary<lgamma_>},
      {"tgamma", unary<tgamma_>},
      {"cbrt", unary<cbrt_>},
      {"rsqrt", unary<rsqrt_>},
      {"round", unary<round_>},
      {"rint", unary<rint_>},
      {"trunc", unary<trunc_>},
      {"hypot", binary<hypot_>},
      {"copysign", binary<copysign_>},
      {"asinh", unary<asinh_>},
      {"acosh", unary<acosh_>},
      {"atanh", unary<atanh_>},
      {"nextafter", binary<nextafter_>},
      {"remainder", binary<remainder_>},
      {"fma", fma_},
      {"isnan", predicate<isnan_>},
      {"isinf", predicate<isinf_>},
      {"isfinite", predicate<isfinite_>},
      {"floor", same_type<floor_>},
      {"ceil", same_type<ceil_>},
      {nullptr, nullptr},
  };
  luaL_newlib(L, funcs);
  lua_setfield(L, -2, "math");
}

}  // namespace luda::lua

// luda.linalg, numpy.linalg's routines in Lua (ops/linalg.h does the work):
//   solve(a, b), inv(a), det(a), cholesky(a)
//   qr(a [, mode]) -> q, r (r alone for mode "r"), eigh(a [, UPLO]) -> w, v, eigvalsh(a [, UPLO]),
//   svd(a [, {full_matrices =, compute_uv =}]) -> u, s, vh (s alone without compute_uv), svdvals(a),
//   lstsq(a, b [, rcond]) -> x, residuals, rank, s, pinv(a [, rcond] [, {rtol =}]),
//   matrix_rank(a [, tol] [, {rtol =}]), norm(x [, ord] [, axis] [, {keepdims =}])
// each with an optional last options table, which takes stream= (but norm's).
#include <algorithm>
#include <cctype>
#include <string>

#include "ops/linalg.h"
#include "stdlib/kind_bindings.h"

namespace luda::lua {
namespace {

// The index of a call's options table among its trailing arguments: the first plain
// table among the `optional` positional arguments from `first` (the call leaves the rest
// out), else the argument after them; 0 when there is none.
int find_options(lua_State* L, int first, int optional, std::string_view who) {
  int at = first + optional;
  for (int i = first; i < first + optional; ++i)
    if (lua_type(L, i) == LUA_TTABLE && !test_array(L, i)) {
      at = i;
      break;
    }
  if (lua_isnoneornil(L, at)) return 0;
  check_table(L, at, who);
  for (int extra = at + 1; extra <= lua_gettop(L); ++extra)
    if (!lua_isnil(L, extra))
      fail("{}: argument {} ({}) comes after the options table", who, extra, describe(L, extra));
  return at;
}

// Whether positional argument i was given (before the options table, not nil).
bool given(lua_State* L, int i, int options) { return (!options || i < options) && !lua_isnoneornil(L, i); }

// A boolean option, `fallback` when absent.
bool boolean_option(lua_State* L, int options, const char* key, bool fallback, std::string_view who) {
  const int type = push_option(L, options, key);
  bool v = fallback;
  if (type == LUA_TBOOLEAN) v = lua_toboolean(L, -1);
  else if (type != LUA_TNIL) fail("{}: option '{}' must be a boolean, got {}", who, key, describe(L, -1));
  lua_pop(L, 1);
  return v;
}

// A number option, nullopt when absent.
std::optional<double> number_option(lua_State* L, int options, const char* key, std::string_view who) {
  const int type = push_option(L, options, key);
  std::optional<double> v;
  if (type == LUA_TNUMBER) v = lua_tonumber(L, -1);
  else if (type != LUA_TNIL) fail("{}: option '{}' must be a number, got {}", who, key, describe(L, -1));
  lua_pop(L, 1);
  return v;
}

// luda.linalg.inv(a), det(a), cholesky(a): one array in, one out.
using Unary = NDArray (*)(const NDArray&, const Stream*);
template <Unary Op, const char* Name>
int l_unary(lua_State* L) {
  NDArray& a = check_array(L, 1, Name);
  const int options = find_options(L, 2, 0, Name);
  CallOptions o = read_call_options(L, options, Name, {"stream"});
  push_array(L, Op(a, o.stream));
  return 1;
}
constexpr char kInv[] = "inv", kDet[] = "det", kCholesky[] = "cholesky";

// luda.linalg.solve(a, b [, {stream=}])
int l_solve(lua_State* L) {
  NDArray& a = check_array(L, 1, "solve");
  NDArray& b = check_array(L, 2, "solve");
  const int options = find_options(L, 3, 0, "solve");
  CallOptions o = read_call_options(L, options, "solve", {"stream"});
  push_array(L, ops::solve(a, b, o.stream));
  return 1;
}

// luda.linalg.qr(a [, mode] [, {stream=}]): mode "reduced" (default), "complete" or "r".
int l_qr(lua_State* L) {
  NDArray& a = check_array(L, 1, "qr");
  const int options = find_options(L, 2, 1, "qr");
  const std::string_view mode = given(L, 2, options) ? check_string(L, 2, "qr") : "reduced";
  CallOptions o = read_call_options(L, options, "qr", {"stream"});
  ops::QrResult r = ops::qr(a, mode, o.stream);
  if (!r.q.valid()) {
    push_array(L, std::move(r.r));
    return 1;
  }
  push_array(L, std::move(r.q));
  push_array(L, std::move(r.r));
  return 2;
}

// luda.chunked.linalg's TSQR (stdlib/lua/luda/chunked/linalg.lua): qr_each({a1, a2, ...},
// mode) -> {q1, ...}, {r1, ...} (the q list empty for mode "r"), each array's QR on its
// device, devices at once (ops::qr_each).
int l_qr_each(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const std::string_view mode = check_string(L, 2, "qr");
  std::vector<NDArray> arrays;
  for (lua_Integer i = 1, n = luaL_len(L, 1); i <= n; ++i) {
    lua_rawgeti(L, 1, i);
    arrays.push_back(check_array(L, lua_gettop(L), "qr"));
    lua_pop(L, 1);
  }
  std::vector<ops::QrResult> out = ops::qr_each(arrays, mode);
  lua_createtable(L, static_cast<int>(out.size()), 0);
  lua_createtable(L, static_cast<int>(out.size()), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].q.valid()) {
      push_array(L, std::move(out[i].q));
      lua_rawseti(L, -3, static_cast<lua_Integer>(i + 1));
    }
    push_array(L, std::move(out[i].r));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 2;
}

// luda.linalg.eigh(a [, UPLO] [, {stream=}]) -> w, v; eigvalsh -> w. Upvalue 1: 1 for eigh.
int l_eigh(lua_State* L) {
  const bool vectors = upvalue_integer(L, 1, 0, 1) == 1;
  const char* who = vectors ? "eigh" : "eigvalsh";
  NDArray& a = check_array(L, 1, who);
  const int options = find_options(L, 2, 1, who);
  std::string uplo = "L";
  if (given(L, 2, options)) {
    uplo = std::string(check_string(L, 2, who));  // NumPy reads it in upper case
    std::transform(uplo.begin(), uplo.end(), uplo.begin(), [](unsigned char c) { return std::toupper(c); });
  }
  CallOptions o = read_call_options(L, options, who, {"stream"});
  ops::EighResult r = ops::eigh(a, uplo, vectors, o.stream);
  push_array(L, std::move(r.w));
  if (!vectors) return 1;
  push_array(L, std::move(r.v));
  return 2;
}

// luda.linalg.svd(a [, {full_matrices=true, compute_uv=true, stream=}]) -> u, s, vh (s alone
// without compute_uv); luda.linalg.svdvals(a [, {stream=}]) -> s. Upvalue 1: 1 for svd.
int l_svd(lua_State* L) {
  const bool options_uv = upvalue_integer(L, 1, 0, 1) == 1;
  const char* who = options_uv ? "svd" : "svdvals";
  NDArray& a = check_array(L, 1, who);
  const int options = find_options(L, 2, 0, who);
  CallOptions o = options_uv ? read_call_options(L, options, who, {"full_matrices", "compute_uv", "stream"})
                             : read_call_options(L, options, who, {"stream"});
  const bool full = options_uv && boolean_option(L, options, "full_matrices", true, who);
  const bool uv = options_uv && boolean_option(L, options, "compute_uv", true, who);
  ops::SvdResult r = ops::svd(a, full, uv, o.stream, who);
  if (!uv) {
    push_array(L, std::move(r.s));
    return 1;
  }
  push_array(L, std::move(r.u));
  push_array(L, std::move(r.s));
  push_array(L, std::move(r.vh));
  return 3;
}

// luda.linalg.lstsq(a, b [, rcond] [, {stream=}]) -> x, residuals, rank (an integer), s
int l_lstsq(lua_State* L) {
  NDArray& a = check_array(L, 1, "lstsq");
  NDArray& b = check_array(L, 2, "lstsq");
  const int options = find_options(L, 3, 1, "lstsq");
  std::optional<double> rcond;
  if (given(L, 3, options)) rcond = check_number(L, 3, "lstsq");
  CallOptions o = read_call_options(L, options, "lstsq", {"stream"});
  ops::LstsqResult r = ops::lstsq(a, b, rcond, o.stream);
  push_array(L, std::move(r.x));
  push_array(L, std::move(r.residuals));
  lua_pushinteger(L, r.rank);
  push_array(L, std::move(r.s));
  return 4;
}

// luda.linalg.pinv(a [, rcond] [, {rtol=, stream=}]) and matrix_rank(a [, tol] [, {rtol=,
// stream=}]): upvalue 1 is 1 for pinv.
int l_pinv_rank(lua_State* L) {
  const bool pinv = upvalue_integer(L, 1, 0, 1) == 1;
  const char* who = pinv ? "pinv" : "matrix_rank";
  NDArray& a = check_array(L, 1, who);
  const int options = find_options(L, 2, 1, who);
  std::optional<double> cut;
  if (given(L, 2, options)) cut = check_number(L, 2, who);
  CallOptions o = read_call_options(L, options, who, {"rtol", "stream"});
  const std::optional<double> rtol = number_option(L, options, "rtol", who);
  push_array(L, pinv ? ops::pinv(a, cut, rtol, o.stream) : ops::matrix_rank(a, cut, rtol, o.stream));
  return 1;
}

// luda.linalg.norm(x [, ord] [, axis] [, {keepdims=}]): ord nil, a number (math.huge for
// inf), "fro" or "nuc"; axis one (1-based) or a pair {a, b}.
int l_norm(lua_State* L) {
  NDArray& x = check_array(L, 1, "norm");
  ops::NormOrd ord;
  if (lua_type(L, 2) == LUA_TNUMBER) {
    ord.kind = ops::NormOrd::Kind::Number;
    ord.p = lua_tonumber(L, 2);
  } else if (lua_type(L, 2) == LUA_TSTRING) {
    const std::string_view name = string_at(L, 2);
    if (name != "fro" && name != "nuc") fail("norm: Invalid norm order '{}' (the names are 'fro' and 'nuc')", name);
    ord.kind = name == "fro" ? ops::NormOrd::Kind::Fro : ops::NormOrd::Kind::Nuc;
  } else if (!lua_isnoneornil(L, 2)) {
    fail("norm: ord must be a number, 'fro' or 'nuc', got {}", describe(L, 2));
  }
  std::optional<std::vector<int>> axes;
  int options = 4;
  if (lua_istable(L, 3) && !test_array(L, 3) && lua_rawlen(L, 3) == 0 && lua_isnone(L, 4)) {
    options = 3;
  } else if (!lua_isnoneornil(L, 3)) {
    axes = axes_arg(L, 3, x.ndim(), "norm", fmt::format(" for a {}-d array", x.ndim())).value_or(std::vector<int>{});
  }
  check_options(L, options, "norm", {"keepdims"});
  const bool keepdims = push_option(L, options, "keepdims") != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 1);
  push_array(L, ops::norm(x, ord, axes, keepdims));
  return 1;
}

}  // namespace

void open_linalg(lua_State* L) {
  static const luaL_Reg functions[] = {
      {"solve", trampoline<l_solve>},
      {"inv", trampoline<l_unary<ops::inv, kInv>>},
      {"det", trampoline<l_unary<ops::det, kDet>>},
      {"cholesky", trampoline<l_unary<ops::cholesky, kCholesky>>},
      {"qr", trampoline<l_qr>},
      {"lstsq", trampoline<l_lstsq>},
      {"norm", trampoline<l_norm>},
      {nullptr, nullptr},
  };
  luaL_newlib(L, functions);
  // Functions that share a body: the upvalue says which.
  struct Variant {
    const char* name;
    lua_CFunction body;
    int which;
  };
  static const Variant variants[] = {
      {"eigh", trampoline<l_eigh>, 1},      {"eigvalsh", trampoline<l_eigh>, 0},
      {"svd", trampoline<l_svd>, 1},        {"svdvals", trampoline<l_svd>, 0},
      {"pinv", trampoline<l_pinv_rank>, 1}, {"matrix_rank", trampoline<l_pinv_rank>, 0},
  };
  for (const Variant& v : variants) {
    lua_pushinteger(L, v.which);
    lua_pushcclosure(L, v.body, 1);
    lua_setfield(L, -2, v.name);
  }
  lua_setfield(L, -2, "linalg");  // luda.linalg.solve, ...
}

void push_chunked_helpers(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, trampoline<l_qr_each>);
  lua_setfield(L, -2, "qr_each");
}

}  // namespace luda::lua

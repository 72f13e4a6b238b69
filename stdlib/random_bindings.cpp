// luda.random: random arrays drawn on the kinds from Philox4x32-10 (ops/random.h), so that
// they are made where the array lives (cpu or cuda) and are the same values on every
// device for the same seed.
//
//   luda.random.random(shape, dtype?, {device=, seed=})  uniform in [0, 1), float64 unless
//                                                        dtype is float32
//   luda.random.seed(n)                                  restarts the module's stream
//
// A stream is a Philox key (the seed's 64 bits) and a counter: the stream element the next
// draw starts at. A draw of n elements reads elements counter .. counter + n - 1 (each its
// own Philox sub-stream, runtime/random_draws.h) and advances the counter by n, so after
// seed(s), random(3) then random(4) are the first 7 values of the stream; a call with
// {seed = s} reads the stream of s from its start and leaves the module's alone.
// Unseeded, the module's stream starts at a seed from std::random_device, as NumPy seeds
// from the OS. The Generator (luda.random.default_rng) and the module's other functions
// are Lua (stdlib/lua/luda/random.lua) over the helpers push_random_helpers gives
// luda.internal.
#include <random>

#include "ops/random.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

// One stream: the module's (one per lua_State, the functions' upvalue and a registry
// field), or a Generator's.
struct RandomStream {
  std::uint64_t key = 0;
  std::uint64_t counter = 0;  // elements of the stream already given out
};

void reseed(RandomStream& s, std::uint64_t seed) {
  s.key = seed;
  s.counter = 0;
}

std::uint64_t entropy_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

constexpr char kRandomStreamType[] = "random_stream";      // a tag only: the userdata has no metatable
constexpr char kModuleStreamKey[] = "luda.random.stream";  // the registry field of the module's

RandomStream& push_stream(lua_State* L, std::uint64_t seed) {
  void* mem = lua_newuserdatauv(L, sizeof(Box<RandomStream>), 0);
  auto* stream = &(new (mem) Box<RandomStream>{kRandomStreamType, RandomStream{}, true})->value;
  reseed(*stream, seed);
  return *stream;
}

RandomStream& module_stream(lua_State* L) { return upvalue_object<RandomStream>(L, 1, kRandomStreamType); }

RandomStream& check_stream(lua_State* L, int arg, std::string_view fname) {
  return check_object<RandomStream>(L, arg, kRandomStreamType, fname);
}

// A seed: any Lua integer (its 64 bits), or an integral float.
std::uint64_t check_seed(lua_State* L, int idx, std::string_view fname, std::string_view what) {
  return static_cast<std::uint64_t>(to_integer(L, idx, fname, what));
}

// luda.random.random(shape, dtype?, {device=, seed=})
int l_random(lua_State* L) {
  constexpr std::string_view fname = "random";
  move_options_to(L, 2, 3);
  Shape shape = check_shape(L, 1, fname);
  DType dtype = opt_dtype(L, 2, fname).value_or(DType::Float64);
  if (dtype != DType::Float32 && dtype != DType::Float64)
    fail("random: dtype must be float32 or float64 (uniform floats in [0, 1)), got {}", dtype_name(dtype));
  check_options(L, 3, fname, {"device", "seed"});
  Device device = device_option(L, 3, fname);
  RandomStream own;
  RandomStream* stream = &module_stream(L);
  if (push_option(L, 3, "seed") != LUA_TNIL) {
    reseed(own, check_seed(L, -1, fname, "option 'seed'"));
    stream = &own;
  }
  lua_pop(L, 1);

  NDArray out = NDArray::empty(shape, dtype, device);
  ops::random_uniform01({stream->key, stream->counter, nullptr}, out);
  stream->counter += static_cast<std::uint64_t>(out.size());
  push_array(L, std::move(out));
  return 1;
}

// luda.random.seed(n): the module's stream restarts at seed n; seed() takes a fresh one
// from std::random_device.
int l_seed(lua_State* L) {
  std::uint64_t seed = is_none_or_nil(L, 1) ? entropy_seed() : check_seed(L, 1, "seed", "seed");
  reseed(module_stream(L), seed);
  return 0;
}

// ---- luda.internal's helpers for stdlib/lua/luda/random.lua ---------------------------------

// random_stream([seed]): a new stream at seed (from the OS when nil).
int l_random_stream(lua_State* L) {
  push_stream(L, is_none_or_nil(L, 1) ? entropy_seed() : check_seed(L, 1, "default_rng", "seed"));
  return 1;
}

// random_module_stream(): the module's stream (luda.random.seed restarts it).
int l_random_module_stream(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kModuleStreamKey);
  return 1;
}

// random_state(stream): its key and counter, as Lua integers.
int l_random_state(lua_State* L) {
  RandomStream& s = check_stream(L, 1, "random_state");
  lua_pushinteger(L, static_cast<lua_Integer>(s.key));
  lua_pushinteger(L, static_cast<lua_Integer>(s.counter));
  return 2;
}

// random_advance(stream, n): the counter moves past n elements (a chunked draw's).
int l_random_advance(lua_State* L) {
  RandomStream& s = check_stream(L, 1, "random_advance");
  s.counter += static_cast<std::uint64_t>(check_integer(L, 2, "random_advance"));
  return 0;
}

// A placement table {offset, {extents...}, {strides...}} (ops::RandomPlacement).
ops::RandomPlacement read_placement(lua_State* L, int idx) {
  ops::RandomPlacement p;
  lua_geti(L, idx, 1);
  p.offset = to_integer(L, -1, "random_draw", "placement offset");
  lua_pop(L, 1);
  for (int field = 2; field <= 3; ++field) {
    lua_geti(L, idx, field);
    const int t = lua_gettop(L);
    const auto n = static_cast<lua_Integer>(luaL_len(L, t));
    for (lua_Integer k = 1; k <= n; ++k) {
      lua_geti(L, t, k);
      (field == 2 ? p.extents : p.strides).push_back(to_integer(L, -1, "random_draw", "placement"));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return p;
}

// random_draw(stream, what, size, dtype, {device=}, a, b [, placement]): an array of `size`
// (nil: 0-d) drawn from the stream, named `what` in messages ("normal"); a and b are the
// distribution's parameters (NumPy's order). Without a placement the stream advances by
// the array's size; with one (a chunked array's block) it stays.
int l_random_draw(lua_State* L) {
  RandomStream& s = check_stream(L, 1, "random_draw");
  const std::string what(check_string(L, 2, "random_draw"));
  Shape shape = is_none_or_nil(L, 3) ? Shape{} : check_shape(L, 3, what);
  Device device = device_option(L, 5, what);
  std::optional<ops::RandomPlacement> placement;
  if (!is_none_or_nil(L, 8)) placement = read_placement(L, 8);
  const ops::RandomSource src{s.key, s.counter, placement ? &*placement : nullptr};
  const bool integral = what == "integers" || what == "poisson" || what == "binomial" || what == "bits";
  DType dtype = opt_dtype(L, 4, what).value_or(integral ? DType::Int64 : DType::Float64);
  NDArray out = NDArray::empty(shape, dtype, device);
  if (what == "random") ops::random_uniform01(src, out);
  else if (what == "uniform") ops::random_uniform(src, luaL_checknumber(L, 6), luaL_checknumber(L, 7), out, what);
  else if (what == "normal" || what == "standard_normal")
    ops::random_normal(src, luaL_checknumber(L, 6), luaL_checknumber(L, 7), out, what);
  else if (what == "exponential" || what == "standard_exponential")
    ops::random_exponential(src, luaL_checknumber(L, 6), out, what);
  else if (what == "integers") ops::random_integers(src, check_integer(L, 6, what), check_integer(L, 7, what), out);
  else if (what == "poisson") ops::random_poisson(src, luaL_checknumber(L, 6), out, what);
  else if (what == "binomial") ops::random_binomial(src, check_integer(L, 6, what), luaL_checknumber(L, 7), out, what);
  else if (what == "bits") ops::random_bits(src, out);
  else LUDA_INTERNAL_CHECK(false && "random_draw: unknown distribution");
  if (!placement) s.counter += static_cast<std::uint64_t>(out.size());
  push_array(L, std::move(out));
  return 1;
}

}  // namespace

void open_random(lua_State* L) {
  lua_newtable(L);
  push_stream(L, entropy_seed());
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kModuleStreamKey);
  static const luaL_Reg funcs[] = {
      {"random", trampoline<l_random>},
      {"seed", trampoline<l_seed>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, funcs, 1);  // the stream is every function's upvalue
  lua_setfield(L, -2, "random");
}

void push_random_helpers(lua_State* L) {
  static const luaL_Reg funcs[] = {
      {"random_stream", trampoline<l_random_stream>}, {"random_module_stream", trampoline<l_random_module_stream>},
      {"random_state", trampoline<l_random_state>},   {"random_advance", trampoline<l_random_advance>},
      {"random_draw", trampoline<l_random_draw>},     {nullptr, nullptr},
  };
  luaL_setfuncs(L, funcs, 0);
}

}  // namespace luda::lua

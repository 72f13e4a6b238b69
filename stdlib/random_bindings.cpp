// luda.random: uniform random arrays, made on the kinds (an elementwise kind over the
// element index, jit/kinds/elementwise.h), so they are made where the array lives (cpu or cuda) and
// are the same values on every device for the same seed.
//
//   luda.random.random(shape, dtype?, {device=, seed=})  uniform in [0, 1), float64 unless
//                                                        dtype is float32
//   luda.random.seed(n)                                  restarts the module's stream
//
// The generator is counter-based: element k of the stream of seed s is
//   splitmix64's output function applied to key + (k + 1) * 0x9E3779B97F4A7C15,
// key = that same function applied to s (so nearby seeds give unrelated streams), and its
// top 24 bits (float32) or 53 bits (float64) scaled by 2^-24 / 2^-53: exact integer
// arithmetic and one exact scaling, hence bit-identical on every target, and no element
// depends on another (no state to carry between threads). The module's stream advances by
// each call's size, so after seed(s), random(3) then random(4) are the first 7 values of
// the stream; a call with {seed = s} reads the stream of s from its start and leaves the
// module's alone. Unseeded, the module's stream starts at a seed from std::random_device,
// as NumPy seeds from the OS.
#include <array>
#include <random>

#include "jit/kinds/elementwise.h"
#include "jit/kinds/frontend.h"
#include "jit/kinds/reduction.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

// splitmix64's output function (Steele, Lea, Flood 2014; Vigna's constants).
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The element function, in the kernel language: Lua integers wrap and `>>` is logical
// there as here, so this is mix64 of key + (offset + i + 1) * gamma. The constants are
// 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9 and 0x94D049BB133111EB as signed 64-bit values.
// `%s` becomes the conversion of the top bits: float32 from 24, float64 from 53, each
// scaled by an exact power of two (no float64 in the float32 code).
constexpr const char* kElement = R"(function(key, offset, i, n)
  local z = key + (offset + i + 1) * -7046029254386353131
  z = (z ~ (z >> 30)) * -4658895280553007687
  z = (z ~ (z >> 27)) * -7723592293110705685
  z = z ~ (z >> 31)
  return %s
end)";

std::string element_text(dsl::Scalar out) {
  std::string body = out == dsl::Scalar::Float32 ? "luda.float32(z >> 40) * 5.9604644775390625e-08"
                                                 : "luda.float64(z >> 11) * 1.1102230246251565e-16";
  std::string text = kElement;
  text.replace(text.find("%s"), 2, body);
  return text;
}

jit::ElementCode random_code(std::span<const std::optional<dsl::Scalar>> outputs, dsl::Target target) {
  LUDA_INTERNAL_CHECK(outputs.size() == 1 && outputs[0]);  // random_array always passes its output
  dsl::Scalar out = *outputs[0];
  dsl::FunctionSource source = jit::source_text_function(element_text(out));
  dsl::Type i64 = dsl::Type::scalar_of(dsl::Scalar::Int64);
  dsl::DeviceFunctionRequest f;
  f.function = source;
  f.name = fmt::format("random_{}", dsl::scalar_name(out));
  f.params = {i64, i64, i64, i64};  // key, offset, then the kind's index and size
  f.options.target = target;
  dsl::DeviceFunction df = jit::compile_scalar_function(f, jit::builtin_environment(), "random");
  jit::ElementCode code;
  code.functions = std::move(df.code);
  code.call = std::move(df.c_name);
  code.params = {i64, i64};
  code.outputs = {out};
  code.nvrtc_options = std::move(df.nvrtc_options);
  code.typed = std::move(df.typed);
  code.chunks = {source.chunk};
  return code;
}

// One kind for the process (its compiled modules serve every lua_State), never destroyed:
// it may outlive the driver at exit, as array_math's kinds do.
jit::ElementwiseKind& random_kind() {
  static jit::ElementwiseKind* kind = [] {
    jit::ElementwiseSetup setup;
    setup.kind = "random";
    setup.name = "random";
    setup.in_names = {"key", "offset"};
    setup.out_names = {"out"};
    setup.raw = {false, false};
    setup.out_read = {false};
    setup.index_args = true;
    setup.frontend = [](std::span<const dsl::Type>, std::span<const std::optional<dsl::Scalar>> outputs,
                        dsl::Target target) { return random_code(outputs, target); };
    return new jit::ElementwiseKind(std::move(setup));
  }();
  return *kind;
}

// The module's stream, one per lua_State (the functions' upvalue).
struct RandomStream {
  std::uint64_t key = 0;
  std::uint64_t offset = 0;  // elements of the stream already given out
};

void reseed(RandomStream& s, std::uint64_t seed) {
  s.key = mix64(seed);
  s.offset = 0;
}

std::uint64_t entropy_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

constexpr char kRandomStreamType[] = "random_stream";  // a tag only: the upvalue has no metatable

RandomStream& module_stream(lua_State* L) { return upvalue_object<RandomStream>(L, 1, kRandomStreamType); }

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
  const auto n = static_cast<std::uint64_t>(out.size());
  std::array<jit::KernelArg, 2> in = {jit::KernelArg::of_typed(Scalar::of_int(static_cast<std::int64_t>(stream->key))),
                                      jit::KernelArg::of_typed(
                                          Scalar::of_int(static_cast<std::int64_t>(stream->offset)))};
  random_kind().call(in, std::span<NDArray>(&out, 1));
  stream->offset += n;
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

}  // namespace

void open_random(lua_State* L) {
  lua_newtable(L);
  void* mem = lua_newuserdatauv(L, sizeof(Box<RandomStream>), 0);
  auto* stream = &(new (mem) Box<RandomStream>{kRandomStreamType, RandomStream{}, true})->value;
  reseed(*stream, entropy_seed());
  static const luaL_Reg funcs[] = {
      {"random", trampoline<l_random>},
      {"seed", trampoline<l_seed>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, funcs, 1);  // the stream is every function's upvalue
  lua_setfield(L, -2, "random");
}

}  // namespace luda::lua

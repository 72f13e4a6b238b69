// compile_device_function: a kind's element function typed for scalar (or raw array)
// parameters and emitted as CUDA C++. Whether NVRTC and the host compiler accept the text
// is tested through the kinds in tests/jit (this binary links dsl/ alone); here: types,
// names, signatures and the exact errors.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "dsl/device_function.h"
#include "dsl/diagnostics.h"
#include "tests/dsl/test_environment.h"

namespace luda::dsl {
namespace {

using namespace luda::dsl::testing;

constexpr const char* kFunctions = R"(
local function gaussian_pdf(x, mean, sigma)
  local inv_sqrt_2pi = 0.3989422804014327
  local a = (x - mean) / sigma
  return inv_sqrt_2pi / sigma * math.exp(-0.5 * a * a)
end

local function hypot(x, y)
  x = math.abs(x)
  y = math.abs(y)
  local t = math.min(x, y)
  x = math.max(x, y)
  t = t / x
  return x * math.sqrt(1 + t * t)
end

local function scaled_hypot(x, y, s)
  return s * hypot(x, y)
end

local function hypot_plus(x, y)
  return hypot(x, y) + 1
end

local function polar_distance(rho1, theta1, rho2, theta2)
  local x1, y1 = rho1 * math.cos(theta1), rho1 * math.sin(theta1)
  local x2, y2 = rho2 * math.cos(theta2), rho2 * math.sin(theta2)
  return math.sqrt((x1 - x2)^2 + (y1 - y2)^2), math.atan(y1 - y2, x1 - x2)
end

local function add(x, y)
  return x + y
end

local function gather(table_, k)
  return table_[k] * 2
end

local function returns_array(a)
  return a
end

local function lane_sum(x)
  cuda.syncthreads()
  return x
end

local function dot(x, w)
  return luda.sum(x * w, -1)
end

local function clamp(x)
  if x < 0 then return 0 end
  return x
end
)";

struct Fixture {
  TestChunk chunk{kFunctions, "fns.lua"};

  DeviceFunction compile(const std::string& name, std::vector<Type> params, KernelOptions options = {},
                         bool fuse = false) {
    const FunctionExpr& f = chunk.function(name);
    DeviceFunctionRequest r;
    r.function = chunk.source_of(f);
    r.handle = &f;
    r.name = name;
    r.params = std::move(params);
    r.options = options;
    r.fuse_reduction_as_value = fuse;
    return compile_device_function(r, chunk.env);
  }
};

Type weak_f64() { return Type::scalar_of(Scalar::Float64, true); }
Type weak_i64() { return Type::scalar_of(Scalar::Int64, true); }

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// Every `static __device__ <result> <name>(` defined in `code`.
std::vector<std::string> defined_functions(const std::string& code) {
  std::vector<std::string> names;
  std::regex def(R"(static __device__ [^(]*? (\w+)\()");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), def); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1]);
  return names;
}

TEST(DeviceFunction, Float32ParamsGiveFloat32Math) {
  Fixture fx;
  DeviceFunction d = fx.compile("gaussian_pdf", {f32(), f32(), f32()});
  EXPECT_EQ(d.result, f32());
  EXPECT_TRUE(std::regex_match(d.c_name, std::regex("gaussian_pdf_[0-9a-f]{8}"))) << d.c_name;
  EXPECT_TRUE(contains(d.code, "static __device__ float " + d.c_name + "(float x, float mean, float sigma) {"))
      << d.code;
  EXPECT_TRUE(contains(d.code, "expf(")) << d.code;
  EXPECT_FALSE(contains(d.code, "double")) << d.code;
  EXPECT_FALSE(contains(d.code, "exp(")) << d.code;
  EXPECT_TRUE(contains(d.code, "#line 4 \"fns.lua\"")) << d.code;
  EXPECT_FALSE(d.needs_fibers);
  EXPECT_FALSE(d.uses_bounds);
  EXPECT_TRUE(d.nvrtc_options.empty());
  EXPECT_TRUE(contains(d.typed, "-- device " + d.c_name + "(x: float32, mean: float32, sigma: float32) -> float32"))
      << d.typed;
}

TEST(DeviceFunction, Float64ParamsGiveFloat64) {
  Fixture fx;
  DeviceFunction d = fx.compile("gaussian_pdf", {f64(), f64(), f64()});
  EXPECT_EQ(d.result, f64());
  EXPECT_TRUE(contains(d.code, "(double x, double mean, double sigma)")) << d.code;
  EXPECT_TRUE(contains(d.code, "exp(")) << d.code;
  EXPECT_FALSE(contains(d.code, "expf(")) << d.code;
}

TEST(DeviceFunction, WeakParamsAreLuaNumbers) {
  Fixture fx;
  // A Lua number with a float32 array: the math stays float32, the number is converted.
  DeviceFunction mixed = fx.compile("add", {f32(), weak_f64()});
  EXPECT_EQ(mixed.result, f32());
  EXPECT_TRUE(contains(mixed.code, "(float x, double y)")) << mixed.code;
  EXPECT_TRUE(contains(mixed.code, "return x + (float)(y);")) << mixed.code;
  // Only Lua numbers: NumPy's defaults, never weak.
  DeviceFunction ints = fx.compile("add", {weak_i64(), weak_i64()});
  EXPECT_EQ(ints.result, i64());
  EXPECT_FALSE(ints.result.weak);
  EXPECT_TRUE(contains(ints.code, "static __device__ long long " + ints.c_name + "(long long x, long long y)"))
      << ints.code;
  DeviceFunction floats = fx.compile("add", {weak_i64(), weak_f64()});
  EXPECT_EQ(floats.result, f64());
  EXPECT_FALSE(floats.result.weak);
  // A literal return unified with a strong one.
  DeviceFunction clamp = fx.compile("clamp", {f32()});
  EXPECT_EQ(clamp.result, f32());
  DeviceFunction clamp_weak = fx.compile("clamp", {weak_f64()});
  EXPECT_EQ(clamp_weak.result, f64());
}

TEST(DeviceFunction, CalleesComeFirstAndEveryNameIsUniquePerContent) {
  Fixture fx;
  DeviceFunction a = fx.compile("scaled_hypot", {f32(), f32(), f32()});
  DeviceFunction b = fx.compile("hypot_plus", {f32(), f32()});
  std::vector<std::string> in_a = defined_functions(a.code), in_b = defined_functions(b.code);
  ASSERT_EQ(in_a.size(), 2u) << a.code;
  ASSERT_EQ(in_b.size(), 2u) << b.code;
  EXPECT_EQ(in_a.back(), a.c_name);  // the function last, its callee before it
  EXPECT_EQ(in_b.back(), b.c_name);
  EXPECT_TRUE(in_a[0].starts_with("hypot_")) << in_a[0];
  EXPECT_TRUE(in_b[0].starts_with("hypot_")) << in_b[0];
  // Both reach hypot(float32, float32): pasted into one translation unit, the two copies
  // must not collide.
  std::set<std::string> all(in_a.begin(), in_a.end());
  for (const std::string& n : in_b) EXPECT_TRUE(all.insert(n).second) << n << " defined twice";
  // The same request gives the same text (the disk cache keys on it).
  DeviceFunction again = fx.compile("scaled_hypot", {f32(), f32(), f32()});
  EXPECT_EQ(again.code, a.code);
  EXPECT_EQ(again.c_name, a.c_name);
  // Other types: other names.
  DeviceFunction wide = fx.compile("scaled_hypot", {f64(), f64(), f64()});
  EXPECT_NE(wide.c_name, a.c_name);
}

TEST(DeviceFunction, TupleResult) {
  Fixture fx;
  DeviceFunction d = fx.compile("polar_distance", {f32(), f32(), f32(), f32()});
  ASSERT_EQ(d.result.kind, Type::Kind::Tuple);
  EXPECT_EQ(d.result.elements, (std::vector<Type>{f32(), f32()}));
  EXPECT_TRUE(contains(d.code, "struct " + d.c_name + "_result { float v0; float v1; };")) << d.code;
  EXPECT_TRUE(contains(d.code, "static __device__ " + d.c_name + "_result " + d.c_name + "(")) << d.code;
  EXPECT_FALSE(contains(d.code, "double")) << d.code;
  EXPECT_TRUE(contains(d.code, "atan2f(")) << d.code;
}

TEST(DeviceFunction, RawArrayParamsAndBoundsChecks) {
  Fixture fx;
  DeviceFunction plain = fx.compile("gather", {arr(Scalar::Float32, 1), i64()});
  EXPECT_EQ(plain.result, f32());
  EXPECT_FALSE(plain.uses_bounds);
  EXPECT_TRUE(contains(plain.code, "(luda_Array<float, 1> table_, long long k)")) << plain.code;
  KernelOptions checked;
  checked.boundscheck = true;
  DeviceFunction d = fx.compile("gather", {arr(Scalar::Float32, 1), i64()}, checked);
  EXPECT_TRUE(d.uses_bounds);
  EXPECT_TRUE(contains(d.code, "(luda_Array<float, 1> table_, long long k, luda_BoundsRecord* luda_bounds)")) << d.code;
  EXPECT_TRUE(contains(d.code, "luda_check(k, table_.shape[0], luda_bounds, 36, 0)")) << d.code;
  // Nothing to check without an array: no record parameter.
  DeviceFunction scalar = fx.compile("add", {f32(), f32()}, checked);
  EXPECT_FALSE(scalar.uses_bounds);
  EXPECT_FALSE(contains(scalar.code, "luda_bounds")) << scalar.code;
}

TEST(DeviceFunction, CpuTargetEmitsTheSameFunctionsWithoutAnEntry) {
  Fixture fx;
  KernelOptions cpu;
  cpu.target = Target::Cpu;
  DeviceFunction c = fx.compile("scaled_hypot", {f32(), f32(), f32()}, cpu);
  DeviceFunction g = fx.compile("scaled_hypot", {f32(), f32(), f32()});
  EXPECT_EQ(c.code, g.code);  // `static __device__`: the cpu prelude defines __device__ away
  EXPECT_FALSE(contains(c.code, "_cpu"));
}

TEST(DeviceFunction, OptionsAndFibers) {
  Fixture fx;
  KernelOptions fast;
  fast.fastmath = true;
  EXPECT_EQ(fx.compile("add", {f32(), f32()}, fast).nvrtc_options, std::vector<std::string>{"--use_fast_math"});
  EXPECT_TRUE(fx.compile("lane_sum", {f32()}).needs_fibers);
}

TEST(DeviceFunction, FusedReductionReturnsItsElementValue) {
  Fixture fx;
  DeviceFunction d = fx.compile("dot", {f32(), f32()}, {}, true);
  EXPECT_EQ(d.result, f32());
  EXPECT_TRUE(contains(d.code, "return x * w;")) << d.code;
  EXPECT_FALSE(contains(d.code, "sum")) << d.code;
  // Without the flag luda.sum is no kernel builtin.
  EXPECT_THROW(fx.compile("dot", {f32(), f32()}), SourceError);
  try {
    fx.compile("add", {f32(), f32()}, {}, true);
    FAIL() << "no final reduction";
  } catch (const SourceError& e) {
    EXPECT_EQ(e.headline(),
              "fns.lua:31:7: type error: a fused reduction must end with return luda.sum(e) (or max, min, prod, "
              "with an optional axis)");
  }
}

TEST(DeviceFunction, ErrorsAreLocated) {
  Fixture fx;
  try {
    fx.compile("add", {f32(), f32(), f32()});
    FAIL() << "wrong count";
  } catch (const SourceError& e) {
    EXPECT_EQ(e.headline(), "fns.lua:31:7: type error: 'add' takes 2 parameters, got 3 arguments");
  }
  try {
    fx.compile("returns_array", {arr(Scalar::Float32, 1)});
    FAIL() << "array returned";
  } catch (const SourceError& e) {
    EXPECT_EQ(e.headline(),
              "fns.lua:40:10: type error: a device function cannot return an array (write into one passed as an "
              "argument)");
  }
}

TEST(DeviceFunction, FunctionGivenAsText) {
  auto chunk = std::make_shared<const Chunk>(Chunk{"[string \"f\"]", "function(x) return math.sqrt(x) * 2 end"});
  DeviceFunctionRequest r;
  r.function.chunk = chunk;
  r.params = {f32()};
  TestEnvironment env;
  env.values["math"] = TestEnvironment::name_space("math");
  DeviceFunction d = compile_device_function(r, env);
  EXPECT_TRUE(d.c_name.starts_with("fn_")) << d.c_name;
  EXPECT_TRUE(contains(d.code, "sqrtf(x) * 2.0f")) << d.code;
}

TEST(DeviceFunction, PreludeIsTheKernelPrelude) {
  std::string p = device_prelude();
  EXPECT_TRUE(contains(p, "luda_Array")) << p.substr(0, 200);
}

}  // namespace
}  // namespace luda::dsl

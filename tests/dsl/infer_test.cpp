// Type inference: one test per rule of docs/language.md, and the exact
// text (with caret) of each error.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dsl/codegen_cuda.h"
#include "dsl/diagnostics.h"
#include "tests/dsl/test_environment.h"

namespace luda::dsl {
namespace {

using namespace luda::dsl::testing;

// The type of local `name` of function `fn` (a kernel over `args`) as "float32" or
// "int64 weak".
std::string local_type(const std::string& src, std::vector<Type> args, const std::string& name,
                       const std::string& fn = "k") {
  TestChunk c(src);
  TypedProgram p = c.infer("k", std::move(args));
  for (const auto& f : p.functions)
    for (const Variable& v : f->vars)
      if (v.name == name && f->lua_name == fn) return v.type.str() + (v.type.weak ? " weak" : "");
  return "no local " + name;
}

std::string error_of(const std::string& src, std::vector<Type> args, std::map<std::string, ExternalValue> extra = {}) {
  try {
    TestChunk c(src);
    for (auto& [k, v] : extra) c.env.values[k] = v;
    c.compile("k", std::move(args));
  } catch (const SourceError& e) {
    return e.what();
  }
  return "no error";
}

std::string code_of(const std::string& src, std::vector<Type> args, std::map<std::string, ExternalValue> extra = {}) {
  TestChunk c(src);
  for (auto& [k, v] : extra) c.env.values[k] = v;
  CudaKernel k = c.compile("k", std::move(args));
  return k.code.substr(k.code.find("luda_generated"));
}

const Type A32 = arr(Scalar::Float32);

// ---------------------------------------------------------------- literals and promotion

TEST(Infer, WeakFloatLiteralKeepsFloat32) {
  EXPECT_EQ(local_type("local function k(x) local y = 0.5 * x[0] end", {A32}, "y"), "float32");
}

TEST(Infer, LudaCudaIsTheCudaNamespace) {
  EXPECT_EQ(local_type("local function k(x) local i = luda.cuda.grid(1) end", {A32}, "i"), "int64");
  EXPECT_EQ(local_type("local function k(x) local t = luda.cuda.threadIdx.x end", {A32}, "t"), "int32");
}

TEST(Infer, WeakIntLiteralKeepsTheIntType) {
  EXPECT_EQ(local_type("local function k(n) local m = n + 1 end", {i32()}, "m"), "int32");
  EXPECT_EQ(local_type("local function k(n) local m = n + 1 end", {Type::scalar_of(Scalar::UInt8)}, "m"), "uint8");
}

TEST(Infer, LiteralAloneIsInt64OrFloat64) {
  EXPECT_EQ(local_type("local function k(x) local a = 1; local b = 1.5; a = a + 1; b = b * 2 end", {A32}, "a"),
            "int64 weak");
  EXPECT_EQ(local_type("local function k(x) local a = 1; local b = 1.5; a = a + 1; b = b * 2 end", {A32}, "b"),
            "float64 weak");
}

TEST(Infer, IntWithFloatIsTheFloat) {
  EXPECT_EQ(local_type("local function k(n, x) local y = n * x end", {i64(), f32()}, "y"), "float32");
}

TEST(Infer, Float32WithFloat64IsFloat64) {
  EXPECT_EQ(local_type("local function k(a, b) local y = a + b end", {f32(), f64()}, "y"), "float64");
}

TEST(Infer, MixedSignednessWidens) {
  EXPECT_EQ(local_type("local function k(a, b) local y = a + b end", {Type::scalar_of(Scalar::UInt32), i32()}, "y"),
            "int64");
}

TEST(Infer, DivisionIsFloat) {
  EXPECT_EQ(local_type("local function k(i) local y = i / 2 end", {i32()}, "y"), "float64");
  EXPECT_EQ(local_type("local function k(x) local y = x / 2 end", {f32()}, "y"), "float32");
}

TEST(Infer, FloorDivisionAndModuloKeepTheType) {
  EXPECT_EQ(local_type("local function k(i) local y = i // 2; local z = i % 3 end", {i32()}, "y"), "int32");
  EXPECT_EQ(local_type("local function k(x) local y = x // 2 end", {f32()}, "y"), "float32");
}

TEST(Infer, PowerIsFloatAndSquaresMultiply) {
  EXPECT_EQ(local_type("local function k(i) local y = i ^ 2 end", {i32()}, "y"), "float64");
  std::string code = code_of("local function k(x, out) out[0] = x ^ 2 + x ^ 3 + x ^ 0.5 end", {f32(), A32});
  EXPECT_NE(code.find("luda_pow2(x) + luda_pow3(x)"), std::string::npos) << code;
  EXPECT_NE(code.find("powf(x, 0.5f)"), std::string::npos) << code;
}

TEST(Infer, LocalsUnifyWhatIsAssigned) {
  // weak int, then float32: the local is float32 (the loop assigns it after it is read).
  const char* src = "local function k(x) local s = 0; for i = 0, #x - 1 do s = s + x[i] end; x[0] = s end";
  EXPECT_EQ(local_type(src, {A32}, "s"), "float32");
  EXPECT_EQ(local_type(src, {A32}, "i"), "int64");
}

TEST(Infer, ConstantLocalsFoldAndCarryNoStorage) {
  std::string code = code_of("local function k(x) local h = 0.25; x[0] = h * x[0] end", {A32});
  EXPECT_NE(code.find("0.25f * x.data"), std::string::npos) << code;
}

TEST(Infer, NoFloat64InAFloat32Kernel) {
  const char* gaussian = R"(
local function k(x, mean, sigma, out)
  local i = cuda.grid(1)
  if i < #x then
    local inv_sqrt_2pi = 0.3989422804014327
    out[i] = inv_sqrt_2pi / sigma * math.exp(-0.5 * ((x[i] - mean) / sigma)^2)
  end
end)";
  std::string code = code_of(gaussian, {A32, f32(), f32(), A32});
  EXPECT_EQ(code.find("double"), std::string::npos) << code;
  EXPECT_NE(code.find("expf("), std::string::npos) << code;
  const char* polar = R"(
local function polar_distance(rho1, theta1, rho2, theta2)
  local x1, y1 = rho1 * math.cos(theta1), rho1 * math.sin(theta1)
  local x2, y2 = rho2 * math.cos(theta2), rho2 * math.sin(theta2)
  return math.sqrt((x1 - x2)^2 + (y1 - y2)^2), math.atan(y1 - y2, x1 - x2)
end
local function k(r1, t1, r2, t2, d, a)
  local i = cuda.grid(1)
  if i < #r1 then d[i], a[i] = polar_distance(r1[i], t1[i], r2[i], t2[i]) end
end)";
  code = code_of(polar, std::vector<Type>(6, A32));
  EXPECT_EQ(code.find("double"), std::string::npos) << code;
  EXPECT_NE(code.find("atan2f("), std::string::npos) << code;
}

TEST(Infer, UpvaluesFreezeAsConstants) {
  std::map<std::string, ExternalValue> env = {
      {"SCALE", TestEnvironment::number(2.5)},
      {"N", TestEnvironment::integer(4)},
      {"cfg", TestEnvironment::table({{"TILE", TestEnvironment::integer(16)},
                                      {"inner", TestEnvironment::table({{"k", TestEnvironment::integer(3)}})}})},
      {"HALF", TestEnvironment::typed(Scalar::Float64, 0.5)}};
  std::string code = code_of("local function k(x) x[0] = SCALE * x[N] + cfg.TILE + cfg.inner.k end", {A32}, env);
  EXPECT_NE(code.find("x.data[0LL * x.strides[0]] = ((2.5f * x.data[4LL * x.strides[0]]) + 16.0f) + 3.0f;"),
            std::string::npos)
      << code;
  // A typed scalar is strong: float64 arithmetic, converted on the store.
  code = code_of("local function k(x) x[0] = HALF * x[0] end", {A32}, env);
  EXPECT_NE(code.find("(float)(0.5 * (double)(x.data[0LL * x.strides[0]]))"), std::string::npos) << code;
}

TEST(Infer, DeviceFunctionsSpecializePerArgumentTypes) {
  const char* src = R"(
local function twice(v) return v + v end
local function k(x, n) x[0] = twice(x[0]); n[0] = twice(n[0]) end)";
  TestChunk c(src);
  TypedProgram p = c.infer("k", {A32, arr(Scalar::Int32)});
  auto fs = reachable_functions(p);
  ASSERT_EQ(fs.size(), 3u);
  EXPECT_EQ(fs[0]->result.str(), "float32");
  EXPECT_EQ(fs[1]->result.str(), "int32");
  EXPECT_NE(fs[0]->c_name, fs[1]->c_name);
}

TEST(Infer, ShiftsAndBitwiseFollowLua) {
  std::string code = code_of("local function k(a, n) a[0] = (a[1] << n) ~ (a[2] >> 1) & ~a[3] end",
                             {arr(Scalar::Int32), i64()});
  EXPECT_NE(code.find("luda_shl(a.data[1LL * a.strides[0]], n)"), std::string::npos) << code;
  EXPECT_NE(code.find("luda_shr("), std::string::npos) << code;
}

TEST(Infer, SharedArrayShapeFromConstants) {
  std::map<std::string, ExternalValue> env = {{"T", TestEnvironment::integer(8)}};
  std::string code = code_of(
      "local function k(x) local t = cuda.shared.array({T, T + 1}, luda.float32); t[1][2] = x[0]; x[0] = t[2][1] end",
      {A32}, env);
  EXPECT_NE(code.find("__shared__ float t_storage[72];"), std::string::npos) << code;
  EXPECT_NE(code.find("t.data[1LL * 9 + 2LL] = x.data[0LL * x.strides[0]];"), std::string::npos) << code;
}

// ---------------------------------------------------------------- errors

TEST(InferErrors, BoolPlusNumber) {
  EXPECT_EQ(error_of("local function k(x, y)\n  x[0] = (y > 0) + y\nend", {A32, f32()}),
            "test.lua:2:18: type error: cannot apply '+' to bool and float32\n"
            "    x[0] = (y > 0) + y\n"
            "           ~~~~~~~~^~~");
}

TEST(InferErrors, LocalConflictNamesBothLines) {
  EXPECT_EQ(error_of("local function k(x)\n  local a = 1\n  a = x[0] > 1\nend", {A32}),
            "test.lua:3:3: type error: local 'a' is int64 (line 2) and cannot also hold bool\n"
            "    a = x[0] > 1\n"
            "    ^");
}

TEST(InferErrors, OrOnNumbers) {
  EXPECT_EQ(error_of("local function k(x)\n  x[0] = x[1] or 0\nend", {A32}),
            "test.lua:2:15: type error: 'or' needs bool operands in a kernel, got float32 and int64 (Lua's "
            "value-selecting 'a or b' on numbers is not supported: use if/else)\n"
            "    x[0] = x[1] or 0\n"
            "           ~~~~~^~~~");
}

TEST(InferErrors, UnknownName) {
  EXPECT_EQ(error_of("local function k(x)\n  x[0] = foo\nend", {A32}), "test.lua:2:10: name error: unknown name 'foo'\n"
                                                                       "    x[0] = foo\n"
                                                                       "           ^~~");
}

TEST(InferErrors, UnknownBuiltin) {
  EXPECT_EQ(error_of("local function k(x)\n  x[0] = math.sqr(x[0])\nend", {A32}),
            "test.lua:2:10: name error: 'math' has no member 'sqr' (it has: sqrt, exp, log, sin, cos, tan, asin, "
            "acos, atan, floor, ceil, abs, min, max, fmod, deg, rad, huge, pi, maxinteger, mininteger)\n"
            "    x[0] = math.sqr(x[0])\n"
            "           ^~~~~~~~");
}

TEST(InferErrors, CapturedArray) {
  EXPECT_EQ(error_of("local function k(x)\n  x[0] = data[0]\nend", {A32},
                     {{"data", TestEnvironment::other("array", "an ndarray")}}),
            "test.lua:2:10: type error: 'data' is an array from outside the kernel: pass it as an argument\n"
            "    x[0] = data[0]\n"
            "           ^~~~");
}

TEST(InferErrors, Recursion) {
  EXPECT_EQ(error_of("local function f(n)\n  return f(n - 1)\nend\nlocal function k(x)\n  x[0] = f(1)\nend", {A32}),
            "test.lua:2:10: unsupported: recursion is not supported in kernels: 'f' -> 'f'\n"
            "    return f(n - 1)\n"
            "           ^~~~~~~~");
}

TEST(InferErrors, TablesStringsClosuresGenericFor) {
  EXPECT_EQ(error_of("local function k(x)\n  local t = {1, 2}\nend", {A32}),
            "test.lua:2:13: unsupported: tables cannot be created inside a kernel (a table of constants is allowed "
            "only as the shape of cuda.shared.array / cuda.local_array)\n"
            "    local t = {1, 2}\n"
            "              ^~~~~~");
  EXPECT_EQ(error_of("local function k(x)\n  local f = function() end\nend", {A32}),
            "test.lua:2:13: unsupported: closures cannot be created inside a kernel: define the function outside "
            "it (a kernel calls it as a device function)\n"
            "    local f = function() end\n"
            "              ^~~~~~~~~~~~~~");
  EXPECT_EQ(
      error_of("local function k(x)\n  for i, v in pairs(x) do end\nend", {A32}),
      "test.lua:2:3: unsupported: the generic for (for k, v in ...) is not supported in kernels: use a numeric for\n"
      "    for i, v in pairs(x) do end\n"
      "    ^");
}

TEST(InferErrors, ConstantZeroStep) {
  EXPECT_EQ(error_of("local function k(x)\n  for i = 1, 10, 0 do end\nend", {A32}),
            "test.lua:2:18: type error: 'for' step is zero\n"
            "    for i = 1, 10, 0 do end\n"
            "                   ^");
}

TEST(InferErrors, ConditionMustBeBool) {
  EXPECT_EQ(error_of("local function k(x)\n  if x[0] then x[0] = 1 end\nend", {A32}),
            "test.lua:2:6: type error: a condition must be a bool, got float32 (in Lua every number is true: "
            "compare it, e.g. x ~= 0)\n"
            "    if x[0] then x[0] = 1 end\n"
            "       ^~~~");
}

TEST(InferErrors, LiteralDoesNotFit) {
  EXPECT_EQ(error_of("local function k(x)\n  x[0] = x[0] + 1000\nend", {arr(Scalar::Int8)}),
            "test.lua:2:17: type error: the constant 1000 does not fit int8, the type it is used with (convert "
            "explicitly, e.g. luda.int64(x), to compute in a wider type)\n"
            "    x[0] = x[0] + 1000\n"
            "                  ^~~~");
}

// ---------------------------------------------------------------- Lua integers (NumPy 2)

// The uses compile_kernel reports of the kernel `k` over a uint8 array and a Lua integer
// (weak int64): "param:type@line" each.
std::string weak_uses(const std::string& src) {
  TestChunk c(src);
  CudaKernel k = c.compile("k", {arr(Scalar::UInt8), Type::scalar_of(Scalar::Int64, true)});
  std::string out;
  for (const WeakIntUse& u : k.weak_int_uses)
    out += fmt::format("{}{}:{}@{}", out.empty() ? "" : " ", u.param, scalar_name(u.to), u.where);
  return out;
}

TEST(Infer, ALuaIntegerParameterNotesTheNarrowerTypesItMeets) {
  EXPECT_EQ(weak_uses("local function k(x, n)\n  x[0] = x[0] + n\nend"), "1:uint8@test.lua:2");
  EXPECT_EQ(weak_uses("local function k(x, n)\n  local c = n\n  x[0] = x[0] * c\nend"), "1:uint8@test.lua:3");
  EXPECT_EQ(weak_uses("local function k(x, n)\n  x[0] = n\nend"), "1:uint8@test.lua:2");  // a store
  EXPECT_EQ(weak_uses("local function k(x, n)\n  x[0] = math.max(x[0], n)\nend"), "1:uint8@test.lua:2");
  EXPECT_EQ(weak_uses("local function k(x, n)\n  local m = n\n  m = x[0]\nend"),
            "1:uint8@test.lua:2");  // a uint8 local
  EXPECT_EQ(weak_uses(
                "local function add(a, b)\n  return a + b\nend\nlocal function k(x, n)\n  x[0] = add(x[0], n)\nend"),
            "1:uint8@test.lua:2");  // in a device function it calls
  // Not a conversion to a narrower integer: float math, int64, a comparison.
  EXPECT_EQ(weak_uses("local function k(x, n)\n  x[0] = x[0] / n + luda.math.hypot(x[0], n)\nend"), "");
  EXPECT_EQ(weak_uses("local function k(x, n)\n  local m = luda.int64(x[0]) + n\nend"), "");
  EXPECT_EQ(weak_uses("local function k(x, n)\n  if x[0] < n then x[0] = 1 end\nend"), "");
  // A value the function computes wraps as integers do.
  EXPECT_EQ(weak_uses("local function k(x, n)\n  n = n + 1\n  x[0] = x[0] + n\nend"), "");
}

TEST(Infer, ComparisonsOfIntegersCompareValues) {
  // A Lua integer or a constant past the other operand's type compares as int64; one that
  // fits keeps the type; int64 against uint64 compares by value.
  std::string weak = code_of("local function k(x, n, out)\n  out[0] = x[0] < n and x[0] ~= 1000 and x[0] > 3\nend",
                             {arr(Scalar::Int8), Type::scalar_of(Scalar::Int64, true), arr(Scalar::Bool)});
  EXPECT_NE(weak.find("(((long long)(x.data[0LL * x.strides[0]]) < n) && ((long long)(x.data[0LL * x.strides[0]]) "
                      "!= 1000LL)) && (x.data[0LL * x.strides[0]] > ((signed char)3))"),
            std::string::npos)
      << weak;
  std::string mixed =
      code_of("local function k(x, y, n, out)\n  out[0] = x[0] < y[0] and y[0] >= n and y[0] ~= -1\nend",
              {arr(Scalar::Int64), arr(Scalar::UInt64), Type::scalar_of(Scalar::Int64, true), arr(Scalar::Bool)});
  EXPECT_NE(mixed.find("(luda_lt(x.data[0LL * x.strides[0]], y.data[0LL * y.strides[0]]) && "
                       "(!luda_lt(y.data[0LL * y.strides[0]], n))) && (!luda_eq(y.data[0LL * y.strides[0]], -1LL))"),
            std::string::npos)
      << mixed;
  // Constants fold by value.
  ExternalValue big;
  big.kind = ExternalValue::Kind::Typed;
  big.scalar = Scalar::UInt64;
  big.integer = -1;  // 2^64 - 1
  std::string folded = code_of("local function k(out)\n  out[0] = -1 < BIG and BIG > 0\nend", {arr(Scalar::Bool)},
                               {{"BIG", big}});
  EXPECT_NE(folded.find("out.data[0LL * out.strides[0]] = true;"), std::string::npos) << folded;
}

TEST(InferErrors, NonConstantSharedShape) {
  EXPECT_EQ(error_of("local function k(x, n)\n  local t = cuda.shared.array(n, \"float32\")\nend", {A32, i32()}),
            "test.lua:2:31: type error: cuda.shared.array: the shape must be a constant number or a table of "
            "constant numbers (e.g. {32, 33}), known when the kernel is compiled\n"
            "    local t = cuda.shared.array(n, \"float32\")\n"
            "                                ^");
}

TEST(InferErrors, BuiltinArity) {
  EXPECT_EQ(error_of("local function k(x)\n  x[0] = math.sqrt(x[0], 2)\nend", {A32}),
            "test.lua:2:19: type error: math.sqrt takes 1 argument, got 2\n"
            "    x[0] = math.sqrt(x[0], 2)\n"
            "           ~~~~~~~~~^~~~~~~~~");
}

TEST(InferErrors, KernelReturnsNothing) {
  EXPECT_EQ(error_of("local function k(x)\n  return x[0]\nend", {A32}),
            "test.lua:2:10: type error: a kernel returns nothing: write its results into an output array\n"
            "    return x[0]\n"
            "           ^~~~");
}

TEST(InferErrors, ShapeIndexOutOfRange) {
  EXPECT_EQ(error_of("local function k(x)\n  x[0] = x.shape[2]\nend", {A32}),
            "test.lua:2:18: type error: a.shape[2] is out of range: the array has 1 dimension (a.shape[1] .. "
            "a.shape[1]; Lua sequences start at 1)\n"
            "    x[0] = x.shape[2]\n"
            "                   ^");
}

TEST(InferErrors, AtomicIndexCount) {
  EXPECT_EQ(error_of("local function k(h)\n  cuda.atomic.add(h, 0, 1)\nend", {arr(Scalar::Int32, 2)}),
            "test.lua:2:18: type error: cuda.atomic.add on a 2-d array takes 2 indices and a value: "
            "cuda.atomic.add(a, i, j, v)\n"
            "    cuda.atomic.add(h, 0, 1)\n"
            "    ~~~~~~~~~~~~~~~^~~~~~~~~");
}

// ---------------------------------------------------------------- every path returns

TEST(Infer, DeviceFunctionsThatReturnOnEveryPathCompile) {
  const char* forms[] = {
      "local function f(x) if x > 0 then return 1 else return 2 end end",
      "local function f(x) if x > 0 then return 1 elseif x < 0 then return -1 else do return 0 end end end",
      "local function f(x) while true do if x > 0 then return x end x = x + 1 end end",
      "local function f(x) repeat x = x - 1 if x < 0 then return x end until false end",
      "local function f(x) if x > 0 then return 1 end return 2 end",
      "local function f(x) local y = x do return y end end",
  };
  for (const char* form : forms) {
    std::string src = std::string(form) + "\nlocal function k(out) out[0] = f(out[0]) end";
    EXPECT_EQ(error_of(src, {arr(Scalar::Int64)}), "no error") << form;
  }
}

TEST(Infer, ControlReachingTheEndOfAValueFunctionIsAnError) {
  auto first_line = [](const std::string& what) { return what.substr(0, what.find('\n')); };
  const std::pair<const char*, const char*> cases[] = {
      {"local function f(x) while true do if x > 0 then return x end break end end",
       "after the 'while' loop at line 1"},
      {"local function f(x) repeat if x > 0 then return x end until x < 5 end", "after the 'repeat' loop at line 1"},
      {"local function f(x) if x > 0 then return 1 else x = 2 end end", "after line 1"},
      {"local function f(x) if x > 0 then return 1 else end end", "through the empty block at line 1"},
  };
  for (const auto& [form, how] : cases) {
    std::string src = std::string(form) + "\nlocal function k(out) out[0] = f(out[0]) end";
    std::string what = first_line(error_of(src, {arr(Scalar::Int64)}));
    EXPECT_NE(what.find(std::string("can reach its end without one, ") + how), std::string::npos) << what;
  }
}

TEST(InferErrors, ZeroDimensionalArrays) {
  EXPECT_EQ(error_of("local function k(a, out) out[0] = a[0] end", {arr(Scalar::Float64, 0), arr(Scalar::Float64)}),
            "test.lua:1:36: type error: too many indices: this is a 0-d array, which has no dimension to index; pass "
            "its value as a number (a:item()) or as a 1-element array (a:reshape(1))\n"
            "    local function k(a, out) out[0] = a[0] end\n"
            "                                      ~^~~");
  EXPECT_EQ(error_of("local function k(a, out) out[0] = #a end", {arr(Scalar::Float64, 0), arr(Scalar::Float64)}),
            "test.lua:1:35: type error: '#' of a 0-d array: it has no first dimension (a.size is its 1 element)\n"
            "    local function k(a, out) out[0] = #a end\n"
            "                                      ^~");
  EXPECT_EQ(error_of("local function k(a, out) out[0] = a.size + a.ndim end",
                     {arr(Scalar::Float64, 0), arr(Scalar::Float64)}),
            "no error");
}

}  // namespace
}  // namespace luda::dsl

// How big a program the front end takes, and how it refuses a bigger one: long
// left-associative chains (generated code sums thousands of terms) compile through every
// pass without recursion, on a host thread with a small stack too; other nesting gets a
// located error at a fixed depth; typing is linear in the size of the tree.
#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <pthread.h>

#include <fmt/format.h>

#include "dsl/codegen_cuda.h"
#include "dsl/diagnostics.h"
#include "dsl/kind_source.h"
#include "dsl/stack_guard.h"
#include "tests/dsl/test_environment.h"

namespace luda::dsl {
namespace {

using namespace luda::dsl::testing;

const Type F64A = arr(Scalar::Float64);

// `inner` wrapped `depth` times in `open` ... `close`.
std::string nested(const std::string& open, const std::string& inner, const std::string& close, int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  s += inner;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

// Runs `f` on a thread with a 256 KiB stack, as a host application's worker thread may
// have (glibc's default is 8 MiB); rethrows what it throws. AddressSanitizer's frames are
// several times larger (redzones around every local): in its build (LUDA_SANITIZE) the
// thread gets as many times the stack, so that the same depths are reached.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kSmallStack = 8 * 256 * 1024;
#else
constexpr std::size_t kSmallStack = 256 * 1024;
#endif
template <class F>
void on_small_stack(F f) {
  struct Call {
    F* f;
    std::exception_ptr error;
  } call{&f, nullptr};
  auto run = [](void* p) -> void* {
    auto* c = static_cast<Call*>(p);
    try {
      (*c->f)();
    } catch (...) {
      c->error = std::current_exception();
    }
    return nullptr;
  };
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kSmallStack);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, run, &call), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  if (call.error) std::rethrow_exception(call.error);
}

// `first op term op term ...` with `n` terms: a left-associative chain.
std::string chain(const std::string& op, const std::string& term, int n) {
  std::string s = term;
  for (int i = 1; i < n; ++i) s += " " + op + " " + term;
  return s;
}

// The error text compiling kernel `k` of `src` gives on a small stack ("no error" if none).
std::string error_on_small_stack(const std::string& src, std::vector<Type> args, Target target = Target::Cuda) {
  std::string what = "no error";
  on_small_stack([&] {
    try {
      TestChunk c(src);
      KernelOptions options;
      options.target = target;
      c.compile("k", args, options);
    } catch (const SourceError& e) {
      what = e.what();
      if (what.size() > 400) what = what.substr(0, 400) + "...";  // the source line can be huge
    }
  });
  return what;
}

// The error `f` throws ("no error" if none), cut short: the source line can be huge.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const SourceError& e) {
    std::string what = e.what();
    return what.size() > 400 ? what.substr(0, 400) + "..." : what;
  }
  return "no error";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---------------------------------------------------------------- typing is linear

TEST(Limits, NestedBuiltinCallsTypeInLinearTime) {
  // Each argument typed twice made this 2^40 steps.
  std::string src = "local function k(out) out[0] = " + nested("math.abs(", "out[0]", ")", 40) + " end";
  auto start = std::chrono::steady_clock::now();
  TestChunk c(src);
  CudaKernel k = c.compile("k", {F64A});
  EXPECT_LT(seconds_since(start), 2.0);
  std::string body = k.code.substr(k.code.find("luda_generated"));
  EXPECT_NE(body.find(nested("fabs(", "out.data[0LL * out.strides[0]]", ")", 40)), std::string::npos) << body;
}

TEST(Limits, NestedCallsOfEveryFormTypeInLinearTime) {
  // Device function calls, casts, parenthesized tuples, min/max with several arguments.
  std::string src = "local function id(x) return x, x end\n"
                    "local function k(out) out[0] = " +
                    nested("math.max(1, luda.float64((id(", "out[0]", "))))", 40) + " end";
  auto start = std::chrono::steady_clock::now();
  TestChunk c(src);
  c.compile("k", {F64A});
  EXPECT_LT(seconds_since(start), 2.0);
}

// ---------------------------------------------------------------- long chains

TEST(Limits, TenThousandTermSumsCompileOnASmallStack) {
  const std::string terms[] = {chain("+", "x[i]", 10000), chain("*", "x[i]", 10000),
                               chain("-", "x[i] * 2", 10000) + " / 3 + 1", chain("+", "x[i] // 2 % 7", 10000)};
  for (const std::string& sum : terms)
    for (Target target : {Target::Cuda, Target::Cpu})
      EXPECT_EQ(error_on_small_stack("local function k(x) local i = cuda.grid(1) x[i] = " + sum + " end", {F64A},
                                     target),
                "no error");
}

TEST(Limits, TenThousandTermLogicAndComparisonChainsCompileOnASmallStack) {
  const std::string conditions[] = {chain("and", "x[i] > 0", 10000), chain("or", "x[i] > 0", 10000),
                                    chain("==", "(x[i] > 0)", 10000), chain("~=", "(x[i] < 1)", 10000)};
  for (const std::string& cond : conditions)
    EXPECT_EQ(error_on_small_stack("local function k(x) local i = cuda.grid(1) if " + cond + " then x[i] = 1 end end",
                                   {F64A}),
              "no error");
}

// The emitted form of a long chain (past 16 operators): flat runs, wrapping integers in
// their unsigned type, a lambda's locals where helper calls would nest deeper.
std::string emitted_body(const std::string& expr, Type arg) {
  TestChunk c("local function k(a) a[0] = " + expr + " end");
  std::string code = c.compile("k", {arg}).code;
  code = code.substr(code.find("luda_generated"));
  return code.substr(code.find("a.data[0LL] = ") + 14);
}

TEST(Limits, LongChainsAreEmittedFlat) {
  Type i32c = arr(Scalar::Int32, 1, true), f32c = arr(Scalar::Float32, 1, true);
  EXPECT_EQ(emitted_body(chain("+", "a[1]", 20) + " - a[2]", i32c).substr(0, 60),
            "(int)((unsigned)a.data[1LL] + (unsigned)a.data[1LL] + (unsig");
  std::string product = emitted_body(chain("*", "a[1]", 18) + " / 2 + 1", f32c);
  EXPECT_EQ(product.substr(0, 47), "(a.data[1LL] * a.data[1LL] * a.data[1LL] * a.da") << product;
  EXPECT_NE(product.find("a.data[1LL] / 2.0f) + 1.0f;"), std::string::npos) << product;
  std::string mixed = emitted_body("a[1] * 2 + " + chain("+", "a[1] * 3", 20), f32c);
  EXPECT_EQ(mixed.substr(0, 44), "(a.data[1LL] * 2.0f) + (a.data[1LL] * 3.0f) ") << mixed;
  std::string idiv = emitted_body(chain("//", "a[1]", 40), i32c);
  EXPECT_EQ(idiv.substr(0, 40), "[&]() { const int luda_c1 = luda_floordi") << idiv.substr(0, 200);
  EXPECT_EQ(idiv.find("luda_c3 "), std::string::npos) << "40 // make two locals of 16";
}

TEST(Limits, ElementwiseBodyWithALongChainOnASmallStack) {
  std::vector<KindParam> in = parse_kind_params("T x", "in_params", "elementwise", "k", false);
  std::vector<KindParam> out = parse_kind_params("T z", "out_params", "elementwise", "k", false, &in);
  on_small_stack([&] {
    ElementwiseFunction f = elementwise_function(in, out, {Scalar::Float32, Scalar::Float32},
                                                 "z = " + chain("+", "x", 10000) + " + z", "k");
    EXPECT_TRUE(f.out_read[0]);
  });
}

// ---------------------------------------------------------------- other nesting

TEST(Limits, DeepParenthesesAreASyntaxErrorAtAFixedDepth) {
  std::string src = "local function k(x) x[0] = " + nested("(", "1", ")", 300) + " end";
  std::string what = error_on_small_stack(src, {F64A});
  EXPECT_EQ(what.substr(0, what.find('\n')),
            "test.lua:1:226: syntax error: chunk nested too deeply (more than 200 levels) near '('");
}

TEST(Limits, EveryRecursiveFormIsRefusedAtAFixedDepthOnASmallStack) {
  const std::string deep[] = {
      nested("math.abs(", "x[0]", ")", 300),  // calls
      nested("- ", "x[0]", "", 300),          // unary operators
      chain("^", "x[0]", 300),                // right-associative chains
      nested("x[", "0", "]", 300),            // index keys
      nested("not ", "true", "", 300) + " and 1 or 0",
  };
  for (const std::string& e : deep) {
    std::string what = error_on_small_stack("local function k(x) x[0] = " + e + " end", {F64A});
    EXPECT_NE(what.find("syntax error: chunk nested too deeply (more than 200 levels)"), std::string::npos) << what;
  }
  std::string blocks = "local function k(x) " + nested("do ", "x[0] = 1", " end", 300) + " end";
  EXPECT_NE(error_on_small_stack(blocks, {F64A}).find("chunk nested too deeply"), std::string::npos);
}

TEST(Limits, NestingJustUnderTheParsersLimitCompilesOnASmallStack) {
  const std::string deep[] = {
      nested("math.abs(", "x[0]", ")", 190),     nested("- ", "x[0]", "", 190),     chain("^", "x[0]", 190),
      "x[0] + " + nested("y[", "0", "]", 190),   nested("(", "x[0]", " + 1)", 190), nested("((", "x[0]", ") + 1)", 95),
      nested("luda.float64(", "x[0]", ")", 190), nested("f(", "x[0]", ")", 190),
  };
  for (const std::string& e : deep) {
    std::string src = "local function f(v) return v end local function k(x, y) x[0] = " + e + " end";
    std::string what = error_on_small_stack(src, {F64A, arr(Scalar::Int64)});
    EXPECT_EQ(what, "no error") << e.substr(0, 40);
  }
  std::string blocks = "local function k(x) " + nested("if x[0] > 0 then ", "x[0] = 1", " end", 190) + " end";
  EXPECT_EQ(error_on_small_stack(blocks, {F64A}), "no error");
}

TEST(Limits, LongSuffixChainsGetALocatedErrorNotACrash) {
  // `a.b.b.b...` parses in a loop (Lua's grammar); typing it stops at a fixed depth.
  std::string src = "local function k(x) x[0] = cfg" + nested(".sub", "", "", 5000) + ".k end";
  TestChunk c(src);
  c.env.values["cfg"] = TestEnvironment::table({});
  std::string what = error_of([&] { c.compile("k", {F64A}); });
  EXPECT_EQ(what.substr(0, what.find('\n')),
            "test.lua:1:28: unsupported: nested too deeply: more than 1000 levels of expressions, statements and "
            "device function calls (move parts into locals or functions)");
  // On a small stack too (the fixed limit, or the stack guard first).
  what = error_on_small_stack("local function k(x) x[0] = x" + nested("[0]", "", "", 5000) + " end", {F64A});
  EXPECT_NE(what.find("unsupported: nested too deeply"), std::string::npos) << what;
}

TEST(Limits, DeviceFunctionChainsAreRefusedAtAFixedDepth) {
  std::string src;
  for (int i = 0; i < 400; ++i) src += fmt::format("local function f{}(x) return f{}(x) + 1 end\n", i, i + 1);
  src += "local function f400(x) return x end\n";
  src += "local function k(x) x[0] = f0(x[0]) end\n";
  TestChunk c(src);
  std::string what = error_of([&] { c.compile("k", {F64A}); });
  EXPECT_NE(what.find("unsupported: nested too deeply: more than 1000 levels"), std::string::npos) << what;
  EXPECT_NE(error_on_small_stack(src, {F64A}).find(kStackLowMessage), std::string::npos);
}

}  // namespace
}  // namespace luda::dsl

// The kinds given as strings: parameter strings (the real lexer, exact columns), the
// functions built from an elementwise body and a reduction's expressions (typed through
// compile_device_function, errors still pointing into the user's strings), and fuse's shape.
#include <gtest/gtest.h>

#include "dsl/device_function.h"
#include "dsl/diagnostics.h"
#include "dsl/kind_source.h"
#include "tests/dsl/test_environment.h"

namespace luda::dsl {
namespace {

using namespace luda::dsl::testing;

std::vector<KindParam> in_params(std::string_view text, bool reduction = false) {
  return parse_kind_params(text, "in_params", reduction ? "reduction" : "elementwise", "layer", reduction);
}

// what() of the SourceError that `f` throws ("" when none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const SourceError& e) {
    return e.what();
  }
  return "";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string param_error(std::string_view text, std::string_view role = "in_params", bool reduction = false,
                        const std::vector<KindParam>* taken = nullptr) {
  return error_of(
      [&] { parse_kind_params(text, role, reduction ? "reduction" : "elementwise", "layer", reduction, taken); });
}

TEST(KindParams, Parses) {
  std::vector<KindParam> p = in_params("T x, raw T y,  float32 z, W w");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].name, "x");
  EXPECT_EQ(p[0].placeholder, "T");
  EXPECT_FALSE(p[0].dtype);
  EXPECT_FALSE(p[0].raw);
  EXPECT_EQ(p[0].col, 3);
  EXPECT_TRUE(p[1].raw);
  EXPECT_EQ(p[1].placeholder, "T");
  EXPECT_EQ(p[1].col, 12);
  EXPECT_EQ(p[2].dtype, Scalar::Float32);
  EXPECT_EQ(p[2].placeholder, "");
  EXPECT_EQ(p[2].col, 24);
  EXPECT_EQ(p[3].placeholder, "W");
  EXPECT_TRUE(in_params("").empty());
  EXPECT_TRUE(in_params("  \n ").empty());
  std::vector<KindParam> all = in_params("bool a, int8 b, uint64 c, float64 d");
  EXPECT_EQ(all[0].dtype, Scalar::Bool);
  EXPECT_EQ(all[3].dtype, Scalar::Float64);
  // a and b are only reserved in reductions; raw is a name where a name goes.
  EXPECT_EQ(in_params("T raw")[0].name, "raw");
}

TEST(KindParams, UnknownType) {
  EXPECT_EQ(param_error("T x, flaot32 y"),
            "in_params of elementwise 'layer':1:6: type error: unknown type 'flaot32': expected a dtype (float32, "
            "int64, ...) or a one-letter type placeholder (T)\n"
            "    T x, flaot32 y\n"
            "         ^~~~~~~");
  EXPECT_EQ(param_error("TT x"),
            "in_params of elementwise 'layer':1:1: type error: unknown type 'TT': expected a dtype (float32, int64, "
            "...) or a one-letter type placeholder (T)\n"
            "    TT x\n"
            "    ^~");
}

TEST(KindParams, SyntaxErrors) {
  EXPECT_EQ(param_error("T x, T"),
            "in_params of elementwise 'layer':1:7: syntax error: a parameter name expected after 'T' near <eof>\n"
            "    T x, T\n"
            "          ^");
  EXPECT_EQ(param_error("T x y"),
            "in_params of elementwise 'layer':1:5: syntax error: ',' expected between parameters near 'y'\n"
            "    T x y\n"
            "        ^");
  EXPECT_EQ(param_error("T x,, T y"),
            "in_params of elementwise 'layer':1:5: syntax error: a parameter (a type and a name: T x) expected "
            "near ','\n"
            "    T x,, T y\n"
            "        ^");
  EXPECT_EQ(first_line(param_error("T x,")),
            "in_params of elementwise 'layer':1:5: syntax error: a parameter (a type and a name: T x) expected "
            "near <eof>");
  EXPECT_EQ(first_line(param_error("T x, 3 y")),
            "in_params of elementwise 'layer':1:6: syntax error: a parameter (a type and a name: T x) expected "
            "near '3'");
  // Lines count: the column is on the parameter's own line.
  EXPECT_EQ(param_error("T x,\n  T y z"),
            "in_params of elementwise 'layer':2:7: syntax error: ',' expected between parameters near 'z'\n"
            "    T y z\n"
            "        ^");
  // The lexer's own errors keep the chunk name.
  EXPECT_EQ(first_line(param_error("T x, T \"y")),
            "in_params of elementwise 'layer':1:8: syntax error: unfinished string near <eof>");
  EXPECT_EQ(first_line(param_error("#T x")),
            "in_params of elementwise 'layer':1:1: syntax error: a parameter (a type and a name: T x) expected "
            "near '#'");
}

TEST(KindParams, NameErrors) {
  EXPECT_EQ(param_error("T x, T x"),
            "in_params of elementwise 'layer':1:8: name error: duplicate parameter 'x' (also at column 3)\n"
            "    T x, T x\n"
            "           ^");
  std::vector<KindParam> in = in_params("T x, T w");
  EXPECT_EQ(param_error("T z, T w", "out_params", false, &in),
            "out_params of elementwise 'layer':1:8: name error: duplicate parameter 'w': in_params has it too\n"
            "    T z, T w\n"
            "           ^");
  EXPECT_EQ(param_error("raw T z", "out_params", true),
            "out_params of reduction 'layer':1:1: syntax error: 'raw' is for in_params and an elementwise kernel's "
            "outputs: a reduction's outputs are written by post_map_expr, one element per reduced row\n"
            "    raw T z\n"
            "    ^~~");
  EXPECT_EQ(param_error("T x, int64 i"),
            "in_params of elementwise 'layer':1:12: name error: 'i' is a reserved name: i is the element index and "
            "n the size\n"
            "    T x, int64 i\n"
            "               ^");
  EXPECT_EQ(
      first_line(param_error("T n")),
      "in_params of elementwise 'layer':1:3: name error: 'n' is a reserved name: i is the element index and n the size");
  EXPECT_EQ(first_line(param_error("T luda")),
            "in_params of elementwise 'layer':1:3: name error: 'luda' is a reserved name: the generated code uses the "
            "luda namespace");
  EXPECT_EQ(param_error("T x, T a", "in_params", true),
            "in_params of reduction 'layer':1:8: name error: 'a' is a reserved name: a and b are the reduce "
            "expression's operands\n"
            "    T x, T a\n"
            "           ^");
  EXPECT_EQ(first_line(param_error("T _j", "out_params", true)),
            "out_params of reduction 'layer':1:3: name error: '_j' is a reserved name: _j is the index within the "
            "reduced axes");
  EXPECT_EQ(param_error("T end"),
            "in_params of elementwise 'layer':1:3: name error: 'end' is a Lua keyword: it cannot name a parameter\n"
            "    T end\n"
            "      ^~~");
}

// ---------------------------------------------------------------- elementwise

struct Kind {
  TestEnvironment env;
  Kind() {
    env.values["math"] = TestEnvironment::name_space("math");
    env.values["luda"] = TestEnvironment::name_space("luda");
  }
  DeviceFunction compile(const FunctionSource& f, std::vector<Type> params, std::string name = "fn") {
    DeviceFunctionRequest r;
    r.function = f;
    r.name = std::move(name);
    r.params = std::move(params);
    return compile_device_function(r, env);
  }
};

ElementwiseFunction layer(std::string_view body, std::string_view outs = "T z",
                          std::vector<Scalar> types = {Scalar::Float32, Scalar::Float32, Scalar::Float32,
                                                       Scalar::Float32}) {
  std::vector<KindParam> in = in_params("T x, T w, T b");
  std::vector<KindParam> out = parse_kind_params(outs, "out_params", "elementwise", "layer", false, &in);
  return elementwise_function(in, out, types, body, "layer");
}

TEST(ElementwiseFunction, TheGeneratedFunction) {
  ElementwiseFunction f = layer("z = x * w + b");
  EXPECT_EQ(f.out_read, std::vector<bool>{false});
  std::string head = "function(x, w, b, i, n) local z = luda.float32(0) do ";
  EXPECT_EQ(f.function.chunk->name, "elementwise 'layer'");
  EXPECT_EQ(f.function.chunk->text, head + "z = x * w + b\nend return z end");
  EXPECT_EQ(f.function.chunk->hidden_prefix, head.size());
  EXPECT_EQ(f.function.line_defined, 0);
  EXPECT_EQ(f.function.nparams, 5);

  Kind k;
  DeviceFunction d = k.compile(f.function, {f32(), f32(), f32(), i64(), i64()}, "layer");
  EXPECT_EQ(d.result, f32());
  EXPECT_TRUE(d.c_name.starts_with("layer_")) << d.c_name;
  EXPECT_NE(d.code.find("(float x, float w, float b, long long i, long long n) {"), std::string::npos) << d.code;
  EXPECT_NE(d.code.find("  float z = 0.0f;\n"), std::string::npos) << d.code;
  EXPECT_NE(d.code.find("#line 1 \"elementwise 'layer'\"\n    z = (x * w) + b;\n"), std::string::npos) << d.code;
  EXPECT_EQ(d.code.find("double"), std::string::npos) << d.code;
}

TEST(ElementwiseFunction, OutputsItNeedsArePassedIn) {
  EXPECT_EQ(layer("z = z + x").out_read, std::vector<bool>{true});
  EXPECT_EQ(layer("local t = x * w\nz = t + b").out_read, std::vector<bool>{false});
  // Maybe never assigned: the output keeps its value, so it comes in.
  EXPECT_EQ(layer("if x > 0 then z = x end").out_read, std::vector<bool>{true});
  EXPECT_EQ(layer("local t = 1").out_read, std::vector<bool>{true});
  // A read after the assignment is of the new value.
  EXPECT_EQ(layer("z = x\nz = z * 2").out_read, std::vector<bool>{false});

  ElementwiseFunction two = layer("z = z + x\nc = x > w", "T z, bool c",
                                  {Scalar::Float32, Scalar::Float32, Scalar::Float32, Scalar::Float32, Scalar::Bool});
  EXPECT_EQ(two.out_read, (std::vector<bool>{true, false}));
  EXPECT_EQ(two.function.chunk->text,
            "function(x, w, b, z, i, n) local c = false do z = z + x\nc = x > w\nend return z, c end");
  Kind k;
  DeviceFunction d = k.compile(two.function, {f32(), f32(), f32(), f32(), i64(), i64()});
  ASSERT_EQ(d.result.kind, Type::Kind::Tuple);
  EXPECT_EQ(d.result.elements, (std::vector<Type>{f32(), Type::scalar_of(Scalar::Bool)}));
}

TEST(ElementwiseFunction, TypeErrorsPointIntoTheBody) {
  Kind k;
  std::vector<Type> params = {f32(), f32(), f32(), i64(), i64()};
  // Line 1: the hidden head does not shift the column or show in the source line.
  EXPECT_EQ(error_of([&] { k.compile(layer("z = x + true").function, params); }),
            "elementwise 'layer':1:7: type error: cannot apply '+' to float32 and bool\n"
            "    z = x + true\n"
            "        ~~^~~~~~");
  EXPECT_EQ(error_of([&] { k.compile(layer("local t = x * w\nz = t + (x > 0)").function, params); }),
            "elementwise 'layer':2:7: type error: cannot apply '+' to float32 and bool\n"
            "    z = t + (x > 0)\n"
            "        ~~^~~~~~~~~");
  EXPECT_EQ(error_of([&] { k.compile(layer("z = y").function, params); }),
            "elementwise 'layer':1:5: name error: unknown name 'y'\n"
            "    z = y\n"
            "        ^");
}

TEST(ElementwiseFunction, BodyErrors) {
  EXPECT_EQ(error_of([] { layer("z = x *"); }), "elementwise 'layer':1:8: syntax error: unexpected symbol near <eof>\n"
                                                "    z = x *\n"
                                                "           ^");
  EXPECT_EQ(error_of([] { layer("z = x\nreturn z"); }),
            "elementwise 'layer':2:1: unsupported: a kernel body assigns its outputs and does not return: write z = "
            "...\n"
            "    return z\n"
            "    ^~~~~~~~");
  // A trailing comment cannot swallow the generated end.
  Kind k;
  DeviceFunction d = k.compile(layer("z = x -- the input\n").function, {f32(), f32(), f32(), i64(), i64()});
  EXPECT_EQ(d.result, f32());
}

// ---------------------------------------------------------------- reduction

struct Dnn {
  std::vector<KindParam> in = in_params("T x, T w, T bias", true);
  std::vector<KindParam> out = parse_kind_params("T z", "out_params", "reduction", "dnn", true, &in);
  std::vector<Scalar> types = {Scalar::Float32, Scalar::Float32, Scalar::Float32, Scalar::Float32};
  ReductionFunctions make(std::string_view map = "x * w", std::string_view reduce = "a + b",
                          std::string_view post = "z = a + bias", std::string_view identity = "0",
                          Scalar reduce_type = Scalar::Float32) {
    return reduction_functions(in, out, types, reduce_type, {false, false, true}, map, reduce, post, identity, "dnn");
  }
};

TEST(ReductionFunctions, TheFourFunctions) {
  Dnn dnn;
  ReductionFunctions r = dnn.make();
  EXPECT_EQ(r.post_inputs, std::vector<int>{2});
  EXPECT_EQ(r.map.chunk->name, "reduction 'dnn' map");
  EXPECT_EQ(r.map.chunk->text, "function(x, w, bias, _j) return luda.float32(x * w\n) end");
  EXPECT_EQ(r.map.nparams, 4);
  EXPECT_EQ(r.reduce.chunk->name, "reduction 'dnn' reduce");
  EXPECT_EQ(r.reduce.chunk->text, "function(a, b) return luda.float32(a + b\n) end");
  EXPECT_EQ(r.post.chunk->name, "reduction 'dnn' post");
  EXPECT_EQ(r.post.chunk->text, "function(a, bias) local z = luda.float32(0) do z = a + bias\nend return z end");
  EXPECT_EQ(r.post.nparams, 2);
  EXPECT_EQ(r.identity.chunk->name, "reduction 'dnn' identity");
  EXPECT_EQ(r.identity.chunk->text, "function() return luda.float32(0\n) end");
  EXPECT_EQ(r.identity.nparams, 0);

  Kind k;
  EXPECT_EQ(k.compile(r.map, {f32(), f32(), f32(), i64()}).result, f32());
  EXPECT_EQ(k.compile(r.reduce, {f32(), f32()}).result, f32());
  EXPECT_EQ(k.compile(r.post, {f32(), f32()}).result, f32());
  DeviceFunction identity = k.compile(r.identity, {});
  EXPECT_EQ(identity.result, f32());
  EXPECT_NE(identity.code.find("return 0.0f;"), std::string::npos) << identity.code;
  // A wider reduce type: the map's float32 value is converted once, at the end.
  ReductionFunctions wide = dnn.make("x * w", "a + b", "z = a + bias", "0", Scalar::Float64);
  DeviceFunction map = k.compile(wide.map, {f32(), f32(), f32(), i64()});
  EXPECT_EQ(map.result, f64());
  EXPECT_NE(map.code.find("return (double)(x * w);"), std::string::npos) << map.code;
  // bool: no conversion.
  ReductionFunctions any = dnn.make("x > w", "a or b", "z = a", "false", Scalar::Bool);
  EXPECT_EQ(any.map.chunk->text, "function(x, w, bias, _j) return (x > w\n) end");
  EXPECT_EQ(k.compile(any.reduce, {Type::scalar_of(Scalar::Bool), Type::scalar_of(Scalar::Bool)}).result,
            Type::scalar_of(Scalar::Bool));
}

TEST(ReductionFunctions, ErrorsPointIntoTheStrings) {
  Dnn dnn;
  Kind k;
  ReductionFunctions r = dnn.make("x * (w > 0)");
  EXPECT_EQ(error_of([&] {
              k.compile(r.map, {f32(), f32(), f32(), i64()});
            }),
            "reduction 'dnn' map:1:3: type error: cannot apply '*' to float32 and bool\n"
            "    x * (w > 0)\n"
            "    ~~^~~~~~~~~");
  EXPECT_EQ(error_of([&] { dnn.make("x *"); }), "reduction 'dnn' map:1:4: syntax error: unexpected symbol near <eof>\n"
                                                "    x *\n"
                                                "       ^");
  EXPECT_EQ(error_of([&] { dnn.make("x * w", "a, b"); }),
            "reduction 'dnn' reduce:1:4: syntax error: one expression expected, got 2\n"
            "    a, b\n"
            "       ^");
  EXPECT_EQ(error_of([&] { dnn.make("x * w", "a + b", "z = a", " "); }),
            "reduction 'dnn' identity:1:1: syntax error: an expression expected, got an empty string");
  EXPECT_EQ(error_of([&] { dnn.make("x * w", "a + b", "z = a +"); }),
            "reduction 'dnn' post:1:8: syntax error: unexpected symbol near <eof>\n"
            "    z = a +\n"
            "           ^");
  // post sees the scalar inputs only: x is the reduced array.
  ReductionFunctions uses_x = dnn.make("x * w", "a + b", "z = a + x");
  EXPECT_EQ(error_of([&] {
              k.compile(uses_x.post, {f32(), f32()});
            }),
            "reduction 'dnn' post:1:9: name error: unknown name 'x'\n"
            "    z = a + x\n"
            "            ^");
}

// ---------------------------------------------------------------- fuse

FunctionSource fuse_source(std::string text) {
  FunctionSource f;
  f.chunk = std::make_shared<const Chunk>(Chunk{"fused.lua", std::move(text)});
  return f;
}

TEST(AnalyzeFuse, Shapes) {
  FuseShape e = analyze_fuse(fuse_source("function(x, w, b) return x * w + b end"));
  EXPECT_FALSE(e.reduction);
  FuseShape s = analyze_fuse(fuse_source("function(x, w)\n  local t = x * w\n  return luda.sum(t)\nend"));
  EXPECT_TRUE(s.reduction);
  EXPECT_EQ(s.ops, std::vector<std::string>{"sum"});
  EXPECT_EQ(s.post_text, "");  // one bare reduction: its value is the output
  EXPECT_FALSE(s.axis_given);
  EXPECT_TRUE(s.axes.empty());
  FuseShape m = analyze_fuse(fuse_source("function(x) return luda.max(x * 2, -1) end"));
  EXPECT_EQ(m.ops, std::vector<std::string>{"max"});
  EXPECT_TRUE(m.axis_given);
  EXPECT_EQ(m.axes, std::vector<int>{-1});
  FuseShape p = analyze_fuse(fuse_source("function(x) return luda.prod(x, {1, 3}) end"));
  EXPECT_EQ(p.ops, std::vector<std::string>{"prod"});
  EXPECT_EQ(p.axes, (std::vector<int>{1, 3}));
  EXPECT_EQ(analyze_fuse(fuse_source("function(x) return luda.min(x, 2) end")).axes, std::vector<int>{2});
}

// Several reductions and work after them: the post text keeps the user's lines and
// columns, each reduction a name as long as the call or shorter.
TEST(AnalyzeFuse, SeveralReductionsAndTheWorkAfterThem) {
  FuseShape w = analyze_fuse(fuse_source("function(x, y)\n  return luda.sum(x * y, 2) /\n    luda.sum(y, 2), k\nend"));
  EXPECT_EQ(w.ops, (std::vector<std::string>{"sum", "sum"}));
  EXPECT_EQ(w.axes, std::vector<int>{2});
  EXPECT_EQ(w.nresults, 2);
  EXPECT_EQ(w.post_text, "\n         luda_r1            /\n    luda_r2       , k\nend");
  FunctionSource post = fuse_post_function(fuse_source("function(x, y) end"), w, {"k"});
  EXPECT_EQ(post.chunk->name, "fused.lua");
  EXPECT_EQ(post.chunk->text, "function(luda_r1, luda_r2, k) return " + w.post_text);
  EXPECT_EQ(post.chunk->hidden_prefix, std::string("function(luda_r1, luda_r2, k) return ").size());
  FuseShape two = analyze_fuse(fuse_source("function(x) return luda.max(x), luda.min(x) end"));
  EXPECT_EQ(two.ops, (std::vector<std::string>{"max", "min"}));
  EXPECT_EQ(two.post_text, "                   luda_r1    , luda_r2    \nend");
}

// The parameters the work after the reductions reads decide, at the call, whether it
// needs a second pass; the second pass is the whole function with each reduction a name.
TEST(AnalyzeFuse, TheSecondPassFunction) {
  FunctionSource f = fuse_source(
      "function(x, k)\n  local y = x * 2\n  return x - luda.max(y) * k, luda.sum(y) + 1\nend");
  FuseShape s = analyze_fuse(f);
  EXPECT_EQ(s.post_params, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.value_params, (std::vector<std::vector<int>>{{0, 1}, {}}));
  EXPECT_EQ(s.body_text, "              \n  local y = x * 2\n  return x - luda_r1     * k, luda_r2     + 1\nend");
  FunctionSource second = fuse_second_pass_function(f, s, {"x", "k"});
  EXPECT_EQ(second.chunk->text, "function(x, k, luda_r1, luda_r2) " + s.body_text);
  EXPECT_EQ(second.chunk->hidden_prefix, std::string("function(x, k, luda_r1, luda_r2) ").size());
  EXPECT_EQ(second.nparams, 4);
  // a function on a later line of its chunk keeps its lines
  FunctionSource in_chunk = fuse_source("local f = 1\nreturn function(x) return x / luda.sum(x) end");
  in_chunk.line_defined = in_chunk.last_line_defined = 2;
  FuseShape later = analyze_fuse(in_chunk);
  EXPECT_EQ(later.body_text, "\n                   return x / luda_r1     end");
}

TEST(AnalyzeFuse, Errors) {
  auto fuse_error = [](std::string text) { return error_of([&] { analyze_fuse(fuse_source(std::move(text))); }); };
  EXPECT_EQ(fuse_error("function(x)\n  local s = luda.sum(x)\n  return s * 2\nend"),
            "fused.lua:2:13: unsupported: luda.sum in a fused function must be in its final return: return "
            "luda.sum(expr, axis), or elementwise work on reductions (elementwise work first, then the reductions)\n"
            "    local s = luda.sum(x)\n"
            "              ^~~~~~~~~~~");
  EXPECT_EQ(first_line(fuse_error("function(x) if x > 0 then return luda.sum(x) end return luda.sum(x) end")),
            "fused.lua:1:34: unsupported: luda.sum in a fused function must be in its final return: return "
            "luda.sum(expr, axis), or elementwise work on reductions (elementwise work first, then the reductions)");
  analyze_fuse(fuse_source("function(x) return luda.sum(x, 1) - luda.max(x, {1}) end"));  // the same axis
  EXPECT_EQ(fuse_error("function(x) return luda.sum(x, 1) - luda.max(x, {1, 2}) end"),
            "fused.lua:1:37: unsupported: the reductions of a fused function reduce the same axes: this luda.max has "
            "axes {1, 2}, the luda.sum at 1:20 has axis 1; use one fused function per axis\n"
            "    function(x) return luda.sum(x, 1) - luda.max(x, {1, 2}) end\n"
            "                                        ^~~~~~~~~~~~~~~~~~~");
  EXPECT_EQ(first_line(fuse_error("function(x) return luda.sum(x) / luda.sum(x, -1) end")),
            "fused.lua:1:34: unsupported: the reductions of a fused function reduce the same axes: this luda.sum has "
            "axis -1, the luda.sum at 1:20 has no axis (all of them); use one fused function per axis");
  EXPECT_EQ(fuse_error("function(x) return luda.sum(x - luda.max(x)) end"),
            "fused.lua:1:33: unsupported: luda.max inside the argument of another reduction needs two passes over the "
            "array; fuse the inner reduction alone and pass its value to a second fused function\n"
            "    function(x) return luda.sum(x - luda.max(x)) end\n"
            "                                    ^~~~~~~~~~~");
  EXPECT_EQ(fuse_error("function(x)\n  local d = x * 2\n  return luda.sum(d) + d\nend"),
            "fused.lua:3:24: unsupported: 'd' is a local of the fused function, used after its reductions; write its "
            "expression there instead (whether the work after the reductions is per element, and so a second pass, "
            "is read from the parameters it uses)\n"
            "    return luda.sum(d) + d\n"
            "                         ^");
  std::string many = "function(x) return luda.sum(x)";
  for (int k = 1; k <= kMaxFusedReductions; ++k) many += " + luda.sum(x)";
  EXPECT_EQ(first_line(fuse_error(many + " end")),
            "fused.lua:1:244: unsupported: a fused function carries at most 16 reductions; split it into two");
  EXPECT_EQ(fuse_error("function(x, k) return luda.sum(x, k) end"),
            "fused.lua:1:35: type error: the axis of a fused luda.sum must be a literal integer or a table of them "
            "({1, 2}), known when the function is compiled\n"
            "    function(x, k) return luda.sum(x, k) end\n"
            "                                      ^");
  EXPECT_EQ(first_line(fuse_error("function(x) return luda.sum(x, {1, 0}) end")),
            "fused.lua:1:36: type error: there is no axis 0: axes are 1-based (1 the first, -1 the last)");
  EXPECT_EQ(first_line(fuse_error("function(x) return luda.max(x, 1, true) end")),
            "fused.lua:1:28: type error: a fused luda.max takes an expression and an optional axis, got 3 arguments");
}

TEST(AnalyzeFuse, TheFusedFunctionCompilesToItsElementValue) {
  FunctionSource f = fuse_source("function(x, w) return luda.sum(x * w, -1) end");
  Kind k;
  DeviceFunctionRequest r;
  r.function = f;
  r.name = "dot";
  r.params = {f32(), f32()};
  r.fuse_reduction_as_value = true;
  DeviceFunction d = compile_device_function(r, k.env);
  EXPECT_EQ(d.result, f32());
  EXPECT_NE(d.code.find("return x * w;"), std::string::npos) << d.code;
}

}  // namespace
}  // namespace luda::dsl

// CUDA emission details (the golden files show whole kernels).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dsl/codegen_cuda.h"
#include "tests/dsl/test_environment.h"

namespace luda::dsl {
namespace {

using namespace luda::dsl::testing;

TEST(Codegen, Literals) {
  EXPECT_EQ(cuda_literal(Constant::of_float(0.5), Scalar::Float32), "0.5f");
  EXPECT_EQ(cuda_literal(Constant::of_float(2), Scalar::Float64), "2.0");
  EXPECT_EQ(cuda_literal(Constant::of_float(-0.5), Scalar::Float32), "(-0.5f)");
  EXPECT_EQ(cuda_literal(Constant::of_float(0.1), Scalar::Float32), "0.1f");
  EXPECT_EQ(cuda_literal(Constant::of_float(std::numeric_limits<double>::infinity()), Scalar::Float32),
            "__int_as_float(0x7f800000)");
  EXPECT_EQ(cuda_literal(Constant::of_int(3), Scalar::Int64), "3LL");
  EXPECT_EQ(cuda_literal(Constant::of_int(-3), Scalar::Int32), "(-3)");
  EXPECT_EQ(cuda_literal(Constant::of_int(INT64_MIN), Scalar::Int64), "(-9223372036854775807LL - 1)");
  EXPECT_EQ(cuda_literal(Constant::of_int(-1), Scalar::UInt64), "18446744073709551615ull");
  EXPECT_EQ(cuda_literal(Constant::of_int(7), Scalar::UInt8), "((unsigned char)7)");
  EXPECT_EQ(cuda_literal(Constant::of_bool(true), Scalar::Bool), "true");
}

TEST(Codegen, LineDirectivesNameTheChunk) {
  TestChunk c("local function k(x)\n  x[0] = 1\nend\n", "dir/my \"file\".lua");
  std::string code = c.compile("k", {arr(Scalar::Float32)}).code;
  EXPECT_NE(code.find("#line 2 \"dir/my \\\"file\\\".lua\"\n  x.data[0LL * x.strides[0]] = 1.0f;"), std::string::npos)
      << code;
}

TEST(Codegen, ShadowingLocalsAndReservedNamesAreRenamed) {
  TestChunk c("local function k(x)\n  local float = x[0]\n  local float = float + 1\n  x[0] = float\nend\n");
  std::string code = c.compile("k", {arr(Scalar::Float32)}).code;
  EXPECT_NE(code.find("float float_ = x.data[0LL * x.strides[0]];"), std::string::npos) << code;
  EXPECT_NE(code.find("float float_2 = float_ + 1.0f;"), std::string::npos) << code;
}

TEST(Codegen, EntryNameIsLuaNamePlusSignatureHash) {
  TestChunk c("local function k(x)\n  x[0] = 1\nend\n");
  CudaKernel a = c.compile("k", {arr(Scalar::Float32)});
  CudaKernel b = c.compile("k", {arr(Scalar::Float64)});
  CudaKernel a2 = c.compile("k", {arr(Scalar::Float32)});
  CudaKernel checked = c.compile("k", {arr(Scalar::Float32)}, {.boundscheck = true});
  EXPECT_EQ(a.entry.rfind("k_", 0), 0u);
  EXPECT_EQ(a.entry.size(), 10u);
  EXPECT_NE(a.entry, b.entry);
  EXPECT_EQ(a.entry, a2.entry);
  EXPECT_EQ(a.code, a2.code);
  EXPECT_NE(a.entry, checked.entry);
  EXPECT_TRUE(checked.bounds_record);
  EXPECT_NE(checked.code.find("luda_BoundsRecord* luda_bounds"), std::string::npos);
}

// A declared CUDA C++ function: its prototype from the signature, then the linked source,
// then the generated code, which calls it with each argument converted to its parameter.
TEST(Codegen, DeclaredFunctionsComeWithTheirPrototypesAndLinkedSources) {
  TestChunk c("local function k(x, n)\n  x[0] = mul_add(x[1], 2, n)\nend\n");
  auto d = std::make_shared<DeclaredFunction>();
  d->name = "mul_add";
  d->result = f32();
  d->params = {f32(), f32(), i32()};
  ExternalValue e;
  e.kind = ExternalValue::Kind::Declared;
  e.declared = d;
  c.env.values["mul_add"] = e;
  auto linked = std::make_shared<const Chunk>(
      Chunk{"mul.cu", "extern \"C\" __device__ float mul_add(float a, float b, int c) { return a * b + c; }", 0, true});
  KernelRequest r = c.request("k", {arr(Scalar::Float32), i64()});
  r.link = {linked};
  CudaKernel cuda = compile_kernel(r, c.env);
  std::string prototype = "extern \"C\" __device__ float mul_add(float, float, int);\n";
  EXPECT_EQ(cuda.declarations, "#line 1 \"luda_declared\"\n" + prototype);
  std::size_t at = cuda.code.find(prototype);
  ASSERT_NE(at, std::string::npos) << cuda.code;
  EXPECT_EQ(cuda.code.find("#line 1 \"mul.cu\"\n" + linked->text + "\n#line 1 \"luda_generated\"\n"),
            at + prototype.size())
      << cuda.code;
  EXPECT_NE(cuda.code.find("= mul_add(x.data[1LL * x.strides[0]], 2.0f, (int)(n));"), std::string::npos) << cuda.code;
  ASSERT_EQ(cuda.link.size(), 1u);
  // The cpu target: jit/ puts the prototypes and the sources after its own prelude.
  r.options.target = Target::Cpu;
  CudaKernel cpu = compile_kernel(r, c.env);
  EXPECT_EQ(cpu.declarations, cuda.declarations);
  EXPECT_EQ(cpu.code.find("mul.cu"), std::string::npos);
  EXPECT_EQ(cpu.link, cuda.link);
}

TEST(Codegen, OptionsGiveTheNvrtcFlagsTheCodeNeeds) {
  TestChunk c("local function k(x)\n  x[0] = 1\nend\n");
  EXPECT_EQ(c.compile("k", {arr(Scalar::Float32)}).nvrtc_options, std::vector<std::string>{});
  EXPECT_EQ(c.compile("k", {arr(Scalar::Float32)}, {.fastmath = true, .debug = true}).nvrtc_options,
            (std::vector<std::string>{"--use_fast_math", "-G"}));
}

TEST(Codegen, NoaliasRestrictsArrayPointersConstWhereOnlyRead) {
  TestChunk c("local function add(x, y, out)\n  local i = cuda.grid(1)\n  out[i] = x[i] + y[i]\nend\n");
  std::vector<Type> args = {arr(Scalar::Float32), arr(Scalar::Float32), arr(Scalar::Float32)};
  std::string plain = c.compile("add", args).code;
  EXPECT_EQ(plain.find("__restrict__"), std::string::npos) << plain;
  CudaKernel k = c.compile("add", args, {.noalias = true});
  EXPECT_NE(k.code.find("const float* __restrict__ const x_data = x.data;"), std::string::npos) << k.code;
  EXPECT_NE(k.code.find("const float* __restrict__ const y_data = y.data;"), std::string::npos) << k.code;
  EXPECT_NE(k.code.find("\n  float* __restrict__ const out_data = out.data;"), std::string::npos) << k.code;
  EXPECT_NE(k.code.find("out_data[i * out.strides[0]] = x_data[i * x.strides[0]] + y_data[i * y.strides[0]];"),
            std::string::npos)
      << k.code;
  EXPECT_NE(k.entry, c.compile("add", args).entry);  // its own specialization
}

TEST(Codegen, NoaliasLeavesArraysGivenToCallsAndArrayLocalsAlone) {
  TestChunk atomics("local function h(bins, x)\n  local i = cuda.grid(1)\n  cuda.atomic.add(bins, x[i], 1)\nend\n");
  std::string code = atomics.compile("h", {arr(Scalar::Int32), arr(Scalar::Int32)}, {.noalias = true}).code;
  EXPECT_EQ(code.find("bins_data"), std::string::npos) << code;  // through the struct, unrestricted
  EXPECT_NE(code.find("const int* __restrict__ const x_data = x.data;"), std::string::npos) << code;
  TestChunk local("local function k(x, out)\n  local y = x\n  out[0] = y[0]\nend\n");
  code = local.compile("k", {arr(Scalar::Float32), arr(Scalar::Float32)}, {.noalias = true}).code;
  EXPECT_EQ(code.find("__restrict__"), std::string::npos) << code;  // y could be either
}

TEST(Codegen, SwapEvaluatesValuesFirst) {
  TestChunk c("local function k(x)\n  local a, b = x[0], x[1]\n  a, b = b, a\n  x[0] = a\nend\n");
  std::string code = c.compile("k", {arr(Scalar::Float32)}).code;
  EXPECT_NE(code.find("float luda_v1 = b;\n  float luda_v2 = a;\n  a = luda_v1;\n  b = luda_v2;"), std::string::npos)
      << code;
}

}  // namespace
}  // namespace luda::dsl

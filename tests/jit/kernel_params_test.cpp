// Reading kernel parameter lists from CUDA C++ source.
#include "jit/kernel_params.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace luda::jit {
namespace {

using Kind = ParamType::Kind;

// "name:kind:dtype:const:spelling" per parameter, so a whole list compares in one line.
std::vector<std::string> summary(const KernelSignature& s) {
  std::vector<std::string> out;
  for (const auto& p : s.params) {
    std::string kind = p.type.kind == Kind::Pointer ? "ptr" : p.type.kind == Kind::Scalar ? "scalar" : "opaque";
    std::string dt = p.type.dtype ? std::string(dtype_name(*p.type.dtype)) : "-";
    out.push_back(p.name + ":" + kind + ":" + dt + ":" + (p.type.is_const ? "const" : "mut") + ":" +
                  p.type.spelling);
  }
  return out;
}

std::vector<std::string> params_of(std::string_view src, std::string_view name) {
  auto sig = find_kernel_signature(src, name);
  EXPECT_TRUE(sig.has_value()) << src;
  return sig ? summary(*sig) : std::vector<std::string>{};
}

TEST(KernelParams, CupyAddFunc) {
  const char* src = R"(
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
)";
  auto sig = find_kernel_signature(src, "my_add");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->name, "my_add");
  EXPECT_TRUE(sig->extern_c);
  EXPECT_EQ(summary(*sig), (std::vector<std::string>{"x1:ptr:float32:const:const float*",
                                                     "x2:ptr:float32:const:const float*",
                                                     "y:ptr:float32:mut:float*"}));
}

TEST(KernelParams, ConstPlacementAndRestrict) {
  const char* src =
      "extern \"C\" __global__ void k(float const *a, float * const b, const double* __restrict__ c,"
      " int *__restrict d, volatile unsigned char* e) {}";
  EXPECT_EQ(params_of(src, "k"), (std::vector<std::string>{
                                     "a:ptr:float32:const:float const*",
                                     "b:ptr:float32:mut:float* const",
                                     "c:ptr:float64:const:const double* __restrict__",
                                     "d:ptr:int32:mut:int* __restrict",
                                     "e:ptr:uint8:mut:volatile unsigned char*"}));
}

TEST(KernelParams, ScalarSpellings) {
  const char* src = R"(extern "C" __global__ void k(
      int a, long b, long long c, int64_t d, ptrdiff_t e, size_t f, unsigned long g,
      char h, unsigned char i, signed char j, bool k2, float l, double m, short n,
      unsigned short o, unsigned p, unsigned int q, uint32_t r, std::size_t s,
      long int t, unsigned long long int u, const int v, int8_t w, uint16_t x) {})";
  auto sig = find_kernel_signature(src, "k");
  ASSERT_TRUE(sig);
  std::vector<std::string> got;
  for (const auto& p : sig->params) {
    ASSERT_EQ(p.type.kind, Kind::Scalar) << p.name;
    got.push_back(p.name + "=" + std::string(dtype_name(*p.type.dtype)));
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "a=int32", "b=int64", "c=int64", "d=int64", "e=int64", "f=uint64",
                     "g=uint64", "h=int8", "i=uint8", "j=int8", "k2=bool", "l=float32",
                     "m=float64", "n=int16", "o=uint16", "p=uint32", "q=uint32", "r=uint32",
                     "s=uint64", "t=int64", "u=uint64", "v=int32", "w=int8", "x=uint16"}));
  EXPECT_EQ(sig->params[18].type.spelling, "size_t");
  EXPECT_EQ(sig->params[21].type.spelling, "const int");
}

TEST(KernelParams, UnnamedArraysVoidAndOpaque) {
  const char* src = R"(
#include <cuda_fp16.h>
struct Params { float a; int b; };
extern "C" __global__ void k(float*, int, void* p, __half h, Params q, float2 v, float arr[],
                             double** pp, struct Params* sp, unsigned long) {}
)";
  EXPECT_EQ(params_of(src, "k"), (std::vector<std::string>{
                                     ":ptr:float32:mut:float*", ":scalar:int32:mut:int",
                                     "p:ptr:-:mut:void*", "h:opaque:-:mut:__half",
                                     "q:opaque:-:mut:Params", "v:opaque:-:mut:float2",
                                     "arr:ptr:float32:mut:float*", "pp:ptr:-:mut:double**",
                                     "sp:ptr:-:mut:struct Params*",
                                     ":scalar:uint64:mut:unsigned long"}));
}

TEST(KernelParams, EmptyAndVoidLists) {
  auto a = find_kernel_signature("extern \"C\" __global__ void a() {}", "a");
  auto b = find_kernel_signature("extern \"C\" __global__ void b(void) {}", "b");
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(a->params.empty());
  EXPECT_TRUE(b->params.empty());
}

TEST(KernelParams, LaunchBoundsAttributesAndDefaults) {
  const char* src = R"(
extern "C" __global__ void __launch_bounds__(256, 2) lb(float* x, int n = 4) { }
extern "C" __global__ __launch_bounds__(128) void lb2(const float* __restrict__ x) { }
)";
  EXPECT_EQ(params_of(src, "lb"),
            (std::vector<std::string>{"x:ptr:float32:mut:float*", "n:scalar:int32:mut:int"}));
  EXPECT_EQ(params_of(src, "lb2"),
            (std::vector<std::string>{"x:ptr:float32:const:const float* __restrict__"}));
}

TEST(KernelParams, SkipsCommentsStringsCharsAndPreprocessor) {
  const char* src = R"(
// __global__ void fake1(int a) {}
/* __global__ void fake2(int a) {} */
#define WRAP(x) __global__ void fake3(x) {}
#if 0
#endif
const char* s = "__global__ void fake4(int) {}";
const char c = '{';
const char* r = R"x(__global__ void fake5(double d) { )x";
extern "C" __global__ void real(/* the data */ float* x, // count
                                int n) { }
)";
  EXPECT_EQ(list_kernels(src), (std::vector<std::string>{"real"}));
  EXPECT_EQ(params_of(src, "real"),
            (std::vector<std::string>{"x:ptr:float32:mut:float*", "n:scalar:int32:mut:int"}));
}

TEST(KernelParams, ExternCBlockAndCxxKernels) {
  const char* src = R"(
extern "C" {
__global__ void in_block(float* x) {}
}
__global__ void cxx_kernel(float* x, int n) {}
static __global__ void cxx_static(double* y) {}
extern "C" __global__ void declared_first(int n);
__global__ void declared_first(int n) {}
)";
  auto defs = find_kernels(src);
  ASSERT_EQ(defs.size(), 4u);
  EXPECT_EQ(defs[0].name, "in_block");
  EXPECT_TRUE(defs[0].extern_c);
  EXPECT_EQ(defs[1].name, "cxx_kernel");
  EXPECT_FALSE(defs[1].extern_c);
  EXPECT_FALSE(defs[2].extern_c);
  EXPECT_EQ(defs[3].name, "declared_first");
  EXPECT_TRUE(defs[3].extern_c);  // linkage from the earlier declaration
  auto sig = find_kernel_signature(src, "cxx_kernel");
  ASSERT_TRUE(sig);
  EXPECT_FALSE(sig->extern_c);
  EXPECT_EQ(summary(*sig),
            (std::vector<std::string>{"x:ptr:float32:mut:float*", "n:scalar:int32:mut:int"}));
}

TEST(KernelParams, SeveralKernelsListedInOrder) {
  const char* src = R"(
extern "C"{
__global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {}
__global__ void test_multiply(const float* x1, const float* x2, float* y, unsigned int N) {}
}
template <typename T> __global__ void tmpl(T* x) {}
)";
  EXPECT_EQ(list_kernels(src), (std::vector<std::string>{"test_sum", "test_multiply", "tmpl"}));
  EXPECT_EQ(params_of(src, "test_multiply").back(), "N:scalar:uint32:mut:unsigned int");
}

TEST(KernelParams, TemplatesMacrosAndUnknownTypesGiveNullopt) {
  const char* src = R"(
template <typename T> __global__ void tmpl(T* x, int n) {}
__global__ void macro_list(ARGS) {}
__global__ void unknown_type(mystery_t n) {}
__global__ void ref(float& x) {}
__global__ void fnptr(void (*f)(int)) {}
__global__ void over(int a) {}
__global__ void over(float a) {}
__global__ void declared_only(int a);
)";
  for (const char* name : {"tmpl", "macro_list", "unknown_type", "ref", "fnptr", "over",
                           "declared_only", "absent"})
    EXPECT_FALSE(find_kernel_signature(src, name).has_value()) << name;
  auto defs = find_kernels(src);
  ASSERT_FALSE(defs.empty());
  EXPECT_TRUE(defs[0].is_template);
  EXPECT_FALSE(defs[1].is_template);
}

TEST(KernelParams, TypedefsUsingAndObjectMacrosResolve) {
  const char* src = R"(
typedef float real;
using index_t = long long;
#define COUNT_T unsigned int
#define PAIR(a) a
extern "C" __global__ void k(real* x, real s, index_t n, COUNT_T c) {}
extern "C" __global__ void f(PAIR(int) n) {}
)";
  EXPECT_EQ(params_of(src, "k"),
            (std::vector<std::string>{"x:ptr:float32:mut:real*", "s:scalar:float32:mut:real",
                                      "n:scalar:int64:mut:index_t",
                                      "c:scalar:uint32:mut:unsigned int"}));
  EXPECT_FALSE(find_kernel_signature(src, "f").has_value());  // function-like macro
}

// Macros that multiply at every level (each of A..H stands for 1000 of the next) would
// expand to 10^24 tokens: the expansion stops at a bound and the list is unreadable.
TEST(KernelParams, MacrosThatExpandWithoutBoundAreCapped) {
  std::string src;
  for (char c = 'A'; c < 'I'; ++c) {
    src += fmt::format("#define {}", c);
    for (int i = 0; i < 1000; ++i) src += fmt::format(" {}", static_cast<char>(c + 1));
    src += '\n';
  }
  src += "#define WIDE unsigned long long\n";
  src += "extern \"C\" __global__ void k(A x) {}\nextern \"C\" __global__ void w(WIDE n) {}\n";
  EXPECT_FALSE(find_kernel_signature(src, "k").has_value());
  EXPECT_EQ(params_of(src, "w"), (std::vector<std::string>{"n:scalar:uint64:mut:unsigned long long"}));
  EXPECT_EQ(list_kernels(src), (std::vector<std::string>{"k", "w"}));
}

TEST(KernelParams, NoKernels) {
  EXPECT_TRUE(list_kernels("int main() { return 0; }").empty());
  EXPECT_TRUE(list_kernels("").empty());
  EXPECT_TRUE(list_kernels("__global__ void broken(").empty());
}

}  // namespace
}  // namespace luda::jit

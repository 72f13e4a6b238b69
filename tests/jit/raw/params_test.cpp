// What the text of a CUDA C++ source shows of its kernels: definitions and parameter names.
#include "jit/raw/params.h"

#include <gtest/gtest.h>

#include <chrono>

namespace luda::jit {
namespace {

std::vector<std::string> names_of(std::string_view src, std::string_view name) {
  auto names = find_parameter_names(src, name);
  EXPECT_TRUE(names.has_value()) << src;
  return names ? *names : std::vector<std::string>{};
}

TEST(KernelParams, CupyAddFunc) {
  const char* src = R"(
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
)";
  EXPECT_EQ(names_of(src, "my_add"), (std::vector<std::string>{"x1", "x2", "y"}));
  auto defs = find_kernels(src);
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_TRUE(defs[0].extern_c);
}

// The names only: the types are the compiler's (kernel_reflection_test.cpp).
TEST(KernelParams, NamesWhateverTheTypes) {
  const char* src =
      "extern \"C\" __global__ void k(float const *a, float * const b, const double* __restrict__ c,"
      " int *__restrict d, volatile unsigned char* e, T f, std::size_t g, unsigned long, float*, float arr[],"
      " int n = 4, mystery_t m, struct P* sp, Pair<int, 3> q, void (*fn)(int)) {}";
  EXPECT_EQ(names_of(src, "k"),
            (std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g", "", "", "arr", "n", "m", "sp", "q", ""}));
  EXPECT_EQ(names_of("extern \"C\" __global__ void k(T) {}", "k"), (std::vector<std::string>{""}));
  EXPECT_TRUE(names_of("extern \"C\" __global__ void a() {}", "a").empty());
  EXPECT_TRUE(names_of("extern \"C\" __global__ void b(void) {}", "b").empty());
}

TEST(KernelParams, LaunchBoundsAttributesAndDefaults) {
  const char* src = R"(
extern "C" __global__ void __launch_bounds__(256, 2) lb(float* x, int n = 4) { }
extern "C" __global__ __launch_bounds__(128) void lb2(const float* __restrict__ x) { }
)";
  EXPECT_EQ(names_of(src, "lb"), (std::vector<std::string>{"x", "n"}));
  EXPECT_EQ(names_of(src, "lb2"), (std::vector<std::string>{"x"}));
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
  EXPECT_EQ(names_of(src, "real"), (std::vector<std::string>{"x", "n"}));
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
  EXPECT_EQ(names_of(src, "cxx_kernel"), (std::vector<std::string>{"x", "n"}));
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
  EXPECT_EQ(names_of(src, "test_multiply").back(), "N");
}

TEST(KernelParams, KernelsInsideAnIfAreConditional) {
  const char* src = R"(
#ifdef WIDE
extern "C" __global__ void k(double* x) {}
#  if 0
extern "C" __global__ void nested(int n) {}
#  endif
#else
extern "C" __global__ void k(float* x) {}
#endif
extern "C" __global__ void always(int n) {}
)";
  auto defs = find_kernels(src);
  ASSERT_EQ(defs.size(), 4u);
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(defs[static_cast<std::size_t>(i)].conditional) << defs[static_cast<std::size_t>(i)].name;
  EXPECT_EQ(defs[3].name, "always");
  EXPECT_FALSE(defs[3].conditional);
}

TEST(KernelParams, OverloadsAndAbsentNamesGiveNullopt) {
  const char* src = R"(
template <typename T> __global__ void tmpl(T* x, int n) {}
__global__ void over(int a) {}
__global__ void over(float a) {}
__global__ void declared_only(int a);
)";
  for (const char* name : {"over", "declared_only", "absent"})
    EXPECT_FALSE(find_parameter_names(src, name).has_value()) << name;
  EXPECT_EQ(names_of(src, "tmpl"), (std::vector<std::string>{"x", "n"}));
  auto defs = find_kernels(src);
  ASSERT_FALSE(defs.empty());
  EXPECT_TRUE(defs[0].is_template);
  EXPECT_FALSE(defs[1].is_template);
}

// The text as the compiler reads it (jit/compile/cuda_scanner.h): a line splice carries a
// // comment on and joins a name; a character literal is no bracket; shifts and arrows in a
// default argument are no template brackets.
TEST(KernelParams, ReadsTheTextAsTheCompilerDoes) {
  const char* src =
      "// a note \\\n"
      "extern \"C\" __global__ void hidden(int a) {}\n"
      "extern \"C\" { const char close = '}';\n"
      "__global__ void spl\\\nit(float* x, Pair<Pair<int, 3>> p, int s = 1 << 2, float t = q->r, int n) {}\n"
      "}\n";
  auto defs = find_kernels(src);
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].name, "split");
  EXPECT_TRUE(defs[0].extern_c);  // the '}' is a character, not the block's end
  EXPECT_EQ(names_of(src, "split"), (std::vector<std::string>{"x", "p", "s", "t", "n"}));
}

// A macro makes kernels when a #define's tokens name __global__, on any of its continued
// lines; not in its comment.
TEST(KernelParams, MacrosThatMakeKernels) {
  EXPECT_TRUE(macros_define_kernels("#define MAKE(n) \\\n  extern \"C\" __global__ void n(float* y) {}\nMAKE(one)\n"));
  EXPECT_TRUE(macros_define_kernels("  #  define KERNEL __global__\n"));
  EXPECT_FALSE(macros_define_kernels("#define N 4 // not __global__\n#if __global__\n#endif\n"));
  EXPECT_FALSE(macros_define_kernels("__global__ void k() {}\nconst char* d = \"#define K __global__\";\n"));
}

// Sources are users' and may be built to make a search from each __global__ read to the
// end: each token is read a bounded number of times.
TEST(KernelParams, ReadsEachTokenABoundedNumberOfTimes) {
  auto repeated = [](std::string_view piece) {
    std::string s;
    for (int i = 0; i < (1 << 16); ++i) s += piece;
    return s;
  };
  auto t0 = std::chrono::steady_clock::now();
  for (const char* piece : {"__global__ ", "__global__ void f(", "__global__ void __launch_bounds__(", "__global__ [["})
    EXPECT_TRUE(list_kernels(repeated(piece)).empty()) << piece;
  EXPECT_EQ(list_kernels(repeated("__global__ void f(a, b)")), (std::vector<std::string>{"f"}));
  std::string src = repeated("template extern \"C\" x ") + "__global__ void k(float* x) {}" + repeated("(");
  auto defs = find_kernels(src);
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_TRUE(defs[0].extern_c);
  EXPECT_TRUE(defs[0].is_template);
  EXPECT_EQ(names_of(src, "k"), (std::vector<std::string>{"x"}));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
}

TEST(KernelParams, NoKernels) {
  EXPECT_TRUE(list_kernels("int main() { return 0; }").empty());
  EXPECT_TRUE(list_kernels("").empty());
  EXPECT_TRUE(list_kernels("__global__ void broken(").empty());
}

}  // namespace
}  // namespace luda::jit

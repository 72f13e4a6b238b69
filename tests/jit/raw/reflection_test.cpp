// A raw kernel's parameter list as the compilers read it: NVRTC (to PTX: no GPU needed)
// and the host C++ compiler of the cpu target, which must agree. Macros, #if, -D options,
// typedefs and templates decide the types; the source text only names the parameters.
#include "jit/raw/reflection.h"

#include <gtest/gtest.h>

#include "jit/raw/raw_module.h"
#include "runtime/device.h"

namespace luda::jit {
namespace {

using Kind = ParamType::Kind;

// "name:kind:dtype:const:spelling" per parameter, so a whole list compares in one line.
std::vector<std::string> summary(const std::optional<KernelSignature>& s) {
  std::vector<std::string> out;
  if (!s) return {"(not reflected)"};
  for (const auto& p : s->params) {
    std::string kind = p.type.kind == Kind::Pointer ? "ptr" : p.type.kind == Kind::Scalar ? "scalar" : "opaque";
    std::string dt = p.type.dtype ? std::string(dtype_name(*p.type.dtype)) : "-";
    out.push_back(p.name + ":" + kind + ":" + dt + ":" + (p.type.is_const ? "const" : "mut") + ":" + p.type.spelling);
  }
  return out;
}

const char* kSource = R"(
#if USE_DOUBLE
typedef double real;
#else
typedef float real;
#endif
#define COUNT_T unsigned int
#define LIST real* x, const real* __restrict__ y, COUNT_T n
struct Params { float a; int b; };
extern "C" __global__ void listed(LIST) {}
extern "C" __global__ void kinds(float const *a, volatile unsigned char* e, void* p, Params q, double** pp,
                                 struct Params* sp, float arr[], bool b, char c, signed char sc, long l,
                                 unsigned long ul, short h, long long ll, unsigned long long ull, real r) {}
template <class T> __global__ void tmpl(T* x, T v) {}
__global__ void cxx(int n) {}
)";

// The parameter list of `kernel` as NVRTC and as the host compiler read it; they agree.
std::vector<std::string> reflected(const char* kernel, std::vector<std::string> options = {}) {
  auto k = RawKernel::create(kSource, kernel, options);
  std::vector<std::string> nvrtc = summary(k->signature_for_arch(80));
  std::vector<std::string> host = summary(k->signature(Device::cpu()));
  EXPECT_EQ(nvrtc, host) << kernel;
  return nvrtc;
}

TEST(KernelReflection, OptionsMacrosAndTypedefsDecideTheTypes) {
  // The list is one macro: the text shows no names for it.
  EXPECT_EQ(reflected("listed", {"-DUSE_DOUBLE=1"}),
            (std::vector<std::string>{":ptr:float64:mut:double*", ":ptr:float64:const:const double*",
                                      ":scalar:uint32:mut:unsigned int"}));
  EXPECT_EQ(reflected("listed"), (std::vector<std::string>{":ptr:float32:mut:float*", ":ptr:float32:const:const float*",
                                                           ":scalar:uint32:mut:unsigned int"}));
}

TEST(KernelReflection, EveryKindOfParameter) {
  EXPECT_EQ(reflected("kinds", {"-DUSE_DOUBLE=1"}),
            (std::vector<std::string>{"a:ptr:float32:const:const float*", "e:ptr:uint8:mut:unsigned char volatile*",
                                      "p:ptr:-:mut:void*", "q:opaque:-:mut:Params", "pp:ptr:-:mut:double**",
                                      "sp:ptr:-:mut:Params*", "arr:ptr:float32:mut:float*", "b:scalar:bool:mut:bool",
                                      "c:scalar:int8:mut:char", "sc:scalar:int8:mut:signed char",
                                      "l:scalar:int64:mut:long", "ul:scalar:uint64:mut:unsigned long",
                                      "h:scalar:int16:mut:short", "ll:scalar:int64:mut:long long",
                                      "ull:scalar:uint64:mut:unsigned long long", "r:scalar:float64:mut:double"}));
}

TEST(KernelReflection, TemplatesAndCxxKernels) {
  EXPECT_EQ(reflected("tmpl<int>"), (std::vector<std::string>{"x:ptr:int32:mut:int*", "v:scalar:int32:mut:int"}));
  EXPECT_EQ(reflected("tmpl<double>"),
            (std::vector<std::string>{"x:ptr:float64:mut:double*", "v:scalar:float64:mut:double"}));
  EXPECT_EQ(reflected("cxx"), (std::vector<std::string>{"n:scalar:int32:mut:int"}));
}

TEST(KernelReflection, ReadsOnlyItsOwnNames) {
  EXPECT_FALSE(read_reflection("_Z3cxxi"));
  EXPECT_FALSE(read_reflection("not a mangled name"));
  EXPECT_FALSE(read_reflection(""));
}

// A name the compiler does not know is the missing-kernel error, on either compiler.
TEST(KernelReflection, AKernelUnderIfZeroIsMissing) {
  const char* src = "#if 0\nextern \"C\" __global__ void old(float* x) {}\n#endif\n"
                    "extern \"C\" __global__ void k(float* x) {}\n";
  auto k = RawKernel::create(src, "old");
  std::string want = "no kernel named 'old' in the source as the compiler reads it (its #if and -D options decide "
                     "what it defines)";
  for (int target = 0; target < 2; ++target) {
    std::string got;
    try {
      if (target == 0) k->signature_for_arch(80);
      else k->signature(Device::cpu());
    } catch (const Error& e) {
      got = e.what();
    }
    EXPECT_EQ(got, want) << (target == 0 ? "nvrtc" : "host compiler");
  }
  // A kernel inside an #if is reflected only when asked for: the others compile.
  auto ok = RawKernel::create(src, "k");
  EXPECT_EQ(summary(ok->signature_for_arch(80)), (std::vector<std::string>{"x:ptr:float32:mut:float*"}));
  EXPECT_EQ(summary(ok->signature(Device::cpu())), (std::vector<std::string>{"x:ptr:float32:mut:float*"}));
}

}  // namespace
}  // namespace luda::jit

// NVRTC through dlopen: compiling to cubin and PTX with no GPU, compile errors that keep
// the log, and the message when the library cannot be found.
#include "jit/compile/nvrtc.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "jit/raw/raw_module.h"

namespace luda::jit {
namespace {

// CuPy's RawKernel example (docs: "User-Defined Kernels", Raw kernels).
const char* kAddFunc = R"(
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
)";

TEST(Nvrtc, LoadsAndReportsVersionAndArchs) {
  NvrtcVersion v = nvrtc_version();
  EXPECT_GE(v.major, 12);
  EXPECT_TRUE(std::filesystem::exists(nvrtc_library_path())) << nvrtc_library_path();
  std::vector<int> archs = nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  EXPECT_TRUE(std::is_sorted(archs.begin(), archs.end()));
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

TEST(Nvrtc, CompilesCupyAddToSm90Cubin) {
  CompileRequest r;
  r.source = kAddFunc;
  r.program_name = "my_add.cu";
  r.arch = 90;
  CompiledProgram p = compile(r);
  EXPECT_TRUE(p.cubin);
  ASSERT_GT(p.image.size(), 4u);
  EXPECT_EQ(p.image.substr(0, 4), "\x7f"
                                  "ELF");
  EXPECT_NE(p.image.find("my_add"), std::string::npos);  // the symbol table names it
  ASSERT_GE(p.options.size(), 2u);
  EXPECT_EQ(p.options[0], "--gpu-architecture=sm_90");
  EXPECT_EQ(p.options[1], "-default-device");
}

TEST(Nvrtc, CompilesToPtxWithEntry) {
  CompileRequest r;
  r.source = kAddFunc;
  r.arch = 80;
  r.cubin = false;
  r.options = {"-lineinfo"};
  CompiledProgram p = compile(r);
  EXPECT_FALSE(p.cubin);
  EXPECT_NE(p.image.find(".entry my_add"), std::string::npos) << p.image;
  EXPECT_NE(p.image.find(".target sm_80"), std::string::npos);
  EXPECT_EQ(p.image.find('\0'), std::string::npos);  // text only; c_str() terminates it
  EXPECT_EQ(p.options[0], "--gpu-architecture=compute_80");
  EXPECT_EQ(p.options[2], "-lineinfo");
}

TEST(Nvrtc, ArchNewerThanNvrtcFallsBackToPtx) {
  int newest = nvrtc_supported_archs().back();
  CompileRequest r;
  r.source = kAddFunc;
  r.arch = newest + 10;
  CompiledProgram p = compile(r);
  EXPECT_FALSE(p.cubin);
  EXPECT_EQ(p.options[0], "--gpu-architecture=compute_" + std::to_string(newest));
  EXPECT_NE(p.image.find(".entry my_add"), std::string::npos);
}

TEST(Nvrtc, ArchOlderThanNvrtcIsAnError) {
  CompileRequest r;
  r.source = kAddFunc;
  r.arch = 30;
  std::vector<int> archs = nvrtc_supported_archs();
  NvrtcVersion v = nvrtc_version();
  try {
    compile(r);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("NVRTC {}.{} cannot compile for sm_30 (it supports sm_{} to sm_{}); use a "
                          "CUDA toolkit that supports this GPU and point LUDA_NVRTC at its "
                          "libnvrtc.so",
                          v.major, v.minor, archs.front(), archs.back()));
  }
}

TEST(Nvrtc, CudaHeadersResolve) {
  CompileRequest r;
  r.source = "#include <cuda_fp16.h>\n"
             "extern \"C\" __global__ void h(__half* x) { x[0] = __float2half(1.0f); }\n";
  CompiledProgram p = compile(r);
  EXPECT_EQ(p.image.substr(0, 4), "\x7f"
                                  "ELF");
}

// NVRTC's builtin header names a template parameter T, so -DT=3 handed to NVRTC fails in
// that header; -D and -U are #define and #undef lines ahead of the source instead, in order,
// and NVRTC's messages keep the source's own line numbers.
TEST(Nvrtc, MacroOptionsReachTheSourceOnly) {
  CompileRequest r;
  r.source = "#ifdef GONE\n#error GONE is still defined\n#endif\n"
             "extern \"C\" __global__ void k(int* x) { x[0] = T * 100 + N * 10 + ONE; }\n";
  r.program_name = "macros.cu";
  r.cubin = false;
  r.options = {"-DT=3", "-D", "N=4", "--define-macro=ONE", "-DGONE", "-UGONE"};
  CompiledProgram p = compile(r);
  EXPECT_NE(p.image.find(", 341;"), std::string::npos) << p.image;
  EXPECT_EQ(std::vector<std::string>(p.options.begin() + 2, p.options.begin() + 8), r.options);
  r.source = "extern \"C\" __global__ void k(int* x) {\n  x[0] = T + missing;\n}\n";
  try {
    compile(r);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("macros.cu(2): error: identifier \"missing\" is undefined"), std::string::npos) << e.log();
  }
}

TEST(Nvrtc, CompileErrorCarriesLogOptionsAndNumberedSource) {
  CompileRequest r;
  r.source = "extern \"C\" __global__ void bad(float* x) {\n  x[0] = undefined_thing;\n}\n";
  r.program_name = "bad.cu";
  r.options = {"-DFOO=1"};
  try {
    compile(r);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string what = e.what();
    std::string first = what.substr(0, what.find('\n'));
    std::string options = fmt::format("{}", fmt::join(e.options(), " "));
    EXPECT_EQ(first, "NVRTC failed to compile 'bad.cu' for sm_90 (options: " + options + ")");
    EXPECT_EQ(options.rfind("--gpu-architecture=sm_90 -default-device -DFOO=1", 0), 0u) << options;
    EXPECT_NE(e.log().find("bad.cu(2): error: identifier \"undefined_thing\" is undefined"), std::string::npos)
        << e.log();
    EXPECT_NE(what.find(e.log()), std::string::npos);  // the whole log is in the message
    EXPECT_NE(what.find("\nsource:\n"
                        "   1 | extern \"C\" __global__ void bad(float* x) {\n"
                        "   2 |   x[0] = undefined_thing;\n"
                        "   3 | }"),
              std::string::npos)
        << what;
    EXPECT_EQ(e.source(), r.source);
  }
}

TEST(Nvrtc, BadOptionIsACompileErrorNamingTheResult) {
  CompileRequest r;
  r.source = kAddFunc;
  r.options = {"--no-such-option"};
  try {
    compile(r);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string what = e.what();
    std::string first = what.substr(0, what.find('\n'));
    EXPECT_NE(first.find(" --no-such-option"), std::string::npos) << what;
    EXPECT_TRUE(first.ends_with("): NVRTC_ERROR_INVALID_OPTION")) << what;
    EXPECT_NE(what.find("unrecognized option --no-such-option"), std::string::npos) << what;
    EXPECT_NE(what.find("   3 | void my_add("), std::string::npos);
  }
}

TEST(Nvrtc, NameExpressionsLowerCxxKernels) {
  CompileRequest r;
  r.source = "__global__ void cxx(float* x, int n) { if (n) x[0] = 1; }\n"
             "template <class T> __global__ void tm(T* x) { x[0] = T(1); }\n";
  r.name_expressions = {"cxx", "tm<float>"};
  CompiledProgram p = compile(r);
  EXPECT_EQ(p.lowered_names.at("cxx"), "_Z3cxxPfi");
  EXPECT_EQ(p.lowered_names.at("tm<float>"), "_Z2tmIfEvPT_");
}

TEST(Nvrtc, NumberedSource) {
  EXPECT_EQ(detail::numbered_source("a\nb\r\n\nd"), "   1 | a\n   2 | b\n   3 | \n   4 | d");
  EXPECT_EQ(detail::numbered_source("x\n"), "   1 | x");
}

TEST(Nvrtc, CandidatesFollowTheSearchOrder) {
  setenv("LUDA_NVRTC", "/opt/mine/libnvrtc.so.99", 1);
  setenv("CUDA_HOME", "/nonexistent-home", 1);
  unsetenv("CUDA_PATH");
  std::vector<std::string> c = detail::nvrtc_candidates();
  unsetenv("LUDA_NVRTC");
  unsetenv("CUDA_HOME");
  ASSERT_GE(c.size(), 6u);
  EXPECT_EQ(c[0], "/opt/mine/libnvrtc.so.99");
  EXPECT_EQ(c[1], "/nonexistent-home/lib64/libnvrtc.so");
  EXPECT_EQ(c[2], "/usr/local/cuda/lib64/libnvrtc.so");
  EXPECT_EQ(std::vector<std::string>(c.end() - 3, c.end()),
            (std::vector<std::string>{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}));
  if (std::filesystem::exists("/usr/local/cuda/lib64/libnvrtc.so.13")) {  // versioned ones too
    EXPECT_NE(std::find(c.begin(), c.end(), "/usr/local/cuda/lib64/libnvrtc.so.13"), c.end());
  }
}

TEST(Nvrtc, ProbeLoadsARealLibrary) {
  std::string path = detail::probe_nvrtc({"/nonexistent/libnvrtc.so", nvrtc_library_path()});
  EXPECT_EQ(path, nvrtc_library_path());
}

TEST(Nvrtc, NotFoundNamesEveryPathTriedAndTheFix) {
  try {
    detail::probe_nvrtc({"/nonexistent/lib64/libnvrtc.so", "/nonexistent/lib64/libnvrtc.so.12", "libc.so.6"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "NVRTC not found; tried:\n"
              "  /nonexistent/lib64/libnvrtc.so: no such file\n"
              "  /nonexistent/lib64/libnvrtc.so.12: no such file\n"
              "  libc.so.6: not NVRTC (it has no nvrtcGetErrorString)\n"
              "set LUDA_NVRTC to the path of libnvrtc.so (from the CUDA toolkit, version 12 or 13)");
  }
  try {
    detail::probe_nvrtc({"libnvrtc-does-not-exist.so.7"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "NVRTC not found; tried:\n"
              "  libnvrtc-does-not-exist.so.7: cannot open shared object file: No such file or "
              "directory\n"
              "set LUDA_NVRTC to the path of libnvrtc.so (from the CUDA toolkit, version 12 or 13)");
  }
}

TEST(Nvrtc, RawModuleCompilesForAnArchWithoutAGpu) {
  auto m = RawModule::create(kAddFunc);
  CompiledProgram p = m->compile_for(90);
  EXPECT_EQ(p.image.substr(0, 4), "\x7f"
                                  "ELF");
  EXPECT_EQ(m->compile_count(), 1);
  auto k = RawKernel::create("__global__ void cxx(float* x, int n) {}", "cxx");
  CompiledProgram q = k->raw_module()->compile_for(90, false);
  EXPECT_EQ(q.lowered_names.at("cxx"), "_Z3cxxPfi");
  EXPECT_NE(q.image.find(".entry _Z3cxxPfi"), std::string::npos);
}

TEST(Nvrtc, RawKernelCompileErrorNamesTheKernelFile) {
  auto k = RawKernel::create("extern \"C\" __global__ void oops(float* x) { x[0] = y; }", "oops");
  try {
    k->raw_module()->compile_for(90);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("NVRTC failed to compile 'oops.cu' for sm_90 (options: ", 0), 0u) << e.what();
    EXPECT_NE(e.log().find("identifier \"y\" is undefined"), std::string::npos) << e.log();
  }
}

}  // namespace
}  // namespace luda::jit

// The cpu target's compile path alone (no executor): the host C++ compiler on CUDA C++
// with the cpu prelude, the disk cache, dlopen, and errors. Kernels here are run by a
// sequential stand-in for the executor (each CUDA thread to completion, in order), which
// is enough for code without barriers and lets the test read what print received.
#include "jit/compile/host_compiler.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsl/compile.h"
#include "dsl/infer.h"
#include "jit/compile/cpu_prelude.h"
#include "jit/compile/nvrtc_diagnostics.h"
#include "tests/test_support.h"

namespace luda::jit {
namespace {

namespace fs = std::filesystem;

std::string g_printed;
void fake_print(const char* text, unsigned long long n) { g_printed += "[" + std::string(text, n) + "]"; }
void no_barrier(luda_cpu_thread*) { ADD_FAILURE() << "a barrier in a sequential test"; }
const luda_cpu_runtime* fake_runtime() {
  static const luda_cpu_runtime rt = {LUDA_CPU_ABI_VERSION, no_barrier, nullptr, nullptr, nullptr,
                                      fake_print,           nullptr,    nullptr, nullptr};
  return &rt;
}

// Every CUDA thread of the grid, one after another.
void run_sequentially(const CpuKernel& k, luda_cpu_dim3 grid, luda_cpu_dim3 block, void* const* args,
                      void* shared = nullptr, unsigned long long shared_bytes = 0) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      luda_cpu_thread t{};
      t.threadIdx = {tx, 0, 0};
      t.blockIdx = {bx, 0, 0};
      t.blockDim = block;
      t.gridDim = grid;
      t.dynamic_shared = shared;
      t.dynamic_shared_bytes = shared_bytes;
      t.lane = tx % 32;
      *k.current_slot() = &t;
      k.run_thread(args);
    }
}

class HostCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("luda_hc_test_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    cache_ = std::make_unique<DiskCache>(dir_);
    g_printed.clear();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A raw source (as RawModule prepares it) with a hand-written entry; `tag` makes the cache key unique.
  HostCompileRequest request(const std::string& body, const std::string& entry_call, const std::string& file) {
    HostCompileRequest r;
    r.source = std::string(cpu_cuda_subset()) + cpu_raw_source(body, file) + "#line 1 \"luda_cpu_entry\"\n" +
               entry_call +
               fmt::format("// {} {} {}\n", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                           tag_++);
    r.file_name = file;
    r.what = "kernel 'test'";
    return r;
  }

  fs::path dir_;
  std::unique_ptr<DiskCache> cache_;
  int tag_ = 0;
};

// An environment variable set for one scope, restored after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A shell script standing in for the host compiler.
fs::path write_script(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
bool process_ended(long pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return true;
  std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

constexpr const char* kScale = R"(extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + (float)threadIdx.x;
})";
constexpr const char* kScaleEntry =
    R"(LUDA_CPU_EXPORT void scale_cpu(void* const* a) { scale(*(float**)a[0], *(float*)a[1], *(int*)a[2]); }
extern "C" { LUDA_CPU_VISIBLE int scale_cpu_needs_fibers = 0; }
)";

// {1, 2} through the scale kernel of `m` with a = 3, one thread per element.
std::vector<float> scale_by_3(const CpuModule& m) {
  std::vector<float> x = {1, 2};
  float* data = x.data();
  float a = 3;
  int n = 2;
  void* args[] = {&data, &a, &n};
  run_sequentially(m.kernel("scale"), {1, 1, 1}, {2, 1, 1}, args);
  return x;
}

TEST_F(HostCompilerTest, FindsTheCompilerAndItsVersion) {
  HostCompiler c = host_compiler();
  EXPECT_FALSE(c.version.empty());
  EXPECT_NE(c.identity.find(c.version), std::string::npos);
  ::setenv("LUDA_CPU_PORTABLE", "1", 1);
  std::vector<std::string> portable = host_compile_flags(false, false);
  ::unsetenv("LUDA_CPU_PORTABLE");
  EXPECT_EQ(portable, (std::vector<std::string>{"-std=c++17", "-O2", "-fPIC", "-shared", "-fno-math-errno",
                                                "-fno-delete-null-pointer-checks"}));
  std::vector<std::string> native = host_compile_flags(true, false);
  EXPECT_EQ(native.back(), "-ffast-math");
  EXPECT_NE(std::find(native.begin(), native.end(), "-march=native"), native.end());
}

TEST_F(HostCompilerTest, MissingCompilerIsAClearError) {
  ::setenv("LUDA_CXX", "/nonexistent/luda-cxx", 1);
  std::string what;
  try {
    host_compiler();
  } catch (const std::exception& e) {
    what = e.what();
  }
  ::unsetenv("LUDA_CXX");
  EXPECT_EQ(what,
            "host C++ compiler '/nonexistent/luda-cxx' (from $LUDA_CXX) could not be run: No such file or directory; "
            "the cpu target needs a C++17 compiler: install g++ or clang++, or set LUDA_CXX to one");
}

TEST_F(HostCompilerTest, CompilesLoadsAndRunsATinyKernel) {
  HostCompileStats stats;
  auto m = load_cpu_module(request(kScale, kScaleEntry, "scale.cu"), *cache_, fake_runtime(), &stats);
  CpuKernel k = m->kernel("scale");
  EXPECT_FALSE(k.needs_fibers);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> x(100), want(100);
  // a = 2: the product is exact, so a contracted (fused) multiply-add gives the same.
  for (int i = 0; i < 100; ++i) x[i] = dist(rng), want[i] = x[i] * 2.0f + static_cast<float>(i % 32);
  float* data = x.data();
  float a = 2.0f;
  int n = 100;
  void* args[] = {&data, &a, &n};
  run_sequentially(k, {4, 1, 1}, {32, 1, 1}, args);  // 128 threads; 28 out of range
  EXPECT_EQ(x, want);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.loads, 1u);
  std::string missing;
  try {
    m->kernel("nope");
  } catch (const std::exception& e) {
    missing = e.what();
  }
  EXPECT_EQ(missing, "the compiled cpu module has no kernel entry 'nope_cpu'");
}

TEST_F(HostCompilerTest, SecondCompileHitsTheCache) {
  HostCompileRequest r = request(kScale, kScaleEntry, "scale.cu");
  HostCompileStats first, second, third;
  auto a = load_cpu_module(r, *cache_, fake_runtime(), &first);
  EXPECT_EQ(first.compiles, 1u);
  EXPECT_EQ(first.disk_misses, 1u);
  EXPECT_EQ(cache_->stats().writes, 1u);
  // The same process: the loaded object, no disk access at all.
  auto b = load_cpu_module(r, *cache_, fake_runtime(), &second);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(second.compiles + second.disk_hits + second.disk_misses + second.loads, 0u);
  // A new process (forgotten objects): from the disk, not the compiler.
  detail::forget_loaded_modules();
  auto c = load_cpu_module(r, *cache_, fake_runtime(), &third);
  EXPECT_EQ(third.compiles, 0u);
  EXPECT_EQ(third.disk_hits, 1u);
  EXPECT_EQ(third.loads, 1u);
  EXPECT_EQ(cache_->stats().hits, 1u);
  EXPECT_EQ(scale_by_3(*c), (std::vector<float>{3, 7}));
  // Another flag set is another binary.
  r.fastmath = true;
  EXPECT_NE(host_binary_key(r).hex(), host_binary_key(request(kScale, kScaleEntry, "scale.cu")).hex());
}

TEST_F(HostCompilerTest, PrintfAtomicsAndDynamicSharedMemory) {
  const char* body = R"(extern "C" __global__ void count(float* total, unsigned int* hits, int* order) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = 0.5f * threadIdx.x;
  atomicAdd(total, scratch[threadIdx.x]);
  order[threadIdx.x] = atomicInc(hits, 2u);
  atomicMax(order + 4, (int)threadIdx.x);
  printf("thread %d: %.2f\n", (int)threadIdx.x, scratch[threadIdx.x]);
})";
  const char* entry =
      R"(LUDA_CPU_EXPORT void count_cpu(void* const* a) { count(*(float**)a[0], *(unsigned int**)a[1], *(int**)a[2]); }
)";
  auto m = load_cpu_module(request(body, entry, "count.cu"), *cache_, fake_runtime(), nullptr);
  CpuKernel k = m->kernel("count");
  EXPECT_TRUE(k.needs_fibers);  // no _needs_fibers symbol: the safe answer
  float total = 0;
  unsigned hits = 0;
  int order[5] = {0, 0, 0, 0, -1};
  float* pt = &total;
  unsigned* ph = &hits;
  int* po = order;
  void* args[] = {&pt, &ph, &po};
  float shared[4];
  run_sequentially(k, {1, 1, 1}, {4, 1, 1}, args, shared, sizeof shared);
  EXPECT_EQ(total, 3.0f);
  EXPECT_EQ(hits, 1u);  // 0 1 2 0: inc wraps past 2
  EXPECT_EQ(std::vector<int>(order, order + 5), (std::vector<int>{0, 1, 2, 0, 3}));
  EXPECT_EQ(g_printed, "[thread 0: 0.00\n][thread 1: 0.50\n][thread 2: 1.00\n][thread 3: 1.50\n]");
}

TEST_F(HostCompilerTest, ExternSharedBecomesTheDynamicSharedMemory) {
  std::string out = cpu_raw_source(
      "__global__ void k() {\n  extern __shared__ __align__(16) unsigned char smem[];\n  x();\n}", "k.cu");
  EXPECT_EQ(
      out,
      "#line 1 \"k.cu\"\n__global__ void k() {\n  \n#define smem ((unsigned char*)luda_cpu_self()->dynamic_shared)\n"
      "#line 2 \"k.cu\"\n\n  x();\n}\n");
}

TEST_F(HostCompilerTest, ExternSharedRewriteTakesRunsOfAnyLength) {
  // Valid CUDA with runs of blanks and of identifier characters far longer than a
  // backtracking regex's recursion takes; declarations in comments and strings stay.
  const std::string blanks(1 << 20, ' '), word(1 << 20, 'w');
  std::string source = "extern" + blanks + "__shared__\n" + blanks + "float /* f */ " + word + "[ ];\n__device__ int " +
                       word +
                       "2;\n// extern __shared__ float c[];\nconst char* s = \"extern __shared__ float d[];\";\n";
  EXPECT_EQ(cpu_raw_source(source, "k.cu"),
            "#line 1 \"k.cu\"\n\n#define " + word +
                " ((float*)luda_cpu_self()->dynamic_shared)\n#line 2 \"k.cu\"\n\n"
                "__device__ int " +
                word + "2;\n// extern __shared__ float c[];\nconst char* s = \"extern __shared__ float d[];\";\n");
  // Every form: qualifiers, alignment before or after the type, pointers, no blanks.
  EXPECT_EQ(
      cpu_raw_source("extern __shared__ unsigned  int u[];extern __shared__ double __align__(8) d [];\n"
                     "extern\t__shared__ alignas(16) float* p[];extern __shared__ float f[4];",
                     "m.cu"),
      "#line 1 \"m.cu\"\n\n#define u ((unsigned int*)luda_cpu_self()->dynamic_shared)\n#line 1 \"m.cu\"\n"
      "\n#define d ((double*)luda_cpu_self()->dynamic_shared)\n#line 1 \"m.cu\"\n\n"
      "\n#define p ((float**)luda_cpu_self()->dynamic_shared)\n#line 2 \"m.cu\"\nextern __shared__ float f[4];\n");
}

// The rewrites read tokens (jit/compile/cuda_scanner.h): comments and literals are never
// rewritten, and the lines after a rewrite keep their numbers.
TEST_F(HostCompilerTest, RawSourceRewritesReadTokens) {
  std::string source = "#include <cooperative_groups.h> // the grid barrier\n"
                       "// #include <cooperative_groups.h>\n"
                       "#include <cooperative_groups/reduce.h>\n"
                       "__device__ __noinline__ int f(); // __noinline__\n"
                       "static __attribute__((used, /* c */ __noinline__)) int g();\n"
                       "const char* s = \"__noinline__ extern __shared__ float a[];\", *r = R\"x(__noinline__)x\";\n"
                       "__global__ void k() {\n"
                       "  extern __shared__ __align__(sizeof(float4)) float2 b[];\n"
                       "  extern __sha\\\nred__ int c[]; b[0].x = c[0];\n"
                       "}\n";
  EXPECT_EQ(cpu_raw_source(source, "k.cu"),
            "#line 1 \"k.cu\"\n"
            "/* #include <cooperative_groups.h>: the cpu prelude's subset */ // the grid barrier\n"
            "// #include <cooperative_groups.h>\n"
            "#include <cooperative_groups/reduce.h>\n"
            "__device__ __attribute__((noinline)) int f(); // __noinline__\n"
            "static __attribute__((used, /* c */ __noinline__)) int g();\n"
            "const char* s = \"__noinline__ extern __shared__ float a[];\", *r = R\"x(__noinline__)x\";\n"
            "__global__ void k() {\n"
            "  \n#define b ((float2*)luda_cpu_self()->dynamic_shared)\n#line 8 \"k.cu\"\n\n"
            "  \n#define c ((int*)luda_cpu_self()->dynamic_shared)\n#line 10 \"k.cu\"\n b[0].x = c[0];\n"
            "}\n");
}

// A try at a declaration from each `extern` reads no further than the next one: a run of
// them takes one pass, not one pass each.
TEST_F(HostCompilerTest, ExternSharedRewriteTakesRunsOfExterns) {
  std::string source;
  for (int i = 0; i < (1 << 16); ++i) source += "extern __shared__ float ";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(cpu_raw_source(source, "k.cu"), "#line 1 \"k.cu\"\n" + source + "\n");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
}

// A raw kernel runs on fibers when its code names a barrier or a warp function: in code or
// in a macro, under any name that holds one (a wrapper, a longer intrinsic), never in a
// comment or a literal.
TEST(RawSourceNeedsFibers, ReadsNamesInCodeNotInCommentsOrLiterals) {
  for (const char* call :
       {"__syncthreads()", "__syncthreads_count(p)", "__syncthreads_and(p)", "__syncthreads_or(p)", "__syncwarp()",
        "__shfl_sync(m, v, 0)", "__shfl_up_sync(m, v, 1)", "__shfl_down_sync(m, v, 1)", "__shfl_xor_sync(m, v, 1)",
        "__ballot_sync(m, p)", "__all_sync(m, p)", "__any_sync(m, p)", "__match_any_sync(m, v)",
        "__match_all_sync(m, v, &p)", "my__syncthreads_wrapper()", "__sync\\\nthreads()"}) {
    EXPECT_TRUE(raw_source_needs_fibers(std::string("__global__ void k(int p) {\n  ") + call + ";\n}")) << call;
  }
  EXPECT_TRUE(raw_source_needs_fibers("#define BARRIER() __syncthreads()\n__global__ void k() { BARRIER(); }"));
  EXPECT_FALSE(raw_source_needs_fibers(
      "// __syncthreads();\n/* __syncwarp(); */\n// __shfl_sync \\\n  __ballot_sync(m, p);\n"
      "__global__ void k(const char** s, char* c) {\n"
      "  s[0] = \"__syncthreads()\"; s[1] = R\"(__all_sync)\"; s[2] = u8\"__any_sync\"; c[0] = '_';\n}\n"));
  EXPECT_TRUE(raw_source_needs_fibers("__global__ void k(float* x) { x[threadIdx.x] = __shfl(1.0f, 0); }"));
  EXPECT_FALSE(raw_source_needs_fibers("__global__ void k(float* x) { x[threadIdx.x] *= 2; }"));
}

TEST_F(HostCompilerTest, AHungCompilerIsStoppedWithEveryProcessItStarted) {
  fs::path pid_file = dir_ / "child.pid";
  fs::path cxx = write_script(dir_ / "hung-cxx",
                              "#!/bin/sh\ncase \"$1\" in --version) echo 'hung-cxx 1.0'; exit 0;; esac\n"
                              "sleep 30 &\necho $! > '" +
                                  pid_file.string() + "'\nwait\n");
  ScopedEnv compiler("LUDA_CXX", cxx.string()), limit("LUDA_CXX_TIMEOUT", "1.5");
  auto t0 = std::chrono::steady_clock::now();
  std::string what = test_support::error_of(
      [&] { load_cpu_module(request(kScale, kScaleEntry, "scale.cu"), *cache_, fake_runtime(), nullptr); });
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(what,
            fmt::format("host C++ compiler did not finish compiling 'scale.cu' for the cpu target within 1.5 s and "
                        "was stopped (command: {} {} -x c++ scale.cu -o kernel.so); set LUDA_CXX_TIMEOUT to more "
                        "seconds if it needs longer",
                        cxx.string(), fmt::join(host_compile_flags(false, false), " ")));
  EXPECT_LT(took, 10.0);
  // The compiler's own child went with it: the whole process group was stopped.
  long child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0);
  for (int i = 0; i < 100 && !process_ended(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(process_ended(child)) << "process " << child << " still runs";
  EXPECT_EQ(cache_->stats().writes, 0u);
  ScopedEnv bad("LUDA_CXX_TIMEOUT", "maybe");
  EXPECT_EQ(test_support::error_of([&] { compile_shared_object(request(kScale, kScaleEntry, "scale.cu")); }),
            "LUDA_CXX_TIMEOUT must be a positive number of seconds (the longest a host C++ compile may take; 300 "
            "when unset), got 'maybe'");
}

// A full disk can leave the compiler's output short with a zero exit status: such an
// object is refused before dlopen maps it (mapped bytes past a file's end raise SIGBUS)
// and never enters the cache.
TEST_F(HostCompilerTest, ATruncatedObjectIsRefusedAndNeverCached) {
  HostCompiler real = host_compiler();
  fs::path cxx = write_script(dir_ / "short-cxx",
                              fmt::format("#!/bin/sh\ncase \"$1\" in --version) echo 'short-cxx 1.0'; exit 0;; esac\n"
                                          "{} \"$@\" || exit $?\nfor a; do out=$a; done\n"
                                          "head -c 3000 \"$out\" > \"$out.cut\" && mv \"$out.cut\" \"$out\"\n",
                                          fmt::join(real.command, " ")));
  HostCompileRequest r = request(kScale, kScaleEntry, "scale.cu");
  {
    ScopedEnv compiler("LUDA_CXX", cxx.string());
    std::string what = test_support::error_of([&] { load_cpu_module(r, *cache_, fake_runtime(), nullptr); });
    std::string head = fmt::format("host C++ compiler '{}' wrote a damaged shared object for 'scale.cu': ",
                                   cxx.string());
    std::string tail = fmt::format(" of a 3000-byte file (is the disk that holds {} full?)",
                                   fs::temp_directory_path().string());
    EXPECT_EQ(what.substr(0, head.size()), head) << what;
    EXPECT_TRUE(what.ends_with(tail)) << what;
    EXPECT_EQ(cache_->stats().writes, 0u);
  }
  // The real compiler then builds, loads, caches and runs it.
  HostCompileStats stats;
  auto m = load_cpu_module(r, *cache_, fake_runtime(), &stats);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(cache_->stats().writes, 1u);
  EXPECT_EQ(scale_by_3(*m), (std::vector<float>{3, 7}));
}

// A damaged object in the cache, whether its entry checks out (stored so by an older
// luda) or the file was cut short after it was stored, is rebuilt and replaced.
TEST_F(HostCompilerTest, ADamagedObjectInTheCacheIsRebuilt) {
  HostCompileRequest r = request(kScale, kScaleEntry, "scale.cu");
  std::string object = compile_shared_object(r);
  CacheKey key = host_binary_key(r);
  ASSERT_TRUE(cache_->store(key, "S" + object.substr(0, object.size() / 2)));
  HostCompileStats first;
  load_cpu_module(r, *cache_, fake_runtime(), &first);
  EXPECT_EQ(first.disk_misses, 1u);
  EXPECT_EQ(first.compiles, 1u);
  // Cut short on disk after a good store: the cache's length check refuses it.
  fs::path file = cache_->path_of(key);
  fs::resize_file(file, fs::file_size(file) - 100);
  detail::forget_loaded_modules();
  HostCompileStats second;
  load_cpu_module(r, *cache_, fake_runtime(), &second);
  EXPECT_EQ(second.compiles, 1u);
  EXPECT_EQ(cache_->stats().corrupt, 1u);
  detail::forget_loaded_modules();
  HostCompileStats third;
  auto m = load_cpu_module(r, *cache_, fake_runtime(), &third);
  EXPECT_EQ(third.disk_hits, 1u);
  EXPECT_EQ(third.compiles, 0u);
  EXPECT_EQ(scale_by_3(*m), (std::vector<float>{3, 7}));
}

TEST_F(HostCompilerTest, EveryTruncationOfAnObjectIsSeen) {
  std::string object = compile_shared_object(request(kScale, kScaleEntry, "scale.cu"));
  EXPECT_EQ(detail::shared_object_defect(object), "");
  for (std::size_t n = 0; n < object.size(); n += 1 + n / 64) {
    SCOPED_TRACE(n);
    EXPECT_NE(detail::shared_object_defect(std::string_view(object).substr(0, n)), "");
  }
  EXPECT_EQ(detail::shared_object_defect("not an object, but long enough to hold an ELF header's bytes............"),
            "not an ELF file");
  EXPECT_EQ(detail::shared_object_defect("\x7f"
                                         "ELF"),
            "4 bytes, shorter than an ELF header");
}

// A kernel or kind name of any length makes a file name and a symbol of bounded length.
TEST_F(HostCompilerTest, ALongNameMakesABoundedFileName) {
  std::string name(100000, 'n');
  HostCompileRequest r = request(kScale, kScaleEntry, name + ".cu");
  std::string object = compile_shared_object(r);
  EXPECT_EQ(detail::shared_object_defect(object), "");
  EXPECT_EQ(dsl::c_identifier(name), std::string(39, 'n') + "_" + dsl::short_hash(name));
  EXPECT_EQ(dsl::c_identifier("my kernel-2"), "my_kernel_2");
  EXPECT_EQ(dsl::c_identifier("2d"), "k_2d");
}

TEST_F(HostCompilerTest, CompilerErrorCarriesLogCommandAndSource) {
  HostCompileRequest r = request("__global__ void bad(float* x) {\n  x[0] = 1;\n  undefined_name(x);\n}", "", "bad.cu");
  try {
    load_cpu_module(r, *cache_, fake_runtime(), nullptr);
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find("host C++ compiler failed to compile 'bad.cu' for the cpu target (command: "), 0u) << what;
    EXPECT_NE(what.find(" -std=c++17 -O2 -fPIC -shared -fno-math-errno"), std::string::npos) << what;
    EXPECT_NE(what.find("bad.cu:3:3: error: 'undefined_name' was not declared in this scope"), std::string::npos)
        << what;
    EXPECT_EQ(what.find(fs::temp_directory_path().string() + "/luda-cxx"), std::string::npos) << what;
    EXPECT_NE(what.find("\nsource:\n"), std::string::npos);
    EXPECT_NE(e.log().find("undefined_name"), std::string::npos);
    EXPECT_EQ(e.source(), r.source);
  }
  EXPECT_EQ(cache_->stats().writes, 0u);
}

TEST_F(HostCompilerTest, HostCompilerDiagnosticsMapToTheLuaLine) {
  dsl::Chunk chunk{"hist.lua", "local function k(x)\n  local i = cuda.grid(1)\n    x[i] = foo(i)\nend\n"};
  CompileError e("host C++ compiler failed",
                 "hist.lua: In function 'void k(luda_Array<float, 1>)':\n"
                 "hist.lua:3:12: error: 'foo' was not declared in this scope\n",
                 {}, "");
  std::string what = at_lua_line(e, chunk).what();
  EXPECT_EQ(what.find("hist.lua:3:5: compile error: 'foo' was not declared in this scope\n    x[i] = foo(i)\n    ^"),
            0u)
      << what;
  EXPECT_NE(what.find("\nhost C++ compiler failed"), std::string::npos);
}

}  // namespace
}  // namespace luda::jit

// The one search for the libraries luda loads with dlopen: candidates in order, the first
// that has every symbol, and an error that names each path tried with why, and the fix.
#include "runtime/shared_library.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/error.h"

namespace luda {
namespace {

TEST(SharedLibrary, CandidatesFollowTheSearchOrder) {
  setenv("LUDA_TEST_LIBRARY", "/opt/mine/libthing.so.7", 1);
  setenv("CUDA_HOME", "/nonexistent-home", 1);
  unsetenv("CUDA_PATH");
  const LibrarySearch search{"LUDA_TEST_LIBRARY", "libthing.so", true, {"libthing.so.2", "libthing.so"}};
  std::vector<std::string> c = library_candidates(search);
  EXPECT_EQ(c, (std::vector<std::string>{"/opt/mine/libthing.so.7", "/nonexistent-home/lib64/libthing.so",
                                         "/usr/local/cuda/lib64/libthing.so", "libthing.so.2", "libthing.so"}));
  unsetenv("LUDA_TEST_LIBRARY");
  unsetenv("CUDA_HOME");
  // Not in the toolkit: the variable and the bare names only.
  EXPECT_EQ(library_candidates({"LUDA_TEST_LIBRARY", "libthing.so", false, {"libthing.so.2"}}),
            std::vector<std::string>{"libthing.so.2"});
}

TEST(SharedLibrary, OpensTheFirstWithEverySymbol) {
  const char* symbols[] = {"malloc", "free"};
  SharedLibrary lib = open_library("libc", {"/nonexistent/libc.so", "libc.so.6"}, symbols, "fix");
  ASSERT_NE(lib.handle, nullptr);
  EXPECT_NE(lib.path.find("libc"), std::string::npos);
  EXPECT_EQ(lib.symbols.size(), 2u);
  EXPECT_NE(lib.symbols[0], nullptr);
  close_library(lib);
  EXPECT_EQ(lib.handle, nullptr);
}

TEST(SharedLibrary, NotFoundNamesEveryPathTriedAndTheFix) {
  const char* symbols[] = {"cublasCreate_v2"};
  try {
    open_library("cuBLAS", {"/nonexistent/lib64/libcublas.so", "libc.so.6", "libcublas-does-not-exist.so.7"}, symbols,
                 "set LUDA_CUBLAS to the path of libcublas.so");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cuBLAS not found; tried:\n"
              "  /nonexistent/lib64/libcublas.so: no such file\n"
              "  libc.so.6: not cuBLAS (it has no cublasCreate_v2)\n"
              "  libcublas-does-not-exist.so.7: cannot open shared object file: No such file or directory\n"
              "set LUDA_CUBLAS to the path of libcublas.so");
  }
}

}  // namespace
}  // namespace luda

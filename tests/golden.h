// What the golden tests share (tests/dsl/golden_test.cpp, tests/jit/kinds/golden_test.cpp,
// tests/host/fuse_golden_test.cpp): a text compared with its file, which
// LUDA_UPDATE_GOLDEN=1 rewrites on purpose, and the part of a kind's program that a
// golden keeps.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace luda::test_support {

// Compares `text` with <folder>/<name>.cu (folder from the source root: tests/dsl/golden
// for kernels, tests/jit/golden for the kinds); with LUDA_UPDATE_GOLDEN=1 writes it there
// instead.
inline void check_golden(const std::string& folder, const std::string& name, const std::string& text) {
  const std::string path = std::string(LUDA_SOURCE_DIR) + "/" + folder + "/" + name + ".cu";
  const char* update = std::getenv("LUDA_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << "could not write " << path;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing: run with LUDA_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(text, expected.str()) << "the CUDA C++ of " << name << " changed; if that is intended, rerun with "
                                  << "LUDA_UPDATE_GOLDEN=1";
}

// A kind's golden, in tests/jit/golden/.
inline void check_kind_golden(const std::string& name, const std::string& text) {
  check_golden("tests/jit/golden", name, text);
}

// A kind's program (jit::KindSource::code) from the template's first line on: the element
// code and the template around it. What comes before, the target's prelude and the
// kinds' shared helpers, is left out, as tests/dsl/golden leaves the prelude out.
inline std::string kind_body(const std::string& code) {
  const std::string mark = "#line 1 \"luda_kind\"\n";
  const std::size_t at = code.find(mark);
  EXPECT_NE(at, std::string::npos) << "no " << mark << "in the kind's program:\n" << code;
  return at == std::string::npos ? code : code.substr(at);
}

}  // namespace luda::test_support

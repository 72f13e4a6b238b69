// docs/language.md's builtins section is generated from the builtin table
// (builtin_reference_markdown): this test fails when the two differ. To regenerate after
// changing the table, run the test with LUDA_UPDATE_DOCS=1; it rewrites the section in
// place (between the BEGIN and END markers) and passes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "dsl/builtins.h"

namespace luda::dsl {
namespace {

constexpr const char* kDocs = LUDA_SOURCE_DIR "/docs/language.md";
constexpr std::string_view kBegin =
    "<!-- BEGIN builtins: generated from dsl/builtins.cpp by builtin_reference_markdown(); "
    "regenerate with LUDA_UPDATE_DOCS=1 ctest -R LanguageDocs -->\n";
constexpr std::string_view kEnd = "<!-- END builtins -->\n";

std::string read_docs() {
  std::ifstream in(kDocs, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(LanguageDocs, BuiltinsSectionMatchesTheBuiltinTable) {
  const std::string docs = read_docs();
  ASSERT_FALSE(docs.empty()) << kDocs << " is missing or empty";
  const auto begin = docs.find(kBegin);
  ASSERT_NE(begin, std::string::npos) << kDocs << " lacks the line\n" << kBegin;
  const auto body = begin + kBegin.size();
  const auto end = docs.find(kEnd, body);
  ASSERT_NE(end, std::string::npos) << kDocs << " lacks the line\n" << kEnd;

  std::string generated = builtin_reference_markdown();
  if (!generated.empty() && generated.back() != '\n') generated += '\n';
  const std::string current = docs.substr(body, end - body);
  if (current == generated) return;

  const char* update = std::getenv("LUDA_UPDATE_DOCS");
  if (update && std::string(update) == "1") {
    std::ofstream out(kDocs, std::ios::binary | std::ios::trunc);
    out << docs.substr(0, body) << generated << docs.substr(end);
    ASSERT_TRUE(out.good()) << "could not write " << kDocs;
    return;
  }
  // Point at the first line that differs, so the failure says what changed.
  std::istringstream a(current), b(generated);
  std::string la, lb;
  int line = 1;
  while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
  FAIL() << kDocs << ": the builtins section differs from the builtin table at its line " << line
         << "\n  docs:      " << la << "\n  generated: " << lb
         << "\nRegenerate it: LUDA_UPDATE_DOCS=1 ctest -R LanguageDocs";
}

}  // namespace
}  // namespace luda::dsl

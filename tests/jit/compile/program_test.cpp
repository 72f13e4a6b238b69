// The program loader's disk-cache payload of a CUDA binary: what a second process reads
// back is what the first one compiled, lowered names included; damaged bytes are no
// binary (the loader then compiles again).
#include "jit/compile/program.h"
#include "jit/call/launch.h"

#include <gtest/gtest.h>

#include <random>

namespace luda::jit {
namespace {

CudaBinary random_binary(std::mt19937& rng, std::size_t names, bool cubin) {
  std::uniform_int_distribution<int> byte(0, 255), length(0, 40);
  auto text = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(byte(rng)));
    return s;
  };
  CudaBinary b;
  b.cubin = cubin;
  b.image = text(200 + length(rng));
  if (!cubin) b.image.push_back('\0');
  for (std::size_t i = 0; i < names; ++i) b.lowered_names.emplace(text(1 + length(rng)), text(1 + length(rng)));
  return b;
}

TEST(ProgramBinary, PayloadsReadBackAsWritten) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 50; ++trial) {
    CudaBinary b = random_binary(rng, static_cast<std::size_t>(trial % 4), trial % 3 != 0);
    std::string payload = detail::binary_payload(b);
    std::optional<CudaBinary> back = detail::binary_from_payload(payload);
    ASSERT_TRUE(back) << trial;
    EXPECT_EQ(back->image, b.image);
    EXPECT_EQ(back->cubin, b.cubin);
    EXPECT_EQ(back->lowered_names, b.lowered_names);
    if (b.lowered_names.empty()) {  // generated code's payload: a tag, then the image
      EXPECT_EQ(payload, std::string(1, b.cubin ? 'C' : 'P') + b.image);
    } else {
      // Cut anywhere inside the names, or with an unknown tag: no binary.
      std::uniform_int_distribution<std::size_t> cut(1, payload.size() - b.image.size() - 2);
      EXPECT_FALSE(detail::binary_from_payload(std::string_view(payload).substr(0, cut(rng)))) << trial;
    }
  }
  EXPECT_FALSE(detail::binary_from_payload(""));
  EXPECT_FALSE(detail::binary_from_payload("Xnot a binary"));
  EXPECT_FALSE(detail::binary_from_payload(std::string("N\x05\x00\x00\x00", 5)));
}

// A program's name expressions are part of its key; a generated program's key (none) is
// what it was before they were.
TEST(ProgramBinary, NameExpressionsChangeTheKey) {
  std::vector<std::string> options = {"-DN=4"}, none, names = {"scale<float>"}, other = {"scale<double>"};
  CacheKey plain = detail::binary_key("code", "", options, 90);
  EXPECT_EQ(detail::binary_key("code", "", options, 90, none), plain);
  EXPECT_FALSE(detail::binary_key("code", "", options, 90, names) == plain);
  EXPECT_FALSE(detail::binary_key("code", "", options, 90, names) ==
               detail::binary_key("code", "", options, 90, other));
  EXPECT_EQ(detail::binary_key("code", "", options, 90, names), detail::binary_key("code", "", options, 90, names));
}

}  // namespace
}  // namespace luda::jit

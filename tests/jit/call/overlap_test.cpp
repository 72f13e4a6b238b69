// The overlap step shared by every kernel kind: each rule is may_share_memory applied to
// the right pairs, checked here pair by pair on random views of one buffer.
#include "jit/call/overlap.h"

#include <gtest/gtest.h>

#include <random>

namespace luda::jit {
namespace {

constexpr std::optional<std::int64_t> N = std::nullopt;

// Views of one 8x6 buffer: rows from a random range, with a random step and direction.
std::vector<NDArray> random_views(std::mt19937& rng, const NDArray& base, int count) {
  std::uniform_int_distribution<int> row(0, 7), step(1, 3);
  std::vector<NDArray> out;
  for (int i = 0; i < count; ++i) {
    int a = row(rng), b = row(rng);
    std::vector<IndexItem> items;
    if (row(rng) % 2) items.push_back(Slice{std::min(a, b), std::max(a, b) + 1, step(rng)});
    else
      items.push_back(
          Slice{std::max(a, b), std::min(a, b) == 0 ? N : std::optional<std::int64_t>(std::min(a, b) - 1), -step(rng)});
    out.push_back(base.index(items));
  }
  return out;
}

TEST(Overlap, EveryRuleIsMayShareMemoryOnItsPairs) {
  std::mt19937 rng(5);
  NDArray base = NDArray::zeros({8, 6}, DType::Float32, Device::cpu());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<NDArray> in = random_views(rng, base, 3), outs = random_views(rng, base, 2);
    if (trial % 5 == 0) outs[1] = NDArray();  // an output not given
    std::vector<KernelArg> args = {KernelArg::of_array(in[0]), KernelArg::of_float(0.5), KernelArg::of_array(in[1]),
                                   KernelArg::of_array(in[2])};
    // cuda.jit: no two array arguments share memory
    bool disjoint = true;
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = i + 1; j < 3; ++j) disjoint = disjoint && !may_share_memory(in[i], in[j]);
    EXPECT_EQ(arrays_disjoint(args), disjoint) << trial;
    // kinds: the inputs that share memory with an output, and outputs that share it
    std::uint64_t want = 0;
    for (std::size_t k = 0; k < args.size(); ++k)
      for (const NDArray& o : outs)
        if (args[k].kind == KernelArg::Kind::Array && may_share_memory(*args[k].array, o))
          want |= std::uint64_t{1} << k;
    EXPECT_EQ(inputs_over_outputs(args, outs), want) << trial;
    auto pair = shared_outputs(outs);
    EXPECT_EQ(pair.has_value(), may_share_memory(outs[0], outs[1])) << trial;
    if (pair) {
      EXPECT_EQ(*pair, (std::pair<std::size_t, std::size_t>{0, 1}));
    }
  }
}

TEST(Overlap, CopiesAreFreshArraysOfTheSameValues) {
  NDArray base = NDArray::zeros({8}, DType::Int32, Device::cpu());
  for (std::int64_t i = 0; i < 8; ++i) base.set(std::vector<std::int64_t>{i}, Scalar::of_int(3 * i - 7, DType::Int32));
  IndexItem reversed[] = {Slice{N, N, -1}};
  NDArray view = base.index(reversed);
  std::vector<KernelArg> args = {KernelArg::of_array(base), KernelArg::of_int(4), KernelArg::of_array(view)};
  std::vector<NDArray> copies;
  std::vector<KernelArg> copied = with_copies(args, 0b100, copies, nullptr);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copied[0].array, &base);  // not in the mask: as given
  EXPECT_EQ(copied[1].i, 4);
  ASSERT_EQ(copied[2].array, &copies[0]);
  EXPECT_FALSE(may_share_memory(copies[0], base));
  EXPECT_TRUE(copies[0].is_c_contiguous());
  for (std::int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(copies[0].get(std::vector<std::int64_t>{i}), view.get(std::vector<std::int64_t>{i})) << i;
}

}  // namespace
}  // namespace luda::jit

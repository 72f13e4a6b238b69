// The kernels of NumPy's indexing (ops/device/index.h): the module compiles for a GPU with
// NVRTC (no GPU needed) with every entry, and on the cpu device the offsets (each mode,
// and the first index out of bounds), the gather, the scatter and argwhere give what a
// loop over the same layouts gives.
#include "ops/device/index.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "jit/raw/raw_module.h"
#include "tests/test_support.h"

namespace luda::ops::device {
namespace {

using test_support::host_values;

template <class T>
NDArray host_array(const std::vector<T>& values, const Shape& shape, DType dtype) {
  return NDArray::from_host(values.data(), shape, dtype, Device::cpu());
}

TEST(IndexKernels, CompileForAGpuWithEveryEntry) {
  jit::CompiledProgram ptx = index_module().compile_for(90, false);
  for (const char* entry : {"luda_index_offsets_int8", "luda_index_offsets_uint64", "luda_gather_1", "luda_gather_16",
                            "luda_scatter_2", "luda_scatter_8", "luda_nonzero_count", "luda_nonzero_write"})
    EXPECT_NE(ptx.image.find(std::string(".entry ") + entry), std::string::npos) << entry;
}

TEST(IndexKernels, OffsetsInEachModeAndTheFirstBadIndex) {
  // A target of 5 elements with stride 3; indices int16 of shape (2, 3), read transposed.
  const std::vector<std::int16_t> values = {0, -1, 4, 7, -6, 2};
  const NDArray index = host_array(values, {2, 3}, DType::Int16);
  const std::int64_t shape5[] = {5}, stride3[] = {3};
  const std::int64_t transposed[] = {1, 3};  // off's (3, 2) reads index[j, i]
  const NDArray off = NDArray::empty({3, 2}, DType::Int64, Device::cpu());
  const NDArray bad = NDArray::full({1}, Scalar::of_int(std::numeric_limits<std::int64_t>::max()), DType::Int64,
                                    Device::cpu());
  index_offsets(off, index, transposed, shape5, stride3, IndexMode::Wrap, false, bad);
  EXPECT_EQ(host_values<std::int64_t>(off), (std::vector<std::int64_t>{0, 6, 12, 12, 12, 6}));
  index_offsets(off, index, transposed, shape5, stride3, IndexMode::Clip, false, bad);
  EXPECT_EQ(host_values<std::int64_t>(off), (std::vector<std::int64_t>{0, 12, 0, 0, 12, 6}));
  EXPECT_EQ(host_values<std::int64_t>(bad)[0], std::numeric_limits<std::int64_t>::max());
  index_offsets(off, index, transposed, shape5, stride3, IndexMode::Raise, false, bad);
  EXPECT_EQ(host_values<std::int64_t>(bad)[0], 1);  // 7 at off's position 1; -6 (position 3) is later
}

TEST(IndexKernels, FlatIndicesIntoAStridedTarget) {
  // put's offsets: flat indices into a (2, 3) view with strides (1, 2), accumulated.
  const NDArray index = host_array(std::vector<std::uint8_t>{0, 1, 5}, {3}, DType::UInt8);
  const std::int64_t shape[] = {2, 3}, strides[] = {1, 2}, contiguous[] = {1};
  const NDArray off = host_array(std::vector<std::int64_t>{100, 100, 100}, {3}, DType::Int64);
  const NDArray bad = NDArray::full({1}, Scalar::of_int(std::numeric_limits<std::int64_t>::max()), DType::Int64,
                                    Device::cpu());
  index_offsets(off, index, contiguous, shape, strides, IndexMode::Raise, true, bad);
  EXPECT_EQ(host_values<std::int64_t>(off), (std::vector<std::int64_t>{100, 102, 105}));
}

TEST(IndexKernels, GatherAndScatterThroughOffsets) {
  // src rows 0..3 of 4 floats; the result (2, 2): rows off[i] (0 or 2), columns 3 and 1.
  std::vector<float> data(16);
  for (int i = 0; i < 16; ++i) data[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const NDArray src = host_array(data, {16}, DType::Float32);
  const NDArray off = host_array(std::vector<std::int64_t>{8, 0}, {2}, DType::Int64);
  const std::int64_t shape[] = {2, 2}, src_strides[] = {0, -2}, off_strides[] = {1, 0};
  const NDArray base = NDArray::view(src.buffer(), DType::Float32, {}, {}, 3);
  const NDArray out = NDArray::empty({2, 2}, DType::Float32, Device::cpu());
  gather(out, base, off, shape, src_strides, off_strides);
  EXPECT_EQ(host_values<float>(out), (std::vector<float>{11, 9, 3, 1}));
  // The reverse, with a value broadcast along the first axis; repeats keep the last.
  const NDArray value = host_array(std::vector<float>{-1, -2}, {2}, DType::Float32);
  const std::int64_t value_strides[] = {0, 1};
  scatter(base, value, off, shape, src_strides, off_strides, value_strides);
  std::vector<float> after = host_values<float>(src);
  EXPECT_EQ(after[11], -1);
  EXPECT_EQ(after[9], -2);
  EXPECT_EQ(after[3], -1);
  EXPECT_EQ(after[1], -2);
  const NDArray twice = host_array(std::vector<std::int64_t>{4, 4, 4}, {3}, DType::Int64);
  const NDArray three = host_array(std::vector<float>{7, 8, 9}, {3}, DType::Float32);
  const std::int64_t one[] = {3}, none[] = {0}, step[] = {1};
  scatter(NDArray::view(src.buffer(), DType::Float32, {}, {}, 0), three, twice, one, none, step, step);
  EXPECT_EQ(host_values<float>(src)[4], 9);
}

TEST(IndexKernels, ArgwhereInCOrderAcrossChunks) {
  // 1000 elements in chunks of 64: the coordinates of every seventh, in order.
  std::vector<std::uint8_t> mask(1000);
  std::vector<std::int64_t> want;
  for (int i = 0; i < 1000; ++i) {
    mask[static_cast<std::size_t>(i)] = i % 7 == 0 ? 3 : 0;  // any nonzero byte is true
    if (i % 7 == 0) {
      want.push_back(i / 40);
      want.push_back(i % 40);
    }
  }
  const NDArray where = argwhere(host_array(mask, {25, 40}, DType::Bool));
  EXPECT_EQ(where.shape(), (Shape{static_cast<std::int64_t>(want.size() / 2), 2}));
  EXPECT_EQ(host_values<std::int64_t>(where), want);
  EXPECT_EQ(argwhere(host_array(std::vector<std::uint8_t>{0, 0}, {2}, DType::Bool)).shape(), (Shape{0, 1}));
}

}  // namespace
}  // namespace luda::ops::device

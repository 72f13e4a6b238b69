// Arrays as PNG pictures (ops/image.h): each picture read back by libpng (linked by this
// test only) and its pixels checked against values computed here, and against
// matplotlib's viridis table at its ends and middle.
#include "ops/image.h"

#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/error.h"

namespace luda::ops {
namespace {

struct Picture {
  unsigned width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  // every picture read as RGBA
  const std::uint8_t* at(unsigned x, unsigned y) const { return &rgba[(y * width + x) * 4]; }
};

Picture decode(const std::string& png) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_memory(&image, png.data(), png.size())) << image.message;
  image.format = PNG_FORMAT_RGBA;
  Picture p;
  p.width = image.width;
  p.height = image.height;
  p.rgba.resize(PNG_IMAGE_SIZE(image));
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, p.rgba.data(), 0, nullptr)) << image.message;
  return p;
}

NDArray filled(const Shape& shape, DType dtype, const std::vector<double>& values) {
  NDArray x = NDArray::empty(shape, dtype, Device::cpu());
  NDArray f = NDArray::empty(shape, DType::Float64, Device::cpu());
  std::memcpy(f.data(), values.data(), values.size() * sizeof(double));
  x.assign(f);
  return x;
}

TEST(Image, GrayMapsTheRangeOntoBlackToWhiteAndNanIsTransparent) {
  NDArray x = filled({2, 3}, DType::Float64, {0, 1, 2, 3, 4, NAN});
  ImageOptions o;
  o.cmap = "gray";
  Picture p = decode(png_of(x, o));
  ASSERT_EQ(p.width, 3u);
  ASSERT_EQ(p.height, 2u);
  const int want[5] = {0, 64, 128, 191, 255};  // round(255 * v / 4)
  for (int i = 0; i < 5; ++i) {
    const std::uint8_t* px = p.at(static_cast<unsigned>(i % 3), static_cast<unsigned>(i / 3));
    EXPECT_EQ(px[0], want[i]) << i;
    EXPECT_EQ(px[1], want[i]) << i;
    EXPECT_EQ(px[3], 255) << i;
  }
  EXPECT_EQ(p.at(2, 1)[3], 0);  // NaN
  o.vmin = 1;
  o.vmax = 2;  // clipped outside [1, 2]
  Picture q = decode(png_of(x, o));
  EXPECT_EQ(q.at(0, 0)[0], 0);
  EXPECT_EQ(q.at(1, 1)[0], 255);
}

TEST(Image, ViridisFollowsMatplotlibsTable) {
  // matplotlib's viridis at 0, 0.5 and 1 (its _viridis_data rows 0, 128 and 255).
  const double table[3][3] = {{0.267004, 0.004874, 0.329415},
                              {0.127568, 0.566949, 0.550556},
                              {0.993248, 0.906157, 0.143936}};
  NDArray x = filled({1, 3}, DType::Float32, {0, 0.5, 1});
  Picture p = decode(png_of(x, ImageOptions{}));
  for (unsigned i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(p.at(i, 0)[k], 255 * table[i][k], 5.0) << i << " " << k;
}

TEST(Image, ChannelsAreTakenAsTheyAre) {
  NDArray rgb = filled({1, 2, 3}, DType::UInt8, {10, 20, 30, 200, 100, 0});
  Picture p = decode(png_of(rgb, ImageOptions{}));
  ASSERT_EQ(p.width, 2u);
  EXPECT_EQ(p.at(0, 0)[0], 10);
  EXPECT_EQ(p.at(0, 0)[2], 30);
  EXPECT_EQ(p.at(1, 0)[0], 200);
  EXPECT_EQ(p.at(1, 0)[3], 255);
  NDArray rgba = filled({1, 1, 4}, DType::Float64, {1.0, 0.5, -1.0, 0.25});  // 0 to 1, clipped
  Picture q = decode(png_of(rgba, ImageOptions{}));
  EXPECT_EQ(q.at(0, 0)[0], 255);
  EXPECT_EQ(q.at(0, 0)[1], 128);
  EXPECT_EQ(q.at(0, 0)[2], 0);
  EXPECT_EQ(q.at(0, 0)[3], 64);
}

TEST(Image, RefusesWhatHasNoPicture) {
  auto message = [](const NDArray& x, ImageOptions o = {}) {
    try {
      png_of(x, o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(NDArray::empty({2, 3, 5}, DType::Float32, Device::cpu())),
            "image: give a 2-d array, or a 3-d one of 3 or 4 channels (RGB, RGBA); got shape (2, 3, 5)");
  EXPECT_EQ(message(NDArray::empty({4}, DType::Float32, Device::cpu())),
            "image: give a 2-d array, or a 3-d one of 3 or 4 channels (RGB, RGBA); got shape (4,)");
  EXPECT_EQ(message(NDArray::empty({0, 3}, DType::Float32, Device::cpu())),
            "image: an empty array has no picture (shape (0, 3))");
  EXPECT_EQ(message(NDArray::empty({2, 2}, DType::Complex64, Device::cpu())),
            "image: complex arrays have no picture; show luda.abs(x) or luda.real(x)");
  ImageOptions jet;
  jet.cmap = "jet";
  EXPECT_EQ(message(filled({1, 1}, DType::Float64, {1}), jet), "image: unknown colormap 'jet'; give viridis or gray");
}

}  // namespace
}  // namespace luda::ops

#include "ops/image.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/error.h"
#include "runtime/shared_library.h"

namespace luda::ops {
namespace {

// libpng, loaded with dlopen at the first picture (LUDA_LIBPNG names the file), as luda
// loads its other libraries: the simplified API's writer is all it takes.
struct Png {
  SharedLibrary lib;
  decltype(&::png_image_write_to_memory) write_to_memory = nullptr;
};

Png load_png() {
  LibrarySearch search{"LUDA_LIBPNG", "libpng16.so", false, {"libpng16.so.16", "libpng16.so"}};
  static const char* const symbols[] = {"png_image_write_to_memory"};
  Png p;
  p.lib = open_library("libpng", library_candidates(search), symbols,
                       "install it (Debian: apt-get install libpng16-16), or name the file in LUDA_LIBPNG");
  p.write_to_memory = reinterpret_cast<decltype(&::png_image_write_to_memory)>(p.lib.symbols[0]);
  return p;
}

std::string shape_text(const NDArray& x) {
  std::string s = "(";
  for (int a = 0; a < x.ndim(); ++a) s += (a ? ", " : "") + std::to_string(x.shape()[static_cast<std::size_t>(a)]);
  return s + (x.ndim() == 1 ? ",)" : ")");
}

std::uint8_t byte_of(double v) { return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0)); }

}  // namespace

std::array<double, 3> colormap(const std::string& name, double t) {
  t = std::clamp(t, 0.0, 1.0);
  if (name == "gray" || name == "grey") return {t, t, t};
  // matplotlib's viridis as the degree-6 polynomial fit of Matt Zucker (CC0): within 1/255
  // of the table in each channel but at the very top of blue.
  static constexpr double c[7][3] = {
      {0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
      {0.1050930431085774, 1.404613529898575, 1.384590162594685},
      {-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
      {-4.634230498983486, -5.799100973351585, -19.33244095627987},
      {6.228269936347081, 14.17993336680509, 56.69055260068105},
      {4.776384997670288, -13.74514537774601, -65.35303263337234},
      {-5.435455855934631, 4.645852612178535, 26.3124352495832},
  };
  std::array<double, 3> rgb{};
  for (int k = 0; k < 3; ++k) {
    double v = c[6][k];
    for (int d = 5; d >= 0; --d) v = c[d][k] + t * v;
    rgb[static_cast<std::size_t>(k)] = std::clamp(v, 0.0, 1.0);
  }
  return rgb;
}

std::string png_of(const NDArray& x, const ImageOptions& o) {
  const bool channels = x.ndim() == 3 && (x.shape()[2] == 3 || x.shape()[2] == 4);
  if (x.ndim() != 2 && !channels)
    fail("image: give a 2-d array, or a 3-d one of 3 or 4 channels (RGB, RGBA); got shape {}", shape_text(x));
  if (x.size() == 0) fail("image: an empty array has no picture (shape {})", shape_text(x));
  if (is_complex(x.dtype())) fail("image: complex arrays have no picture; show luda.abs(x) or luda.real(x)");
  if (o.cmap != "viridis" && o.cmap != "gray" && o.cmap != "grey")
    fail("image: unknown colormap '{}'; give viridis or gray", o.cmap);
  const auto h = static_cast<std::size_t>(x.shape()[0]), w = static_cast<std::size_t>(x.shape()[1]);
  const std::size_t n = channels ? static_cast<std::size_t>(x.shape()[2]) : 4;
  std::vector<std::uint8_t> pixels(h * w * n);
  if (channels && x.dtype() == DType::UInt8) {
    NDArray host = x.to(Device::cpu()).contiguous();
    const auto* p = static_cast<const std::uint8_t*>(host.data());
    std::copy(p, p + pixels.size(), pixels.begin());
  } else {
    NDArray host = x.astype(DType::Float64).to(Device::cpu());
    const auto* v = static_cast<const double*>(host.data());
    if (channels) {
      for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = byte_of(std::isnan(v[i]) ? 0.0 : v[i]);
    } else {
      double lo = INFINITY, hi = -INFINITY;
      for (std::size_t i = 0; i < h * w; ++i)
        if (std::isfinite(v[i])) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
      if (o.vmin) lo = *o.vmin;
      if (o.vmax) hi = *o.vmax;
      if (!(lo <= hi) && std::isfinite(lo) && std::isfinite(hi)) fail("image: vmin {} is above vmax {}", lo, hi);
      for (std::size_t i = 0; i < h * w; ++i) {
        std::uint8_t* px = &pixels[i * 4];
        if (std::isnan(v[i])) {
          px[0] = px[1] = px[2] = px[3] = 0;
          continue;
        }
        // One value everywhere (hi == lo) sits at the colormap's middle, as matplotlib's.
        double t = hi > lo ? (v[i] - lo) / (hi - lo) : 0.5;
        auto rgb = colormap(o.cmap, t);
        for (int k = 0; k < 3; ++k) px[k] = byte_of(rgb[static_cast<std::size_t>(k)]);
        px[3] = 255;
      }
    }
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(w);
  image.height = static_cast<png_uint_32>(h);
  image.format = n == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
  const Png& png = load_once(load_png);
  png_alloc_size_t size = 0;
  if (!png.write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr))
    fail("image: libpng cannot write it: {}", image.message);
  std::string out(size, '\0');
  if (!png.write_to_memory(&image, out.data(), &size, 0, pixels.data(), 0, nullptr))
    fail("image: libpng cannot write it: {}", image.message);
  out.resize(size);
  return out;
}

}  // namespace luda::ops

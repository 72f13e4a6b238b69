// Arrays as pictures: a PNG of a 2-d array through a colormap, or of a 3-d one's RGB or RGBA
// channels (luda.display.image, docs/notebooks.md), written by libpng.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "runtime/ndarray.h"

namespace luda::ops {

struct ImageOptions {
  std::string cmap = "viridis";      // a 2-d array's colormap: "viridis", "gray" (or "grey")
  std::optional<double> vmin, vmax;  // the values mapped to the colormap's ends (default: the finite min and max)
};

// The PNG file's bytes for x (any device): 2-d (height, width) through the colormap,
// each value clipped to [vmin, vmax] and NaN transparent; 3-d (height, width, 3 or 4):
// RGB or RGBA, uint8 as it is, other real dtypes read as 0 to 1 (clipped) and scaled to 255.
// Errors: "image: give a 2-d array, or a 3-d one of 3 or 4 channels (RGB, RGBA); got shape
// (2, 3, 5)"; "image: an empty array has no picture"; complex arrays; "image: unknown
// colormap 'jet'; give viridis or gray"; vmin above vmax.
std::string png_of(const NDArray& x, const ImageOptions& options);

// The colormap's color at t in [0, 1], each channel in [0, 1].
std::array<double, 3> colormap(const std::string& name, double t);

}  // namespace luda::ops

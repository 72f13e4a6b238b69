// Plots and graph drawings made by the programs that Debian has for them: gnuplot (line and
// scatter plots, luda.display.plot) and Graphviz's dot (a recorded graph's DAG,
// luda.display.graph). Each is run as a program on files luda writes; its SVG comes back.
#pragma once

#include <string>
#include <vector>

#include "runtime/ndarray.h"

namespace luda::ops {

struct PlotOptions {
  std::string kind = "line";  // "line" or "scatter"
  std::string title, xlabel, ylabel;
  int width = 640, height = 400;  // pixels
};

// An SVG plot of y against x (x empty: 0, 1, ...), each 1-d of one length, any real dtype
// and device, by gnuplot (`gnuplot` on PATH, or LUDA_GNUPLOT).
// Errors: "plot: y must be 1-d, got shape (2, 3)"; "plot: x has 4 values and y 5";
// "plot: gnuplot is not installed (apt-get install gnuplot-nox), or name it in LUDA_GNUPLOT".
std::string plot_svg(const NDArray* x, const NDArray& y, const PlotOptions& options);

// The SVG drawing of a Graphviz text (`dot` on PATH, or LUDA_DOT).
// Error: "graph: Graphviz's dot is not installed (apt-get install graphviz), or name it in LUDA_DOT".
std::string dot_svg(const std::string& dot);

}  // namespace luda::ops

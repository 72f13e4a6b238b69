#include "ops/plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/error.h"

namespace luda::ops {
namespace {

// A temporary file holding `text`, removed with the object.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/luda-plot-XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0) fail("plot: cannot make a temporary file in /tmp");
    path = name;
    std::size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    close(fd);
    if (done != text.size()) fail("plot: cannot write {}", path);
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// A file name quoted for the shell.
std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `program` (an environment variable's value, else `fallback`) on `file` with `args`;
// returns what it writes to stdout. `missing` is the error when it does not run.
std::string run(const char* env, const char* fallback, const std::string& args, const std::string& file,
                const std::string& who, const std::string& missing) {
  const char* chosen = std::getenv(env);
  std::string program = chosen && *chosen ? chosen : fallback;
  std::string command = shell_quoted(program) + " " + args + " " + shell_quoted(file) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) fail("{}: {}", who, missing);
  std::string out;
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  int status = pclose(pipe);
  if (status != 0 || out.find("<svg") == std::string::npos) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) fail("{}: {}", who, missing);
    fail("{}: {} failed: {}", who, program, out.substr(0, 400));
  }
  return out.substr(out.find("<?xml") != std::string::npos ? out.find("<?xml") : out.find("<svg"));
}

std::string shape_text(const NDArray& x) {
  std::string s = "(";
  for (int a = 0; a < x.ndim(); ++a) s += (a ? ", " : "") + std::to_string(x.shape()[static_cast<std::size_t>(a)]);
  return s + (x.ndim() == 1 ? ",)" : ")");
}

// A gnuplot string literal: single quotes, a quote doubled.
std::string gnuplot_text(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::vector<double> values(const NDArray& v, const char* name) {
  if (v.ndim() != 1) fail("plot: {} must be 1-d, got shape {}", name, shape_text(v));
  if (is_complex(v.dtype())) fail("plot: {} is complex; plot luda.real or luda.abs of it", name);
  NDArray host = v.astype(DType::Float64).to(Device::cpu());
  const auto* p = static_cast<const double*>(host.data());
  return std::vector<double>(p, p + host.size());
}

}  // namespace

std::string plot_svg(const NDArray* x, const NDArray& y, const PlotOptions& o) {
  if (o.kind != "line" && o.kind != "scatter") fail("plot: kind is 'line' or 'scatter', got '{}'", o.kind);
  std::vector<double> ys = values(y, "y"), xs;
  if (x) {
    xs = values(*x, "x");
    if (xs.size() != ys.size()) fail("plot: x has {} values and y {}", xs.size(), ys.size());
  } else {
    for (std::size_t i = 0; i < ys.size(); ++i) xs.push_back(static_cast<double>(i));
  }
  if (ys.empty()) fail("plot: y is empty: nothing to plot");
  std::string data;
  for (std::size_t i = 0; i < ys.size(); ++i) {
    if (std::isnan(xs[i]) || std::isnan(ys[i])) {
      data += "\n";  // a gap in the line
      continue;
    }
    char line[80];
    std::snprintf(line, sizeof line, "%.17g %.17g\n", xs[i], ys[i]);
    data += line;
  }
  TempFile points(data);
  std::string script =
      fmt::format("set terminal svg size {},{} dynamic enhanced font 'sans,11' background rgb 'white'\n"
                  "set output\nunset key\nset grid\n",
                  o.width, o.height);
  if (!o.title.empty()) script += "set title " + gnuplot_text(o.title) + "\n";
  if (!o.xlabel.empty()) script += "set xlabel " + gnuplot_text(o.xlabel) + "\n";
  if (!o.ylabel.empty()) script += "set ylabel " + gnuplot_text(o.ylabel) + "\n";
  script += "plot " + gnuplot_text(points.path) +
            (o.kind == "line" ? " using 1:2 with lines lw 2 lc rgb '#1f77b4'\n"
                              : " using 1:2 with points pt 7 ps 0.6 lc rgb '#1f77b4'\n");
  TempFile program(script);
  return run("LUDA_GNUPLOT", "gnuplot", "", program.path, "plot",
             "gnuplot is not installed (apt-get install gnuplot-nox), or name it in LUDA_GNUPLOT");
}

std::string dot_svg(const std::string& dot) {
  TempFile text(dot);
  return run("LUDA_DOT", "dot", "-Tsvg", text.path, "graph",
             "Graphviz's dot is not installed (apt-get install graphviz), or name it in LUDA_DOT");
}

}  // namespace luda::ops

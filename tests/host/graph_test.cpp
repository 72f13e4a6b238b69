// luda::Graph as a host uses it (only the public headers): a small pipeline recorded from
// C++, its hazard edges against the ones luda.graph records for the same work in Lua and
// against the edges the data imply, its replays against the same computation in plain
// C++ on fresh random inputs, and its refusals by their exact text. On the cpu device,
// and on cuda:0 too where a GPU is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "luda/luda.h"

namespace {

std::vector<luda::Device> devices() {
  std::vector<luda::Device> out{luda::Device::cpu()};
  if (luda::cuda_device_count() > 0) out.push_back(luda::Device::cuda(0));
  return out;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4, 4);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// The edge lines of Graphviz text ("  n0 -> n2 [label=...];"), in order.
std::string edge_lines(const std::string& dot) {
  std::istringstream in(dot);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find(" -> ") != std::string::npos) out += line + "\n";
  return out;
}

// Each node as "kind after a,b": the node's kind and the nodes it waits for, 0-based.
std::string shape_of(const std::vector<luda::Graph::Node>& nodes) {
  std::string out;
  for (const luda::Graph::Node& n : nodes) {
    out += n.kind + " after";
    for (std::size_t j = 0; j < n.after.size(); ++j) out += (j ? "," : " ") + std::to_string(n.after[j]);
    out += "\n";
  }
  return out;
}

// The pipeline, in C++ and in Lua: two independent kernels, a third on both their
// results, and a copy of that into a float64 array (a conversion).
constexpr std::int64_t kN = 1000;

struct Pipeline {
  luda::ElementwiseKernel square{"T x", "T a", "a = x * x + 1", "square"};
  luda::Vectorize affine{"function(y) return 2 * y - 3 end"};
  luda::ElementwiseKernel product{"T a, T b", "T c", "c = a * b", "product"};

  std::vector<luda::Array> operator()(const std::vector<luda::Array>& in) const {
    luda::Array a = square({in[0]})[0];
    luda::Array b = affine({in[1]})[0];
    luda::Array c = product({a, b})[0];
    luda::Array d = luda::Array::empty(c.shape(), luda::DType::Float64, c.device());
    d.assign(c);
    return {c, d};
  }
};

constexpr char kLuaPipeline[] = R"lua(
  local square = luda.elementwise("T x", "T a", "a = x * x + 1", "square")
  local affine = luda.vectorize(function(y) return 2 * y - 3 end)
  local product = luda.elementwise("T a, T b", "T c", "c = a * b", "product")
  local function pipeline(x, y)
    local a = square(x)
    local b = affine(y)
    local c = product(a, b)
    local d = luda.empty(c.shape, "float64", {device = dev})
    luda.copyto(d, c)
    return c, d
  end
  local x = luda.zeros(n, "float32", {device = dev})
  local y = luda.zeros(n, "float32", {device = dev})
  local g = luda.graph(pipeline, x, y)
  local lines, nodes = {}, {}
  for line in g:dot():gmatch("[^\n]+") do
    if line:find(" -> ", 1, true) then lines[#lines + 1] = line .. "\n" end
  end
  for _, node in ipairs(g:nodes()) do
    local after = {}
    for j, k in ipairs(node.after) do after[j] = tostring(k - 1) end
    nodes[#nodes + 1] = node.kind .. " after" .. (#after > 0 and " " .. table.concat(after, ",") or "") .. "\n"
  end
  return table.concat(lines), table.concat(nodes)
)lua";

TEST(Graph, RecordsThePipelineWithTheEdgesLuaRecordsAndReplaysItOnNewArrays) {
  for (luda::Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Pipeline pipeline;
    const std::vector<float> x0 = random_floats(kN, 1), y0 = random_floats(kN, 2);
    const luda::Array ex = luda::Array::copy_of(x0, dev), ey = luda::Array::copy_of(y0, dev);
    luda::Graph g(pipeline, {ex, ey}, "pipeline");

    // Recorded, not run: the examples are as they were, and the edges are the data's.
    EXPECT_EQ(ex.to_vector<float>(), x0);
    EXPECT_EQ(ey.to_vector<float>(), y0);
    ASSERT_EQ(g.node_count(), 4u);
    EXPECT_EQ(g.edge_count(), 3u);
    const std::vector<luda::Graph::Node> nodes = g.nodes();
    EXPECT_EQ(nodes[0].name, "elementwise 'square'");
    EXPECT_EQ(nodes[2].name, "elementwise 'product'");
    // The conversion: the host's on the cpu, the copy kernel's on a GPU.
    const std::string copy = dev.is_cpu() ? "host" : "kernel";
    EXPECT_EQ(shape_of(nodes), "kernel after\nkernel after\nkernel after 0,1\n" + copy + " after 2\n");
    EXPECT_EQ(edge_lines(g.dot()), "  n1 -> n2 [label=\"new array 4 (read after write)\"];\n"
                                   "  n0 -> n2 [label=\"new array 3 (read after write)\"];\n"
                                   "  n2 -> n3 [label=\"new array 5 (read after write)\"];\n");
    EXPECT_EQ(g.dot().rfind("digraph \"pipeline\" {\n", 0), 0u);

    // The same work recorded by luda.graph in Lua: the same nodes and edges.
    {
      luda::Engine lua;
      lua.set("n", kN);
      lua.set("dev", dev.str());
      std::vector<luda::Value> got = lua.run(kLuaPipeline, "=pipeline.lua");
      ASSERT_EQ(got.size(), 2u);
      EXPECT_EQ(got[0].as_string(), edge_lines(g.dot()));
      EXPECT_EQ(got[1].as_string(), shape_of(nodes));
    }

    // Replays on fresh random arrays, against the same arithmetic in C++.
    for (unsigned seed : {3u, 5u}) {
      const std::vector<float> x = random_floats(kN, seed), y = random_floats(kN, seed + 1);
      std::vector<luda::Array> out = g({luda::Array::copy_of(x, dev), luda::Array::copy_of(y, dev)});
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].dtype(), luda::DType::Float32);
      EXPECT_EQ(out[1].dtype(), luda::DType::Float64);
      EXPECT_EQ(out[0].device(), dev);
      const std::vector<float> c = out[0].to_vector<float>();
      const std::vector<double> d = out[1].to_vector<double>();
      ASSERT_EQ(c.size(), x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        const float want = (x[i] * x[i] + 1.0f) * (2.0f * y[i] - 3.0f);
        EXPECT_NEAR(c[i], want, 1e-5f * std::max(1.0f, std::fabs(want))) << i;
        EXPECT_EQ(d[i], static_cast<double>(c[i])) << i;
      }
    }
    EXPECT_EQ(g.replays(), 2u);

    // Into the caller's arrays, in the order the function returns them.
    const std::vector<float> x = random_floats(kN, 9), y = random_floats(kN, 10);
    luda::Array c = luda::Array::empty({kN}, luda::DType::Float32, dev);
    luda::Array d = luda::Array::empty({kN}, luda::DType::Float64, dev);
    std::vector<luda::Array> out = g({luda::Array::copy_of(x, dev), luda::Array::copy_of(y, dev)}, {c, d});
    EXPECT_EQ(out[0].data(), c.data());
    EXPECT_EQ(out[1].data(), d.data());
    const std::vector<double> dv = d.to_vector<double>();
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = (x[i] * x[i] + 1.0) * (2.0 * y[i] - 3.0);
      EXPECT_NEAR(dv[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << i;
    }
  }
}

TEST(Graph, ReplayWithOtherShapesOrDtypesIsRefused) {
  for (luda::Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Pipeline pipeline;
    const luda::Array x = luda::Array::zeros({kN}, luda::DType::Float32, dev);
    luda::Graph g(pipeline, {x, x.copy()});
    const std::string on = dev.str();
    EXPECT_EQ(what_of([&] {
                g({luda::Array::zeros({kN - 1}, luda::DType::Float32, dev), x.copy()});
              }),
              "luda::Graph: argument 1 is float32 (999,) on " + on +
                  ", but the graph was recorded with float32 (1000,) on " + on +
                  "; replay it with arrays of the recorded dtypes, shapes and devices, or record another luda::Graph "
                  "for these");
    EXPECT_EQ(what_of([&] {
                g({x.copy(), luda::Array::zeros({kN}, luda::DType::Float64, dev)});
              }),
              "luda::Graph: argument 2 is float64 (1000,) on " + on +
                  ", but the graph was recorded with float32 (1000,) on " + on +
                  "; replay it with arrays of the recorded dtypes, shapes and devices, or record another luda::Graph "
                  "for these");
    EXPECT_EQ(what_of([&] { g({x}); }), "luda::Graph: 1 array given; the graph was recorded with 2");
    // The same dtype and shape, other strides: every other element of an array twice as long.
    const luda::Array twice = luda::Array::zeros({2 * kN}, luda::DType::Float32, dev);
    const luda::Array every_other = luda::Array::wrap(twice.data(), {kN}, luda::DType::Float32, dev, {2});
    EXPECT_EQ(what_of([&] {
                g({every_other, x.copy()});
              }),
              "luda::Graph: argument 1 has strides (2,), but the graph was recorded with strides (1,); replay it with "
              "arrays laid out as the recorded ones (copy() makes a C-contiguous one), or record another luda::Graph "
              "for these");
    // Nothing ran for the refused calls.
    EXPECT_EQ(g.replays(), 0u);
  }
}

TEST(Graph, AnOperationThatNeedsAHostResultIsRefusedWhileRecording) {
  for (luda::Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    luda::ElementwiseKernel square("T x", "T y", "y = x * x", "square");
    const std::vector<float> v = random_floats(16, 7);
    const luda::Array x = luda::Array::copy_of(v, dev);
    auto reads = [&](const std::vector<luda::Array>& in) {
      luda::Array y = square({in[0]})[0];
      std::vector<float> host = y.to_vector<float>();  // has not run: refused
      return std::vector<luda::Array>{y};
    };
    EXPECT_EQ(what_of([&] { luda::Graph g(reads, {x}); }),
              "reading an array's values needs a result on the host, but a graph is being recorded and its work has "
              "not run; return the arrays from the recorded function and read them after the graph runs");
    // The recording ended with the error: the same kernel runs again at once.
    const std::vector<float> y = square({x})[0].to_vector<float>();
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(y[i], v[i] * v[i]) << i;
  }
}

}  // namespace

// luda::Graph (luda/luda.h): a C++ callable's luda work recorded and replayed by
// runtime/graph/'s Variant, as luda.graph records a Lua function's. A C++ graph keeps the
// one variant it recorded: a call with other arrays is an error, not a new recording.
#include <optional>

#include "api/internal.h"
#include "ops/device/copy.h"
#include "runtime/error.h"
#include "runtime/graph/recording.h"
#include "runtime/graph/variant.h"

namespace luda {

struct Graph::Impl {
  std::string name;
  Variant variant;
};

namespace {

constexpr char kWho[] = "luda::Graph";

// The library's arrays of `arrays`; Error for an empty one (`what` says which list).
std::vector<NDArray> ndarrays_of(const std::vector<Array>& arrays, std::string_view who, std::string_view what) {
  std::vector<NDArray> out;
  out.reserve(arrays.size());
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (!arrays[i].valid())
      fail("{}: {} {} is an empty array (a default-constructed luda::Array); make or wrap one first", who, what, i + 1);
    out.push_back(arrays[i].ndarray());
  }
  return out;
}

// Error unless `args` are arrays as the recorded variant's arguments were.
void check_arguments(const Variant& v, const std::vector<NDArray>& args, std::string_view who) {
  const std::vector<ArgKey>& recorded = v.key();
  if (args.size() != recorded.size())
    fail("{}: {} array{} given; the graph was recorded with {}", who, args.size(), args.size() == 1 ? "" : "s",
         recorded.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgKey k = ArgKey::of(args[i]);
    const ArgKey& was = recorded[i];
    if (k == was) continue;
    if (k.dtype == was.dtype && k.shape == was.shape && k.device == was.device)
      fail("{}: argument {} has strides {}, but the graph was recorded with strides {}; replay it with arrays laid "
           "out as the recorded ones (copy() makes a C-contiguous one), or record another luda::Graph for these",
           who, i + 1, shape_str(k.strides), shape_str(was.strides));
    fail("{}: argument {} is {}, but the graph was recorded with {}; replay it with arrays of the recorded dtypes, "
         "shapes and devices, or record another luda::Graph for these",
         who, i + 1, k.str(), was.str());
  }
  if (shared_arguments(args) != v.shared())
    fail("{}: the arguments share memory otherwise than the recorded ones did; arguments that viewed one buffer "
         "must view one again, at the same distance, and no others may",
         who);
}

std::vector<Array> replay(Variant& variant, const std::vector<Array>& args, const std::vector<Array>& outputs,
                          const Stream& stream, bool wait, std::string_view who) {
  if (GraphRecording::active()) GraphRecording::refuse_nested(kWho);
  const std::vector<NDArray> in = ndarrays_of(args, who, "argument");
  check_arguments(variant, in, who);
  const std::vector<NDArray> outs = ndarrays_of(outputs, who, "output");
  std::vector<NDArray> results = variant.replay(in, outs, stream ? &stream : nullptr, wait, who);
  std::vector<Array> out;
  out.reserve(results.size());
  for (NDArray& a : results) out.emplace_back(std::move(a));
  return out;
}

}  // namespace

Graph::Graph(Function fn, const std::vector<Array>& examples, std::string name) {
  if (!fn) fail("{}: the function is empty; give the callable to record", kWho);
  ops::device::install_device_assign();
  const std::vector<NDArray> args = ndarrays_of(examples, kWho, "example");
  std::vector<ArgKey> key;
  for (const NDArray& a : args) key.push_back(ArgKey::of(a));
  auto call = [&]() -> std::optional<std::vector<NDArray>> {
    std::vector<NDArray> returned;
    for (const Array& a : fn(examples)) returned.push_back(a.ndarray());
    return returned;
  };
  std::optional<Variant> v = Variant::record(std::move(key), args, call, nullptr, kWho);
  impl_ = std::make_shared<Impl>(Impl{std::move(name), std::move(*v)});
}

std::vector<Array> Graph::operator()(const std::vector<Array>& args, std::vector<Array> outputs,
                                     const Stream& stream) const {
  return replay(impl_->variant, args, outputs, stream, true, kWho);
}

std::vector<Array> Graph::launch(const std::vector<Array>& args, std::vector<Array> outputs,
                                 const Stream& stream) const {
  return replay(impl_->variant, args, outputs, stream, false, "luda::Graph::launch");
}

std::size_t Graph::node_count() const { return impl_->variant.graph().graph.nodes().size(); }
std::size_t Graph::edge_count() const { return impl_->variant.graph().graph.edges().size(); }
std::uint64_t Graph::replays() const { return impl_->variant.graph().replays; }
std::string Graph::dot() const { return impl_->variant.graph().graph.dot(impl_->name); }

std::vector<Graph::Node> Graph::nodes() const {
  const TaskGraph& t = impl_->variant.graph().graph;
  std::vector<Node> out;
  for (std::size_t i = 0; i < t.nodes().size(); ++i)
    out.push_back(Node{node_kind_name(t.nodes()[i].kind), t.nodes()[i].name, t.predecessors(i)});
  return out;
}

}  // namespace luda

#include "runtime/graph/variant.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/graph/recording.h"
#include "runtime/memory.h"

namespace luda {

ArgKey ArgKey::of(const NDArray& a, std::string type) {
  ArgKey k;
  k.type = std::move(type);
  k.array = true;
  k.dtype = a.dtype();
  k.shape = a.shape();
  k.strides = a.strides();
  k.device = a.device();
  return k;
}

std::string ArgKey::str() const {
  if (array) return fmt::format("{} {} on {}", dtype_name(dtype), shape_str(shape), device.str());
  return type;
}

std::string describe(const std::vector<ArgKey>& key) {
  std::vector<std::string> parts;
  for (const ArgKey& k : key) parts.push_back(k.str());
  return parts.empty() ? std::string("no arguments") : fmt::format("{}", fmt::join(parts, ", "));
}

SharedArguments shared_arguments(std::span<const NDArray> args) {
  SharedArguments out;
  const int n = static_cast<int>(args.size());
  for (int i = 0; i < n; ++i) {
    const NDArray& a = args[static_cast<std::size_t>(i)];
    if (!a.valid()) continue;
    for (int j = i + 1; j < n; ++j) {
      const NDArray& b = args[static_cast<std::size_t>(j)];
      if (b.valid() && b.buffer() == a.buffer())
        out.emplace_back(i, j,
                         static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(b.data()) -
                                                    reinterpret_cast<std::uintptr_t>(a.data())));
    }
  }
  return out;
}

std::optional<Variant> Variant::record(std::vector<ArgKey> key, std::span<const NDArray> args, const Call& call,
                                       std::function<std::string()> where, std::string_view who) {
  if (GraphRecording::active()) GraphRecording::refuse_nested(who);
  Variant v;
  v.key_ = std::move(key);
  Device device = current_device();
  bool found = false;
  for (const NDArray& a : args) {
    v.arg_data_.push_back(a.valid() ? reinterpret_cast<std::uintptr_t>(a.data()) : 0);
    v.arg_extent_.push_back(a.valid() ? byte_extent(a) : ByteExtent{0, 0});
    if (a.valid() && !found) device = a.device(), found = true;
  }
  v.shared_ = shared_arguments(args);
  {
    // An error in `call` leaves with `rec`, and nothing of the recording is kept.
    GraphRecording rec(device, std::move(where));
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args[i].valid()) rec.argument(static_cast<int>(i), args[i].buffer());
    std::optional<std::vector<NDArray>> returned = call();
    if (!returned) return std::nullopt;
    for (NDArray& a : *returned) {
      GraphResult r;
      const int b = a.valid() ? rec.buffer_index(a.buffer().get()) : -1;
      if (b >= 0) {
        r.buffer = b;
        r.dtype = a.dtype();
        r.shape = a.shape();
        r.strides = a.strides();
        r.data = reinterpret_cast<std::uintptr_t>(a.data());
      }
      r.value = std::move(a);
      v.results_.push_back(std::move(r));
    }
    v.graph_ = rec.finish();
  }
  // A recorded buffer is one made while recording, an argument's, or one the function
  // closes over (returned as it is).
  for (GraphResult& r : v.results_) {
    if (r.buffer >= 0) {
      RecordedBuffer& b = v.graph_->buffers[static_cast<std::size_t>(r.buffer)];
      r.kind = b.made            ? GraphResult::Kind::Made
               : b.argument >= 0 ? GraphResult::Kind::Argument
                                 : GraphResult::Kind::Value;
      if (r.kind == GraphResult::Kind::Made) b.result = true;
    }
    if (r.kind != GraphResult::Kind::Value) r.value = NDArray();
  }
  v.written_.assign(v.graph_->buffers.size(), false);
  for (const GraphNode& node : v.graph_->graph.nodes())
    for (const Access& a : node.accesses)
      if (a.write && a.begin < a.end) v.written_[a.buffer] = true;
  // The memory made while recording is ordered on the device's default stream; the replay's
  // stream must find it allocated.
  if (!device.is_cpu()) synchronize(device);
  return v;
}

std::vector<NDArray> Variant::replay(std::span<const NDArray> args, std::span<const NDArray> outs, const Stream* stream,
                                     bool wait, std::string_view who) {
  Remap remap;
  for (std::size_t i = 0; i < args.size() && i < arg_data_.size(); ++i) {
    const NDArray& a = args[i];
    if (!a.valid()) continue;
    const auto now = reinterpret_cast<std::uintptr_t>(a.data());
    const auto was = arg_data_[i];
    if (now != was) remap.add(arg_extent_[i].lo, arg_extent_[i].hi, static_cast<std::intptr_t>(now - was));
  }
  // The results' new memory: the caller's out arrays in order, else new buffers.
  std::map<int, std::shared_ptr<Buffer>> fresh;  // recorded buffer -> this call's
  std::size_t next_out = 0;
  for (const GraphResult& r : results_) {
    if (r.kind != GraphResult::Kind::Made || fresh.count(r.buffer)) continue;
    const RecordedBuffer& b = graph_->buffers[static_cast<std::size_t>(r.buffer)];
    const auto lo = reinterpret_cast<std::uintptr_t>(b.buffer->data());
    std::shared_ptr<Buffer> to;
    if (next_out < outs.size()) {
      const NDArray& o = outs[next_out];
      const std::size_t k = next_out + 1;
      if (o.dtype() != r.dtype || o.shape() != r.shape || !o.is_c_contiguous() || o.device() != b.buffer->device() ||
          o.nbytes() != b.buffer->size() || lo != r.data)
        fail("{}: out[{}] is a {} array of shape {} on {}; the result it receives is a {} array of shape {} on {} "
             "(a whole new array: out must be C-contiguous and match it)",
             who, k, dtype_name(o.dtype()), shape_str(o.shape()), o.device().str(), dtype_name(r.dtype),
             shape_str(r.shape), b.buffer->device().str());
      to = o.buffer();
      remap.add(lo, lo + b.buffer->size(),
                static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(o.data()) - r.data));
      ++next_out;
    } else {
      to = allocate_for_graph(graph_->device, b.buffer->device(), b.buffer->size(), stream);
      remap.add(lo, lo + b.buffer->size(),
                static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(to->data()) - lo));
    }
    if (!written_[static_cast<std::size_t>(r.buffer)])
      copy_bytes(to->device(), remap(b.buffer->data()), b.buffer->device(), b.buffer->data(), b.buffer->size(),
                 stream ? stream->handle() : nullptr);
    fresh[r.buffer] = std::move(to);
  }
  if (next_out < outs.size())
    fail("{}: {} out arrays given, but the function returns {} new array{}", who, outs.size(), next_out,
         next_out == 1 ? "" : "s");
  graph_->run(remap, stream ? stream->handle() : nullptr);
  if (wait && !graph_->device.is_cpu()) {
    if (stream) stream->synchronize();
    else synchronize(graph_->device);
    graph_->check_after_run();
  }
  // The results, each where this call's memory is.
  std::vector<NDArray> out;
  out.reserve(results_.size());
  for (const GraphResult& r : results_) {
    if (r.kind == GraphResult::Kind::Value) {
      out.push_back(r.value);
      continue;
    }
    std::shared_ptr<Buffer> buffer =
        r.kind == GraphResult::Kind::Made
            ? fresh.at(r.buffer)
            : args[static_cast<std::size_t>(graph_->buffers[static_cast<std::size_t>(r.buffer)].argument)].buffer();
    const auto item = static_cast<std::intptr_t>(itemsize(r.dtype));
    const auto at = static_cast<std::intptr_t>(remap(r.data) - reinterpret_cast<std::uintptr_t>(buffer->data()));
    out.push_back(NDArray::view(std::move(buffer), r.dtype, r.shape, r.strides, at / item));
  }
  return out;
}

}  // namespace luda

// A recorded function's graph for one kind of call (docs/graphs.md, Replaying): the
// recording made with some arguments, and its replay with others that match them, at new
// addresses. A host (the Lua module's luda.graph, the C++ API's luda::Graph) reads its own
// values into arrays and argument keys and calls the function; this is the rest: what a
// call must match, where the arguments and results move, the results' new memory, the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "runtime/graph/recorded_graph.h"
#include "runtime/ndarray.h"

namespace luda {

// An argument of a recorded function as a replay must match it: an array by its dtype,
// shape, strides and device (at any address); any other value by its type and value (a
// number's bits, a string's bytes), or by its identity (a table, a function).
struct ArgKey {
  std::string type;  // as the host names its values' types ("number", "nil"); for errors
  bool array = false;
  DType dtype = DType::Float64;
  Shape shape;
  Strides strides;
  Device device;
  std::string value;
  const void* identity = nullptr;
  bool operator==(const ArgKey&) const = default;

  // An array's key, of type `type`.
  static ArgKey of(const NDArray& a, std::string type = "array");
  // "float32 (4,) on cpu" for an array, else the type.
  std::string str() const;
};
// The keys of a call: "float32 (4,) on cpu, number", or "no arguments".
std::string describe(const std::vector<ArgKey>& key);

// Pairs of arguments over one buffer, with the distance between their first elements:
// a replay's must be the same, or the hazards recorded between them would not hold.
// `args` holds each array argument (an invalid array for any other value).
using SharedArguments = std::vector<std::tuple<int, int, std::intptr_t>>;
SharedArguments shared_arguments(std::span<const NDArray> args);

// What a replay returns in place of each value the recorded function returned.
struct GraphResult {
  // Made: an array the function made, new memory on each call. Argument: a view of an
  // argument, the same view of this call's. Value: anything else, returned as it was.
  enum class Kind { Made, Argument, Value } kind = Kind::Value;
  int buffer = -1;  // Made, Argument: the recorded buffer
  DType dtype = DType::Float64;
  Shape shape;
  Strides strides;
  std::uintptr_t data = 0;  // the recorded view's first element
  NDArray value;            // Value: the array as it was returned (invalid: not an array)
};

class Variant {
 public:
  // The recorded function called once: the values it returned, each an array (invalid
  // for another value), or nullopt when it failed with an error its host raises itself.
  using Call = std::function<std::optional<std::vector<NDArray>>()>;

  // Records `call` with this thread recording, for arguments with keys `key` and arrays
  // `args` (an invalid array for a value of another kind), on the device of the first
  // array argument, else the current device. `where` names the place that issues each
  // operation (null: none). nullopt when `call` returned nullopt: nothing is recorded.
  // Error, starting with `who`, when this thread records a graph already.
  static std::optional<Variant> record(std::vector<ArgKey> key, std::span<const NDArray> args, const Call& call,
                                       std::function<std::string()> where, std::string_view who);

  // Whether a call with these arguments replays this variant.
  bool matches(const std::vector<ArgKey>& key, std::span<const NDArray> args) const {
    return key_ == key && shared_ == shared_arguments(args);
  }

  // Runs the graph with `args` (which match) in place of the recorded arguments, on
  // `stream` (null: the device's default stream). The arrays the function made and
  // returned are new arrays, or the caller's `outs` in order (C-contiguous, of their dtype
  // and shape). With `wait`, waits for a GPU's work and raises what its bounds checks
  // found. Returns one array for each result: Made's and Argument's where this call's
  // memory is, Value's as recorded. Errors start with `who`.
  std::vector<NDArray> replay(std::span<const NDArray> args, std::span<const NDArray> outs, const Stream* stream,
                              bool wait, std::string_view who);

  const std::vector<ArgKey>& key() const { return key_; }
  const SharedArguments& shared() const { return shared_; }
  const std::vector<GraphResult>& results() const { return results_; }
  const RecordedGraph& graph() const { return *graph_; }

 private:
  std::vector<ArgKey> key_;
  SharedArguments shared_;
  std::vector<std::uintptr_t> arg_data_;  // each array argument's first element, recorded
  std::vector<ByteExtent> arg_extent_;    // and its bytes
  std::shared_ptr<RecordedGraph> graph_;
  std::vector<GraphResult> results_;
  // Buffers some node writes. A new array the function returns that no node writes has
  // values the host wrote while recording: each replay's copy starts with them.
  std::vector<bool> written_;
};

}  // namespace luda

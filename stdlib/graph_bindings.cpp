// luda.graph: a Lua function's luda work recorded once as a task graph (runtime/graph/,
// docs/graphs.md) and replayed with new arguments.
//   local g = luda.graph(function(x) return luda.sqrt(x * x + 1) end, x0)
//   local y = g(x)                      -- replays with x in place of x0; y is a new array
//   g(x, {out = {y}})                   -- the result written into y
//   g:launch(x, {stream = s})           -- the same, not waited for
//   g:nodes(), g:dot(), g:stats(), tostring(g)
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/graph/recording.h"
#include "stdlib/bindings.h"

namespace luda::lua {

namespace {

constexpr char kGraphType[] = "graph";
// The registry slot of the table that keeps, while a graph is recorded, every kernel the
// recorded function calls (keep_for_graph): the graph's nodes run their code later.
char g_keep_key;
// Variants a graph records before it refuses other shapes.
constexpr std::size_t kMaxVariants = 8;

// An argument as a replay must match it: an array's dtype, shape, strides and device; any
// other value by its value (numbers, booleans, strings, typed scalars) or its identity.
struct ArgKey {
  int type = LUA_TNIL;
  bool array = false;
  DType dtype = DType::Float64;
  Shape shape;
  Strides strides;
  Device device;
  std::string text;  // a string's bytes, a number's or typed scalar's bits
  const void* identity = nullptr;
  bool operator==(const ArgKey& o) const {
    return type == o.type && array == o.array && dtype == o.dtype && shape == o.shape && strides == o.strides &&
           device == o.device && text == o.text && identity == o.identity;
  }
};

// What a replay returns in place of each value the function returned.
struct Result {
  enum class Kind { Made, Argument, Value } kind = Kind::Value;
  int buffer = -1;  // Made, Argument: the recorded buffer
  DType dtype = DType::Float64;
  Shape shape;
  Strides strides;
  std::uintptr_t data = 0;  // the recorded view's first element
  int value = 0;            // Value: its index in the graph's keep table
};

struct Variant {
  std::vector<ArgKey> key;
  // Pairs of arguments over one buffer, with the distance between their first elements:
  // a replay's must be the same, or the hazards recorded between them would not hold.
  std::vector<std::tuple<int, int, std::intptr_t>> shared;
  std::vector<std::uintptr_t> arg_data;        // each array argument's first element, recorded
  std::vector<ByteExtent> arg_extent;          // and its bytes
  std::shared_ptr<RecordedGraph> graph;
  std::vector<Result> results;
  // Buffers some node writes. A new array the function returns that no node writes has
  // values the host wrote while recording: each replay's copy starts with them.
  std::vector<bool> written;
};

struct GraphObject {
  std::string name;  // "graph (s.lua:12)"
  std::vector<Variant> variants;
  std::size_t last = 0;  // the variant the last call ran
  std::uint64_t recordings = 0;
};

GraphObject& check_graph(lua_State* L, int arg, std::string_view fname) {
  return check_object<GraphObject>(L, arg, kGraphType, fname);
}

ArgKey key_of(lua_State* L, int idx) {
  ArgKey k;
  k.type = lua_type(L, idx);
  if (NDArray* a = test_array(L, idx)) {
    k.array = true;
    k.dtype = a->dtype();
    k.shape = a->shape();
    k.strides = a->strides();
    k.device = a->device();
  } else if (Scalar* s = test_scalar(L, idx)) {
    constexpr std::size_t most = 16;  // complex128's bytes, the most an element has
    static_assert(itemsize(DType::Complex128) == most && kNumDTypes == 15);
    unsigned char bytes[most + 2] = {};  // the value, its dtype, whether it is weak
    s->store(bytes);
    bytes[most] = static_cast<unsigned char>(s->dtype);
    bytes[most + 1] = s->weak;
    k.text.assign(reinterpret_cast<const char*>(bytes), sizeof bytes);
  } else if (k.type == LUA_TNUMBER) {
    unsigned char bytes[9] = {};
    if (lua_isinteger(L, idx)) {
      lua_Integer i = lua_tointeger(L, idx);
      std::memcpy(bytes, &i, 8);
      bytes[8] = 1;
    } else {
      lua_Number x = lua_tonumber(L, idx);
      std::memcpy(bytes, &x, 8);
    }
    k.text.assign(reinterpret_cast<const char*>(bytes), sizeof bytes);
  } else if (k.type == LUA_TBOOLEAN) {
    k.text = lua_toboolean(L, idx) ? "true" : "false";
  } else if (k.type == LUA_TSTRING) {
    k.text = std::string(string_at(L, idx));
  } else if (k.type != LUA_TNIL) {
    k.identity = lua_topointer(L, idx);
  }
  return k;
}

std::string describe_key(const std::vector<ArgKey>& key) {
  std::vector<std::string> parts;
  for (const ArgKey& k : key) {
    if (k.array) parts.push_back(fmt::format("{} {} on {}", dtype_name(k.dtype), shape_str(k.shape), k.device.str()));
    else parts.push_back(k.type == LUA_TNIL ? "nil" : lua_typename(nullptr, k.type));
  }
  return parts.empty() ? std::string("no arguments") : fmt::format("{}", fmt::join(parts, ", "));
}

// The Lua line of the code that issues an operation: level 1 is the Lua function that
// called the binding now running.
std::string lua_line(lua_State* L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Sl", &ar)) break;
    if (ar.currentline > 0) return fmt::format("{}:{}", ar.short_src, ar.currentline);
  }
  return {};
}

// The arguments' arrays over one buffer, with their distance.
std::vector<std::tuple<int, int, std::intptr_t>> shared_buffers(lua_State* L, int base, int n) {
  std::vector<std::tuple<int, int, std::intptr_t>> out;
  for (int i = 0; i < n; ++i) {
    NDArray* a = test_array(L, base + i);
    if (!a || !a->valid()) continue;
    for (int j = i + 1; j < n; ++j) {
      NDArray* b = test_array(L, base + j);
      if (b && b->valid() && b->buffer() == a->buffer())
        out.emplace_back(i, j, static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(b->data()) -
                                                         reinterpret_cast<std::uintptr_t>(a->data())));
    }
  }
  return out;
}

// Records the graph's function called with the n values at base; adds the variant.
// Returns kRethrow (the function's error on top of the stack) when the function raised.
[[noreturn]] void refuse_nested() {
  fail("luda.graph: a graph is being recorded on this thread already; a recorded function cannot record or "
       "replay another graph (call that graph's function directly)");
}

int record(lua_State* L, int gidx, GraphObject& g, int base, int n) {
  if (GraphRecording::active()) refuse_nested();
  Variant v;
  Device device = current_device();
  bool found = false;
  for (int i = 0; i < n; ++i) {
    v.key.push_back(key_of(L, base + i));
    NDArray* a = test_array(L, base + i);
    v.arg_data.push_back(a && a->valid() ? reinterpret_cast<std::uintptr_t>(a->data()) : 0);
    v.arg_extent.push_back(a && a->valid() ? byte_extent(*a) : ByteExtent{0, 0});
    if (a && a->valid() && !found) device = a->device(), found = true;
  }
  v.shared = shared_buffers(L, base, n);
  const int top = lua_gettop(L);
  int status;
  int nresults;
  {
    lua_getiuservalue(L, gidx, 2);  // the keep table, for keep_for_graph
    lua_rawsetp(L, LUA_REGISTRYINDEX, &g_keep_key);
    struct KeepUnset {
      lua_State* L;
      ~KeepUnset() {
        lua_pushnil(L);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &g_keep_key);
      }
    } unset{L};
    GraphRecording rec(device, [L] { return lua_line(L); });
    for (int i = 0; i < n; ++i)
      if (NDArray* a = test_array(L, base + i); a && a->valid()) rec.argument(i, a->buffer());
    lua_getiuservalue(L, gidx, 1);  // the function
    for (int i = 0; i < n; ++i) lua_pushvalue(L, base + i);
    status = lua_pcall(L, n, LUA_MULTRET, 0);
    if (status != LUA_OK) {  // the recording is discarded with `rec`; the error is raised as it is
      lua_insert(L, top + 1);
      lua_settop(L, top + 1);
      return kRethrow;
    }
    nresults = lua_gettop(L) - top;
    lua_getiuservalue(L, gidx, 2);
    const int keep = lua_gettop(L);
    for (int r = 0; r < nresults; ++r) {
      const int idx = top + 1 + r;
      Result res;
      NDArray* a = test_array(L, idx);
      const int b = a && a->valid() ? rec.buffer_index(a->buffer().get()) : -1;
      if (b >= 0) {
        res.buffer = b;
        res.dtype = a->dtype();
        res.shape = a->shape();
        res.strides = a->strides();
        res.data = reinterpret_cast<std::uintptr_t>(a->data());
      }
      // Kept whatever it is: a value returned as it is (a number, an array the function
      // closes over) comes from here on each call.
      lua_pushvalue(L, idx);
      res.value = static_cast<int>(lua_rawlen(L, keep)) + 1;
      lua_rawseti(L, keep, res.value);
      v.results.push_back(std::move(res));
    }
    lua_pop(L, 1);
    v.graph = rec.finish();
  }
  // A recorded buffer is one made while recording, an argument's, or one the function
  // closes over (returned as it is).
  for (Result& r : v.results) {
    if (r.buffer < 0) continue;
    const RecordedBuffer& b = v.graph->buffers[static_cast<std::size_t>(r.buffer)];
    r.kind = b.made ? Result::Kind::Made : b.argument >= 0 ? Result::Kind::Argument : Result::Kind::Value;
    if (r.kind == Result::Kind::Made) v.graph->buffers[static_cast<std::size_t>(r.buffer)].result = true;
  }
  v.written.assign(v.graph->buffers.size(), false);
  for (const GraphNode& node : v.graph->graph.nodes())
    for (const Access& a : node.accesses)
      if (a.write && a.begin < a.end) v.written[a.buffer] = true;
  // The memory made while recording is ordered on the device's default stream; the replay's
  // stream must find it allocated.
  if (!device.is_cpu()) synchronize(device);
  lua_settop(L, top);
  g.variants.push_back(std::move(v));
  ++g.recordings;
  return 0;
}

// The variant for the n values at base: a recorded one, else a new recording.
int variant_for(lua_State* L, int gidx, GraphObject& g, int base, int n, std::size_t* out) {
  std::vector<ArgKey> key;
  for (int i = 0; i < n; ++i) key.push_back(key_of(L, base + i));
  const auto shared = shared_buffers(L, base, n);
  for (std::size_t i = 0; i < g.variants.size(); ++i)
    if (g.variants[i].key == key && g.variants[i].shared == shared) return *out = i, 0;
  if (g.variants.size() >= kMaxVariants) {
    std::vector<std::string> known;
    for (const Variant& v : g.variants) known.push_back("(" + describe_key(v.key) + ")");
    fail("{}: these arguments ({}) match none of the {} variants it has recorded ({}), and a graph records at most "
         "{}; make another luda.graph for these shapes",
         g.name, describe_key(key), g.variants.size(), fmt::join(known, ", "), kMaxVariants);
  }
  if (record(L, gidx, g, base, n) == kRethrow) return kRethrow;
  *out = g.variants.size() - 1;
  return 0;
}

// g(args... [, {out=, stream=}]) and g:launch(...): replays; pushes what the function returned.
int replay(lua_State* L, bool wait, std::string_view fname) {
  GraphObject& g = check_graph(L, 1, fname);
  if (GraphRecording::active()) refuse_nested();
  int n = lua_gettop(L) - 1;
  int options = 0;
  if (n > 0 && lua_type(L, 1 + n) == LUA_TTABLE) {
    options = 1 + n;
    --n;
    check_options(L, options, fname, {"out", "stream"});
  }
  std::optional<Stream> stream = options ? stream_option(L, options, fname) : std::nullopt;
  std::size_t vi = 0;
  if (variant_for(L, 1, g, 2, n, &vi) == kRethrow) return kRethrow;
  Variant& v = g.variants[vi];
  g.last = vi;
  Remap remap;
  for (int i = 0; i < n; ++i) {
    NDArray* a = test_array(L, 2 + i);
    if (!a || !a->valid()) continue;
    const auto now = reinterpret_cast<std::uintptr_t>(a->data());
    const auto was = v.arg_data[static_cast<std::size_t>(i)];
    if (now != was) {
      const ByteExtent& e = v.arg_extent[static_cast<std::size_t>(i)];
      remap.add(e.lo, e.hi, static_cast<std::intptr_t>(now - was));
    }
  }
  // The results' new memory: the caller's out arrays in order, else new buffers.
  std::vector<NDArray> outs;
  if (options && push_option(L, options, "out") != LUA_TNIL) {
    if (!lua_istable(L, -1)) fail("{}: option 'out' must be a table of arrays, got {}", fname, describe(L, -1));
    const auto count = static_cast<int>(lua_rawlen(L, -1));
    for (int k = 1; k <= count; ++k) {
      lua_rawgeti(L, -1, k);
      NDArray* o = test_array(L, -1);
      if (!o) fail("{}: out[{}] must be an array, got {}", fname, k, describe(L, -1));
      outs.push_back(*o);
      lua_pop(L, 1);
    }
  }
  if (options) lua_pop(L, 1);
  std::map<int, std::shared_ptr<Buffer>> fresh;  // recorded buffer -> this call's
  std::size_t next_out = 0;
  for (const Result& r : v.results) {
    if (r.kind != Result::Kind::Made || fresh.count(r.buffer)) continue;
    const RecordedBuffer& b = v.graph->buffers[static_cast<std::size_t>(r.buffer)];
    std::shared_ptr<Buffer> to;
    if (next_out < outs.size()) {
      const NDArray& o = outs[next_out];
      const std::size_t k = next_out + 1;
      if (o.dtype() != r.dtype || o.shape() != r.shape || !o.is_c_contiguous() || o.device() != b.buffer->device() ||
          o.nbytes() != b.buffer->size() || reinterpret_cast<std::uintptr_t>(b.buffer->data()) != r.data)
        fail("{}: out[{}] is a {} array of shape {} on {}; the result it receives is a {} array of shape {} on {} "
             "(a whole new array: out must be C-contiguous and match it)",
             fname, k, dtype_name(o.dtype()), shape_str(o.shape()), o.device().str(), dtype_name(r.dtype),
             shape_str(r.shape), b.buffer->device().str());
      to = o.buffer();
      remap.add(reinterpret_cast<std::uintptr_t>(b.buffer->data()),
                reinterpret_cast<std::uintptr_t>(b.buffer->data()) + b.buffer->size(),
                static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(o.data()) - r.data));
      ++next_out;
    } else {
      to = allocate_for_graph(v.graph->device, b.buffer->device(), b.buffer->size(), stream ? &*stream : nullptr);
      remap.add(reinterpret_cast<std::uintptr_t>(b.buffer->data()),
                reinterpret_cast<std::uintptr_t>(b.buffer->data()) + b.buffer->size(),
                static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(to->data()) -
                                           reinterpret_cast<std::uintptr_t>(b.buffer->data())));
    }
    if (!v.written[static_cast<std::size_t>(r.buffer)])
      copy_bytes(to->device(), remap(b.buffer->data()), b.buffer->device(), b.buffer->data(), b.buffer->size(),
                 stream ? stream->handle() : nullptr);
    fresh[r.buffer] = std::move(to);
  }
  if (next_out < outs.size())
    fail("{}: {} out arrays given, but the function returns {} new array{}", fname, outs.size(), next_out,
         next_out == 1 ? "" : "s");
  v.graph->run(remap, stream ? stream->handle() : nullptr);
  if (wait && !v.graph->device.is_cpu()) {
    if (stream) stream->synchronize();
    else synchronize(v.graph->device);
    v.graph->check_after_run();
  }
  // The results, each where this call's memory is.
  lua_getiuservalue(L, 1, 2);
  const int keep = lua_gettop(L);
  if (!lua_checkstack(L, static_cast<int>(v.results.size()) + 4)) fail("{}: Lua stack overflow", fname);
  for (const Result& r : v.results) {
    if (r.kind == Result::Kind::Value) {
      lua_rawgeti(L, keep, r.value);
      continue;
    }
    std::shared_ptr<Buffer> buffer;
    if (r.kind == Result::Kind::Made) {
      buffer = fresh.at(r.buffer);
    } else {
      const int k = v.graph->buffers[static_cast<std::size_t>(r.buffer)].argument;
      buffer = test_array(L, 2 + k)->buffer();
    }
    const auto item = static_cast<std::intptr_t>(itemsize(r.dtype));
    const auto at = static_cast<std::intptr_t>(remap(r.data) - reinterpret_cast<std::uintptr_t>(buffer->data()));
    push_array(L, NDArray::view(std::move(buffer), r.dtype, r.shape, r.strides, at / item));
  }
  return static_cast<int>(v.results.size());
}

// luda.graph(fn, example_args...)
int l_graph(lua_State* L) {
  check_function(L, 1, "graph");
  lua_Debug ar;
  lua_pushvalue(L, 1);
  lua_getinfo(L, ">S", &ar);
  const int n = lua_gettop(L) - 1;
  GraphObject& g = push_object<GraphObject>(L, kGraphType, GraphObject{}, 2);
  g.name = ar.linedefined > 0 ? fmt::format("graph ({}:{})", ar.short_src, ar.linedefined) : "graph";
  const int gidx = lua_gettop(L);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, gidx, 1);
  lua_newtable(L);
  lua_setiuservalue(L, gidx, 2);
  if (record(L, gidx, g, 2, n) == kRethrow) return kRethrow;
  lua_settop(L, gidx);
  return 1;
}

int l_call(lua_State* L) { return replay(L, true, "graph"); }
int l_launch(lua_State* L) { return replay(L, false, "launch"); }

const Variant& last_variant(lua_State* L, const char* fname) {
  GraphObject& g = check_graph(L, 1, fname);
  if (g.variants.empty()) fail("{}: nothing was recorded", g.name);
  return g.variants[g.last];
}

// g:nodes(): {kind=, name=, where=, after={...}} for each node of the last variant run.
int l_nodes(lua_State* L) {
  const TaskGraph& t = last_variant(L, "nodes").graph->graph;
  lua_createtable(L, static_cast<int>(t.nodes().size()), 0);
  for (std::size_t i = 0; i < t.nodes().size(); ++i) {
    const GraphNode& node = t.nodes()[i];
    lua_createtable(L, 0, 4);
    lua_pushstring(L, node_kind_name(node.kind));
    lua_setfield(L, -2, "kind");
    lua_pushlstring(L, node.name.data(), node.name.size());
    lua_setfield(L, -2, "name");
    lua_pushlstring(L, node.where.data(), node.where.size());
    lua_setfield(L, -2, "where");
    const auto& preds = t.predecessors(i);
    lua_createtable(L, static_cast<int>(preds.size()), 0);
    for (std::size_t k = 0; k < preds.size(); ++k) {
      lua_pushinteger(L, static_cast<lua_Integer>(preds[k] + 1));
      lua_rawseti(L, -2, static_cast<lua_Integer>(k + 1));
    }
    lua_setfield(L, -2, "after");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int l_dot(lua_State* L) {
  GraphObject& g = check_graph(L, 1, "dot");
  std::string text = last_variant(L, "dot").graph->graph.dot(g.name);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_stats(lua_State* L) {
  GraphObject& g = check_graph(L, 1, "stats");
  const Variant& v = last_variant(L, "stats");
  std::uint64_t replays = 0, updates = 0;
  for (const Variant& each : g.variants) replays += each.graph->replays, updates += each.graph->updates;
  lua_createtable(L, 0, 8);
  auto set = [&](const char* key, std::uint64_t x) {
    lua_pushinteger(L, static_cast<lua_Integer>(x));
    lua_setfield(L, -2, key);
  };
  set("nodes", v.graph->graph.nodes().size());
  set("edges", v.graph->graph.edges().size());
  set("depth", v.graph->graph.depth());
  set("replays", replays);
  set("updates", updates);
  set("recordings", g.recordings);
  set("variants", g.variants.size());
  set("allocs", v.graph->allocs);
  return 1;
}

int l_tostring(lua_State* L) {
  GraphObject& g = check_graph(L, 1, "tostring");
  std::string text;
  if (g.variants.empty()) {
    text = fmt::format("<{}: nothing recorded>", g.name);
  } else {
    const TaskGraph& t = g.variants[g.last].graph->graph;
    text = fmt::format("<{}: {} node{}, {} edge{}, {} variant{}>", g.name, t.nodes().size(),
                       t.nodes().size() == 1 ? "" : "s", t.edges().size(), t.edges().size() == 1 ? "" : "s",
                       g.variants.size(), g.variants.size() == 1 ? "" : "s");
  }
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_index(lua_State* L) {
  check_graph(L, 1, "index");
  if (lua_type(L, 2) == LUA_TSTRING && push_method(L, 2)) return 1;
  fail("graph has no field {} (it has :launch(), :nodes(), :dot() and :stats())", describe(L, 2));
}

}  // namespace

void keep_for_graph(lua_State* L, int idx) {
  if (!GraphRecording::active()) return;
  idx = lua_absindex(L, idx);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &g_keep_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  lua_pushvalue(L, idx);
  lua_rawseti(L, -2, static_cast<lua_Integer>(lua_rawlen(L, -2)) + 1);
  lua_pop(L, 1);
}

void open_graphs(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__call", trampoline<l_call>},
      {"__tostring", trampoline<l_tostring>},
      {"__gc", gc_object<GraphObject, kGraphType>},
      {nullptr, nullptr},
  };
  static const luaL_Reg methods[] = {
      {"launch", trampoline<l_launch>},
      {"nodes", trampoline<l_nodes>},
      {"dot", trampoline<l_dot>},
      {"stats", trampoline<l_stats>},
      {nullptr, nullptr},
  };
  new_metatable_with_index(L, kGraphType, meta, methods, trampoline<l_index>);
  lua_pushcfunction(L, trampoline<l_graph>);
  lua_setfield(L, -2, "graph");
}

}  // namespace luda::lua

// luda.graph: a Lua function's luda work recorded once as a task graph and replayed with
// new arguments (docs/graphs.md). The recording and the replay are runtime/graph/'s
// (GraphVariants, Variant); this reads the Lua values into them, calls the function while
// recording, and pushes what a replay returns.
//   local g = luda.graph(function(x) return luda.sqrt(x * x + 1) end, x0)
//   local y = g(x)                      -- replays with x in place of x0; y is a new array
//   g(x, {out = {y}})                   -- the result written into y
//   g:launch(x, {stream = s})           -- the same, not waited for
//   g:nodes(), g:dot(), g:stats(), tostring(g)
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/graph/recording.h"
#include "runtime/graph/variants.h"
#include "stdlib/bindings.h"

namespace luda::lua {

namespace {

constexpr char kGraphType[] = "graph";
// The registry slot of the table that keeps, while a graph is recorded, every kernel the
// recorded function calls (keep_for_graph): the graph's nodes run their code later.
char g_keep_key;
// What starts the error for a graph recorded or replayed inside a recording.
constexpr char kWho[] = "luda.graph";

struct GraphObject {
  GraphVariants variants;
  // For each variant, where each value the function returned is in the keep table (the
  // graph's second user value): a value returned as it is comes from there on each call.
  std::vector<std::vector<int>> kept;
};

GraphObject& check_graph(lua_State* L, int arg, std::string_view fname) {
  return check_object<GraphObject>(L, arg, kGraphType, fname);
}

// The value at idx as a replay must match it: an array by its layout, a number, boolean,
// string or typed scalar by its value, anything else by its identity.
ArgKey key_of(lua_State* L, int idx) {
  const int type = lua_type(L, idx);
  if (NDArray* a = test_array(L, idx)) return ArgKey::of(*a, lua_typename(L, type));
  ArgKey k;
  k.type = lua_typename(L, type);
  if (Scalar* s = test_scalar(L, idx)) {
    constexpr std::size_t most = 16;  // complex128's bytes, the most an element has
    static_assert(itemsize(DType::Complex128) == most && kNumDTypes == 15);
    unsigned char bytes[most + 2] = {};  // the value, its dtype, whether it is weak
    s->store(bytes);
    bytes[most] = static_cast<unsigned char>(s->dtype);
    bytes[most + 1] = s->weak;
    k.value.assign(reinterpret_cast<const char*>(bytes), sizeof bytes);
  } else if (type == LUA_TNUMBER) {
    unsigned char bytes[9] = {};
    if (lua_isinteger(L, idx)) {
      lua_Integer i = lua_tointeger(L, idx);
      std::memcpy(bytes, &i, 8);
      bytes[8] = 1;
    } else {
      lua_Number x = lua_tonumber(L, idx);
      std::memcpy(bytes, &x, 8);
    }
    k.value.assign(reinterpret_cast<const char*>(bytes), sizeof bytes);
  } else if (type == LUA_TBOOLEAN) {
    k.value = lua_toboolean(L, idx) ? "true" : "false";
  } else if (type == LUA_TSTRING) {
    k.value = std::string(string_at(L, idx));
  } else if (type != LUA_TNIL) {
    k.identity = lua_topointer(L, idx);
  }
  return k;
}

// The n values at base: their keys, and their arrays (an invalid one for another value).
std::vector<ArgKey> keys_of(lua_State* L, int base, int n) {
  std::vector<ArgKey> out;
  for (int i = 0; i < n; ++i) out.push_back(key_of(L, base + i));
  return out;
}
std::vector<NDArray> arrays_of(lua_State* L, int base, int n) {
  std::vector<NDArray> out;
  for (int i = 0; i < n; ++i) {
    NDArray* a = test_array(L, base + i);
    out.push_back(a && a->valid() ? *a : NDArray());
  }
  return out;
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

// Records the graph's function called with the n values at base; adds the variant.
// Returns kRethrow (the function's error on top of the stack) when the function raised.
int record(lua_State* L, int gidx, GraphObject& g, int base, int n) {
  if (GraphRecording::active()) GraphRecording::refuse_nested(kWho);
  const std::vector<NDArray> args = arrays_of(L, base, n);
  const int top = lua_gettop(L);
  std::vector<int> kept;
  std::optional<Variant> v;
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
    auto call = [&]() -> std::optional<std::vector<NDArray>> {
      lua_getiuservalue(L, gidx, 1);  // the function
      for (int i = 0; i < n; ++i) lua_pushvalue(L, base + i);
      if (lua_pcall(L, n, LUA_MULTRET, 0) != LUA_OK) {  // the error is raised as it is
        lua_insert(L, top + 1);
        lua_settop(L, top + 1);
        return std::nullopt;
      }
      const int nresults = lua_gettop(L) - top;
      lua_getiuservalue(L, gidx, 2);
      const int keep = lua_gettop(L);
      std::vector<NDArray> results;
      for (int r = 0; r < nresults; ++r) {
        const int idx = top + 1 + r;
        NDArray* a = test_array(L, idx);
        results.push_back(a && a->valid() ? *a : NDArray());
        // Kept whatever it is: a value returned as it is (a number, an array the function
        // closes over) comes from here on each call.
        lua_pushvalue(L, idx);
        kept.push_back(static_cast<int>(lua_rawlen(L, keep)) + 1);
        lua_rawseti(L, keep, kept.back());
      }
      lua_settop(L, top);
      return results;
    };
    v = Variant::record(
        keys_of(L, base, n), args, call, [L] { return lua_line(L); }, kWho);
  }
  if (!v) return kRethrow;
  g.variants.add(std::move(*v));
  g.kept.push_back(std::move(kept));
  return 0;
}

// g(args... [, {out=, stream=}]) and g:launch(...): replays; pushes what the function returned.
int replay(lua_State* L, bool wait, std::string_view fname) {
  GraphObject& g = check_graph(L, 1, fname);
  if (GraphRecording::active()) GraphRecording::refuse_nested(kWho);
  int n = lua_gettop(L) - 1;
  int options = 0;
  if (n > 0 && lua_type(L, 1 + n) == LUA_TTABLE) {
    options = 1 + n;
    --n;
    check_options(L, options, fname, {"out", "stream"});
  }
  std::optional<Stream> stream = options ? stream_option(L, options, fname) : std::nullopt;
  // The variant for these arguments: a recorded one, else a new recording.
  const std::vector<ArgKey> key = keys_of(L, 2, n);
  const std::vector<NDArray> args = arrays_of(L, 2, n);
  std::optional<std::size_t> vi = g.variants.find(key, args);
  if (!vi) {
    g.variants.check_room(key);
    if (record(L, 1, g, 2, n) == kRethrow) return kRethrow;
    vi = g.variants.size() - 1;
  }
  g.variants.set_last(*vi);
  // The caller's arrays for the results, in order.
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
  Variant& v = g.variants[*vi];
  std::vector<NDArray> results = v.replay(args, outs, stream ? &*stream : nullptr, wait, fname);
  // The results: arrays where this call's memory is, other values as they were returned.
  lua_getiuservalue(L, 1, 2);
  const int keep = lua_gettop(L);
  if (!lua_checkstack(L, static_cast<int>(results.size()) + 4)) fail("{}: Lua stack overflow", fname);
  for (std::size_t r = 0; r < results.size(); ++r) {
    if (v.results()[r].kind == GraphResult::Kind::Value) lua_rawgeti(L, keep, g.kept[*vi][r]);
    else push_array(L, std::move(results[r]));
  }
  return static_cast<int>(results.size());
}

// luda.graph(fn, example_args...)
int l_graph(lua_State* L) {
  check_function(L, 1, "graph");
  lua_Debug ar;
  lua_pushvalue(L, 1);
  lua_getinfo(L, ">S", &ar);
  const int n = lua_gettop(L) - 1;
  std::string name = ar.linedefined > 0 ? fmt::format("graph ({}:{})", ar.short_src, ar.linedefined) : "graph";
  GraphObject& g = push_object<GraphObject>(L, kGraphType, GraphObject{GraphVariants(std::move(name)), {}}, 2);
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

// g:nodes(): {kind=, name=, where=, after={...}} for each node of the last variant run.
int l_nodes(lua_State* L) {
  const TaskGraph& t = check_graph(L, 1, "nodes").variants.last().graph().graph;
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
  const GraphVariants& g = check_graph(L, 1, "dot").variants;
  std::string text = g.last().graph().graph.dot(g.name());
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_stats(lua_State* L) {
  const GraphVariants& g = check_graph(L, 1, "stats").variants;
  const RecordedGraph& last = g.last().graph();
  lua_createtable(L, 0, 8);
  auto set = [&](const char* key, std::uint64_t x) {
    lua_pushinteger(L, static_cast<lua_Integer>(x));
    lua_setfield(L, -2, key);
  };
  set("nodes", last.graph.nodes().size());
  set("edges", last.graph.edges().size());
  set("depth", last.graph.depth());
  set("replays", g.replays());
  set("updates", g.updates());
  set("recordings", g.recordings());
  set("variants", g.size());
  set("allocs", last.allocs);
  return 1;
}

int l_tostring(lua_State* L) {
  std::string text = check_graph(L, 1, "tostring").variants.str();
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

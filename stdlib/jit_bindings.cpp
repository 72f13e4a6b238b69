// numba.cuda.jit for Lua:
//   local k = luda.cuda.jit(function(x, y, out) ... end, {boundscheck=, fastmath=, debug=})
//   local k = luda.cuda.jit({fastmath = true})(function(...) ... end)   -- decorator form
//   local k = luda.cuda.jit([[ function(x, out) ... end ]])            -- source text
//   k[{blockspergrid, threadsperblock}](x, y, out)
//   k[{grid = {gx, gy}, block = {bx, by}, shared = bytes, stream = s}](...)
//   k:compile("void(float32[:], float32)"), k:inspect("types" | "cuda" | "ptx", sig, {arch=})
//   k.lua, k.name, k:stats(), k:signatures(), luda.cuda.cache_stats()
//   k:max_cooperative_grid_blocks(block [, shared_bytes]): the grid limit of cuda.cg.this_grid():sync()
// Indexing a kernel with a table makes a launcher holding the checked configuration;
// calling the launcher specializes (first time per argument signature) and launches.
#include <climits>
#include <memory>
#include <new>

#include "dsl/source_text.h"
#include "jit/kinds/jit_kernel.h"
#include "stdlib/bindings.h"
#include "stdlib/environment.h"
#include "stdlib/function_source.h"
#include "stdlib/link_bindings.h"

namespace luda::lua {
namespace {

constexpr char kJitType[] = "jit_kernel";
constexpr char kLauncherType[] = "jit_launcher";

struct JitObject {
  std::unique_ptr<LuaEnvironment> env;
  std::unique_ptr<jit::JitKernel> kernel;
};

// A configured launch: the kernel userdata is its user value, which keeps it alive (and
// is read back at the launch: the debug library can replace a user value).
struct Launcher {
  LaunchConfig config;
};
static_assert(std::is_trivially_destructible_v<Box<Launcher>>);

JitObject& check_jit(lua_State* L, int arg, std::string_view fname) {
  return check_object<JitObject>(L, arg, kJitType, fname);
}

std::string syntax(const std::string& name) {
  return fmt::format("{}[{{blockspergrid, threadsperblock}}](arg0, ...)", name);
}

// ---- making kernels ---------------------------------------------------------------------

jit::JitOptions read_options(lua_State* L, int idx) {
  check_options(L, idx, "jit", {"boundscheck", "fastmath", "debug", "link"});
  jit::JitOptions o;
  auto flag = [&](const char* key) -> std::optional<bool> {
    int type = push_option(L, idx, key);
    std::optional<bool> value;
    if (type == LUA_TBOOLEAN) value = lua_toboolean(L, -1) != 0;
    else if (type != LUA_TNIL) fail("jit: option '{}' must be a boolean, got {}", key, describe(L, -1));
    lua_pop(L, 1);
    return value;
  };
  o.boundscheck = flag("boundscheck");
  o.fastmath = flag("fastmath").value_or(false);
  o.debug = flag("debug").value_or(false);
  return o;
}

// Pushes a kernel made from the function or source text at src, with the options at opts.
void push_kernel(lua_State* L, int src, int opts) {
  src = lua_absindex(L, src);
  jit::JitOptions options = read_options(L, opts);
  auto env = std::make_unique<LuaEnvironment>(L);
  jit::JitKernel::Setup setup;
  if (lua_type(L, src) == LUA_TSTRING) {
    std::size_t n = 0;
    const char* text = lua_tolstring(L, src, &n);
    setup.function = dsl::text_source(std::string(text, n));
  } else {
    setup.function = function_source(L, src);
    setup.handle = env->add_function(src);
    setup.param_names = parameter_names(L, src);
  }
  setup.name = dsl::function_name(setup.function);
  setup.options = options;
  setup.link = read_link(L, opts, "jit", setup.name.empty() ? "kernel" : setup.name);
  auto kernel = std::make_unique<jit::JitKernel>(std::move(setup), *env);
  push_object<JitObject>(L, kJitType, JitObject{std::move(env), std::move(kernel)}, 1);
  lua_pushvalue(L, src);  // k.lua (the text, for a source-text kernel)
  lua_setiuservalue(L, -2, 1);
}

int l_decorate(lua_State* L) {
  if (lua_type(L, 1) != LUA_TFUNCTION && lua_type(L, 1) != LUA_TSTRING)
    type_error(L, 1, "jit", "function or source string");
  lua_pushvalue(L, lua_upvalueindex(1));
  push_kernel(L, 1, lua_gettop(L));
  return 1;
}

// luda.cuda.jit(fn_or_source [, options]) or luda.cuda.jit([options]) -> decorator
int l_jit(lua_State* L) {
  int type = lua_type(L, 1);
  if (type == LUA_TFUNCTION || type == LUA_TSTRING) {
    push_kernel(L, 1, 2);
    return 1;
  }
  if (type != LUA_TTABLE && type > LUA_TNIL) type_error(L, 1, "jit", "function, source string or options table");
  read_options(L, 1);  // checked now, not at decoration
  lua_settop(L, 1);
  lua_pushcclosure(L, trampoline<l_decorate>, 1);
  return 1;
}

// ---- launch configurations ---------------------------------------------------------------

// The common, valid configurations in one pass over the table, checking nothing twice and
// formatting nothing: k[{g, b}](...) reads one at every call. False for anything it does
// not take (then read_config reads the table again, with its errors).
bool read_config_fast(lua_State* L, int idx, LaunchConfig* out) {
  Dim3 dims[2];  // grid, block
  bool seen[2] = {false, false};
  bool ok = true;
  lua_pushnil(L);
  while (ok && lua_next(L, idx)) {  // key at -2, value at -1
    int which = -1;
    if (lua_type(L, -2) == LUA_TNUMBER) {
      int isnum = 0;
      lua_Integer i = lua_tointegerx(L, -2, &isnum);
      which = isnum && (i == 1 || i == 2) ? static_cast<int>(i - 1) : -2;
    } else if (lua_type(L, -2) == LUA_TSTRING) {
      std::size_t n = 0;
      const char* key = lua_tolstring(L, -2, &n);
      std::string_view k(key, n);
      if (k == "grid") which = 0;
      else if (k == "block") which = 1;
      else if (k == "shared") {
        int isnum = 0;
        lua_Integer bytes = lua_tointegerx(L, -1, &isnum);
        ok = isnum && lua_type(L, -1) == LUA_TNUMBER && bytes >= 0 && bytes <= UINT_MAX;
        out->shared_mem = static_cast<unsigned>(bytes);
      } else if (k == "stream") {
        Stream* s = test_stream(L, -1);
        ok = s != nullptr;
        if (s) set_stream(*out, *s);
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    if (which == -2) ok = false;
    if (which >= 0) {
      ok = !seen[which] && read_launch_dim_fast(L, -1, &dims[which]);
      seen[which] = true;
    }
    lua_pop(L, 1);
  }
  if (!ok) {
    lua_pop(L, 1);  // the key lua_next left
    return false;
  }
  if (!seen[0] || !seen[1]) return false;
  out->grid = dims[0];
  out->block = dims[1];
  return true;
}

// {grid, block} or {grid = ..., block = ..., shared = bytes, stream = s} at idx.
LaunchConfig read_config(lua_State* L, int idx, const std::string& kernel) {
  idx = lua_absindex(L, idx);
  if (LaunchConfig fast; read_config_fast(L, idx, &fast)) return fast;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    bool known = false;
    if (lua_type(L, -1) == LUA_TSTRING) {
      std::string_view key = string_at(L, -1);
      known = key == "grid" || key == "block" || key == "shared" || key == "stream";
    } else if (lua_isinteger(L, -1)) {
      lua_Integer i = lua_tointeger(L, -1);
      if (i == 3 || i == 4)
        fail("kernel '{}': the launch configuration takes two values, {{blockspergrid, threadsperblock}}; give "
             "shared memory and the stream by name: {}[{{grid, block, shared = bytes, stream = s}}](...)",
             kernel, kernel);
      known = i == 1 || i == 2;
    }
    if (!known) {
      std::string key = describe(L, -1);
      lua_pop(L, 1);
      fail("kernel '{}': unknown launch option {}; expected grid, block, shared, stream", kernel, key);
    }
  }
  LaunchConfig config;
  auto dim = [&](int position, const char* name) {
    lua_rawgeti(L, idx, position);
    lua_pushstring(L, name);
    lua_rawget(L, idx);
    bool positional = !lua_isnil(L, -2), named = !lua_isnil(L, -1);
    if (positional && named)
      fail("kernel '{}': the {} is given twice ([{}] and {} =); give it once", kernel, name, position, name);
    if (!positional && !named)
      fail("kernel '{}': the launch configuration has no {}; use the syntax {}", kernel, name, syntax(kernel));
    Dim3 d;
    if (!read_launch_dim_fast(L, positional ? -2 : -1, &d))  // the hint is built for the error only
      d = read_launch_dim(L, positional ? -2 : -1, Subject{"kernel", kernel}, name, "use the syntax " + syntax(kernel));
    lua_pop(L, 2);
    return d;
  };
  config.grid = dim(1, "grid");
  config.block = dim(2, "block");
  if (push_option(L, idx, "shared") != LUA_TNIL) {
    std::int64_t bytes = to_integer(L, -1, fmt::format("kernel '{}'", kernel), "shared");
    if (bytes < 0 || bytes > UINT_MAX)
      fail("kernel '{}': shared is {} bytes; it must be between 0 and {}", kernel, bytes, UINT_MAX);
    config.shared_mem = static_cast<unsigned>(bytes);
  }
  lua_pop(L, 1);
  // k[{g, b}](...) reads this at every call: a stream object is taken in place, and the
  // kernel's name is formatted only for stream_option's error.
  int type = push_option(L, idx, "stream");
  Stream* s = test_stream(L, -1);
  lua_pop(L, 1);
  if (s) set_stream(config, *s);
  else if (type != LUA_TNIL)
    if (std::optional<Stream> other = stream_option(L, idx, fmt::format("kernel '{}'", kernel)))
      set_stream(config, *other);
  return config;
}

// ---- the kernel object --------------------------------------------------------------------

int l_kernel_index(lua_State* L) {
  JitObject& k = check_jit(L, 1, "index");
  const std::string& name = k.kernel->name();
  switch (lua_type(L, 2)) {
    case LUA_TSTRING: {
      if (push_method(L, 2)) return 1;
      std::string_view key = string_at(L, 2);
      if (key == "lua") return lua_getiuservalue(L, 1, 1), 1;
      if (key == "name") return lua_pushlstring(L, name.data(), name.size()), 1;
      fail(
          "jit_kernel has no field {} (fields: lua, name; methods: compile, inspect, max_cooperative_grid_blocks, signatures, stats)",
          describe(L, 2));
    }
    case LUA_TTABLE: {
      LaunchConfig config = read_config(L, 2, name);
      push_object<Launcher>(L, kLauncherType, Launcher{config}, 1);
      lua_pushvalue(L, 1);
      lua_setiuservalue(L, -2, 1);
      return 1;
    }
    default: fail("kernel '{}' is indexed with {}; use the syntax {}", name, describe(L, 2), syntax(name));
  }
}

// k(args) with no configuration: numba's error.
int l_kernel_call(lua_State* L) {
  const std::string& name = check_jit(L, 1, "call").kernel->name();
  fail("kernel '{}' launch configuration was not specified. Use the syntax: {}", name, syntax(name));
}

int l_launch(lua_State* L) {
  Launcher& launcher = check_object<Launcher>(L, 1, kLauncherType, "launch");
  lua_getiuservalue(L, 1, 1);
  JitObject* kernel = test_object<JitObject>(L, -1, kJitType);
  lua_pop(L, 1);  // the launcher still holds it
  if (!kernel)
    fail("this launcher's kernel was replaced through the debug library (debug.setuservalue): configure the "
         "kernel again, k[{{blocks, threads}}](...)");
  JitObject& k = *kernel;
  keep_for_graph(L, 1);
  const std::string& name = k.kernel->name();
  int n = lua_gettop(L) - 1;
  if (n > jit::kMaxJitArgs)
    fail("kernel '{}': a cuda.jit kernel takes at most {} arguments, got {}", name, jit::kMaxJitArgs, n);
  // On the stack: no allocation per launch. The arguments stay on the Lua stack, so every
  // array they name lives through the launch.
  KernelArgStorage<jit::kMaxJitArgs> storage;
  jit::KernelArg* args = storage.data();
  for (int i = 0; i < n; ++i) {
    int at = i + 2;
    if (!to_kernel_arg(L, at, &args[i]))
      fail("kernel '{}': argument {} is {}; pass arrays, numbers, booleans or typed scalars (luda.int32(v))", name,
           i + 1, lua_isnil(L, at) ? "nil" : "a " + type_name(L, at));
  }
  k.env->bind(L);
  k.kernel->launch(launcher.config, std::span<const jit::KernelArg>(args, static_cast<std::size_t>(n)));
  return 0;
}

int l_compile(lua_State* L) {
  JitObject& k = check_jit(L, 1, "compile");
  std::string_view signature = check_string(L, 2, "compile");
  k.env->bind(L);
  k.kernel->compile(signature);
  lua_settop(L, 1);
  return 1;
}

// k:inspect(kind [, signature] [, {arch=}])
int l_inspect(lua_State* L) {
  JitObject& k = check_jit(L, 1, "inspect");
  std::string_view kind = check_string(L, 2, "inspect");
  std::string_view signature;
  int opts = 3;
  if (lua_type(L, 3) == LUA_TSTRING) {
    signature = string_at(L, 3);
    opts = 4;
  } else if (!is_none_or_nil(L, 3) && lua_type(L, 3) != LUA_TTABLE) {
    type_error(L, 3, "inspect", "signature string or options table");
  }
  check_options(L, opts, "inspect", {"arch"});
  int arch = arch_option(L, opts, "inspect");
  k.env->bind(L);
  std::string text = k.kernel->inspect(kind, signature, arch);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// k:max_cooperative_grid_blocks(block [, shared_bytes]): numba's, for the current device.
int l_max_cooperative_grid_blocks(lua_State* L) {
  JitObject& k = check_jit(L, 1, "max_cooperative_grid_blocks");
  CooperativeQuery q = read_cooperative_query(L);
  k.env->bind(L);
  lua_pushinteger(L, static_cast<lua_Integer>(k.kernel->max_cooperative_grid_blocks(q.block, q.shared)));
  return 1;
}

int l_signatures(lua_State* L) {
  std::vector<std::string> sigs = check_jit(L, 1, "signatures").kernel->signatures();
  lua_createtable(L, static_cast<int>(sigs.size()), 0);
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    lua_pushlstring(L, sigs[i].data(), sigs[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

void set_number(lua_State* L, const char* key, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}
void set_integer(lua_State* L, const char* key, std::uint64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, key);
}

int l_stats(lua_State* L) {
  push_jit_stats(L, check_jit(L, 1, "stats").kernel->stats());
  return 1;
}

// luda.cuda.cache_stats(): the process's disk cache counters and folder.
int l_cache_stats(lua_State* L) {
  jit::DiskCache& cache = jit::DiskCache::global();
  jit::DiskCache::Stats s = cache.stats();
  lua_createtable(L, 0, 6);
  set_integer(L, "hits", s.hits);
  set_integer(L, "misses", s.misses);
  set_integer(L, "writes", s.writes);
  set_integer(L, "corrupt", s.corrupt);
  set_integer(L, "write_failures", s.write_failures);
  std::string dir = cache.directory().string();
  lua_pushlstring(L, dir.data(), dir.size());
  lua_setfield(L, -2, "directory");
  return 1;
}

int l_kernel_tostring(lua_State* L) {
  std::string text = fmt::format("<cuda.jit kernel '{}'>", check_jit(L, 1, "tostring").kernel->name());
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_kernel_gc(lua_State* L) {
  if (userdata_tag(L, 1) != kJitType) return 0;  // see gc_object
  auto* box = static_cast<Box<JitObject>*>(lua_touserdata(L, 1));
  if (box->alive) {
    if (box->value.env) box->value.env->release(L);
    box->alive = false;
    box->value.~JitObject();
  }
  return 0;
}

}  // namespace

void open_jit(lua_State* L) {
  static const luaL_Reg kernel_meta[] = {
      {"__call", trampoline<l_kernel_call>},
      {"__tostring", trampoline<l_kernel_tostring>},
      {"__gc", l_kernel_gc},
      {nullptr, nullptr},
  };
  static const luaL_Reg kernel_methods[] = {
      {"compile", trampoline<l_compile>},
      {"inspect", trampoline<l_inspect>},
      {"max_cooperative_grid_blocks", trampoline<l_max_cooperative_grid_blocks>},
      {"signatures", trampoline<l_signatures>},
      {"stats", trampoline<l_stats>},
      {nullptr, nullptr},
  };
  new_metatable_with_index(L, kJitType, kernel_meta, kernel_methods, trampoline<l_kernel_index>);
  static const luaL_Reg launcher_meta[] = {
      {"__call", trampoline<l_launch>},
      // No __gc: a Launcher is trivially destructible, and a finalizer would cost every
      // k[{g, b}](...) two collection cycles for its launcher.
      {nullptr, nullptr},
  };
  new_metatable(L, kLauncherType, launcher_meta, nullptr);
  lua_pop(L, 1);
  static const luaL_Reg cuda_funcs[] = {
      {"jit", trampoline<l_jit>},
      {"cache_stats", trampoline<l_cache_stats>},
      {nullptr, nullptr},
  };
  lua_getfield(L, -1, "cuda");
  luaL_setfuncs(L, cuda_funcs, 0);
  lua_pop(L, 1);
  register_namespaces(L);
}

void push_jit_stats(lua_State* L, const jit::JitStats& s) {
  lua_createtable(L, 0, 11);
  set_integer(L, "calls", s.calls);
  set_integer(L, "memory_hits", s.memory_hits);
  set_integer(L, "specializations", s.specializations);
  set_integer(L, "disk_hits", s.disk_hits);
  set_integer(L, "disk_misses", s.disk_misses);
  set_integer(L, "nvrtc_compiles", s.nvrtc_compiles);
  set_integer(L, "host_compiles", s.host_compiles);
  set_integer(L, "loads", s.loads);
  set_number(L, "frontend_seconds", s.frontend_seconds);
  set_number(L, "compile_seconds", s.compile_seconds);
  set_number(L, "load_seconds", s.load_seconds);
}

}  // namespace luda::lua

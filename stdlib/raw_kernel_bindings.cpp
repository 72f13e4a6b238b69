// Raw CUDA kernels, as CuPy's RawKernel and RawModule:
//   local k = luda.raw_kernel(source, "add", {options = {"-DN=4"}})
//   k(grid, block, {x, y, out, n}, {shared_mem = 0, stream = s})
//   local m = luda.raw_module(source); local f = m:get_function("sum_ker")
//   local m = luda.raw_module({path = "k.cubin"})        -- a cubin, PTX or fatbin file
//   local c = m:get_global("c", {dtype = "float32", shape = {4}})  -- an array viewing it
// grid and block are numbers or tables of 1 to 3 numbers. Arguments are arrays (their
// device pointer), Lua integers and floats, booleans, and typed scalars; jit/raw_module
// checks and converts them against the kernel's parameter list.
#include <algorithm>
#include <climits>
#include <memory>
#include <vector>

#include "jit/call/launch.h"
#include "jit/compile/program.h"
#include "jit/raw/raw_module.h"
#include "runtime/driver.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

using KernelRef = std::shared_ptr<jit::RawKernel>;
using ModuleRef = std::shared_ptr<jit::RawModule>;

constexpr const char* kLaunchSyntax = "launch as k(grid, block, {args...}, {shared_mem=, stream=})";

KernelRef& check_kernel(lua_State* L, int arg, std::string_view fname) {
  return check_object<KernelRef>(L, arg, kKernelType, fname);
}
ModuleRef& check_module(lua_State* L, int arg, std::string_view fname) {
  return check_object<ModuleRef>(L, arg, kModuleType, fname);
}

struct CompileOptions {
  std::vector<std::string> nvrtc;
  bool cooperative = false;
};

// {options = {"-DN=4", ...}, enable_cooperative_groups = true} at arg: NVRTC options as
// given, and whether the kernels are launched cooperatively (CuPy's option).
CompileOptions compile_options(lua_State* L, int arg, std::string_view fname) {
  check_options(L, arg, fname, {"options", "enable_cooperative_groups"});
  CompileOptions result;
  int cooperative = push_option(L, arg, "enable_cooperative_groups");
  if (cooperative == LUA_TBOOLEAN) result.cooperative = lua_toboolean(L, -1) != 0;
  else if (cooperative != LUA_TNIL)
    fail("{}: option 'enable_cooperative_groups' must be a boolean, got {}", fname, describe(L, -1));
  lua_pop(L, 1);
  std::vector<std::string>& out = result.nvrtc;
  int type = push_option(L, arg, "options");
  if (type == LUA_TTABLE) {
    auto n = static_cast<int>(lua_rawlen(L, -1));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_type(L, -1) != LUA_TSTRING)
        fail("{}: options[{}] must be a string (an NVRTC option such as \"-DN=4\"), got {}", fname, i, describe(L, -1));
      out.emplace_back(string_at(L, -1));
      lua_pop(L, 1);
    }
  } else if (type != LUA_TNIL) {
    fail("{}: option 'options' must be a table of strings, got {}", fname, describe(L, -1));
  }
  lua_pop(L, 1);
  return result;
}

// :inspect("cuda") -> the source; :inspect("ptx" | "cubin", {arch=}) -> NVRTC's PTX, or
// its cubin (the bytes, as a string), for the arch.
int inspect(lua_State* L, const jit::RawModule& module, std::string_view fname) {
  std::string_view what = check_string(L, 2, fname);
  int opts = lua_type(L, 3) == LUA_TTABLE || lua_isnoneornil(L, 3) ? 3 : 4;
  check_options(L, opts, fname, {"arch"});
  if (what == "cuda") {
    if (!module.path().empty())
      fail("{}: the module was loaded from the {} file '{}' and has no CUDA source", fname, module.image_kind(),
           module.path());
    lua_pushlstring(L, module.source().data(), module.source().size());
    return 1;
  }
  if (what == "ptx" || what == "cubin") {
    bool cubin = what == "cubin";
    int arch = 0;
    if (module.path().empty()) {
      arch = arch_option(L, opts, fname);
      if (!arch) arch = jit::current_arch_for(fname);
    }
    jit::CompiledProgram p = module.compile_for(arch, cubin);
    std::string_view image = p.image;
    while (!cubin && !image.empty() && image.back() == '\0') image.remove_suffix(1);
    lua_pushlstring(L, image.data(), image.size());
    return 1;
  }
  arg_error(L, 2, fname, fmt::format("unknown kind '{}'; expected \"cuda\", \"ptx\" or \"cubin\"", what));
}

// luda.raw_kernel(source, name, {options=, enable_cooperative_groups=})
int l_raw_kernel(lua_State* L) {
  std::string_view source = check_string(L, 1, "raw_kernel");
  std::string_view name = check_string(L, 2, "raw_kernel");
  CompileOptions options = compile_options(L, 3, "raw_kernel");
  // Through the module, whose get_function reports a name the source visibly lacks.
  ModuleRef module = jit::RawModule::create(std::string(source), std::move(options.nvrtc), options.cooperative);
  push_object<KernelRef>(L, kKernelType, module->get_function(std::string(name)));
  return 1;
}

// luda.raw_module(source, {options=, enable_cooperative_groups=}) or
// luda.raw_module({path = file, enable_cooperative_groups=})
int l_raw_module(lua_State* L) {
  if (lua_type(L, 1) == LUA_TTABLE) {
    check_options(L, 1, "raw_module", {"path", "enable_cooperative_groups"});
    if (!is_none_or_nil(L, 2)) fail("raw_module: a module loaded from a file is compiled already; it takes no options");
    bool cooperative = false;
    if (int type = push_option(L, 1, "enable_cooperative_groups"); type == LUA_TBOOLEAN)
      cooperative = lua_toboolean(L, -1) != 0;
    else if (type != LUA_TNIL)
      fail("raw_module: option 'enable_cooperative_groups' must be a boolean, got {}", describe(L, -1));
    lua_pop(L, 1);
    if (push_option(L, 1, "path") != LUA_TSTRING)
      fail("raw_module: give CUDA source text, or {{path = file}} for a cubin, PTX or fatbin file; got {}",
           lua_isnil(L, -1) ? "a table without path" : "path = " + describe(L, -1));
    std::string path(string_at(L, -1));
    push_object<ModuleRef>(L, kModuleType, jit::RawModule::load_file(path, cooperative));
    return 1;
  }
  std::string_view source = check_string(L, 1, "raw_module");
  CompileOptions options = compile_options(L, 2, "raw_module");
  push_object<ModuleRef>(L, kModuleType,
                         jit::RawModule::create(std::string(source), std::move(options.nvrtc), options.cooperative));
  return 1;
}

// The options table at 5 ({shared_mem=, stream=}) into config; checked as given.
void read_launch_options(lua_State* L, const std::string& name, LaunchConfig& config) {
  if (lua_type(L, 5) != LUA_TTABLE)
    fail("raw_kernel '{}': the launch options must be a table {{shared_mem=, stream=}}, got {} ({})", name,
         type_name(L, 5), kLaunchSyntax);
  std::string key = unknown_option(L, 5, {"shared_mem", "stream"});
  if (!key.empty()) fail("raw_kernel '{}': unknown launch option {}; expected shared_mem, stream", name, key);
  if (push_option(L, 5, "shared_mem") != LUA_TNIL) {
    std::int64_t bytes = to_integer(L, -1, fmt::format("raw_kernel '{}'", name), "option 'shared_mem'");
    if (bytes < 0 || bytes > UINT_MAX)
      fail("raw_kernel '{}': option 'shared_mem' is {} bytes; it must be between 0 and {}", name, bytes, UINT_MAX);
    config.shared_mem = static_cast<unsigned>(bytes);
  }
  lua_pop(L, 1);
  // A stream object is read in place (no copy of the handle's shared state); anything
  // else goes to stream_option, which accepts 0 and words the error.
  push_option(L, 5, "stream");
  Stream* s = test_stream(L, -1);
  lua_pop(L, 1);
  if (s) set_stream(config, *s);
  else if (std::optional<Stream> other = stream_option(L, 5, fmt::format("raw_kernel '{}'", name)))
    set_stream(config, *other);
}

// Arguments read into storage on the C stack up to this many; more go to the heap.
constexpr int kStackArgs = 32;

// k(grid, block, {args...}, {shared_mem=, stream=})
// The hot path of a raw kernel: nothing here formats a message or allocates unless the
// call is wrong (or passes more than kStackArgs arguments).
int l_kernel_call(lua_State* L) {
  jit::RawKernel& k = *check_kernel(L, 1, "raw_kernel");
  keep_for_graph(L, 1);
  const std::string& name = k.name();
  LaunchConfig config;
  Subject who{"raw_kernel", name};
  config.grid = read_launch_dim(L, 2, who, "grid", kLaunchSyntax);
  config.block = read_launch_dim(L, 3, who, "block", kLaunchSyntax);
  if (lua_type(L, 4) != LUA_TTABLE)
    fail("raw_kernel '{}': the arguments must be a table {{x, y, ...}}, got {} ({})", name,
         lua_isnone(L, 4) ? "no value" : type_name(L, 4), kLaunchSyntax);
  if (!is_none_or_nil(L, 5)) read_launch_options(L, name, config);

  // The args table stays on the stack through the launch, so every array it holds lives.
  auto n = static_cast<int>(lua_rawlen(L, 4));
  KernelArgStorage<kStackArgs> on_stack;
  std::vector<jit::KernelArg> on_heap;
  jit::KernelArg* args = on_stack.data();
  if (n > kStackArgs) {
    on_heap.resize(static_cast<std::size_t>(n));
    args = on_heap.data();
  }
  for (int i = 1; i <= n; ++i) {
    int type = lua_rawgeti(L, 4, i);
    bool ok = to_kernel_arg(L, -1, &args[i - 1]);
    if (!ok)
      fail("raw_kernel '{}': argument {} is {}; pass arrays, numbers, booleans or typed scalars "
           "(luda.int32(v))",
           name, i, type == LUA_TNIL ? "nil" : "a " + type_name(L, -1));
    lua_pop(L, 1);
  }
  k.launch(config, std::span<const jit::KernelArg>(args, static_cast<std::size_t>(n)));
  return 0;
}

int l_kernel_index(lua_State* L) {
  jit::RawKernel& k = *check_kernel(L, 1, "index");
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (push_method(L, 2)) return 1;
    std::string_view key = string_at(L, 2);
    if (key == "name") return lua_pushlstring(L, k.name().data(), k.name().size()), 1;
    if (key == "source") {
      const std::string& s = k.raw_module()->source();
      return lua_pushlstring(L, s.data(), s.size()), 1;
    }
  }
  fail("raw_kernel has no field {} (fields: name, source; methods: inspect, max_cooperative_grid_blocks)",
       describe(L, 2));
}

// k:max_cooperative_grid_blocks(block [, shared_bytes]): the grid limit of a cooperative
// launch on the current device.
int l_kernel_max_cooperative_grid_blocks(lua_State* L) {
  jit::RawKernel& k = *check_kernel(L, 1, "max_cooperative_grid_blocks");
  CooperativeQuery q = read_cooperative_query(L);
  lua_pushinteger(L, static_cast<lua_Integer>(k.max_cooperative_grid_blocks(q.block, q.shared)));
  return 1;
}

int l_kernel_inspect(lua_State* L) { return inspect(L, *check_kernel(L, 1, "inspect")->raw_module(), "inspect"); }

int l_kernel_tostring(lua_State* L) {
  std::string text = fmt::format("<raw_kernel '{}'>", check_kernel(L, 1, "tostring")->name());
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// "<raw_module 'k.cubin'>" for a binary file, "<raw_module of 12 lines of source>".
int l_module_tostring(lua_State* L) {
  ModuleRef& m = check_module(L, 1, "tostring");
  std::string text;
  if (!m->path().empty()) {
    text = fmt::format("<raw_module '{}'>", m->path());
  } else {
    const std::string_view src = m->source();
    std::size_t lines = static_cast<std::size_t>(std::count(src.begin(), src.end(), '\n'));
    if (!src.empty() && src.back() != '\n') ++lines;
    text = fmt::format("<raw_module of {} line{} of source>", lines, lines == 1 ? "" : "s");
  }
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_module_get_function(lua_State* L) {
  ModuleRef& m = check_module(L, 1, "get_function");
  std::string_view name = check_string(L, 2, "get_function");
  push_object<KernelRef>(L, kKernelType, m->get_function(std::string(name)));
  return 1;
}

int l_module_inspect(lua_State* L) { return inspect(L, *check_module(L, 1, "inspect"), "inspect"); }

// The dtype option of the options table at arg: a name or a dtype constructor.
DType dtype_option(lua_State* L, int arg, std::string_view fname) {
  int type = push_option(L, arg, "dtype");
  DType dtype = DType::Float32;
  if (type == LUA_TSTRING) {
    dtype = dtype_from_name(string_at(L, -1));
  } else if (type == LUA_TNIL || !dtype_of_constructor(L, -1, &dtype)) {
    fail("{}: give the element type: {{dtype = \"float32\"}} (a dtype name or luda.float32), got {}", fname,
         type == LUA_TNIL ? "none" : describe(L, -1));
  }
  lua_pop(L, 1);
  return dtype;
}

// m:get_global(name, {dtype=, shape=}): an array viewing the global variable `name` of the
// module on the current device (CuPy's get_global, wrapped in an ndarray). Without a
// shape it is 1-D, the whole variable. The array keeps the module alive.
int l_module_get_global(lua_State* L) {
  constexpr std::string_view fname = "get_global";
  ModuleRef& m = check_module(L, 1, fname);
  std::string name(check_string(L, 2, fname));
  if (lua_type(L, 3) != LUA_TTABLE)
    fail("{}: the options table {{dtype =, shape =}} must follow the name (m:get_global(\"{}\", {{dtype = "
         "\"float32\"}})), got {}",
         fname, name, lua_isnone(L, 3) ? "no value" : describe(L, 3));
  check_options(L, 3, fname, {"dtype", "shape"});
  DType dtype = dtype_option(L, 3, fname);
  std::optional<Shape> shape;
  if (push_option(L, 3, "shape") != LUA_TNIL) shape = check_shape(L, lua_gettop(L), fname);
  lua_pop(L, 1);
  jit::ModuleGlobal g = m->global(current_device(), name);
  std::size_t item = itemsize(dtype);
  if (!shape) {
    if (g.bytes % item != 0)
      fail("{}: '{}' is {} bytes, not a whole number of {} elements ({} bytes each); give the dtype it holds", fname,
           name, g.bytes, dtype_name(dtype), item);
    shape = Shape{static_cast<std::int64_t>(g.bytes / item)};
  }
  std::size_t need = item;
  for (std::int64_t e : *shape) need *= static_cast<std::size_t>(e);
  if (need > g.bytes)
    fail("{}: '{}' is {} bytes; shape {} of {} needs {} bytes", fname, name, g.bytes, shape_str(*shape),
         dtype_name(dtype), need);
  auto buffer = Buffer::wrap(g.device, g.address, g.bytes, [keep = m] {});
  Strides strides = c_strides(*shape);
  push_array(L, NDArray::view(std::move(buffer), dtype, std::move(*shape), std::move(strides)));
  return 1;
}

int l_module_index(lua_State* L) {
  ModuleRef& m = check_module(L, 1, "index");
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (push_method(L, 2)) return 1;
    if (string_at(L, 2) == "source") return lua_pushlstring(L, m->source().data(), m->source().size()), 1;
    if (string_at(L, 2) == "path") return lua_pushlstring(L, m->path().data(), m->path().size()), 1;
  }
  fail("raw_module has no field {} (fields: source, path; methods: get_function, get_global, inspect)", describe(L, 2));
}

}  // namespace

void open_kernels(lua_State* L) {
  static const luaL_Reg kernel_meta[] = {
      {"__call", trampoline<l_kernel_call>},
      {"__tostring", trampoline<l_kernel_tostring>},
      {"__gc", gc_object<KernelRef, kKernelType>},
      {nullptr, nullptr},
  };
  static const luaL_Reg kernel_methods[] = {
      {"inspect", trampoline<l_kernel_inspect>},
      {"max_cooperative_grid_blocks", trampoline<l_kernel_max_cooperative_grid_blocks>},
      {nullptr, nullptr},
  };
  new_metatable_with_index(L, kKernelType, kernel_meta, kernel_methods, trampoline<l_kernel_index>);
  static const luaL_Reg module_meta[] = {
      {"__tostring", trampoline<l_module_tostring>},
      {"__gc", gc_object<ModuleRef, kModuleType>},
      {nullptr, nullptr},
  };
  static const luaL_Reg module_methods[] = {
      {"get_function", trampoline<l_module_get_function>},
      {"get_global", trampoline<l_module_get_global>},
      {"inspect", trampoline<l_module_inspect>},
      {nullptr, nullptr},
  };
  new_metatable_with_index(L, kModuleType, module_meta, module_methods, trampoline<l_module_index>);
  static const luaL_Reg funcs[] = {
      {"raw_kernel", trampoline<l_raw_kernel>},
      {"raw_module", trampoline<l_raw_module>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, funcs, 0);
}

}  // namespace luda::lua

// Devices, streams and events: luda.devices(), luda.device(spec), luda.current_device(),
// luda.with_device(spec, fn, ...), luda.stream({device=}), luda.event({timing=, device=}),
// luda.cuda.synchronize(), luda.cuda.is_available(), luda.cuda.device_count().
#include <cstdio>
#include <cstring>

#include "runtime/driver.h"
#include "runtime/graph/recording.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

Device& check_device(lua_State* L, int arg, std::string_view fname) {
  return check_object<Device>(L, arg, kDeviceType, fname);
}

// luda.devices(): every CUDA device, then every cpu device (cpu, then cpu:1 ... under
// LUDA_CPU_DEVICES).
int l_devices(lua_State* L) {
  const int n = cuda_device_count(), cpus = cpu_device_count();
  lua_createtable(L, n + cpus, 0);
  for (int i = 0; i < n; ++i) {
    push_device(L, Device::cuda(i));
    lua_rawseti(L, -2, i + 1);
  }
  for (int i = 0; i < cpus; ++i) {
    push_device(L, Device::cpu(i));
    lua_rawseti(L, -2, n + i + 1);
  }
  return 1;
}

int l_device(lua_State* L) {
  if (is_none_or_nil(L, 1)) type_error(L, 1, "device", "device (\"cpu\", \"cuda:N\" or an ordinal)");
  push_device(L, to_device_spec(L, 1, "device", "device"));
  return 1;
}

int l_current_device(lua_State* L) {
  push_device(L, current_device());
  return 1;
}

int l_with_device(lua_State* L);

// The message handler of with_device's call: a yield inside fn (refused, since fn runs in
// a C call) is reported at the yield, with why; any other error is left as it is.
int yield_message(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr || std::strcmp(msg, "attempt to yield across a C-call boundary") != 0) return 1;
  // Level 1 is coroutine.yield; the C function nearest above it must be with_device, for
  // the yield to be with_device's to explain (not table.sort's, say).
  lua_Debug ar;
  lua_pushliteral(L, "");  // 2: the place of the yield
  for (int level = 2; lua_getstack(L, level, &ar); ++level) {
    lua_getinfo(L, "Slf", &ar);
    bool with_device = lua_tocfunction(L, -1) == trampoline<l_with_device>;
    lua_pop(L, 1);
    if (std::strcmp(ar.what, "C") == 0) {
      if (with_device) break;
      lua_settop(L, 1);
      return 1;
    }
    if (lua_rawlen(L, 2) == 0 && ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      lua_replace(L, 2);
    }
  }
  lua_pushliteral(L, "luda.with_device: the function yielded (coroutine.yield); with_device sets the device only "
                     "while its function runs, so it cannot be left suspended: call coroutine.yield outside "
                     "luda.with_device, or luda.with_device around the code between two yields");
  lua_concat(L, 2);
  return 1;
}

// luda.with_device(spec, fn, ...): fn(...) with spec as the thread's current device; the
// previous device is restored even when fn raises, and fn's error propagates unchanged
// (a yield inside fn is refused at the yield, with why).
int l_with_device(lua_State* L) {
  if (is_none_or_nil(L, 1)) type_error(L, 1, "with_device", "device");
  Device d = to_device_spec(L, 1, "with_device", "device");
  check_function(L, 2, "with_device");
  Device previous = current_device();
  use_device(d);
  lua_pushcfunction(L, yield_message);
  lua_insert(L, 2);
  int status = lua_pcall(L, lua_gettop(L) - 3, LUA_MULTRET, 2);
  use_device(previous);
  if (status != LUA_OK) return kRethrow;
  return lua_gettop(L) - 2;
}

int l_synchronize(lua_State* L) {
  GraphRecording::refuse_if_recording("luda.cuda.synchronize()");
  synchronize(current_device());
  (void)L;
  return 0;
}

// luda.cuda.is_available() -> true, or false and the reason (the text NoDeviceError gives
// after "no CUDA device: ").
int l_is_available(lua_State* L) {
  std::string reason;
  try {
    require_cuda_device(0);
  } catch (const NoDeviceError& e) {
    reason = e.what();
  }
  lua_pushboolean(L, reason.empty());
  if (reason.empty()) return 1;
  constexpr std::string_view kPrefix = "no CUDA device: ";
  if (reason.starts_with(kPrefix)) reason.erase(0, kPrefix.size());
  lua_pushlstring(L, reason.data(), reason.size());
  return 2;
}

int l_device_count(lua_State* L) {
  lua_pushinteger(L, cuda_device_count());
  return 1;
}

// ---- device objects -------------------------------------------------------------------

int l_device_index(lua_State* L) {
  Device& d = check_device(L, 1, "index");
  if (lua_type(L, 2) != LUA_TSTRING) fail("device has no field {}", describe(L, 2));
  std::string_view key = string_at(L, 2);
  if (push_method(L, 2)) return 1;  // a method
  if (key == "kind") return lua_pushstring(L, d.is_cpu() ? "cpu" : "cuda"), 1;
  if (key == "index" || key == "id") return lua_pushinteger(L, d.index), 1;
  if (key == "name" && d.is_cpu()) return lua_pushstring(L, d.str().c_str()), 1;
  static constexpr std::string_view kCudaFields[] = {
      "name",         "compute_capability",    "multiprocessors",
      "total_memory", "l2_cache_size",         "arch",
      "warp_size",    "max_threads_per_block", "max_shared_memory_per_block"};
  bool cuda_field = false;
  for (auto f : kCudaFields) cuda_field = cuda_field || f == key;
  if (!cuda_field)
    fail("device has no field '{}' (fields: kind, index, name, compute_capability, multiprocessors, "
         "total_memory, l2_cache_size, arch, warp_size, max_threads_per_block, "
         "max_shared_memory_per_block; methods: use, synchronize, memory_info)",
         key);
  if (d.is_cpu()) {
    lua_pushnil(L);
    return 1;
  }
  const DeviceProperties& p = cuda_properties(d.index);
  if (key == "name") {
    lua_pushstring(L, p.name.c_str());
  } else if (key == "compute_capability") {
    std::int64_t cc[2] = {p.major, p.minor};
    push_int_sequence(L, cc, 2);
  } else if (key == "multiprocessors") {
    lua_pushinteger(L, p.multiprocessors);
  } else if (key == "total_memory") {
    lua_pushinteger(L, static_cast<lua_Integer>(p.total_memory));
  } else if (key == "l2_cache_size") {
    lua_pushinteger(L, static_cast<lua_Integer>(p.l2_cache_bytes));
  } else if (key == "arch") {
    lua_pushstring(L, p.arch().c_str());
  } else if (key == "warp_size") {
    lua_pushinteger(L, p.warp_size);
  } else if (key == "max_threads_per_block") {
    lua_pushinteger(L, p.max_threads_per_block);
  } else {
    lua_pushinteger(L, static_cast<lua_Integer>(p.shared_memory_per_block));
  }
  return 1;
}

int l_device_use(lua_State* L) {
  use_device(check_device(L, 1, "use"));
  lua_settop(L, 1);
  return 1;
}

int l_device_synchronize(lua_State* L) {
  GraphRecording::refuse_if_recording("dev:synchronize()");
  synchronize(check_device(L, 1, "synchronize"));
  return 0;
}

// device:memory_info() -> free, total (bytes), as numba's get_memory_info.
int l_device_memory_info(lua_State* L) {
  Device& d = check_device(L, 1, "memory_info");
  if (d.is_cpu())
    fail("memory_info: {} uses host memory; memory_info is for CUDA devices",
         d.index == 0 ? std::string("the cpu device") : d.str());
  MemoryInfo m = memory_info(d.index);
  lua_pushinteger(L, static_cast<lua_Integer>(m.free));
  lua_pushinteger(L, static_cast<lua_Integer>(m.total));
  return 2;
}

int l_device_tostring(lua_State* L) {
  Device& d = check_device(L, 1, "tostring");
  std::string text = d.is_cpu() ? fmt::format("<device {}>", d.str())
                                : fmt::format("<device {}: {}>", d.str(), cuda_properties(d.index).name);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int l_device_eq(lua_State* L) {
  Device* a = test_object<Device>(L, 1, kDeviceType);
  Device* b = test_object<Device>(L, 2, kDeviceType);
  lua_pushboolean(L, a && b && *a == *b);
  return 1;
}

// ---- streams ------------------------------------------------------------------------

// x.device or one of x's methods, for a stream or an event (`type`) on device d.
int device_object_index(lua_State* L, Device d, std::string_view type, std::string_view methods) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (push_method(L, 2)) return 1;
    if (string_at(L, 2) == "device") {
      lua_pushstring(L, d.str().c_str());
      return 1;
    }
  }
  fail("{} has no field {} (field: device; methods: {})", type, describe(L, 2), methods);
}

// "<stream cuda:0 0x5581...>", or "<stream cpu>" ("<stream cpu:1>") where there is no
// driver handle.
int device_object_tostring(lua_State* L, Device d, std::string_view type, const void* handle) {
  std::string text = d.is_cpu() ? fmt::format("<{} {}>", type, d.str())
                                : fmt::format("<{} {} {}>", type, d.str(), handle);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

Stream& check_stream(lua_State* L, int arg, std::string_view fname) {
  return check_object<Stream>(L, arg, kStreamType, fname);
}

// Option `key` of the options table at `arg`, a boolean; `otherwise` when absent.
bool flag_option(lua_State* L, int arg, std::string_view fname, const char* key, bool otherwise) {
  bool value = otherwise;
  if (push_option(L, arg, key) != LUA_TNIL) {
    if (!lua_isboolean(L, -1)) fail("{}: option '{}' must be a boolean, got {}", fname, key, describe(L, -1));
    value = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  return value;
}

// luda.stream({device=, non_blocking=true}): a new stream on the device, the current one
// when not given. A cpu stream runs its work when it is submitted, which keeps it in order
// (runtime/stream.h).
int l_stream(lua_State* L) {
  check_options(L, 1, "stream", {"device", "non_blocking"});
  const bool non_blocking = flag_option(L, 1, "stream", "non_blocking", true);
  push_object<Stream>(L, kStreamType, Stream::create(device_option(L, 1, "stream"), non_blocking));
  return 1;
}

// luda.default_stream({device=}): the device's default stream, where luda's work goes
// when a call names no stream.
int l_default_stream(lua_State* L) {
  check_options(L, 1, "default_stream", {"device"});
  push_object<Stream>(L, kStreamType, Stream::default_stream(device_option(L, 1, "default_stream")));
  return 1;
}

int l_stream_synchronize(lua_State* L) {
  GraphRecording::refuse_if_recording("s:synchronize()");
  check_stream(L, 1, "synchronize").synchronize();
  return 0;
}

int l_stream_query(lua_State* L) {
  lua_pushboolean(L, check_stream(L, 1, "query").query());
  return 1;
}

int l_stream_wait(lua_State* L) {
  Stream& s = check_stream(L, 1, "wait");
  s.wait(check_object<Event>(L, 2, kEventType, "wait"));
  return 0;
}

int l_stream_index(lua_State* L) {
  return device_object_index(L, check_stream(L, 1, "index").device(), "stream", "synchronize, query, wait");
}

int l_stream_tostring(lua_State* L) {
  Stream& s = check_stream(L, 1, "tostring");
  return device_object_tostring(L, s.device(), "stream", s.handle());
}

// ---- events -------------------------------------------------------------------------

Event& check_event(lua_State* L, int arg, std::string_view fname) {
  return check_object<Event>(L, arg, kEventType, fname);
}

// luda.event({timing=true, device=}): on the device, the current one when not given.
int l_event(lua_State* L) {
  check_options(L, 1, "event", {"timing", "device"});
  const bool timing = flag_option(L, 1, "event", "timing", true);
  push_object<Event>(L, kEventType, Event::create(device_option(L, 1, "event"), timing));
  return 1;
}

// event:record([stream]): on the stream, else the device's default stream. Returns the event.
int l_event_record(lua_State* L) {
  Event& e = check_event(L, 1, "record");
  if (is_none_or_nil(L, 2)) {
    e.record(Stream::default_stream(e.device()));
  } else {
    e.record(check_stream(L, 2, "record"));
  }
  lua_settop(L, 1);
  return 1;
}

int l_event_synchronize(lua_State* L) {
  GraphRecording::refuse_if_recording("e:synchronize()");
  check_event(L, 1, "synchronize").synchronize();
  return 0;
}

int l_event_query(lua_State* L) {
  lua_pushboolean(L, check_event(L, 1, "query").query());
  return 1;
}

// start:elapsed_time(stop): milliseconds, as numba's event_elapsed_time.
int l_event_elapsed_time(lua_State* L) {
  Event& start = check_event(L, 1, "elapsed_time");
  Event& stop = check_event(L, 2, "elapsed_time");
  lua_pushnumber(L, start.elapsed_ms(stop));
  return 1;
}

int l_event_index(lua_State* L) {
  return device_object_index(L, check_event(L, 1, "index").device(), "event",
                             "record, synchronize, query, elapsed_time");
}

int l_event_tostring(lua_State* L) {
  Event& e = check_event(L, 1, "tostring");
  return device_object_tostring(L, e.device(), "event", e.handle());
}

// The note the luda command and module give, once per process, the first time a default
// device is needed on a machine with no usable CUDA device: so that a script that meant
// to use a GPU says why it runs on the cpu, while LUDA_DEVICE=cpu chooses it quietly.
void note_cpu_fallback(const std::string& reason) {
  std::string text = fmt::format(
      "luda: no CUDA device, running on the cpu device (LUDA_DEVICE=cpu chooses it without this note): {}\n", reason);
  std::fwrite(text.data(), 1, text.size(), stderr);  // one piece, so it is never interleaved
  std::fflush(stderr);
}

}  // namespace

void push_device(lua_State* L, Device d) { push_object<Device>(L, kDeviceType, d); }

std::optional<Stream> stream_option(lua_State* L, int arg, std::string_view fname) {
  int type = push_option(L, arg, "stream");
  std::optional<Stream> out;
  if (Stream* s = test_stream(L, -1)) {
    out = *s;
  } else if (type != LUA_TNIL && !(lua_isinteger(L, -1) && lua_tointeger(L, -1) == 0)) {
    fail("{}: option 'stream' must be a stream (luda.stream()) or 0 for the default stream, got {}", fname,
         describe(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

void open_devices(lua_State* L) {
  offer_cpu_fallback_notice(note_cpu_fallback);
  static const luaL_Reg device_meta[] = {
      {"__tostring", trampoline<l_device_tostring>},
      {"__eq", trampoline<l_device_eq>},
      {nullptr, nullptr},
  };
  static const luaL_Reg device_methods[] = {
      {"use", trampoline<l_device_use>},
      {"synchronize", trampoline<l_device_synchronize>},
      {"memory_info", trampoline<l_device_memory_info>},
      {nullptr, nullptr},
  };
  new_metatable_with_index(L, kDeviceType, device_meta, device_methods, trampoline<l_device_index>);

  static const luaL_Reg stream_meta[] = {
      {"__tostring", trampoline<l_stream_tostring>},
      {"__gc", gc_object<Stream, kStreamType>},
      {nullptr, nullptr},
  };
  static const luaL_Reg stream_methods[] = {
      {"synchronize", trampoline<l_stream_synchronize>},
      {"query", trampoline<l_stream_query>},
      {"wait", trampoline<l_stream_wait>},
      {nullptr, nullptr},
  };
  new_metatable_with_index(L, kStreamType, stream_meta, stream_methods, trampoline<l_stream_index>);

  static const luaL_Reg event_meta[] = {
      {"__tostring", trampoline<l_event_tostring>},
      {"__gc", gc_object<Event, kEventType>},
      {nullptr, nullptr},
  };
  static const luaL_Reg event_methods[] = {
      {"record", trampoline<l_event_record>},
      {"synchronize", trampoline<l_event_synchronize>},
      {"query", trampoline<l_event_query>},
      {"elapsed_time", trampoline<l_event_elapsed_time>},
      {nullptr, nullptr},
  };
  new_metatable_with_index(L, kEventType, event_meta, event_methods, trampoline<l_event_index>);

  static const luaL_Reg funcs[] = {
      {"devices", trampoline<l_devices>},
      {"device", trampoline<l_device>},
      {"current_device", trampoline<l_current_device>},
      {"with_device", trampoline<l_with_device>},
      {"stream", trampoline<l_stream>},
      {"default_stream", trampoline<l_default_stream>},
      {"event", trampoline<l_event>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, funcs, 0);
  static const luaL_Reg cuda_funcs[] = {
      {"synchronize", trampoline<l_synchronize>},
      {"is_available", trampoline<l_is_available>},
      {"device_count", trampoline<l_device_count>},
      {nullptr, nullptr},
  };
  lua_getfield(L, -1, "cuda");
  luaL_setfuncs(L, cuda_funcs, 0);
  lua_pop(L, 1);
}

}  // namespace luda::lua

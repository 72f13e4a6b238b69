// luda.dist: the ranks of an MPI job and collectives on arrays (runtime/dist/dist.h,
// docs/distributed.md). Ranks count from 0, as MPI's do.
//
//   luda.dist.rank(), luda.dist.size()
//   luda.dist.barrier([{timeout=}])
//   luda.dist.allreduce(x [, op] [, {timeout=}])        op "sum" (default), "prod", "max", "min"
//   luda.dist.broadcast(x, root [, {timeout=}])
//   luda.dist.allgather(x [, {timeout=}])               shape (size, *x.shape)
//   luda.dist.send(x, dest [, tag] [, {timeout=}])
//   luda.dist.recv(buf, source [, tag] [, {timeout=}])  fills buf and returns it
#include <climits>

#include "runtime/dist/dist.h"
#include "stdlib/bindings.h"

namespace luda::lua {
namespace {

// The {timeout=} options table at arg (nil or none for none).
dist::CallOptions call_options(lua_State* L, int arg, std::string_view fname) {
  check_options(L, arg, fname, {"timeout"});
  dist::CallOptions options;
  if (push_option(L, arg, "timeout") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER)
      arg_error(L, arg, fname, fmt::format("option 'timeout' must be a number of seconds, got {}", describe(L, -1)));
    double seconds = lua_tonumber(L, -1);
    if (!(seconds > 0))
      arg_error(L, arg, fname,
                fmt::format("option 'timeout' must be a positive number of seconds, got {}", describe(L, -1)));
    options.timeout = seconds;
  }
  lua_pop(L, 1);
  return options;
}

// A rank or tag argument: an integer that fits an int (range checks are runtime/dist's).
int int_arg(lua_State* L, int arg, std::string_view fname, std::string_view what) {
  if (lua_type(L, arg) != LUA_TNUMBER)
    arg_error(L, arg, fname, fmt::format("{} (an integer) expected, got {}", what, describe(L, arg)));
  std::int64_t v = check_integer(L, arg, fname);
  if (v < INT_MIN || v > INT_MAX) arg_error(L, arg, fname, fmt::format("{} {} is out of range", what, v));
  return static_cast<int>(v);
}

int l_rank(lua_State* L) {
  lua_pushinteger(L, dist::rank());
  return 1;
}

// luda.dist.info(): {rank=, size=, mpi=, nccl=, nccl_device=, host_reason=}, the strings
// and the device absent when there is none.
int l_info(lua_State* L) {
  const dist::Info i = dist::info();
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, i.rank);
  lua_setfield(L, -2, "rank");
  lua_pushinteger(L, i.size);
  lua_setfield(L, -2, "size");
  auto text = [&](const std::string& v, const char* key) {
    if (v.empty()) return;
    lua_pushlstring(L, v.data(), v.size());
    lua_setfield(L, -2, key);
  };
  text(i.mpi, "mpi");
  text(i.nccl, "nccl");
  if (i.nccl_device) text(i.nccl_device->str(), "nccl_device");
  text(i.host_reason, "host_reason");
  return 1;
}

int l_size(lua_State* L) {
  lua_pushinteger(L, dist::size());
  return 1;
}

// luda.dist.barrier([{timeout=}])
int l_barrier(lua_State* L) {
  constexpr std::string_view fname = "luda.dist.barrier";
  dist::barrier(call_options(L, 1, fname));
  return 0;
}

// luda.dist.allreduce(x [, op] [, {timeout=}])
int l_allreduce(lua_State* L) {
  constexpr std::string_view fname = "luda.dist.allreduce";
  move_options_to(L, 2, 3);
  const NDArray& x = check_array(L, 1, fname);
  dist::Op op = dist::Op::Sum;
  if (!is_none_or_nil(L, 2)) {
    if (lua_type(L, 2) != LUA_TSTRING)
      arg_error(L, 2, fname, fmt::format("op must be \"sum\", \"prod\", \"max\" or \"min\", got {}", describe(L, 2)));
    std::optional<dist::Op> parsed = dist::parse_op(string_at(L, 2));
    if (!parsed)
      arg_error(L, 2, fname,
                fmt::format("unknown op {}; expected \"sum\", \"prod\", \"max\" or \"min\"", describe(L, 2)));
    op = *parsed;
  }
  dist::CallOptions options = call_options(L, 3, fname);
  push_array(L, dist::allreduce(x, op, options));
  return 1;
}

// luda.dist.broadcast(x, root [, {timeout=}])
int l_broadcast(lua_State* L) {
  constexpr std::string_view fname = "luda.dist.broadcast";
  const NDArray& x = check_array(L, 1, fname);
  if (is_none_or_nil(L, 2))
    arg_error(L, 2, fname, "root (the rank whose array every rank gets, from 0) expected, got no value");
  int root = int_arg(L, 2, fname, "root");
  dist::CallOptions options = call_options(L, 3, fname);
  push_array(L, dist::broadcast(x, root, options));
  return 1;
}

// luda.dist.allgather(x [, {timeout=}])
int l_allgather(lua_State* L) {
  constexpr std::string_view fname = "luda.dist.allgather";
  const NDArray& x = check_array(L, 1, fname);
  dist::CallOptions options = call_options(L, 2, fname);
  push_array(L, dist::allgather(x, options));
  return 1;
}

// The peer and tag of send and recv, at 2 and 3, and the options at 4.
struct Message {
  int peer = 0;
  int tag = 0;
  dist::CallOptions options;
};

Message message_args(lua_State* L, std::string_view fname, std::string_view peer) {
  move_options_to(L, 3, 4);
  if (is_none_or_nil(L, 2)) arg_error(L, 2, fname, fmt::format("{} (a rank, from 0) expected, got no value", peer));
  Message m;
  m.peer = int_arg(L, 2, fname, peer);
  if (!is_none_or_nil(L, 3)) m.tag = int_arg(L, 3, fname, "tag");
  m.options = call_options(L, 4, fname);
  return m;
}

// luda.dist.send(x, dest [, tag] [, {timeout=}])
int l_send(lua_State* L) {
  constexpr std::string_view fname = "luda.dist.send";
  const NDArray& x = check_array(L, 1, fname);
  Message m = message_args(L, fname, "dest");
  dist::send(x, m.peer, m.tag, m.options);
  return 0;
}

// luda.dist.recv(buf, source [, tag] [, {timeout=}]): buf filled, and returned.
int l_recv(lua_State* L) {
  constexpr std::string_view fname = "luda.dist.recv";
  NDArray& buf = check_array(L, 1, fname);
  Message m = message_args(L, fname, "source");
  dist::recv(buf, m.peer, m.tag, m.options);
  lua_settop(L, 1);
  return 1;
}

}  // namespace

void open_dist(lua_State* L) {
  static const luaL_Reg funcs[] = {
      {"rank", trampoline<l_rank>},           {"size", trampoline<l_size>},
      {"barrier", trampoline<l_barrier>},     {"allreduce", trampoline<l_allreduce>},
      {"broadcast", trampoline<l_broadcast>}, {"allgather", trampoline<l_allgather>},
      {"send", trampoline<l_send>},           {"recv", trampoline<l_recv>},
      {"info", trampoline<l_info>},           {nullptr, nullptr},
  };
  lua_newtable(L);
  luaL_setfuncs(L, funcs, 0);
  lua_setfield(L, -2, "dist");
}

}  // namespace luda::lua

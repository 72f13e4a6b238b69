// Array constructors: luda.array, zeros, ones, empty, full, arange, linspace, to_device,
// and luda.cuda.to_device / device_array / device_array_like. NumPy's arguments and dtype
// defaults, then dtype, then an options table {device=, stream=}.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "jit/call/call_args.h"
#include "runtime/driver.h"
#include "runtime/graph/recording.h"
#include "stdlib/bindings.h"

namespace luda::lua {

Shape check_shape(lua_State* L, int arg, std::string_view fname) {
  Shape shape;
  if (lua_type(L, arg) == LUA_TNUMBER) {
    shape.push_back(to_integer(L, arg, fname, "shape"));
  } else if (lua_type(L, arg) == LUA_TTABLE) {
    auto n = static_cast<int>(lua_rawlen(L, arg));
    check_ndim(static_cast<std::size_t>(n));  // before reading a long table
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, arg, i);
      std::int64_t e = to_integer(L, -1, fname, fmt::format("shape[{}]", i));
      lua_pop(L, 1);
      shape.push_back(e);
    }
  } else {
    type_error(L, arg, fname, "shape (a number or a sequence of numbers)");
  }
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) fail("{}: negative dimensions are not allowed (shape {})", fname, shape_str(shape));
  return shape;
}

namespace {

// Reads a nested Lua table twice: `measure` finds the shape and, unless given, the dtype;
// `write` converts every element into C-order host bytes.
class NestedTable {
 public:
  NestedTable(lua_State* L, std::string_view fname) : L_(L), fname_(fname) {}

  void measure(int idx) {
    idx = lua_absindex(L_, idx);
    // The shape is the lengths along the first elements: t, t[1], t[1][1], ...
    lua_pushvalue(L_, idx);
    while (lua_type(L_, -1) == LUA_TTABLE) {
      check_ndim(shape_.size() + 1);  // also ends a table that contains itself
      auto n = static_cast<std::int64_t>(lua_rawlen(L_, -1));
      shape_.push_back(n);
      if (n == 0) break;
      lua_rawgeti(L_, -1, 1);
      lua_remove(L_, -2);
    }
    lua_pop(L_, 1);
    if (!lua_checkstack(L_, kMaxNdim + 8)) fail("{}: Lua stack overflow", fname_);
    path_.assign(shape_.size(), 0);
    check(idx, 0);
  }

  const Shape& shape() const { return shape_; }
  DType inferred() const { return seen_ ? inferred_ : DType::Float64; }  // [] is float64, as NumPy

  std::vector<std::byte> write(int idx, DType dtype) {
    dtype_ = dtype;
    std::int64_t n = 1;
    for (auto e : shape_) n *= e;
    bytes_.assign(static_cast<std::size_t>(n) * itemsize(dtype), std::byte{});
    cursor_ = 0;
    convert(lua_absindex(L_, idx), 0);
    return std::move(bytes_);
  }

 private:
  // "t[2][1]" for the element at `depth` along the current path.
  std::string where(std::size_t depth, bool first = false) const {
    std::string s = "t";
    for (std::size_t d = 0; d < depth; ++d) s += fmt::format("[{}]", first ? 1 : path_[d] + 1);
    return s;
  }

  static std::string kind(lua_State* L, int idx) {
    if (lua_isnil(L, idx)) return "nil";
    return "a " + type_name(L, idx);
  }

  void check(int idx, std::size_t depth) {
    int type = lua_type(L_, idx);
    if (depth < shape_.size()) {
      if (type != LUA_TTABLE)
        fail("{}: ragged nested table: {} is {} but {} is a table", fname_, where(depth), kind(L_, idx),
             where(depth, true));
      auto n = static_cast<std::int64_t>(lua_rawlen(L_, idx));
      if (n != shape_[depth])
        fail("{}: ragged nested table: {} has {} element{} but {} has {}", fname_, where(depth), n, n == 1 ? "" : "s",
             where(depth, true), shape_[depth]);
      for (std::int64_t i = 0; i < n; ++i) {
        path_[depth] = i;
        lua_rawgeti(L_, idx, i + 1);
        check(lua_gettop(L_), depth + 1);
        lua_pop(L_, 1);
      }
      return;
    }
    if (type == LUA_TTABLE)
      fail("{}: ragged nested table: {} is a table but {} is not", fname_, where(depth), where(depth, true));
    std::optional<DType> t = natural_dtype(L_, idx);
    if (!t)
      fail("{}: {} is {}; array elements must be numbers, booleans or typed scalars", fname_, where(depth),
           kind(L_, idx));
    inferred_ = seen_ ? promote_types(inferred_, *t) : *t;
    seen_ = true;
  }

  void convert(int idx, std::size_t depth) {
    if (depth < shape_.size()) {
      for (std::int64_t i = 0; i < shape_[depth]; ++i) {
        path_[depth] = i;
        lua_rawgeti(L_, idx, i + 1);
        convert(lua_gettop(L_), depth + 1);
        lua_pop(L_, 1);
      }
      return;
    }
    Scalar s = to_scalar(L_, idx, dtype_, fname_, where(depth));
    s.store(bytes_.data() + cursor_);
    cursor_ += itemsize(dtype_);
  }

  lua_State* L_;
  std::string_view fname_;
  Shape shape_;
  std::vector<std::int64_t> path_;
  DType inferred_ = DType::Float64;
  bool seen_ = false;
  DType dtype_ = DType::Float64;
  std::vector<std::byte> bytes_;
  std::size_t cursor_ = 0;
};

// The device of luda.to_device and the Numba-style luda.cuda.* calls: the `device` option,
// else the stream's device, else the current device (cuda:0 when a GPU is usable; the cpu
// without one, with the note default_device gives, or under LUDA_DEVICE=cpu), so that a
// GPU script runs unchanged on the cpu.
Device target_device(lua_State* L, int arg, std::string_view fname, const std::optional<Stream>& s) {
  push_option(L, arg, "device");
  bool given = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (given) return device_option(L, arg, fname);
  if (s) return s->device();
  return current_device();
}

// luda.array(table_or_array, dtype, {device=})
int l_array(lua_State* L) {
  move_options_to(L, 2, 3);
  std::optional<DType> dtype = opt_dtype(L, 2, "array");
  check_options(L, 3, "array", {"device"});
  if (NDArray* src = test_array(L, 1)) {
    // A copy stays on the source's device unless told otherwise.
    push_option(L, 3, "device");
    bool given = !lua_isnil(L, -1);
    lua_pop(L, 1);
    Device device = given ? device_option(L, 3, "array") : src->device();
    NDArray out = src->copy(device);
    if (dtype && *dtype != out.dtype()) out = out.astype(*dtype);
    push_array(L, std::move(out));
    return 1;
  }
  if (lua_type(L, 1) != LUA_TTABLE && !natural_dtype(L, 1)) type_error(L, 1, "array", "table or ndarray");
  push_array(L, array_from_table(L, 1, dtype, device_option(L, 3, "array"), "array"));
  return 1;
}

NDArray make_filled(lua_State* L, std::string_view fname, int shape_arg, int value_arg, int dtype_arg, int opts_arg,
                    int fill) {
  move_options_to(L, dtype_arg, opts_arg);
  Shape shape = check_shape(L, shape_arg, fname);
  std::optional<DType> given = opt_dtype(L, dtype_arg, fname);
  check_options(L, opts_arg, fname, {"device"});
  Device device = device_option(L, opts_arg, fname);
  if (value_arg == 0) {  // zeros/ones/empty
    DType dtype = given.value_or(DType::Float64);
    if (fill == 0) return NDArray::zeros(shape, dtype, device);
    if (fill < 0) return NDArray::empty(shape, dtype, device);
    return NDArray::full(shape, Scalar::of_int(1).cast(dtype), dtype, device);
  }
  std::optional<DType> natural = natural_dtype(L, value_arg);
  if (!natural) type_error(L, value_arg, fname, "number, boolean or typed scalar");
  DType dtype = given.value_or(*natural);
  return NDArray::full(shape, to_scalar(L, value_arg, dtype, fname, "fill value"), dtype, device);
}

int l_zeros(lua_State* L) {
  push_array(L, make_filled(L, "zeros", 1, 0, 2, 3, 0));
  return 1;
}
int l_ones(lua_State* L) {
  push_array(L, make_filled(L, "ones", 1, 0, 2, 3, 1));
  return 1;
}
int l_empty(lua_State* L) {
  push_array(L, make_filled(L, "empty", 1, 0, 2, 3, -1));
  return 1;
}
int l_full(lua_State* L) {
  push_array(L, make_filled(L, "full", 1, 2, 3, 4, 0));
  return 1;
}

// Fills a new cpu array of `dtype` with value(i) for i in [0, n), then moves it to `device`.
// While a graph is recorded the values are written now, and the array is made by a copy
// node that keeps them.
template <class Fn>
NDArray generate(std::int64_t n, DType dtype, Device device, Fn value) {
  const bool recording = GraphRecording::active() != nullptr;
  NDArray host;
  {
    std::optional<GraphRecording::Paused> now;
    if (recording) now.emplace();
    // On a cpu device the values are written where they stay.
    host = NDArray::empty({n}, dtype, device.is_cpu() && !recording ? device : Device::cpu());
    auto* p = static_cast<std::byte*>(host.data());
    for (std::int64_t i = 0; i < n; ++i) value(i).cast(dtype).store(p + i * itemsize(dtype));
  }
  if (recording) return NDArray::from_host(host.data(), host.shape(), dtype, device);
  return host.to(device);
}

// luda.arange([start,] stop[, step], dtype, {device=}). As NumPy's arange(start, stop=None,
// step=None, dtype), a nil stands for a number left out before a later argument:
// luda.arange(0, 5, nil, "int32"), luda.arange(5, nil, 2) (stop 5, as numpy.arange(5,
// None, 2)).
int l_arange(lua_State* L) {
  if (lua_type(L, 1) != LUA_TNUMBER) type_error(L, 1, "arange", "number");
  int slots = 1;  // the leading numbers and nils, at most three
  while (slots < 3 && (lua_type(L, slots + 1) == LUA_TNUMBER || (lua_isnil(L, slots + 1) && !lua_isnone(L, slots + 2))))
    ++slots;
  // Stop alone, or start and stop; then the step.
  const bool has_start = slots >= 2 && lua_type(L, 2) == LUA_TNUMBER;
  const int start_arg = has_start ? 1 : 0, stop_arg = has_start ? 2 : 1;
  const int step_arg = slots == 3 && lua_type(L, 3) == LUA_TNUMBER ? 3 : 0;
  move_options_to(L, slots + 1, slots + 2);
  std::optional<DType> given = opt_dtype(L, slots + 1, "arange");
  check_options(L, slots + 2, "arange", {"device"});
  Device device = device_option(L, slots + 2, "arange");
  if (!is_none_or_nil(L, slots + 3))
    arg_error(L, slots + 3, "arange", "too many arguments; expected ([start,] stop[, step], dtype, {device=})");
  bool all_int = true;
  for (int i : {start_arg, stop_arg, step_arg}) all_int = all_int && (i == 0 || lua_isinteger(L, i));
  DType dtype = given.value_or(all_int ? DType::Int64 : DType::Float64);
  // NumPy's rule: a bool range is False, True at most (more would all be True).
  auto check_bool = [&](std::int64_t n) {
    if (dtype == DType::Bool && n > 2)
      fail("arange: a range of booleans has at most 2 elements (False, True), this one has {}", n);
  };
  if (all_int) {
    std::int64_t start = start_arg ? lua_tointeger(L, start_arg) : 0, stop = lua_tointeger(L, stop_arg);
    std::int64_t step = step_arg ? lua_tointeger(L, step_arg) : 1;
    if (step == 0) fail("arange: step must not be zero");
    // ceil((stop - start) / step), exact: the span of two Lua integers needs 65 bits.
    __int128 span = static_cast<__int128>(stop) - start, by = step, count = 0;
    if ((span > 0 && by > 0) || (span < 0 && by < 0)) count = (span + by - (by > 0 ? 1 : -1)) / by;
    if (count > std::numeric_limits<std::int64_t>::max())
      fail("arange: the range from {} to {} by {} has {} elements, more than an array can hold", start, stop, step,
           static_cast<unsigned long long>(count));
    auto n = static_cast<std::int64_t>(count);
    check_bool(n);
    // Wrapping arithmetic: each value lies between start and stop, but i * step may not.
    auto value = [&](std::int64_t i) {
      return static_cast<std::int64_t>(static_cast<std::uint64_t>(start) +
                                       static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(step));
    };
    if (n > 0) {  // the values run from the first to the last: both in the dtype's range, all are
      number_as(value(0), dtype, "arange", "the first element");
      number_as(value(n - 1), dtype, "arange", "the last element");
    }
    push_array(L, generate(n, dtype, device, [&](std::int64_t i) { return Scalar::of_int(value(i)); }));
    return 1;
  }
  double start = start_arg ? lua_tonumber(L, start_arg) : 0.0, stop = lua_tonumber(L, stop_arg);
  double step = step_arg ? lua_tonumber(L, step_arg) : 1.0;
  if (step == 0) fail("arange: step must not be zero");
  double len = std::ceil((stop - start) / step);
  if (std::isnan(len))
    fail("arange: the length of the range is not a number (start {}, stop {}, step {})", jit::lua_float(start),
         jit::lua_float(stop), jit::lua_float(step));
  if (len > 1e12) fail("arange: the range has {} elements, too many to allocate", len);
  auto n = static_cast<std::int64_t>(std::max(0.0, len));
  check_bool(n);
  auto value = [&](std::int64_t i) { return start + static_cast<double>(i) * step; };
  if (n > 0) {
    number_as(value(0), dtype, "arange", "the first element");
    number_as(value(n - 1), dtype, "arange", "the last element");
  }
  push_array(L, generate(n, dtype, device, [&](std::int64_t i) { return Scalar::of_float(value(i)); }));
  return 1;
}

// luda.linspace(start, stop, num=50, endpoint=true, dtype, {device=}), as numpy.linspace.
int l_linspace(lua_State* L) {
  move_options_to(L, 3, 6);
  double start = check_number(L, 1, "linspace"), stop = check_number(L, 2, "linspace");
  std::int64_t num = opt_integer(L, 3, "linspace").value_or(50);
  if (num < 0) arg_error(L, 3, "linspace", fmt::format("number of samples, {}, must be non-negative", num));
  bool endpoint = true;
  if (!is_none_or_nil(L, 4)) {
    if (lua_type(L, 4) != LUA_TBOOLEAN) type_error(L, 4, "linspace", "boolean (endpoint)");
    endpoint = lua_toboolean(L, 4);
  }
  DType dtype = opt_dtype(L, 5, "linspace").value_or(DType::Float64);
  check_options(L, 6, "linspace", {"device"});
  Device device = device_option(L, 6, "linspace");
  double div = static_cast<double>(endpoint ? num - 1 : num);
  double delta = stop - start;
  double step = div > 0 ? delta / div : std::nan("");
  push_array(L, generate(num, dtype, device, [&](std::int64_t i) {
               double x = static_cast<double>(i);
               double y = div > 0 ? (step == 0 ? x / div * delta : x * step) : x * delta;
               y += start;
               if (endpoint && num > 1 && i == num - 1) y = stop;
               if (is_integer(dtype)) y = std::floor(y);  // NumPy floors for integer dtypes
               return Scalar::of_float(y);
             }));
  return 1;
}

// A host array is always copied, as Numba's to_device copies: on the cpu device too, so
// that writes to the result never reach the source there either. An array already on
// the target device is the result itself.
NDArray moved_to(lua_State* L, std::string_view fname, Device device, const std::optional<Stream>& s) {
  if (NDArray* src = test_array(L, 1))
    return src->device().is_cpu() ? src->copy(device, s ? &*s : nullptr) : src->to(device, s ? &*s : nullptr);
  if (lua_type(L, 1) == LUA_TTABLE) return array_from_table(L, 1, std::nullopt, device, fname);
  type_error(L, 1, fname, "ndarray or table");
}

// luda.to_device(x_or_table, {device=, stream=}) and luda.cuda.to_device
int l_to_device(lua_State* L) {
  check_options(L, 2, "to_device", {"device", "stream"});
  std::optional<Stream> s = stream_option(L, 2, "to_device");
  Device device = target_device(L, 2, "to_device", s);
  push_array(L, moved_to(L, "to_device", device, s));
  return 1;
}

// luda.cuda.device_array(shape, dtype, {device=, stream=}): uninitialized, on target_device.
int l_device_array(lua_State* L) {
  move_options_to(L, 2, 3);
  Shape shape = check_shape(L, 1, "device_array");
  DType dtype = opt_dtype(L, 2, "device_array").value_or(DType::Float64);
  check_options(L, 3, "device_array", {"device", "stream"});
  std::optional<Stream> s = stream_option(L, 3, "device_array");
  Device device = target_device(L, 3, "device_array", s);
  push_array(L, NDArray::empty(shape, dtype, device, s ? &*s : nullptr));
  return 1;
}

// luda.cuda.device_array_like(x, {device=, stream=}): x's shape and dtype, on x's CUDA
// device, else (x on the cpu) on target_device.
int l_device_array_like(lua_State* L) {
  NDArray& like = check_array(L, 1, "device_array_like");
  check_options(L, 2, "device_array_like", {"device", "stream"});
  std::optional<Stream> s = stream_option(L, 2, "device_array_like");
  push_option(L, 2, "device");
  bool given = !lua_isnil(L, -1);
  lua_pop(L, 1);
  Device device = (!given && !s && like.device().is_cuda()) ? like.device()
                                                            : target_device(L, 2, "device_array_like", s);
  push_array(L, NDArray::empty(like.shape(), like.dtype(), device, s ? &*s : nullptr));
  return 1;
}

}  // namespace

NDArray array_from_table(lua_State* L, int idx, std::optional<DType> dtype, Device device, std::string_view fname) {
  NestedTable table(L, fname);
  table.measure(idx);
  DType t = dtype.value_or(table.inferred());
  std::vector<std::byte> bytes = table.write(idx, t);
  return NDArray::from_host(bytes.data(), table.shape(), t, device);
}

void open_array_constructors(lua_State* L) {
  static const luaL_Reg funcs[] = {
      {"array", trampoline<l_array>},       {"zeros", trampoline<l_zeros>},         {"ones", trampoline<l_ones>},
      {"empty", trampoline<l_empty>},       {"full", trampoline<l_full>},           {"arange", trampoline<l_arange>},
      {"linspace", trampoline<l_linspace>}, {"to_device", trampoline<l_to_device>}, {nullptr, nullptr},
  };
  luaL_setfuncs(L, funcs, 0);
  static const luaL_Reg cuda_funcs[] = {
      {"to_device", trampoline<l_to_device>},
      {"device_array", trampoline<l_device_array>},
      {"device_array_like", trampoline<l_device_array_like>},
      {nullptr, nullptr},
  };
  lua_getfield(L, -1, "cuda");  // created by luaopen_luda
  luaL_setfuncs(L, cuda_funcs, 0);
  lua_pop(L, 1);
}

}  // namespace luda::lua

// The public C++ API (include/luda/) as a host uses it: only the public headers, no
// internal one. Values are checked against the same computation in C++ on random inputs;
// errors against their exact text and fields. GPU cases skip where no CUDA device is usable.
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "luda/lua.h"
#include "luda/luda.h"

namespace {

// n values uniform in [-4, 4) from a seeded generator (float or double).
template <class T = float>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> u(-4, 4);
  std::vector<T> v(n);
  for (T& x : v) x = u(rng);
  return v;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) { return random_values<float>(n, seed); }
std::vector<double> random_doubles(std::size_t n, unsigned seed) { return random_values<double>(n, seed); }

template <class E, class F>
E caught(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "no exception of the expected type";
  throw std::logic_error("no exception");
}

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// ---- arrays over the host's memory ------------------------------------------------------

TEST(Api, ScriptKernelWritesTheHostVectorInPlace) {
  for (std::size_t n : {0u, 1u, 7u, 1000u}) {
    std::vector<float> v = random_floats(n, 11 + static_cast<unsigned>(n));
    const std::vector<float> before = v;
    luda::Array x = luda::Array::wrap(v);
    EXPECT_EQ(x.data(), static_cast<void*>(v.data()));
    EXPECT_EQ(x.device(), luda::Device::cpu());
    EXPECT_EQ(x.dtype(), luda::DType::Float32);
    EXPECT_EQ(x.shape(), luda::Shape{static_cast<std::int64_t>(n)});

    luda::Engine lua;
    lua.set("x", x);
    lua.run(R"(
      local scale = luda.elementwise("T x", "T y", "y = 2 * x + 1", "scale")
      scale(x, x)
      same = luda.cuda.to_device ~= nil and x.device == "cpu"
    )",
            "=inplace");
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(v[i], 2.0f * before[i] + 1.0f, 1e-5f) << i;
    EXPECT_TRUE(lua.get("same").as_bool());
  }
}

TEST(Api, WrapsStridedAndReversedViewsOfHostMemory) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> m(4 * 6);
  for (double& e : m) e = u(rng);
  luda::Engine lua;
  // Rows 0 and 2, columns 0, 2, 4: shape (2, 3), strides (12, 2) elements.
  luda::Array view = luda::Array::wrap(m.data(), {2, 3}, luda::Device::cpu(), {12, 2});
  EXPECT_FALSE(view.is_c_contiguous());
  lua.set("v", view);
  double expect = 0;
  for (int i : {0, 2})
    for (int j : {0, 2, 4}) expect += m[static_cast<std::size_t>(i * 6 + j)];
  EXPECT_NEAR(lua.run("return v:sum():item()")[0].as_number(), expect, 1e-12);
  // The last element first, stride -1: the array reads m backwards.
  luda::Array reversed = luda::Array::wrap(m.data() + m.size() - 1, {static_cast<std::int64_t>(m.size())},
                                           luda::Device::cpu(), {-1});
  lua.set("r", reversed);
  std::vector<double> back = lua.run("return r:copy()")[0].as_array().to_vector<double>();
  ASSERT_EQ(back.size(), m.size());
  for (std::size_t i = 0; i < m.size(); ++i) EXPECT_EQ(back[i], m[m.size() - 1 - i]);
  // Writes through a view land in the host's memory.
  lua.run("r[0] = 42");
  EXPECT_EQ(m.back(), 42.0);
}

TEST(Api, WrapErrorsSayWhatIsWrong) {
  float f[4] = {};
  EXPECT_EQ(what_of([] { luda::Array::wrap(nullptr, {3}, luda::DType::Float32); }),
            "Array::wrap: a null pointer for an array of shape (3,); pass the memory's address");
  EXPECT_EQ(what_of([&] {
              luda::Array::wrap(f, {2, -1});
            }),
            "Array::wrap: negative dimensions are not allowed (shape (2, -1))");
  EXPECT_EQ(what_of([&] {
              luda::Array::wrap(f, {2, 2}, luda::Device::cpu(), {1});
            }),
            "Array::wrap: shape (2, 2) has 2 axes but 1 strides were given");
  // An empty array needs no memory.
  EXPECT_EQ(luda::Array::wrap(nullptr, {0, 3}, luda::DType::Int8).size(), 0);
  EXPECT_EQ(what_of([&] { luda::Array::wrap(f, {4}).to_vector<double>(); }),
            "the array holds float32 elements, not float64; read it as its dtype, or convert it first");
}

TEST(Api, TheOwnerLivesWhileAScriptHoldsTheArray) {
  auto released = std::make_shared<bool>(false);
  auto* data = new std::int32_t[5]{1, 2, 3, 4, 5};
  {
    luda::Engine lua;
    {
      std::shared_ptr<void> owner(data, [released](void* p) {
        delete[] static_cast<std::int32_t*>(p);
        *released = true;
      });
      lua.set("a", luda::Array::wrap(data, {5}, luda::Device::cpu(), {}, std::move(owner)));
    }
    lua.run("b = a:reshape(5, 1)");  // a view the script keeps
    EXPECT_FALSE(*released);
    lua.run("a = nil; collectgarbage(); collectgarbage()");
    EXPECT_FALSE(*released);  // b still views it
    EXPECT_EQ(lua.run("return b:sum():item()")[0].as_integer(), 15);
    lua.run("b = nil; collectgarbage(); collectgarbage()");
    EXPECT_TRUE(*released);
  }
}

TEST(Api, ArraysMadeByScriptsComeBack) {
  luda::Engine lua;
  std::vector<luda::Value> r = lua.run(R"(
    local x = luda.arange(12, "int32"):reshape(3, 4)
    return x * 3, x.T, x:sum(), "done", 2.5, 7, true, {}
  )");
  ASSERT_EQ(r.size(), 8u);
  luda::Array times3 = r[0].as_array();
  EXPECT_EQ(times3.dtype(), luda::DType::Int32);
  EXPECT_EQ(times3.shape(), (luda::Shape{3, 4}));
  std::vector<std::int32_t> t = times3.to_vector<std::int32_t>();
  for (int i = 0; i < 12; ++i) EXPECT_EQ(t[static_cast<std::size_t>(i)], 3 * i);
  luda::Array transposed = r[1].as_array();
  EXPECT_EQ(transposed.strides(), (luda::Strides{1, 4}));
  std::vector<std::int32_t> tt = transposed.to_vector<std::int32_t>();  // C order of the view
  EXPECT_EQ(tt[1], 4);
  EXPECT_EQ(r[2].as_array().ndim(), 0);
  EXPECT_EQ(r[2].as_array().to_vector<std::int64_t>()[0], 66);
  EXPECT_EQ(r[3].as_string(), "done");
  EXPECT_EQ(r[4].as_number(), 2.5);
  EXPECT_EQ(r[5].as_integer(), 7);
  EXPECT_TRUE(r[6].as_bool());
  EXPECT_EQ(r[7].type(), luda::Value::Type::Other);
  EXPECT_EQ(r[7].type_name(), "table");
  EXPECT_EQ(what_of([&] { r[7].as_array(); }), "expected an ndarray, got a table");
  EXPECT_EQ(what_of([&] { r[5].as_string(); }), "expected a string, got an integer");
  EXPECT_EQ(what_of([&] { luda::Value().as_number(); }), "expected a number, got nil");
}

// ---- the engine ---------------------------------------------------------------------------

TEST(Api, EngineCallsFunctionsWithArraysAndNumbers) {
  luda::Engine lua;
  lua.run(R"(
    sim = {}
    function sim.axpy(a, x, y) return a * x + y, x.size end
  )",
          "=sim");
  std::vector<float> xs = random_floats(100, 3), ys = random_floats(100, 4);
  std::vector<luda::Value> r = lua.call("sim.axpy",
                                        {2.5, luda::Array::copy_of(xs, luda::Device::cpu()), luda::Array::wrap(ys)});
  ASSERT_EQ(r.size(), 2u);
  std::vector<float> z = r[0].as_array().to_vector<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(z[i], 2.5f * xs[i] + ys[i], 1e-5f);
  EXPECT_EQ(r[1].as_integer(), 100);
  EXPECT_EQ(lua.get("nothing").type(), luda::Value::Type::Nil);
  lua.set("answer", 42);
  EXPECT_EQ(lua.run("return answer + 1")[0].as_integer(), 43);

  auto missing = caught<luda::ScriptError>([&] { lua.call("sim.nope.deeper"); });
  EXPECT_EQ(missing.message(), "no function 'sim.nope.deeper': 'sim.nope' is nil, not a table");
  auto not_function = caught<luda::ScriptError>([&] { lua.call("answer"); });
  EXPECT_EQ(not_function.message(), "no function 'answer': it is number");
}

TEST(Api, ASyntaxErrorIsASourceErrorWithItsLineAndColumn) {
  luda::Engine lua;
  auto e = caught<luda::SourceError>([&] { lua.run("local a = 1\nlocal b = = 2\n", "=update"); });
  EXPECT_EQ(e.file(), "update");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 11);
  EXPECT_EQ(e.kind(), "syntax error");
  EXPECT_NE(std::string(e.what()).find("update:2:11: syntax error"), std::string::npos) << e.what();
  // Caught as the base class too; the engine goes on.
  EXPECT_THROW(lua.run("x = ", "=again"), luda::Error);
  EXPECT_EQ(lua.run("return 1 + 1")[0].as_integer(), 2);
}

TEST(Api, AnErrorWhileRunningIsAScriptErrorAtItsLine) {
  luda::Engine lua;
  auto e = caught<luda::ScriptError>([&] { lua.run("local t = nil\n\nreturn t.x", "=step"); });
  EXPECT_EQ(e.file(), "step");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.message(), "attempt to index a nil value (local 't')");
  EXPECT_NE(e.traceback().find("stack traceback:"), std::string::npos);
  EXPECT_FALSE(e.cause());

  // A luda call that failed: its error is the cause, with its own type.
  auto bad = caught<luda::ScriptError>([&] { lua.run("\nreturn luda.zeros({2, -1})", "=alloc"); });
  EXPECT_EQ(bad.line(), 2);
  ASSERT_TRUE(bad.cause());
  EXPECT_EQ(what_of([&] { std::rethrow_exception(bad.cause()); }),
            "zeros: negative dimensions are not allowed (shape (2, -1))");
  EXPECT_EQ(bad.message(), "zeros: negative dimensions are not allowed (shape (2, -1))");
}

TEST(Api, AKernelLanguageErrorIsASourceErrorInTheKernel) {
  luda::Engine lua;
  lua.run("f = luda.vectorize(function(a)\n  return (a > 0) + a\nend)", "=kernels");
  auto e = caught<luda::SourceError>([&] { lua.run("f(luda.ones(3, 'float32', {device = 'cpu'}))", "=call"); });
  EXPECT_EQ(e.file(), "kernels");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 18);
  EXPECT_EQ(e.kind(), "type error");
  EXPECT_EQ(e.message(), "cannot apply '+' to bool and float32");
}

TEST(Api, EngineAdoptsTheHostsState) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushinteger(L, 7);
  lua_setglobal(L, "host_value");
  {
    luda::Engine lua(L);
    EXPECT_EQ(lua.state(), L);
    std::vector<double> d = {1, 2, 3};
    luda::push_array(L, luda::Array::wrap(d));
    lua_setglobal(L, "d");
    EXPECT_EQ(lua.run("return (d * host_value):sum():item()")[0].as_number(), 42.0);
    lua_getglobal(L, "d");
    luda::Array back = luda::to_array(L, -1);
    EXPECT_EQ(back.data(), static_cast<void*>(d.data()));
    lua_pop(L, 1);
    lua_pushinteger(L, 5);
    EXPECT_FALSE(luda::is_array(L, -1));
    EXPECT_EQ(what_of([&] { luda::to_array(L, -1); }), "expected an ndarray at stack index -1, got 5");
    lua_pop(L, 1);
    luda::Engine again(L);  // luda is open already: nothing changes
    EXPECT_EQ(again.run("return luda.version")[0].as_string(), lua.run("return luda.version")[0].as_string());
  }
  // The engines are gone; the state is the host's, and still works.
  lua_getglobal(L, "host_value");
  EXPECT_EQ(lua_tointeger(L, -1), 7);
  lua_close(L);
}

TEST(Api, PushingIntoAStateWithoutLudaIsAnError) {
  lua_State* L = luaL_newstate();
  std::vector<float> v(3);
  EXPECT_EQ(what_of([&] { luda::push_array(L, luda::Array::wrap(v)); }),
            "luda is not open in this lua_State: open it first with luaL_requiref(L, \"luda\", luaopen_luda, 1) (or "
            "use a luda::Engine)");
  lua_close(L);
}

TEST(Api, StreamsOfTheCpu) {
  luda::Stream s = luda::Stream::wrap(nullptr, luda::Device::cpu());
  EXPECT_TRUE(s.device().is_cpu());
  EXPECT_EQ(what_of([] { luda::Stream::wrap(reinterpret_cast<CUstream>(0x10), luda::Device::cpu()); }),
            "Stream::wrap: a CUDA stream cannot be a stream of the cpu device; pass the CUDA device it was made on");
  luda::Engine lua;
  lua.set("s", s);
  EXPECT_EQ(lua.run("return luda.ones(4, 'float32', {device = 'cpu'}):sum({stream = s}):item()")[0].as_number(), 4.0);
  EXPECT_TRUE(lua.get("s").as_stream().device().is_cpu());
}

TEST(Api, TheHostsFallbackNoticeStandsWhenLudaOpens) {
  static int notices = 0;
  luda::set_cpu_fallback_notice([](const std::string&) { ++notices; });
  testing::internal::CaptureStderr();
  {
    luda::Engine lua;  // opening the module offers luda's own note, which must not replace the host's
    lua.run("local x = luda.zeros(2)");
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("luda: no CUDA device"), std::string::npos) << err;
  EXPECT_LE(notices, luda::cuda_device_count() == 0 ? 1 : 0);
  luda::set_cpu_fallback_notice(nullptr);
}

TEST(Api, AnInterruptNothingMetCanBeWithdrawn) {
  luda::Engine lua;
  lua.run(
      "k = luda.elementwise('T x', 'T y', 'y = x + 1', 'inc'); x = luda.zeros(8, 'int32', {device = 'cpu'}); k(x, x)");
  luda::request_interrupt();
  luda::clear_interrupt();
  lua.run("k(x, x)");  // runs: the request was withdrawn
  EXPECT_EQ(lua.run("return x:sum():item()")[0].as_integer(), 16);
  luda::request_interrupt();
  auto e = caught<luda::ScriptError>([&] { lua.run("k(x, x)"); });
  ASSERT_TRUE(e.cause());
  EXPECT_THROW(std::rethrow_exception(e.cause()), luda::Interrupted);
}

TEST(Api, WrapTakesUntypedPointersWithADtype) {
  std::vector<float> v = random_floats(6, 4);
  void* untyped = v.data();  // as cudaMalloc and framework tensors hand memory out
  const std::int64_t n = 6;
  luda::Array a = luda::Array::wrap(untyped, {n}, luda::DType::Float32);
  EXPECT_EQ(a.data(), untyped);
  EXPECT_EQ(a.to_vector<float>(), v);
  EXPECT_EQ(what_of([&] { luda::Value(a).as_number(); }), "expected a number, got an ndarray");
}

// ---- DLPack -----------------------------------------------------------------------------------

TEST(Api, DlpackRoundTripsKeepThePointerAndStrides) {
  std::vector<std::int16_t> m(5 * 4);
  std::iota(m.begin(), m.end(), -7);
  // Rows 4, 3, 2, 1 of a 5x4 matrix, columns 0 and 2: negative and gapped strides.
  luda::Array a = luda::Array::wrap(m.data() + 16, {4, 2}, luda::Device::cpu(), {-4, 2});
  DLManagedTensor* t = a.to_dlpack();
  EXPECT_EQ(t->dl_tensor.data, a.data());
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(t->dl_tensor.dtype.code, kDLInt);
  EXPECT_EQ(t->dl_tensor.dtype.bits, 16);
  EXPECT_EQ(t->dl_tensor.ndim, 2);
  EXPECT_EQ(t->dl_tensor.strides[0], -4);
  EXPECT_EQ(t->dl_tensor.strides[1], 2);
  luda::Array b = luda::Array::from_dlpack(t);
  EXPECT_EQ(b.data(), a.data());
  EXPECT_EQ(b.strides(), a.strides());
  EXPECT_EQ(b.to_vector<std::int16_t>(), a.to_vector<std::int16_t>());

  // Bools use DLPack's bool code; 0-d and empty arrays go through too.
  luda::Engine lua;
  for (const char* code :
       {"return luda.array({true, false, true})", "return luda.float64(2.5) * luda.ones({}, 'float64')",
        "return luda.zeros({0, 3}, 'uint32')"}) {
    luda::Array x = lua.run(code)[0].as_array();
    DLManagedTensor* tx = x.to_dlpack();
    luda::Array y = luda::Array::from_dlpack(tx);
    EXPECT_EQ(y.dtype(), x.dtype()) << code;
    EXPECT_EQ(y.shape(), x.shape()) << code;
    EXPECT_EQ(y.data(), x.data()) << code;
    EXPECT_EQ(y.repr(), x.repr()) << code;
  }
}

// Several cpu devices through the C++ API, in a process of its own whose environment gives
// LUDA_CPU_DEVICES=2 (read once per process): arrays are placed on cpu:1 and copied
// between cpu devices; DLPack sees host memory (kDLCPU, device 0) and imports it as cpu.
std::string cpu_devices_through_the_api() {
  std::string out;
  auto expect = [&](const char* what, bool ok) {
    if (!ok) out += std::string(what) + "\n";
  };
  try {
    expect("cpu_device_count() == 2", luda::cpu_device_count() == 2);
    const luda::Device cpu1 = luda::Device::cpu(1);
    expect("cpu(1).str()", cpu1.str() == "cpu:1");
    luda::Array z = luda::Array::zeros({3}, luda::DType::Float32, cpu1);
    expect("zeros on cpu:1", z.device() == cpu1);
    std::vector<double> v = random_doubles(6, 11);
    luda::Array w = luda::Array::wrap(v.data(), {2, 3}, cpu1);
    expect("wrap on cpu:1", w.device() == cpu1 && w.data() == v.data());
    luda::Array c = w.to(luda::Device::cpu());
    expect("to(cpu) copies", c.device() == luda::Device::cpu() && c.data() != w.data() && c.to_vector<double>() == v);
    expect("to(cpu:1) of a cpu:1 array is itself", w.to(cpu1).data() == w.data());
    DLManagedTensor* t = w.to_dlpack();
    expect("DLPack device of cpu:1", t->dl_tensor.device.device_type == kDLCPU && t->dl_tensor.device.device_id == 0);
    luda::Array back = luda::Array::from_dlpack(t);
    expect("DLPack import is cpu", back.device() == luda::Device::cpu() && back.data() == v.data());
    luda::Engine lua;
    luda::Array made = lua.run("return luda.arange(4, 'float64', {device = 'cpu:1'}) * 2")[0].as_array();
    expect("a script's cpu:1 array",
           made.device() == cpu1 && made.to_vector<double>() == std::vector<double>{0, 2, 4, 6});
    expect(
        "cpu:2 is missing",
        what_of([&] { luda::Array::zeros({3}, luda::DType::Float32, luda::Device::cpu(2)); }) ==
            "no cpu device cpu:2: LUDA_CPU_DEVICES gives 2 (cpu:0, cpu:1); start the process with LUDA_CPU_DEVICES=3");
  } catch (const std::exception& e) {
    out += std::string("threw: ") + e.what() + "\n";
  }
  return out;
}

TEST(Api, CpuDevicesTakeArraysAndExportHostMemory) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process reads LUDA_CPU_DEVICES anew
  EXPECT_EXIT(
      {
        setenv("LUDA_CPU_DEVICES", "2", 1);
        std::string problems = cpu_devices_through_the_api();
        std::fputs(problems.c_str(), stderr);
        std::exit(problems.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

struct Producer {
  static inline int deleted = 0;
  std::vector<float> data = std::vector<float>(6, 1.5f);
  std::int64_t shape[2] = {2, 3};
  DLManagedTensor tensor{};
  Producer(DLDeviceType device, DLDataType dtype) {
    tensor.dl_tensor = {data.data(), {device, 0}, 2, dtype, shape, nullptr, 0};
    tensor.manager_ctx = this;
    tensor.deleter = [](DLManagedTensor* self) {
      ++deleted;
      delete static_cast<Producer*>(self->manager_ctx);
    };
  }
};

TEST(Api, DlpackImportTakesTheTensorOnlyWhenItSucceeds) {
  Producer::deleted = 0;
  auto* p = new Producer(kDLCPU, {kDLFloat, 32, 1});
  {
    luda::Array a = luda::Array::from_dlpack(&p->tensor);
    EXPECT_EQ(a.data(), static_cast<void*>(p->data.data()));
    EXPECT_TRUE(a.is_c_contiguous());
    luda::Array view = a.reshape({3, 2});
    a = luda::Array();
    EXPECT_EQ(Producer::deleted, 0);  // the view holds it
    EXPECT_EQ(view.to_vector<float>(), std::vector<float>(6, 1.5f));
  }
  EXPECT_EQ(Producer::deleted, 1);

  auto* half = new Producer(kDLCPU, {kDLFloat, 8, 1});
  EXPECT_EQ(what_of([&] { luda::Array::from_dlpack(&half->tensor); }),
            "Array::from_dlpack: luda has no dtype for DLPack's float8; it takes bool, int8-64, uint8-64, "
            "float16-64, bfloat16, complex64 and complex128 with one lane");
  auto* metal = new Producer(kDLMetal, {kDLFloat, 32, 1});
  EXPECT_EQ(what_of([&] { luda::Array::from_dlpack(&metal->tensor); }),
            "Array::from_dlpack: the tensor is on kDLMetal (device 0); luda takes tensors of kDLCPU, kDLCUDAHost and "
            "kDLCUDA: copy it to one of those first");
  EXPECT_EQ(Producer::deleted, 1);  // refused tensors stay the caller's
  half->tensor.deleter(&half->tensor);
  metal->tensor.deleter(&metal->tensor);
}

// ---- kernels from C++ ------------------------------------------------------------------------

TEST(Api, ElementwiseKernelFromCpp) {
  luda::ElementwiseKernel axpb("T x, T a, T b", "T y", "y = a * x + b", "axpb");
  for (std::int64_t rows : {0, 1, 5}) {
    const std::int64_t cols = 7;
    std::vector<double> x = random_doubles(static_cast<std::size_t>(rows * cols), 1), b = random_doubles(7, 2);
    luda::Array X = luda::Array::wrap(x.data(), {rows, cols}), B = luda::Array::wrap(b);
    luda::Array y = axpb({X, 2.5, B})[0];  // b broadcasts over the rows; 2.5 is weak
    EXPECT_EQ(y.dtype(), luda::DType::Float64);
    EXPECT_EQ(y.shape(), (luda::Shape{rows, cols}));
    std::vector<double> got = y.to_vector<double>();
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], 2.5 * x[i] + b[i % 7]) << i;
    // Into an output the host gives, from a transposed (non-contiguous) view.
    std::vector<double> out(static_cast<std::size_t>(rows * cols));
    luda::Array Xt = luda::Array::wrap(x.data(), {cols, rows}, luda::Device::cpu(), {1, cols});
    axpb({Xt, luda::Arg::typed(luda::DType::Float64, 2.0), 1.0}, {luda::Array::wrap(out.data(), {cols, rows})});
    for (std::int64_t i = 0; i < cols; ++i)
      for (std::int64_t j = 0; j < rows; ++j)
        EXPECT_DOUBLE_EQ(out[static_cast<std::size_t>(i * rows + j)],
                         2 * x[static_cast<std::size_t>(j * cols + i)] + 1);
  }
  // An empty output with a zero stride (as NumPy exports one through DLPack) has no
  // elements that overlap.
  luda::Array none = luda::Array::wrap(nullptr, {0, 5}, luda::DType::Float64, luda::Device::cpu(), {5, 0});
  EXPECT_EQ(axpb({none, 1.0, 2.0}, {none})[0].size(), 0);
  std::vector<double> five = random_doubles(5, 3), one(1);
  EXPECT_EQ(
      what_of([&] {
        axpb({luda::Array::wrap(five), 1.0, 2.0}, {luda::Array::wrap(one.data(), {5}, luda::Device::cpu(), {0})});
      }),
      "elementwise 'axpb': output 1 'y' is a broadcast view (stride 0 along axis 1): its elements overlap; pass an "
      "array that owns each element");
  EXPECT_EQ(what_of([&] { axpb({1.0, 2.0}); }), "elementwise 'axpb': 2 inputs given; the kernel takes 3");
  EXPECT_EQ(
      what_of([&] {
        axpb({1.0, 2.0, 3.0});
      }),
      "elementwise 'axpb': no array argument gives the size of the loop (raw arrays and scalars do not); pass the "
      "outputs or {size = n}");
  auto e = caught<luda::SourceError>([] { luda::ElementwiseKernel("T x", "T y", "y = x +* 2", "bad"); });
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), 8);  // at the '*'
  EXPECT_EQ(e.kind(), "syntax error");
}

TEST(Api, ReductionKernelFromCpp) {
  luda::ReductionKernel ssq("T x", "T y", "x * x", "a + b", "y = a", "0", "ssq");
  const std::int64_t rows = 6, cols = 33;
  std::vector<double> x = random_doubles(static_cast<std::size_t>(rows * cols), 5);
  luda::Array X = luda::Array::wrap(x.data(), {rows, cols});
  std::vector<double> total = ssq({X})[0].to_vector<double>();
  double expect = 0;
  for (double v : x) expect += v * v;
  ASSERT_EQ(total.size(), 1u);
  EXPECT_NEAR(total[0], expect, 1e-9 * expect);
  luda::ReduceOptions over_rows;
  over_rows.axes = std::vector<int>{-1};  // the last axis, as NumPy's axis=-1
  over_rows.keepdims = true;
  luda::Array r = ssq({X}, over_rows)[0];
  EXPECT_EQ(r.shape(), (luda::Shape{rows, 1}));
  std::vector<double> got = r.to_vector<double>();
  for (std::int64_t i = 0; i < rows; ++i) {
    double row = 0;
    for (std::int64_t j = 0; j < cols; ++j)
      row += x[static_cast<std::size_t>(i * cols + j)] * x[static_cast<std::size_t>(i * cols + j)];
    EXPECT_NEAR(got[static_cast<std::size_t>(i)], row, 1e-9 * row);
  }
  luda::ReduceOptions bad;
  bad.axes = std::vector<int>{2};
  EXPECT_EQ(
      what_of([&] { ssq({X}, bad); }),
      "reduction 'ssq': axis 2 is out of range for 2-dimensional operands (axes are 0 to 1, or negative from the end)");
  bad.axes = std::vector<int>{0, -2};
  EXPECT_EQ(what_of([&] { ssq({X}, bad); }), "reduction 'ssq': axis -2 is given twice");
}

TEST(Api, VectorizeAndRawKernelsFromCpp) {
  luda::Vectorize poly("function(x, y) return x * y + 1 end");
  std::vector<float> a = random_floats(300, 8), b = random_floats(300, 9);
  std::vector<float> got = poly({luda::Array::wrap(a), luda::Array::wrap(b)})[0].to_vector<float>();
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(got[i], a[i] * b[i] + 1, 1e-5f) << i;  // one fused rounding or two
  luda::Vectorize typed("function(x) return x / 2 end", {"float64(float64)"});
  std::vector<std::int32_t> ints = {1, 2, 3, -7};
  std::vector<double> halves = typed({luda::Array::wrap(ints)})[0].to_vector<double>();
  EXPECT_EQ(halves, (std::vector<double>{0.5, 1.0, 1.5, -3.5}));

  luda::RawKernel add(R"(
    extern "C" __global__ void add(const float* x, const float* y, float* out, float scale, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = scale * x[i] + y[i];
    })",
                      "add");
  std::vector<float> out(a.size());
  add({3}, {128},
      {luda::Array::wrap(a), luda::Array::wrap(b), luda::Array::wrap(out), 0.5, static_cast<int>(a.size())});
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(out[i], 0.5f * a[i] + b[i], 1e-5f) << i;
  std::vector<double> wrong(a.size());
  EXPECT_NE(what_of([&] {
              add({3}, {128}, {luda::Array::wrap(a), luda::Array::wrap(b), luda::Array::wrap(wrong), 0.5, 300});
            }).find("raw_kernel 'add': argument 3 'out' is 'float* out' but got a float64 array; pass a float32 array"),
            std::string::npos);

  EXPECT_EQ(what_of([] { luda::Arg::typed(luda::DType::Int8, std::int64_t{300}); }),
            "Arg::typed: 300 does not fit in int8 (-128 to 127)");
  EXPECT_EQ(what_of([] { luda::Arg::typed(luda::DType::Int32, 2.5); }),
            "Arg::typed: 2.5 is not an integer; a int32 scalar takes an integer value");
}

// ---- GPU -----------------------------------------------------------------------------------------

// The driver's cuMemAlloc and cuMemFree, for a device buffer the host owns (a host that uses
// the CUDA runtime would call cudaMalloc).
struct DriverMemory {
  using Alloc = int (*)(unsigned long long*, std::size_t);
  using Free = int (*)(unsigned long long);
  Alloc alloc = nullptr;
  Free free = nullptr;
  DriverMemory() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    alloc = reinterpret_cast<Alloc>(dlsym(lib, "cuMemAlloc_v2"));
    free = reinterpret_cast<Free>(dlsym(lib, "cuMemFree_v2"));
  }
};

TEST(Api, CudaDeviceBufferOfTheHostWithoutACopy) {
  if (luda::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  DriverMemory driver;
  ASSERT_TRUE(driver.alloc && driver.free);
  luda::Engine lua;
  lua.run("luda.device(0):use(); luda.zeros(1, 'float32')");  // the device's context, current on this thread
  const std::size_t n = 4099;
  unsigned long long ptr = 0;
  ASSERT_EQ(driver.alloc(&ptr, n * sizeof(float)), 0);
  std::vector<float> host = random_floats(n, 21);
  auto released = std::make_shared<bool>(false);
  {
    std::shared_ptr<void> owner(reinterpret_cast<void*>(ptr), [&driver, released](void* p) {
      driver.free(reinterpret_cast<unsigned long long>(p));
      *released = true;
    });
    luda::Array d = luda::Array::wrap(reinterpret_cast<float*>(ptr), {static_cast<std::int64_t>(n)},
                                      luda::Device::cuda(0), {}, owner);
    EXPECT_EQ(reinterpret_cast<unsigned long long>(d.data()), ptr);
    lua.set("d", d);
    lua.set("h", luda::Array::wrap(host));
    lua.run(R"(
      luda.copyto(d, h)
      local k = luda.elementwise("T x", "T y", "y = x * x - 1", "sq")
      k(d, d)
      back = d:get()
    )");
    std::vector<float> got = lua.get("back").as_array().to_vector<float>();
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(got[i], host[i] * host[i] - 1, 1e-4f) << i;
    luda::Array same = lua.get("d").as_array();
    EXPECT_EQ(same.data(), d.data());
    // DLPack of a device array keeps the pointer and says which device.
    DLManagedTensor* t = same.to_dlpack();
    EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
    EXPECT_EQ(t->dl_tensor.device.device_id, 0);
    EXPECT_EQ(reinterpret_cast<unsigned long long>(t->dl_tensor.data), ptr);
    t->deleter(t);
  }
  lua.run("d = nil; collectgarbage(); collectgarbage()");
  EXPECT_TRUE(*released);
}

}  // namespace

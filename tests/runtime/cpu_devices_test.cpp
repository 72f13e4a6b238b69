// Several cpu devices (LUDA_CPU_DEVICES): names, the variable's parsing and errors, and the
// devices it gives. LUDA_CPU_DEVICES is read once per process, so each setting is tested in
// a process of its own (a death test's, re-executed: "threadsafe"); the test without it
// runs here, when the environment does not set it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/memory.h"
#include "runtime/ndarray.h"
#include "runtime/stream.h"

#include "tests/test_support.h"

namespace luda {
namespace {

using test_support::error_of;

// The message of the NoDeviceError fn throws, "(no NoDeviceError)" otherwise.
template <class Fn>
std::string no_device_error(Fn fn) {
  try {
    fn();
  } catch (const NoDeviceError& e) {
    return e.what();
  } catch (...) {
    return "(another error)";
  }
  return "(no NoDeviceError)";
}

TEST(CpuDevices, ParseAndStr) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cpu:0"), Device::cpu());
  EXPECT_EQ(Device::parse("cpu:1"), Device::cpu(1));
  EXPECT_EQ(Device::parse("cpu:12"), Device::cpu(12));
  EXPECT_EQ(Device::cpu(0), Device::cpu());
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::cpu(0).str(), "cpu");
  EXPECT_EQ(Device::cpu(1).str(), "cpu:1");
  EXPECT_EQ(Device::cpu(1023).str(), "cpu:1023");
  EXPECT_TRUE(Device::cpu(3).is_cpu());
  EXPECT_FALSE(Device::cpu(3).is_cuda());
  EXPECT_NE(Device::cpu(1), Device::cpu());
  EXPECT_NE(Device::cpu(1), Device::cuda(1));
  for (int i = 0; i < 2000; i += 7) EXPECT_EQ(Device::parse(Device::cpu(i).str()), Device::cpu(i));
}

TEST(CpuDevices, ParseTheCount) {
  EXPECT_EQ(detail::parse_cpu_device_count("1"), 1);
  EXPECT_EQ(detail::parse_cpu_device_count("3"), 3);
  EXPECT_EQ(detail::parse_cpu_device_count("04"), 4);
  EXPECT_EQ(detail::parse_cpu_device_count("1024"), kMaxCpuDevices);
  for (const char* text : {"0", "-1", "+2", "two", "2x", " 2", "2 ", "1.5", "1025", "99999999999", "0x4"})
    EXPECT_EQ(error_of([&] { detail::parse_cpu_device_count(text); }),
              fmt::format("LUDA_CPU_DEVICES={}: expected a whole number of cpu devices from 1 to 1024: set "
                          "LUDA_CPU_DEVICES=2 for cpu:0 and cpu:1, or unset it for the one cpu device",
                          text));
}

TEST(CpuDevices, MissingDeviceMessage) {
  EXPECT_EQ(detail::missing_cpu_device_message(5, 2, true),
            "no cpu device cpu:5: LUDA_CPU_DEVICES gives 2 (cpu:0, cpu:1); start the process with LUDA_CPU_DEVICES=6");
  EXPECT_EQ(
      detail::missing_cpu_device_message(3, 3, true),
      "no cpu device cpu:3: LUDA_CPU_DEVICES gives 3 (cpu:0 to cpu:2); start the process with LUDA_CPU_DEVICES=4");
  EXPECT_EQ(detail::missing_cpu_device_message(1, 1, true),
            "no cpu device cpu:1: LUDA_CPU_DEVICES gives 1 (cpu); start the process with LUDA_CPU_DEVICES=2");
  EXPECT_EQ(detail::missing_cpu_device_message(1, 1, false),
            "no cpu device cpu:1: without LUDA_CPU_DEVICES there is 1 (cpu); start the process with "
            "LUDA_CPU_DEVICES=2");
  EXPECT_EQ(detail::missing_cpu_device_message(-1, 2, true),
            "no cpu device cpu:-1: LUDA_CPU_DEVICES gives 2 (cpu:0, cpu:1); cpu devices are numbered from 0");
  EXPECT_EQ(detail::missing_cpu_device_message(1024, 4, true),
            "no cpu device cpu:1024: LUDA_CPU_DEVICES gives 4 (cpu:0 to cpu:3); LUDA_CPU_DEVICES gives at most 1024 "
            "(cpu:0 to cpu:1023)");
}

// This process's own reading: without the variable there is cpu alone.
TEST(CpuDevices, WithoutTheVariableThereIsCpuAlone) {
  if (std::getenv("LUDA_CPU_DEVICES"))
    GTEST_SKIP() << "LUDA_CPU_DEVICES is set here; this tests the process without it";
  const std::string why =
      "no cpu device cpu:1: without LUDA_CPU_DEVICES there is 1 (cpu); start the process with LUDA_CPU_DEVICES=2";
  EXPECT_EQ(cpu_device_count(), 1);
  EXPECT_NO_THROW(require_cpu_device(0));
  EXPECT_NO_THROW(require_device(Device::cpu()));
  EXPECT_EQ(no_device_error([] { require_cpu_device(1); }), why);
  EXPECT_EQ(no_device_error([] { require_device(Device::cpu(1)); }), why);
  EXPECT_EQ(no_device_error([] { use_device(Device::cpu(1)); }), why);
  EXPECT_EQ(no_device_error([] { synchronize(Device::cpu(1)); }), why);
  EXPECT_EQ(no_device_error([] { Buffer::allocate(Device::cpu(1), 64); }), why);
  EXPECT_EQ(no_device_error([] { Buffer::allocate(Device::cpu(1), 0); }), why);
  EXPECT_EQ(no_device_error([] { NDArray::zeros({3}, DType::Float32, Device::cpu(1)); }), why);
  int x = 0;
  EXPECT_EQ(no_device_error([&] { Buffer::wrap(Device::cpu(1), &x, sizeof x); }), why);
  EXPECT_EQ(no_device_error([] { Stream::create(Device::cpu(1)); }), why);
  EXPECT_EQ(no_device_error([] { Stream::default_stream(Device::cpu(1)); }), why);
  EXPECT_EQ(no_device_error([] { Event::create(Device::cpu(1)); }), why);
  EXPECT_EQ(no_device_error([] { NDArray::zeros({3}, DType::Float32, Device::cpu()).to(Device::cpu(1)); }), why);
}

// Runs `checks` in a new process whose environment has `vars` (name, value; a null value
// unsets): the test fails with the problems it lists on stderr.
void in_process_with(std::vector<std::pair<const char*, const char*>> vars, std::string (*checks)()) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: the variables are read anew
  EXPECT_EXIT(
      {
        for (auto [name, value] : vars) {
          if (value) setenv(name, value, 1);
          else unsetenv(name);
        }
        std::string problems = checks();
        std::fputs(problems.c_str(), stderr);
        std::exit(problems.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// Appends "what: got <got>, want <want>\n" to `out` unless they are equal.
template <class T, class U>
void expect(std::string& out, const char* what, const T& got, const U& want) {
  if (!(got == want)) out += fmt::format("{}: got {}, want {}\n", what, got, want);
}

std::string three_devices() {
  std::string out;
  try {
    expect(out, "cpu_device_count()", cpu_device_count(), 3);
    expect(out, "default_device()", default_device().str(), "cpu:2");
    expect(out, "current_device()", current_device().str(), "cpu:2");
    for (int i = 0; i < 3; ++i) require_cpu_device(i);
    synchronize(Device::cpu(2));

    // Arrays: placed on their device, copied between cpu devices as host memory.
    const std::vector<double> values{1.5, -2, 3.25, 4, 1e300};
    NDArray a = NDArray::from_host(values.data(), {5}, DType::Float64, Device::cpu(1));
    expect(out, "a.device()", a.device().str(), "cpu:1");
    NDArray b = a.to(Device::cpu(2));
    expect(out, "b.device()", b.device().str(), "cpu:2");
    expect(out, "a.to(cpu:2) is a copy", b.data() != a.data(), true);
    expect(out, "b's values", std::memcmp(b.data(), values.data(), sizeof(double) * values.size()), 0);
    expect(out, "a.to(cpu:1) is a", a.to(Device::cpu(1)).data() == a.data(), true);
    expect(out, "a.copy().device()", a.copy().device().str(), "cpu:1");
    expect(out, "a.astype(float32).device()", a.astype(DType::Float32).device().str(), "cpu:1");
    NDArray c = NDArray::zeros({5}, DType::Float64, Device::cpu());
    c.assign(a);  // between cpu devices
    expect(out, "c.device()", c.device().str(), "cpu");
    expect(out, "c's values", std::memcmp(c.data(), values.data(), sizeof(double) * values.size()), 0);

    // Streams and events of a cpu device.
    expect(out, "default_stream(cpu:2).device()", Stream::default_stream(Device::cpu(2)).device().str(), "cpu:2");
    expect(out, "default_stream(cpu:1) is shared",
           Stream::default_stream(Device::cpu(1)).device() == Stream::default_stream(Device::cpu(1)).device(), true);
    Stream s = Stream::create(Device::cpu(1));
    expect(out, "Stream::create(cpu:1).device()", s.device().str(), "cpu:1");
    Event e = Event::create(Device::cpu(1));
    e.record(s);
    e.synchronize();
    expect(out, "event on another cpu device's stream",
           error_of([&] { e.record(Stream::default_stream(Device::cpu(2))); }),
           "an event of cpu:1 cannot record work of a stream of cpu:2: create the event on the stream's device");

    use_device(Device::cpu(1));
    expect(out, "current_device() after use_device(cpu:1)", current_device().str(), "cpu:1");

    // Past the count.
    const std::string why =
        "no cpu device cpu:3: LUDA_CPU_DEVICES gives 3 (cpu:0 to cpu:2); start the process with LUDA_CPU_DEVICES=4";
    expect(out, "require_cpu_device(3)", no_device_error([] { require_cpu_device(3); }), why);
    expect(out, "Buffer::allocate(cpu:3)", no_device_error([] { Buffer::allocate(Device::cpu(3), 8); }), why);
    expect(out, "use_device(cpu:3)", no_device_error([] { use_device(Device::cpu(3)); }), why);
    expect(out, "a.to(cpu:3)", no_device_error([&] { a.to(Device::cpu(3)); }), why);
  } catch (const std::exception& e) {
    out += fmt::format("threw: {}\n", e.what());
  }
  return out;
}

TEST(CpuDevices, ThreeDevices) {
  in_process_with({{"LUDA_CPU_DEVICES", "3"}, {"LUDA_DEVICE", "cpu:2"}}, three_devices);
}

std::string malformed() {
  std::string out;
  const std::string why =
      "LUDA_CPU_DEVICES=two: expected a whole number of cpu devices from 1 to 1024: set LUDA_CPU_DEVICES=2 for "
      "cpu:0 and cpu:1, or unset it for the one cpu device";
  expect(out, "cpu_device_count()", error_of([] { cpu_device_count(); }), why);
  expect(out, "default_device()", error_of([] { default_device(); }), why);
  expect(out, "require_cpu_device(1)", error_of([] { require_cpu_device(1); }), why);
  // cpu itself needs no count.
  expect(out, "Buffer::allocate(cpu)", error_of([] { Buffer::allocate(Device::cpu(), 8); }), "no error");
  return out;
}

TEST(CpuDevices, MalformedCountIsAnErrorNamingTheVariable) {
  in_process_with({{"LUDA_CPU_DEVICES", "two"}, {"LUDA_DEVICE", nullptr}}, malformed);
}

std::string default_past_the_count() {
  std::string out;
  expect(out, "default_device()", no_device_error([] { default_device(); }),
         "LUDA_DEVICE=cpu:5: no cpu device cpu:5: LUDA_CPU_DEVICES gives 2 (cpu:0, cpu:1); start the process with "
         "LUDA_CPU_DEVICES=6");
  expect(out, "cpu_device_count()", cpu_device_count(), 2);
  return out;
}

TEST(CpuDevices, DefaultDevicePastTheCount) {
  in_process_with({{"LUDA_CPU_DEVICES", "2"}, {"LUDA_DEVICE", "cpu:5"}}, default_past_the_count);
}

}  // namespace
}  // namespace luda

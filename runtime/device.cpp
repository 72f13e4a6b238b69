#include "runtime/device.h"

#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace luda {

namespace {

// What luda knows about one CUDA device, filled lazily and kept for the process.
struct DeviceSlot {
  CUdevice handle = 0;
  std::once_flag properties_once;
  DeviceProperties properties;
  std::once_flag context_once;
  CUcontext context = nullptr;
};

struct Devices {
  int count = 0;
  std::string reason;  // why count is 0
  std::unique_ptr<DeviceSlot[]> slots;
};

const Devices& devices() {
  static const Devices instance = [] {
    Devices d;
    if (!driver::available(&d.reason)) return d;
    const driver::Api& cu = driver::api();
    int count = 0;
    if (CUresult r = cu.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
      d.reason = fmt::format("cuDeviceGetCount: {}: {}", driver::error_name(r), driver::error_string(r));
      return d;
    }
    if (count == 0) {
      d.reason = fmt::format("the NVIDIA driver (CUDA {}.{}) finds no GPU; use the cpu device", cu.version / 1000,
                             cu.version % 1000 / 10);
      return d;
    }
    d.slots = std::make_unique<DeviceSlot[]>(count);
    for (int i = 0; i < count; ++i) {
      if (CUresult r = cu.cuDeviceGet(&d.slots[i].handle, i); r != CUDA_SUCCESS) {
        d.reason = fmt::format("cuDeviceGet({}): {}: {}", i, driver::error_name(r), driver::error_string(r));
        d.slots.reset();
        return d;
      }
    }
    d.count = count;
    return d;
  }();
  return instance;
}

DeviceSlot& slot(int ordinal) {
  require_cuda_device(ordinal);
  return devices().slots[ordinal];
}

int attribute(CUdevice device, CUdevice_attribute which, const char* name) {
  int value = 0;
  driver::check(driver::api().cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute", name);
  return value;
}

// The current device of each thread; unset means default_device().
thread_local std::optional<Device> t_current;

}  // namespace

std::string Device::str() const {
  if (is_cpu()) return index == 0 ? std::string("cpu") : fmt::format("cpu:{}", index);
  return fmt::format("cuda:{}", index);
}

namespace {

// The number after `prefix` in `text` ("cuda:12" after "cuda:"): digits only, no sign,
// no spaces, no trailing text, and it fits an int.
std::optional<int> number_after(std::string_view text, std::string_view prefix) {
  if (text.size() <= prefix.size() || text.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = text.substr(prefix.size());
  int n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.front() == '-' || digits.front() == '+')
    return std::nullopt;
  return n;
}

}  // namespace

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (std::optional<int> n = number_after(text, "cpu:")) return cpu(*n);
  if (std::optional<int> n = number_after(text, "cuda:")) return cuda(*n);
  fail("invalid device '{}': expected 'cpu', 'cpu:N', 'cuda' or 'cuda:N'", text);
}

std::string DeviceProperties::arch() const { return fmt::format("sm_{}{}", major, minor); }

namespace detail {
std::string missing_device_message(int ordinal, int count) {
  std::string which;
  if (count == 1) which = "cuda:0";
  else if (count == 2) which = "cuda:0, cuda:1";
  else which = fmt::format("cuda:0 to cuda:{}", count - 1);
  return fmt::format("no CUDA device cuda:{}: this machine has {} ({})", ordinal, count, which);
}
}  // namespace detail

namespace detail {

int parse_cpu_device_count(std::string_view text) {
  std::optional<int> n = number_after(text, "");
  if (!n || *n < 1 || *n > kMaxCpuDevices)
    fail("LUDA_CPU_DEVICES={}: expected a whole number of cpu devices from 1 to {}: set LUDA_CPU_DEVICES=2 for "
         "cpu:0 and cpu:1, or unset it for the one cpu device",
         text, kMaxCpuDevices);
  return *n;
}

std::string missing_cpu_device_message(int index, int count, bool set) {
  std::string which;
  if (count == 1) which = "cpu";
  else if (count == 2) which = "cpu:0, cpu:1";
  else which = fmt::format("cpu:0 to cpu:{}", count - 1);
  std::string gives = set ? fmt::format("LUDA_CPU_DEVICES gives {} ({})", count, which)
                          : fmt::format("without LUDA_CPU_DEVICES there is {} ({})", count, which);
  std::string fix;
  if (index < 0) fix = "cpu devices are numbered from 0";
  else if (index >= kMaxCpuDevices)
    fix = fmt::format("LUDA_CPU_DEVICES gives at most {} (cpu:0 to cpu:{})", kMaxCpuDevices, kMaxCpuDevices - 1);
  else fix = fmt::format("start the process with LUDA_CPU_DEVICES={}", index + 1);
  return fmt::format("no cpu device {}: {}; {}", Device::cpu(index).str(), gives, fix);
}

}  // namespace detail

namespace {

// $LUDA_CPU_DEVICES, read once per process.
struct CpuDevices {
  int count = 1;
  bool set = false;
  std::string error;  // the variable is malformed: cpu_device_count() throws this
};

const CpuDevices& cpu_devices() {
  static const CpuDevices instance = [] {
    CpuDevices c;
    const char* env = std::getenv("LUDA_CPU_DEVICES");
    if (!env || !*env) return c;
    c.set = true;
    try {
      c.count = detail::parse_cpu_device_count(env);
    } catch (const Error& e) {
      c.error = e.what();
    }
    return c;
  }();
  return instance;
}

}  // namespace

int cuda_device_count() { return devices().count; }

int cpu_device_count() {
  const CpuDevices& c = cpu_devices();
  if (!c.error.empty()) throw Error(c.error);
  return c.count;
}

void require_cpu_device(int index) {
  if (index == 0) return;  // cpu is always there, and needs no look at the environment
  const CpuDevices& c = cpu_devices();
  if (!c.error.empty()) throw Error(c.error);
  if (index < 0 || index >= c.count) throw NoDeviceError(detail::missing_cpu_device_message(index, c.count, c.set));
}

void require_device(Device d) {
  if (d.is_cuda()) require_cuda_device(d.index);
  else require_cpu_device(d.index);
}

void require_cuda_device(int ordinal) {
  const Devices& d = devices();
  if (d.count == 0) throw NoDeviceError("no CUDA device: " + d.reason);
  if (ordinal < 0 || ordinal >= d.count) throw NoDeviceError(detail::missing_device_message(ordinal, d.count));
}

const DeviceProperties& cuda_properties(int ordinal) {
  DeviceSlot& s = slot(ordinal);
  std::call_once(s.properties_once, [&] {
    const driver::Api& cu = driver::api();
    CUdevice dev = s.handle;
    DeviceProperties p;
    char name[256] = {};
    driver::check(cu.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
    p.name = name;
    p.ordinal = ordinal;
#define LUDA_ATTRIBUTE(which) attribute(dev, CU_DEVICE_ATTRIBUTE_##which, #which)
    p.major = LUDA_ATTRIBUTE(COMPUTE_CAPABILITY_MAJOR);
    p.minor = LUDA_ATTRIBUTE(COMPUTE_CAPABILITY_MINOR);
    p.multiprocessors = LUDA_ATTRIBUTE(MULTIPROCESSOR_COUNT);
    p.max_threads_per_block = LUDA_ATTRIBUTE(MAX_THREADS_PER_BLOCK);
    p.max_block_dim[0] = LUDA_ATTRIBUTE(MAX_BLOCK_DIM_X);
    p.max_block_dim[1] = LUDA_ATTRIBUTE(MAX_BLOCK_DIM_Y);
    p.max_block_dim[2] = LUDA_ATTRIBUTE(MAX_BLOCK_DIM_Z);
    p.max_grid_dim[0] = LUDA_ATTRIBUTE(MAX_GRID_DIM_X);
    p.max_grid_dim[1] = LUDA_ATTRIBUTE(MAX_GRID_DIM_Y);
    p.max_grid_dim[2] = LUDA_ATTRIBUTE(MAX_GRID_DIM_Z);
    p.warp_size = LUDA_ATTRIBUTE(WARP_SIZE);
    p.shared_memory_per_block = LUDA_ATTRIBUTE(MAX_SHARED_MEMORY_PER_BLOCK);
    p.shared_memory_per_block_optin = LUDA_ATTRIBUTE(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    p.l2_cache_bytes = LUDA_ATTRIBUTE(L2_CACHE_SIZE);
    p.memory_bus_width = LUDA_ATTRIBUTE(GLOBAL_MEMORY_BUS_WIDTH);
    p.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}", LUDA_ATTRIBUTE(PCI_DOMAIN_ID), LUDA_ATTRIBUTE(PCI_BUS_ID),
                               LUDA_ATTRIBUTE(PCI_DEVICE_ID));
#undef LUDA_ATTRIBUTE
    // Clock rates are informational and some drivers no longer report them: 0 then.
    if (cu.cuDeviceGetAttribute(&p.clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) != CUDA_SUCCESS) p.clock_khz = 0;
    if (cu.cuDeviceGetAttribute(&p.memory_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) != CUDA_SUCCESS)
      p.memory_clock_khz = 0;
    driver::check(cu.cuDeviceTotalMem(&p.total_memory, dev), "cuDeviceTotalMem");
    s.properties = std::move(p);
  });
  return s.properties;
}

// The primary contexts retained so far, by ordinal: what ContextScope reads on every launch
// (primary_context checks the ordinal and a once-flag first).
namespace {
constexpr int kKnownContexts = 64;
std::atomic<CUcontext> g_known_contexts[kKnownContexts];
}  // namespace

CUcontext primary_context(int ordinal) {
  DeviceSlot& s = slot(ordinal);
  std::call_once(s.context_once, [&] {
    // Retained once and never released: the context lives as long as the process, like
    // the CUDA runtime's, so buffers and modules freed during exit still find it.
    LUDA_CU(cuDevicePrimaryCtxRetain, &s.context, s.handle);
    if (ordinal < kKnownContexts) g_known_contexts[ordinal].store(s.context, std::memory_order_release);
  });
  return s.context;
}

ContextScope::ContextScope(int ordinal) {
  CUcontext target = ordinal >= 0 && ordinal < kKnownContexts
                         ? g_known_contexts[ordinal].load(std::memory_order_acquire)
                         : nullptr;
  if (!target) target = primary_context(ordinal);
  LUDA_CU(cuCtxGetCurrent, &previous_);
  if (previous_ == target) return;
  LUDA_CU(cuCtxSetCurrent, target);
  // With no context current before, the device's stays current after (as the CUDA runtime
  // leaves it), so that the next scope on this thread costs one cuCtxGetCurrent.
  changed_ = previous_ != nullptr;
}

ContextScope::~ContextScope() {
  if (!changed_) return;
  // Never throws: a failure to restore leaves the other context current, which the next
  // ContextScope corrects.
  (void)driver::api().cuCtxSetCurrent(previous_);
}

Device current_device() {
  if (t_current) return *t_current;
  return default_device();
}

void use_device(Device d) {
  require_device(d);
  t_current = d;
}

namespace {

// What default_device() answers, decided once per process.
struct DefaultChoice {
  Device device;
  std::string error;      // $LUDA_DEVICE is unusable: default_device() throws this
  bool missing = false;   // ... as a NoDeviceError (a well-formed name of a missing device)
  bool fallback = false;  // cpu because no CUDA device is usable
};

const DefaultChoice& default_choice() {
  static const DefaultChoice instance = [] {
    DefaultChoice c;
    if (const CpuDevices& cpus = cpu_devices(); !cpus.error.empty()) {
      c.error = cpus.error;
      return c;
    }
    const char* env = std::getenv("LUDA_DEVICE");
    if (env && *env) {
      try {
        c.device = Device::parse(env);
        require_device(c.device);
      } catch (const NoDeviceError& e) {
        c.error = fmt::format("LUDA_DEVICE={}: {}", env, e.what());
        c.missing = true;
      } catch (const Error& e) {
        c.error = fmt::format("LUDA_DEVICE={}: {}", env, e.what());
      }
      return c;
    }
    c.fallback = cuda_device_count() == 0;
    c.device = c.fallback ? Device::cpu() : Device::cuda(0);
    return c;
  }();
  return instance;
}

std::atomic<CpuFallbackNotice> g_fallback_notice{nullptr};
std::atomic<bool> g_fallback_noticed{false};
std::atomic<bool> g_fallback_notice_chosen{false};  // set_cpu_fallback_notice was called

}  // namespace

Device default_device() {
  const DefaultChoice& c = default_choice();
  if (!c.error.empty()) {
    if (c.missing) throw NoDeviceError(c.error);
    throw Error(c.error);
  }
  if (c.fallback && !g_fallback_noticed.load(std::memory_order_relaxed)) {
    // Marked only once a notice is installed, so that a host that installs one late
    // still hears about it.
    if (CpuFallbackNotice notice = g_fallback_notice.load(); notice && !g_fallback_noticed.exchange(true))
      notice(devices().reason);
  }
  return c.device;
}

void set_cpu_fallback_notice(CpuFallbackNotice notice) {
  g_fallback_notice_chosen.store(true);
  g_fallback_notice.store(notice);
}

void offer_cpu_fallback_notice(CpuFallbackNotice notice) {
  if (!g_fallback_notice_chosen.load()) g_fallback_notice.store(notice);
}

void synchronize(Device d) {
  if (d.is_cpu()) return require_cpu_device(d.index);
  ContextScope scope(d.index);
  wait_for_context(d.index);
}

MemoryInfo memory_info(int ordinal) {
  ContextScope scope(ordinal);
  MemoryInfo info;
  LUDA_CU(cuMemGetInfo, &info.free, &info.total);
  return info;
}

bool enable_peer_access(int from, int to) {
  if (from == to) {
    require_cuda_device(from);
    return true;
  }
  DeviceSlot& a = slot(from);
  DeviceSlot& b = slot(to);
  static std::mutex mutex;
  static std::set<std::pair<int, int>> enabled;
  std::lock_guard lock(mutex);
  if (enabled.count({from, to})) return true;
  int can = 0;
  LUDA_CU(cuDeviceCanAccessPeer, &can, a.handle, b.handle);
  if (!can) return false;
  ContextScope scope(from);
  CUresult r = driver::api().cuCtxEnablePeerAccess(primary_context(to), 0);
  if (r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    driver::check(r, "cuCtxEnablePeerAccess", fmt::format("cuda:{} to cuda:{}", from, to));
  // Arrays live in the device's stream-ordered pool, whose memory a peer context reaches
  // only once the pool grants that device access; without it the driver stages peer copies
  // through the host at a tenth of NVLink's rate.
  CUmemoryPool pool = nullptr;
  LUDA_CU(cuDeviceGetDefaultMemPool, &pool, b.handle);
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = from;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  LUDA_CU(cuMemPoolSetAccess, pool, &access, 1);
  enabled.insert({from, to});
  return true;
}

}  // namespace luda

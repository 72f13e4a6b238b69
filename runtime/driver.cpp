#include "runtime/driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace luda::driver {

namespace {

// Two-level stringify: the argument is macro-expanded first, so that cuda.h's
// `#define cuMemAlloc cuMemAlloc_v2` gives the ABI symbol "cuMemAlloc_v2" to dlsym.
#define LUDA_STRINGIFY_EXPANDED(x) #x
#define LUDA_STRINGIFY(x) LUDA_STRINGIFY_EXPANDED(x)

// Every CUresult cuda.h (13.0) names. Names come from this table rather than from the
// driver so that they are known before and without a loaded driver.
// clang-format off
#define LUDA_CUDA_RESULTS(X)                                                                 \
  X(CUDA_SUCCESS) X(CUDA_ERROR_INVALID_VALUE) X(CUDA_ERROR_OUT_OF_MEMORY)                    \
  X(CUDA_ERROR_NOT_INITIALIZED) X(CUDA_ERROR_DEINITIALIZED) X(CUDA_ERROR_PROFILER_DISABLED) \
  X(CUDA_ERROR_PROFILER_NOT_INITIALIZED) X(CUDA_ERROR_PROFILER_ALREADY_STARTED)              \
  X(CUDA_ERROR_PROFILER_ALREADY_STOPPED) X(CUDA_ERROR_STUB_LIBRARY)                          \
  X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER) X(CUDA_ERROR_DEVICE_UNAVAILABLE)                  \
  X(CUDA_ERROR_NO_DEVICE) X(CUDA_ERROR_INVALID_DEVICE) X(CUDA_ERROR_DEVICE_NOT_LICENSED)     \
  X(CUDA_ERROR_INVALID_IMAGE) X(CUDA_ERROR_INVALID_CONTEXT) X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT) \
  X(CUDA_ERROR_MAP_FAILED) X(CUDA_ERROR_UNMAP_FAILED) X(CUDA_ERROR_ARRAY_IS_MAPPED)          \
  X(CUDA_ERROR_ALREADY_MAPPED) X(CUDA_ERROR_NO_BINARY_FOR_GPU) X(CUDA_ERROR_ALREADY_ACQUIRED) \
  X(CUDA_ERROR_NOT_MAPPED) X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY) X(CUDA_ERROR_NOT_MAPPED_AS_POINTER) \
  X(CUDA_ERROR_ECC_UNCORRECTABLE) X(CUDA_ERROR_UNSUPPORTED_LIMIT)                            \
  X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE) X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED)                 \
  X(CUDA_ERROR_INVALID_PTX) X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT)                           \
  X(CUDA_ERROR_NVLINK_UNCORRECTABLE) X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND)                    \
  X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) X(CUDA_ERROR_JIT_COMPILATION_DISABLED)               \
  X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY) X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC)             \
  X(CUDA_ERROR_CONTAINED) X(CUDA_ERROR_INVALID_SOURCE) X(CUDA_ERROR_FILE_NOT_FOUND)          \
  X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND) X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED)       \
  X(CUDA_ERROR_OPERATING_SYSTEM) X(CUDA_ERROR_INVALID_HANDLE) X(CUDA_ERROR_ILLEGAL_STATE)    \
  X(CUDA_ERROR_LOSSY_QUERY) X(CUDA_ERROR_NOT_FOUND) X(CUDA_ERROR_NOT_READY)                  \
  X(CUDA_ERROR_ILLEGAL_ADDRESS) X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)                        \
  X(CUDA_ERROR_LAUNCH_TIMEOUT) X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING)                   \
  X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)            \
  X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE) X(CUDA_ERROR_CONTEXT_IS_DESTROYED) X(CUDA_ERROR_ASSERT) \
  X(CUDA_ERROR_TOO_MANY_PEERS) X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)                  \
  X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) X(CUDA_ERROR_HARDWARE_STACK_ERROR)                \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION) X(CUDA_ERROR_MISALIGNED_ADDRESS)                         \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE) X(CUDA_ERROR_INVALID_PC) X(CUDA_ERROR_LAUNCH_FAILED)   \
  X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) X(CUDA_ERROR_TENSOR_MEMORY_LEAK)                \
  X(CUDA_ERROR_NOT_PERMITTED) X(CUDA_ERROR_NOT_SUPPORTED) X(CUDA_ERROR_SYSTEM_NOT_READY)     \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)          \
  X(CUDA_ERROR_MPS_CONNECTION_FAILED) X(CUDA_ERROR_MPS_RPC_FAILURE)                          \
  X(CUDA_ERROR_MPS_SERVER_NOT_READY) X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED)                   \
  X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED) X(CUDA_ERROR_MPS_CLIENT_TERMINATED)              \
  X(CUDA_ERROR_CDP_NOT_SUPPORTED) X(CUDA_ERROR_CDP_VERSION_MISMATCH)                         \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)          \
  X(CUDA_ERROR_STREAM_CAPTURE_MERGE) X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)                  \
  X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED) X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION)               \
  X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) X(CUDA_ERROR_CAPTURED_EVENT)                         \
  X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) X(CUDA_ERROR_TIMEOUT)                            \
  X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) X(CUDA_ERROR_EXTERNAL_DEVICE)                      \
  X(CUDA_ERROR_INVALID_CLUSTER_SIZE) X(CUDA_ERROR_FUNCTION_NOT_LOADED)                       \
  X(CUDA_ERROR_INVALID_RESOURCE_TYPE) X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)           \
  X(CUDA_ERROR_KEY_ROTATION) X(CUDA_ERROR_UNKNOWN)
// clang-format on

// The driver's own descriptions (cuGetErrorString) of the errors luda users meet most,
// so that messages read the same before the driver is loaded or where it is missing.
struct Description {
  CUresult code;
  const char* text;
};
constexpr Description kDescriptions[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"},
    {CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error encountered"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices"},
    {CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"},
    {CUDA_ERROR_ASSERT, "device-side assert triggered"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "operation not supported on global/shared address space"},
    {CUDA_ERROR_INVALID_PC, "invalid program counter"},
    {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    {CUDA_ERROR_NOT_PERMITTED, "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

// Entry points whose versioned symbol is new (cuEventElapsedTime_v2: CUDA 12.8) and whose
// older symbol has the same signature, so that luda also runs on older drivers.
constexpr std::pair<const char*, const char*> kOlderSymbols[] = {
    {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
};

// The table of a loaded driver, for naming error codes newer than these headers; null
// until loading has finished. Never triggers loading (error_name is used while loading).
std::atomic<const Api*> g_loaded_api{nullptr};

std::string name_of(CUresult r, const Api* a);
std::string description_of(CUresult r, const Api* a);

struct Loaded {
  Api api;
  std::string error;  // empty when usable
};

const Loaded& loaded() {
  static const Loaded instance = [] {
    Loaded l;
    l.error = detail::open_driver("libcuda.so.1", l.api);
    if (!l.error.empty()) return l;
    if (CUresult r = l.api.cuInit(0); r != CUDA_SUCCESS) {
      l.error = fmt::format("cuInit: {}: {}", name_of(r, &l.api), description_of(r, &l.api));
      return l;
    }
    if (CUresult r = l.api.cuDriverGetVersion(&l.api.version); r != CUDA_SUCCESS)
      l.error = fmt::format("cuDriverGetVersion: {}: {}", name_of(r, &l.api), description_of(r, &l.api));
    return l;
  }();
  // Published once: api() runs on every dispatch, and a store there would dirty a cache
  // line that every thread launching kernels reads.
  if (instance.api.cuGetErrorName && !g_loaded_api.load(std::memory_order_relaxed))
    g_loaded_api.store(&instance.api, std::memory_order_release);
  return instance;
}

std::string name_of(CUresult r, const Api* a) {
  switch (r) {
#define LUDA_RESULT_NAME(name) \
  case name: return #name;
    LUDA_CUDA_RESULTS(LUDA_RESULT_NAME)
#undef LUDA_RESULT_NAME
    default: break;
  }
  // A code newer than these headers: ask the driver when it is loaded.
  const char* name = nullptr;
  if (a && a->cuGetErrorName && a->cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  return fmt::format("CUDA_ERROR_{}", static_cast<int>(r));
}

std::string description_of(CUresult r, const Api* a) {
  for (const Description& d : kDescriptions)
    if (d.code == r) return d.text;
  const char* text = nullptr;
  if (a && a->cuGetErrorString && a->cuGetErrorString(r, &text) == CUDA_SUCCESS && text) return text;
  return "unrecognized error code";
}

}  // namespace

namespace detail {

std::string open_driver(const char* library, Api& out) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    std::string reason = why ? why : "unknown dlopen error";
    // dlopen says "cannot open shared object file: No such file or directory" when the
    // library is absent; anything else (a broken or foreign file) is not "not found".
    bool missing = reason.find("No such file or directory") != std::string::npos;
    return fmt::format("{} {} ({}); install the NVIDIA driver or use the cpu device", library,
                       missing ? "not found" : "cannot be loaded", reason);
  }
  Api api;
  const char* missing = nullptr;
  auto find = [&](const char* symbol) -> void* {
    void* f = dlsym(handle, symbol);
    for (const auto& [newer, older] : kOlderSymbols)
      if (!f && std::strcmp(symbol, newer) == 0) f = dlsym(handle, older);
    if (!f && !missing) missing = symbol;
    return f;
  };
#define LUDA_DRIVER_LOAD(name) api.name = reinterpret_cast<decltype(api.name)>(find(LUDA_STRINGIFY(name)));
  LUDA_DRIVER_FUNCTIONS(LUDA_DRIVER_LOAD)
#undef LUDA_DRIVER_LOAD
  if (missing) {
    dlclose(handle);
    return fmt::format("{} has no {}: it is not the CUDA driver, or a driver older than luda needs (CUDA "
                       "12 or newer); update the NVIDIA driver or use the cpu device",
                       library, missing);
  }
  // Kept open for the life of the process: buffers freed during exit still call into it.
  out = api;
  return {};
}

}  // namespace detail

namespace detail {

std::atomic<const Api*> g_usable_api{nullptr};

const Api& api_slow() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw NoDeviceError("no CUDA device: " + l.error);
  g_usable_api.store(&l.api, std::memory_order_release);
  return l.api;
}

}  // namespace detail

bool available(std::string* reason) {
  const Loaded& l = loaded();
  if (reason) *reason = l.error;
  return l.error.empty();
}

std::string error_name(CUresult r) { return name_of(r, g_loaded_api.load(std::memory_order_acquire)); }

std::string error_string(CUresult r) { return description_of(r, g_loaded_api.load(std::memory_order_acquire)); }

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_EXTERNAL_DEVICE: return true;
    default: return false;
  }
}

namespace {
thread_local const char* t_last_launch = nullptr;
}  // namespace

void note_launch(const char* label) noexcept { t_last_launch = label; }

const char* intern_label(std::string_view label) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> labels;  // nodes never move: c_str() stays valid
  std::lock_guard lock(mutex);
  auto it = labels.find(label);
  if (it == labels.end()) it = labels.emplace(label).first;
  return it->c_str();
}

void detail::throw_check(CUresult r, std::string_view call, std::string_view detail) {
  std::string message = fmt::format("{}: {}: {}", call, error_name(r), error_string(r));
  if (!detail.empty()) message += fmt::format(" ({})", detail);
  if (is_sticky(r)) {
    message += ". This error is sticky: the device's CUDA context is now unusable, and the process "
               "must be restarted to use that device again";
    bool address = r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_MISALIGNED_ADDRESS ||
                   r == CUDA_ERROR_INVALID_ADDRESS_SPACE || r == CUDA_ERROR_LAUNCH_FAILED;
    if (const char* last = t_last_launch) {
      message += fmt::format(". The last kernel this thread launched was {}", last);
      if (address)
        message += ": an index out of range is the usual cause, which bounds checks find in cuda.jit and "
                   "elementwise kernels ({boundscheck = true}, or LUDA_BOUNDSCHECK=1), and compute-sanitizer in any "
                   "kernel";
    }
  }
  throw CudaError(r, std::move(message));
}

std::string format_bytes(unsigned long long bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  // Moves up while the value would print as 1024.0 or more ("1023.96 KiB" is "1.0 MiB").
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace luda::driver

// A fake CUDA driver (libcuda.so.1) for PROFILING luda's host overhead on a machine with no
// GPU. Never used by tests, never installed, never built by default: build it with
// bench/fake_driver/build.sh and point LD_LIBRARY_PATH at its folder, e.g.
//   bench/fake_driver/build.sh && LD_LIBRARY_PATH=$PWD/build-fake-driver build/luda bench/raw_kernel.lua
// Why: luda's dispatch cost per call (binding, argument packing, cache lookup, driver
// calls) is host code, and GPU time is scarce. With this library every driver call luda
// makes is cheap and plausible, so perf/callgrind show luda's own overhead.
//
// What it does: one device (or $FAKE_CUDA_DEVICES) that looks like an H200 (sm_90, 132
// SMs, the attributes luda reads); a primary context per device, current per thread as
// the real driver keeps it (calls that need a context fail with CUDA_ERROR_INVALID_CONTEXT
// without one, so luda's context handling stays honest); "device" memory is host memory,
// so copies and memsets really move bytes; modules accept any image and give a function
// for any name; kernels never run: cuLaunchKernel checks its arguments and returns,
// after spinning $FAKE_CUDA_LAUNCH_NS nanoseconds (0 by default) to stand in for the real
// driver's own cost (~2 us of the ~4 us a bare launch takes on an H200). Events record
// host time. With $FAKE_CUDA_STATS=1 the number of calls of each entry point is written
// to stderr at exit: the driver calls per dispatch, at a glance.
#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

// The opaque handle types cuda.h only declares.
struct CUctx_st {
  int device = 0;
};
struct CUstream_st {
  unsigned flags = 0;
};
struct CUevent_st {
  unsigned flags = 0;
  std::chrono::steady_clock::time_point at{};
  bool recorded = false;
};
struct CUmod_st {
  std::mutex mutex;
  std::unordered_map<std::string, CUfunc_st*> functions;
};
struct CUfunc_st {
  std::string name;
  int max_dynamic_shared = 48 * 1024;
};
struct CUmemPoolHandle_st {
  int device = 0;
};

namespace {

constexpr int kMaxDevices = 8;
constexpr std::size_t kTotalMemory = 143771533312ull;  // an H200's 141 GB (133.9 GiB)
constexpr std::size_t kDeviceAlignment = 256;          // what cudaMalloc guarantees

// ORDER STATS: one counter per entry point, printed with FAKE_CUDA_STATS=1.
// clang-format off
#define FAKE_ENTRY_POINTS(X)                                                               \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)            \
  X(cuDeviceCanAccessPeer) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)        \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuCtxEnablePeerAccess)       \
  X(cuMemGetInfo) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)          \
  X(cuDeviceGetDefaultMemPool) X(cuMemPoolSetAttribute) X(cuMemPoolTrimTo) X(cuMemHostAlloc) \
  X(cuMemPoolGetAttribute) X(cuMemPoolSetAccess)                                          \
  X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)          \
  X(cuMemcpyPeerAsync) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy)             \
  X(cuStreamSynchronize) X(cuStreamQuery) X(cuStreamWaitEvent) X(cuStreamGetFlags)         \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) \
  X(cuEventElapsedTime) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)       \
  X(cuModuleGetGlobal) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel)         \
  X(cuLaunchCooperativeKernel) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)             \
  X(cuGraphCreate) X(cuGraphDestroy) X(cuGraphAddKernelNode) X(cuGraphAddMemcpyNode)       \
  X(cuGraphAddMemsetNode) X(cuGraphKernelNodeSetAttribute) X(cuGraphInstantiate)           \
  X(cuGraphExecDestroy) X(cuGraphLaunch) X(cuGraphExecKernelNodeSetParams)                 \
  X(cuGraphExecMemcpyNodeSetParams) X(cuGraphExecMemsetNodeSetParams)                    \
  X(cuGraphAddMemAllocNode) X(cuGraphAddMemFreeNode)
// clang-format on

enum Entry {
#define FAKE_ENUM(name) k_##name,
  FAKE_ENTRY_POINTS(FAKE_ENUM)
#undef FAKE_ENUM
      kEntryCount
};
// `#name` does not expand cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2): the names
// are the API's, which is what luda's messages use too.
const char* const kEntryNames[] = {
#define FAKE_NAME(name) #name,
    FAKE_ENTRY_POINTS(FAKE_NAME)
#undef FAKE_NAME
};

struct Settings {
  long long launch_ns = 0;
  int devices = 1;
  bool stats = false;
};

long long env_number(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

const Settings& settings() {
  static const Settings s = [] {
    Settings out;
    out.launch_ns = env_number("FAKE_CUDA_LAUNCH_NS", 0);
    long long d = env_number("FAKE_CUDA_DEVICES", 1);
    out.devices = static_cast<int>(d < 0 ? 0 : d > kMaxDevices ? kMaxDevices : d);
    out.stats = env_number("FAKE_CUDA_STATS", 0) != 0;
    return out;
  }();
  return s;
}

std::atomic<unsigned long long> g_counts[kEntryCount];

struct StatsPrinter {
  ~StatsPrinter() {
    if (!settings().stats) return;
    std::fprintf(stderr, "fake libcuda: calls per entry point\n");
    for (int i = 0; i < kEntryCount; ++i)
      if (unsigned long long n = g_counts[i].load()) std::fprintf(stderr, "  %-28s %llu\n", kEntryNames[i], n);
  }
} g_stats_printer;

#define COUNT(name)                                                                   \
  do {                                                                                \
    if (settings().stats) g_counts[k_##name].fetch_add(1, std::memory_order_relaxed); \
  } while (0)

bool g_initialized = false;
CUctx_st g_contexts[kMaxDevices];
CUmemPoolHandle_st g_pools[kMaxDevices];
thread_local CUcontext t_current = nullptr;

std::mutex g_memory_mutex;
std::unordered_map<CUdeviceptr, std::size_t> g_allocations;  // device allocations
std::size_t g_allocated = 0;

bool valid_device(CUdevice d) { return d >= 0 && d < settings().devices; }

// What most calls check first, in the real driver's order.
CUresult need_context() {
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!t_current) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

CUresult allocate(CUdeviceptr* out, std::size_t bytes) {
  if (CUresult r = need_context()) return r;
  if (!out || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  std::size_t rounded = (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
  std::lock_guard lock(g_memory_mutex);
  if (g_allocated + rounded > kTotalMemory) return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = std::aligned_alloc(kDeviceAlignment, rounded);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  *out = reinterpret_cast<CUdeviceptr>(p);
  g_allocations.emplace(*out, rounded);
  g_allocated += rounded;
  return CUDA_SUCCESS;
}

CUresult release(CUdeviceptr p) {
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (p == 0) return CUDA_SUCCESS;
  std::lock_guard lock(g_memory_mutex);
  auto it = g_allocations.find(p);
  if (it == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  g_allocated -= it->second;
  g_allocations.erase(it);
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}

void spin(long long ns) {
  if (ns <= 0) return;
  auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
};

}  // namespace

extern "C" {

// ---- initialization, errors, devices --------------------------------------------------

CUresult CUDAAPI cuInit(unsigned int flags) {
  COUNT(cuInit);
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (settings().devices == 0) return CUDA_ERROR_NO_DEVICE;
  for (int i = 0; i < kMaxDevices; ++i) g_contexts[i].device = g_pools[i].device = i;
  g_initialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  COUNT(cuDriverGetVersion);
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** out) {
  COUNT(cuGetErrorName);
  for (const ErrorText& e : kErrors)
    if (e.code == error) return *out = e.name, CUDA_SUCCESS;
  *out = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** out) {
  COUNT(cuGetErrorString);
  for (const ErrorText& e : kErrors)
    if (e.code == error) return *out = e.text, CUDA_SUCCESS;
  *out = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  COUNT(cuDeviceGetCount);
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  *count = settings().devices;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  COUNT(cuDeviceGet);
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  COUNT(cuDeviceGetName);
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<std::size_t>(len), "fake CUDA device (luda profiling driver)");
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  COUNT(cuDeviceGetAttribute);
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  switch (attrib) {  // an H200's values
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *pi = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *pi = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *pi = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *pi = 65535; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *pi = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *pi = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *pi = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *pi = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *pi = 32; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *pi = 52428800; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *pi = 6144; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *pi = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *pi = 3201000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; break;
    default: *pi = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  COUNT(cuDeviceTotalMem);
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer) {
  COUNT(cuDeviceCanAccessPeer);
  if (!valid_device(dev) || !valid_device(peer)) return CUDA_ERROR_INVALID_DEVICE;
  *can = dev != peer;  // host memory underneath: any device reaches any other
  return CUDA_SUCCESS;
}

// NVRTC opens libcuda.so.1 when it is there and asks it for its private interfaces
// (export tables); it does without them when the driver has none to give, as here.
CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid*) {
  if (table) *table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}

// ---- contexts -------------------------------------------------------------------------

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  COUNT(cuDevicePrimaryCtxRetain);
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = &g_contexts[dev];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  COUNT(cuDevicePrimaryCtxRelease);
  return valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  COUNT(cuCtxGetCurrent);
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  *ctx = t_current;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  COUNT(cuCtxSetCurrent);
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  t_current = ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  COUNT(cuCtxSynchronize);
  return need_context();
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  COUNT(cuCtxEnablePeerAccess);
  if (CUresult r = need_context()) return r;
  if (!peer || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// ---- memory ---------------------------------------------------------------------------

CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
  COUNT(cuMemGetInfo);
  if (CUresult r = need_context()) return r;
  std::lock_guard lock(g_memory_mutex);
  *free = kTotalMemory - g_allocated;
  *total = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
  COUNT(cuMemAlloc);
  return allocate(dptr, bytesize);
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  COUNT(cuMemFree);
  return release(dptr);
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream) {
  COUNT(cuMemAllocAsync);
  return allocate(dptr, bytesize);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream) {
  COUNT(cuMemFreeAsync);
  return release(dptr);
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev) {
  COUNT(cuDeviceGetDefaultMemPool);
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pool = &g_pools[dev];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute, void* value) {
  COUNT(cuMemPoolSetAttribute);
  return pool && value ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool, const CUmemAccessDesc*, size_t) {
  COUNT(cuMemPoolSetAccess);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t) {
  COUNT(cuMemPoolTrimTo);
  return pool ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int) {
  COUNT(cuMemHostAlloc);
  if (CUresult r = need_context()) return r;
  if (!pp || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  *pp = std::aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
  return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuMemFreeHost(void* p) {
  COUNT(cuMemFreeHost);
  std::free(p);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream) {
  COUNT(cuMemcpyHtoDAsync);
  if (CUresult r = need_context()) return r;
  if (n) std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream) {
  COUNT(cuMemcpyDtoHAsync);
  if (CUresult r = need_context()) return r;
  if (n) std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  COUNT(cuMemcpyDtoDAsync);
  if (CUresult r = need_context()) return r;
  if (n) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t n, CUstream) {
  COUNT(cuMemcpyPeerAsync);
  if (CUresult r = need_context()) return r;
  if (n) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream) {
  COUNT(cuMemsetD8Async);
  if (CUresult r = need_context()) return r;
  if (n) std::memset(reinterpret_cast<void*>(dst), value, n);
  return CUDA_SUCCESS;
}

// ---- streams and events ---------------------------------------------------------------

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int flags) {
  COUNT(cuStreamCreate);
  if (CUresult r = need_context()) return r;
  *stream = new (std::nothrow) CUstream_st{flags};
  return *stream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
  COUNT(cuStreamDestroy);
  if (!stream) return CUDA_ERROR_INVALID_HANDLE;
  delete stream;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream) {
  COUNT(cuStreamSynchronize);
  return need_context();
}

CUresult CUDAAPI cuStreamQuery(CUstream) {
  COUNT(cuStreamQuery);
  return need_context();
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream, CUevent event, unsigned int) {
  COUNT(cuStreamWaitEvent);
  if (CUresult r = need_context()) return r;
  return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream stream, unsigned int* flags) {
  COUNT(cuStreamGetFlags);
  if (CUresult r = need_context()) return r;
  *flags = stream ? stream->flags : 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int flags) {
  COUNT(cuEventCreate);
  if (CUresult r = need_context()) return r;
  *event = new (std::nothrow) CUevent_st{flags};
  return *event ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
  COUNT(cuEventDestroy);
  if (!event) return CUDA_ERROR_INVALID_HANDLE;
  delete event;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream) {
  COUNT(cuEventRecord);
  if (CUresult r = need_context()) return r;
  if (!event) return CUDA_ERROR_INVALID_HANDLE;
  event->at = std::chrono::steady_clock::now();
  event->recorded = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  COUNT(cuEventSynchronize);
  return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuEventQuery(CUevent event) {
  COUNT(cuEventQuery);
  return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  COUNT(cuEventElapsedTime);
  if (!start || !end || !ms) return CUDA_ERROR_INVALID_HANDLE;
  if (!start->recorded || !end->recorded) return CUDA_ERROR_NOT_READY;
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return CUDA_SUCCESS;
}

// ---- modules and launches -------------------------------------------------------------

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  COUNT(cuModuleLoadData);
  if (CUresult r = need_context()) return r;
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  *module = new (std::nothrow) CUmod_st;
  return *module ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  COUNT(cuModuleUnload);
  if (!module) return CUDA_ERROR_INVALID_HANDLE;
  for (auto& [name, f] : module->functions) delete f;
  delete module;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule module, const char* name) {
  COUNT(cuModuleGetFunction);
  if (CUresult r = need_context()) return r;
  if (!module) return CUDA_ERROR_INVALID_HANDLE;
  if (!f || !name) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(module->mutex);
  CUfunc_st*& slot = module->functions[name];
  if (!slot) slot = new CUfunc_st{name};
  *f = slot;
  return CUDA_SUCCESS;
}

// Modules hold no variables: every name is unknown, as the driver answers for one.
CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name) {
  COUNT(cuModuleGetGlobal);
  if (CUresult r = need_context()) return r;
  if (!module) return CUDA_ERROR_INVALID_HANDLE;
  if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction f) {
  COUNT(cuFuncGetAttribute);
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 16; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->max_dynamic_shared; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    default: *pi = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute attrib, int value) {
  COUNT(cuFuncSetAttribute);
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > 232448) return CUDA_ERROR_INVALID_VALUE;
    f->max_dynamic_shared = value;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                unsigned int by, unsigned int bz, unsigned int shared, CUstream, void** params,
                                void** extra) {
  COUNT(cuLaunchKernel);
  if (CUresult r = need_context()) return r;
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  if (!gx || !gy || !gz || !bx || !by || !bz) return CUDA_ERROR_INVALID_VALUE;
  if (static_cast<unsigned long long>(bx) * by * bz > 1024) return CUDA_ERROR_INVALID_VALUE;
  if (gy > 65535 || gz > 65535 || by > 1024 || bz > 64) return CUDA_ERROR_INVALID_VALUE;
  if (shared > static_cast<unsigned>(f->max_dynamic_shared)) return CUDA_ERROR_INVALID_VALUE;
  if (params && extra) return CUDA_ERROR_INVALID_VALUE;
  spin(settings().launch_ns);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                           unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                           CUstream stream, void** params) {
  COUNT(cuLaunchCooperativeKernel);
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, nullptr);
}

// An H200 SM's 2048 threads, in blocks of `block` threads (registers and shared memory
// are never the limit here).
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction f, int block, size_t) {
  COUNT(cuOccupancyMaxActiveBlocksPerMultiprocessor);
  if (CUresult r = need_context()) return r;
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  if (!blocks || block <= 0 || block > 1024) return CUDA_ERROR_INVALID_VALUE;
  *blocks = 2048 / block;
  return CUDA_SUCCESS;
}

// ---- graphs: handles and counts; nothing runs (a launch costs what a kernel's does) ----

CUresult CUDAAPI cuGraphCreate(CUgraph* graph, unsigned int) {
  COUNT(cuGraphCreate);
  *graph = reinterpret_cast<CUgraph>(new char);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
  COUNT(cuGraphDestroy);
  delete reinterpret_cast<char*>(graph);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode* node, CUgraph, const CUgraphNode*, size_t,
                                      const CUDA_KERNEL_NODE_PARAMS*) {
  COUNT(cuGraphAddKernelNode);
  *node = nullptr;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode* node, CUgraph, const CUgraphNode*, size_t, const CUDA_MEMCPY3D*,
                                      CUcontext) {
  COUNT(cuGraphAddMemcpyNode);
  *node = nullptr;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode* node, CUgraph, const CUgraphNode*, size_t,
                                      const CUDA_MEMSET_NODE_PARAMS*, CUcontext) {
  COUNT(cuGraphAddMemsetNode);
  *node = nullptr;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphKernelNodeSetAttribute(CUgraphNode, CUkernelNodeAttrID, const CUkernelNodeAttrValue*) {
  COUNT(cuGraphKernelNodeSetAttribute);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec* exec, CUgraph, unsigned long long) {
  COUNT(cuGraphInstantiate);
  *exec = reinterpret_cast<CUgraphExec>(new char);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec) {
  COUNT(cuGraphExecDestroy);
  delete reinterpret_cast<char*>(exec);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec, CUstream) {
  COUNT(cuGraphLaunch);
  spin(settings().launch_ns);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*) {
  COUNT(cuGraphExecKernelNodeSetParams);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecMemcpyNodeSetParams(CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D*, CUcontext) {
  COUNT(cuGraphExecMemcpyNodeSetParams);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecMemsetNodeSetParams(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS*, CUcontext) {
  COUNT(cuGraphExecMemsetNodeSetParams);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool, CUmemPool_attribute, void* value) {
  COUNT(cuMemPoolGetAttribute);
  *static_cast<cuuint64_t*>(value) = 0;
  return CUDA_SUCCESS;
}

// Graph memory: an address that nothing reads (nodes do not run here), distinct per node.
CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode* node, CUgraph, const CUgraphNode*, size_t,
                                        CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  COUNT(cuGraphAddMemAllocNode);
  static std::atomic<CUdeviceptr> next{CUdeviceptr{1} << 44};
  params->dptr = next.fetch_add((params->bytesize + 255) / 256 * 256 + 256);
  *node = nullptr;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode* node, CUgraph, const CUgraphNode*, size_t, CUdeviceptr) {
  COUNT(cuGraphAddMemFreeNode);
  *node = nullptr;
  return CUDA_SUCCESS;
}

}  // extern "C"

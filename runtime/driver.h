// The CUDA Driver API, loaded with dlopen("libcuda.so.1") on first use. luda links no
// CUDA library, so it loads and runs (on the cpu device) where no driver exists; only
// asking for a CUDA device there raises NoDeviceError.
#pragma once

#include <cuda.h>

#include <atomic>

#include <string>
#include <string_view>

#include "runtime/error.h"

namespace luda {

// NoDeviceError and CudaError (whose code() is the CUresult) are public (luda/core.h).

namespace driver {

// X-macro list of every entry point luda calls: LUDA_DRIVER_FN(name). Names are the
// public ones (cuMemAlloc); cuda.h maps them to the versioned ABI symbols that dlsym finds.
// clang-format off
#define LUDA_DRIVER_FUNCTIONS(X)                                                        \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                 \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)         \
  X(cuDeviceTotalMem) X(cuDeviceCanAccessPeer)                                          \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)                              \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuCtxEnablePeerAccess)    \
  X(cuMemGetInfo) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)       \
  X(cuDeviceGetDefaultMemPool) X(cuMemPoolSetAttribute) X(cuMemPoolTrimTo)              \
  X(cuMemPoolGetAttribute) X(cuMemPoolSetAccess)                                        \
  X(cuMemHostAlloc) X(cuMemFreeHost)                                                    \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemcpyPeerAsync)   \
  X(cuMemsetD8Async)                                                                    \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery)          \
  X(cuStreamWaitEvent) X(cuStreamGetFlags)                                              \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)             \
  X(cuEventQuery) X(cuEventElapsedTime)                                                 \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetGlobal)      \
  X(cuFuncGetAttribute)                                                                 \
  X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchCooperativeKernel)                  \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                        \
  X(cuGraphCreate) X(cuGraphDestroy) X(cuGraphAddKernelNode) X(cuGraphAddMemcpyNode)    \
  X(cuGraphAddMemsetNode) X(cuGraphKernelNodeSetAttribute) X(cuGraphInstantiate)        \
  X(cuGraphExecDestroy) X(cuGraphLaunch) X(cuGraphExecKernelNodeSetParams)              \
  X(cuGraphExecMemcpyNodeSetParams) X(cuGraphExecMemsetNodeSetParams)                 \
  X(cuGraphAddMemAllocNode) X(cuGraphAddMemFreeNode)
// clang-format on

struct Api {
#define LUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  LUDA_DRIVER_FUNCTIONS(LUDA_DRIVER_MEMBER)
#undef LUDA_DRIVER_MEMBER
  int version = 0;  // cuDriverGetVersion, e.g. 13000
};

namespace detail {
// The table once loading has succeeded (null before, and for good when it failed): api()'s
// fast path, a single load on every driver call of every launch.
extern std::atomic<const Api*> g_usable_api;
const Api& api_slow();
[[noreturn]] void throw_check(CUresult r, std::string_view call, std::string_view detail);
}  // namespace detail

// Loads libcuda.so.1 and calls cuInit(0) once per process (thread-safe). Throws
// NoDeviceError("no CUDA device: <reason>") when either fails; later calls rethrow it.
inline const Api& api() {
  if (const Api* a = detail::g_usable_api.load(std::memory_order_acquire)) return *a;
  return detail::api_slow();
}

// Never throws. False with the reason ("libcuda.so.1 not found (...)", "cuInit:
// CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected") when the driver is unusable.
bool available(std::string* reason = nullptr);

// "CUDA_ERROR_OUT_OF_MEMORY" and "out of memory"; work before/without a loaded driver.
std::string error_name(CUresult r);
std::string error_string(CUresult r);

// Throws CudaError "<call>: <NAME>: <description>[ (<detail>)]" unless r == CUDA_SUCCESS.
inline void check(CUresult r, std::string_view call, std::string_view detail = {}) {
  if (r != CUDA_SUCCESS) [[unlikely]]
    detail::throw_check(r, call, detail);
}

// "8.0 GiB", "512 B", "1.5 MiB"
std::string format_bytes(unsigned long long bytes);

// The kernel the calling thread launched last, which a sticky error's message names: a
// fault inside a kernel surfaces at a later call (a copy back, a synchronize) that cannot
// tell which kernel it was. `label` ("kernel 'hist' (hist.lua:12)") must live as long as
// the process: intern_label makes such a copy, once per kernel object.
void note_launch(const char* label) noexcept;
const char* intern_label(std::string_view label);

// True for errors that leave the context unusable (CUDA_ERROR_ILLEGAL_ADDRESS, ...):
// their message says that the process must be restarted to use the device again.
bool is_sticky(CUresult r);

namespace detail {
// Opens `library` with dlopen and fills `out` with its entry points; cuInit is not
// called. Returns "" on success, else the reason, e.g. "libcuda.so.1 not found
// (libcuda.so.1: cannot open shared object file: No such file or directory); install the
// NVIDIA driver or use the cpu device". On failure the library is closed again.
std::string open_driver(const char* library, Api& out);
}  // namespace detail

}  // namespace driver

// LUDA_CU(cuMemFree, ptr): calls the loaded entry point and checks it, naming the call.
#define LUDA_CU(fn, ...) ::luda::driver::check(::luda::driver::api().fn(__VA_ARGS__), #fn)

}  // namespace luda

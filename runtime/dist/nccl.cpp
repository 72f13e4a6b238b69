#include "runtime/dist/nccl.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/shared_library.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
#define LUDA_HAVE_NCCL_HEADER 1
#else
#define LUDA_HAVE_NCCL_HEADER 0
#endif

namespace luda::nccl {

#if LUDA_HAVE_NCCL_HEADER

namespace {

static_assert(sizeof(UniqueId) == sizeof(ncclUniqueId));

// X-macro list of the entry points luda calls.
// clang-format off
#define LUDA_NCCL_FUNCTIONS(X)                                                              \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRankConfig) X(ncclCommGetAsyncError)   \
  X(ncclCommAbort) X(ncclGetErrorString) X(ncclGetLastError) X(ncclAllReduce)               \
  X(ncclBroadcast) X(ncclAllGather)
// clang-format on

struct Library {
  SharedLibrary lib;
#define LUDA_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  LUDA_NCCL_FUNCTIONS(LUDA_NCCL_MEMBER)
#undef LUDA_NCCL_MEMBER
  std::string version;
};

constexpr std::string_view kFix =
    "install NCCL (NVIDIA's libnccl2 package, or the CUDA toolkit's lib64), or set LUDA_NCCL to the path of "
    "libnccl.so.2; LUDA_NCCL=off turns NCCL off";

Library load() {
  if (const char* v = std::getenv("LUDA_NCCL"); v && std::string_view(v) == "off")
    fail("NCCL is turned off by LUDA_NCCL=off (unset it to use NCCL)");
  static constexpr const char* kSymbols[] = {
#define LUDA_NCCL_NAME(name) #name,
      LUDA_NCCL_FUNCTIONS(LUDA_NCCL_NAME)
#undef LUDA_NCCL_NAME
  };
  Library l;
  l.lib = open_library("NCCL", library_candidates({"LUDA_NCCL", "libnccl.so", true, {"libnccl.so.2", "libnccl.so"}}),
                       kSymbols, kFix);
  std::size_t k = 0;
#define LUDA_NCCL_SET(name) l.name = reinterpret_cast<decltype(&::name)>(l.lib.symbols[k++]);
  LUDA_NCCL_FUNCTIONS(LUDA_NCCL_SET)
#undef LUDA_NCCL_SET
  int code = 0;
  if (l.ncclGetVersion(&code) != ncclSuccess) fail("NCCL: {} does not give its version; {}", l.lib.path, kFix);
  // NCCL's codes since 2.9: major * 10000 + minor * 100 + patch.
  l.version = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  if (code < 21400)
    fail("NCCL {} ({}) is older than 2.14, which luda needs (nonblocking communicators); {}", l.version, l.lib.path,
         kFix);
  return l;
}

const Library& library() { return load_once(&load); }

[[noreturn]] void fail_with(const Library& l, ncclResult_t r, const char* call, ncclComm_t comm) {
  const char* last = comm ? l.ncclGetLastError(comm) : nullptr;
  fail("NCCL: {} failed: {}{}{}", call, l.ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
}

}  // namespace

std::optional<std::string> version(std::string* why) {
  try {
    return library().version;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

UniqueId unique_id() {
  const Library& l = library();
  UniqueId id;
  ncclUniqueId raw;
  if (ncclResult_t r = l.ncclGetUniqueId(&raw); r != ncclSuccess) fail_with(l, r, "ncclGetUniqueId", nullptr);
  std::memcpy(id.bytes, &raw, sizeof raw);
  return id;
}

std::optional<int> type_of(DType dtype) {
  switch (dtype) {
    case DType::Int8: return ncclInt8;
    case DType::UInt8: return ncclUint8;
    case DType::Int32: return ncclInt32;
    case DType::UInt32: return ncclUint32;
    case DType::Int64: return ncclInt64;
    case DType::UInt64: return ncclUint64;
    case DType::Float16: return ncclFloat16;
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::BFloat16: return ncclBfloat16;
    default: return std::nullopt;
  }
}

std::unique_ptr<Comm> Comm::start(int ranks, const UniqueId& id, int rank, int ordinal) {
  const Library& l = library();
  ContextScope scope(ordinal);
  std::unique_ptr<Comm> c(new Comm());
  c->ordinal_ = ordinal;
  driver::check(driver::api().cuStreamCreate(&c->stream_, CU_STREAM_DEFAULT), "cuStreamCreate", "NCCL's stream");
  ncclUniqueId raw;
  std::memcpy(&raw, id.bytes, sizeof raw);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = l.ncclCommInitRankConfig(&comm, ranks, raw, rank, &config);
  c->comm_ = comm;
  if (r != ncclSuccess && r != ncclInProgress) fail_with(l, r, "ncclCommInitRankConfig", comm);
  return c;
}

Comm::~Comm() {
  abort();
  if (stream_) (void)driver::api().cuStreamDestroy(stream_);
}

void Comm::abort() noexcept {
  if (aborted_ || !comm_) return;
  aborted_ = true;
  try {
    ContextScope scope(ordinal_);
    (void)library().ncclCommAbort(static_cast<ncclComm_t>(comm_));
  } catch (...) {
    // No context any more (the driver is shutting down): nothing is left to end.
  }
}

bool Comm::ready() {
  if (aborted_) fail("NCCL: the communicator was aborted");
  const Library& l = library();
  ContextScope scope(ordinal_);
  auto comm = static_cast<ncclComm_t>(comm_);
  ncclResult_t state = ncclSuccess;
  if (ncclResult_t r = l.ncclCommGetAsyncError(comm, &state); r != ncclSuccess)
    fail_with(l, r, "ncclCommGetAsyncError", comm);
  if (state == ncclInProgress) return false;
  if (state != ncclSuccess) fail_with(l, state, "a communicator's operation", comm);
  CUresult q = driver::api().cuStreamQuery(stream_);
  if (q == CUDA_ERROR_NOT_READY) return false;
  driver::check(q, "cuStreamQuery", "NCCL's stream");
  return true;
}

void Comm::started(int result, const char* call) {
  auto r = static_cast<ncclResult_t>(result);
  if (r != ncclSuccess && r != ncclInProgress) fail_with(library(), r, call, static_cast<ncclComm_t>(comm_));
}

// An operation on a nonblocking communicator returns ncclInProgress while NCCL still
// enqueues it; the next one may start only after that: ready() polls for both.
void Comm::all_reduce(const void* send, void* recv, std::size_t count, int type, Op op) {
  static constexpr ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin};
  ContextScope scope(ordinal_);
  started(library().ncclAllReduce(send, recv, count, static_cast<ncclDataType_t>(type), kOps[static_cast<int>(op)],
                                  static_cast<ncclComm_t>(comm_), stream_),
          "ncclAllReduce");
}

void Comm::broadcast(const void* send, void* recv, std::size_t bytes, int root) {
  ContextScope scope(ordinal_);
  started(library().ncclBroadcast(send, recv, bytes, ncclUint8, root, static_cast<ncclComm_t>(comm_), stream_),
          "ncclBroadcast");
}

void Comm::all_gather(const void* send, void* recv, std::size_t bytes) {
  ContextScope scope(ordinal_);
  started(library().ncclAllGather(send, recv, bytes, ncclUint8, static_cast<ncclComm_t>(comm_), stream_),
          "ncclAllGather");
}

#else  // no nccl.h at build time: NCCL is never used

std::optional<std::string> version(std::string* why) {
  if (why)
    *why =
        "luda was built without NCCL's header (nccl.h, from the CUDA toolkit or NVIDIA's libnccl-dev); build it where the header is";
  return std::nullopt;
}
UniqueId unique_id() { fail("NCCL: luda was built without NCCL"); }
std::optional<int> type_of(DType) { return std::nullopt; }
std::unique_ptr<Comm> Comm::start(int, const UniqueId&, int, int) { fail("NCCL: luda was built without NCCL"); }
Comm::~Comm() = default;
void Comm::abort() noexcept {}
bool Comm::ready() { fail("NCCL: luda was built without NCCL"); }
void Comm::started(int, const char*) {}
void Comm::all_reduce(const void*, void*, std::size_t, int, Op) {}
void Comm::broadcast(const void*, void*, std::size_t, int) {}
void Comm::all_gather(const void*, void*, std::size_t) {}

#endif

}  // namespace luda::nccl

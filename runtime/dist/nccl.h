// NCCL, which luda.dist uses to move cuda arrays between the ranks of an MPI job
// (docs/distributed.md): libnccl.so.2 is loaded with dlopen at the first need, never
// linked, so that luda runs where NCCL is missing (cuda arrays then go through host memory).
//
// A Comm is one rank's part of a communicator over every rank of the job, on one CUDA
// device, made nonblocking (ncclCommInitRankConfig with blocking = 0): its setup and each
// operation are polled, so that luda.dist's deadlines hold for NCCL too, and a
// communicator whose peers never come is aborted rather than waited for. Operations run
// on the Comm's own stream, created blocking so that it is ordered after the work of the
// device's default stream before it and before the work after it.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "runtime/dtype.h"

namespace luda::nccl {

// ncclUniqueId: what rank 0 makes and every rank passes to Comm::start.
struct UniqueId {
  char bytes[128];
};

// The library's version ("2.28.9"), or nullopt when it cannot be used; *why (when given)
// then says why: every file tried, or "turned off by LUDA_NCCL=off", and the fix. Loads
// the library at the first call (LUDA_NCCL names the file, else libnccl.so.2 in the CUDA
// toolkit's lib64 folders and on the loader's path).
std::optional<std::string> version(std::string* why = nullptr);

// A new id (ncclGetUniqueId). Error when NCCL cannot be used or refuses.
UniqueId unique_id();

enum class Op { Sum, Prod, Max, Min };

// NCCL's element type for a dtype: int8, uint8, int32, uint32, int64, uint64, float16,
// float32, float64 and bfloat16 have one; bool, int16, uint16 and the complex types
// have none (nullopt).
std::optional<int> type_of(DType dtype);

class Comm {
 public:
  // Starts this rank's part of a communicator of `ranks` on CUDA device `ordinal`; ready()
  // says when every rank has joined. Error when NCCL refuses at once.
  static std::unique_ptr<Comm> start(int ranks, const UniqueId& id, int rank, int ordinal);
  ~Comm();  // ncclCommAbort: what is pending ends (luda.dist keeps its communicator for the process)
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int ordinal() const { return ordinal_; }

  // Whether setup or the operations started since the last true have completed, their
  // work on the device included. Error with NCCL's or CUDA's text when one failed.
  bool ready();
  // Ends what is pending, never to complete (ncclCommAbort); the Comm cannot be used after.
  void abort() noexcept;

  // Operations, started on the Comm's stream: buffers on its device, `count` elements of
  // `type` (type_of's) for all_reduce, bytes otherwise. Error when NCCL refuses one.
  void all_reduce(const void* send, void* recv, std::size_t count, int type, Op op);
  void broadcast(const void* send, void* recv, std::size_t bytes, int root);
  void all_gather(const void* send, void* recv, std::size_t bytes);

 private:
  Comm() = default;
  void started(int result, const char* call);  // checks an operation's immediate result

  void* comm_ = nullptr;  // ncclComm_t
  CUstream stream_ = nullptr;
  int ordinal_ = 0;
  bool aborted_ = false;
};

}  // namespace luda::nccl

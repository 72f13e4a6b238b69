// The job's NCCL communicator as luda.dist's collectives use it (runtime/dist/dist.h):
// whether this rank can move a cuda array with NCCL, the communicator made over MPI at
// the first collective that needs it, NCCL's operations waited for under the call's
// deadline, and NCCL given up (its communicator aborted) when one fails or times out,
// after which cuda arrays go through host memory (runtime/dist/host_transfers.h).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "runtime/dist/call_record.h"
#include "runtime/dist/dist.h"
#include "runtime/dist/nccl.h"
#include "runtime/dist/requests.h"
#include "runtime/dist/world.h"
#include "runtime/ndarray.h"

namespace luda::dist::detail {

// NCCL's part of the job, under g_mutex: the communicator, made at the first collective
// that moves cuda arrays with it and kept for the process, and why this rank does not use
// NCCL (empty while it may). A communicator that failed or timed out is aborted and kept.
struct NcclState {
  std::unique_ptr<nccl::Comm> comm;
  std::string off;
};
extern NcclState& g_nccl;

// This rank's record of a collective on x, with whether it can use NCCL.
CallRecord record_with_place(Call call, const NDArray& x, Op op = Op::Sum, int root = 0);

// How NCCL combines an allreduce of `dtype` by `op`: the dtype sent (float16 and
// bfloat16 as float32), NCCL's type and op, elements per element (2 for complex); nullopt
// when NCCL cannot.
struct NcclReduce {
  DType wire;
  int type;
  std::size_t parts;
  nccl::Op op;
};
std::optional<NcclReduce> nccl_reduce(DType dtype, Op op);

// The communicator for a collective on x whose records say every rank can use NCCL, or
// null (the data then goes through host memory, with a note saying why). `unsupported`:
// why NCCL cannot do this call ("" when it can); it is the same on every rank.
nccl::Comm* nccl_for(const World& w, std::string_view fname, const NDArray& x, const std::vector<CallRecord>& records,
                     const std::string& unsupported, const Deadline& d);

// x as a C-contiguous array on cuda:`ordinal`, the communicator's device.
NDArray on_comm_device(const NDArray& x, int ordinal);

// Aborts the communicator (NCCL's rule for one whose operation failed or was left
// unfinished) and moves this rank's later cuda arrays through host memory. Under g_mutex.
void give_up_nccl(const std::string& why);

// Polls the communicator until its setup or operations complete. A failure, the
// deadline or an interrupt aborts it: later calls then move cuda arrays through host
// memory (this rank says so in its record, so every rank does). Under g_mutex.
void wait_nccl(const World& w, std::string_view fname, const Deadline& d, std::string_view what);

// Starts a collective's NCCL operation by `begin` (which makes its buffers and starts it)
// and waits for it to complete. One that fails to start gives NCCL up, as one that fails
// later does: NCCL leaves a nonblocking communicator whose call failed unusable. Under g_mutex.
template <class Begin>
void run_nccl(const World& w, std::string_view fname, const Deadline& d, std::string_view what, Begin begin) {
  try {
    begin();
  } catch (const Error&) {
    give_up_nccl(fmt::format("its {} could not start on rank {}", what, w.info.rank));
    throw;
  }
  wait_nccl(w, fname, d, what);
}

}  // namespace luda::dist::detail

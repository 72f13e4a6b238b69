// luda beyond one process: the ranks of an MPI job (`mpirun -n 4 luda script.lua` runs
// one luda per rank), with collectives and messages on arrays (docs/distributed.md).
//
// libluda links no MPI. Under an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// PMIX_RANK in the environment) the first call of this file loads luda's MPI plugin,
// libluda_mpi.so (runtime/dist/mpi_plugin.h), with dlopen, and MPI_Init_thread runs unless
// the host initialized MPI itself. Without a launcher nothing is loaded: size() is 1,
// rank() 0, barrier returns at once, the collectives return copies, and a message to
// oneself is an error. A job of one rank under a launcher (mpirun -n 1) moves its data as
// any job does, through MPI and NCCL.
//
// Every collective first exchanges a small record of what each rank called it with (the
// function, the array's dtype and shape, the op or root), so that ranks that disagree
// get an error naming each rank's part instead of MPI truncating or mixing data, and a
// rank that calls another function gets an error rather than a hang. Every wait has a
// deadline: MPI's nonblocking calls are polled until the call's timeout (CallOptions),
// else $LUDA_DIST_TIMEOUT seconds, else 60; a call that some ranks never make ends in an
// error on the ranks that made it. Such a rank's next collective first waits (within its
// own deadline) for the other ranks to reach the call that timed out: when they made
// another call, they got the mismatch error there and the ranks' calls line up again;
// when they made the same call late, they went on to its data, and this rank refuses every
// later collective rather than let MPI match different operations. A recv that timed out
// is cancelled, so that a later recv gets the message.
//
// How arrays move: MPI is never given a device pointer (Debian's OpenMPI is not
// CUDA-aware). A collective on cuda arrays goes through NCCL (runtime/dist/nccl.h) when every
// rank's array is a cuda array, every rank can load NCCL, and no two ranks share a GPU:
// the first such call makes the job's NCCL communicator, over MPI, on each rank's array's
// device, and later calls use it (an array on another device of the rank is copied to it).
// Otherwise, and for send and recv (NCCL's point-to-point messages have no tags to match
// by), a cuda array is copied to pinned host memory, moved by MPI, and copied back, and
// the first such call prints a one-time note saying why NCCL was not used. NCCL combines
// what it has types for: bool, every integer but int16 and uint16, the float types
// (float16 and bfloat16 in float32, as MPI's path does) and complex sums; other dtypes and
// ops go through host memory.
//
// Ranks count from 0, as MPI's do. Calls from several threads are serialized.
//
// The parts, in runtime/dist/: world.h (this process's part of the job, loading the
// plugin through open_plugin.h), call_record.h (what each rank says of a call, and the
// errors when they disagree), requests.h (MPI's requests waited for under a deadline,
// and those abandoned), communicator.h (the job's NCCL communicator, over nccl.h),
// host_transfers.h (arrays through host memory, in pieces); collectives.cpp and
// messages.cpp implement the calls below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/ndarray.h"

namespace luda::dist {

enum class Op : std::uint8_t { Sum, Prod, Max, Min };
// "sum", "prod", "max", "min"; nullopt for anything else.
std::optional<Op> parse_op(std::string_view name);
std::string_view op_name(Op op);

struct CallOptions {
  // The most seconds the call waits for the other ranks (positive); unset:
  // $LUDA_DIST_TIMEOUT, else 60.
  std::optional<double> timeout;
};

// The rank of this process in the job (0 without a launcher) and the number of ranks (1
// without one). The first call under a launcher loads the plugin and initializes MPI;
// Error when the plugin is missing (naming what to install) or MPI fails.
int rank();
int size();

// Returns when every rank has called barrier.
void barrier(const CallOptions& options = {});
// The elements of every rank's x combined by `op`, as a new array on x's device. bool:
// sum and max are logical or, prod and min logical and; complex: sum and prod only;
// float16 and bfloat16 are combined in float32 and rounded back. Error for an op the
// dtype lacks.
NDArray allreduce(const NDArray& x, Op op, const CallOptions& options = {});
// Root's x on every rank, as a new array on each rank's x's device (every rank passes an
// array of root's dtype and shape).
NDArray broadcast(const NDArray& x, int root, const CallOptions& options = {});
// Every rank's x stacked in rank order: shape (size, *x.shape), on x's device.
NDArray allgather(const NDArray& x, const CallOptions& options = {});
// x to rank `dest`, matched by a recv there with this rank as source and the same tag.
// Returns when MPI has taken the data (at once for small arrays; a large one waits for
// the receiver).
void send(const NDArray& x, int dest, int tag = 0, const CallOptions& options = {});
// Fills `buf` (any device, any layout) with the array that rank `source` sends with
// `tag`, which must have buf's dtype and shape.
void recv(NDArray& buf, int source, int tag = 0, const CallOptions& options = {});

// What this process knows of the job and how it moves arrays.
struct Info {
  int rank = 0, size = 1;
  std::string mpi;                    // MPI's library version line; empty without a launcher
  std::string nccl;                   // the NCCL version that loads ("2.28.9"); empty when none does
  std::optional<Device> nccl_device;  // the NCCL communicator's device, once a collective made it
  // Why this rank moves cuda arrays through host memory (NCCL missing or given up, ranks
  // sharing a GPU); empty while NCCL may be used.
  std::string host_reason;
};
Info info();

// The deadline in seconds a call with `options` gets. Error for a malformed
// $LUDA_DIST_TIMEOUT, naming it.
double timeout_seconds(const CallOptions& options);

// A process that is about to end with an error calls this (the `luda` command does):
// it then skips MPI_Finalize at exit, so that mpirun ends the job at once rather than
// this rank waiting in MPI_Finalize for ranks that may be waiting for it.
void exiting_with_error() noexcept;

}  // namespace luda::dist

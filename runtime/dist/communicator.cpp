#include "runtime/dist/communicator.h"

#include <cstdio>
#include <cstring>
#include <thread>

#include <unistd.h>

#include "runtime/device.h"
#include "runtime/dist/host_transfers.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace luda::dist::detail {

// Never destroyed: at exit the CUDA driver may be gone before static destructors run, and
// the process's end releases what NCCL holds.
NcclState& g_nccl = *new NcclState;

namespace {

// Whether this rank can move x with NCCL: a cuda array, and NCCL loads and was not given up.
bool nccl_capable(const NDArray& x) {
  if (!x.device().is_cuda() || !g_nccl.off.empty()) return false;
  std::string why;
  if (!nccl::version(&why)) {
    g_nccl.off = why;
    return false;
  }
  return true;
}

// Why this call's cuda arrays go through host memory, from every rank's record ("" when
// NCCL moves them, or when this rank's array is no cuda array and there is nothing to say).
std::string host_reason(const World& w, const NDArray& x, const std::vector<CallRecord>& records) {
  if (!x.device().is_cuda()) return "";
  if (!g_nccl.off.empty()) return g_nccl.off;
  std::vector<int> others;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (!records[i].nccl) others.push_back(static_cast<int>(i));
  if (others.empty()) return "";
  return fmt::format("{} passed a cpu array or cannot use NCCL, and NCCL moves data only when every rank's array "
                     "is a cuda array (of this call: the job has {} ranks)",
                     rank_list(others), w.info.size);
}

// What each rank gives to the communicator's setup, in one allgather (a single MPI
// collective, so that a timeout cannot leave the ranks at different steps of it): which GPU
// its array is on, for finding ranks that share one, and from rank 0 NCCL's id or why it
// has none.
struct Joining {
  char host[64];
  char pci[16];
  std::int32_t ok;
  nccl::UniqueId id;
  char why[512];
};

// The job's NCCL communicator, made with every rank when there is none: on this rank's
// array's device, cuda:`ordinal`. Null when ranks share a GPU, which NCCL refuses, or when
// rank 0 could not make an id (the reason is kept in g_nccl.off on every rank, so later
// calls agree). Under g_mutex.
nccl::Comm* communicator(const World& w, std::string_view fname, int ordinal, const Deadline& d) {
  if (g_nccl.comm) return g_nccl.comm.get();
  auto mine = std::make_shared<Joining>();
  std::memset(static_cast<void*>(mine.get()), 0, sizeof *mine);
  gethostname(mine->host, sizeof mine->host - 1);
  std::snprintf(mine->pci, sizeof mine->pci, "%s", cuda_properties(ordinal).pci_bus_id.c_str());
  if (w.info.rank == 0) {
    try {
      mine->id = nccl::unique_id();
      mine->ok = 1;
    } catch (const Error& e) {
      std::snprintf(mine->why, sizeof mine->why, "%s", e.what());
    }
  }
  auto all = std::make_shared<std::vector<Joining>>(static_cast<std::size_t>(w.info.size));
  luda_mpi_request* r = start(w, fname, "MPI_Iallgather", [&](luda_mpi_request** req) {
    return w.plugin->iallgather(mine.get(), static_cast<int>(sizeof(Joining)), all->data(), req);
  });
  if (!wait_all(w, {r}, d, data_part(fname, {mine, all}))) data_timeout(w, fname, d);
  const std::vector<Joining>& ids = *all;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::vector<int> sharing;
    for (std::size_t j = 0; j < ids.size(); ++j)
      if (std::strncmp(ids[i].host, ids[j].host, sizeof ids[i].host) == 0 &&
          std::strncmp(ids[i].pci, ids[j].pci, sizeof ids[i].pci) == 0)
        sharing.push_back(static_cast<int>(j));
    if (sharing.size() > 1) {
      g_nccl.off = fmt::format("{} use one GPU (PCI {} on {}), and NCCL needs a GPU per rank; give each rank of a "
                               "host its own (docs/distributed.md, \"Starting\", shows how)",
                               rank_list(sharing), ids[i].pci, ids[i].host);
      return nullptr;
    }
  }
  if (!ids[0].ok) {
    g_nccl.off = fmt::format("rank 0 could not start NCCL: {}", ids[0].why);
    return nullptr;
  }
  try {
    g_nccl.comm = nccl::Comm::start(w.info.size, ids[0].id, w.info.rank, ordinal);
  } catch (const Error& e) {
    g_nccl.off = fmt::format("NCCL's setup failed on rank {}: {}", w.info.rank, e.what());
    fail("{}: {}; the other ranks wait for this rank's part until their timeout", fname, g_nccl.off);
  }
  wait_nccl(w, fname, d, "NCCL's setup");
  return g_nccl.comm.get();
}

}  // namespace

CallRecord record_with_place(Call call, const NDArray& x, Op op, int root) {
  CallRecord r = record_of(call, &x, op, root);
  r.nccl = nccl_capable(x) ? 1 : 0;
  return r;
}

std::optional<NcclReduce> nccl_reduce(DType dtype, Op op) {
  auto as = [](DType wire, DType element, std::size_t parts, nccl::Op o) -> std::optional<NcclReduce> {
    std::optional<int> type = nccl::type_of(element);
    if (!type) return std::nullopt;
    return NcclReduce{wire, *type, parts, o};
  };
  const auto same = static_cast<nccl::Op>(static_cast<int>(op));
  switch (dtype) {
    case DType::Bool:  // logical or is max of 0 and 1, logical and min
      return as(dtype, DType::UInt8, 1, op == Op::Sum || op == Op::Max ? nccl::Op::Max : nccl::Op::Min);
    case DType::Float16:
    case DType::BFloat16: return as(DType::Float32, DType::Float32, 1, same);
    case DType::Complex64: return op == Op::Sum ? as(dtype, DType::Float32, 2, same) : std::nullopt;
    case DType::Complex128: return op == Op::Sum ? as(dtype, DType::Float64, 2, same) : std::nullopt;
    default: return as(dtype, dtype, 1, same);
  }
}

void give_up_nccl(const std::string& why) {
  g_nccl.comm->abort();
  g_nccl.off = fmt::format("NCCL was given up: {}", why);
}

void wait_nccl(const World& w, std::string_view fname, const Deadline& d, std::string_view what) {
  nccl::Comm& c = *g_nccl.comm;
  luda::detail::InterruptScope scope;
  for (;;) {
    bool done = false;
    try {
      done = c.ready();
    } catch (const Error& e) {
      give_up_nccl(fmt::format("its {} failed on rank {}", what, w.info.rank));
      fail("{}: {} failed on rank {}: {}; later calls move cuda arrays through host memory", fname, what, w.info.rank,
           e.what());
    }
    if (done) return;
    if (luda::detail::g_interrupt) {
      give_up_nccl(fmt::format("an interrupt ended its {}", what));
      scope.consume();
      throw Interrupted(fmt::format("{}: interrupted while rank {} waited for {}; NCCL's communicator was aborted, "
                                    "and later calls move cuda arrays through host memory",
                                    fname, w.info.rank, what));
    }
    const Clock::time_point now = Clock::now();
    if (now >= d.at) {
      give_up_nccl(fmt::format("its {} did not complete within {:g} s on rank {}", what, d.seconds, w.info.rank));
      fail("{}: rank {} waited {:g} s for {} to complete; a rank may have stopped or failed. NCCL's communicator "
           "was aborted, and later calls move cuda arrays through host memory: {}",
           fname, w.info.rank, d.seconds, what, kLonger);
    }
    std::this_thread::yield();  // as wait_all polls data: a transfer's end is not long in coming
  }
}

NDArray on_comm_device(const NDArray& x, int ordinal) {
  const Device dev = Device::cuda(ordinal);
  if (x.device() == dev && x.is_c_contiguous()) return x;
  return x.copy(dev);
}

nccl::Comm* nccl_for(const World& w, std::string_view fname, const NDArray& x, const std::vector<CallRecord>& records,
                     const std::string& unsupported, const Deadline& d) {
  std::string why = host_reason(w, x, records);
  nccl::Comm* c = nullptr;
  if (why.empty() && x.device().is_cuda()) {
    if (!unsupported.empty()) {
      why = unsupported;
    } else {
      c = communicator(w, fname, g_nccl.comm ? g_nccl.comm->ordinal() : x.device().index, d);
      if (!c) why = g_nccl.off;
    }
  }
  if (!why.empty()) note_through_host(w, why);
  return c;
}

}  // namespace luda::dist::detail

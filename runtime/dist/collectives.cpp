// The collectives of runtime/dist/dist.h: barrier, allreduce, broadcast and allgather.
// Each exchanges every rank's record of the call first (runtime/dist/call_record.h),
// then moves the data with NCCL (runtime/dist/communicator.h) or through host memory
// (runtime/dist/host_transfers.h).
#include "runtime/dist/dist.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/dist/call_record.h"
#include "runtime/dist/communicator.h"
#include "runtime/dist/host_transfers.h"
#include "runtime/dist/requests.h"
#include "runtime/dist/world.h"
#include "runtime/error.h"

namespace luda::dist {

using namespace detail;

namespace {

// Every rank's record of this call, checked to agree. Errors: a timeout (some ranks did
// not make the call), or the records' mismatch_message.
std::vector<CallRecord> exchange_records(const World& w, std::string_view fname, const CallRecord& mine,
                                         const Deadline& d) {
  auto send = std::make_shared<CallRecord>(mine);
  auto records = std::make_shared<std::vector<CallRecord>>(static_cast<std::size_t>(w.info.size));
  luda_mpi_request* r = start(w, fname, "MPI_Iallgather", [&](luda_mpi_request** out) {
    return w.plugin->iallgather(send.get(), static_cast<int>(sizeof(CallRecord)), records->data(), out);
  });
  if (!wait_all(w, {r}, d, {nullptr, {send, records}, Part::Records, fname, records}))
    fail("{}: rank {} waited {:g} s for {} to call {} too; every rank must make the same luda.dist calls in the "
         "same order (a call that some ranks skip never completes), or a rank is still busy: {}",
         fname, w.info.rank, d.seconds, others_text(w), fname, kLonger);
  std::string message = mismatch_message(fname, *records);
  if (!message.empty()) throw Error(message);
  return *records;
}

void check_op(std::string_view fname, DType dtype, Op op) {
  if (is_complex(dtype) && (op == Op::Max || op == Op::Min))
    fail("{}: {} is not defined for {} (complex numbers have no order); use sum or prod, or reduce the real parts "
         "(luda.real(x))",
         fname, op_name(op), dtype_name(dtype));
}

}  // namespace

void barrier(const CallOptions& options) {
  constexpr std::string_view fname = "luda.dist.barrier";
  refuse_recording(fname);
  const double seconds = timeout_seconds(options);
  const World& w = world();
  if (!w.plugin) return;
  Entered e = enter(w);
  const Deadline d = deadline_after(seconds);
  settle_earlier_calls(w, fname, d);
  // The record exchange is an allgather, which no rank completes before every rank has
  // joined it: a barrier, that also tells a rank which made another call.
  exchange_records(w, fname, record_of(Call::Barrier, nullptr), d);
}

NDArray allreduce(const NDArray& x, Op op, const CallOptions& options) {
  constexpr std::string_view fname = "luda.dist.allreduce";
  refuse_recording(fname);
  check_op(fname, x.dtype(), op);
  const double seconds = timeout_seconds(options);
  const World& w = world();
  if (!w.plugin) return x.copy();
  Entered e = enter(w);
  const Deadline d = deadline_after(seconds);
  settle_earlier_calls(w, fname, d);
  const std::vector<CallRecord> records = exchange_records(w, fname, record_with_place(Call::Allreduce, x, op), d);
  if (x.size() == 0) return NDArray::empty(x.shape(), x.dtype(), x.device());
  const std::optional<NcclReduce> how = nccl_reduce(x.dtype(), op);
  const std::string unsupported = how ? ""
                                      : fmt::format("NCCL cannot combine {} by {}", dtype_name(x.dtype()), op_name(op));
  // Every rank is here now: the setup and the transfer get the call's whole timeout again.
  const Deadline phase = deadline_after(seconds);
  if (nccl::Comm* c = nccl_for(w, fname, x, records, unsupported, phase)) {
    NDArray send, out;
    run_nccl(w, fname, phase, "NCCL's allreduce", [&] {
      send = on_comm_device(x, c->ordinal());
      if (how->wire != x.dtype()) send = send.astype(how->wire);
      out = NDArray::empty(x.shape(), how->wire, send.device());
      c->all_reduce(send.data(), out.data(), static_cast<std::size_t>(x.size()) * how->parts, how->type, how->op);
    });
    if (how->wire != x.dtype()) out = out.astype(x.dtype());
    return out.device() == x.device() ? out : out.to(x.device());
  }
  return allreduce_through_host(w, fname, x, op, d);
}

NDArray broadcast(const NDArray& x, int root, const CallOptions& options) {
  constexpr std::string_view fname = "luda.dist.broadcast";
  refuse_recording(fname);
  const double seconds = timeout_seconds(options);
  const World& w = world();
  check_rank(w, fname, "root", root);
  if (!w.plugin) return x.copy();
  Entered e = enter(w);
  const Deadline d = deadline_after(seconds);
  settle_earlier_calls(w, fname, d);
  const std::vector<CallRecord> records = exchange_records(w, fname,
                                                           record_with_place(Call::Broadcast, x, Op::Sum, root), d);
  if (x.size() == 0) return NDArray::empty(x.shape(), x.dtype(), x.device());
  const Deadline phase = deadline_after(seconds);
  if (nccl::Comm* c = nccl_for(w, fname, x, records, "", phase)) {
    NDArray send, out;
    run_nccl(w, fname, phase, "NCCL's broadcast", [&] {
      out = NDArray::empty(x.shape(), x.dtype(), Device::cuda(c->ordinal()));
      send = w.info.rank == root ? on_comm_device(x, c->ordinal()) : out;
      c->broadcast(send.data(), out.data(), x.nbytes(), root);
    });
    return out.device() == x.device() ? out : out.to(x.device());
  }
  return broadcast_through_host(w, fname, x, root, d);
}

NDArray allgather(const NDArray& x, const CallOptions& options) {
  constexpr std::string_view fname = "luda.dist.allgather";
  refuse_recording(fname);
  const double seconds = timeout_seconds(options);
  const World& w = world();
  Shape shape = x.shape();
  shape.insert(shape.begin(), w.info.size);
  check_ndim(shape.size());
  if (!w.plugin) return x.copy().reshape(shape);
  Entered e = enter(w);
  const Deadline d = deadline_after(seconds);
  settle_earlier_calls(w, fname, d);
  const std::vector<CallRecord> records = exchange_records(w, fname, record_with_place(Call::Allgather, x), d);
  if (x.size() == 0) return NDArray::empty(shape, x.dtype(), x.device());
  const Deadline phase = deadline_after(seconds);
  if (nccl::Comm* c = nccl_for(w, fname, x, records, "", phase)) {
    NDArray send, out;
    run_nccl(w, fname, phase, "NCCL's allgather", [&] {
      send = on_comm_device(x, c->ordinal());
      out = NDArray::empty(shape, x.dtype(), send.device());
      c->all_gather(send.data(), out.data(), x.nbytes());
    });
    return out.device() == x.device() ? out : out.to(x.device());
  }
  return allgather_through_host(w, fname, x, shape, d);
}

}  // namespace luda::dist

// The messages of runtime/dist/dist.h: send and recv, matched by source, destination and
// tag. send puts a header (the array's dtype and shape, runtime/dist/call_record.h)
// before the data, so that recv can check them; the data goes through host memory
// (runtime/dist/host_transfers.h).
#include "runtime/dist/dist.h"

#include <memory>
#include <vector>

#include "runtime/dist/call_record.h"
#include "runtime/dist/host_transfers.h"
#include "runtime/dist/requests.h"
#include "runtime/dist/world.h"
#include "runtime/error.h"

namespace luda::dist {

using namespace detail;

namespace {

// A message's dtype and shape, sent ahead of its data so that recv can check them.
CallRecord message_header(const NDArray& x) { return record_of(Call::Send, &x); }

void check_peer(const World& w, std::string_view fname, std::string_view what, int peer) {
  check_rank(w, fname, what, peer);
  if (peer == w.info.rank)
    fail("{}: {} {} is this rank; a message to itself would wait for its own {}: use x:copy() instead", fname, what,
         peer, what == "dest" ? "recv" : "send");
}

// What a send and a recv check first: not inside a graph's recording, the peer and the
// tag; the world they use, and the call's timeout in `seconds`.
const World& point_to_point(std::string_view fname, const char* what, int peer, int tag, const CallOptions& options,
                            double* seconds) {
  refuse_recording(fname);
  *seconds = timeout_seconds(options);
  const World& w = world();
  check_peer(w, fname, what, peer);
  check_tag(w, fname, tag);
  return w;
}

}  // namespace

void send(const NDArray& x, int dest, int tag, const CallOptions& options) {
  constexpr std::string_view fname = "luda.dist.send";
  double seconds = 0;
  const World& w = point_to_point(fname, "dest", dest, tag, options, &seconds);
  Entered e = enter(w);
  const Deadline d = deadline_after(seconds);
  auto header = std::make_shared<CallRecord>(message_header(x));
  NDArray data = host_view(x);
  const Keep keep{header, data.buffer()};
  std::vector<luda_mpi_request*> requests;
  requests.push_back(start(w, fname, "MPI_Isend", [&](luda_mpi_request** req) {
    return w.plugin->isend(header.get(), static_cast<int>(sizeof(CallRecord)), dest, tag, req);
  }));
  start_sends(w, fname, data, dest, tag, requests);
  if (!wait_all(w, std::move(requests), d, message_part(fname, keep)))
    fail("{}: rank {} waited {:g} s for rank {} to receive (tag {}); rank {} must call luda.dist.recv(buf, {}, {}), "
         "or it is still busy: {}",
         fname, w.info.rank, d.seconds, dest, tag, dest, w.info.rank, tag, kLonger);
}

void recv(NDArray& buf, int source, int tag, const CallOptions& options) {
  constexpr std::string_view fname = "luda.dist.recv";
  double seconds = 0;
  const World& w = point_to_point(fname, "source", source, tag, options, &seconds);
  Entered e = enter(w);
  const Deadline d = deadline_after(seconds);
  auto header = std::make_shared<CallRecord>();
  luda_mpi_request* r = start(w, fname, "MPI_Irecv", [&](luda_mpi_request** req) {
    return w.plugin->irecv(header.get(), static_cast<int>(sizeof(CallRecord)), source, tag, req);
  });
  auto timed_out = [&] {
    fail("{}: rank {} waited {:g} s for a message from rank {} with tag {}; rank {} must call luda.dist.send(x, {}, "
         "{}), or it is still busy: {}",
         fname, w.info.rank, d.seconds, source, tag, source, w.info.rank, tag, kLonger);
  };
  if (!wait_all(w, {r}, d, message_part(fname, {header}), true)) timed_out();
  if (header->call != Call::Send || header->dtype >= kNumDTypes || header->ndim > kMaxNdim)
    fail("{}: rank {} received a message from rank {} that luda.dist.send did not make", fname, w.info.rank, source);

  const DType sent_dtype = static_cast<DType>(header->dtype);
  const Shape sent_shape(header->shape, header->shape + header->ndim);
  const bool same = sent_dtype == buf.dtype() && sent_shape == buf.shape();
  // The data goes straight into buf when it is a C-contiguous cpu array of the sent
  // dtype and shape; else into host memory first. A message that does not fit buf is
  // still received, so that the next one from this rank is read as a message.
  NDArray into = same && buf.device().is_cpu() && buf.is_c_contiguous()
                     ? buf
                     : host_buffer(sent_shape, sent_dtype, same ? buf.device() : Device::cpu());
  const Keep keep{into.buffer()};
  std::vector<luda_mpi_request*> requests;
  start_receives(w, fname, into, source, tag, requests);
  if (!wait_all(w, std::move(requests), d, message_part(fname, keep), true)) timed_out();
  if (!same)
    fail("{}: rank {} sent {} {} (tag {}), but buf is {} {}; recv's buf must have the dtype and shape of the array "
         "sent",
         fname, source, dtype_name(sent_dtype), shape_str(sent_shape), tag, dtype_name(buf.dtype()),
         shape_str(buf.shape()));
  if (into.buffer() != buf.buffer()) buf.assign(into);
}

}  // namespace luda::dist

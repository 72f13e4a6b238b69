#include "runtime/dist/host_transfers.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

namespace luda::dist::detail {

// The plugin's dtype codes are DType's (ORDER DTYPE), and its op codes Op's: the codes
// go to the plugin's iallreduce as they are.
static_assert(LUDA_MPI_BOOL == static_cast<int>(DType::Bool) && LUDA_MPI_INT8 == static_cast<int>(DType::Int8) &&
              LUDA_MPI_INT16 == static_cast<int>(DType::Int16) && LUDA_MPI_INT32 == static_cast<int>(DType::Int32) &&
              LUDA_MPI_INT64 == static_cast<int>(DType::Int64) && LUDA_MPI_UINT8 == static_cast<int>(DType::UInt8) &&
              LUDA_MPI_UINT16 == static_cast<int>(DType::UInt16) &&
              LUDA_MPI_UINT32 == static_cast<int>(DType::UInt32) &&
              LUDA_MPI_UINT64 == static_cast<int>(DType::UInt64) &&
              LUDA_MPI_FLOAT32 == static_cast<int>(DType::Float32) &&
              LUDA_MPI_FLOAT64 == static_cast<int>(DType::Float64) &&
              LUDA_MPI_COMPLEX64 == static_cast<int>(DType::Complex64) &&
              LUDA_MPI_COMPLEX128 == static_cast<int>(DType::Complex128));
static_assert(LUDA_MPI_SUM == static_cast<int>(Op::Sum) && LUDA_MPI_PROD == static_cast<int>(Op::Prod) &&
              LUDA_MPI_MAX == static_cast<int>(Op::Max) && LUDA_MPI_MIN == static_cast<int>(Op::Min));

namespace {

std::atomic<std::size_t> g_piece_bytes{std::size_t{1} << 30};

// A host result as a new array on `device`.
NDArray on_device(const NDArray& host, Device device) { return device.is_cpu() ? host : host.to(device); }

std::byte* bytes_of(const NDArray& a) { return static_cast<std::byte*>(a.data()); }

}  // namespace

std::size_t piece_bytes() { return g_piece_bytes.load(); }

void set_piece_bytes(std::size_t bytes) { g_piece_bytes = std::clamp<std::size_t>(bytes, 16, std::size_t{1} << 30); }

void note_through_host(const World& w, const std::string& why) {
  static std::set<std::string> said;
  if (!said.insert(why).second) return;
  std::fprintf(stderr,
               "luda.dist (rank %d): cuda arrays go through pinned host memory (copied to the host, moved by MPI, "
               "copied back): %s\n",
               w.info.rank, why.c_str());
}

NDArray host_view(const NDArray& x) {
  if (x.device().is_cpu() && x.is_c_contiguous()) return x;
  if (x.device().is_cpu()) return x.copy(Device::cpu());
  NDArray staged = NDArray::view(Buffer::allocate_pinned(x.nbytes()), x.dtype(), x.shape(), c_strides(x.shape()));
  staged.assign(x);
  return staged;
}

NDArray host_buffer(const Shape& shape, DType dtype, Device target) {
  if (target.is_cpu()) return NDArray::empty(shape, dtype, Device::cpu());
  std::size_t n = itemsize(dtype);
  for (std::int64_t e : shape) n *= static_cast<std::size_t>(e);
  return NDArray::view(Buffer::allocate_pinned(n), dtype, shape, c_strides(shape));
}

NDArray allreduce_through_host(const World& w, std::string_view fname, const NDArray& x, Op op, const Deadline& d) {
  // float16 and bfloat16 have no MPI type: combined as float32, rounded back after.
  const bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  const DType wire = half ? DType::Float32 : x.dtype();
  NDArray send = host_view(x);
  if (half) send = send.astype(wire);
  if (wire == DType::Bool) {  // MPI's logical ops read C bools: 0 or 1
    if (send.buffer() == x.buffer()) send = send.copy();
    auto* b = reinterpret_cast<unsigned char*>(send.data());
    for (std::int64_t i = 0; i < send.size(); ++i) b[i] = b[i] != 0;
  }
  NDArray out = NDArray::empty(x.shape(), wire, Device::cpu());
  const std::size_t item = itemsize(wire);
  const auto n = static_cast<std::size_t>(x.size());
  const std::size_t per = std::max<std::size_t>(1, piece_bytes() / item);
  const Keep keep{send.buffer(), out.buffer()};
  for (std::size_t at = 0; at < n; at += per) {
    const int count = static_cast<int>(std::min(per, n - at));
    luda_mpi_request* r = start(w, fname, "MPI_Iallreduce", [&](luda_mpi_request** req) {
      return w.plugin->iallreduce(bytes_of(send) + at * item, bytes_of(out) + at * item, count, static_cast<int>(wire),
                                  static_cast<int>(op), req);
    });
    if (!wait_all(w, {r}, d, data_part(fname, keep))) data_timeout(w, fname, d);
  }
  if (half) out = out.astype(x.dtype());
  return on_device(out, x.device());
}

NDArray broadcast_through_host(const World& w, std::string_view fname, const NDArray& x, int root, const Deadline& d) {
  NDArray data = w.info.rank == root ? (x.device().is_cuda() ? host_view(x) : x.copy(Device::cpu()))
                                     : NDArray::empty(x.shape(), x.dtype(), Device::cpu());
  const std::size_t total = x.nbytes();
  const Keep keep{data.buffer()};
  for (std::size_t at = 0; at < total; at += piece_bytes()) {
    const int bytes = static_cast<int>(std::min(piece_bytes(), total - at));
    luda_mpi_request* r = start(w, fname, "MPI_Ibcast", [&](luda_mpi_request** req) {
      return w.plugin->ibcast(bytes_of(data) + at, bytes, root, req);
    });
    if (!wait_all(w, {r}, d, data_part(fname, keep))) data_timeout(w, fname, d);
  }
  return on_device(data, x.device());
}

NDArray allgather_through_host(const World& w, std::string_view fname, const NDArray& x, const Shape& shape,
                               const Deadline& d) {
  NDArray send = host_view(x);
  NDArray out = NDArray::empty(shape, x.dtype(), Device::cpu());
  const std::size_t total = x.nbytes();
  const std::size_t ranks = static_cast<std::size_t>(w.info.size);
  if (total <= piece_bytes()) {
    luda_mpi_request* r = start(w, fname, "MPI_Iallgather", [&](luda_mpi_request** req) {
      return w.plugin->iallgather(bytes_of(send), static_cast<int>(total), bytes_of(out), req);
    });
    if (!wait_all(w, {r}, d, data_part(fname, {send.buffer(), out.buffer()}))) data_timeout(w, fname, d);
  } else {
    // Piece by piece: each rank's bytes [at, at + n) gathered, then put in their places.
    const std::size_t piece = piece_bytes();
    auto gathered = std::make_shared<std::vector<std::byte>>(ranks * piece);
    const Keep keep{send.buffer(), gathered};
    for (std::size_t at = 0; at < total; at += piece) {
      const std::size_t n = std::min(piece, total - at);
      luda_mpi_request* r = start(w, fname, "MPI_Iallgather", [&](luda_mpi_request** req) {
        return w.plugin->iallgather(bytes_of(send) + at, static_cast<int>(n), gathered->data(), req);
      });
      if (!wait_all(w, {r}, d, data_part(fname, keep))) data_timeout(w, fname, d);
      for (std::size_t k = 0; k < ranks; ++k) std::memcpy(bytes_of(out) + k * total + at, gathered->data() + k * n, n);
    }
  }
  return on_device(out, x.device());
}

void start_sends(const World& w, std::string_view fname, const NDArray& data, int dest, int tag,
                 std::vector<luda_mpi_request*>& requests) {
  const std::size_t total = data.nbytes();
  for (std::size_t at = 0; at < total; at += piece_bytes()) {
    const int bytes = static_cast<int>(std::min(piece_bytes(), total - at));
    requests.push_back(start(w, fname, "MPI_Isend", [&](luda_mpi_request** req) {
      return w.plugin->isend(bytes_of(data) + at, bytes, dest, tag, req);
    }));
  }
}

void start_receives(const World& w, std::string_view fname, const NDArray& into, int source, int tag,
                    std::vector<luda_mpi_request*>& requests) {
  const std::size_t total = into.nbytes();
  for (std::size_t at = 0; at < total; at += piece_bytes()) {
    const int bytes = static_cast<int>(std::min(piece_bytes(), total - at));
    requests.push_back(start(w, fname, "MPI_Irecv", [&](luda_mpi_request** req) {
      return w.plugin->irecv(bytes_of(into) + at, bytes, source, tag, req);
    }));
  }
}

}  // namespace luda::dist::detail

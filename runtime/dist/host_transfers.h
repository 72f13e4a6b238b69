// Arrays moved by MPI through host memory (runtime/dist/dist.h): MPI is never given a
// device pointer, so a cuda array is copied to pinned host memory, moved, and copied
// back. MPI counts are int: a transfer larger than piece_bytes() goes in pieces, each
// its own nonblocking operation waited for under the call's deadline.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dist/dist.h"
#include "runtime/dist/requests.h"
#include "runtime/dist/world.h"
#include "runtime/ndarray.h"

namespace luda::dist::detail {

// Largest bytes given to one MPI call (MPI counts are int); larger transfers go in pieces.
// Tests set it small to exercise the pieces.
std::size_t piece_bytes();
void set_piece_bytes(std::size_t bytes);

// Says once per reason, on this rank's stderr, that cuda arrays go through host memory.
// Under g_mutex.
void note_through_host(const World& w, const std::string& why);

// x's elements as a C-contiguous array in host memory: x itself when it is one already; a
// cuda array's in pinned memory, which copies faster.
NDArray host_view(const NDArray& x);

// A zero-filled C-contiguous host array for `into` to receive a cuda array's data: pinned.
NDArray host_buffer(const Shape& shape, DType dtype, Device target);

// The data phases of the collectives (after every rank's record agreed), through host
// memory: each result is a new array on x's device. The data must come by `d`. Under
// g_mutex.
NDArray allreduce_through_host(const World& w, std::string_view fname, const NDArray& x, Op op, const Deadline& d);
NDArray broadcast_through_host(const World& w, std::string_view fname, const NDArray& x, int root, const Deadline& d);
// `shape`: the result's, (size, *x.shape).
NDArray allgather_through_host(const World& w, std::string_view fname, const NDArray& x, const Shape& shape,
                               const Deadline& d);

// Starts sending `data` (C-contiguous, in host memory) to `dest`, or receiving into
// `into` from `source`, in pieces; each piece's request is appended to `requests`.
void start_sends(const World& w, std::string_view fname, const NDArray& data, int dest, int tag,
                 std::vector<luda_mpi_request*>& requests);
void start_receives(const World& w, std::string_view fname, const NDArray& into, int source, int tag,
                    std::vector<luda_mpi_request*>& requests);

}  // namespace luda::dist::detail

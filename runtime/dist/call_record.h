// What each rank says of a luda.dist call before its data moves (runtime/dist/dist.h):
// the call, the array's dtype and shape, the op or root, in a fixed-size record that
// every rank's fits one allgather. The ranks' records are compared, so that ranks that
// disagree get an error naming each rank's part instead of MPI truncating or mixing data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "runtime/dist/dist.h"
#include "runtime/ndarray.h"

namespace luda::dist::detail {

// Which call a record is of: a collective, or the header that send puts before its data.
enum class Call : std::uint8_t { Barrier, Allreduce, Broadcast, Allgather, Send };
std::string_view call_name(Call call);  // "barrier", ...

// What one rank contributes before a collective: fixed size, so that every rank's fits
// one allgather.
struct CallRecord {
  Call call = Call::Barrier;
  std::uint8_t dtype = 0;  // DType's code (allreduce, broadcast, allgather)
  std::uint8_t op = 0;     // Op's code (allreduce)
  std::uint8_t ndim = 0;
  // 1 when this rank's array is a cuda array and this rank can move it with NCCL; the
  // ranks may differ (the call then moves every rank's data through host memory).
  std::uint8_t nccl = 0;
  std::int32_t root = 0;  // broadcast
  std::int64_t shape[kMaxNdim] = {};
};
CallRecord record_of(Call call, const NDArray* x, Op op = Op::Sum, int root = 0);

// The error for records that disagree, from the view of the rank that called `fname`
// ("luda.dist.allreduce"), or "" when every rank's record agrees with rank 0's. Ranks
// that made another call are named first, then another op or root, then another dtype or
// shape; each part lists the ranks that gave it.
std::string mismatch_message(std::string_view fname, std::span<const CallRecord> records);

// "rank 1", "ranks 0 and 2", "ranks 0, 2 and 5", "ranks 0 to 4 and 7".
std::string rank_list(std::span<const int> ranks);

}  // namespace luda::dist::detail

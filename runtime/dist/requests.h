// MPI's nonblocking requests as every luda.dist call waits for them (runtime/dist/dist.h):
// polled until the call's deadline, so that a call some ranks never make ends in an
// error rather than a hang. A request left unfinished at its deadline or an interrupt is
// abandoned with what MPI may still read or write for it, and tested again at later
// calls until it completes; a collective first settles the abandoned ones of earlier
// collectives, so that the ranks' calls line up again. One lock serializes every call.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "runtime/dist/call_record.h"
#include "runtime/dist/mpi_plugin.h"
#include "runtime/dist/open_plugin.h"
#include "runtime/dist/world.h"
#include "runtime/error.h"

namespace luda::dist::detail {

using Clock = std::chrono::steady_clock;

extern std::mutex g_mutex;  // held through every call that uses MPI

// A wait's deadline, and its length for messages.
struct Deadline {
  Clock::time_point at;
  double seconds;
};
Deadline deadline_after(double seconds);

// What MPI may still read or write for a request: kept alive until it completes.
using Keep = std::vector<std::shared_ptr<const void>>;

// What a request is part of.
enum class Part : std::uint8_t {
  Records,  // a collective's record exchange
  Data,     // a collective's data
  Message,  // a send or recv
};

// A request whose wait ended at its deadline or an interrupt, what MPI may still read or
// write for it, and what it was part of: kept until a later test finds it complete.
struct Abandoned {
  luda_mpi_request* request = nullptr;
  Keep keep;
  Part part = Part::Message;
  std::string_view fname;                            // the call, a constant ("luda.dist.allreduce")
  std::shared_ptr<std::vector<CallRecord>> records;  // Part::Records: every rank's, once complete
};
Abandoned data_part(std::string_view fname, Keep keep);
Abandoned message_part(std::string_view fname, Keep keep);

// Tests the abandoned requests once, dropping those that have completed, and returns how
// many are left. A record exchange that completes in agreement, for a call with data,
// puts this rank out of step. Under g_mutex.
std::size_t sweep_abandoned(const luda_mpi_plugin& plugin);

// Starts one operation; Error naming the call when MPI refuses it.
template <class Start>
luda_mpi_request* start(const World& w, std::string_view fname, const char* mpi_call, Start begin) {
  luda_mpi_request* r = nullptr;
  if (int rc = begin(&r); rc != 0) fail("{}: {} failed: {}", fname, mpi_call, error_text(*w.plugin, rc));
  return r;
}

// Polls `requests` until each has completed (true; an MPI error is raised) or the deadline
// passes (false). The ones left unfinished by the deadline or an interrupt (Interrupted)
// are abandoned as `as` says (receives cancelled first when `cancel`). Under g_mutex.
bool wait_all(const World& w, std::vector<luda_mpi_request*> requests, const Deadline& d, const Abandoned& as,
              bool cancel = false);

// What a timeout's error advises.
inline constexpr std::string_view kLonger = "give the call a longer {timeout = s}, or set LUDA_DIST_TIMEOUT";

// The error for a collective whose data did not come by the deadline.
[[noreturn]] void data_timeout(const World& w, std::string_view fname, const Deadline& d);

// The call's start: the world, with this thread holding the lock and abandoned requests
// swept.
struct Entered {
  const World& w;
  std::unique_lock<std::mutex> lock;
};
Entered enter(const World& w);

// Before a collective: this rank's earlier collectives that timed out, waited for (until
// this call's deadline) so that the next exchange is the other ranks' next one too. Errors
// when they still wait, or when the other ranks made such a call late and went on to its
// data, which this rank no longer sends: its calls can then never line up with theirs.
void settle_earlier_calls(const World& w, std::string_view fname, const Deadline& d);

}  // namespace luda::dist::detail

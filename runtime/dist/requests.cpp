#include "runtime/dist/requests.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "runtime/interrupt.h"

namespace luda::dist::detail {

std::mutex g_mutex;

namespace {

std::vector<Abandoned> g_abandoned;  // under g_mutex
// The call after whose timeout this rank's collectives can no longer line up with the
// other ranks' (they made it late and wait for its data); empty while they can. Under g_mutex.
std::string_view g_out_of_step;

// Whether every rank's record agrees and the call moves data after it: then the ranks
// that completed the exchange went on to the call's data.
bool has_data_phase(const std::vector<CallRecord>& records) {
  const CallRecord& r = records[0];
  if (r.call == Call::Barrier || !mismatch_message("", records).empty()) return false;
  std::int64_t n = 1;
  for (int k = 0; k < r.ndim; ++k) n *= r.shape[k];
  return n > 0;
}

// Cancels the receives among `requests` (never matched, they would take a later recv's
// message) and gives the cancellations a moment to complete; what is left is abandoned as
// `as`. Under g_mutex.
void cancel_receives(const luda_mpi_plugin& plugin, std::vector<luda_mpi_request*>& requests) {
  for (luda_mpi_request* r : requests)
    if (r) plugin.cancel(r);
  const Clock::time_point until = Clock::now() + std::chrono::seconds(1);
  for (bool pending = true; pending && Clock::now() < until;) {
    pending = false;
    for (luda_mpi_request*& r : requests) {
      if (!r) continue;
      int done = 0;
      plugin.test(r, &done);
      if (done) r = nullptr;
      else pending = true;
    }
    if (pending) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

Deadline deadline_after(double seconds) {
  // Past about 30 years the wait has no deadline that a job could reach.
  double capped = std::min(seconds, 1e9);
  return {Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped)), seconds};
}

std::size_t sweep_abandoned(const luda_mpi_plugin& plugin) {
  std::erase_if(g_abandoned, [&](Abandoned& a) {
    int done = 0;
    int rc = plugin.test(a.request, &done);
    if (done && rc == 0 && a.part == Part::Records && g_out_of_step.empty() && has_data_phase(*a.records))
      g_out_of_step = a.fname;
    return done != 0;
  });
  return g_abandoned.size();
}

bool wait_all(const World& w, std::vector<luda_mpi_request*> requests, const Deadline& d, const Abandoned& as,
              bool cancel) {
  auto abandon = [&] {
    if (cancel) cancel_receives(*w.plugin, requests);
    for (luda_mpi_request* r : requests) {
      if (!r) continue;
      Abandoned a = as;
      a.request = r;
      g_abandoned.push_back(std::move(a));
    }
  };
  luda::detail::InterruptScope scope;
  const Clock::time_point start_time = Clock::now();
  std::chrono::microseconds nap{20};
  int error = 0;
  for (;;) {
    bool pending = false;
    for (luda_mpi_request*& r : requests) {
      if (!r) continue;
      int done = 0;
      int rc = w.plugin->test(r, &done);
      if (done) {
        r = nullptr;
        if (rc != 0 && error == 0) error = rc;
      } else {
        pending = true;
      }
    }
    if (error != 0) {
      abandon();
      fail("{}: MPI failed on rank {}: {}", as.fname, w.info.rank, error_text(*w.plugin, error));
    }
    if (!pending) return true;
    if (luda::detail::g_interrupt) {
      abandon();
      scope.consume();
      throw Interrupted(fmt::format(
          "{}: interrupted while rank {} waited for {}; their part of the call may still be pending, so later "
          "luda.dist calls may not match",
          as.fname, w.info.rank, others_text(w)));
    }
    const Clock::time_point now = Clock::now();
    if (now >= d.at) {
      abandon();
      return false;
    }
    // MPI moves a large message only while it is tested (its progress is made in the calls
    // of the waiting rank): data and messages are polled without pause, as MPI's own
    // blocking calls spin. A record exchange waits for the other ranks to arrive, which
    // may take long: its polls pause, longer and longer, up to a millisecond.
    if (as.part != Part::Records || now - start_time < std::chrono::microseconds(200)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::min<Clock::duration>(nap, d.at - now));
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }
}

Abandoned data_part(std::string_view fname, Keep keep) {
  return {nullptr, std::move(keep), Part::Data, fname, nullptr};
}
Abandoned message_part(std::string_view fname, Keep keep) {
  return {nullptr, std::move(keep), Part::Message, fname, nullptr};
}

[[noreturn]] void data_timeout(const World& w, std::string_view fname, const Deadline& d) {
  fail("{}: rank {} waited {:g} s for the data of a call that every rank had made; a rank may have stopped or "
       "failed, or this rank made the call after the other ranks' wait for it had timed out: {}",
       fname, w.info.rank, d.seconds, kLonger);
}

Entered enter(const World& w) {
  std::unique_lock lock(g_mutex);
  sweep_abandoned(*w.plugin);
  return {w, std::move(lock)};
}

void settle_earlier_calls(const World& w, std::string_view fname, const Deadline& d) {
  auto stale = [] {
    auto it = std::find_if(g_abandoned.begin(), g_abandoned.end(),
                           [](const Abandoned& a) { return a.part != Part::Message; });
    return it == g_abandoned.end() ? std::string_view() : it->fname;
  };
  luda::detail::InterruptScope scope;
  std::chrono::microseconds nap{20};
  while (g_out_of_step.empty() && !stale().empty() && Clock::now() < d.at) {
    if (luda::detail::g_interrupt) {
      scope.consume();
      throw Interrupted(fmt::format("{}: interrupted while rank {} waited for {} to reach its earlier {}, which "
                                    "timed out here",
                                    fname, w.info.rank, others_text(w), stale()));
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(nap, d.at - Clock::now()));
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
    sweep_abandoned(*w.plugin);
  }
  if (!g_out_of_step.empty())
    fail("{}: rank {} can make no more collective calls: its {} timed out, and then the other ranks made that call, "
         "so they wait for its data, which this rank no longer sends; the ranks' calls cannot line up again. End the "
         "job, and give that call a longer {{timeout = s}} (or LUDA_DIST_TIMEOUT)",
         fname, w.info.rank, g_out_of_step);
  if (std::string_view earlier = stale(); !earlier.empty())
    fail("{}: rank {}'s earlier {} timed out and {} have still not made it (waited {:g} s more); until they do, this "
         "rank's calls cannot line up with theirs",
         fname, w.info.rank, earlier, others_text(w), d.seconds);
}

}  // namespace luda::dist::detail

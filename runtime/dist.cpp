#include "runtime/dist.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "runtime/error.h"
#include "runtime/graph/recording.h"
#include "runtime/interrupt.h"
#include "runtime/nccl.h"
#include "runtime/shared_library.h"

namespace luda::dist {

// The plugin's dtype codes are DType's (ORDER DTYPE).
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

std::optional<Op> parse_op(std::string_view name) {
  if (name == "sum") return Op::Sum;
  if (name == "prod") return Op::Prod;
  if (name == "max") return Op::Max;
  if (name == "min") return Op::Min;
  return std::nullopt;
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::Sum: return "sum";
    case Op::Prod: return "prod";
    case Op::Max: return "max";
    case Op::Min: return "min";
  }
  return "?";
}

namespace detail {

std::string_view call_name(Call call) {
  switch (call) {
    case Call::Barrier: return "barrier";
    case Call::Allreduce: return "allreduce";
    case Call::Broadcast: return "broadcast";
    case Call::Allgather: return "allgather";
    case Call::Send: return "send";
  }
  return "?";
}

CallRecord record_of(Call call, const NDArray* x, Op op, int root) {
  CallRecord r;
  std::memset(static_cast<void*>(&r), 0, sizeof r);  // padding too: the record travels as bytes
  r.call = call;
  r.op = static_cast<std::uint8_t>(op);
  r.root = root;
  if (x) {
    r.dtype = static_cast<std::uint8_t>(x->dtype());
    r.ndim = static_cast<std::uint8_t>(x->ndim());
    std::copy(x->shape().begin(), x->shape().end(), r.shape);
  }
  return r;
}

std::string rank_list(std::span<const int> ranks) {
  std::vector<int> sorted(ranks.begin(), ranks.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> items;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (j - i >= 2) {
      items.push_back(fmt::format("{} to {}", sorted[i], sorted[j]));
    } else {
      for (std::size_t k = i; k <= j; ++k) items.push_back(std::to_string(sorted[k]));
    }
    i = j + 1;
  }
  std::string out = sorted.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

namespace {

std::string array_text(const CallRecord& r) {
  Shape shape(r.shape, r.shape + std::min<int>(r.ndim, kMaxNdim));
  std::string_view dtype = r.dtype < kNumDTypes ? dtype_name(static_cast<DType>(r.dtype)) : "?";
  return fmt::format("{} {}", dtype, shape_str(shape));
}

// The ranks grouped by `key` of their record, groups in order of their first rank, each
// written "<ranks> <verb> <text>"; past five groups the rest are named together.
template <class Key>
std::string groups_text(std::span<const CallRecord> records, Key key, std::string_view verb,
                        std::string_view rest) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::string text = key(records[i]);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == text; });
    if (it == groups.end()) groups.push_back({std::move(text), {static_cast<int>(i)}});
    else it->second.push_back(static_cast<int>(i));
  }
  constexpr std::size_t kShown = 5;
  std::string out;
  std::vector<int> others;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g >= kShown && groups.size() > kShown + 1) {
      others.insert(others.end(), groups[g].second.begin(), groups[g].second.end());
      continue;
    }
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {} {}", rank_list(groups[g].second), verb, groups[g].first);
  }
  if (!others.empty()) out += fmt::format(", {} {}", rank_list(others), rest);
  return out;
}

template <class Key>
bool all_agree(std::span<const CallRecord> records, Key key) {
  for (const CallRecord& r : records)
    if (key(r) != key(records[0])) return false;
  return true;
}

}  // namespace

std::string mismatch_message(std::string_view fname, std::span<const CallRecord> records) {
  if (records.empty()) return "";
  auto call = [](const CallRecord& r) { return fmt::format("luda.dist.{}", call_name(r.call)); };
  if (!all_agree(records, call))
    return fmt::format("{}: the ranks made different calls: {}; every rank must make the same luda.dist calls in the "
                       "same order",
                       fname, groups_text(records, call, "called", "made other calls"));
  const Call c = records[0].call;
  if (c == Call::Barrier) return "";
  if (c == Call::Allreduce) {
    auto op = [](const CallRecord& r) {
      return r.op <= static_cast<int>(Op::Min) ? std::string(op_name(static_cast<Op>(r.op))) : "?";
    };
    if (!all_agree(records, op))
      return fmt::format("{}: the ranks asked for different operations: {}; every rank must pass the same op", fname,
                         groups_text(records, op, "asked for", "asked for others"));
  }
  if (c == Call::Broadcast) {
    auto root = [](const CallRecord& r) { return std::to_string(r.root); };
    if (!all_agree(records, root))
      return fmt::format("{}: the ranks named different roots: {}; every rank must pass the same root", fname,
                         groups_text(records, root, "named root", "named other roots"));
  }
  if (!all_agree(records, array_text))
    return fmt::format("{}: the ranks' arrays differ: {}; every rank must pass an array of the same dtype and shape",
                       fname, groups_text(records, array_text, "gave", "gave others"));
  return "";
}

std::optional<std::string> launcher_variable() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* v = std::getenv(name); v && *v) return fmt::format("{}={}", name, v);
  return std::nullopt;
}

std::vector<std::string> plugin_candidates(const std::string& self_dir) {
  if (const char* v = std::getenv("LUDA_MPI_PLUGIN"); v && *v) return {v};
  std::vector<std::string> out;
  auto add = [&](const std::filesystem::path& p) {
    std::string s = p.lexically_normal().string();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  };
  if (!self_dir.empty()) {
    const std::filesystem::path dir(self_dir);
    add(dir / LUDA_MPI_PLUGIN_FILE);
    // An installed luda: the `luda` command in bin/, luda.so in the Lua module folder,
    // and the plugin in lib/ (cmake/install.cmake gives these paths).
#ifdef LUDA_BIN_TO_LIBDIR
    add(dir / LUDA_BIN_TO_LIBDIR / LUDA_MPI_PLUGIN_FILE);
#endif
#ifdef LUDA_CMOD_TO_LIBDIR
    add(dir / LUDA_CMOD_TO_LIBDIR / LUDA_MPI_PLUGIN_FILE);
#endif
  }
  out.push_back(LUDA_MPI_PLUGIN_FILE);
  return out;
}

const luda_mpi_plugin& open_plugin(const std::vector<std::string>& candidates, std::string_view launcher) {
  static const char* const kSymbols[] = {LUDA_MPI_PLUGIN_ENTRY};
  SharedLibrary lib;
  try {
    lib = open_library(LUDA_MPI_PLUGIN_FILE, candidates, kSymbols,
                       "Install MPI's development files (Debian: apt-get install openmpi-bin libopenmpi-dev, as "
                       "scripts/setup does) and build luda again: CMake builds " LUDA_MPI_PLUGIN_FILE
                       " beside libluda when it finds MPI, and `cmake --install` installs it; or set LUDA_MPI_PLUGIN "
                       "to the plugin's path.");
  } catch (const Error& e) {
    fail("luda.dist: this process runs under an MPI launcher ({}) and needs luda's MPI plugin: {}", launcher,
         e.what());
  }
  auto entry = reinterpret_cast<luda_mpi_plugin_entry>(lib.symbols[0]);
  const luda_mpi_plugin* p = entry();
  if (!p || p->version != LUDA_MPI_PLUGIN_VERSION || p->size < sizeof(luda_mpi_plugin)) {
    std::string path = lib.path;
    unsigned version = p ? p->version : 0;
    close_library(lib);
    fail("luda.dist: {} is another luda's MPI plugin (interface version {}, this luda needs {}); use the plugin "
         "built with this luda (beside its libluda), or point LUDA_MPI_PLUGIN at it",
         path, version, LUDA_MPI_PLUGIN_VERSION);
  }
  return *p;  // the library stays loaded for the process
}

}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;
using detail::Call;
using detail::CallRecord;

std::atomic<std::size_t> g_piece_bytes{std::size_t{1} << 30};

// The process's part of the job, made at the first call.
struct World {
  const luda_mpi_plugin* plugin = nullptr;  // null without a launcher
  luda_mpi_info info{};
};

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
  std::string_view fname;  // the call, a constant ("luda.dist.allreduce")
  std::shared_ptr<std::vector<CallRecord>> records;  // Part::Records: every rank's, once complete
};

std::mutex g_mutex;                  // held through every call that uses MPI
std::vector<Abandoned> g_abandoned;  // under g_mutex
// The call after whose timeout this rank's collectives can no longer line up with the
// other ranks' (they made it late and wait for its data); empty while they can. Under g_mutex.
std::string_view g_out_of_step;
const luda_mpi_plugin* g_plugin = nullptr;
int g_rank = 0;
std::atomic<bool> g_exiting_with_error{false};

std::string error_text(const luda_mpi_plugin& p, int code) {
  char buffer[512];
  p.error_string(code, buffer, sizeof buffer);
  return buffer;
}

// Whether every rank's record agrees and the call moves data after it: then the ranks
// that completed the exchange went on to the call's data.
bool has_data_phase(const std::vector<CallRecord>& records) {
  const CallRecord& r = records[0];
  if (r.call == Call::Barrier || !detail::mismatch_message("", records).empty()) return false;
  std::int64_t n = 1;
  for (int k = 0; k < r.ndim; ++k) n *= r.shape[k];
  return n > 0;
}

// Tests the abandoned requests once, dropping those that have completed. A record
// exchange that completes in agreement, for a call with data, puts this rank out of step.
// Under g_mutex.
void sweep_abandoned() {
  std::erase_if(g_abandoned, [](Abandoned& a) {
    int done = 0;
    int rc = g_plugin->test(a.request, &done);
    if (done && rc == 0 && a.part == Part::Records && g_out_of_step.empty() && has_data_phase(*a.records))
      g_out_of_step = a.fname;
    return done != 0;
  });
}

// MPI_Finalize at exit, where init called MPI_Init_thread: skipped when the process ends
// with an error (exiting_with_error), so that mpirun ends the job at once, and when an
// abandoned request is still pending.
void finalize_at_exit() {
  if (g_exiting_with_error) return;
  std::unique_lock lock(g_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is inside a call
  sweep_abandoned();
  if (!g_abandoned.empty()) {
    std::fprintf(stderr,
                 "luda.dist: rank %d does not call MPI_Finalize: %zu MPI operation(s) of calls that timed out are "
                 "still pending (the other ranks never made their part of them); mpirun reports the job as failed\n",
                 g_rank, g_abandoned.size());
    return;
  }
  g_plugin->finalize();
}

// The folder of the file holding this code: libluda.so, luda.so, or the `luda` command.
std::string self_dir() {
  Dl_info info;
  std::filesystem::path file;
  if (dladdr(reinterpret_cast<void*>(&self_dir), &info) && info.dli_fname && *info.dli_fname)
    file = info.dli_fname;
  std::error_code ec;
  if (file.empty() || !std::filesystem::exists(file, ec)) file = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (file.empty()) return "";
  std::filesystem::path canonical = std::filesystem::weakly_canonical(file, ec);
  return (ec ? file : canonical).parent_path().string();
}

World make_world() {
  World w;
  w.info.rank = 0;
  w.info.size = 1;
  w.info.tag_ub = 32767;
  std::optional<std::string> launcher = detail::launcher_variable();
  if (!launcher) return w;
  const luda_mpi_plugin& p = detail::open_plugin(detail::plugin_candidates(self_dir()), *launcher);
  if (int rc = p.init(&w.info); rc != 0)
    fail("luda.dist: MPI cannot be used under the launcher ({}): {}", *launcher, error_text(p, rc));
  w.plugin = &p;
  g_plugin = &p;
  g_rank = w.info.rank;
  if (w.info.initialized_here) std::atexit(finalize_at_exit);
  return w;
}

const World& world() { return load_once(&make_world); }

void refuse_recording(std::string_view fname) {
  if (GraphRecording::active())
    fail("{}: a luda.dist call cannot be recorded in a graph (it moves data between processes when it is called); "
         "call it outside the recorded function",
         fname);
}

// "the other rank" / "the other 2 ranks": the job's ranks but this one, for messages.
std::string others_text(const World& w) {
  int n = w.info.size - 1;
  return n == 1 ? "the other rank" : fmt::format("the other {} ranks", n);
}

void check_rank(const World& w, std::string_view fname, std::string_view what, int r) {
  if (r < 0 || r >= w.info.size)
    fail("{}: {} {} is out of range: the job has {} (ranks count from 0)", fname, what, r,
         w.info.size == 1 ? std::string("1 rank, 0 (run the script with mpirun -n N for more)")
                          : fmt::format("{} ranks, 0 to {}", w.info.size, w.info.size - 1));
}

void check_tag(const World& w, std::string_view fname, int tag) {
  if (tag < 0 || tag > w.info.tag_ub)
    fail("{}: tag {} is out of range: tags are 0 to {} (MPI's limit here)", fname, tag, w.info.tag_ub);
}

// A wait's deadline, and its length for messages.
struct Deadline {
  Clock::time_point at;
  double seconds;
};

Deadline deadline_after(double seconds) {
  // Past about 30 years the wait has no deadline that a job could reach.
  double capped = std::min(seconds, 1e9);
  return {Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped)), seconds};
}

// Says once per reason, on this rank's stderr, that cuda arrays go through host memory.
// Under g_mutex.
void note_through_host(const World& w, const std::string& why) {
  static std::set<std::string> said;
  if (!said.insert(why).second) return;
  std::fprintf(stderr,
               "luda.dist (rank %d): cuda arrays go through pinned host memory (copied to the host, moved by MPI, "
               "copied back): %s\n",
               w.info.rank, why.c_str());
}

// x's elements as a C-contiguous array in host memory: x itself when it is one already; a
// cuda array's in pinned memory, which copies faster.
NDArray host_view(const NDArray& x) {
  if (x.device().is_cpu() && x.is_c_contiguous()) return x;
  if (x.device().is_cpu()) return x.copy(Device::cpu());
  NDArray staged = NDArray::view(Buffer::allocate_pinned(x.nbytes()), x.dtype(), x.shape(), c_strides(x.shape()));
  staged.assign(x);
  return staged;
}

// A host result as a new array on `device`.
NDArray on_device(const NDArray& host, Device device) { return device.is_cpu() ? host : host.to(device); }

// A zero-filled C-contiguous host array for `into` to receive a cuda array's data: pinned.
NDArray host_buffer(const Shape& shape, DType dtype, Device target) {
  if (target.is_cpu()) return NDArray::empty(shape, dtype, Device::cpu());
  std::size_t n = itemsize(dtype);
  for (std::int64_t e : shape) n *= static_cast<std::size_t>(e);
  return NDArray::view(Buffer::allocate_pinned(n), dtype, shape, c_strides(shape));
}

std::byte* bytes_of(const NDArray& a) { return static_cast<std::byte*>(a.data()); }

// Starts one operation; Error naming the call when MPI refuses it.
template <class Start>
luda_mpi_request* start(const World& w, std::string_view fname, const char* mpi_call, Start begin) {
  luda_mpi_request* r = nullptr;
  if (int rc = begin(&r); rc != 0) fail("{}: {} failed: {}", fname, mpi_call, error_text(*w.plugin, rc));
  return r;
}

// Cancels the receives among `requests` (never matched, they would take a later recv's
// message) and gives the cancellations a moment to complete; what is left is abandoned as
// `as`. Under g_mutex.
void cancel_receives(std::vector<luda_mpi_request*>& requests) {
  for (luda_mpi_request* r : requests)
    if (r) g_plugin->cancel(r);
  const Clock::time_point until = Clock::now() + std::chrono::seconds(1);
  for (bool pending = true; pending && Clock::now() < until;) {
    pending = false;
    for (luda_mpi_request*& r : requests) {
      if (!r) continue;
      int done = 0;
      g_plugin->test(r, &done);
      if (done) r = nullptr;
      else pending = true;
    }
    if (pending) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Polls `requests` until each has completed (true; an MPI error is raised) or the deadline
// passes (false). The ones left unfinished by the deadline or an interrupt (Interrupted)
// are abandoned as `as` says (receives cancelled first when `cancel`). Under g_mutex.
bool wait_all(const World& w, std::vector<luda_mpi_request*> requests, const Deadline& d, const Abandoned& as,
              bool cancel = false) {
  auto abandon = [&] {
    if (cancel) cancel_receives(requests);
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

Abandoned data_part(std::string_view fname, Keep keep) { return {nullptr, std::move(keep), Part::Data, fname, nullptr}; }
Abandoned message_part(std::string_view fname, Keep keep) {
  return {nullptr, std::move(keep), Part::Message, fname, nullptr};
}

constexpr std::string_view kLonger = "give the call a longer {timeout = s}, or set LUDA_DIST_TIMEOUT";

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
  std::string message = detail::mismatch_message(fname, *records);
  if (!message.empty()) throw Error(message);
  return *records;
}

[[noreturn]] void data_timeout(const World& w, std::string_view fname, const Deadline& d) {
  fail("{}: rank {} waited {:g} s for the data of a call that every rank had made; a rank may have stopped or "
       "failed, or this rank made the call after the other ranks' wait for it had timed out: {}",
       fname, w.info.rank, d.seconds, kLonger);
}

std::size_t piece_bytes() { return g_piece_bytes.load(); }

// The call's start: the world, with this thread holding the lock and abandoned requests
// swept.
struct Entered {
  const World& w;
  std::unique_lock<std::mutex> lock;
};

Entered enter(const World& w) {
  std::unique_lock lock(g_mutex);
  sweep_abandoned();
  return {w, std::move(lock)};
}

// Before a collective: this rank's earlier collectives that timed out, waited for (until
// this call's deadline) so that the next exchange is the other ranks' next one too. Errors
// when they still wait, or when the other ranks made such a call late and went on to its
// data, which this rank no longer sends: its calls can then never line up with theirs.
void settle_earlier_calls(const World& w, std::string_view fname, const Deadline& d) {
  auto stale = [] {
    auto it = std::find_if(g_abandoned.begin(), g_abandoned.end(), [](const Abandoned& a) { return a.part != Part::Message; });
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
    sweep_abandoned();
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

void check_op(std::string_view fname, DType dtype, Op op) {
  if (is_complex(dtype) && (op == Op::Max || op == Op::Min))
    fail("{}: {} is not defined for {} (complex numbers have no order); use sum or prod, or reduce the real parts "
         "(luda.real(x))",
         fname, op_name(op), dtype_name(dtype));
}


// NCCL's part of the job, under g_mutex: the communicator, made at the first collective
// that moves cuda arrays with it and kept for the process, and why this rank does not use
// NCCL (empty while it may). A communicator that failed or timed out is aborted and kept.
struct NcclState {
  std::unique_ptr<nccl::Comm> comm;
  std::string off;
};
// Never destroyed: at exit the CUDA driver may be gone before static destructors run, and
// the process's end releases what NCCL holds.
NcclState& g_nccl = *new NcclState;

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

// This rank's record of a collective on x, with whether it can use NCCL.
CallRecord record_with_place(Call call, const NDArray& x, Op op = Op::Sum, int root = 0) {
  CallRecord r = detail::record_of(call, &x, op, root);
  r.nccl = nccl_capable(x) ? 1 : 0;
  return r;
}

// How NCCL combines an allreduce of `dtype` by `op`: the dtype sent (float16 and
// bfloat16 as float32), NCCL's type and op, elements per element (2 for complex); nullopt
// when NCCL cannot.
struct NcclReduce {
  DType wire;
  int type;
  std::size_t parts;
  nccl::Op op;
};
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
                     detail::rank_list(others), w.info.size);
}

// Aborts the communicator (NCCL's rule for one whose operation failed or was left
// unfinished) and moves this rank's later cuda arrays through host memory. Under g_mutex.
void give_up_nccl(const std::string& why) {
  g_nccl.comm->abort();
  g_nccl.off = fmt::format("NCCL was given up: {}", why);
}

// Polls the communicator until its setup or operations complete. A failure, the
// deadline or an interrupt aborts it: later calls then move cuda arrays through host
// memory (this rank says so in its record, so every rank does). Under g_mutex.
void wait_nccl(const World& w, std::string_view fname, const Deadline& d, std::string_view what) {
  nccl::Comm& c = *g_nccl.comm;
  luda::detail::InterruptScope scope;
  for (;;) {
    bool done = false;
    try {
      done = c.ready();
    } catch (const Error& e) {
      give_up_nccl(fmt::format("its {} failed on rank {}", what, w.info.rank));
      fail("{}: {} failed on rank {}: {}; later calls move cuda arrays through host memory", fname, what,
           w.info.rank, e.what());
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
                               detail::rank_list(sharing), ids[i].pci, ids[i].host);
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

// x as a C-contiguous array on cuda:`ordinal`, the communicator's device.
NDArray on_comm_device(const NDArray& x, int ordinal) {
  const Device dev = Device::cuda(ordinal);
  if (x.device() == dev && x.is_c_contiguous()) return x;
  return x.copy(dev);
}

// The communicator for a collective on x whose records say every rank can use NCCL, or
// null (the data then goes through host memory, with a note saying why). `unsupported`:
// why NCCL cannot do this call ("" when it can); it is the same on every rank.
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

}  // namespace

namespace detail {
void set_piece_bytes(std::size_t bytes) {
  g_piece_bytes = std::clamp<std::size_t>(bytes, 16, std::size_t{1} << 30);
}
}  // namespace detail

double timeout_seconds(const CallOptions& options) {
  if (options.timeout) {
    if (!(*options.timeout > 0))
      fail("luda.dist: timeout must be a positive number of seconds, got {:g}", *options.timeout);
    return *options.timeout;
  }
  const char* v = std::getenv("LUDA_DIST_TIMEOUT");
  if (!v || !*v) return 60;
  char* end = nullptr;
  double seconds = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(seconds > 0))
    fail("LUDA_DIST_TIMEOUT='{}' is not a positive number of seconds; set it to one (the default is 60) or unset it",
         v);
  return seconds;
}

void exiting_with_error() noexcept { g_exiting_with_error = true; }

Info info() {
  const World& w = world();
  Info out;
  out.rank = w.info.rank;
  out.size = w.info.size;
  if (w.plugin) out.mpi = w.info.library;
  std::string why;
  if (std::optional<std::string> v = nccl::version(&why)) out.nccl = *v;
  std::lock_guard lock(g_mutex);
  if (g_nccl.comm) out.nccl_device = Device::cuda(g_nccl.comm->ordinal());
  out.host_reason = !g_nccl.off.empty() ? g_nccl.off : out.nccl.empty() ? why : "";
  return out;
}

int rank() { return world().info.rank; }
int size() { return world().info.size; }

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
  exchange_records(w, fname, detail::record_of(Call::Barrier, nullptr), d);
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
  const std::string unsupported =
      how ? "" : fmt::format("NCCL cannot combine {} by {}", dtype_name(x.dtype()), op_name(op));
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
      return w.plugin->iallreduce(bytes_of(send) + at * item, bytes_of(out) + at * item, count,
                                  static_cast<int>(wire), static_cast<int>(op), req);
    });
    if (!wait_all(w, {r}, d, data_part(fname, keep))) data_timeout(w, fname, d);
  }
  if (half) out = out.astype(x.dtype());
  return on_device(out, x.device());
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
  const std::vector<CallRecord> records =
      exchange_records(w, fname, record_with_place(Call::Broadcast, x, Op::Sum, root), d);
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

namespace {

// A message's dtype and shape, sent ahead of its data so that recv can check them.
CallRecord message_header(const NDArray& x) { return detail::record_of(Call::Send, &x); }

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
  const std::size_t total = x.nbytes();
  for (std::size_t at = 0; at < total; at += piece_bytes()) {
    const int bytes = static_cast<int>(std::min(piece_bytes(), total - at));
    requests.push_back(start(w, fname, "MPI_Isend", [&](luda_mpi_request** req) {
      return w.plugin->isend(bytes_of(data) + at, bytes, dest, tag, req);
    }));
  }
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
  const std::size_t total = into.nbytes();
  std::vector<luda_mpi_request*> requests;
  for (std::size_t at = 0; at < total; at += piece_bytes()) {
    const int bytes = static_cast<int>(std::min(piece_bytes(), total - at));
    requests.push_back(start(w, fname, "MPI_Irecv", [&](luda_mpi_request** req) {
      return w.plugin->irecv(bytes_of(into) + at, bytes, source, tag, req);
    }));
  }
  if (!wait_all(w, std::move(requests), d, message_part(fname, keep), true)) timed_out();
  if (!same)
    fail("{}: rank {} sent {} {} (tag {}), but buf is {} {}; recv's buf must have the dtype and shape of the array "
         "sent",
         fname, source, dtype_name(sent_dtype), shape_str(sent_shape), tag, dtype_name(buf.dtype()),
         shape_str(buf.shape()));
  if (into.buffer() != buf.buffer()) buf.assign(into);
}

}  // namespace luda::dist

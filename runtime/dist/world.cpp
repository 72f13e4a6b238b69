#include "runtime/dist/world.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "runtime/dist/dist.h"
#include "runtime/dist/open_plugin.h"
#include "runtime/dist/requests.h"
#include "runtime/error.h"
#include "runtime/graph/recording.h"
#include "runtime/shared_library.h"

namespace luda::dist {

namespace {

// The plugin and this rank, for MPI_Finalize at exit (set when the world is made).
const luda_mpi_plugin* g_plugin = nullptr;
int g_rank = 0;
std::atomic<bool> g_exiting_with_error{false};

// MPI_Finalize at exit, where init called MPI_Init_thread: skipped when the process ends
// with an error (exiting_with_error), so that mpirun ends the job at once, and when an
// abandoned request is still pending.
void finalize_at_exit() {
  if (g_exiting_with_error) return;
  std::unique_lock lock(detail::g_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is inside a call
  if (std::size_t pending = detail::sweep_abandoned(*g_plugin); pending != 0) {
    std::fprintf(stderr,
                 "luda.dist: rank %d does not call MPI_Finalize: %zu MPI operation(s) of calls that timed out are "
                 "still pending (the other ranks never made their part of them); mpirun reports the job as failed\n",
                 g_rank, pending);
    return;
  }
  g_plugin->finalize();
}

// The folder of the file holding this code: libluda.so, luda.so, or the `luda` command.
std::string self_dir() {
  Dl_info info;
  std::filesystem::path file;
  if (dladdr(reinterpret_cast<void*>(&self_dir), &info) && info.dli_fname && *info.dli_fname) file = info.dli_fname;
  std::error_code ec;
  if (file.empty() || !std::filesystem::exists(file, ec)) file = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (file.empty()) return "";
  std::filesystem::path canonical = std::filesystem::weakly_canonical(file, ec);
  return (ec ? file : canonical).parent_path().string();
}

detail::World make_world() {
  detail::World w;
  w.info.rank = 0;
  w.info.size = 1;
  w.info.tag_ub = 32767;
  std::optional<std::string> launcher = detail::launcher_variable();
  if (!launcher) return w;
  const luda_mpi_plugin& p = detail::open_plugin(detail::plugin_candidates(self_dir()), *launcher);
  if (int rc = p.init(&w.info); rc != 0)
    fail("luda.dist: MPI cannot be used under the launcher ({}): {}", *launcher, detail::error_text(p, rc));
  w.plugin = &p;
  g_plugin = &p;
  g_rank = w.info.rank;
  if (w.info.initialized_here) std::atexit(finalize_at_exit);
  return w;
}

}  // namespace

void exiting_with_error() noexcept { g_exiting_with_error = true; }

namespace detail {

const World& world() { return load_once(&make_world); }

void refuse_recording(std::string_view fname) {
  if (GraphRecording::active())
    fail("{}: a luda.dist call cannot be recorded in a graph (it moves data between processes when it is called); "
         "call it outside the recorded function",
         fname);
}

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

}  // namespace detail

}  // namespace luda::dist

// The process's part of an MPI job as luda.dist sees it (runtime/dist/dist.h): this
// rank, the job's size, and the loaded plugin, made at the first call; and the checks
// that every call makes of the ranks and tags it names.
#pragma once

#include <string>
#include <string_view>

#include "runtime/dist/mpi_plugin.h"

namespace luda::dist::detail {

// The process's part of the job, made at the first call.
struct World {
  const luda_mpi_plugin* plugin = nullptr;  // null without a launcher
  luda_mpi_info info{};
};

// The world, made at the first call: without a launcher one rank of one; under a
// launcher the plugin loaded (runtime/dist/open_plugin.h) and MPI initialized, with
// MPI_Finalize at exit where MPI was initialized here. Error when the plugin is missing
// or MPI fails (raised again at each later call).
const World& world();

// Error when a graph is being recorded: a luda.dist call moves data when it is called.
void refuse_recording(std::string_view fname);

// "the other rank" / "the other 2 ranks": the job's ranks but this one, for messages.
std::string others_text(const World& w);

// Errors naming the job's ranks or MPI's tag limit for a rank or tag out of range.
void check_rank(const World& w, std::string_view fname, std::string_view what, int r);
void check_tag(const World& w, std::string_view fname, int tag);

}  // namespace luda::dist::detail

// Finding and loading luda's MPI plugin, libluda_mpi.so (runtime/dist/mpi_plugin.h),
// which a process loads under an MPI launcher only (runtime/dist/world.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dist/mpi_plugin.h"

namespace luda::dist::detail {

// The variable that says this process runs under an MPI launcher ("OMPI_COMM_WORLD_SIZE=3"),
// or nullopt.
std::optional<std::string> launcher_variable();

// Where the plugin is looked for, in order: $LUDA_MPI_PLUGIN alone when set; else
// libluda_mpi.so in `self_dir` (the folder of the file holding luda's code: libluda.so,
// luda.so or the `luda` command), where an install puts it relative to that folder, and
// the bare name for the loader's search.
std::vector<std::string> plugin_candidates(const std::string& self_dir);

// The plugin's table from the first candidate that loads, checked for this luda's
// version; Error naming `launcher`, every file tried and what to install otherwise.
const luda_mpi_plugin& open_plugin(const std::vector<std::string>& candidates, std::string_view launcher);

// The text of the plugin's error `code`.
std::string error_text(const luda_mpi_plugin& p, int code);

}  // namespace luda::dist::detail

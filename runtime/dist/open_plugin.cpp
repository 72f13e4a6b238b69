#include "runtime/dist/open_plugin.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "runtime/error.h"
#include "runtime/shared_library.h"

namespace luda::dist::detail {

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
    fail("luda.dist: this process runs under an MPI launcher ({}) and needs luda's MPI plugin: {}", launcher, e.what());
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

std::string error_text(const luda_mpi_plugin& p, int code) {
  char buffer[512];
  p.error_string(code, buffer, sizeof buffer);
  return buffer;
}

}  // namespace luda::dist::detail

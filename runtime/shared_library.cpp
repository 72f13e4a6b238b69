#include "runtime/shared_library.h"

#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/error.h"

namespace luda {
namespace {

// The part of dlerror() after "<path>: ", which repeats the file name.
std::string dl_reason(const std::string& path) {
  const char* e = dlerror();
  std::string reason = e ? e : "unknown dlopen error";
  std::string prefix = path + ": ";
  if (reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
  return reason;
}

// Versions in "libnvrtc.so.13.0.88" compared numerically, newest first.
std::vector<int> version_of(const std::string& path) {
  std::vector<int> parts;
  std::size_t at = path.rfind(".so.");
  if (at == std::string::npos) return parts;
  std::string rest = path.substr(at + 4);
  std::size_t pos = 0;
  while (pos < rest.size()) {
    std::size_t dot = rest.find('.', pos);
    std::string part = rest.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    parts.push_back(std::atoi(part.c_str()));
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return parts;
}

}  // namespace

std::vector<std::string> library_candidates(const LibrarySearch& search) {
  std::vector<std::string> out;
  auto add = [&](std::string path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
  };
  if (search.env)
    if (const char* v = std::getenv(search.env); v && *v) add(v);
  if (search.toolkit) {
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/lib64");
    dirs.push_back("/usr/local/cuda/lib64");
    for (const std::string& dir : dirs) {
      add(dir + "/" + search.stem);
      glob_t g{};
      std::string pattern = dir + "/" + search.stem + ".*";
      std::vector<std::string> versioned;
      if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i) versioned.emplace_back(g.gl_pathv[i]);
      globfree(&g);
      std::stable_sort(versioned.begin(), versioned.end(),
                       [](const auto& a, const auto& b) { return version_of(a) > version_of(b); });
      for (auto& p : versioned) add(std::move(p));
    }
  }
  for (const std::string& name : search.names) add(name);
  return out;
}

SharedLibrary open_library(std::string_view what, const std::vector<std::string>& candidates,
                           std::span<const char* const> symbols, std::string_view fix) {
  std::vector<std::string> tried;
  for (const std::string& path : candidates) {
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) {
      tried.push_back(fmt::format("  {}: no such file", path));
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried.push_back(fmt::format("  {}: {}", path, dl_reason(path)));
      continue;
    }
    SharedLibrary lib;
    lib.handle = handle;
    lib.path = path;
    const char* missing = nullptr;
    for (const char* name : symbols) {
      void* at = dlsym(handle, name);
      if (!at && !missing) missing = name;
      lib.symbols.push_back(at);
    }
    if (!missing) {
      Dl_info info;
      // Report the real file for a bare name found by the default search.
      if (!lib.symbols.empty() && dladdr(lib.symbols.front(), &info) && info.dli_fname) lib.path = info.dli_fname;
      return lib;
    }
    dlclose(handle);
    tried.push_back(fmt::format("  {}: not {} (it has no {})", path, what, missing));
  }
  if (candidates.empty()) tried.push_back("  (no candidates)");
  fail("{} not found; tried:\n{}\n{}", what, fmt::join(tried, "\n"), fix);
}

void throw_load_failure(const std::string& message) { throw Error(message); }

void close_library(SharedLibrary& library) {
  if (library.handle) dlclose(library.handle);
  library = SharedLibrary{};
}

}  // namespace luda

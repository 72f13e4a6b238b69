// The on-disk cache of compiled kernels: one file per artifact in $LUDA_CACHE_DIR, else
// $XDG_CACHE_HOME/luda, else ~/.cache/luda, named by a hash of everything that can change
// the binary. A second process starts warm.
//
// Files are written to a temporary name in the same folder and renamed into place, so a
// reader never sees half a file; each carries a header (magic, key, length, checksum)
// that a read verifies: a file failing it is counted as corrupt, removed and reported as
// a miss, so the caller rebuilds it. A read opens without blocking and takes only a
// regular file, no more than its header's length: a FIFO, a device or a huge file under
// a cache name is damaged, not waited on or read into memory. A cache that cannot be written never fails a
// compile: it warns once on stderr and goes on without.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace luda::jit {

// A 128-bit hash (XXH3-128) of named fields, plus a short summary of the fields for
// LUDA_CACHE_DEBUG: two keys that differ show which field did.
struct CacheKey {
  std::array<unsigned char, 16> bytes{};
  std::string summary;      // "source=1a2b3c4d options=-default-device arch=sm_90 ..."
  std::string hex() const;  // 32 lowercase hex digits: the file name
  bool operator==(const CacheKey& o) const { return bytes == o.bytes; }
};

class CacheKeyBuilder {
 public:
  // Adds one field. Each field is length-prefixed in the hash, so ("ab","c") and
  // ("a","bc") differ. Values up to 40 characters are shown as is in the summary, longer
  // ones by their own short hash.
  CacheKeyBuilder& add(std::string_view name, std::string_view value);
  CacheKeyBuilder& add(std::string_view name, long long value);
  CacheKey finish() const;

 private:
  std::string material_;
  std::string summary_;
};

class DiskCache {
 public:
  struct Stats {
    std::uint64_t hits = 0, misses = 0, writes = 0, corrupt = 0, write_failures = 0;
  };

  // A cache in `directory` (created on first store). An empty path disables the cache:
  // every lookup misses and stores are dropped.
  explicit DiskCache(std::filesystem::path directory);

  // $LUDA_CACHE_DIR, else $XDG_CACHE_HOME/luda, else $HOME/.cache/luda; empty when none
  // of them is set.
  static std::filesystem::path default_directory();
  // The process's cache, in default_directory() as it was at first use.
  static DiskCache& global();

  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path path_of(const CacheKey& key) const;  // directory/<hex>.luda

  // The stored bytes, or nullopt (a miss). With LUDA_CACHE_DEBUG=1, a miss is logged on
  // stderr with its reason and the key's summary; `what` names the artifact there
  // ("kernel 'add_kernel' for sm_90").
  std::optional<std::string> load(const CacheKey& key, std::string_view what = {});
  // Writes atomically. False (after one warning per cache) when the folder cannot be
  // created or written; never throws for I/O.
  bool store(const CacheKey& key, std::string_view data);

  Stats stats() const;
  void reset_stats();

 private:
  void debug_miss(const CacheKey& key, std::string_view what, std::string_view reason) const;
  void warn_unwritable(const std::string& reason);

  std::filesystem::path directory_;
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, writes_{0}, corrupt_{0}, write_failures_{0};
  std::once_flag warned_;
  bool debug_ = false;  // LUDA_CACHE_DEBUG=1 at construction
};

namespace detail {
// The file format, exposed for tests that corrupt files on purpose.
inline constexpr std::size_t kCacheHeaderSize = 48;  // magic 8, key 16, length 8, checksum 16
inline constexpr char kCacheMagic[8] = {'L', 'U', 'D', 'A', 'K', 'C', '0', '1'};
// A longer payload is no compiled kernel: its file is treated as damaged, never read.
inline constexpr std::uint64_t kCacheMaxPayload = std::uint64_t{1} << 30;
}  // namespace detail

}  // namespace luda::jit

#include "jit/compile/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/format.h>

// Header-only use of Debian's libxxhash-dev: nothing to link.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace luda::jit {
namespace {

std::array<unsigned char, 16> hash128(std::string_view data) {
  XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  std::array<unsigned char, 16> out{};
  std::memcpy(out.data(), c.digest, out.size());
  return out;
}

std::string to_hex(const unsigned char* p, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[p[i] >> 4];
    s[2 * i + 1] = kDigits[p[i] & 15];
  }
  return s;
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string errno_text(int e) { return std::strerror(e); }

// Reads `n` bytes at the file's position into `out`; the count read (less at the end of
// the file), or -1 with errno.
long long read_some(int fd, char* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return static_cast<long long>(got);
}

// What reading one cache file gave: its bytes; or why there are none, and whether that
// is the file's own fault (then it is removed and rebuilt).
struct FileRead {
  std::optional<std::string> data;
  std::string reason;
  bool damaged = false;
};

// The file when it is a regular one whose header matches `key` and its size: opened
// without blocking (a FIFO never stalls a lookup) and read no further than the length its
// header gives (a device such as /dev/zero is never read on and on).
FileRead read_entry(const std::filesystem::path& path, const CacheKey& key) {
  using detail::kCacheHeaderSize;
  FileRead r;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    r.reason = errno == ENOENT ? "no file" : fmt::format("cannot open {}: {}", path.string(), errno_text(errno));
    return r;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.reason = fmt::format("cannot read {}: {}", path.string(), errno_text(errno));
    return r;
  }
  r.damaged = true;  // from here on, every failure is the file's
  if (!S_ISREG(st.st_mode)) {
    r.reason = "not a regular file";
    return r;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  char header[kCacheHeaderSize];
  long long got = read_some(fd, header, kCacheHeaderSize);
  if (got < 0) {
    r.damaged = false;
    r.reason = fmt::format("cannot read {}: {}", path.string(), errno_text(errno));
    return r;
  }
  if (static_cast<std::size_t>(got) < kCacheHeaderSize) {
    r.reason = fmt::format("{} bytes, shorter than the header", got);
    return r;
  }
  if (std::memcmp(header, detail::kCacheMagic, 8) != 0) {
    r.reason = "not a luda cache file (bad magic)";
    return r;
  }
  if (std::memcmp(header + 8, key.bytes.data(), 16) != 0) {
    r.reason = "its header names another key";
    return r;
  }
  const std::uint64_t length = get_u64(header + 24);
  if (length != size - kCacheHeaderSize) {
    r.reason = fmt::format("length {} in the header, {} bytes present", length, size - kCacheHeaderSize);
    return r;
  }
  if (length > detail::kCacheMaxPayload) {
    r.reason = fmt::format("length {} in the header, more than any compiled kernel", length);
    return r;
  }
  std::string data(static_cast<std::size_t>(length), '\0');
  got = read_some(fd, data.data(), data.size());
  if (got < 0) {
    r.damaged = false;
    r.reason = fmt::format("cannot read {}: {}", path.string(), errno_text(errno));
    return r;
  }
  if (static_cast<std::uint64_t>(got) != length) {  // shortened while being read
    r.reason = fmt::format("length {} in the header, {} bytes present", length, got);
    return r;
  }
  if (auto sum = hash128(data); std::memcmp(sum.data(), header + 32, sum.size()) != 0) {
    r.reason = "checksum mismatch";
    return r;
  }
  r.damaged = false;
  r.data = std::move(data);
  return r;
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// keys

std::string CacheKey::hex() const { return to_hex(bytes.data(), bytes.size()); }

CacheKeyBuilder& CacheKeyBuilder::add(std::string_view name, std::string_view value) {
  put_u64(material_, name.size());
  material_.append(name);
  put_u64(material_, value.size());
  material_.append(value);
  if (!summary_.empty()) summary_ += ' ';
  summary_.append(name);
  summary_ += '=';
  bool shown = value.size() <= 40 && value.find_first_of("\n\r") == std::string_view::npos;
  if (shown) {
    summary_.append(value);
  } else {
    auto h = hash128(value);
    summary_ += to_hex(h.data(), 4);
  }
  return *this;
}

CacheKeyBuilder& CacheKeyBuilder::add(std::string_view name, long long value) {
  return add(name, std::to_string(value));
}

CacheKey CacheKeyBuilder::finish() const {
  CacheKey k;
  k.bytes = hash128(material_);
  k.summary = summary_;
  return k;
}

// ---------------------------------------------------------------------------------------
// the cache

DiskCache::DiskCache(std::filesystem::path directory) : directory_(std::move(directory)) {
  const char* d = std::getenv("LUDA_CACHE_DEBUG");
  debug_ = d && *d && std::strcmp(d, "0") != 0;
}

std::filesystem::path DiskCache::default_directory() {
  auto env = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
  };
  if (const char* d = env("LUDA_CACHE_DIR")) return d;
  if (const char* x = env("XDG_CACHE_HOME")) return std::filesystem::path(x) / "luda";
  if (const char* h = env("HOME")) return std::filesystem::path(h) / ".cache" / "luda";
  return {};
}

DiskCache& DiskCache::global() {
  static DiskCache* cache = new DiskCache(default_directory());  // never destroyed: used at exit
  return *cache;
}

std::filesystem::path DiskCache::path_of(const CacheKey& key) const { return directory_ / (key.hex() + ".luda"); }

void DiskCache::debug_miss(const CacheKey& key, std::string_view what, std::string_view reason) const {
  if (!debug_) return;
  std::fprintf(stderr, "luda cache: miss %s%s%.*s (%.*s): %s\n", key.hex().c_str(), what.empty() ? "" : " for ",
               static_cast<int>(what.size()), what.data(), static_cast<int>(reason.size()), reason.data(),
               key.summary.c_str());
}

std::optional<std::string> DiskCache::load(const CacheKey& key, std::string_view what) {
  if (directory_.empty()) {
    ++misses_;
    debug_miss(key, what, "no cache folder: set LUDA_CACHE_DIR or HOME");
    return std::nullopt;
  }
  std::filesystem::path path = path_of(key);
  FileRead r = read_entry(path, key);
  if (r.damaged) {
    ++corrupt_;
    ++misses_;
    std::error_code ec;
    std::filesystem::remove(path, ec);  // rebuilt by the caller's store
    debug_miss(key, what, "corrupt file removed: " + r.reason);
    return std::nullopt;
  }
  if (!r.data) {
    ++misses_;
    debug_miss(key, what, r.reason);
    return std::nullopt;
  }
  ++hits_;
  return std::move(r.data);
}

void DiskCache::warn_unwritable(const std::string& reason) {
  ++write_failures_;
  std::call_once(warned_, [&] {
    std::fprintf(stderr,
                 "luda: warning: compiled kernels are not cached on disk: %s (set LUDA_CACHE_DIR to a "
                 "writable folder)\n",
                 reason.c_str());
  });
}

bool DiskCache::store(const CacheKey& key, std::string_view data) {
  if (directory_.empty()) {
    warn_unwritable("no cache folder (LUDA_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)");
    return false;
  }
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) {
    warn_unwritable(fmt::format("cannot create {}: {}", directory_.string(), ec.message()));
    return false;
  }
  std::string header(detail::kCacheMagic, 8);
  header.append(reinterpret_cast<const char*>(key.bytes.data()), 16);
  put_u64(header, data.size());
  auto sum = hash128(data);
  header.append(reinterpret_cast<const char*>(sum.data()), 16);

  // A name no other writer uses; the rename makes the file appear whole or not at all.
  thread_local std::mt19937_64 rng(std::random_device{}() ^ static_cast<std::uint64_t>(::getpid()));
  std::filesystem::path final_path = path_of(key);
  std::filesystem::path tmp = directory_ / fmt::format("{}.tmp.{}.{:x}", key.hex(), ::getpid(), rng());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    warn_unwritable(fmt::format("cannot write in {}: {}", directory_.string(), errno_text(errno)));
    return false;
  }
  bool ok = write_all(fd, header.data(), header.size()) && write_all(fd, data.data(), data.size());
  int write_errno = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    write_errno = errno;
    ok = false;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    warn_unwritable(fmt::format("cannot write {}: {}", final_path.string(), errno_text(write_errno)));
    return false;
  }
  ++writes_;
  return true;
}

DiskCache::Stats DiskCache::stats() const {
  Stats s;
  s.hits = hits_;
  s.misses = misses_;
  s.writes = writes_;
  s.corrupt = corrupt_;
  s.write_failures = write_failures_;
  return s;
}

void DiskCache::reset_stats() { hits_ = misses_ = writes_ = corrupt_ = write_failures_ = 0; }

}  // namespace luda::jit

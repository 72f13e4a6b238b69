// The on-disk kernel cache: atomic writes, verified reads (a corrupt file is ignored,
// removed and rebuilt), keys that change with every input, counters, and a cache that
// cannot be written (a warning, never a failure).
#include "jit/compile/disk_cache.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "jit/kinds/jit_kernel.h"
#include "tests/test_support.h"

namespace luda::jit {
namespace {

// Flips bits of one byte of a cache file's image. Out of line: GCC 12's -O2 flow analysis
// otherwise warns about writes into std::string's small buffer that cannot happen.
[[gnu::noinline]] void flip(std::string& file, std::size_t at, int bits) {
  file.at(at) = static_cast<char>(file.at(at) ^ bits);
}

namespace fs = std::filesystem;

// A fresh folder per test, removed after.
class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("luda_cache_test_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  static std::string payload(std::size_t n, unsigned seed) {
    auto b = test_support::random_bytes(n, seed);
    return std::string(b.begin(), b.end());
  }
  static CacheKey key(std::string_view source) { return CacheKeyBuilder().add("source", source).finish(); }

  fs::path dir_;
};

TEST_F(DiskCacheTest, StoresAndLoadsWithCounters) {
  DiskCache cache(dir_);
  CacheKey k = key("kernel A");
  std::string data = payload(5000, 1);
  EXPECT_FALSE(cache.load(k).has_value());
  EXPECT_TRUE(cache.store(k, data));
  std::optional<std::string> back = cache.load(k);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, data);
  DiskCache::Stats s = cache.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.writes, 1u);
  EXPECT_EQ(s.corrupt, 0u);
  // Another cache on the same folder (a second process) finds it.
  DiskCache second(dir_);
  EXPECT_EQ(second.load(k), data);
  EXPECT_EQ(second.stats().hits, 1u);
}

TEST_F(DiskCacheTest, WritesAtomicallyWithAHeader) {
  DiskCache cache(dir_);
  CacheKey k = key("kernel B");
  std::string data = payload(300, 2);
  ASSERT_TRUE(cache.store(k, data));
  // Exactly one file, named by the key: no temporary left behind.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], cache.path_of(k));
  EXPECT_EQ(files[0].filename().string(), k.hex() + ".luda");
  EXPECT_EQ(k.hex().size(), 32u);
  std::string raw = read(files[0]);
  ASSERT_EQ(raw.size(), detail::kCacheHeaderSize + data.size());
  EXPECT_EQ(raw.substr(0, 8), std::string(detail::kCacheMagic, 8));
  EXPECT_EQ(raw.substr(detail::kCacheHeaderSize), data);
  // Overwriting (a racing writer) leaves a whole file.
  std::string other = payload(300, 3);
  ASSERT_TRUE(cache.store(k, other));
  EXPECT_EQ(cache.load(k), other);
}

TEST_F(DiskCacheTest, ConcurrentWritersLeaveOneWholeFile) {
  DiskCache cache(dir_);
  CacheKey k = key("raced");
  std::string data = payload(1 << 16, 4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { cache.store(k, data); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(cache.load(k), data);
  EXPECT_EQ(cache.stats().writes, 4u);
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
  EXPECT_EQ(n, 1);
}

TEST_F(DiskCacheTest, CorruptFilesAreIgnoredRemovedAndRebuilt) {
  DiskCache cache(dir_);
  CacheKey k = key("kernel C");
  std::string data = payload(1000, 5);
  // Each way a file can be damaged: a flipped payload byte, truncation, a wrong magic, a
  // wrong length field, and another key's file under this name.
  std::vector<std::function<std::string(std::string)>> damage = {
      [](std::string f) {
        flip(f, f.size() / 2 + 24, 0x40);
        return f;
      },
      [](std::string f) { return f.substr(0, f.size() - 7); },
      [](std::string f) { return f.substr(0, 20); },
      [](std::string f) {
        flip(f, 0, 'X' ^ f.at(0));
        return f;
      },
      [](std::string f) {
        flip(f, 24, 1);
        return f;
      },
      [](std::string f) {
        flip(f, 8, 1);
        return f;
      },
  };
  std::uint64_t expected_corrupt = 0;
  for (std::size_t i = 0; i < damage.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(cache.store(k, data));
    write(cache.path_of(k), damage[i](read(cache.path_of(k))));
    EXPECT_FALSE(cache.load(k).has_value());
    EXPECT_EQ(cache.stats().corrupt, ++expected_corrupt);
    EXPECT_FALSE(fs::exists(cache.path_of(k)));  // removed, so the rebuild below replaces it
    ASSERT_TRUE(cache.store(k, data));
    EXPECT_EQ(cache.load(k), data);
  }
}

// What sits under a cache file's name may be anything: a lookup never waits on it, never
// reads without end, and treats it as damaged (removed, then rebuilt by the store).
TEST_F(DiskCacheTest, AFifoADeviceOrAHugeFileIsDamagedNotWaitedOn) {
  ::setenv("LUDA_CACHE_DEBUG", "1", 1);
  DiskCache cache(dir_);
  ::unsetenv("LUDA_CACHE_DEBUG");
  fs::create_directories(dir_);
  CacheKey k = key("kernel F");
  const fs::path path = cache.path_of(k);
  ::testing::internal::CaptureStderr();
  // A FIFO: a blocking open for reading waits for a writer that never comes.
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto lookup = std::async(std::launch::async, [&] { return cache.load(k, "kernel 'f'"); });
  if (lookup.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "a lookup waits on a FIFO";
    ::close(::open(path.c_str(), O_WRONLY));  // the writer it waits for
  }
  EXPECT_FALSE(lookup.get().has_value());
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
  // A device that reads without end.
  fs::create_symlink("/dev/zero", path);
  EXPECT_FALSE(cache.load(k, "kernel 'f'").has_value());
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
  // A sparse file whose header claims its 2 GiB: more than any kernel, never read in.
  {
    std::string header(detail::kCacheMagic, 8);
    header.append(reinterpret_cast<const char*>(k.bytes.data()), 16);
    const std::uint64_t length = std::uint64_t{1} << 31;
    for (int i = 0; i < 8; ++i) header.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
    header.append(16, '\0');
    write(path, header);
    fs::resize_file(path, detail::kCacheHeaderSize + length);
  }
  EXPECT_FALSE(cache.load(k, "kernel 'f'").has_value());
  EXPECT_FALSE(fs::exists(path));
  std::string err = ::testing::internal::GetCapturedStderr();
  const std::string miss = fmt::format("luda cache: miss {} for kernel 'f' (corrupt file removed: ", k.hex());
  std::size_t irregular = 0;  // the FIFO and the device
  for (std::size_t at = err.find(miss + "not a regular file)"); at != std::string::npos;
       at = err.find(miss + "not a regular file)", at + 1))
    ++irregular;
  EXPECT_EQ(irregular, 2u) << err;
  EXPECT_NE(err.find(miss + "length 2147483648 in the header, more than any compiled kernel)"), std::string::npos)
      << err;
  EXPECT_EQ(cache.stats().corrupt, 3u);
  ASSERT_TRUE(cache.store(k, "rebuilt"));
  EXPECT_EQ(cache.load(k), "rebuilt");
}

TEST_F(DiskCacheTest, KeysChangeWithEveryInput) {
  dsl::CudaKernel kernel;
  kernel.code = "extern \"C\" __global__ void k_1a2b(float* x) { x[0] = 1; }";
  kernel.entry = "k_1a2b";
  CacheKey base = detail::binary_key(kernel, {}, 90);
  EXPECT_EQ(base, detail::binary_key(kernel, {}, 90));  // deterministic
  dsl::CudaKernel other_source = kernel;
  other_source.code += " ";
  dsl::CudaKernel other_entry = kernel;
  other_entry.entry = "k_1a2c";
  EXPECT_FALSE(base == detail::binary_key(other_source, {}, 90));
  EXPECT_FALSE(base == detail::binary_key(other_entry, {}, 90));
  EXPECT_FALSE(base == detail::binary_key(kernel, {"--use_fast_math"}, 90));
  EXPECT_FALSE(base == detail::binary_key(kernel, {"-G"}, 90));
  EXPECT_FALSE(base == detail::binary_key(kernel, {}, 80));
  // The summary names each field, so a debug log shows which one changed.
  EXPECT_NE(base.summary.find("arch=90"), std::string::npos) << base.summary;
  EXPECT_NE(base.summary.find("prelude="), std::string::npos) << base.summary;
  EXPECT_NE(base.summary.find("nvrtc="), std::string::npos) << base.summary;
  EXPECT_NE(base.summary.find("luda="), std::string::npos) << base.summary;
  // Fields are length-prefixed: moving a byte between two fields changes the key.
  EXPECT_FALSE(CacheKeyBuilder().add("a", "bc").add("d", "e").finish() ==
               CacheKeyBuilder().add("a", "b").add("d", "ce").finish());
  EXPECT_FALSE(CacheKeyBuilder().add("ab", "c").finish() == CacheKeyBuilder().add("a", "bc").finish());
  // Another NVRTC (or prelude, or luda) is another field value of the same builder.
  EXPECT_FALSE(CacheKeyBuilder().add("nvrtc", "/usr/local/cuda/lib64/libnvrtc.so.13 1 2").finish() ==
               CacheKeyBuilder().add("nvrtc", "/usr/local/cuda/lib64/libnvrtc.so.13 1 3").finish());
}

TEST_F(DiskCacheTest, NvrtcIdentityNamesTheLibraryWithoutLoadingIt) {
  std::string id = detail::nvrtc_identity();
  EXPECT_NE(id.find("libnvrtc"), std::string::npos) << id;
  EXPECT_EQ(id, detail::nvrtc_identity());
}

TEST_F(DiskCacheTest, AnUnwritableFolderWarnsOnceAndNeverFails) {
  fs::create_directories(dir_);
  write(dir_ / "file", "not a folder");
  DiskCache cache(dir_ / "file" / "cache");
  CacheKey k = key("kernel D");
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.store(k, "abc"));
  EXPECT_FALSE(cache.store(k, "abc"));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("luda: warning: compiled kernels are not cached on disk: cannot create"), 0u) << err;
  EXPECT_EQ(err.find("luda: warning", 1), std::string::npos) << "warned twice: " << err;
  EXPECT_NE(err.find("set LUDA_CACHE_DIR to a writable folder"), std::string::npos) << err;
  EXPECT_EQ(cache.stats().write_failures, 2u);
  EXPECT_FALSE(cache.load(k).has_value());
}

TEST_F(DiskCacheTest, DebugLogSaysWhyALookupMissed) {
  ::setenv("LUDA_CACHE_DEBUG", "1", 1);
  DiskCache cache(dir_);
  ::unsetenv("LUDA_CACHE_DEBUG");
  CacheKey k = CacheKeyBuilder().add("source", "x").add("arch", 90).finish();
  ::testing::internal::CaptureStderr();
  cache.load(k, "kernel 'add' for sm_90");
  ASSERT_TRUE(cache.store(k, "payload"));
  write(cache.path_of(k), read(cache.path_of(k)) + "extra");
  cache.load(k, "kernel 'add' for sm_90");
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(
                fmt::format("luda cache: miss {} for kernel 'add' for sm_90 (no file): source=x arch=90\n", k.hex())),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("(corrupt file removed: length 7 in the header, 12 bytes present)"), std::string::npos) << err;
}

TEST_F(DiskCacheTest, DefaultDirectoryFollowsTheEnvironment) {
  auto saved = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto old_luda = saved("LUDA_CACHE_DIR"), old_xdg = saved("XDG_CACHE_HOME"), old_home = saved("HOME");
  ::setenv("LUDA_CACHE_DIR", "/tmp/a", 1);
  ::setenv("XDG_CACHE_HOME", "/tmp/x", 1);
  ::setenv("HOME", "/tmp/h", 1);
  EXPECT_EQ(DiskCache::default_directory(), fs::path("/tmp/a"));
  ::unsetenv("LUDA_CACHE_DIR");
  EXPECT_EQ(DiskCache::default_directory(), fs::path("/tmp/x/luda"));
  ::setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(DiskCache::default_directory(), fs::path("/tmp/h/.cache/luda"));
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  EXPECT_EQ(DiskCache::default_directory(), fs::path());
  auto restore = [](const char* n, const std::optional<std::string>& v) {
    if (v) ::setenv(n, v->c_str(), 1);
    else ::unsetenv(n);
  };
  restore("LUDA_CACHE_DIR", old_luda);
  restore("XDG_CACHE_HOME", old_xdg);
  restore("HOME", old_home);
  // No folder at all: lookups miss, stores warn, nothing fails.
  DiskCache none{fs::path()};
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(none.store(key("k"), "x"));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no cache folder"), std::string::npos) << err;
  EXPECT_FALSE(none.load(key("k")).has_value());
}

}  // namespace
}  // namespace luda::jit

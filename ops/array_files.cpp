#include "ops/array_files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "ops/npy_format.h"
#include "runtime/error.h"
#include "runtime/graph/recording.h"

namespace luda::ops {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string os_error(int err) { return std::strerror(err); }

File open_for_reading(const std::string& path, std::string_view who) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) fail("{}: {}: cannot open it: {}", who, path, os_error(errno));
  return f;
}

File open_for_writing(const std::string& path, std::string_view who) {
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) fail("{}: {}: cannot open it for writing: {}", who, path, os_error(errno));
  return f;
}

void write_all(std::FILE* f, const void* data, std::size_t n, const std::string& path, std::string_view who) {
  if (n && std::fwrite(data, 1, n, f) != n) fail("{}: {}: cannot write it: {}", who, path, os_error(errno));
}

void close_written(File f, const std::string& path, std::string_view who) {
  std::FILE* raw = f.release();
  errno = 0;
  if (std::fflush(raw) != 0 || std::ferror(raw)) {
    int err = errno;
    std::fclose(raw);
    fail("{}: {}: cannot write it: {}", who, path, os_error(err ? err : EIO));
  }
  if (std::fclose(raw) != 0) fail("{}: {}: cannot write it: {}", who, path, os_error(errno));
}

// A file read from its start. A regular file's size is known; anything else (a pipe, a
// character device) is read whole into memory first, so that its size is known too.
class FileSource final : public ByteSource {
 public:
  FileSource(const std::string& path, std::string_view who)
      : path_(path), who_(who), file_(open_for_reading(path, who)) {
    struct stat st {};
    if (fstat(fileno(file_.get()), &st) != 0) fail("{}: {}: cannot read it: {}", who_, path_, os_error(errno));
    if (S_ISDIR(st.st_mode)) fail("{}: {}: cannot read it: {}", who_, path_, os_error(EISDIR));
    if (S_ISREG(st.st_mode)) {
      left_ = static_cast<std::uint64_t>(st.st_size);
      return;
    }
    char chunk[1 << 16];
    while (std::size_t n = raw_read(chunk, sizeof chunk)) whole_.append(chunk, n);
    memory_.emplace(whole_);
    left_ = whole_.size();
  }

  std::size_t read(void* dst, std::size_t n) override {
    if (n > left_) n = static_cast<std::size_t>(left_);  // never past the end the size says
    std::size_t got = memory_ ? memory_->read(dst, n) : raw_read(dst, n);
    left_ -= got;
    return got;
  }
  std::uint64_t remaining() const override { return left_; }

  // Back to the file's first byte.
  void restart() {
    if (memory_) {
      memory_.emplace(whole_);
      left_ = whole_.size();
      return;
    }
    if (fseeko(file_.get(), 0, SEEK_SET) != 0) fail("{}: {}: cannot read it: {}", who_, path_, os_error(errno));
    struct stat st {};
    if (fstat(fileno(file_.get()), &st) != 0) fail("{}: {}: cannot read it: {}", who_, path_, os_error(errno));
    left_ = static_cast<std::uint64_t>(st.st_size);
  }

  // Skips n bytes (at most those left).
  void skip(std::uint64_t n) {
    if (memory_) {
      std::string scratch(static_cast<std::size_t>(n), '\0');
      read(scratch.data(), scratch.size());
      return;
    }
    if (fseeko(file_.get(), static_cast<off_t>(n), SEEK_CUR) != 0)
      fail("{}: {}: cannot read it: {}", who_, path_, os_error(errno));
    left_ -= n;
  }

 private:
  std::size_t raw_read(void* dst, std::size_t n) {
    std::size_t got = std::fread(dst, 1, n, file_.get());
    if (got < n && std::ferror(file_.get())) fail("{}: {}: cannot read it: {}", who_, path_, os_error(errno));
    return got;
  }

  std::string path_;
  std::string_view who_;
  File file_;
  std::uint64_t left_ = 0;
  std::string whole_;
  std::optional<MemorySource> memory_;
};

std::string with_suffix(std::string path, std::string_view suffix) {
  if (!std::string_view(path).ends_with(suffix)) path += suffix;
  return path;
}

}  // namespace

std::string save_npy(std::string path, const NDArray& x, std::string_view who) {
  path = with_suffix(std::move(path), ".npy");
  const std::string preamble = npy_preamble(x.dtype(), x.shape());
  const HostBytes data = host_bytes(x);  // before the file is opened: a device's error leaves no file
  File f = open_for_writing(path, who);
  write_all(f.get(), preamble.data(), preamble.size(), path, who);
  write_all(f.get(), data.data, data.size, path, who);
  close_written(std::move(f), path, who);
  return path;
}

std::string save_npz(std::string path, std::span<const NamedArray> arrays, bool compressed, std::string_view who) {
  path = with_suffix(std::move(path), ".npz");
  write_npz(path, arrays, compressed, who);
  return path;
}

std::variant<NDArray, std::vector<NamedArray>> load(const std::string& path, Device device, std::string_view who) {
  GraphRecording::refuse_if_recording("reading a file");
  FileSource in(path, who);
  std::string lead(6, '\0');
  lead.resize(in.read(lead.data(), lead.size()));
  if (lead.empty()) fail("{}: {}: the file is empty", who, path);
  if (lead.starts_with("PK\x03\x04") || lead.starts_with("PK\x05\x06")) return read_npz(path, device, who);
  if (!std::string_view("\x93NUMPY").starts_with(lead)) {
    std::string shown;
    for (char c : lead) {
      auto u = static_cast<unsigned char>(c);
      shown += u >= 0x20 && u < 0x7f && c != '\\' ? std::string(1, c) : fmt::format("\\x{:02x}", u);
    }
    fail("{}: {}: not an .npy or .npz file (it starts with '{}'; .npy files start with '\\x93NUMPY', .npz files "
         "with 'PK')",
         who, path, shown);
  }
  in.restart();
  return read_npy(in, fmt::format("{}: {}", who, path), device);
}

void tofile(const NDArray& x, const std::string& path, std::string_view who) {
  const HostBytes data = host_bytes(x);
  File f = open_for_writing(path, who);
  write_all(f.get(), data.data, data.size, path, who);
  close_written(std::move(f), path, who);
}

NDArray fromfile(const std::string& path, DType dtype, std::optional<std::int64_t> count, std::int64_t offset,
                 Device device, std::string_view who) {
  GraphRecording::refuse_if_recording("reading a file");
  if (offset < 0) fail("{}: offset {} is negative", who, offset);
  if (count && *count < 0)
    fail("{}: count {} is negative; give a count of 0 or more, or none for the whole file", who, *count);
  FileSource in(path, who);
  const std::uint64_t size = in.remaining();
  const auto from = static_cast<std::uint64_t>(offset);
  if (from > size) fail("{}: {}: offset {} is past the file's end ({} bytes)", who, path, offset, size);
  const std::uint64_t left = size - from;
  const std::uint64_t item = itemsize(dtype);
  std::uint64_t n = 0;
  if (count) {
    n = static_cast<std::uint64_t>(*count);
    if (n > left / item)
      fail("{}: {}: count {} asks for {} bytes of {} from byte {}, but the file holds {} from there", who, path, n,
           n > std::numeric_limits<std::uint64_t>::max() / item ? std::string("2^64 or more")
                                                                : std::to_string(n * item),
           dtype_name(dtype), offset, left);
  } else {
    if (left % item != 0)
      fail("{}: {}: its {} bytes from byte {} are not a whole number of {} elements ({} bytes each); give count", who,
           path, left, offset, dtype_name(dtype), item);
    n = left / item;
  }
  in.skip(from);
  NDArray host = NDArray::empty({static_cast<std::int64_t>(n)}, dtype, device.is_cpu() ? device : Device::cpu());
  const std::size_t bytes = static_cast<std::size_t>(n * item);
  std::size_t got = 0;
  auto* data = static_cast<char*>(host.data());
  while (got < bytes) {
    std::size_t k = in.read(data + got, bytes - got);
    if (k == 0) break;
    got += k;
  }
  if (got < bytes) fail("{}: {}: file ends after {} of {} bytes", who, path, got, bytes);
  if (dtype == DType::Bool)
    for (std::size_t i = 0; i < bytes; ++i) data[i] = data[i] != 0 ? 1 : 0;
  return host.to(device);
}

}  // namespace luda::ops

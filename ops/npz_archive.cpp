#include "ops/npz_archive.h"

#include <zip.h>

#include <algorithm>
#include <limits>

#include "ops/npy_format.h"
#include "runtime/error.h"
#include "runtime/shared_library.h"

namespace luda::ops {
namespace {

// libzip's entry points, loaded with dlopen at the first .npz (LUDA_LIBZIP names the
// file). libzip.so.5 (libzip 1.10 and later) and .4 keep these functions alike.
struct Zip {
  SharedLibrary lib;
  decltype(&::zip_open) open = nullptr;
  decltype(&::zip_close) close = nullptr;
  decltype(&::zip_discard) discard = nullptr;
  decltype(&::zip_strerror) strerror = nullptr;
  decltype(&::zip_error_init_with_code) error_init_with_code = nullptr;
  decltype(&::zip_error_strerror) error_strerror = nullptr;
  decltype(&::zip_error_fini) error_fini = nullptr;
  decltype(&::zip_get_num_entries) get_num_entries = nullptr;
  decltype(&::zip_get_name) get_name = nullptr;
  decltype(&::zip_stat_index) stat_index = nullptr;
  decltype(&::zip_fopen_index) fopen_index = nullptr;
  decltype(&::zip_fread) fread = nullptr;
  decltype(&::zip_fclose) fclose = nullptr;
  decltype(&::zip_file_strerror) file_strerror = nullptr;
  decltype(&::zip_source_buffer_fragment) source_buffer_fragment = nullptr;
  decltype(&::zip_source_free) source_free = nullptr;
  decltype(&::zip_file_add) file_add = nullptr;
  decltype(&::zip_set_file_compression) set_file_compression = nullptr;
};

Zip load_zip() {
  // ORDER ZIP: the symbols in the order of Zip's fields.
  static const char* const symbols[] = {
      "zip_open",
      "zip_close",
      "zip_discard",
      "zip_strerror",
      "zip_error_init_with_code",
      "zip_error_strerror",
      "zip_error_fini",
      "zip_get_num_entries",
      "zip_get_name",
      "zip_stat_index",
      "zip_fopen_index",
      "zip_fread",
      "zip_fclose",
      "zip_file_strerror",
      "zip_source_buffer_fragment",
      "zip_source_free",
      "zip_file_add",
      "zip_set_file_compression",
  };
  LibrarySearch search{"LUDA_LIBZIP", "libzip.so", false, {"libzip.so.5", "libzip.so.4", "libzip.so"}};
  Zip z;
  z.lib = open_library("libzip", library_candidates(search), symbols,
                       "install it (Debian: apt-get install libzip4, or libzip5 on newer releases), or name the "
                       "file in LUDA_LIBZIP");
  void* const* s = z.lib.symbols.data();
  auto set = [&](auto& field) { field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(*s++); };
  set(z.open), set(z.close), set(z.discard), set(z.strerror), set(z.error_init_with_code);
  set(z.error_strerror), set(z.error_fini), set(z.get_num_entries), set(z.get_name), set(z.stat_index);
  set(z.fopen_index), set(z.fread), set(z.fclose), set(z.file_strerror), set(z.source_buffer_fragment);
  set(z.source_free), set(z.file_add), set(z.set_file_compression);
  return z;
}

const Zip& zip() { return load_once(load_zip); }

// libzip's words for an error code of zip_open.
std::string open_error(const Zip& z, int code) {
  zip_error_t e;
  z.error_init_with_code(&e, code);
  std::string text = z.error_strerror(&e);
  z.error_fini(&e);
  return text;
}

// An archive, discarded (nothing written) unless closed.
struct Archive {
  zip_t* z = nullptr;
  ~Archive() {
    if (z) zip().discard(z);
  }
};

// One member, read through libzip (which inflates it and checks its CRC at its end).
class MemberSource final : public ByteSource {
 public:
  MemberSource(zip_file_t* f, std::uint64_t size, std::string where) : f_(f), left_(size), where_(std::move(where)) {}
  ~MemberSource() override { zip().fclose(f_); }
  MemberSource(const MemberSource&) = delete;
  MemberSource& operator=(const MemberSource&) = delete;

  std::size_t read(void* dst, std::size_t n) override {
    zip_int64_t got = zip().fread(f_, dst, n);
    if (got < 0) fail("{}: cannot read it: {}", where_, zip().file_strerror(f_));
    left_ -= std::min(left_, static_cast<std::uint64_t>(got));
    return static_cast<std::size_t>(got);
  }
  std::uint64_t remaining() const override { return left_; }

 private:
  zip_file_t* f_;
  std::uint64_t left_;
  std::string where_;
};

}  // namespace

void write_npz(const std::string& path, std::span<const NamedArray> arrays, bool compressed, std::string_view who) {
  if (arrays.empty()) fail("{}: no arrays to save", who);
  // Every member's bytes, made before any is added: libzip reads them at zip_close.
  struct Member {
    std::string name, preamble;
    HostBytes data;
  };
  std::vector<Member> members;
  members.reserve(arrays.size());
  for (const NamedArray& a : arrays)
    members.push_back({a.name + ".npy", npy_preamble(a.array.dtype(), a.array.shape()), host_bytes(a.array)});

  const Zip& z = zip();
  int code = 0;
  Archive archive;
  archive.z = z.open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!archive.z) fail("{}: {}: cannot write it: {}", who, path, open_error(z, code));
  for (Member& m : members) {
    zip_buffer_fragment_t parts[2] = {
        {reinterpret_cast<zip_uint8_t*>(m.preamble.data()), m.preamble.size()},
        {const_cast<zip_uint8_t*>(reinterpret_cast<const zip_uint8_t*>(m.data.data)), m.data.size},
    };
    const zip_uint64_t nparts = m.data.size ? 2 : 1;
    zip_source_t* source = z.source_buffer_fragment(archive.z, parts, nparts, 0);
    if (!source) fail("{}: {}: cannot write it: {}", who, path, z.strerror(archive.z));
    zip_int64_t index = z.file_add(archive.z, m.name.c_str(), source, ZIP_FL_OVERWRITE);
    if (index < 0) {
      z.source_free(source);
      fail("{}: {}: cannot add {}: {}", who, path, m.name, z.strerror(archive.z));
    }
    if (z.set_file_compression(archive.z, static_cast<zip_uint64_t>(index), compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                               0) != 0)
      fail("{}: {}: cannot compress {}: {}", who, path, m.name, z.strerror(archive.z));
  }
  if (z.close(archive.z) != 0) fail("{}: {}: cannot write it: {}", who, path, z.strerror(archive.z));
  archive.z = nullptr;
}

std::vector<NamedArray> read_npz(const std::string& path, Device device, std::string_view who) {
  const Zip& z = zip();
  int code = 0;
  Archive archive;
  archive.z = z.open(path.c_str(), ZIP_RDONLY, &code);
  if (!archive.z) fail("{}: {}: cannot read it as a zip archive: {}", who, path, open_error(z, code));
  std::vector<NamedArray> out;
  const zip_int64_t count = z.get_num_entries(archive.z, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    const char* name = z.get_name(archive.z, index, 0);
    if (!name) fail("{}: {}: cannot read member {}: {}", who, path, i, z.strerror(archive.z));
    std::string member = name;
    if (!member.empty() && member.back() == '/') continue;  // a folder
    std::string where = fmt::format("{}: {}: {}", who, path, member);
    zip_stat_t st;
    if (z.stat_index(archive.z, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
      fail("{}: cannot read it: {}", where, z.strerror(archive.z));
    zip_file_t* f = z.fopen_index(archive.z, index, 0);
    if (!f) fail("{}: cannot read it: {}", where, z.strerror(archive.z));
    MemberSource in(f, st.size, where);
    NDArray a = read_npy(in, where, device);
    // One read more reaches the member's end, where libzip checks its CRC.
    char probe;
    in.read(&probe, 1);
    if (member.size() > 4 && member.ends_with(".npy")) member.resize(member.size() - 4);
    out.push_back({std::move(member), std::move(a)});
  }
  return out;
}

}  // namespace luda::ops

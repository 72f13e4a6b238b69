// NumPy's .npy and .npz formats (ops/npy_format.h, ops/npz_archive.h, ops/array_files.h):
// preambles checked byte for byte against numpy.save's (NumPy 1.24, pinned here); files
// NumPy writes in other ways (big-endian, Fortran order, versions 2.0 and 3.0) built by
// hand with their values known; every truncation and random corruption of a file either
// read or refused with an Error naming the problem; the pinned messages of each refusal.
// The round trips against NumPy itself are tests/lua/npy_spec.lua's.
#include "ops/npy_format.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ops/array_files.h"
#include "ops/npz_archive.h"
#include "runtime/error.h"

namespace luda::ops {
namespace {

namespace fs = std::filesystem;

// A cpu array of `shape` and `dtype` holding random bytes (bools 0 or 1).
NDArray random_array(const Shape& shape, DType dtype, std::mt19937& rng) {
  NDArray x = NDArray::empty(shape, dtype, Device::cpu());
  auto* p = static_cast<unsigned char*>(x.data());
  for (std::size_t i = 0; i < x.nbytes(); ++i)
    p[i] = static_cast<unsigned char>(dtype == DType::Bool ? rng() % 2 : rng() % 256);
  return x;
}

std::string bytes_of(const NDArray& x) {
  std::vector<std::byte> b = x.to_host_bytes();
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

NDArray read_bytes(const std::string& file) {
  MemorySource in(file);
  return read_npy(in, "load: t.npy", Device::cpu());
}

// The message of the Error that reading `file` raises ("" when it reads).
std::string error_of(const std::string& file) {
  try {
    read_bytes(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// An .npy file of version 1.0 around a header dict and data, as a writer other than
// luda's may make it.
std::string npy_file(std::string_view dict, std::string_view data) { return npy_wrap_header(dict) + std::string(data); }

// The same with a version byte and length of `length_bytes` (2.0 and 3.0: 4 bytes).
std::string npy_file_version(int major, std::string_view dict, std::string_view data) {
  std::string header = std::string(dict) + "\n";
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  for (int b = 0; b < 4; ++b) out += static_cast<char>((header.size() >> (8 * b)) & 0xff);
  return out + header + std::string(data);
}

TEST(NpyFormat, PreambleIsNumpySaves) {
  auto expect = [](DType t, const Shape& shape, std::string_view dict) {
    std::string want = std::string("\x93NUMPY\x01\x00v\x00", 10) + std::string(dict);
    want.append(127 - want.size(), ' ');
    want += '\n';
    EXPECT_EQ(want, npy_preamble(t, shape)) << dict;
  };
  expect(DType::Float64, {3}, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  expect(DType::Int16, {2, 3}, "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }");
  expect(DType::Bool, {}, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }");
  expect(DType::Complex64, {0, 5}, "{'descr': '<c8', 'fortran_order': False, 'shape': (0, 5), }");
  EXPECT_EQ(128u, npy_preamble(DType::Float64, {3}).size());
}

TEST(NpyFormat, DescrOfEveryDtype) {
  const char* want[] = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4",
                        "<u8", "<f4", "<f8", "<f2", "<V2", "<c8", "<c16"};  // ORDER DTYPE
  for (int t = 0; t < kNumDTypes; ++t) EXPECT_EQ(want[t], npy_descr(static_cast<DType>(t)));
}

TEST(NpyFormat, LongHeaderTakesVersion2) {
  std::string dict(70000, ' ');
  std::string p = npy_wrap_header(dict);
  EXPECT_EQ('\x02', p[6]);
  EXPECT_EQ(0u, p.size() % 64);
  EXPECT_EQ('\n', p.back());
  std::uint32_t len = 0;
  std::memcpy(&len, p.data() + 8, 4);
  EXPECT_EQ(p.size() - 12, len);
  EXPECT_EQ('\x01', npy_wrap_header("{}")[6]);
}

TEST(NpyFormat, RoundTripEveryDtypeAndShape) {
  std::mt19937 rng(7);
  const Shape shapes[] = {{}, {0}, {1}, {7}, {2, 0, 3}, {3, 4, 5}, {1, 1}};
  for (int t = 0; t < kNumDTypes; ++t) {
    for (const Shape& shape : shapes) {
      const auto dtype = static_cast<DType>(t);
      NDArray x = random_array(shape, dtype, rng);
      std::string file = npy_bytes(x);
      EXPECT_EQ(npy_preamble(dtype, shape).size() + x.nbytes(), file.size());
      NDArray y = read_bytes(file);
      EXPECT_EQ(dtype, y.dtype());
      EXPECT_EQ(shape, y.shape());
      EXPECT_TRUE(y.is_c_contiguous());
      EXPECT_EQ(bytes_of(x), bytes_of(y)) << dtype_name(dtype) << " " << shape_str(shape);
    }
  }
}

TEST(NpyFormat, NonContiguousIsWrittenInCOrder) {
  std::mt19937 rng(8);
  NDArray x = random_array({4, 6}, DType::Int32, rng);
  const std::int32_t* e = static_cast<const std::int32_t*>(x.data());
  NDArray t = x.transpose();  // (6, 4), strides (1, 6)
  NDArray y = read_bytes(npy_bytes(t));
  ASSERT_EQ((Shape{6, 4}), y.shape());
  const std::int32_t* f = static_cast<const std::int32_t*>(y.data());
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(e[j * 6 + i], f[i * 4 + j]);
}

TEST(NpyFormat, BigEndianIsSwapped) {
  // '>i4' 1, -2, 70000; '>c8' (1.5, -2); '>f2' 1.0; '>V2' bfloat16 1.0.
  NDArray a = read_bytes(npy_file("{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }",
                                  std::string("\0\0\0\x01\xff\xff\xff\xfe\0\x01\x11\x70", 12)));
  ASSERT_EQ(DType::Int32, a.dtype());
  const auto* i = static_cast<const std::int32_t*>(a.data());
  EXPECT_EQ(1, i[0]);
  EXPECT_EQ(-2, i[1]);
  EXPECT_EQ(70000, i[2]);
  NDArray c = read_bytes(
      npy_file("{'descr': '>c8', 'fortran_order': False, 'shape': (), }", std::string("\x3f\xc0\0\0\xc0\0\0\0", 8)));
  ASSERT_EQ(DType::Complex64, c.dtype());
  const auto* z = static_cast<const float*>(c.data());
  EXPECT_EQ(1.5f, z[0]);
  EXPECT_EQ(-2.0f, z[1]);
  NDArray h = read_bytes(
      npy_file("{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }", std::string("\x3c\x00", 2)));
  EXPECT_EQ(1.0f, Float16{*static_cast<const std::uint16_t*>(h.data())}.value());
  NDArray b = read_bytes(npy_file("{'descr': '>V2', 'fortran_order': False, 'shape': (1,), }", "\x3f\x80"));
  ASSERT_EQ(DType::BFloat16, b.dtype());
  EXPECT_EQ(1.0f, BFloat16{*static_cast<const std::uint16_t*>(b.data())}.value());
}

TEST(NpyFormat, FortranOrderGivesCOrder) {
  // shape (2, 3), column by column: a[0,0] a[1,0] a[0,1] a[1,1] a[0,2] a[1,2]
  std::string data;
  const std::int16_t f[] = {0, 10, 1, 11, 2, 12};
  data.assign(reinterpret_cast<const char*>(f), sizeof f);
  NDArray a = read_bytes(npy_file("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", data));
  ASSERT_EQ((Shape{2, 3}), a.shape());
  EXPECT_TRUE(a.is_c_contiguous());
  const auto* c = static_cast<const std::int16_t*>(a.data());
  const std::int16_t want[] = {0, 1, 2, 10, 11, 12};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(want[k], c[k]);
  // Three axes, big-endian too: element [i,j,k] = 100i + 10j + k at Fortran position i + 2j + 6k.
  std::string be(2 * 2 * 3 * 2, '\0');
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) {
        int v = 100 * i + 10 * j + k, at = 2 * (i + 2 * j + 6 * k);
        be[at] = static_cast<char>(v >> 8), be[at + 1] = static_cast<char>(v & 0xff);
      }
  NDArray b = read_bytes(npy_file("{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3, 2), }", be));
  const auto* u = static_cast<const std::uint16_t*>(b.data());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(100 * i + 10 * j + k, u[i * 6 + j * 2 + k]);
}

TEST(NpyFormat, Versions2And3AndOtherSpellingsRead) {
  const std::string data("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  for (int v : {2, 3}) {
    NDArray a = read_bytes(npy_file_version(v, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", data));
    EXPECT_EQ((Shape{2}), a.shape());
    EXPECT_EQ(2u, static_cast<const std::uint32_t*>(a.data())[1]);
  }
  // Keys in another order, double quotes, no trailing comma, Python 2's 3L, no padding.
  NDArray b = read_bytes(npy_file_version(2, "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<u4\"}", data));
  EXPECT_EQ(DType::UInt32, b.dtype());
  // A bool byte other than 0 or 1 reads as true (1).
  NDArray c = read_bytes(
      npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\0\x02\x01", 3)));
  EXPECT_EQ(std::string("\0\x01\x01", 3), bytes_of(c));
}

TEST(NpyFormat, ErrorsNameTheProblem) {
  const std::string where = "load: t.npy: ";
  auto dict = [](std::string_view descr, std::string_view fortran, std::string_view shape) {
    return fmt::format("{{'descr': {}, 'fortran_order': {}, 'shape': {}, }}", descr, fortran, shape);
  };
  const std::string ok = npy_file(dict("'<f8'", "False", "(5,)"), std::string(40, '\1'));
  EXPECT_EQ(where + "file ends after 12 of 40 bytes of data", error_of(ok.substr(0, 128 + 12)));
  EXPECT_EQ(where + "file ends inside the .npy preamble, after 7 bytes", error_of(ok.substr(0, 7)));
  EXPECT_EQ(where + "file ends inside the .npy header, after 20 of its 118 bytes", error_of(ok.substr(0, 30)));
  EXPECT_EQ(where + "not a NumPy .npy file (it starts with 'PK\\x03\\x04abcd'; NumPy's files start with '\\x93NUMPY')",
            error_of("PK\x03\x04"
                     "abcdefgh"));
  std::string v4 = ok;
  v4[6] = 4;
  EXPECT_EQ(where + "unsupported .npy format version 4.0; luda reads 1.0, 2.0 and 3.0", error_of(v4));
  EXPECT_EQ(where + "header of 70000 bytes is longer than the 10000 bytes numpy.load accepts",
            error_of(npy_file_version(2, std::string(69999, ' '), "")));
  EXPECT_EQ(where + "dtype '|O' holds Python objects, which luda cannot read",
            error_of(npy_file(dict("'|O'", "False", "(1,)"), std::string(8, '\0'))));
  EXPECT_EQ(where + "structured dtypes (a list of fields) are not supported",
            error_of(npy_file(dict("[('x', '<f4'), ('y', '<i4')]", "False", "(1,)"), std::string(8, '\0'))));
  EXPECT_EQ(where + "unsupported dtype '<U5'; luda reads |b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, <f2, <f4, "
                    "<f8, <c8, <c16 and <V2 (bfloat16), little- or big-endian",
            error_of(npy_file(dict("'<U5'", "False", "(1,)"), std::string(20, '\0'))));
  EXPECT_EQ(where + "unsupported dtype '<f16'; luda reads |b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, <f2, <f4, "
                    "<f8, <c8, <c16 and <V2 (bfloat16), little- or big-endian",
            error_of(npy_file(dict("'<f16'", "False", "(1,)"), std::string(16, '\0'))));
  EXPECT_EQ(where + "the .npy header's keys are 'descr', 'shape'; it must have exactly 'descr', 'fortran_order' and "
                    "'shape'",
            error_of(npy_file("{'descr': '<f8', 'shape': (1,)}", std::string(8, '\0'))));
  EXPECT_EQ(where + "the .npy header's shape has a negative extent -3",
            error_of(npy_file(dict("'<f8'", "False", "(2, -3)"), "")));
  EXPECT_EQ(0u, error_of(npy_file(dict("'<f8'", "False", "(3)"), std::string(24, '\0')))
                    .find(where + "the .npy header's shape is not a tuple of integers: '{'descr': '<f8', "
                                  "'fortran_order': False, 'shape': (3), }  "));
  EXPECT_EQ(where + "shape (4611686018427387904, 4) has 2^63 elements or more",
            error_of(npy_file(dict("'|u1'", "False", "(4611686018427387904, 4)"), "")));
  EXPECT_EQ(where + "shape (1152921504606846976,) of float64 needs 2^63 bytes or more",
            error_of(npy_file(dict("'<f8'", "False", "(1152921504606846976,)"), "")));
  // A shape the file is too short for is refused before anything is allocated.
  EXPECT_EQ(where + "file ends after 0 of 9223372036854775800 bytes of data",
            error_of(npy_file(dict("'<f8'", "False", "(1152921504606846975,)"), "")));
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  EXPECT_EQ(where + "shape has 65 axes; luda arrays have at most 64",
            error_of(npy_file(dict("'<f8'", "False", many + ")"), "")));
  EXPECT_EQ(0u, error_of(npy_file("{'descr' '<f8'}", ""))
                    .find(where + "malformed .npy header: expected ':' after a key at byte 9 of '{'descr' '<f8'}  "));
  EXPECT_EQ(0u, error_of(npy_file(std::string(40, '(') + std::string(40, ')'), ""))
                    .find(where + "malformed .npy header: values nested too deeply at byte 33 of '((((("));
}

TEST(NpyFormat, EveryTruncationIsRefused) {
  std::mt19937 rng(9);
  const std::string file = npy_bytes(random_array({3, 5}, DType::Float32, rng));
  for (std::size_t n = 0; n < file.size(); ++n) {
    std::string e = error_of(file.substr(0, n));
    EXPECT_NE(std::string::npos, e.find("file ends")) << n << ": " << e;
  }
  EXPECT_EQ("", error_of(file));
}

TEST(NpyFormat, RandomCorruptionReadsOrIsRefused) {
  // Random bytes changed in the preamble: every result is an array or an Error, and an
  // array's data is what the file holds.
  std::mt19937 rng(10);
  const std::string file = npy_bytes(random_array({4, 2}, DType::Int16, rng));
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = file;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) bad[rng() % 128] = static_cast<char>(rng() % 256);
    try {
      NDArray a = read_bytes(bad);
      EXPECT_LE(a.nbytes(), bad.size());
    } catch (const Error& e) {
      ++refused;
      EXPECT_EQ(0u, std::string(e.what()).find("load: t.npy: ")) << e.what();
    }
  }
  EXPECT_GT(refused, 100);
}

// ---- files and archives ---------------------------------------------------------------

class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("luda_npy_test_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void write(const std::string& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }
  static std::string error_of(auto f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(NpyFiles, SaveAppendsNpyAndLoadReadsIt) {
  std::mt19937 rng(11);
  NDArray x = random_array({2, 3}, DType::Float64, rng);
  EXPECT_EQ(path("a.npy"), save_npy(path("a"), x));
  EXPECT_EQ(npy_bytes(x), read(path("a.npy")));
  auto loaded = load(path("a.npy"), Device::cpu());
  ASSERT_TRUE(std::holds_alternative<NDArray>(loaded));
  EXPECT_EQ(bytes_of(x), bytes_of(std::get<NDArray>(loaded)));
}

TEST_F(NpyFiles, NpzRoundTripStoredAndCompressed) {
  std::mt19937 rng(12);
  std::vector<NamedArray> arrays = {{"arr_0", random_array({3}, DType::Int8, rng)},
                                    {"b", random_array({}, DType::Complex128, rng)},
                                    {"empty", random_array({0, 4}, DType::BFloat16, rng)},
                                    {"big", random_array({64, 64}, DType::Float32, rng)}};
  for (bool compressed : {false, true}) {
    std::string p = save_npz(path(compressed ? "z" : "s"), arrays, compressed, "savez");
    EXPECT_EQ(path(compressed ? "z.npz" : "s.npz"), p);
    auto loaded = load(p, Device::cpu());
    ASSERT_TRUE(std::holds_alternative<std::vector<NamedArray>>(loaded));
    auto& got = std::get<std::vector<NamedArray>>(loaded);
    ASSERT_EQ(arrays.size(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(arrays[i].name, got[i].name);
      EXPECT_EQ(arrays[i].array.dtype(), got[i].array.dtype());
      EXPECT_EQ(arrays[i].array.shape(), got[i].array.shape());
      EXPECT_EQ(bytes_of(arrays[i].array), bytes_of(got[i].array));
    }
  }
  // Deflate makes random float32 no smaller, but zeros much smaller.
  std::vector<NamedArray> zeros = {{"z", NDArray::zeros({1000}, DType::Float64, Device::cpu())}};
  save_npz(path("zs.npz"), zeros, false, "savez");
  save_npz(path("zc.npz"), zeros, true, "savez_compressed");
  EXPECT_LT(fs::file_size(path("zc.npz")) * 10, fs::file_size(path("zs.npz")));
}

TEST_F(NpyFiles, DamagedArchivesAreRefused) {
  std::mt19937 rng(13);
  std::vector<NamedArray> arrays = {{"x", random_array({10}, DType::Float64, rng)}};
  save_npz(path("d.npz"), arrays, false, "savez");
  const std::string whole = read(path("d.npz"));
  // Truncated: the central directory is gone.
  write(path("t.npz"), whole.substr(0, whole.size() / 2));
  EXPECT_EQ(0u, error_of([&] {
                  load(path("t.npz"), Device::cpu());
                }).find("load: " + path("t.npz") + ": cannot read it as a zip archive: "));
  // A data byte changed: the member's CRC no longer matches.
  std::string flipped = whole;
  const std::size_t at = whole.find("\x93NUMPY") + 128 + 3;
  flipped[at] = static_cast<char>(flipped[at] ^ 0x55);
  write(path("c.npz"), flipped);
  EXPECT_EQ("load: " + path("c.npz") + ": x.npy: cannot read it: CRC error",
            error_of([&] { load(path("c.npz"), Device::cpu()); }));
  // A member that is not an .npy file.
  std::string foreign = whole;
  foreign.replace(whole.find("\x93NUMPY"), 6, "hello!");
  write(path("f.npz"), foreign);
  EXPECT_EQ(0u, error_of([&] { load(path("f.npz"), Device::cpu()); }).find("load: " + path("f.npz") + ": x.npy: "));
  EXPECT_EQ("savez: no arrays to save", error_of([&] { save_npz(path("e"), {}, false, "savez"); }));
  EXPECT_EQ("savez: /nonexistent_luda_dir/x.npz: cannot write it: Failure to create temporary file: No such file or "
            "directory",
            error_of([&] { save_npz("/nonexistent_luda_dir/x", arrays, false, "savez"); }));
}

TEST_F(NpyFiles, LoadRefusesForeignAndMissingFiles) {
  write(path("x.txt"), "abc\x01");
  EXPECT_EQ("load: " + path("x.txt") +
                ": not an .npy or .npz file (it starts with 'abc\\x01'; .npy files start with '\\x93NUMPY', .npz files "
                "with 'PK')",
            error_of([&] { load(path("x.txt"), Device::cpu()); }));
  write(path("e.npy"), "");
  EXPECT_EQ("load: " + path("e.npy") + ": the file is empty", error_of([&] { load(path("e.npy"), Device::cpu()); }));
  EXPECT_EQ("load: " + path("none.npy") + ": cannot open it: No such file or directory",
            error_of([&] { load(path("none.npy"), Device::cpu()); }));
  EXPECT_EQ("load: " + dir_.string() + ": cannot read it: Is a directory",
            error_of([&] { load(dir_.string(), Device::cpu()); }));
  NDArray x = NDArray::zeros({2}, DType::Int8, Device::cpu());
  EXPECT_EQ("save: /nonexistent_luda_dir/x.npy: cannot open it for writing: No such file or directory",
            error_of([&] { save_npy("/nonexistent_luda_dir/x", x); }));
}

TEST_F(NpyFiles, TofileAndFromfile) {
  std::mt19937 rng(14);
  NDArray x = random_array({3, 4}, DType::Int32, rng);
  tofile(x.transpose(), path("raw"));
  EXPECT_EQ(bytes_of(x.transpose()), read(path("raw")));
  EXPECT_EQ(48u, read(path("raw")).size());
  NDArray all = fromfile(path("raw"), DType::Int32, std::nullopt, 0, Device::cpu());
  EXPECT_EQ(bytes_of(x.transpose()), bytes_of(all));
  NDArray part = fromfile(path("raw"), DType::Int16, 3, 10, Device::cpu());
  EXPECT_EQ(read(path("raw")).substr(10, 6), bytes_of(part));
  EXPECT_EQ((Shape{0}), fromfile(path("raw"), DType::Int8, std::nullopt, 48, Device::cpu()).shape());
  const std::string p = path("raw");
  EXPECT_EQ("fromfile: " + p + ": count 7 asks for 56 bytes of float64 from byte 0, but the file holds 48 from there",
            error_of([&] { fromfile(p, DType::Float64, 7, 0, Device::cpu()); }));
  EXPECT_EQ("fromfile: " + p + ": offset 49 is past the file's end (48 bytes)",
            error_of([&] { fromfile(p, DType::Float64, std::nullopt, 49, Device::cpu()); }));
  EXPECT_EQ("fromfile: " + p +
                ": its 45 bytes from byte 3 are not a whole number of float32 elements (4 bytes each); "
                "give count",
            error_of([&] { fromfile(p, DType::Float32, std::nullopt, 3, Device::cpu()); }));
  EXPECT_EQ("fromfile: " + p +
                ": count 9223372036854775807 asks for 2^64 or more bytes of complex128 from byte 0, but "
                "the file holds 48 from there",
            error_of([&] { fromfile(p, DType::Complex128, INT64_MAX, 0, Device::cpu()); }));
  EXPECT_EQ("fromfile: offset -1 is negative",
            error_of([&] { fromfile(p, DType::Int8, std::nullopt, -1, Device::cpu()); }));
  EXPECT_EQ("tofile: /nonexistent_luda_dir/r: cannot open it for writing: No such file or directory",
            error_of([&] { tofile(x, "/nonexistent_luda_dir/r"); }));
}

}  // namespace
}  // namespace luda::ops

// NumPy's .npy format (numpy.lib.format): a preamble (the magic "\x93NUMPY", the
// version, the header's length, and the header, a Python dict literal of descr,
// fortran_order and shape), then the elements' bytes. Written as numpy.save writes it
// (byte for byte) and read as numpy.load reads it. Pure host code over byte sources: the
// files and zip archives the bytes live in are ops/array_files.h's and ops/npz_archive.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ndarray.h"

namespace luda::ops {

// NumPy's spelling of a luda dtype in a header: '|b1', '|i1', '<i2', '<i4', '<i8', '|u1',
// '<u2', '<u4', '<u8', '<f2', '<f4', '<f8', '<c8', '<c16'. bfloat16, which NumPy lacks, is
// '<V2', what numpy.save writes for ml_dtypes.bfloat16: NumPy reads two raw bytes
// (np.load(f).view(ml_dtypes.bfloat16) gives the values back), and luda reads '<V2' and
// '|V2' as bfloat16.
std::string npy_descr(DType dtype);

// What a header says.
struct NpyHeader {
  DType dtype = DType::Float64;
  bool big_endian = false;     // the elements are stored big-endian ('>'), swapped when read
  bool fortran_order = false;  // the elements are stored in Fortran order
  Shape shape;
  int major_version = 1;          // 1, 2 or 3
  std::uint64_t data_offset = 0;  // the preamble's length: where the elements start
  std::uint64_t data_bytes = 0;   // size * itemsize
};

// The largest header read, as numpy.load's default max_header_size: a longer one is
// refused before it is read.
inline constexpr std::size_t kNpyMaxHeader = 10000;

// The preamble numpy.save writes before the elements of a C-order array of `dtype` and
// `shape`: the header dict with its keys sorted and room for the first extent to grow,
// padded with spaces and ended by '\n' so that the elements start at a multiple of 64
// bytes; version 1.0, or 2.0 when the header is too long for 1.0's 16-bit length.
std::string npy_preamble(DType dtype, const Shape& shape);
// The preamble around a header dict's text: what npy_preamble wraps its dict in.
std::string npy_wrap_header(std::string_view dict);

// A sequence of bytes read from its start: a file, a zip archive's member, memory. It
// knows how many bytes are left, so that a header promising more than there is is refused
// before anything is allocated or read.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes into dst and returns how many: fewer only at the end. Throws
  // Error on a failed read.
  virtual std::size_t read(void* dst, std::size_t n) = 0;
  // The bytes left to read.
  virtual std::uint64_t remaining() const = 0;
};

// Bytes held in memory.
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  std::size_t read(void* dst, std::size_t n) override;
  std::uint64_t remaining() const override { return bytes_.size() - at_; }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

// Reads the preamble from the start of `in`, which is left at the elements. `where` starts
// every error ("load: data.npy"), followed by the problem: "not a NumPy .npy file (it
// starts with 'PK\x03\x04'; NumPy's files start with '\x93NUMPY')", "file ends inside the
// .npy preamble, after 7 bytes", "unsupported .npy format version 4.0; luda reads 1.0, 2.0
// and 3.0", "header of 70000 bytes is longer than the 10000 bytes numpy.load accepts",
// "malformed header: ... at byte 12 of {...}", "header's keys are ...", "dtype '|O' holds
// Python objects, which luda cannot read", "structured dtypes (a list of fields) are not
// supported", "unsupported dtype '<U5'; luda reads ...", "shape (...) has 65 axes; luda
// arrays have at most 64", "shape (...) of float64 needs 2^63 bytes or more".
NpyHeader read_npy_header(ByteSource& in, std::string_view where);

// The array whose .npy bytes `in` holds, on `device`: C order whatever the file's order,
// the elements in the host's byte order, bools 0 or 1. Errors as read_npy_header, and
// "file ends after 12 of 40 bytes of data" (nothing allocated or read when the source
// says so at the start).
NDArray read_npy(ByteSource& in, std::string_view where, Device device);

// An array's elements in C order on the host: the array's own memory when it is a
// C-contiguous cpu array (kept alive here), else a copy.
struct HostBytes {
  NDArray kept;
  std::vector<std::byte> copy;
  const std::byte* data = nullptr;
  std::size_t size = 0;
};
HostBytes host_bytes(const NDArray& x);

// The whole .npy file of x (preamble and elements), as luda.save writes it.
std::string npy_bytes(const NDArray& x);

}  // namespace luda::ops

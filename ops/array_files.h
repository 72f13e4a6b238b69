// Arrays in files, as NumPy's functions: numpy.save and numpy.load (.npy, and .npz
// through ops/npz_archive.h), ndarray.tofile and numpy.fromfile (raw elements, no header).
// Every error names the function, the file and the problem ("load: data.npy: file ends
// after 12 of 40 bytes of data"; "save: out/x.npy: cannot open it for writing: No such
// file or directory"); nothing past a file's end is read.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ops/npz_archive.h"
#include "runtime/ndarray.h"

namespace luda::ops {

// numpy.save: x (any device, any strides) as an .npy file in C order at `path`, with
// ".npy" appended when the path does not end with it, as NumPy appends it. Returns the
// path written.
std::string save_npy(std::string path, const NDArray& x, std::string_view who = "save");

// numpy.savez / numpy.savez_compressed: ".npz" appended as NumPy does. Returns the path.
std::string save_npz(std::string path, std::span<const NamedArray> arrays, bool compressed, std::string_view who);

// numpy.load: the file's first bytes decide: NumPy's magic gives one array, a zip
// archive's signature ("PK\x03\x04", or "PK\x05\x06" for an empty one) its arrays by name.
// Errors: "load: data.bin: not an .npy or .npz file (it starts with 'abcd'; .npy files start
// with '\x93NUMPY', .npz files with 'PK')"; "load: data.npy: cannot open it: No such file
// or directory"; and read_npy's and read_npz's.
std::variant<NDArray, std::vector<NamedArray>> load(const std::string& path, Device device,
                                                    std::string_view who = "load");

// ndarray.tofile: x's elements in C order, the host's byte order, no header.
void tofile(const NDArray& x, const std::string& path, std::string_view who = "tofile");

// numpy.fromfile (binary): `count` elements of `dtype` (nullopt: all there are) from byte
// `offset` of the file. Errors: "fromfile: x.bin: offset 20 is past the file's end (16
// bytes)", "fromfile: x.bin: count 5 asks for 40 bytes of float64 from byte 0, but the
// file holds 16", "fromfile: x.bin: its 13 bytes from byte 0 are not a whole number of
// float32 elements (4 bytes each); give count", negative count or offset.
NDArray fromfile(const std::string& path, DType dtype, std::optional<std::int64_t> count, std::int64_t offset,
                 Device device, std::string_view who = "fromfile");

}  // namespace luda::ops

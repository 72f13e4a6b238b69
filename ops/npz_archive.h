// NumPy's .npz: a zip archive of .npy files, one per array, each named "<name>.npy"
// (numpy.savez, numpy.savez_compressed, numpy.load). libzip reads and writes the archive;
// it is loaded with dlopen at the first .npz (LUDA_LIBZIP names the file), as luda loads
// its other optional libraries, so that a program that never touches an .npz needs
// neither libzip nor what libzip links (zlib, bzip2, OpenSSL's libcrypto).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ndarray.h"

namespace luda::ops {

struct NamedArray {
  std::string name;  // without ".npy"
  NDArray array;
};

// Writes `arrays` to a new archive at `path` (replacing a file there), each as
// "<name>.npy" in C order (ops/npy_format.h), stored, or deflated when `compressed`.
// `who` starts the errors: "savez: out/x.npz: cannot write it: Failure to create temporary
// file: No such file or directory" (libzip's words), "savez: no arrays to save".
void write_npz(const std::string& path, std::span<const NamedArray> arrays, bool compressed, std::string_view who);

// Every member of the archive at `path`, in the archive's order, each named without its
// ".npy", on `device`. Errors name the archive and the member: "load: d.npz: x.npy: file
// ends after 12 of 40 bytes of data"; "load: d.npz: cannot read it as a zip archive: Not
// a zip archive"; "load: d.npz: x.npy: cannot read it: CRC error" (libzip's words).
std::vector<NamedArray> read_npz(const std::string& path, Device device, std::string_view who);

}  // namespace luda::ops

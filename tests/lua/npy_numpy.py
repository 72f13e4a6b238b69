"""NumPy's side of tests/lua/npy_spec.lua: the round trips of .npy and .npz files between
luda and NumPy itself, run with Debian's /usr/bin/python3.

  npy_numpy.py check DIR   reads DIR/manifest.txt, written by the spec after luda saved
                           the files: each line "file member dtype shape hex" (member "-"
                           for an .npy file, shape as 2x3 or "-" for 0-d, hex the elements'
                           expected C-order little-endian bytes, "-" when there are none).
                           NumPy loads each file and compares dtype, shape and bytes; an
                           .npy file of a NumPy dtype must also be byte for byte what
                           numpy.save writes. Prints "ok N", or each mismatch and exits 1.
  npy_numpy.py write DIR   writes arrays of every dtype in the ways NumPy can (C and
                           Fortran order, big-endian, format versions 1.0 and 2.0, .npz
                           stored and compressed) with random values, and DIR/manifest.txt
                           in the same form, for the spec to load with luda and compare.
"""
import io
import os
import sys

import numpy as np

# luda's dtype names and NumPy's dtypes; bfloat16, which NumPy lacks, is two raw bytes
# ('<V2', as numpy.save writes ml_dtypes.bfloat16).
DTYPES = {
    "bool": np.dtype("?"), "int8": np.dtype("i1"), "int16": np.dtype("<i2"), "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"), "uint8": np.dtype("u1"), "uint16": np.dtype("<u2"), "uint32": np.dtype("<u4"),
    "uint64": np.dtype("<u8"), "float16": np.dtype("<f2"), "bfloat16": np.dtype("V2"),
    "float32": np.dtype("<f4"), "float64": np.dtype("<f8"), "complex64": np.dtype("<c8"),
    "complex128": np.dtype("<c16"),
}


def shape_text(shape):
    return "x".join(str(n) for n in shape) if shape else "-"


def parse_shape(text):
    return () if text == "-" else tuple(int(n) for n in text.split("x"))


def c_bytes(a):
    """The elements' C-order little-endian bytes, as hex."""
    if a.dtype.kind != "V":
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
    h = np.ascontiguousarray(a).tobytes().hex()
    return h or "-"


def check(folder):
    failures, count = [], 0
    with open(os.path.join(folder, "manifest.txt")) as f:
        lines = [line.split() for line in f if line.strip()]
    opened = {}
    for name, member, dtype, shape, want in lines:
        path = os.path.join(folder, name)
        if member == "-":
            a = np.load(path)
        else:
            if path not in opened:
                opened[path] = np.load(path)
            a = opened[path][member]
        what = f"{name} {member} {dtype}"
        count += 1
        if a.dtype != DTYPES[dtype]:
            failures.append(f"{what}: dtype {a.dtype.str}, expected {DTYPES[dtype].str}")
            continue
        if a.shape != parse_shape(shape):
            failures.append(f"{what}: shape {a.shape}, expected {parse_shape(shape)}")
            continue
        if c_bytes(a) != want:
            failures.append(f"{what}: bytes {c_bytes(a)[:64]}..., expected {want[:64]}...")
            continue
        if member == "-" and dtype != "bfloat16":
            saved = io.BytesIO()
            np.save(saved, a)
            with open(path, "rb") as g:
                if g.read() != saved.getvalue():
                    failures.append(f"{what}: the file is not what numpy.save writes")
    for line in failures:
        print(line)
    print(f"ok {count - len(failures)} of {count}")
    return 1 if failures else 0


def random_array(rng, dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == "bfloat16":
        # bfloat16's bits: a float32's upper half (the values luda checks are these bits).
        bits = (rng.uniform(-100, 100, shape).astype(np.float32).view(np.uint32) >> 16).astype("<u2")
        return bits.view("V2")
    d = DTYPES[dtype]
    if d.kind in "iu":
        info = np.iinfo(d)
        return rng.integers(info.min, info.max, shape, dtype=d, endpoint=True)
    if d.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(d)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d)


def write(folder):
    rng = np.random.default_rng(20240611)
    lines = []

    def note(name, member, dtype, a):
        lines.append(f"{name} {member} {dtype} {shape_text(a.shape)} {c_bytes(a)}")

    for dtype in DTYPES:
        for k, shape in enumerate([(), (0,), (1,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]):
            a = random_array(rng, dtype, shape)
            name = f"{dtype}_{k}"
            np.save(os.path.join(folder, name + "_c.npy"), a)
            note(name + "_c.npy", "-", dtype, a)
            if a.ndim >= 2:
                f = np.asfortranarray(a)
                np.save(os.path.join(folder, name + "_f.npy"), f)  # fortran_order: True
                note(name + "_f.npy", "-", dtype, a)
            if a.dtype.kind != "V" and a.dtype.itemsize > 1:
                b = a.astype(a.dtype.newbyteorder(">"))
                np.save(os.path.join(folder, name + "_be.npy"), np.asfortranarray(b) if a.ndim >= 2 else b)
                note(name + "_be.npy", "-", dtype, a)
            with open(os.path.join(folder, name + "_v2.npy"), "wb") as g:
                np.lib.format.write_array(g, a, version=(2, 0))
            note(name + "_v2.npy", "-", dtype, a)
    # .npz: positional (arr_0, arr_1) and named arrays, stored and compressed.
    x = random_array(rng, "float32", (4, 5))
    y = random_array(rng, "int64", (7,))
    z = random_array(rng, "complex128", ())
    w = random_array(rng, "bool", (2, 0))
    np.savez(os.path.join(folder, "pos.npz"), x, y)
    note("pos.npz", "arr_0", "float32", x)
    note("pos.npz", "arr_1", "int64", y)
    np.savez_compressed(os.path.join(folder, "named.npz"), alpha=z, beta=w, gamma=np.asfortranarray(x))
    note("named.npz", "alpha", "complex128", z)
    note("named.npz", "beta", "bool", w)
    note("named.npz", "gamma", "float32", x)
    with open(os.path.join(folder, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)}")
    return 0


if __name__ == "__main__":
    command, folder = sys.argv[1], sys.argv[2]
    sys.exit(check(folder) if command == "check" else write(folder))

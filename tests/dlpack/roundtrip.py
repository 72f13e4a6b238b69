"""DLPack between PyTorch, CuPy or NumPy and luda, without copies: a tensor goes to luda
(tests/dlpack/dlpack_probe.cpp, loaded with ctypes), a luda kernel changes it in place, and
the array comes back. The pointers and strides must be the producer's, the values 2 * x + 1.
PyTorch's cpu and cuda tensors and CuPy's arrays where those are installed (the GPU
machines), else NumPy's; exits 77 (a skip for ctest) where none is.

    python3 tests/dlpack/roundtrip.py build/tests/libdlpack_probe.so
"""
import ctypes
import sys

try:
    import torch
    import torch.utils.dlpack
except ImportError:
    torch = None
try:
    import numpy
except ImportError:
    numpy = None
if torch is None and numpy is None:
    print("neither PyTorch nor NumPy: skipped")
    sys.exit(77)

probe = ctypes.CDLL(sys.argv[1])
probe.luda_dlpack_twice_plus_one.restype = ctypes.c_void_p
probe.luda_dlpack_twice_plus_one.argtypes = [ctypes.c_void_p]
api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def luda_capsule(capsule):
    """The producer's capsule to luda and back: luda's capsule of the same memory."""
    managed = api.PyCapsule_GetPointer(capsule, b"dltensor")
    api.PyCapsule_SetName(capsule, b"used_dltensor")  # luda owns it now (DLPack's protocol)
    back = probe.luda_dlpack_twice_plus_one(managed)
    if not back:
        raise SystemExit("luda refused the tensor")
    return api.PyCapsule_New(back, b"dltensor", None)


def through_luda(t):
    return torch.utils.dlpack.from_dlpack(luda_capsule(torch.utils.dlpack.to_dlpack(t)))


class Exported:
    """What numpy.from_dlpack takes: an object with __dlpack__ and __dlpack_device__."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


failures = 0
if torch is None:
    rng = numpy.random.default_rng(7)
    cases = {
        "float32 contiguous": rng.random(1000, dtype=numpy.float32),
        "float64 every other column": rng.random((64, 40))[:, ::2],
        "int32 transposed, reversed": rng.integers(-100, 100, (33, 17), dtype=numpy.int32).T[::-1],
        "float32 empty": numpy.zeros((0, 5), dtype=numpy.float32),
    }
    for name, a in cases.items():
        expect = a * 2 + 1
        u = numpy.from_dlpack(Exported(luda_capsule(a.__dlpack__())))
        ok = (u.ctypes.data == a.ctypes.data and u.strides == a.strides and u.dtype == a.dtype
              and numpy.array_equal(u, expect) and numpy.array_equal(a, u))
        print(f"numpy {name}: pointer {'kept' if u.ctypes.data == a.ctypes.data else 'CHANGED'}, "
              f"strides {u.strides} (numpy's {a.strides}), values {'2x+1' if numpy.array_equal(u, expect) else 'WRONG'}")
        failures += not ok
    print("ok" if not failures else f"{failures} FAILED")
    sys.exit(1 if failures else 0)

devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
for device in devices:
    g = torch.Generator(device="cpu").manual_seed(7)
    cases = {
        "float32 contiguous": torch.rand(1000, generator=g).to(device),
        "float64 every other column": torch.rand(64, 40, generator=g, dtype=torch.float64).to(device)[:, ::2],
        "int32 transposed": torch.randint(-100, 100, (33, 17), generator=g, dtype=torch.int32).to(device).t(),
        "float32 empty": torch.zeros(0, 5, device=device),
    }
    for name, t in cases.items():
        before = t.clone()
        pointer, strides = t.data_ptr(), t.stride()
        u = through_luda(t)
        ok = (u.data_ptr() == pointer and u.stride() == strides and u.shape == t.shape and u.dtype == t.dtype
              and u.device == t.device and torch.equal(u, before * 2 + 1) and torch.equal(t, u))
        print(f"{device} {name}: pointer {'kept' if u.data_ptr() == pointer else 'CHANGED'}, "
              f"strides {u.stride()} (torch's {strides}), values {'2x+1' if torch.equal(u, before * 2 + 1) else 'WRONG'}")
        failures += not ok

try:
    import cupy
    if torch.cuda.is_available():
        x = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)[:, 1:]
        pointer = x.data.ptr
        y = cupy.from_dlpack(through_luda(torch.utils.dlpack.from_dlpack(x)))
        ok = y.data.ptr == pointer and bool((y == cupy.arange(12, dtype=cupy.float32).reshape(3, 4)[:, 1:] * 2 + 1).all())
        print(f"cupy -> torch -> luda -> cupy: pointer {'kept' if y.data.ptr == pointer else 'CHANGED'}, "
              f"values {'2x+1' if ok else 'WRONG'}")
        failures += not ok
except ImportError:
    print("no CuPy: its case skipped")

print("ok" if not failures else f"{failures} FAILED")
sys.exit(1 if failures else 0)

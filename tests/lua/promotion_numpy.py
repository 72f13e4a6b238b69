#!/usr/bin/env python3
"""Writes tests/lua/promotion_numpy.lua: what NumPy 2 gives when arrays meet typed scalars,
Python ints and floats, and arrays of other dtypes, for the cases promotion_spec.lua runs
through luda's array operations, vectorize, fuse, elementwise and cuda.jit.

    python3 tests/lua/promotion_numpy.py > tests/lua/promotion_numpy.lua

A Python int stands for a Lua integer, a Python float for a Lua float, a NumPy scalar
(np.int64(-2)) for a typed scalar (luda.int64(-2)). Where luda's documented meaning differs
from NumPy's the reference follows luda's, and the case says so (`note`): atan2 and hypot of
integers only compute in float64 in luda (NumPy picks float16 for int8, float32 for int16;
luda computes them in float64), with NumPy deciding all the same whether the int converts.

float16, bfloat16, complex64 and complex128 take NumPy 2's rules too, through the kernel
language as well (new_dtype_cases). NumPy has no bfloat16: its cases follow ml_dtypes,
hard-coded here (BF16_PROMOTION), with values computed in float32 and rounded to the
nearest bfloat16, ties to even, as ml_dtypes computes them.
"""
import math
import re

import numpy as np

# Array operands: dtype -> values (3 elements, no zero, so that // and % are defined).
ARRAYS = {
    "bool": [True, False, True],
    "int8": [3, -5, 127],
    "uint8": [250, 3, 1],
    "int16": [-300, 7, 32767],
    "uint16": [65535, 2, 9],
    "int32": [-70000, 11, 2**31 - 1],
    "uint32": [7, 9, 2**32 - 1],
    "int64": [2**53 + 1, -3, 2**63 - 1],
    "uint64": [2**63 + 1, 5, 2**53 + 1],
    "float32": [1.5, -2.25, 3.0],
    "float64": [0.1, -7.5, 1e300],
    # int64 against uint64 where float64 (NumPy 1, and a common dtype) or int64 (C++'s
    # conversion) would compare wrongly: 2^53 + 1 against 2^53, 2^63 - 1 against 2^63, -1
    # against 2^64 - 1.
    "int64_edge": [2**53 + 1, -1, 2**63 - 1, 0],
    "uint64_edge": [2**53, 2**64 - 1, 2**63, 0],
    "float16": [1.5, -2.25, 10.0],
    "bfloat16": [1.5, -2.25, 10.0],
    "complex64": [complex(1.5, 2.0), complex(-2.25, 0.5), complex(3.0, -1.0)],
    "complex128": [complex(0.1, -7.5), complex(2.0, 0.0), complex(-1.0, 1e5)],
}

# luda's name -> NumPy's ufunc, and the Lua expression of it for vectorize and fuse.
OPS = {
    "add": (np.add, "a + b"),
    "subtract": (np.subtract, "a - b"),
    "multiply": (np.multiply, "a * b"),
    "floor_divide": (np.floor_divide, "a // b"),
    "mod": (np.mod, "a % b"),
    "divide": (np.true_divide, "a / b"),
    "atan2": (np.arctan2, "math.atan(a, b)"),
    "hypot": (np.hypot, "luda.math.hypot(a, b)"),
    "less": (np.less, "a < b"),
    "greater": (np.greater, "a > b"),
    "less_equal": (np.less_equal, "a <= b"),
    "greater_equal": (np.greater_equal, "a >= b"),
    "equal": (np.equal, "a == b"),
    "not_equal": (np.not_equal, "a ~= b"),
    "maximum": (np.maximum, "math.max(a, b)"),
    "minimum": (np.minimum, "math.min(a, b)"),
    "fmax": (np.fmax, "math.max(a, b)"),
    "bitwise_and": (np.bitwise_and, "a & b"),
    "logical_and": (np.logical_and, "a ~= 0 and b ~= 0"),
    "clip": (np.clip, None),
}
ARRAY_ONLY = {"fmax", "bitwise_and", "logical_and", "clip"}  # no vectorize, fuse or cuda.jit text
FLOAT_MATH = {"atan2", "hypot"}
ARITHMETIC = ["add", "subtract", "multiply", "floor_divide", "mod"]
COMPARISONS = ["less", "greater", "less_equal", "greater_equal", "equal", "not_equal"]


# ml_dtypes' promotion of bfloat16 (NumPy lacks the type): with float16 float32; with
# int8, uint8 and bool itself; with wider integers what float16 gives; with float32,
# float64 and the complex types what float32 gives with them.
def bf16_promote(other):
    if other in ("bfloat16", "int8", "uint8", "bool"):
        return "bfloat16"
    if other == "float16":
        return "float32"
    return np.result_type(np.float16 if "int" in other else np.float32, np.dtype(other)).name


def bf16_round(x):
    """float32 values rounded to the nearest bfloat16, ties to even (as float32)."""
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


def operand(desc):
    kind = desc[0]
    if kind == "array":
        dtype = "float32" if desc[1] == "bfloat16" else desc[1]  # bfloat16 values are exact in float32
        return np.array(ARRAYS[desc[2] if len(desc) > 2 else desc[1]], dtype=dtype)
    if kind == "typed":
        return np.dtype(desc[1]).type(desc[2])
    return desc[1]  # a Python int, float or complex


def is_float_math_on_ints(op, a, b):
    """atan2/hypot where no operand is a float: luda computes in float64."""
    def floaty(x):
        return isinstance(x, float) or np.issubdtype(np.asarray(x).dtype, np.floating)
    return op in FLOAT_MATH and not floaty(a) and not floaty(b)


def bf16_outcome(op, da, db):
    """A case with a bfloat16 array: ml_dtypes' dtype, NumPy's values in it."""
    other = db if da[1] == "bfloat16" and da[0] == "array" else da
    if other[0] == "array" or other[0] == "typed":
        dtype = bf16_promote(other[1])
    elif other[0] == "complex":
        dtype = "complex64"
    else:
        dtype = "bfloat16"  # a Lua int or float
    ufunc = OPS[op][0]
    a, b = operand(da), operand(db)
    work = "float32" if dtype == "bfloat16" else dtype
    with np.errstate(all="ignore"):
        r = ufunc(np.asarray(a, dtype=work) if not isinstance(a, (int, float, complex)) else a,
                  np.asarray(b, dtype=work) if not isinstance(b, (int, float, complex)) else b)
    if r.dtype == np.bool_:
        return {"dtype": "bool", "values": r.tolist()}
    r = np.asarray(r, dtype=work)
    if dtype == "bfloat16":
        r = bf16_round(r)
    return {"dtype": dtype, "values": r.reshape(-1).tolist()}


def outcome(op, da, db, dc=None):
    if "bfloat16" in (da[1], db[1]):
        return bf16_outcome(op, da, db)
    ufunc = OPS[op][0]
    a, b = operand(da), operand(db)
    try:
        with np.errstate(all="ignore"):
            r = ufunc(a, b) if dc is None else ufunc(a, b, operand(dc))
    except OverflowError as e:
        return {"numpy_error": str(e)}
    note = None
    if is_float_math_on_ints(op, a, b) and r.dtype != np.float64:
        note = "NumPy computes in %s; luda in float64" % r.dtype
        with np.errstate(all="ignore"):
            r = ufunc(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    out = {"dtype": str(r.dtype), "values": [v for v in np.asarray(r).reshape(-1).tolist()]}
    if r.dtype == np.float16 or r.dtype == np.complex64:  # exact in a double
        out["values"] = [complex(v) if isinstance(v, complex) else float(v) for v in out["values"]]
    if r.dtype == np.uint64:  # Lua integers are int64: the values as their bits
        out["values"] = [v - 2**64 if v >= 2**63 else v for v in out["values"]]
    if note:
        out["note"] = note
    return out


def lua_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, complex):
        return "{ %s, %s }" % (lua_value(v.real), lua_value(v.imag))
    if isinstance(v, int):
        if v == -2**63:
            return "math.mininteger"
        return str(v)
    if math.isinf(v) or math.isnan(v):
        raise ValueError("no inf or nan in references")
    return repr(float(v))  # the shortest text that reads back exactly


def lua_operand(desc):
    if desc[0] == "array":
        return '{ "array", "%s"%s }' % (desc[1], ', "%s"' % desc[2] if len(desc) > 2 else "")
    if desc[0] == "complex":  # luda.complex(re, im): Python's complex, weak
        return '{ "complex", %s, %s }' % (lua_value(desc[1].real), lua_value(desc[1].imag))
    if desc[0] == "typed" and isinstance(desc[2], complex):
        return '{ "typed", "%s", %s, %s }' % (desc[1], lua_value(desc[2].real), lua_value(desc[2].imag))
    if desc[0] == "typed":
        v = desc[2]
        if desc[1] == "uint64" and v >= 2**63:
            v = float(v)  # luda.uint64 takes 2^63 and above as an exact float
            assert int(v) == desc[2]
        return '{ "typed", "%s", %s }' % (desc[1], lua_value(v))
    return '{ "%s", %s }' % (desc[0], lua_value(desc[1]))


def case(op, da, db, paths, dc=None):
    o = outcome(op, da, db, dc)
    parts = ['op = "%s"' % op, "a = " + lua_operand(da), "b = " + lua_operand(db)]
    if dc is not None:
        parts.append("c = " + lua_operand(dc))
    parts.append("paths = { %s }" % ", ".join('"%s"' % p for p in paths))
    if "numpy_error" in o:
        m = re.fullmatch(r"Python integer (-?\d+) out of bounds for (\w+)", o["numpy_error"])
        assert m, o["numpy_error"]
        parts.append('overflow = { %s, "%s" }' % (lua_value(int(m.group(1))), m.group(2)))
        parts.append('numpy = "%s"' % o["numpy_error"])
    else:
        parts.append('dtype = "%s"' % o["dtype"])
        parts.append("values = { %s }" % ", ".join(lua_value(v) for v in o["values"]))
        if "note" in o:
            parts.append('note = "%s"' % o["note"])
    return "  { " + ", ".join(parts) + " },"


def cases():
    """Chosen so that each path compiles a few hundred specializations at most (each
    (operation, operand types) pair is one): every operation on int8, uint8 and uint64
    arrays, a sample elsewhere."""
    out = []
    # int64 against uint64: compared exactly, in every order and path (first: these cases
    # show the exactness alone).
    i64, u64 = ("array", "int64", "int64_edge"), ("array", "uint64", "uint64_edge")
    for op in COMPARISONS:
        more = ["vectorize", "fuse", "jit"] if op in ("less", "equal", "greater_equal") else []
        out.append(case(op, i64, u64, ["ufunc"] + more))
        out.append(case(op, u64, i64, ["ufunc"] + more[:1]))
    for op in COMPARISONS:
        for v in [-1, -2**63, 2**63 - 1]:
            out.append(case(op, u64, ("int", v), ["ufunc"] + (["vectorize", "fuse", "jit"] if op == "less" else [])))
    for op in COMPARISONS:
        out.append(case(op, u64, ("typed", "int64", -1), ["ufunc", "vectorize"]))
        out.append(case(op, i64, ("typed", "uint64", 2**63), ["ufunc", "vectorize"]))
        out.append(case(op, u64, ("typed", "int64", 2**53 + 1), ["ufunc"]))
    # Typed scalars of another dtype take part in promotion as 0-d arrays do.
    typed = [("float32", ("typed", "int64", -2)), ("uint32", ("typed", "int32", 4)),
             ("int8", ("typed", "uint16", 2)), ("uint8", ("typed", "int8", -2)),
             ("int16", ("typed", "float32", 2.5)), ("int32", ("typed", "float32", 0.5)),
             ("int64", ("typed", "uint64", 2**53 + 1)), ("uint64", ("typed", "int64", -1)),
             ("float32", ("typed", "float64", -1.5)), ("bool", ("typed", "int8", 3))]
    for dtype, scalar in typed:
        for op in ["add", "floor_divide", "divide", "less", "maximum"]:
            out.append(case(op, ("array", dtype), scalar, ["ufunc"]))
    for op in ["subtract", "floor_divide", "less"]:
        out.append(case(op, ("typed", "int64", -2), ("array", "float32"), ["ufunc"]))
        out.append(case(op, ("typed", "uint16", 2), ("array", "int8"), ["ufunc"]))
    # Lua integers: the array's dtype where they fit it, NumPy's OverflowError where they
    # do not, floats where the operation computes in float, exact comparisons.
    ints = [3, -1, 300, 1000, 70000, 2**40, 2**63 - 1, -2**63]
    kinds = ["add", "floor_divide", "divide", "atan2", "less", "equal", "maximum"]
    for dtype in ["int8", "uint8", "uint64"]:
        for op in [op for op in OPS if op != "clip"]:
            for v in ints:
                out.append(case(op, ("array", dtype), ("int", v), ["ufunc"] + (["vectorize", "fuse"] if op in kinds else [])))
    for op in ["add", "floor_divide", "divide", "hypot", "less", "maximum"]:
        for v in ints:
            if op == "floor_divide" and abs(v) > 2**40:
                continue  # float32: luda's floor(a / b) and NumPy's divmod part at huge quotients
            out.append(case(op, ("array", "float32"), ("int", v), ["ufunc"]))
    for op in ["subtract", "floor_divide", "less", "divide"]:
        for v in [3, 1000, -1]:
            out.append(case(op, ("int", v), ("array", "int8"), ["ufunc", "vectorize"]))
    # elementwise: the placeholder fixes the type (here T = uint8 from x), which a Lua
    # integer must fit, as NumPy 2's uint8(300) raises.
    for v in [3, 300, -1]:
        out.append(case("add", ("array", "uint8"), ("int", v), ["elementwise", "jit"]))
        out.append(case("less", ("array", "uint64"), ("int", v), ["jit"]))
    # clip: NumPy 2 clips a Python int bound to the array's range first.
    for dtype in ["int8", "uint8"]:
        for lo, hi in [(-1000, 5), (2, 1000), (-1, 300), (-2**63, 2**63 - 1)]:
            out.append(case("clip", ("array", dtype), ("int", lo), ["ufunc"], ("int", hi)))
    # Lua floats: the arrays' float dtype, float64 with integers.
    for dtype in ["int8", "float32"]:
        for op in ["add", "less", "maximum"]:
            out.append(case(op, ("array", dtype), ("float", 0.5), ["ufunc"]))
    out += new_dtype_cases()
    return out


def new_dtype_cases():
    """float16, bfloat16, complex64 and complex128 with arrays of every other dtype, typed
    scalars, Lua numbers and luda.complex, in the array operations and (the arithmetic)
    the kernel language: vectorize, fuse and cuda.jit."""
    out = []
    news = ["float16", "bfloat16", "complex64", "complex128"]
    others = ["int8", "uint8", "int16", "int32", "int64", "float32", "float64"] + news
    kernel_paths = ["ufunc", "vectorize", "fuse", "jit"]
    for dtype in news:
        for other in others:
            out.append(case("add", ("array", dtype), ("array", other), kernel_paths))
            out.append(case("multiply", ("array", other), ("array", dtype), ["ufunc", "vectorize"]))
        for op in ["add", "divide", "less", "maximum"]:
            paths = ["ufunc"] + (["vectorize", "jit"] if op != "maximum" else [])
            out.append(case(op, ("array", dtype), ("int", 3), paths))
            out.append(case(op, ("array", dtype), ("float", 0.5), paths))
            if op != "less" and op != "maximum":
                out.append(case(op, ("array", dtype), ("complex", complex(0.5, -1)), ["ufunc", "vectorize"]))
    # Python's complex is weak: it takes a float array's precision, with integers complex128.
    # (A bool and a number take no arithmetic together in the kernel language: that case is
    # the array operation's.)
    for dtype in ["int8", "int64", "float32", "float64", "bool"]:
        out.append(case("multiply", ("array", dtype), ("complex", complex(0, 1)),
                        ["ufunc"] + (["vectorize"] if dtype != "bool" else [])))
    # Typed scalars of the new dtypes promote as 0-d arrays of them.
    for dtype, scalar in [("int8", ("typed", "float16", 2.5)), ("float32", ("typed", "complex64", complex(1, 2))),
                          ("int32", ("typed", "complex64", complex(1, 2))), ("float64", ("typed", "float16", 0.5)),
                          ("float16", ("typed", "float32", 0.5)), ("complex64", ("typed", "float64", 0.25)),
                          ("uint8", ("typed", "complex128", complex(-1, 0.5)))]:
        out.append(case("add", ("array", dtype), scalar, ["ufunc"]))
    return out


def main():
    print("-- Generated by tests/lua/promotion_numpy.py with NumPy %s; do not edit." % np.__version__)
    print("-- Each case: op (luda's name), operands a and b ({ \"array\", dtype } of the values in")
    print("-- `arrays`, { \"typed\", dtype, v }, { \"int\", v }, { \"float\", v }), the paths that")
    print("-- run it, and NumPy 2's outcome: dtype and values (uint64 values as their int64 bits),")
    print("-- or overflow = { value, dtype } for its OverflowError (`numpy` is its message).")
    print("local M = { numpy = \"%s\" }" % np.__version__)
    print("M.arrays = {")
    for dtype, values in ARRAYS.items():
        if dtype.startswith("uint64"):
            values = [v - 2**64 if v >= 2**63 else v for v in values]
        if dtype == "complex64":  # the values NumPy's complex64 holds
            values = [complex(v) for v in np.array(values, dtype=np.complex64).tolist()]
        print("  %s = { %s }," % (dtype, ", ".join(lua_value(v) for v in values)))
    print("}")
    print("M.functions = {  -- the Lua function of each operation, for vectorize, fuse and cuda.jit")
    for name, (_, expr) in OPS.items():
        if name not in ARRAY_ONLY:
            print('  %s = "%s",' % (name, expr))
    print("}")
    print("M.cases = {")
    for line in cases():
        print(line)
    print("}")
    print("return M")


if __name__ == "__main__":
    main()

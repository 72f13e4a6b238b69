#!/usr/bin/env python3
"""Writes tests/lua/indexing_numpy.lua: what NumPy gives for random indexing cases, which
indexing_spec.lua runs through luda on each device.

    python3 tests/lua/indexing_numpy.py > tests/lua/indexing_numpy.lua

Each case makes an array x (a random base array, then maybe a transpose and a slice with
negative steps, so that x is a view with any strides, empty, 0-d or of size 1), an index
of random items (integers, slices, newaxis, '...', booleans, integer arrays of every
integer dtype, some transposed, boolean masks; advanced items next to each other or apart)
and reads x[index] (a "get"), or writes a value there and reads the base array back (a
"set"). The index is given to luda one of four ways: x[{...}], x:slice(...), x["text"] in
NumPy's syntax, or x[item] for one item. NumPy's result is the reference: the shape and
the elements, or the error's message (its shapes written as luda writes them, "(2, 3)").
A set whose index names an element twice is marked `repeated`: NumPy's result (the last
write wins) is what luda gives on the cpu, and a GPU may keep another of the writes.
Then take, put, nonzero, flatnonzero, argwhere and compress on random arrays.
"""
import math
import random
import re
import sys

import numpy as np

SEED = 20240611
INT_INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
X_DTYPES = ["float32", "float64", "int32", "int64", "int16", "uint8", "bool"]


def lua(v):
    """v as a Lua expression."""
    if v is None:
        return "nil"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "(0/0)"
        if math.isinf(f):
            return "math.huge" if f > 0 else "-math.huge"
        return repr(f)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {lua(x)}" for k, x in v.items() if x is not None) + " }"
    if isinstance(v, (list, tuple)):
        return "{ " + ", ".join(lua(x) for x in v) + " }"
    raise TypeError(type(v))


def luda_message(e):
    """NumPy's message as luda words it: shapes as "(2, 3)", no trailing space."""
    text = str(e).strip()
    return re.sub(r"\((\d+(?:,\d+)+)\)", lambda m: "(" + ", ".join(m.group(1).split(",")) + ")", text)


def random_values(dtype, n, rng):
    if dtype == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    if dtype.startswith("float"):
        return [rng.randint(-40, 40) / 4 for _ in range(n)]
    if dtype == "uint8":
        return [rng.randint(0, 255) for _ in range(n)]
    return [rng.randint(-100, 100) for _ in range(n)]


def random_shape(rng, max_ndim=4):
    nd = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4][: max_ndim * 2 + 1])
    return [rng.choice([0, 1, 2, 3, 3, 4, 5]) if rng.random() < 0.1 else rng.choice([1, 2, 3, 4, 5]) for _ in range(nd)]


def slice_text(s):
    a, b, c = s
    t = ("" if a is None else str(a)) + ":" + ("" if b is None else str(b))
    return t + (":" + str(c) if c is not None else "")


def random_x(rng):
    """A random array description and the NumPy array it stands for."""
    dtype = rng.choice(X_DTYPES)
    shape = random_shape(rng)
    n = int(np.prod(shape)) if shape else 1
    desc = {"dtype": dtype, "shape": shape, "values": random_values(dtype, n, rng)}
    base = np.array(desc["values"], dtype=dtype).reshape(shape)
    x = base
    if len(shape) >= 2 and rng.random() < 0.3:
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        desc["T"] = [p + 1 for p in perm]  # luda's axes are 1-based
        x = x.transpose(perm)
    if x.ndim >= 1 and rng.random() < 0.3:
        parts = []
        for e in x.shape:
            step = rng.choice([1, -1, 2, -2])
            parts.append(slice_text((None, None, step)) if rng.random() < 0.7 else ":")
        desc["view"] = ", ".join(parts)
        x = x[eval_slices(desc["view"])]
    return desc, base, x


def eval_slices(text):
    items = []
    for part in text.split(","):
        part = part.strip()
        bits = part.split(":")
        vals = [int(b) if b else None for b in bits]
        while len(vals) < 3:
            vals.append(None)
        items.append(slice(*vals))
    return tuple(items)


def random_index_array(rng, shape, extent, dtype=None):
    dtype = dtype or rng.choice(INT_INDEX_DTYPES)
    n = int(np.prod(shape)) if shape else 1
    lo = 0 if dtype.startswith("uint") else -extent
    hi = extent - 1
    if rng.random() < 0.08:
        hi = extent  # out of bounds: NumPy's error
    if extent == 0 and hi < lo:
        values = [0] * n
    else:
        values = [rng.randint(lo, max(lo, hi)) for _ in range(n)]
    desc = ["array", dtype, list(shape), values]
    arr = np.array(values, dtype=dtype).reshape(shape)
    if len(shape) >= 2 and rng.random() < 0.3:  # a transposed index array: strides not C's
        t_shape = list(reversed(shape))
        t_vals = arr.T.reshape(-1).tolist()
        desc = ["array", dtype, t_shape, t_vals, True]
        arr = np.array(t_vals, dtype=dtype).reshape(t_shape).T
    return desc, arr


def sub_shape(rng, b):
    """A shape that broadcasts to b: some leading axes dropped, some extents 1."""
    drop = rng.randint(0, len(b))
    s = list(b[drop:])
    return [1 if rng.random() < 0.25 else e for e in s]


def random_index(rng, x):
    """Index items (descriptions) and the Python index they stand for."""
    nd = x.ndim
    b = rng.choice([[], [2], [3], [1], [2, 3], [0], [3, 1]])
    if rng.random() < 0.05:
        b = None  # each array of its own shape: NumPy's shape mismatch, mostly
    # The items' kinds first, and how many axes each takes, so that those after '...' know
    # their axes (counted from the end).
    kinds = []
    used = 0
    for _ in range(rng.randint(0, nd + 2)):
        r = rng.random()
        if r < 0.08:
            kinds.append(("newaxis", 0))
        elif r < 0.15 and not any(k == "ellipsis" for k, _ in kinds):
            kinds.append(("ellipsis", 0))
        elif r < 0.19:
            kinds.append(("bool", 0))
        else:
            kind = "int" if r < 0.40 else "slice" if r < 0.62 else "array" if r < 0.85 else "mask"
            k = rng.randint(1, 2) if kind == "mask" else 1
            if used + k > nd and rng.random() < 0.95:
                continue
            kinds.append((kind, k))
            used += k
    axes = []
    axis = 0
    after = None
    for i, (kind, k) in enumerate(kinds):
        if kind == "ellipsis":
            after = sum(kk for _, kk in kinds[i + 1 :])
            axis = max(axis, nd - after)
        axes.append(axis)
        axis += k

    def extent(a):
        return x.shape[a] if a < nd else 3

    items, py = [], []
    for (kind, k), a in zip(kinds, axes):
        if kind == "newaxis":
            items.append(["newaxis"])
            py.append(None)
        elif kind == "ellipsis":
            items.append(["ellipsis"])
            py.append(Ellipsis)
        elif kind == "bool":
            v = rng.random() < 0.7
            items.append(["bool", v])
            py.append(v)
        elif kind == "int":
            e = extent(a)
            v = rng.randint(-e, e - 1) if e > 0 else 0
            if rng.random() < 0.03:
                v = e
            items.append(["int", v])
            py.append(v)
        elif kind == "slice":
            e = extent(a)
            parts = [rng.choice([None, rng.randint(-e - 1, e + 1)]) for _ in range(2)]
            step = rng.choice([None, 1, 2, -1, -2, 3])
            items.append(["slice", parts[0], parts[1], step])
            py.append(slice(parts[0], parts[1], step))
        elif kind == "array":
            shape = sub_shape(rng, b) if b is not None else [rng.randint(0, 3)]
            desc, arr = random_index_array(rng, shape, extent(a))
            items.append(desc)
            py.append(arr)
        else:
            shape = [extent(a + j) for j in range(k)]
            if rng.random() < 0.05:
                shape[0] += 1  # NumPy's mismatch error
            n = int(np.prod(shape))
            vals = [rng.random() < 0.5 for _ in range(n)]
            items.append(["array", "bool", shape, vals])
            py.append(np.array(vals, dtype=bool).reshape(shape))
    return items, tuple(py)


def literal(desc):
    """The item in NumPy's index syntax, or None where the string form cannot say it."""
    kind = desc[0]
    if kind == "int":
        return str(desc[1])
    if kind == "slice":
        return slice_text(desc[1:4])
    if kind == "newaxis":
        return random.choice(["None", "newaxis"])
    if kind == "ellipsis":
        return "..."
    if kind == "bool":
        return "True" if desc[1] else "False"
    dtype, shape, values = desc[1], desc[2], desc[3]
    transposed = len(desc) > 4
    arr = np.array(values, dtype=dtype).reshape(shape)
    if transposed:
        arr = arr.T
    if arr.size == 0 and dtype == "bool":
        return None  # [] is an integer index
    if arr.ndim == 0:
        return None  # a 0-d array is no list
    if dtype == "uint64" and int(arr.max(initial=0)) > 2**63 - 1:
        return None

    def lit(a):
        if a.ndim == 0:
            return ("True" if a else "False") if dtype == "bool" else str(int(a))
        return "[" + ", ".join(lit(s) for s in a) + "]"

    return lit(arr)


def get_case(rng):
    desc, base, x = random_x(rng)
    items, py = random_index(rng, x)
    case = {"kind": "get", "x": desc, "index": items}
    forms = ["table", "slice"]
    texts = [literal(d) for d in items]
    if all(t is not None for t in texts):
        forms.append("string")
        case["text"] = ", ".join(texts)
    if len(items) == 1 and items[0][0] in ("array", "bool", "newaxis", "ellipsis"):
        forms.append("key")
    case["form"] = rng.choice(forms)
    try:
        r = x[py]
        case["shape"] = list(r.shape)
        case["values"] = np.asarray(r).reshape(-1).tolist()
        case["view"] = not any(d[0] in ("array", "bool") for d in items)
    except IndexError as e:
        case["error"] = luda_message(e)
    return case


def set_case(rng):
    desc, base, x = random_x(rng)
    items, py = random_index(rng, x)
    case = {"kind": "set", "x": desc, "index": items}
    forms = ["table"]
    texts = [literal(d) for d in items]
    if all(t is not None for t in texts):
        forms.append("string")
        case["text"] = ", ".join(texts)
    if len(items) == 1 and items[0][0] in ("array", "bool", "newaxis", "ellipsis"):
        forms.append("key")
    case["form"] = rng.choice(forms)
    try:
        target_shape = x[py].shape
    except IndexError as e:
        case["error"] = luda_message(e)
        case["value"] = {"number": 1}
        return case
    # Which base elements the index names, to tell repeats.
    positions = np.arange(base.size).reshape(base.shape)
    view_positions = positions
    if "T" in desc:
        view_positions = view_positions.transpose([p - 1 for p in desc["T"]])
    if "view" in desc:
        view_positions = view_positions[eval_slices(desc["view"])]
    named = np.asarray(view_positions[py]).reshape(-1)
    case["repeated"] = len(set(named.tolist())) != named.size
    r = rng.random()
    if r < 0.3:
        # a Lua number: an integer that fits x's dtype, or a float (converted as C does)
        if desc["dtype"] == "bool":
            v = rng.random() < 0.5
            case["value"] = {"boolean": v}
        elif desc["dtype"].startswith("float"):
            v = rng.randint(-20, 20) / 4
            case["value"] = {"number": v}
        else:
            v = rng.randint(0, 100)
            case["value"] = {"number": v}
    else:
        shape = sub_shape(rng, list(target_shape))
        advanced = any(d[0] in ("array", "bool") for d in items)
        if advanced and target_shape and rng.random() < 0.1:
            shape = [1] + shape  # a leading extent 1 past the result's rank, which NumPy drops
        vdtype = rng.choice([desc["dtype"], desc["dtype"], "float64", "int32"])
        if desc["dtype"] in ("uint8", "bool") or vdtype == "bool":
            vdtype = desc["dtype"]
        n = int(np.prod(shape)) if shape else 1
        vals = random_values(vdtype, n, rng)
        if desc["dtype"].startswith("int") and vdtype.startswith("float"):
            vals = [abs(v) for v in vals]  # truncation is C's for these
        case["value"] = {"dtype": vdtype, "shape": shape, "values": vals}
        v = np.array(vals, dtype=vdtype).reshape(shape)
    try:
        with np.errstate(all="ignore"):
            x[py] = v
        case["base"] = base.reshape(-1).tolist()
    except (IndexError, ValueError) as e:
        case["error"] = luda_message(e)
    except TypeError:
        return None  # x[mask] = a 2-d value: NumPy's one refusal where luda broadcasts
    return case


def function_cases(rng):
    cases = []
    for _ in range(40):
        desc, base, x = random_x(rng)
        # take
        axis = rng.choice([None] + list(range(x.ndim)))
        extent = x.size if axis is None else x.shape[axis]
        mode = rng.choice(["raise", "raise", "wrap", "clip"])
        shape = rng.choice([[], [3], [2, 2], [0]])
        n = int(np.prod(shape)) if shape else 1
        if mode == "raise":
            vals = [rng.randint(-extent, extent - 1) for _ in range(n)] if extent > 0 else [0] * n
        else:
            vals = [rng.randint(-3 * extent - 2, 3 * extent + 2) for _ in range(n)]
        idx = np.array(vals, dtype="int64").reshape(shape)
        c = {"kind": "take", "x": desc, "indices": {"shape": shape, "values": vals},
             "axis": None if axis is None else axis + 1, "mode": mode}
        try:
            r = np.take(x, idx, axis=axis, mode=mode)
            c["shape"], c["values"] = list(r.shape), np.asarray(r).reshape(-1).tolist()
        except IndexError as e:
            c["error"] = luda_message(e)
        cases.append(c)
        # nonzero, flatnonzero, argwhere
        c = {"kind": "nonzero", "x": desc}
        if x.ndim > 0:
            c["nonzero"] = [a.tolist() for a in np.nonzero(x)]
        c["flatnonzero"] = np.flatnonzero(x).tolist()
        aw = np.argwhere(x)
        c["argwhere"] = {"shape": list(aw.shape), "values": aw.reshape(-1).tolist()}
        cases.append(c)
        # compress
        if x.ndim > 0:
            axis = rng.choice([None] + list(range(x.ndim)))
            extent = x.size if axis is None else x.shape[axis]
            cond = [rng.random() < 0.5 for _ in range(rng.randint(0, extent))]
            if rng.random() < 0.2:
                cond.append(False)  # a condition longer than the axis, false past it
            r = np.compress(cond, x, axis=axis)
            cases.append({"kind": "compress", "x": desc, "condition": cond,
                          "axis": None if axis is None else axis + 1,
                          "shape": list(r.shape), "values": r.reshape(-1).tolist()})
        # put (on the base array: put writes an array's own elements)
        if base.size > 0:
            mode = rng.choice(["raise", "wrap", "clip"])
            n = rng.randint(0, 5)
            if mode == "raise":
                ind = [rng.randint(-base.size, base.size - 1) for _ in range(n)]
            else:
                ind = [rng.randint(-2 * base.size, 2 * base.size) for _ in range(n)]
            targets = [(i % base.size) if mode == "wrap" else min(max(i, 0), base.size - 1) if mode == "clip"
                       else i % base.size for i in ind]
            if len(set(targets)) != len(targets):
                continue  # a repeat: one result on every device needs none
            m = rng.randint(1, 3)
            vals = random_values(desc["dtype"], m, rng)
            b = base.copy()
            np.put(b, ind, np.array(vals, dtype=desc["dtype"]), mode=mode)
            cases.append({"kind": "put", "x": {"dtype": desc["dtype"], "shape": desc["shape"], "values": desc["values"]},
                          "ind": ind, "v": vals, "mode": mode, "base": b.reshape(-1).tolist()})
    return cases


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else SEED  # another seed: more cases to try
    rng = random.Random(seed)
    random.seed(seed)
    cases = []
    gets = sets = 0
    while gets < 320:
        c = get_case(rng)
        if "error" in c and rng.random() > 0.4:
            continue
        cases.append(c)
        gets += 1
    while sets < 160:
        c = set_case(rng)
        if c is None:
            continue
        if "error" in c and rng.random() > 0.4:
            continue
        cases.append(c)
        sets += 1
    cases += function_cases(rng)
    print(f"-- Generated by tests/lua/indexing_numpy.py with NumPy {np.__version__}; do not edit.")
    print("-- Each case: kind (get, set, take, nonzero, compress, put), x = { dtype, shape, values")
    print("-- (the base array, C order), T (a transpose, 1-based axes), view (a slice string) },")
    print("-- the index items and the form that gives them to luda, and NumPy's outcome: the result's")
    print("-- shape and values, the base array after a set, or the error's message.")
    print(f'local M = {{ numpy = "{np.__version__}" }}')
    print("M.cases = {")
    for c in cases:
        print("  " + lua(c) + ",")
    print("}")
    print("return M")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Every notebook of notebooks/ run top to bottom in luda-kernel by Debian's nbclient, on
each device named (ctest: cpu): no cell may fail (their checks are Lua asserts against
plain Lua), the cells that end in a value show one, the pictures are PNGs of the size the
notebook draws and not of one color, the plots SVGs with lines, and the whole takes at
most 60 s on cpu. With several devices, each device's values must be the first's: every
number in the cells' results and streams equal within 1e-5 (relative; float32 sums differ
in their last bits between devices), the pictures of one size, and each picture's pixels
the first's within 1 of 255 for at least 99.5% of them. Cells tagged "device-dependent"
(the device's name, timings) are not compared.

    /usr/bin/python3 tests/notebooks.py build/luda-kernel [--devices cpu,cuda] [notebook ...]

Exits 77 (skipped) where nbclient or Pillow is missing. With OUT set, the executed notebooks are
written there (as DEVICE-NAME.ipynb).
"""
import argparse
import base64
import glob
import io
import os
import re
import subprocess
import sys
import tempfile
import time

try:
    import nbformat
    from nbclient import NotebookClient
    from PIL import Image
except ImportError:
    print("nbclient or Pillow is missing (apt-get install python3-nbclient python3-pil): skipped")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What each notebook must show: its pictures' sizes (width, height), and its plots' count.
PICTURES = {"mandelbrot.ipynb": [(240, 160)], "sobel.ipynb": [(240, 180), (238, 178)]}
PLOTS = {"kernels.ipynb": 1}
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf")


def png_decode(data):
    """(width, height, channels, pixel bytes, file bytes) of a PNG given in base64 (Pillow)."""
    png = base64.b64decode(data)
    with Image.open(io.BytesIO(png)) as image:
        return image.width, image.height, len(image.getbands()), image.tobytes(), png


def run(kernel, path, device, prefix, failures):
    """Executes the notebook on `device`; returns (notebook, seconds), or None when a cell failed."""
    name = os.path.basename(path)
    nb = nbformat.read(path, as_version=4)
    os.environ["LUDA_DEVICE"] = device
    start = time.time()
    try:
        NotebookClient(nb, kernel_name="luda", timeout=300, resources={"metadata": {"path": prefix}}).execute()
    except Exception as e:  # a failed cell: nbclient's CellExecutionError names it
        failures.append(f"{name} on {device}: {e}")
        return None
    seconds = time.time() - start
    if os.environ.get("OUT"):
        nbformat.write(nb, os.path.join(os.environ["OUT"], f"{device.replace(':', '')}-{name}"))
    pictures, plots = [], 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            if out.output_type == "error":
                failures.append(f"{name} on {device}: {out.ename}: {out.evalue}")
            if out.output_type == "display_data" and "image/png" in out.data:
                width, height, _, pixels, png = png_decode(out.data["image/png"])
                pictures.append((width, height))
                if len(set(pixels)) < 8 or len(set(png)) < 32:
                    failures.append(f"{name} on {device}: a picture of {(width, height)} looks blank")
            if out.output_type == "display_data" and "image/svg+xml" in out.data:
                svg = out.data["image/svg+xml"]
                plots += 1
                if "<svg" not in svg or svg.count("<path") < 3:
                    failures.append(f"{name} on {device}: a plot with no lines")
        last = cell.source.strip().splitlines()[-1] if cell.source.strip() else ""
        shows = any(o.output_type in ("execute_result", "display_data") for o in cell.outputs)
        streams = any(o.output_type == "stream" for o in cell.outputs)
        if cell.source.lstrip().startswith(":"):
            if not streams:
                failures.append(f"{name} on {device}: the command cell {cell.source!r} printed nothing")
        elif last and not last.startswith(("local ", "--", "end", "assert")) and "=" not in last.split("(")[0] \
                and not shows:
            failures.append(f"{name} on {device}: the cell ending in {last!r} shows nothing")
    want = PICTURES.get(name, [])
    if pictures != want:
        failures.append(f"{name} on {device}: pictures {pictures}, expected {want}")
    if plots != PLOTS.get(name, 0):
        failures.append(f"{name} on {device}: {plots} plots, expected {PLOTS.get(name, 0)}")
    print(f"{name} on {device}: {len(nb.cells)} cells in {seconds:.1f} s, pictures {pictures}, plots {plots}")
    return nb, seconds


def outputs(nb):
    """Per compared code cell: its text (results and streams) and its pictures."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code" or "device-dependent" in cell.metadata.get("tags", []):
            continue
        text, pictures = [], []
        for out in cell.outputs:
            if out.output_type == "stream":
                text.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                if "image/png" in out.data:
                    pictures.append(png_decode(out.data["image/png"])[:4])
                elif "text/plain" in out.data:
                    text.append(out.data["text/plain"])
        cells.append(("".join(text), pictures))
    return cells


def same_values(a, b):
    """Whether texts a and b differ only in their numbers' last bits."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if abs(fx - fy) > 1e-5 * max(abs(fx), abs(fy), 1e-30):
            return False
    return True


def compare(name, first, device, other, failures):
    for i, ((ta, pa), (tb, pb)) in enumerate(zip(outputs(first), outputs(other))):
        if not same_values(ta, tb):
            failures.append(f"{name}: compared cell {i + 1} differs on {device}:\n{ta}\n--- vs ---\n{tb}")
        for (wa, ha, ca, xa), (wb, hb, cb, xb) in zip(pa, pb):
            if (wa, ha, ca) != (wb, hb, cb):
                failures.append(f"{name}: compared cell {i + 1}'s picture is {wb} x {hb} on {device}, {wa} x {ha} first")
                continue
            off = sum(1 for u, v in zip(xa, xb) if abs(u - v) > 1)
            if off > 0.005 * len(xa):
                failures.append(f"{name}: compared cell {i + 1}'s picture differs in {off} of {len(xa)} bytes on {device}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernel")
    parser.add_argument("--devices", default=os.environ.get("LUDA_DEVICE", "cpu"))
    parser.add_argument("notebooks", nargs="*")
    args = parser.parse_intermixed_args()
    kernel = os.path.abspath(args.kernel)
    devices = args.devices.split(",")
    paths = args.notebooks or sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
    failures, totals = [], {d: 0.0 for d in devices}
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run([kernel, "install", "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
        os.environ["JUPYTER_PATH"] = os.path.join(prefix, "share", "jupyter")
        for path in paths:
            name, first = os.path.basename(path), None
            for device in devices:
                done = run(kernel, path, device, prefix, failures)
                if done is None:
                    continue
                nb, seconds = done
                totals[device] += seconds
                if first is None:
                    first = nb
                else:
                    compare(name, first, device, nb, failures)
    if "cpu" in totals and totals["cpu"] > 60:
        failures.append(f"the notebooks took {totals['cpu']:.1f} s on cpu, over 60 s")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(paths)} notebooks on {', '.join(devices)}: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

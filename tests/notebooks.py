#!/usr/bin/env python3
"""Every notebook of notebooks/ run top to bottom in luda-kernel by Debian's nbclient, on
the device LUDA_DEVICE names (ctest: cpu): no cell may fail (their checks are Lua asserts
against plain Lua), the cells that end in a value show one, the pictures are PNGs of the
size the notebook draws and not of one color, the plots SVGs with lines, and the whole takes at most 60 s on cpu.

    /usr/bin/python3 tests/notebooks.py build/luda-kernel [notebook ...]   (ctest: notebooks.run)

Exits 77 (skipped) where nbclient is missing. With OUT set, the executed notebooks are
written there.
"""
import base64
import glob
import os
import struct
import subprocess
import sys
import tempfile
import time

try:
    import nbformat
    from nbclient import NotebookClient
except ImportError:
    print("nbclient is missing (apt-get install python3-nbclient): skipped")
    sys.exit(77)

KERNEL = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = sys.argv[2:] or sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
# What each notebook must show: its pictures' sizes (width, height), and its plots' count.
PICTURES = {"mandelbrot.ipynb": [(240, 160)]}
PLOTS = {"kernels.ipynb": 1}


def png_size(data):
    png = base64.b64decode(data)
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", png[16:24]), png


def main():
    failures = []
    total = 0.0
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run([KERNEL, "install", "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
        os.environ["JUPYTER_PATH"] = os.path.join(prefix, "share", "jupyter")
        for path in NOTEBOOKS:
            name = os.path.basename(path)
            nb = nbformat.read(path, as_version=4)
            start = time.time()
            try:
                NotebookClient(nb, kernel_name="luda", timeout=300, resources={"metadata": {"path": prefix}}).execute()
            except Exception as e:  # a failed cell: nbclient's CellExecutionError names it
                failures.append(f"{name}: {e}")
                continue
            seconds = time.time() - start
            total += seconds
            if os.environ.get("OUT"):
                nbformat.write(nb, os.path.join(os.environ["OUT"], name))
            pictures, plots = [], 0
            for cell in nb.cells:
                if cell.cell_type != "code":
                    continue
                for out in cell.outputs:
                    if out.output_type == "error":
                        failures.append(f"{name}: {out.ename}: {out.evalue}")
                    if out.output_type == "display_data" and "image/png" in out.data:
                        size, png = png_size(out.data["image/png"])
                        pictures.append(size)
                        if len(set(png)) < 32:
                            failures.append(f"{name}: a picture of {size} looks blank")
                    if out.output_type == "display_data" and "image/svg+xml" in out.data:
                        svg = out.data["image/svg+xml"]
                        plots += 1
                        if "<svg" not in svg or svg.count("<path") < 3:
                            failures.append(f"{name}: a plot with no lines")
                last = cell.source.strip().splitlines()[-1] if cell.source.strip() else ""
                shows = any(o.output_type in ("execute_result", "display_data") for o in cell.outputs)
                if last and not last.startswith(("local ", "--", "end", "assert")) and "=" not in last.split("(")[0] and not shows:
                    failures.append(f"{name}: the cell ending in {last!r} shows nothing")
            want = PICTURES.get(name, [])
            if pictures != want:
                failures.append(f"{name}: pictures {pictures}, expected {want}")
            if plots != PLOTS.get(name, 0):
                failures.append(f"{name}: {plots} plots, expected {PLOTS.get(name, 0)}")
            print(f"{name}: {len(nb.cells)} cells in {seconds:.1f} s, pictures {pictures}, plots {plots}")
    if os.environ.get("LUDA_DEVICE", "cpu") == "cpu" and total > 60:
        failures.append(f"the notebooks took {total:.1f} s on cpu, over 60 s")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

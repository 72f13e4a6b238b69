#!/usr/bin/env python3
"""luda-kernel under a real Jupyter client (Debian's jupyter_client): kernel info, execute
(results as text and as an HTML table, printed output in the cell's stream as it is
written, locals kept
from cell to cell, pictures as image/png display data, errors at their place, cells of
REPL commands), completion, history,
inspection, is-complete, and an interrupt of a long cpu kernel that the kernel survives.

    /usr/bin/python3 tests/kernel_client.py build/luda-kernel    (ctest: kernel.jupyter)

Exits 77 (skipped) where jupyter_client is missing.
"""
import base64
import os
import struct
import subprocess
import sys
import tempfile
import time

try:
    from jupyter_client.manager import start_new_kernel
except ImportError:
    print("jupyter_client is missing (apt-get install python3-jupyter-client): skipped")
    sys.exit(77)

KERNEL = os.path.abspath(sys.argv[1])
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


# Every request here is sent with stop_on_error off: after a cell fails, xeus answers the
# shell requests that arrive within 50 ms with an error and no output (Jupyter's
# stop_on_error, which aborts the cells queued behind a failed one), and this client sends
# its next request sooner than that.
def run(kc, code, timeout=120):
    """Executes code; returns (reply content, [(msg_type, content)] from iopub)."""
    outputs = []
    reply = kc.execute_interactive(code, timeout=timeout, stop_on_error=False,
                                   output_hook=lambda m: outputs.append((m["msg_type"], m["content"])))
    return reply["content"], outputs


def request(kc, method, *args, **kwargs):
    """Sends a shell request (complete, inspect, is_complete, history) and waits for its reply."""
    msg_id = getattr(kc, method)(*args, **kwargs)
    while True:
        reply = kc.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


def texts(outputs, kind, name=None):
    return "".join(c.get("text", "") for t, c in outputs if t == kind and (name is None or c.get("name") == name))


def main():
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run([KERNEL, "install", "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
        os.environ["JUPYTER_PATH"] = os.path.join(prefix, "share", "jupyter")
        os.environ["LUDA_DEVICE"] = "cpu"
        km, kc = start_new_kernel(kernel_name="luda", startup_timeout=120)
        try:
            session(km, kc)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    if failures:
        sys.exit(f"{len(failures)} failure(s)")
    print("ok: luda-kernel under jupyter_client")


def session(km, kc):
    info = request(kc, "kernel_info")
    check(info["language_info"]["name"] == "lua" and info["implementation"] == "luda", f"kernel_info: {info}")

    # A local of one cell is read by the next; an expression's value is the result, an
    # array's also as an HTML table.
    reply, out = run(kc, 'local x = luda.arange(6):reshape(2, 3)\nprint("made", x.shape[1])')
    check(reply["status"] == "ok", f"first cell: {reply}")
    check(texts(out, "stream", "stdout") == "made\t2\n", f"print in the stream: {out}")
    reply, out = run(kc, "x * 2")
    results = [c for t, c in out if t == "execute_result"]
    check(len(results) == 1, f"one result: {out}")
    if results:
        data = results[0]["data"]
        check(data.get("text/plain") == "array([[ 0,  2,  4],\n       [ 6,  8, 10]])", f"text/plain: {data}")
        html = data.get("text/html", "")
        check("<table>" in html and "<td>10</td>" in html and "shape=(2, 3), dtype=int64" in html, f"html: {html}")
    reply, out = run(kc, "y = 40\ny + 2")
    results = [c for t, c in out if t == "execute_result"]
    check(results and results[0]["data"]["text/plain"] == "42", f"statements then an expression: {out}")

    # Output shows while the cell runs: the first line arrives a second before the second.
    arrivals = []
    kc.execute_interactive('print("tick")\nlocal t = os.time()\nwhile os.time() - t < 2 do end\nprint("tock")',
                           timeout=60, stop_on_error=False,
                           output_hook=lambda m: m["msg_type"] == "stream" and arrivals.append((time.time(), m["content"]["text"])))
    check([t for _, t in arrivals] == ["tick\n", "tock\n"] and arrivals[1][0] - arrivals[0][0] > 0.9,
          f"streamed output: {arrivals}")

    # A picture: display data with the PNG (base64) of the array's size, output in order.
    reply, out = run(kc, 'print("before")\nluda.display.image(luda.arange(12.0):reshape(3, 4))\nprint("after")')
    kinds = [t for t, c in out if t in ("stream", "display_data")]
    check(kinds == ["stream", "display_data", "stream"], f"picture between the prints: {out}")
    shown = [c for t, c in out if t == "display_data"]
    if shown:
        png = base64.b64decode(shown[0]["data"]["image/png"])
        width, height = struct.unpack(">II", png[16:24])
        check(png[:8] == b"\x89PNG\r\n\x1a\n" and (width, height) == (4, 3), f"PNG {width} x {height}")
        check(shown[0]["data"]["text/plain"] == "<image 4 x 3>", f"picture's text: {shown[0]['data']}")
        check(len(set(png)) > 20, "a picture, not an empty file")

    # An error, at its place in the cell; the kernel goes on.
    reply, out = run(kc, "local a = 1\nerror('boom')")
    check(reply["status"] == "error" and reply["evalue"].endswith(":2: boom") and reply["ename"] == "LuaError",
          f"error reply: {reply}")
    errors = [c for t, c in out if t == "error"]
    check(errors and errors[0]["evalue"].endswith(":2: boom"), f"error message: {out}")
    reply, out = run(kc, "luda.zeros({2}, 'float33')")
    check(reply["status"] == "error" and "unknown dtype 'float33'" in reply["evalue"], f"luda error: {reply}")

    # Cells of REPL commands, as IPython's magics: output in the stream; their own failures
    # and a line of Lua among them are the cell's errors.
    reply, out = run(kc, ":devices\n?luda.sum")
    text = texts(out, "stream", "stdout")
    check(reply["status"] == "ok" and "* <device cpu>" in text and "`luda.sum(x" in text, f"command cell: {reply} {out}")
    reply, out = run(kc, ":time luda.arange(10):sum()")
    check(reply["status"] == "ok" and "per call (mean +- std. dev. of 7 runs" in texts(out, "stream", "stdout"),
          f":time cell: {reply} {out}")
    reply, out = run(kc, ":devices\nx = 1")
    check(reply["status"] == "error" and "cell[" in reply["evalue"] and ":2: a cell that starts with a command"
          in reply["evalue"], f"Lua among commands: {reply}")
    reply, out = run(kc, ":frobnicate")
    check(reply["status"] == "error" and "unknown command ':frobnicate'; :help lists them" in reply["evalue"],
          f"unknown command: {reply}")

    # Completion, inspection, is-complete.
    c = request(kc, "complete", "luda.vecto", 10)
    check("luda.vectorize" in c["matches"] and c["cursor_start"] == 0 and c["cursor_end"] == 10, f"complete: {c}")
    c = request(kc, "complete", "x:cums", 6)
    check(c["matches"] == ["x:cumsum"], f"complete a method: {c}")
    i = request(kc, "inspect", "luda.sum(x)", 6)
    check(i["found"] and "x:sum(" in i["data"]["text/plain"], f"inspect: {i}")
    i = request(kc, "inspect", "nothing_here", 3)
    check(not i["found"], f"inspect of nothing: {i}")
    for code, status in (("for i = 1, 2 do", "incomplete"), ("x = 1", "complete"), ("x + 1", "complete"),
                         ("x = = 1", "invalid")):
        r = request(kc, "is_complete", code)
        check(r["status"] == status, f"is_complete {code!r}: {r}")

    # History: the cells run, newest last.
    h = request(kc, "history", raw=True, output=False, hist_access_type="tail", n=3)
    inputs = [entry[2] for entry in h.get("history", [])]
    check(h.get("status") == "ok" and len(inputs) == 3 and inputs[-1] == ":frobnicate", f"history: {h}")

    # An interrupt stops a long cpu kernel; the kernel lives on.
    run(kc, "spin = luda.cuda.jit(function(a) while a[0] >= 0 do a[1] = a[1] + 1 end end)")
    msg_id = kc.execute("spin[{1, 1}](luda.zeros(2))", stop_on_error=False)
    time.sleep(3)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=60)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=60)
    check(reply["content"]["status"] == "error" and "interrupted" in reply["content"]["evalue"],
          f"interrupted: {reply['content']}")
    reply, out = run(kc, "1 + 1", timeout=60)
    results = [c for t, c in out if t == "execute_result"]
    check(results and results[0]["data"]["text/plain"] == "2", f"after the interrupt: {reply} {out}")


if __name__ == "__main__":
    main()

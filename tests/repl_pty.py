#!/usr/bin/env python3
"""The luda REPL on a pseudo-terminal, as a person at a keyboard meets it (readline,
history, Tab): completion of globals, of luda's members and of an array's methods; a
multi-line input recalled whole by the Up arrow; top-level locals kept between inputs;
Ctrl-D ends it. Each step waits for what the terminal must show next.

    python3 tests/repl_pty.py build/luda        (ctest runs it: cli.repl_pty)
"""
import os
import pty
import re
import select
import sys
import tempfile
import time

LUDA = sys.argv[1]
TIMEOUT = 60.0


class Repl:
    def __init__(self, home):
        env = dict(os.environ, HOME=home, TERM="xterm", LUDA_DEVICE="cpu", INPUTRC="/dev/null")
        env.pop("LUDA_CPU_DEVICES", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe(LUDA, [LUDA], env)
        self.seen = ""   # everything the terminal showed (escape sequences removed)
        self.mark = 0    # expect() looks after this

    def read_some(self, wait):
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        text = data.decode("utf-8", "replace")
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r", "", text)
        self.seen += text
        return True

    def expect(self, what, count=1):
        """Waits until `what` (a literal) has shown `count` times after the mark."""
        end = time.time() + TIMEOUT
        while self.seen.count(what, self.mark) < count:
            if time.time() > end:
                sys.exit(f"FAIL: waited {TIMEOUT:.0f} s for {what!r} (x{count}); the terminal showed:\n{self.seen}")
            self.read_some(0.2)
        at = self.mark
        for _ in range(count):
            at = self.seen.index(what, at) + len(what)
        self.mark = at

    def send(self, keys):
        os.write(self.fd, keys.encode())

    def finish(self):
        end = time.time() + TIMEOUT
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            self.read_some(0.2)
        os.kill(self.pid, 9)
        sys.exit("FAIL: luda did not end after Ctrl-D")


def main():
    with tempfile.TemporaryDirectory() as home:
        r = Repl(home)
        r.expect("> ")

        # A global's name completes, and a unique completion runs as typed.
        r.send("answer_of_all = 42\r")
        r.expect("> ")
        r.send("answer_of\t\r")
        r.expect("answer_of_all\n42\n> ")

        # luda's members: a unique one completes in place.
        r.send("luda.vectori\t(function(a) return a + 1 end)(luda.arange(3))\r")
        r.expect("luda.vectorize(function(a) return a + 1 end)(luda.arange(3))\narray([1, 2, 3])\n> ")

        # Several candidates: a second Tab lists them.
        r.send("luda.lins\t\t")
        r.expect("luda.linspace")
        r.send("\x15")  # Ctrl-U: the line is dropped
        r.send("luda.aran\t\t")
        r.expect("luda.arange")
        r.send("(4)\r")
        r.expect("array([0, 1, 2, 3])\n> ")

        # An array's methods, after ':'; a top-level local kept for the next input.
        r.send("local x = luda.arange(5.0)\r")
        r.expect("> ")
        r.send("x:cums\t()\r")
        r.expect("x:cumsum()\narray([ 0.,  1.,  3.,  6., 10.])\n> ")

        # A multi-line input is one history entry: the Up arrow brings back all of it.
        r.send("for i = 1, 2 do\r")
        r.expect(">> ")
        r.send("print('row' .. i)\r")
        r.expect(">> ")
        r.send("end\r")
        r.expect("row1\nrow2\n> ")
        r.send("\x1b[A\r")
        r.expect("row1\nrow2\n> ")

        r.send("\x04")  # Ctrl-D on an empty line
        code = r.finish()
        if code != 0:
            sys.exit(f"FAIL: luda exited {code}; the terminal showed:\n{r.seen}")
        history = open(os.path.join(home, ".luda_history")).read()
        if "for i = 1, 2 do\nprint('row' .. i)\nend" not in history:
            sys.exit(f"FAIL: the history file lacks the multi-line entry:\n{history}")
    print("ok: completion, multi-line history and locals on a pseudo-terminal")


if __name__ == "__main__":
    main()

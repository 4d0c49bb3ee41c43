"""A command run on a pseudo-terminal (Python's pty), for what only a terminal shows: progress, line editing,
Ctrl-C delivered by the terminal driver to the foreground process group."""
from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import time


class Terminal:
    def __init__(self, argv: list[str], env: dict | None = None, cwd: str | None = None, columns: int = 120,
                 allow_traceback: bool = False):
        import fcntl
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     start_new_session=True, preexec_fn=_controlling(slave))
        os.close(slave)
        self.text = ""
        self.pos = 0  # expect() searches the output from here
        self.allow_traceback = allow_traceback  # else a Python traceback in the output fails the test (docs/cli.md)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        while self._read(0.05):
            pass
        os.close(self.master)
        if exc[0] is None and not self.allow_traceback and "Traceback (most recent call last)" in self.text:
            raise AssertionError(f"a traceback on the terminal:\n{self.text[-3000:]}")

    def _read(self, timeout: float) -> bool:
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the other side is closed
            return False
        if not data:
            return False
        self.text += data.decode("utf-8", "replace")
        return True

    def expect(self, pattern: str, timeout: float = 120) -> re.Match:
        """Wait until the output (after the last match) matches ``pattern`` (a regular expression)."""
        deadline = time.monotonic() + timeout
        while True:
            m = re.compile(pattern).search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(min(left, 0.5)) and self.proc.poll() is not None
                             and not self._read(0.1)):
                raise AssertionError(f"{pattern!r} not seen; output so far:\n{self.text[-3000:]}")

    def send(self, s: str) -> None:
        os.write(self.master, s.encode())

    def wait(self, timeout: float = 120) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        while self._read(0.1):
            pass
        return self.proc.wait(timeout=1)


def _controlling(slave: int):
    """Make the pty the child's controlling terminal (so that Ctrl-C typed on it sends SIGINT)."""
    def setup() -> None:
        import fcntl
        import termios

        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    return setup

"""A one-line progress bar on stderr (bytes done, %, MB/s), shown only on a terminal."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, label: str, total: int, enabled: bool = True, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = label
        self.total = max(total, 1)
        self.start = time.time()
        self.last = 0.0
        self.shown = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.time()
        if now - self.last < 0.2 and done < self.total:
            return
        self.last = now
        frac = min(done / self.total, 1.0)
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        rate = done / 1e6 / max(now - self.start, 1e-9)
        self.stream.write(f"\r{self.label[:40]:40s} [{bar}] {frac * 100:5.1f}% {done / 1e6:8.1f} MB {rate:6.1f} MB/s")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 110 + "\r")
            self.stream.flush()

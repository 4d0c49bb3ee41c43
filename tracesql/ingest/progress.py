"""The progress display of an ingest on stderr (a terminal only), drawn by rich: the file's name, a bar, the
share of the file read, the JSON megabytes parsed so far and their rate; then a second phase, a spinner, while
the tables that need the whole file (the call tree) are built. It disappears when the file is done."""
from __future__ import annotations

import os
import sys
import time

from rich.progress import TaskID

# A file shows progress when its JSON text is larger than this (smaller ones are done before a bar would help).
THRESHOLD_BYTES = 4 << 20


def estimate_json_bytes(path: str, size: int) -> int:
    """The size of a file's JSON text: its size, or for a gzip file the uncompressed size its trailer records
    (ISIZE: the size modulo 2^32, taken as the smallest such size not below the compressed one)."""
    try:
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b" or size < 18:
                return size
            f.seek(size - 4)
            isize = int.from_bytes(f.read(4), "little")
    except OSError:
        return size
    while isize < size:
        isize += 1 << 32
    return isize


class Progress:
    """``update(done)`` with the bytes of the file read so far (``total`` in all); ``json_total`` is the size of
    the JSON text (estimate_json_bytes), from which the MB and MB/s shown are computed. ``phase(text)`` shows
    the second phase; ``close()`` removes the display."""

    def __init__(self, label: str, total: int, enabled: bool = True, stream=None, json_total: int | None = None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = label
        self.total = max(total, 1)
        self.json_total = max(json_total or total, 1)
        self.start = time.monotonic()
        self._live = None
        self._task: TaskID = TaskID(0)
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, SpinnerColumn, TaskProgressColumn, TextColumn
            from rich.progress import Progress as RichProgress

            console = Console(file=self.stream, width=_width(self.stream))
            self._live = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=30),
                                      TaskProgressColumn(), TextColumn("{task.fields[detail]}"), console=console,
                                      transient=True, refresh_per_second=5)
            self._task = self._live.add_task(_short(label), total=self.total, detail="")
            self._live.start()

    def update(self, done: int) -> None:
        if not self._live:
            return
        done = min(done, self.total)
        mb = done / self.total * self.json_total / 1e6
        secs = time.monotonic() - self.start
        rate = f"{mb / secs:,.0f} MB/s" if secs >= 0.5 else ""
        self._live.update(self._task, completed=done,
                          detail=f"{mb:,.0f} of {self.json_total / 1e6:,.0f} MB JSON {rate}".rstrip())

    def phase(self, text: str) -> None:
        """The reading is done: say what comes next (the bar stays full, the spinner turns)."""
        if not self._live:
            return
        secs = time.monotonic() - self.start
        self._live.update(self._task, completed=self.total, description=f"{_short(self.label)}: {text}",
                          detail=f"({self.json_total / 1e6:,.0f} MB read in {secs:.1f} s)")

    def close(self) -> None:
        if self._live:
            self._live.stop()
            self._live = None


def _short(label: str, width: int = 40) -> str:
    from tracesql.escape import terminal_text
    from tracesql.render.output import cut_middle

    return cut_middle(terminal_text(label), width)  # a file name cannot drive the terminal


def _width(stream) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 120

"""Errors raised for bad input. Each renders as one line naming the file and where it went wrong."""
from __future__ import annotations


class TraceError(Exception):
    """A trace file that cannot be ingested (or only partly, without --salvage).

    ``offset`` is a byte offset into the (decompressed) JSON text; ``event_index`` is the 0-based
    index of the offending element of ``traceEvents``. Either may be None when unknown.
    """

    def __init__(self, path: str, message: str, offset: int | None = None, event_index: int | None = None):
        self.path = str(path)
        self.message = message
        self.offset = offset
        self.event_index = event_index
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.event_index is not None:
            where.append(f"event #{self.event_index}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        suffix = f" ({', '.join(where)})" if where else ""
        return f"{self.path}: {self.message}{suffix}"


class DatasetError(Exception):
    """A dataset directory that is missing or not a tracesql dataset."""


class UsageError(Exception):
    """A command line (or call) that cannot work: exit status 2, found after parsing."""


class EmptySelection(Exception):
    """A selection without rows (a step that does not exist, --top 0): the command says so and exits 1."""

"""The record of ingest runs (``ingest_runs``, ``ingest_run_files``) and the dataset's lock.

Each run of ``tracesql.ingest`` writes ``DATASET/runs/<run_id>.json`` when it starts (status ``running``) and
rewrites it, atomically, when it ends: a scheduled job can tell from the dataset which run added which traces,
which files failed and why, and whether a run is still going. A run found ``running`` by a later run on the same
host whose process is gone is marked ``killed``. The columns are ``schema.DATASET_TABLES``; the views of the same
names read the files (``tracesql.store.dataset.table_statements``).

``dataset_lock`` serialises what two runs on one dataset must not do at once (writing ``init.sql`` and the
catalog); traces are published atomically and added once without it.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson

from tracesql.escape import path_text
from tracesql.ingest.publish import _pid_alive

RUNS_DIR = "runs"
LOCK_FILE = ".lock"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds")


def _write_json(path: Path, obj: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


@contextlib.contextmanager
def dataset_lock(dataset: Path) -> Iterator[None]:
    """Hold the dataset's lock (an exclusive ``flock`` of ``DATASET/.lock``), waiting for another run's."""
    with open(Path(dataset) / LOCK_FILE, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class RunRecord:
    """The record of one ingest run, kept in ``DATASET/runs/<run_id>.json``."""

    def __init__(self, dataset: Path, command: str | None = None):
        from tracesql.version import __version__

        self.dataset = Path(dataset)
        self.t0 = time.time()
        start = _dt.datetime.now(_dt.timezone.utc)
        self.run_id = f"{start:%Y%m%dT%H%M%S}.{start.microsecond // 1000:03d}Z-{uuid.uuid4().hex[:4]}"
        self.row: dict = {
            "run_id": self.run_id, "status": "running", "started_at": _now(), "ended_at": None, "duration_s": None,
            "host": socket.gethostname(), "pid": os.getpid(),
            "command": path_text(command if command is not None else " ".join(sys.argv)),
            "tracesql_version": __version__, "files_seen": 0, "ingested": 0, "already_present": 0, "failed": 0,
            "json_bytes": 0, "error": None,
        }
        self.files: list[dict] = []
        self.dir = self.dataset / RUNS_DIR
        self.dir.mkdir(exist_ok=True)
        self._mark_killed()
        self._write()

    @property
    def path(self) -> Path:
        return self.dir / f"{self.run_id}.json"

    def _write(self) -> None:
        _write_json(self.path, {**self.row, "files": self.files})

    def _mark_killed(self) -> None:
        """Runs of this host still 'running' whose process is gone were killed: say so in their records."""
        host = socket.gethostname()
        for p in self.dir.glob("*.json"):
            try:
                rec = orjson.loads(p.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            if rec.get("status") == "running" and rec.get("host") == host and not _pid_alive(int(rec.get("pid", 0))):
                rec["status"] = "killed"
                _write_json(p, rec)

    def add(self, path: str, status: str, trace_id: str | None, error: str | None, json_bytes: int,
            seconds: float) -> None:
        """Record what became of one file (kept in memory; written with the run's end)."""
        self.files.append({"run_id": self.run_id, "path": path_text(path), "status": status,
                           "trace_id": trace_id, "error": None if error is None else path_text(error),
                           "json_bytes": json_bytes, "seconds": round(seconds, 6)})
        key = {"ingested": "ingested", "duplicate": "already_present", "failed": "failed"}[status]
        self.row[key] += 1
        self.row["files_seen"] += 1
        if status == "ingested":
            self.row["json_bytes"] += json_bytes

    def finish(self, status: str | None = None, error: str | None = None) -> None:
        """Write the run's end: ``status`` (default 'done', or 'failed_files' when a file failed)."""
        self.row["status"] = status or ("failed_files" if self.row["failed"] else "done")
        self.row["error"] = error
        self.row["ended_at"] = _now()
        self.row["duration_s"] = round(time.time() - self.t0, 3)
        self._write()

    def discard(self) -> None:
        """Remove the record (the dataset made by this run is removed: nothing was ingested)."""
        self.path.unlink(missing_ok=True)

"""The record of ingest runs (``ingest_runs``, ``ingest_run_files``) and the dataset's lock.

Each run of ``tracesql.ingest`` writes ``DATASET/runs/<run_id>.json`` when it starts (status ``running``) and
rewrites it, atomically, when it ends: a scheduled job can tell from the dataset which run added which traces,
which files failed and why, and whether a run is still going. A run found ``running`` by a later run on the same
host whose process is gone is marked ``killed``. The columns are ``schema.DATASET_TABLES``; the views of the same
names read the files (``tracesql.store.dataset.table_statements``).

Every trace a run publishes carries the run's entry for its file (``traces/trace_id=<id>/ingest_run.json``,
written before the trace's atomic publish): the view ``ingest_run_files`` adds those missing from their run's
record, and a run that ends abnormally (interrupted, an error, killed: repaired by the next run) adds them to its
record, so that every published trace belongs to the run that published it, whatever happens to that run.

``dataset_lock`` (tracesql.store.lock) serialises what two commands on one dataset must not do at once.
"""
from __future__ import annotations

import datetime as _dt
import os
import socket
import sys
import time
import uuid
from pathlib import Path

import orjson

from tracesql.escape import path_text
from tracesql.ingest.publish import RUN_SIDECAR
from tracesql.store.lock import LOCK_FILE, dataset_lock, pid_alive

__all__ = ["LOCK_FILE", "RUNS_DIR", "RunRecord", "dataset_lock", "published_by"]

RUNS_DIR = "runs"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds")


def _write_json(path: Path, obj: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


def published_by(dataset: Path, run_ids: set[str]) -> dict[str, list[dict]]:
    """The entries (RUN_SIDECAR) of the traces published by the runs ``run_ids``: {run_id: [entry, ...]}."""
    out: dict[str, list[dict]] = {}
    for p in sorted((Path(dataset) / "traces").glob(f"trace_id=*/{RUN_SIDECAR}")):
        try:
            rec = orjson.loads(p.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if rec.get("run_id") in run_ids:
            out.setdefault(rec["run_id"], []).append(rec)
    return out


def _file_entry(rec: dict) -> dict:
    return {k: rec.get(k) for k in ("run_id", "path", "status", "trace_id", "error", "json_bytes", "seconds")}


def _adopt(row: dict, files: list[dict], published: list[dict]) -> int:
    """Add to a run's record (``row``, ``files``) the traces it published that it does not list; returns how
    many."""
    have = {(f.get("trace_id"), f.get("status")) for f in files}
    n = 0
    for rec in published:
        if (rec.get("trace_id"), "ingested") in have:
            continue
        files.append(_file_entry(rec))
        row["ingested"] = row.get("ingested", 0) + 1
        row["files_seen"] = row.get("files_seen", 0) + 1
        row["json_bytes"] = row.get("json_bytes", 0) + (rec.get("json_bytes") or 0)
        n += 1
    return n


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
        """Runs of this host still 'running' whose process is gone were killed: say so in their records, with the
        traces they published (their entries are in the traces' directories)."""
        host = socket.gethostname()
        dead = {}
        for p in self.dir.glob("*.json"):
            try:
                rec = orjson.loads(p.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            if rec.get("status") == "running" and rec.get("host") == host and not pid_alive(int(rec.get("pid", 0))):
                dead[rec.get("run_id")] = (p, rec)
        if not dead:
            return
        published = published_by(self.dataset, set(dead))
        for run_id, (p, rec) in dead.items():
            rec.setdefault("files", [])
            _adopt(rec, rec["files"], published.get(run_id, []))
            rec["status"] = "killed"
            rec["error"] = rec.get("error") or ("the process ended without writing the end of its record (killed, "
                                                "or the machine went down)")
            try:
                _write_json(p, rec)
            except OSError:
                pass

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

    def adopt_published(self) -> None:
        """Add the traces this run published that its record does not list yet (a run that ends abnormally: its
        tasks' results may not all have come back)."""
        try:
            _adopt(self.row, self.files, published_by(self.dataset, {self.run_id}).get(self.run_id, []))
        except OSError:
            pass

    def finish(self, status: str | None = None, error: str | None = None) -> str | None:
        """Write the run's end: ``status`` (default 'done', or 'failed_files' when a file failed). When the record
        cannot be written whole (e.g. the disk is full), its end is written without the list of files, in place;
        returns a line saying what could not be recorded (None when all was)."""
        if status is not None:
            self.adopt_published()
        self.row["status"] = status or ("failed_files" if self.row["failed"] else "done")
        self.row["error"] = error
        self.row["ended_at"] = _now()
        self.row["duration_s"] = round(time.time() - self.t0, 3)
        try:
            self._write()
            return None
        except OSError as e:
            why = e.strerror or type(e).__name__
        # in place (no second file: on a full disk, truncating the old record frees its space first)
        row = {**self.row, "error": (f"{error}; " if error else "") + f"the list of files could not be recorded "
               f"({why})", "files": []}
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o666)
            try:
                os.write(fd, orjson.dumps(row))
            finally:
                os.close(fd)
        except OSError as e2:
            return (f"the record of run {self.run_id} could not be written ({e2.strerror or type(e2).__name__}); "
                    "the traces it published are listed in their folders (ingest_run_files)")
        return (f"the record of run {self.run_id} was written without its list of files ({why}); the traces it "
                "published are listed in their folders (ingest_run_files)")

    def discard(self) -> None:
        """Remove the record (the dataset made by this run is removed: nothing was ingested)."""
        self.path.unlink(missing_ok=True)

"""The dataset side of an ingest: duplicates, work areas and the atomic publish of a trace.

A trace is written in a private work area ``DATASET/.staging/<pid>-<random>/`` and published by renaming its
``out`` directory to ``DATASET/traces/trace_id=<id>`` in one step, after every file in it is on disk. The trace
id is the first 16 hex digits of the file's content hash, so a file whose size and hash match a published trace
is a duplicate and is not read again. Work areas of processes that no longer run are removed.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import socket
import uuid
from pathlib import Path

import duckdb
import orjson

from tracesql.escape import glob_escape
from tracesql.ingest.jsonstream import content_hasher
from tracesql.store.lock import dataset_lock, fsync_dir, pid_alive, recover

# The record of the run that published a trace, written into the trace's directory before its publish: a
# published trace belongs to its run whatever happens to the run after (runs.py reads them back).
RUN_SIDECAR = "ingest_run.json"

# (size, content hash) of the published traces of each dataset, by trace directory name. A trace directory is
# complete and never changes once published, so only directories not seen before are read (those published by
# another process, or by an earlier call).
_KNOWN: dict[str, dict[str, tuple[int, str]]] = {}


def _known_sizes(dataset: Path) -> dict[int, list[str]]:
    """The content hashes of the dataset's published traces, by file size."""
    tdir = dataset / "traces"
    cache = _KNOWN.setdefault(str(dataset.resolve()), {})
    present = {d.name for d in tdir.glob("trace_id=*")} if tdir.is_dir() else set()
    for gone in set(cache) - present:
        del cache[gone]
    new = sorted(present - set(cache))
    if new:
        files = [glob_escape(tdir / d / "traces" / "part-00000.parquet") for d in new]  # read literally
        con = duckdb.connect(config={"memory_limit": "256MB"})
        con.execute("SET enable_progress_bar = false")
        try:
            rows = con.execute("SELECT parse_dirpath(filename), size_bytes, content_hash FROM read_parquet(?, "
                               "filename = true)", [files]).fetchall()
        finally:
            con.close()
        for path, size, h in rows:
            cache[Path(path).parent.name] = (size, h)
    out: dict[int, list[str]] = {}
    for size, h in cache.values():
        out.setdefault(size, []).append(h)
    return out


def _known_hash(path: str, hashes: list[str]) -> str | None:
    """The file's content hash if it is one of ``hashes``, else None. Datasets written before the content hash
    became XXH3-128 hold BLAKE2b-128 digests: that digest is computed (a second read of the file) only when the
    XXH3 one is not found."""
    for new_hash in (content_hasher, lambda: hashlib.blake2b(digest_size=16)):
        h = new_hash()
        with open(path, "rb") as f:
            while b := f.read(8 << 20):
                h.update(b)
        if (digest := h.hexdigest()) in hashes:
            return digest
    return None


def published_hash(path: str, size: int, dataset: Path) -> str | None:
    """The content hash under which the file (``size`` bytes) is already published in ``dataset``, else None."""
    known = _known_sizes(dataset)
    if size not in known:
        return None
    return _known_hash(path, known[size])


_pid_alive = pid_alive


def _stale(pid: str) -> bool:
    return pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid))


def remove_stale_staging(dataset: Path) -> None:
    """Remove the work areas (and init.sql, catalog and journal temporary files) left by commands that were
    killed: their process no longer exists. Under the dataset's lock, after a rules change that a killed process
    had committed is finished (its staged files are in a work area)."""
    staging_root = dataset / ".staging"
    host = socket.gethostname()
    stale = []
    if staging_root.is_dir():
        for d in staging_root.iterdir():
            pid, _, rest = d.name.partition("-")
            if "@" in rest and rest.split("@", 1)[1] != host:
                continue  # another machine's (a dataset on a shared filesystem): its processes are not seen here
            if _stale(pid):
                stale.append(d)
    temps = [f for pat in (".init.sql.*", ".catalog.*.duckdb*", ".rules-change.json.*.tmp")
             for f in dataset.glob(pat) if _stale(_temp_pid(f.name))]
    if not stale and not temps:
        return
    recover(dataset)
    with dataset_lock(dataset):
        for d in stale:
            shutil.rmtree(d, ignore_errors=True)
        for f in temps:
            f.unlink(missing_ok=True)


def _temp_pid(name: str) -> str:
    """The pid in the name of a temporary file: ``.init.sql.<pid>-<r>``, ``.catalog.<pid>-<r>.duckdb[.wal]``,
    ``.rules-change.json.<pid>.tmp``."""
    if name.startswith(".init.sql."):
        return name[len(".init.sql."):].split("-", 1)[0]
    if name.startswith(".catalog."):
        return name[len(".catalog."):].split("-", 1)[0]
    return name.split(".")[-2]


def new_staging(dataset: Path) -> Path:
    """A new, empty work area of this process in ``dataset``: ``<pid>-<random>@<host>`` (the host, as a dataset on
    a shared filesystem is written by several machines: only those of this host are checked for a dead process)."""
    staging_root = dataset / ".staging"
    staging_root.mkdir(parents=True, exist_ok=True)
    staging = staging_root / f"{os.getpid()}-{uuid.uuid4().hex[:12]}@{socket.gethostname()}"
    staging.mkdir()
    return staging


def _fsync_tree(root: Path) -> None:
    """fsync every file under ``root`` and the directories holding them."""
    for d, _, names in os.walk(root):
        for n in names:
            fd = os.open(os.path.join(d, n), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(d))


def publish(out: Path, dataset: Path, trace_id: str, size: int, content_hash: str, run: dict | None = None,
            before=None) -> bool:
    """Move the complete trace directory ``out`` to ``dataset/traces/trace_id=<trace_id>`` in one atomic step,
    under the dataset's lock, with ``run`` (the record of the run for this trace: RUN_SIDECAR) in it. ``before``
    is called under the lock just before (to bring the trace's tables in line with the dataset's rules). Returns
    False, publishing nothing, when a trace of that id is already there."""
    final = dataset / "traces" / f"trace_id={trace_id}"
    final.parent.mkdir(parents=True, exist_ok=True)
    if run is not None:
        (out / RUN_SIDECAR).write_bytes(orjson.dumps(run))
    _fsync_tree(out)  # the parts are on disk before they are published: a machine crash cannot publish a trace
    #                   whose files are incomplete
    recover(dataset)
    with dataset_lock(dataset):
        if final.exists():
            return False
        if before is not None:
            before()
            _fsync_tree(out)
        try:
            os.rename(out, final)
        except OSError:
            if final.exists():
                return False
            raise
    fsync_dir(final.parent)
    _KNOWN.setdefault(str(dataset.resolve()), {})[final.name] = (size, content_hash)
    return True

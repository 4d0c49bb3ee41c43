"""Streaming ingest of trace files into a dataset of Parquet tables.

One file goes through these stages (memory stays flat whatever the file size):

1. publish.py: work areas left by killed ingests are removed; a file whose size and content hash match a
   published trace is a duplicate and is skipped; any other is written in a private work area of the dataset
   (``.staging/<pid>-<random>``).
2. parse.py: ``jsonstream`` streams the decompressed text and cuts ``traceEvents`` into chunks of whole events;
   two worker threads each read a chunk with DuckDB's JSON reader (read.py: the read modes of ts/dur and the
   table each event goes to) and write its rows as one Parquet part per table (extract.py: the columns of each
   table, typed args fields included). Consecutive small files of a run are parsed together instead
   (parse_group.py: one read and one write per table for many files).
3. finalize.py: what needs the whole file: complete events without a category, ``ingest_issues``, the derived
   tables (derive.py: the call-tree nesting, launch links, op context and GPU timeline, built by the views in
   sql/) and the ``traces`` row.
4. publish.py: the trace directory is renamed to ``traces/trace_id=<id>`` in one atomic step.
"""
from __future__ import annotations

import glob as globlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import orjson

from tracesql.errors import DatasetError, TraceError
from tracesql.escape import path_text
from tracesql.ingest.derive import BATCH_TRACES, BUILD_MEMORY_LIMIT, build_derived, rules_plan, rules_stamp
from tracesql.ingest.finalize import FinishedTrace, PreparedTrace, complete, prepare, rules_dir
from tracesql.ingest.parse import ParsedTrace, TraceParser, Workers, default_chunk_size
from tracesql.ingest.parse_group import GROUP_FILES, GROUP_JSON_BYTES, SMALL_FILE_JSON_BYTES, Group
from tracesql.ingest.progress import THRESHOLD_BYTES, Progress, estimate_json_bytes
from tracesql.ingest.publish import RUN_SIDECAR, new_staging, publish, published_hash, remove_stale_staging
from tracesql.ingest.runs import RunRecord, dataset_lock, published_by
from tracesql.parallel.executors import (
    EXECUTORS,
    EXIT_AFTER_PUBLISH_ENV,
    TASK_RUNS,
    Pool,
    cores,
    exit_once_if_asked,
    process_died,
)
from tracesql.store.config import close_connection
from tracesql.store.dataset import check_dataset_path, ensure_catalog, write_init_sql
from tracesql.store.lock import Active, enter

__all__ = ["BUILD_MEMORY_LIMIT", "TRACE_SUFFIXES", "IngestResult", "Workers", "default_jobs", "find_trace_files",
           "ingest", "ingest_file"]

TRACE_SUFFIXES = (".json", ".json.gz", ".gz", ".xplane.pb")

# The traces of one run are built together (``Batch``) until they hold this much JSON (or BATCH_TRACES traces):
# a statement of the build costs a few ms whatever the size, which would dominate the ingest of a small file.
# A trace of BUILD_ALONE_JSON_BYTES or more is built (with those staged before it) without waiting for more.
BATCH_JSON_BYTES = 64 << 20
BUILD_ALONE_JSON_BYTES = 16 << 20

BUILD_PHASE = "building the call tree and the timeline"  # what the progress display says while tables are built


@dataclass
class IngestResult:
    """The outcome of one file; ``summary_line()`` is what ``tracesql ingest`` prints for it."""

    path: str
    trace_id: str | None = None
    status: str = "ingested"  # ingested | duplicate | failed
    error: str | None = None
    row_counts: dict = field(default_factory=dict)
    events_read: int = 0
    skipped: dict = field(default_factory=dict)
    json_bytes: int = 0
    seconds: float = 0.0
    truncated: bool = False
    rank: int | None = None
    noted: dict = field(default_factory=dict)  # ingest_issues rows that are not skipped events, by kind
    unlinked: int = 0  # GPU events without a launch call (gpu_launch_links.linked = false)

    def summary_line(self) -> str:
        if self.status == "failed":
            return f"tracesql: error: {self.error}"
        name = os.path.basename(self.path)
        if self.status == "duplicate":
            return f"{name}: already in the dataset as trace {self.trace_id} (same content hash); skipped"
        rc = ", ".join(f"{k} {v:,}" for k, v in self.row_counts.items() if v) or "no rows"
        sk = sum(self.skipped.values())
        skipped = "0 skipped" if not sk else f"{sk:,} skipped (" + ", ".join(
            f"{k}: {v:,}" for k, v in self.skipped.items()) + ")"
        mbs = self.json_bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0
        trunc = "; TRUNCATED file salvaged" if self.truncated else ""
        rank = f" rank {self.rank}" if self.rank is not None else ""
        noted = ""
        if self.noted:
            noted = "; noted in ingest_issues: " + ", ".join(f"{k} {v:,}" for k, v in self.noted.items())
        unlinked = ""
        if self.row_counts.get("kernels"):
            unlinked = f"; GPU events without a launch: {self.unlinked:,}"
        return (f"{name} -> trace {self.trace_id}{rank}: {self.events_read:,} events read in {self.seconds:.2f} s "
                f"({mbs:.0f} MB/s); {rc}; {skipped}{noted}{unlinked}{trunc}")


def find_trace_files(paths: list[str]) -> list[str]:
    """Expand directories into the trace files inside them (recursively), sorted, and glob patterns (``*``, ``?``,
    ``[...]``, ``**``; given quoted, as a scheduled job does) into the paths they match, sorted; a pattern that
    matches nothing stays as given (and fails as a missing file)."""
    out: list[str] = []
    for p in paths:
        pp = Path(p)
        if not pp.exists() and any(c in p for c in "*?["):
            matches = sorted(globlib.glob(p, recursive=True))
            if matches:
                out += find_trace_files(matches)
                continue
        if pp.is_dir():
            found = []
            for d, dirs, names in os.walk(pp):
                # a tracesql dataset in the folder (its run records, init.sql, ...) holds no trace files
                dirs[:] = [x for x in dirs if not is_dataset_dir(Path(d) / x)]
                found += [Path(d) / n for n in names if n.endswith(TRACE_SUFFIXES) and not n.startswith(".")
                          and os.path.isfile(os.path.join(d, n))]
            out += [str(f) for f in sorted(found)]
        else:
            out.append(str(pp))
    return out


def is_dataset_dir(d: Path) -> bool:
    """Whether ``d`` is a tracesql dataset: a ``traces`` folder and a file only a dataset has."""
    return (d / "traces").is_dir() and any((d / n).exists() for n in ("runs", "init.sql", ".lock", ".active",
                                                                      "catalog.duckdb", ".staging"))


def failed_result(path: str, e: Exception) -> IngestResult:
    """The result of a file whose ingest raised ``e``: bad input (TraceError), a file or database error, or a
    bug (an internal error, to be reported), each in one line."""
    if isinstance(e, TraceError):
        return IngestResult(path=path, status="failed", error=str(e))
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    if isinstance(e, (OSError, duckdb.Error)):
        return IngestResult(path=path, status="failed", error=f"{path}: {msg}")
    msg = str(e).splitlines()[0] if str(e) else ""
    return IngestResult(path=path, status="failed",
                        error=f"{path}: internal error ({type(e).__name__}: {msg}); please report it")


@dataclass
class _Staged:
    """A trace parsed and prepared in its work area, waiting for its derived tables and its publish."""

    result: IngestResult
    parsed: ParsedTrace
    pre: PreparedTrace
    started: float
    seconds: float  # wall seconds spent on this trace so far
    out: Path  # the directory of its tables (parsed.out, renamed trace_id=<id> when built with others)


class Batch:
    """Traces staged by ``ingest_file`` whose derived tables are built together by ``flush``: one run of the
    build's statements for all of them, so that small traces do not each pay the statements' fixed cost. Each
    trace is still published on its own, atomically."""

    def __init__(self, dataset: Path, run_id: str | None = None):
        self.dataset = dataset
        self.run_id = run_id
        self.staged: list[_Staged] = []
        self._con: duckdb.DuckDBPyConnection | None = None

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection that prepares and completes the traces of this batch (opened once: a connection
        costs more than the statements of a small trace)."""
        if self._con is None:
            spill = os.path.join(tempfile.gettempdir(), f"tracesql-spill-{os.getpid()}-{uuid.uuid4().hex[:8]}")
            self._con = duckdb.connect(config={"threads": 2, "memory_limit": "512MB", "temp_directory": spill,
                                               "preserve_insertion_order": True})
            self._con.execute("SET enable_progress_bar = false")
        return self._con

    @property
    def json_bytes(self) -> int:
        return sum(s.parsed.source.json_bytes for s in self.staged)

    def full(self) -> bool:
        """Whether to build now: the batch holds enough JSON, or traces, or its last trace is large (its build
        costs far more than the statements' fixed cost: it need not wait for others)."""
        return (self.json_bytes >= BATCH_JSON_BYTES or len(self.staged) >= BATCH_TRACES
                or (bool(self.staged) and self.staged[-1].parsed.source.json_bytes >= BUILD_ALONE_JSON_BYTES))

    def add(self, st: _Staged) -> bool:
        """Add a staged trace; False when a trace of the same content is already staged (a duplicate)."""
        if any(s.result.trace_id == st.result.trace_id for s in self.staged):
            return False
        self.staged.append(st)
        return True

    def flush(self, strict: bool = False,
              on_result: Callable[[IngestResult], object] | None = None) -> list[IngestResult]:
        """Build the derived tables of the staged traces, write their traces rows and publish them; returns
        their results in the order staged (status 'ingested'; 'duplicate' when another process published the
        same content meanwhile). When building them together fails, each is built alone, so that only a trace
        that fails alone fails ('failed', with a one-line error; with ``strict`` its error is raised).
        ``on_result`` is called with each result as soon as it is final (a trace right after its publish)."""
        staged, self.staged = self.staged, []
        cb = on_result or (lambda r: None)
        try:
            if len(staged) > 1:
                try:
                    return self._build(staged, cb)
                except (duckdb.Error, OSError) as e:
                    if _interrupted(e):
                        raise KeyboardInterrupt from None  # each alone, below, unless it was a Ctrl-C
            results = []
            for st in staged:
                if st.result.status != "staged":  # published before the error
                    results.append(st.result)
                    continue
                try:
                    results += self._build([st], cb)
                except (KeyboardInterrupt, SystemExit, MemoryError):
                    raise
                except Exception as e:
                    if _interrupted(e):
                        raise KeyboardInterrupt from None
                    if strict:
                        raise
                    failed = failed_result(st.result.path, e)
                    st.result.status, st.result.error = failed.status, failed.error
                    results.append(st.result)
                    cb(st.result)
            return results
        finally:
            for st in staged:
                shutil.rmtree(st.parsed.staging, ignore_errors=True)

    def _build(self, staged: list[_Staged], on_result: Callable[[IngestResult], object]) -> list[IngestResult]:
        t0 = time.time()
        outs = []
        for st in staged:
            if len(staged) > 1 and st.out.name != f"trace_id={st.result.trace_id}":
                # traces built together are told apart by their directory's name (hive partitioning)
                out = st.parsed.staging / f"trace_id={st.result.trace_id}"
                os.rename(st.out, out)
                st.out = out
            outs.append(st.out)
        first = staged[0].parsed
        rdir = rules_dir(first)
        stamp = rules_stamp(rdir)  # the rules the tables are built with
        build_derived(outs[0] if len(outs) == 1 else outs, first.staging, rules_dir=rdir)
        share = (time.time() - t0) / len(staged)
        done = [complete(self.con, st.parsed, st.pre, out, st.started) for st, out in zip(staged, outs, strict=True)]
        results = []
        for st, out, d in zip(staged, outs, done, strict=True):
            results.append(self._publish(st, out, d, share, rdir, stamp))
            exit_once_if_asked(EXIT_AFTER_PUBLISH_ENV)
            on_result(results[-1])
        return results

    def _publish(self, st: _Staged, out: Path, done: FinishedTrace, share: float, rdir: Path,
                 stamp: str) -> IngestResult:
        res = st.result
        trace_id = done.row["trace_id"]

        def same_rules() -> None:
            """Under the lock, just before the publish: a rules change since the build is applied to this trace
            too (the dataset's traces were rebuilt with it; this one was not published yet)."""
            if rules_stamp(rdir) != stamp:
                plan = rules_plan()
                build_derived(out, st.parsed.staging, plan, rules_dir=rdir)  # each table as one part
                for step in plan.steps:
                    for part in (out / step.table).glob("part-*.parquet"):
                        if part.name != "part-00000.parquet":
                            part.unlink()

        res.row_counts = done.counts
        res.events_read = done.row["events_read"]
        res.skipped = done.skipped
        res.json_bytes = st.parsed.source.json_bytes
        res.truncated = st.parsed.splitter.truncated
        res.rank = done.row["rank"]
        res.noted = done.noted
        res.unlinked = done.unlinked
        res.seconds = st.seconds + share
        run = None
        if self.run_id is not None:
            run = {"run_id": self.run_id, "path": path_text(res.path), "status": "ingested", "trace_id": trace_id,
                   "error": None, "json_bytes": res.json_bytes, "seconds": round(res.seconds, 6),
                   "result": _result_fields(res)}
        if not publish(out, self.dataset, trace_id, done.row["size_bytes"], done.row["content_hash"], run=run,
                       before=same_rules):
            res.status = "duplicate"
            return res
        res.status = "ingested"
        return res

    def close(self) -> None:
        """Remove the work areas of the traces still staged (after an error or an interrupt: nothing of them is
        published) and close the connection."""
        for st in self.staged:
            shutil.rmtree(st.parsed.staging, ignore_errors=True)
        self.staged = []
        if self._con is not None:
            close_connection(self._con)
            self._con = None


_RESULT_FIELDS = ("row_counts", "events_read", "skipped", "json_bytes", "seconds", "truncated", "rank", "noted",
                  "unlinked")


def _result_fields(r: IngestResult) -> dict:
    return {k: getattr(r, k) for k in _RESULT_FIELDS}


def result_from_record(rec: dict) -> IngestResult:
    """The result of a file whose trace this run published, from the entry the trace carries (RUN_SIDECAR)."""
    r = IngestResult(path=rec["path"], trace_id=rec.get("trace_id"), status="ingested")
    for k, v in (rec.get("result") or {}).items():
        if k in _RESULT_FIELDS:
            setattr(r, k, v)
    return r


def _check_file(path: str, dataset: Path) -> str | None:
    """Before a file is read: TraceError when it is missing or not a regular file; the trace id of a published
    trace with the same size and content hash (the file is a duplicate), else None."""
    if not os.path.isfile(path):
        raise TraceError(path, "no such file or directory" if not os.path.exists(path) else "not a regular file")
    h = published_hash(path, os.path.getsize(path), dataset)
    return h[:16] if h is not None else None


def _stage(b: Batch, parsed: ParsedTrace, res: IngestResult, started: float, seconds: float) -> bool:
    """Prepare a parsed trace and stage it in ``b``; False when a trace of the same content is staged already
    (``res`` is then a duplicate)."""
    pre = prepare(b.con, parsed)
    res.trace_id = parsed.source.content_hash[:16]
    res.status = "staged"
    st = _Staged(result=res, parsed=parsed, pre=pre, started=started, seconds=seconds, out=parsed.out)
    if not b.add(st):
        res.status = "duplicate"
        return False
    return True


def ingest_file(path: str, dataset: Path, salvage: bool = False, quiet: bool = True,
                chunk_size: int | None = None, workers: Workers | None = None,
                batch: Batch | None = None) -> IngestResult:
    """Ingest one trace file into ``dataset`` atomically. Raises TraceError for bad input.

    Work areas left in the dataset by killed ingests are removed first; ``workers`` may be shared by the files
    of one run (a pool of two is made and closed for this file otherwise). With ``batch``, the trace is parsed
    and staged in it (status 'staged'; ``Batch.flush`` builds, publishes and completes the result), unless it is
    a duplicate."""
    started = time.time()
    res = IngestResult(path=path)
    remove_stale_staging(dataset)
    dup = _check_file(path, dataset)
    if dup is not None:
        res.status, res.trace_id = "duplicate", dup
        return res
    size = os.path.getsize(path)
    staging = new_staging(dataset)
    own_workers = workers is None
    pool = workers or Workers(2)
    json_size = estimate_json_bytes(path, size) if not quiet else size
    progress = Progress(os.path.basename(path), size, enabled=not quiet and json_size > THRESHOLD_BYTES,
                        json_total=json_size)
    own_batch = batch is None
    staged = False
    b: Batch | None = None
    try:
        parsed = TraceParser(path, staging, salvage, chunk_size or default_chunk_size(path, size), progress, pool).run()
        if parsed.source.json_bytes >= BATCH_JSON_BYTES:
            pool.release()  # the workers' memory goes back before a large trace's derived tables are built
        b = Batch(dataset) if own_batch else batch
        assert b is not None
        if not _stage(b, parsed, res, started, time.time() - started):
            return res
        staged = True
        exit_once_if_asked()
        if own_batch:
            progress.phase(BUILD_PHASE)
            return b.flush(strict=True)[0]
        return res
    finally:
        progress.close()
        if own_workers:
            pool.close()
        if own_batch and b is not None:
            b.close()
        if not staged:
            shutil.rmtree(staging, ignore_errors=True)


def _small_json_bytes(path: str) -> int | None:
    """The size of a file's JSON text when the file is parsed in a group with others (parse_group.py: its JSON
    text is small), else None."""
    if not os.path.isfile(path):
        return None
    n = estimate_json_bytes(path, os.path.getsize(path))
    return n if n <= SMALL_FILE_JSON_BYTES else None


def _ingest_group(paths: list[str], dataset: Path, salvage: bool, workers: Workers,
                  batch: Batch) -> list[IngestResult | Exception]:
    """Ingest small files as ``ingest_file`` does each, their parse done together (parse_group.py): each file's
    result (staged in ``batch``, a duplicate, or the error its ingest alone raises), in order."""
    started = time.time()
    remove_stale_staging(dataset)
    results: dict[int, IngestResult | Exception] = {}
    group = Group(salvage)
    members: dict[int, int] = {}  # index in paths -> key in the group
    stagings: dict[int, Path] = {}
    try:
        for i, path in enumerate(paths):
            try:
                dup = _check_file(path, dataset)
            except TraceError as e:
                results[i] = e
                continue
            if dup is not None:
                results[i] = IngestResult(path=path, status="duplicate", trace_id=dup)
                continue
            stagings[i] = new_staging(dataset)
            if group.add(path, stagings[i]):
                members[i] = len(members)
        parsed: list[ParsedTrace | TraceError | None] = []
        if len(members) > 1:
            stagings[-1] = work = new_staging(dataset)  # the group's partitioned writes
            try:
                parsed = group.parse(workers.con(), work)
            except OSError as e:
                if os.environ.get("TRACESQL_DEBUG"):
                    print(f"tracesql: parsing {len(members)} files one by one: {e}", file=sys.stderr)
                members = {}  # each parsed alone, below
        else:
            members = {}
        seconds = (time.time() - started) / max(1, len(members))
        for i in range(len(paths)):  # staged in the order of the files, as they are reported
            p = parsed[members[i]] if i in members else None
            if i in results:
                continue
            if p is None:  # not in the group, or the group's read failed on it: parsed alone
                shutil.rmtree(stagings.pop(i), ignore_errors=True)
                try:
                    results[i] = ingest_file(paths[i], dataset, salvage=salvage, workers=workers, batch=batch)
                except (KeyboardInterrupt, SystemExit, MemoryError):
                    raise
                except Exception as e:  # noqa: BLE001 - reported by the caller, in order
                    if _interrupted(e):
                        raise KeyboardInterrupt from None
                    results[i] = e
                continue
            if isinstance(p, TraceError):
                results[i] = p
                continue
            res = IngestResult(path=paths[i])
            try:
                if _stage(batch, p, res, started, seconds):
                    del stagings[i]  # the batch owns it now
                    exit_once_if_asked()
            except (KeyboardInterrupt, SystemExit, MemoryError):
                raise
            except Exception as e:  # noqa: BLE001 - this file's error; the others go on
                if _interrupted(e):
                    raise KeyboardInterrupt from None
                res = failed_result(paths[i], e)
            results[i] = res
    finally:
        for st in stagings.values():
            shutil.rmtree(st, ignore_errors=True)
    return [results[i] for i in range(len(paths))]


def ingest(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
           out: str | os.PathLike[str] = "tracesql_data", salvage: bool = False, quiet: bool = True,
           on_result: Callable[[IngestResult], object] | None = None,
           command: str | None = None, jobs: int | None = 1, executor: str = "processes",
           scheduler: str | None = None, scheduler_file: str | None = None) -> list[IngestResult]:
    """Ingest trace files (or directories of them) into the dataset at ``out``.

    Bad files do not stop the others: each yields an IngestResult with status 'failed' and a one-line error.
    The run is recorded in the dataset (``ingest_runs``, ``ingest_run_files``; ``command`` is the command line
    it names, 'tracesql.ingest' by default). ``jobs``: processes that ingest files in parallel (None: as many as
    the machine has cores, see ``default_jobs``); results are reported in the order of the files either way.
    ``executor``: 'processes' (this machine) or 'dask' (a Dask cluster: ``scheduler`` address or
    ``scheduler_file``, else DASK_SCHEDULER_ADDRESS, else a LocalCluster of ``jobs`` workers; executors.py).
    """
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}")
    if isinstance(paths, (str, os.PathLike)):
        paths = [str(paths)]
    dataset = Path(out)
    created, act = _enter_dataset(dataset)
    try:
        return _run(paths, dataset, out, created, act, salvage, quiet, on_result, command, jobs, executor,
                    scheduler, scheduler_file)
    finally:
        act.release()


def _run(paths, dataset: Path, out, created: _Created | None, act: Active, salvage: bool, quiet: bool,
         on_result: Callable[[IngestResult], object] | None, command: str | None, jobs: int | None, executor: str,
         scheduler: str | None, scheduler_file: str | None) -> list[IngestResult]:
    try:
        run = RunRecord(dataset, command if command is not None else "tracesql.ingest")
    except OSError as e:
        if created:
            _remove_new_dataset(dataset, created, act, None)
        raise DatasetError(f"{out}: cannot write the record of this run ({e.strerror or type(e).__name__})") \
            from None

    def record(r: IngestResult) -> None:
        run.add(r.path, r.status, r.trace_id, r.error, r.json_bytes if r.status == "ingested" else 0, r.seconds)
        if on_result:
            on_result(r)

    def finish(status: str | None = None, error: str | None = None) -> None:
        note = run.finish(status, error)
        if note:
            print(f"tracesql: warning: {note}", file=sys.stderr)

    try:
        files = find_trace_files([str(p) for p in paths])
        n = default_jobs(files) if jobs is None else max(1, min(jobs, len(files)))
        if executor == "dask" or n > 1:
            results = _ingest_parallel(files, dataset, out, salvage, quiet, record, n, executor, scheduler,
                                       scheduler_file, run_id=run.run_id)
        else:
            results = _ingest_files(files, dataset, out, salvage, quiet, record, run_id=run.run_id)
    except KeyboardInterrupt:
        finish("interrupted", "interrupted (Ctrl-C or SIGTERM)")
        if created:
            _remove_new_dataset(dataset, created, act, run)
        raise
    except BaseException as e:  # an error of the dataset: a dataset made by this call goes again
        if _interrupted(e):  # DuckDB's report of a Ctrl-C
            finish("interrupted", "interrupted (Ctrl-C or SIGTERM)")
            if created:
                _remove_new_dataset(dataset, created, act, run)
            raise KeyboardInterrupt from None
        finish("error", str(e).splitlines()[0] if str(e) else type(e).__name__)
        if created:
            _remove_new_dataset(dataset, created, act, run)
        raise
    if not (created and not any(r.status == "ingested" for r in results)
            and _remove_new_dataset(dataset, created, act, run)):
        finish()  # (a new dataset in which nothing was ingested is removed again, with this record)
    return results


DATASET_FILES = (".staging", "init.sql", "catalog.duckdb", "rules", "runs", "twins", ".lock", ".active", "traces")


@dataclass
class _Created:
    """What a run made when it created its dataset: ``top``, the topmost directory it made (None: the dataset's
    directory was there, empty, and is emptied again rather than removed)."""

    top: Path | None


def _enter_dataset(dataset: Path) -> tuple[_Created | None, Active]:
    """Make the dataset directory if needed and take its ``active`` lock (tracesql.store.lock) for the run.
    Returns what the run created (None: the dataset was there, or another run created it) and the lock. The run
    that creates ``traces/`` (one ``mkdir``: one run of those starting together) is the dataset's creator. A file
    that is not a directory, or a directory that holds files and is not a dataset, is refused."""
    check_dataset_path(dataset)
    for _ in range(100):
        if dataset.exists() and not dataset.is_dir():
            raise DatasetError(f"{dataset}: cannot create the dataset here (File exists)")
        try:
            foreign = dataset.is_dir() and not (dataset / "traces").is_dir() and any(
                p.name not in DATASET_FILES and not p.name.startswith((".init.sql.", ".catalog.", ".rules-change."))
                for p in dataset.iterdir())
        except FileNotFoundError:
            continue  # removed meanwhile by the run that had created it
        if foreign:
            raise DatasetError(f"{dataset}: a directory that is not a tracesql dataset and not empty; give a new or "
                               "empty directory, or an existing dataset")
        existed = dataset.is_dir()
        top = dataset.absolute()
        made: Path | None = None
        while not top.exists():
            made, top = top, top.parent
        try:
            dataset.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DatasetError(f"{dataset}: cannot create the dataset here ({e.strerror or type(e).__name__})") \
                from None
        try:
            act = enter(dataset)
        except OSError as e:
            raise DatasetError(f"{dataset}: cannot create the dataset here ({e.strerror or type(e).__name__})") \
                from None
        if act is None:
            continue  # removed meanwhile by the run that had created it: again
        try:
            (dataset / "traces").mkdir()
        except FileExistsError:
            return None, act
        except OSError as e:
            act.release()
            raise DatasetError(f"{dataset}: cannot create the dataset here ({e.strerror or type(e).__name__})") \
                from None
        return _Created(top=None if existed else made), act
    raise DatasetError(f"{dataset}: cannot create the dataset here (it is removed and made again by other runs)")


def _remove_new_dataset(dataset: Path, created: _Created, act: Active, run: RunRecord | None) -> bool:
    """Undo _enter_dataset after a run that published nothing: only when no other command is at work in the
    dataset (its ``active`` lock is this run's alone), no trace is published and no other run has a record there;
    the dataset's directory is renamed away first (a run starting meanwhile makes a new one), then removed, and
    the parents this run made are removed when empty. Returns whether it was removed (with ``run``'s record)."""
    if not act.try_exclusive():
        return False
    mine = {run.path.name} if run is not None else set()
    if any((dataset / "traces").glob("trace_id=*")) or any(
            p.name not in mine for p in (dataset / "runs").glob("*.json")) or any((dataset / "rules").glob("*.csv")):
        return False
    if created.top is None:  # the directory was there, empty: leave it empty
        for p in list(dataset.iterdir()):
            if p.name == ".active":
                continue
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        (dataset / ".active").unlink(missing_ok=True)
        return True
    trash = dataset.with_name(f".{dataset.name}.removed-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(dataset, trash)
    except OSError:
        return False
    shutil.rmtree(trash, ignore_errors=True)
    d = dataset.absolute().parent
    top = created.top.absolute()
    while d != top.parent and d != d.parent and (d == top or top in d.parents):
        try:
            d.rmdir()
        except OSError:
            break
        d = d.parent
    return True


def _interrupted(e: BaseException) -> bool:
    """DuckDB reports a Ctrl-C during a query as its own error: that is an interrupt, not a bad file."""
    return isinstance(e, duckdb.InterruptException) or "interrupted" in str(e).lower()


def _ingest_files(files: list[str], dataset: Path, out, salvage: bool, quiet: bool,
                  on_result: Callable[[IngestResult], object] | None, publish_catalog: bool = True,
                  workers_per_file: int = 2, run_id: str | None = None) -> list[IngestResult]:
    """Ingest ``files`` one after the other (their derived tables built in batches), reporting each result in
    order; then write init.sql and the catalog (unless ``publish_catalog`` is False: a task of a parallel run,
    whose parent writes them once)."""

    def publish_views() -> None:
        try:
            with dataset_lock(dataset):
                write_init_sql(dataset)
        except OSError as e:
            raise DatasetError(f"{out}: cannot write init.sql ({e.strerror or type(e).__name__})") from None

    results: list[IngestResult] = []
    waiting: list[IngestResult] = []  # results not reported yet: staged traces and the files after them
    batch = Batch(dataset, run_id)

    def report(upto: IngestResult | None = None) -> None:
        """Report the waiting results in order, up to ``upto`` (a trace just published), else all."""
        while waiting:
            r = waiting.pop(0)
            results.append(r)
            if on_result:
                on_result(r)
            if r is upto:
                return

    def flush() -> None:
        progress = None
        if batch.staged and not quiet:  # the second phase of the progress display, for the traces built now
            n = len(batch.staged)
            label = os.path.basename(batch.staged[0].parsed.path) if n == 1 else f"{n} traces"
            progress = Progress(label, batch.json_bytes, enabled=batch.json_bytes > THRESHOLD_BYTES,
                                json_total=batch.json_bytes)
            progress.start -= time.time() - batch.staged[0].started  # their reading counts
            progress.phase(BUILD_PHASE)
        try:
            if any(r.status == "ingested" for r in batch.flush(on_result=report)) and publish_catalog:
                publish_views()  # the dataset's init.sql is current after every published batch
        finally:
            if progress is not None:
                progress.close()
        report()

    def settle(f: str, r: IngestResult | Exception) -> None:
        """A file's result (or the error of its ingest) joins the waiting ones; a full batch is built."""
        if isinstance(r, Exception):
            r = failed_result(f, r)
        waiting.append(r)
        if batch.full():
            flush()
        elif not batch.staged:
            report()

    workers = Workers(workers_per_file)
    try:
        i = 0
        while i < len(files):
            # small files are parsed in groups (parse_group.py), as many as one group holds
            group: list[str] = []
            size = 0
            while i + len(group) < len(files) and len(group) < GROUP_FILES and size < GROUP_JSON_BYTES:
                n = _small_json_bytes(files[i + len(group)])
                if n is None:
                    break
                size += n
                group.append(files[i + len(group)])
            if len(group) > 1:
                if batch.staged and (len(batch.staged) + len(group) > BATCH_TRACES
                                     or batch.json_bytes + size > BATCH_JSON_BYTES):
                    flush()  # the group's traces are built together, within the batch's bounds
                for f, r in zip(group, _ingest_group(group, dataset, salvage, workers, batch), strict=True):
                    settle(f, r)
                i += len(group)
                continue
            f = files[i]
            i += 1
            try:
                settle(f, ingest_file(f, dataset, salvage=salvage, quiet=quiet, workers=workers, batch=batch))
            except (KeyboardInterrupt, SystemExit, MemoryError):
                raise
            except Exception as e:  # noqa: BLE001 - reported in one line; the other files go on
                if _interrupted(e):  # DuckDB's report of a Ctrl-C (e.g. from a worker's connection)
                    raise KeyboardInterrupt from None
                settle(f, e)
        flush()
    finally:
        batch.close()
        workers.close()
    if publish_catalog:
        _publish_catalog(dataset, out, any(r.status == "ingested" for r in results))
    return results


def _publish_catalog(dataset: Path, out, any_ingested: bool) -> None:
    """Write init.sql, and the catalog when a trace was added, under the dataset's lock."""
    try:
        with dataset_lock(dataset):
            write_init_sql(dataset)
    except OSError as e:
        raise DatasetError(f"{out}: cannot write init.sql ({e.strerror or type(e).__name__})") from None
    if any_ingested:
        # a catalog that cannot be written (traces of an older layout, SQL this DuckDB cannot bind) is the run's
        # error
        try:
            with dataset_lock(dataset):
                ensure_catalog(dataset)
        except (OSError, duckdb.Error) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise DatasetError(f"{out}: the traces are stored, but the dataset's catalog could not be written: "
                               f"{msg}") from None


# A process of a parallel run costs about half a second to start (interpreter, imports, its own batches' builds):
# worth it from this much file per process.
JOB_MIN_BYTES = 32 << 20


def run_task(files: list[str], dataset: str, salvage: bool, workers: int, run_id: str | None = None) -> list:
    """Ingest a group of files into ``dataset`` (no init.sql or catalog: the driver writes them once); the traces
    it publishes carry the entry of ``run_id``."""
    from tracesql.ingest import _ingest_files

    return _ingest_files(files, Path(dataset), dataset, salvage, True, None, publish_catalog=False,
                         workers_per_file=workers, run_id=run_id)


def default_jobs(files: list[str]) -> int:
    """Processes for a run over ``files`` when none is asked for: one per core, at most one per file, one per
    JOB_MIN_BYTES of files (a process costs more to start than a small file to ingest) and one per GiB of memory
    available (a large trace's ingest peaks below 1 GiB)."""
    n_cores = cores()
    try:
        avail_gib = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / (1 << 30)
    except (ValueError, OSError, AttributeError):
        avail_gib = n_cores
    total = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
    return max(1, min(n_cores, len(files), total // JOB_MIN_BYTES, int(avail_gib)))


def _tasks(files: list[str], jobs: int) -> list[list[str]]:
    """Contiguous groups of files, one task each: at most BATCH_JSON_BYTES of files (a larger file alone) and
    BATCH_TRACES files, and small enough that every process gets about two tasks (the work stays balanced)."""
    sizes = [os.path.getsize(f) if os.path.isfile(f) else 0 for f in files]
    target = max(1, min(BATCH_JSON_BYTES, sum(sizes) // (2 * jobs)))
    tasks: list[list[str]] = [[]]
    acc = 0
    for f, size in zip(files, sizes, strict=True):
        if tasks[-1] and (acc + size > target or len(tasks[-1]) >= BATCH_TRACES):
            tasks.append([])
            acc = 0
        tasks[-1].append(f)
        acc += size
    return tasks


def _ingest_parallel(files: list[str], dataset: Path, out, salvage: bool, quiet: bool,
                     on_result: Callable[[IngestResult], object] | None, jobs: int, executor: str = "processes",
                     scheduler: str | None = None, scheduler_file: str | None = None,
                     run_id: str | None = None) -> list[IngestResult]:
    """Ingest ``files`` as ``_tasks`` groups (each built as one batch) on ``executor`` (executors.py), reporting
    the results in the order of the files; init.sql and the catalog are written once at the end.

    A task whose local process died (killed, out of memory): the files whose traces it had published are reported
    as ingested (from the entries the traces carry), the others run again in a new pool of processes (TASK_RUNS
    runs in all), then fail with a line saying so."""
    dataset = dataset.resolve()  # the workers may run elsewhere, on a filesystem shared at the same path
    tasks = _tasks(files, jobs)
    total = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
    progress = Progress(f"{len(files)} files", total, enabled=not quiet and total > THRESHOLD_BYTES)
    done_bytes = 0
    results: list[IngestResult] = []
    finished: dict[int, list[IngestResult]] = {}
    next_task = 0
    todo = {i: list(t) for i, t in enumerate(tasks)}  # task -> its files still to run
    recovered: dict[int, dict[str, IngestResult]] = {}
    try:
        for attempt in range(1, TASK_RUNS + 1):
            if not todo:
                break
            pool = Pool(executor, jobs, scheduler, scheduler_file)
            futures: list = []
            try:
                slots = pool.workers
                n_cores = cores()
                per_task_workers = 1 if executor == "dask" else max(1, min(2, n_cores // slots))
                order = sorted(todo)
                futures = pool.submit_all(run_task, [(todo[i], str(dataset), salvage, per_task_workers, run_id)
                                                     for i in order])
                index = {id(f): i for f, i in zip(futures, order, strict=True)}
                for fut in pool.as_completed(futures):
                    i = index[id(fut)]
                    try:
                        got = fut.result()
                    except Exception as e:  # noqa: BLE001 - a task that failed for good: each of its files fails
                        if _interrupted(e):
                            raise KeyboardInterrupt from None
                        if not (process_died(e) and run_id is not None):
                            finished[i] = _merge(tasks[i], recovered.get(i, {}),
                                                 [failed_result(f, e) for f in todo.pop(i)])
                            continue
                        # the process died: what it published is this run's; the rest runs again
                        mine = {r["path"]: result_from_record(r)
                                for r in published_by(dataset, {run_id}).get(run_id, [])}
                        rec = recovered.setdefault(i, {})
                        rec.update({f: mine[f] for f in todo[i] if f in mine})
                        todo[i] = [f for f in todo[i] if f not in rec]
                        if not todo[i]:
                            del todo[i]
                            finished[i] = _merge(tasks[i], rec, [])
                        elif attempt == TASK_RUNS:
                            finished[i] = _merge(tasks[i], rec, [IngestResult(
                                path=f, status="failed", error=f"{f}: the process ingesting it ended unexpectedly "
                                f"{TASK_RUNS} times (killed, or out of memory); nothing of it was published")
                                for f in todo.pop(i)])
                        continue
                    del todo[i]
                    if attempt > 1:  # a file published by a process of this run before it was stopped
                        got = [_ours(dataset, run_id, r) for r in got]
                    finished[i] = _merge(tasks[i], recovered.get(i, {}), got)
                    while next_task in finished:  # in the order of the files
                        for r in finished.pop(next_task):
                            results.append(r)
                            if on_result:
                                on_result(r)
                        done_bytes += sum(os.path.getsize(f) for f in tasks[next_task] if os.path.isfile(f))
                        progress.update(done_bytes)
                        next_task += 1
                while next_task in finished:  # tasks that failed, in the order of the files
                    for r in finished.pop(next_task):
                        results.append(r)
                        if on_result:
                            on_result(r)
                    next_task += 1
            except BaseException:
                pool.stop(futures)
                if executor != "dask":  # the local processes have exited: the work areas of stopped tasks go too
                    remove_stale_staging(dataset)
                raise
            finally:
                pool.close()
    finally:
        progress.close()
    _publish_catalog(dataset, out, any(r.status == "ingested" for r in results))
    return results


def _ours(dataset: Path, run_id: str | None, r: IngestResult) -> IngestResult:
    """A file found already present, whose trace a process of this run published (and died before reporting it):
    the result recorded with the trace."""
    if r.status != "duplicate" or run_id is None:
        return r
    try:
        rec = orjson.loads((dataset / "traces" / f"trace_id={r.trace_id}" / RUN_SIDECAR).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return r
    return result_from_record(rec) if rec.get("run_id") == run_id and rec.get("path") == path_text(r.path) else r


def _merge(files: list[str], recovered: dict[str, IngestResult], got: list[IngestResult]) -> list[IngestResult]:
    """The results of a task's files in their order: those recovered after its process died, the others from
    its last run."""
    rest = iter(got)
    return [recovered[f] if f in recovered else next(rest) for f in files]

"""Streaming ingest of trace files into a dataset of Parquet tables.

One file goes through these stages (memory stays flat whatever the file size):

1. publish.py: work areas left by killed ingests are removed; a file whose size and content hash match a
   published trace is a duplicate and is skipped; any other is written in a private work area of the dataset
   (``.staging/<pid>-<random>``).
2. parse.py: ``jsonstream`` streams the decompressed text and cuts ``traceEvents`` into chunks of whole events;
   two worker threads each read a chunk with DuckDB's JSON reader (read.py: the read modes of ts/dur and the
   table each event goes to) and write its rows as one Parquet part per table (extract.py: the columns of each
   table, typed args fields included).
3. finalize.py: what needs the whole file: complete events without a category, ``ingest_issues``, the derived
   tables (derive.py: the call-tree nesting, launch links, op context and GPU timeline, built by the views in
   sql/) and the ``traces`` row.
4. publish.py: the trace directory is renamed to ``traces/trace_id=<id>`` in one atomic step.
"""
from __future__ import annotations

import glob as globlib
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from tracesql.errors import DatasetError, TraceError
from tracesql.ingest.derive import BATCH_TRACES, BUILD_MEMORY_LIMIT, build_derived
from tracesql.ingest.finalize import FinishedTrace, PreparedTrace, complete, prepare, rules_dir
from tracesql.ingest.parse import ParsedTrace, TraceParser, Workers, default_chunk_size
from tracesql.ingest.progress import THRESHOLD_BYTES, Progress, estimate_json_bytes
from tracesql.ingest.publish import new_staging, publish, published_hash, remove_stale_staging
from tracesql.ingest.runs import RunRecord, dataset_lock
from tracesql.parallel.executors import EXECUTORS, Pool, cores, exit_once_if_asked
from tracesql.store.dataset import check_dataset_path, ensure_catalog, write_init_sql

__all__ = ["BUILD_MEMORY_LIMIT", "TRACE_SUFFIXES", "IngestResult", "Workers", "default_jobs", "find_trace_files",
           "ingest", "ingest_file"]

TRACE_SUFFIXES = (".json", ".json.gz", ".gz")

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
            for f in sorted(pp.rglob("*")):
                if f.is_file() and f.name.endswith(TRACE_SUFFIXES) and not f.name.startswith("."):
                    out.append(str(f))
        else:
            out.append(str(pp))
    return out


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

    def __init__(self, dataset: Path):
        self.dataset = dataset
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
        build_derived(outs[0] if len(outs) == 1 else outs, first.staging, rules_dir=rules_dir(first))
        share = (time.time() - t0) / len(staged)
        done = [complete(self.con, st.parsed, st.pre, out, st.started) for st, out in zip(staged, outs, strict=True)]
        results = []
        for st, out, d in zip(staged, outs, done, strict=True):
            results.append(self._publish(st, out, d, share))
            on_result(results[-1])
        return results

    def _publish(self, st: _Staged, out: Path, done: FinishedTrace, share: float) -> IngestResult:
        res = st.result
        trace_id = done.row["trace_id"]
        if not publish(out, self.dataset, trace_id, done.row["size_bytes"], done.row["content_hash"]):
            res.status = "duplicate"
            return res
        res.status = "ingested"
        res.row_counts = done.counts
        res.events_read = done.row["events_read"]
        res.skipped = done.skipped
        res.json_bytes = st.parsed.source.json_bytes
        res.truncated = st.parsed.splitter.truncated
        res.rank = done.row["rank"]
        res.noted = done.noted
        res.unlinked = done.unlinked
        res.seconds = st.seconds + share
        return res

    def close(self) -> None:
        """Remove the work areas of the traces still staged (after an error or an interrupt: nothing of them is
        published) and close the connection."""
        for st in self.staged:
            shutil.rmtree(st.parsed.staging, ignore_errors=True)
        self.staged = []
        if self._con is not None:
            self._con.close()
            self._con = None


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
    if not os.path.isfile(path):
        raise TraceError(path, "no such file or directory" if not os.path.exists(path) else "not a regular file")
    size = os.path.getsize(path)
    h = published_hash(path, size, dataset)
    if h is not None:
        res.status, res.trace_id = "duplicate", h[:16]
        return res
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
        pre = prepare(b.con, parsed)
        res.trace_id = parsed.source.content_hash[:16]
        res.status = "staged"
        st = _Staged(result=res, parsed=parsed, pre=pre, started=started, seconds=time.time() - started,
                     out=parsed.out)
        if not b.add(st):
            res.status = "duplicate"
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
    created = _prepare_dataset(dataset)
    try:
        run = RunRecord(dataset, command if command is not None else "tracesql.ingest")
    except OSError as e:
        if created:
            _remove_new_dataset(dataset, created)
        raise DatasetError(f"{out}: cannot write the record of this run ({e.strerror or type(e).__name__})") \
            from None

    def record(r: IngestResult) -> None:
        run.add(r.path, r.status, r.trace_id, r.error, r.json_bytes if r.status == "ingested" else 0, r.seconds)
        if on_result:
            on_result(r)

    try:
        files = find_trace_files([str(p) for p in paths])
        n = default_jobs(files) if jobs is None else max(1, min(jobs, len(files)))
        if executor == "dask" or n > 1:
            results = _ingest_parallel(files, dataset, out, salvage, quiet, record, n, executor, scheduler,
                                       scheduler_file)
        else:
            results = _ingest_files(files, dataset, out, salvage, quiet, record)
    except KeyboardInterrupt:
        run.finish("interrupted", "interrupted (Ctrl-C or SIGTERM)")
        if created:
            _remove_new_dataset(dataset, created)
        raise
    except BaseException as e:  # an error of the dataset: a dataset made by this call goes again
        run.finish("error", str(e).splitlines()[0] if str(e) else type(e).__name__)
        if created:
            _remove_new_dataset(dataset, created)
        raise
    if created and not any(r.status == "ingested" for r in results):
        run.discard()
        _remove_new_dataset(dataset, created)  # nothing was ingested: no skeleton dataset is left behind
    else:
        run.finish()
    return results


def _prepare_dataset(dataset: Path) -> tuple[Path, bool] | None:
    """Make the dataset directory if needed. Returns what to remove when the ingest publishes nothing: the
    topmost directory this call created, or the dataset directory itself when it was there and empty (then
    emptied, not removed: the flag is then True); None for an existing dataset. A directory that holds files
    and is not a dataset is refused."""
    if dataset.exists() and not dataset.is_dir():
        raise DatasetError(f"{dataset}: cannot create the dataset here (File exists)")
    check_dataset_path(dataset)
    dataset_files = (".staging", "init.sql", "catalog.duckdb", "rules", "runs", ".lock")
    if dataset.is_dir() and not (dataset / "traces").is_dir() and \
            any(p.name not in dataset_files and not p.name.startswith(".init.sql.") for p in dataset.iterdir()):
        raise DatasetError(f"{dataset}: a directory that is not a tracesql dataset and not empty; give a new or "
                           "empty directory, or an existing dataset")
    created: tuple[Path, bool] | None = None
    if dataset.is_dir() and not (dataset / "traces").is_dir():
        created = (dataset, True)
    else:
        top = dataset.absolute()
        while not top.exists():
            created, top = (top, False), top.parent
    try:
        dataset.mkdir(parents=True, exist_ok=True)
        (dataset / "traces").mkdir(exist_ok=True)
    except OSError as e:
        raise DatasetError(f"{dataset}: cannot create the dataset here ({e.strerror or type(e).__name__})") from None
    return created


def _remove_new_dataset(dataset: Path, created: tuple[Path, bool]) -> None:
    """Undo _prepare_dataset after an ingest that published nothing (unless another process published a trace
    there meanwhile)."""
    if any((dataset / "traces").glob("trace_id=*")):
        return
    top, empty_only = created
    if empty_only:  # the directory was there, empty: leave it empty
        for p in list(dataset.iterdir()):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        return
    shutil.rmtree(top, ignore_errors=True)


def _interrupted(e: BaseException) -> bool:
    """DuckDB reports a Ctrl-C during a query as its own error: that is an interrupt, not a bad file."""
    return isinstance(e, duckdb.InterruptException) or "interrupted" in str(e).lower()


def _ingest_files(files: list[str], dataset: Path, out, salvage: bool, quiet: bool,
                  on_result: Callable[[IngestResult], object] | None, publish_catalog: bool = True,
                  workers_per_file: int = 2) -> list[IngestResult]:
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
    batch = Batch(dataset)

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

    workers = Workers(workers_per_file)
    try:
        for f in files:
            try:
                r = ingest_file(f, dataset, salvage=salvage, quiet=quiet, workers=workers, batch=batch)
            except (KeyboardInterrupt, SystemExit, MemoryError):
                raise
            except Exception as e:  # noqa: BLE001 - reported in one line; the other files go on
                if _interrupted(e):  # DuckDB's report of a Ctrl-C (e.g. from a worker's connection)
                    raise KeyboardInterrupt from None
                r = failed_result(f, e)
            waiting.append(r)
            if batch.full():
                flush()
            elif not batch.staged:
                report()
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


def run_task(files: list[str], dataset: str, salvage: bool, workers: int) -> list:
    """Ingest a group of files into ``dataset`` (no init.sql or catalog: the driver writes them once)."""
    from tracesql.ingest import _ingest_files

    return _ingest_files(files, Path(dataset), dataset, salvage, True, None, publish_catalog=False,
                         workers_per_file=workers)


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
                     scheduler: str | None = None, scheduler_file: str | None = None) -> list[IngestResult]:
    """Ingest ``files`` as ``_tasks`` groups (each built as one batch) on ``executor`` (executors.py), reporting
    the results in the order of the files; init.sql and the catalog are written once at the end."""
    dataset = dataset.resolve()  # the workers may run elsewhere, on a filesystem shared at the same path
    pool = Pool(executor, jobs, scheduler, scheduler_file)
    futures: list = []
    try:
        slots = pool.workers
        tasks = _tasks(files, slots)
        n_cores = cores()
        per_task_workers = 1 if executor == "dask" else max(1, min(2, n_cores // slots))
        total = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
        progress = Progress(f"{len(files)} files", total, enabled=not quiet and total > THRESHOLD_BYTES)
        done_bytes = 0
        results: list[IngestResult] = []
        finished: dict[int, list[IngestResult]] = {}
        next_task = 0
        try:
            futures = [pool.submit(run_task, t, str(dataset), salvage, per_task_workers) for t in tasks]
            index = {id(f): i for i, f in enumerate(futures)}
            for fut in pool.as_completed(futures):
                i = index[id(fut)]
                try:
                    finished[i] = fut.result()
                except Exception as e:  # noqa: BLE001 - a task that failed for good: each of its files fails
                    if _interrupted(e):
                        raise KeyboardInterrupt from None
                    finished[i] = [failed_result(f, e) for f in tasks[i]]
                while next_task in finished:  # in the order of the files
                    for r in finished.pop(next_task):
                        results.append(r)
                        if on_result:
                            on_result(r)
                    done_bytes += sum(os.path.getsize(f) for f in tasks[next_task] if os.path.isfile(f))
                    progress.update(done_bytes)
                    next_task += 1
        finally:
            progress.close()
    except BaseException:
        pool.stop(futures)
        if executor != "dask":  # the local processes have exited: the work areas of tasks stopped mid-way go too
            remove_stale_staging(dataset)
        raise
    finally:
        pool.close()
    _publish_catalog(dataset, out, any(r.status == "ingested" for r in results))
    return results

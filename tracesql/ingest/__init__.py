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

import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ..dataset import ensure_catalog, write_init_sql
from ..errors import DatasetError, TraceError
from ..progress import THRESHOLD_BYTES, Progress, estimate_json_bytes
from .derive import BUILD_MEMORY_LIMIT
from .finalize import finalize
from .parse import TraceParser, Workers, default_chunk_size
from .publish import new_staging, publish, published_hash, remove_stale_staging

__all__ = ["BUILD_MEMORY_LIMIT", "TRACE_SUFFIXES", "IngestResult", "Workers", "find_trace_files", "ingest",
           "ingest_file"]

TRACE_SUFFIXES = (".json", ".json.gz", ".gz")


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
    """Expand directories into the trace files inside them (recursively), sorted."""
    out: list[str] = []
    for p in paths:
        pp = Path(p)
        if pp.is_dir():
            for f in sorted(pp.rglob("*")):
                if f.is_file() and f.name.endswith(TRACE_SUFFIXES) and not f.name.startswith("."):
                    out.append(str(f))
        else:
            out.append(str(pp))
    return out


def ingest_file(path: str, dataset: Path, salvage: bool = False, quiet: bool = True,
                chunk_size: int | None = None, workers: Workers | None = None) -> IngestResult:
    """Ingest one trace file into ``dataset`` atomically. Raises TraceError for bad input.

    Work areas left in the dataset by killed ingests are removed first; ``workers`` may be shared by the files
    of one run (a pool of two is made and closed for this file otherwise)."""
    started = time.time()
    res = IngestResult(path=path)
    remove_stale_staging(dataset)
    if not os.path.isfile(path):
        raise TraceError(path, "no such file" if not os.path.exists(path) else "not a regular file")
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
    try:
        parsed = TraceParser(path, staging, salvage, chunk_size or default_chunk_size(path, size), progress, pool).run()
        pool.release()
        progress.phase("building the call tree and the timeline")
        con = duckdb.connect(config={"threads": 2, "memory_limit": "512MB", "temp_directory": str(staging / "tmp"),
                                     "preserve_insertion_order": True})
        try:
            done = finalize(con, parsed, started)
        finally:
            con.close()
        trace_id = done.row["trace_id"]
        if not publish(parsed.out, dataset, trace_id, done.row["size_bytes"], done.row["content_hash"]):
            res.status, res.trace_id = "duplicate", trace_id
            return res
        res.trace_id = trace_id
        res.row_counts = done.counts
        res.events_read = done.row["events_read"]
        res.skipped = done.skipped
        res.json_bytes = parsed.source.json_bytes
        res.truncated = parsed.splitter.truncated
        res.rank = done.row["rank"]
        res.noted = done.noted
        res.unlinked = done.unlinked
        res.seconds = time.time() - started
        return res
    finally:
        progress.close()
        if own_workers:
            pool.close()
        shutil.rmtree(staging, ignore_errors=True)



def ingest(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
           out: str | os.PathLike[str] = "tracesql_data", salvage: bool = False, quiet: bool = True,
           on_result: Callable[[IngestResult], object] | None = None) -> list[IngestResult]:
    """Ingest trace files (or directories of them) into the dataset at ``out``.

    Bad files do not stop the others: each yields an IngestResult with status 'failed' and a one-line error.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [str(paths)]
    dataset = Path(out)
    created = _prepare_dataset(dataset)
    try:
        results = _ingest_files(paths, dataset, out, salvage, quiet, on_result)
    except BaseException:  # Ctrl-C, or an error of the dataset: a dataset made by this call goes again
        if created:
            _remove_new_dataset(dataset, created)
        raise
    if created and not any(r.status == "ingested" for r in results):
        _remove_new_dataset(dataset, created)  # nothing was ingested: no skeleton dataset is left behind
    return results


def _prepare_dataset(dataset: Path) -> tuple[Path, bool] | None:
    """Make the dataset directory if needed. Returns what to remove when the ingest publishes nothing: the
    topmost directory this call created, or the dataset directory itself when it was there and empty (then
    emptied, not removed: the flag is then True); None for an existing dataset. A directory that holds files
    and is not a dataset is refused."""
    if dataset.exists() and not dataset.is_dir():
        raise DatasetError(f"{dataset}: cannot create the dataset here (File exists)")
    dataset_files = (".staging", "init.sql", "catalog.duckdb", "rules")
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


def _ingest_files(paths, dataset: Path, out, salvage: bool, quiet: bool,
                  on_result: Callable[[IngestResult], object] | None) -> list[IngestResult]:

    def publish_views() -> None:
        try:
            write_init_sql(dataset)
        except OSError as e:
            raise DatasetError(f"{out}: cannot write init.sql ({e.strerror or type(e).__name__})") from None

    files = find_trace_files([str(p) for p in paths])
    results = []
    workers = Workers(2)
    try:
        for f in files:
            try:
                r = ingest_file(f, dataset, salvage=salvage, quiet=quiet, workers=workers)
            except TraceError as e:
                r = IngestResult(path=f, status="failed", error=str(e))
            except (OSError, duckdb.Error) as e:
                if _interrupted(e):
                    raise KeyboardInterrupt from None
                msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                r = IngestResult(path=f, status="failed", error=f"{f}: {msg}")
            except (KeyboardInterrupt, SystemExit, MemoryError):
                raise
            except Exception as e:  # noqa: BLE001 - a bug must not stop the other files; reported in one line
                if _interrupted(e):  # e.g. RuntimeError('Query interrupted') from a worker's DuckDB
                    raise KeyboardInterrupt from None
                msg = str(e).splitlines()[0] if str(e) else ""
                r = IngestResult(path=f, status="failed",
                                 error=f"{f}: internal error ({type(e).__name__}: {msg}); please report it")
            if r.status == "ingested":
                publish_views()  # the dataset's init.sql is current after every published trace
            results.append(r)
            if on_result:
                on_result(r)
    finally:
        workers.close()
    publish_views()
    if any(r.status == "ingested" for r in results):
        try:  # the views bound once now, so that the first query after the ingest binds nothing
            ensure_catalog(dataset)
        except (OSError, duckdb.Error, DatasetError):
            pass  # opening the dataset writes it, or says why it cannot (e.g. traces of an older layout)
    return results

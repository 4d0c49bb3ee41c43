"""`tracesql report DATASET --out DIR --jobs N | --executor dask`: the report of an archive as one task per trace.

The driver opens the dataset once to list the traces (their labels, the sub-folder of each, the capture trace a
CUDA graph replay takes its ops from) and submits one task per trace to an executor of tracesql/parallel/executors.py
(local processes or a Dask cluster). Each task opens its trace alone (``Dataset(path, trace_ids=[...])``: the
catalog is not bound), writes that trace's sub-folder (tracesql.api.report.build and write, as a report over one
connection does) and returns the per-trace rows of the cross-trace tables (traces_overview, kernels_by_trace,
ops_by_trace of sql/gpu/across_traces.sql) as Arrow tables. The driver defines those three as the union of the rows
and runs sql/gpu/across_traces_merge.sql over them, then writes the top-level files; the cross-trace sections that
read every rank of a job at once (sql/comm/ranks_overview.sql) and TraceLens's multi-rank job folders (style
tracelens) are computed by the driver over its own connection while the tasks run. The files equal those of
``report --out`` over one connection.

A task that fails for good (its worker killed more often than Dask retries it, an error) is reported with its
trace: the report then fails and the top-level tables, which would miss that trace, are not written.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from tracesql.api import analysis, report
from tracesql.errors import DatasetError
from tracesql.render.formats import folders as folders_of
from tracesql.render.formats import per_trace, write
from tracesql.render.sections import Document, Section
from tracesql.store.config import configure

# The per-trace rows the merge reads (sql/gpu/across_traces.sql), in the order the tasks return them.
ACROSS_ROWS = ("traces_overview", "kernels_by_trace", "ops_by_trace")
ACROSS = frozenset(report.ACROSS_TRACES)  # written whole at the top of the report's folder
MERGE_MODULE = "gpu/across_traces_merge"
ROWS_MODULE = "gpu/across_traces"


def merged_sections() -> list[str]:
    """The cross-trace sections (report.ACROSS_TRACES) the merge computes from the tasks' rows: those declared by
    gpu/across_traces and gpu/across_traces_merge. The others read what a task alone does not see (every rank of a
    job: comm/ranks_overview); the driver computes them over its own connection (driver_sections)."""
    from tracesql.store.sqlmodules import modules

    declared = {o.name for m in (ROWS_MODULE, MERGE_MODULE) for o in modules()[m].outputs}
    return [name for name in report.ACROSS_TRACES if name in declared]


def driver_sections(ds) -> list[Section]:
    """The cross-trace sections the merge does not compute (merged_sections), over the driver's connection."""
    merged = set(merged_sections())
    with ds.scope():
        return [Section(name, report._q(ds, query)) for name, query in report.ACROSS_TRACES.items()
                if name not in merged]


@dataclass
class TraceTask:
    """What one task needs: its trace, the traces it opens (the trace and the captures its graph replays take their
    ops from), their labels in the whole report, and the folder it writes."""

    trace_id: str
    open_ids: list[str]
    labels: dict[str, str]
    folder: str


def run_trace(dataset: str, task: TraceTask, style: str, fmt: str, by_module: bool,
              across: bool, arch: str | None = None, pseudo_ops: bool = False) -> tuple[list[str], dict]:
    """One task: the sections of one trace written into its folder; returns the files written and, when
    ``across``, the trace's rows of ACROSS_ROWS as Arrow tables."""
    from tracesql.api.dataset import Dataset
    from tracesql.parallel.executors import exit_once_if_asked

    exit_once_if_asked()
    with Dataset(dataset, threads=1, trace_ids=task.open_ids) as ds:
        _use_labels(ds, task.labels)
        sections = report.build(ds, style=style, trace=task.trace_id, by_module=by_module, arch=arch,
                                pseudo_ops=pseudo_ops)
        written: list[str] = []
        if task.labels[task.trace_id] in {s.trace for s in per_trace(sections, across=ACROSS)}:
            written = [str(p) for p in write(Document(sections), fmt, out=task.folder, across=ACROSS)]
        rows = {}
        if across:
            for name in ACROSS_ROWS:
                rows[name] = ds.con.sql(f"SELECT * FROM {name} WHERE trace_id = $t",
                                        params={"t": task.trace_id}).to_arrow_table()
    return written, rows


def _use_labels(ds, labels: dict[str, str]) -> None:
    """The labels the traces have in the whole report (trace_labels makes a file name unique within the traces
    opened, which are fewer here): a temporary table of that name, read before the view by every view."""
    db = ds.con.sql("SELECT current_database()").fetchall()[0][0]
    ds.con.execute("CREATE TEMP TABLE _report_labels (trace_id VARCHAR, label VARCHAR)")
    ds.con.executemany("INSERT INTO _report_labels VALUES (?, ?)", list(labels.items()))
    ds.con.execute(f"""CREATE TEMP TABLE trace_labels AS SELECT v.trace_id, v.file_name, v.rank, r.label
        FROM "{db}".main.trace_labels v JOIN _report_labels r USING (trace_id)""")


def _captures(ds, ids: list[str]) -> dict[str, list[str]]:
    """The capture traces each trace's CUDA graph replays take their ops from (tree/graph_capture), when any."""
    if not analysis.has_view(ds, "graph_capture_links") or not ds.con.sql(
            f"SELECT count(*) FROM launches WHERE launch_kind = 'graph' AND trace_id IN {analysis._in(ids)}"
    ).fetchall()[0][0]:
        return {}
    out: dict[str, list[str]] = {}
    for tid, cap in ds.con.sql("SELECT DISTINCT trace_id, capture_trace_id FROM graph_capture_links "
                               f"WHERE trace_id IN {analysis._in(ids)} AND capture_trace_id <> trace_id "
                               "ORDER BY ALL").fetchall():
        out.setdefault(tid, []).append(cap)
    return out


def merge(parts: list[dict]) -> list[Section]:
    """The cross-trace sections (report.ACROSS_TRACES) over the rows the tasks returned: the same SQL as over one
    connection (sql/gpu/across_traces_merge.sql) over tables that hold the union of the rows."""
    import pyarrow as pa

    from tracesql.store.sqlmodules import module_statements, modules

    con = duckdb.connect()
    try:
        configure(con)
        for name in ACROSS_ROWS:
            rows = pa.concat_tables([p[name] for p in parts])  # noqa: F841 - read by name below
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM rows")
        for st in module_statements([modules()[MERGE_MODULE]]):
            con.execute(st)
        return [Section(name, con.sql(report.ACROSS_TRACES[name]).pl()) for name in merged_sections()]
    finally:
        con.close()


def report_tasks(dataset, out, style: str = "native", fmt: str = "csv", trace: str | None = None,
                 trace_ids: list[str] | None = None, by_module: bool = False, jobs: int | None = None,
                 executor: str = "processes", scheduler: str | None = None,
                 scheduler_file: str | None = None, arch: str | None = None,
                 pseudo_ops: bool = False) -> list[Path]:
    """Write the report of ``dataset`` into the folder ``out`` as one task per trace on ``executor``
    (tracesql.parallel.executors.Pool: ``jobs`` processes, or a Dask cluster); returns the files written.

    trace_ids: only these traces (opened without the catalog, as ``report --since`` does); trace: only this one
    (a trace_id or label). The other arguments are those of tracesql.api.report.report."""
    from tracesql.api.dataset import Dataset
    from tracesql.parallel.executors import TASK_RUNS, Pool, cores, process_died

    if style not in report.STYLES:
        raise ValueError(f"style must be one of {', '.join(report.STYLES)}")
    dataset = Path(dataset).resolve()  # the workers may run elsewhere, on a filesystem shared at the same path
    out = Path(out).resolve()
    with Dataset(dataset, trace_ids=trace_ids) as ds:
        report.set_arch(ds, style, arch)  # a wrong --arch fails here, before any task
        ids = analysis.trace_ids(ds, trace)
        labels = analysis.trace_labels(ds)
        captures = _captures(ds, ids)
        across = style == "native" and len(ids) > 1 and analysis.has_view(ds, "traces_overview")
        jobs_of_report = []
        if style == "tracelens" and trace is None:
            from tracesql.api import comm

            jobs_of_report = comm.tracelens_jobs(ds)
        names = [labels[t] for t in ids] + [f"job{j}" for j in jobs_of_report]
        folders = folders_of(sorted(names)) if len(names) > 1 else {}
        tasks = []
        for tid in ids:
            opened = [tid, *captures.get(tid, [])]
            folder = out / folders[labels[tid]] if folders else out
            tasks.append(TraceTask(tid, opened, {t: labels[t] for t in opened}, str(folder)))
        results: dict[int, tuple[list[str], dict]] = {}
        by_driver: list[Section] = []
        failed: list[str] = []
        written: list[Path] = []
        pending = list(range(len(tasks)))
        for attempt in range(1, TASK_RUNS + 1):  # a local process that died: its tasks again, in a new pool
            died: list[int] = []
            pool = Pool(executor, jobs or cores(), scheduler, scheduler_file)
            futures: list = []
            try:
                futures = [pool.submit(run_trace, str(dataset), tasks[i], style, fmt, by_module, across, arch,
                                       pseudo_ops)
                           for i in pending]
                index = {id(f): i for f, i in zip(futures, pending, strict=True)}
                if jobs_of_report and attempt == 1:  # every rank of a job: over this connection, while tasks run
                    written = _write_jobs(report._tracelens_multirank(ds), fmt, out, folders)
                if across and attempt == 1:  # likewise the cross-trace sections that read every rank of a job
                    by_driver = driver_sections(ds)
                for fut in pool.as_completed(futures):
                    i = index[id(fut)]
                    try:
                        results[i] = fut.result()
                    except Exception as e:  # noqa: BLE001 - run again, or reported below
                        if process_died(e) and attempt < TASK_RUNS:
                            died.append(i)
                            continue
                        first = (str(e).splitlines() or [""])[0]
                        failed.append(f"{labels[tasks[i].trace_id]} ({tasks[i].trace_id}): "
                                      f"{type(e).__name__}: {first}")
            except BaseException:
                pool.stop(futures)
                raise
            finally:
                pool.close()
            if not died:
                break
            pending = sorted(died)
    if failed:
        raise DatasetError(f"report: {len(failed)} of {len(tasks)} traces failed, the report in {out} is incomplete"
                           + (" and has no cross-trace tables" if across else "") + ": "
                           + "; ".join(sorted(failed)))  # one line, as every error
    if across:
        sections = {s.name: s for s in merge([results[i][1] for i in range(len(tasks))]) + by_driver}
        written = write(Document(report.shown([sections[name] for name in report.ACROSS_TRACES])), fmt, out=str(out),
                        across=ACROSS) + written
    for i in range(len(tasks)):
        written += [Path(p) for p in results[i][0]]
    return written


def _write_jobs(sections: list[Section], fmt: str, out: Path, folders: dict[str, str]) -> list[Path]:
    """TraceLens's multi-rank job files, each job in its folder."""
    written: list[Path] = []
    for job in dict.fromkeys(str(s.trace) for s in sections):
        part = [s for s in sections if s.trace == job]
        written += write(Document(part), fmt, out=str(out / folders[job]) if folders else str(out))
    return written

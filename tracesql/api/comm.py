"""Collectives across the ranks of a job: thin Python over the views of sql/comm/ (comm_jobs, comm_matched,
comm_type_summary, comm_rank_summary, comm_ranks_side_by_side; their comment blocks define every number).

These functions only pick the job, order and cut the rows, and convert ns to µs for display.
"""
from __future__ import annotations

import functools

import polars as pl

from tracesql.errors import DatasetError

BY = ("collective", "type", "rank")


def prepare(ds) -> None:
    """Compute the views that the collective analyses read many times (those tagged ``@materialize comm``) once
    for this connection, for every trace, until it closes: for a connection kept for many calls (each call
    otherwise computes them in its own scope). The answers do not change."""
    from tracesql.store.dataset import materialize
    from tracesql.store.sqlmodules import materialized

    materialize(ds, materialized("comm"))


def _scoped(*tags: str):
    """Run the function in a scope (Dataset.materialized) in which the views tagged ``@materialize TAG`` (for each
    tag, in order) are computed once."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(ds, *args, **kwargs):
            from tracesql.store.sqlmodules import materialized

            with ds.materialized([v for t in tags for v in materialized(t)]):
                return fn(ds, *args, **kwargs)
        return run
    return wrap


def _us(df: pl.DataFrame) -> pl.DataFrame:
    """Every *_ns column as *_us (float µs)."""
    return df.with_columns([(pl.col(c) / 1000.0).alias(c[:-3] + "_us") for c in df.columns if c.endswith("_ns")]) \
        .select([c[:-3] + "_us" if c.endswith("_ns") else c for c in df.columns])


@_scoped("comm")
def jobs(ds) -> pl.DataFrame:
    """One row per job of the dataset (view comm_jobs)."""
    return ds.sql("SELECT * EXCLUDE (start_ns, end_ns), (end_ns - start_ns) / 1e6 AS span_ms FROM comm_jobs "
                  "ORDER BY job_id")


def _job(ds, job: int | None) -> int | None:
    """The job to show: ``job`` after checking that it exists; None (every job) when not given."""
    ids = [r[0] for r in ds.con.sql("SELECT job_id FROM comm_jobs ORDER BY job_id").fetchall()]
    if not ids:
        raise DatasetError("no multi-rank traces in the dataset: no trace has a distributed rank")
    if job is not None and job not in ids:
        raise DatasetError(f"no job {job} in the dataset (jobs: {', '.join(map(str, ids))})")
    return job


def _where(job: int | None) -> str:
    return "" if job is None else f"WHERE job_id = {int(job)}"


@_scoped("comm")
def collectives(ds, job: int | None = None, by: str = "collective", top: int | None = None) -> pl.DataFrame:
    """Collectives of a job (all jobs by default), times in µs.

    by='collective': one row per collective matched across the ranks (comm_matched), in the order of the process
    group; with ``top``, the N with the largest total wait. by='type': one row per collective type
    (comm_type_summary), largest total latency first. by='rank': one row per rank (comm_rank_summary), the
    straggler first."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, not {by!r}")
    job = _job(ds, job)
    w = _where(job)
    if by == "collective":
        order = "total_wait_ns DESC NULLS LAST, job_id, pg_key, seq" if top is not None else "job_id, pg_key, seq"
        df = ds.sql(f"""SELECT job_id, pg_key AS pg, seq, coll_type, dtype, msg_bytes, n_ranks, status,
                               missing_ranks, latency_ns, start_skew_ns, end_skew_ns, first_rank, last_rank,
                               mean_wait_ns, total_wait_ns, algbw_gbps, busbw_gbps
                        FROM comm_matched {w} ORDER BY {order}""")
    elif by == "type":
        df = ds.sql(f"""SELECT job_id, coll_type, n_collectives, total_bytes, total_latency_ns, mean_latency_ns,
                               p50_latency_ns, p90_latency_ns, max_latency_ns, mean_start_skew_ns,
                               max_start_skew_ns, total_wait_ns, mean_algbw_gbps, mean_busbw_gbps
                        FROM comm_type_summary {w} ORDER BY job_id, total_latency_ns DESC, coll_type""")
    else:
        df = ds.sql(f"""SELECT job_id, rank, n_collectives, n_matched, n_missing, comm_ns, transfer_ns, wait_ns,
                               wait_pct, arrived_last, arrived_first, late_ns, is_straggler
                        FROM comm_rank_summary {w} ORDER BY job_id, is_straggler DESC, late_ns DESC, rank""")
    if top is not None:
        df = df.group_by("job_id", maintain_order=True).head(top)
    return _us(df)


@_scoped("comm")
def ranks(ds, job: int | None = None) -> pl.DataFrame:
    """The ranks of a job side by side (comm_ranks_side_by_side): GPU timeline and collectives, times in µs."""
    job = _job(ds, job)
    return _us(ds.sql(f"SELECT * EXCLUDE (trace_id, is_straggler) FROM comm_ranks_side_by_side {_where(job)} "
                      "ORDER BY job_id, rank"))


@_scoped("comm")
def job_lines(ds, job: int | None = None) -> list[str]:
    """One line per job: ranks present of the world size, what is missing or cut short, and the straggler."""
    job = _job(ds, job)
    rows = ds.con.sql(f"""
        SELECT j.job_id, j.world_size, j.backend, len(j.ranks), j.missing_ranks, j.truncated_ranks,
               (SELECT min(rank) FROM comm_rank_summary s WHERE s.job_id = j.job_id AND s.is_straggler),
               (SELECT count(*) FROM comm_matched m WHERE m.job_id = j.job_id),
               (SELECT count(*) FROM comm_matched m WHERE m.job_id = j.job_id AND m.status = 'matched'),
               (SELECT count(*) FROM comm_matched m WHERE m.job_id = j.job_id AND m.status = 'partial')
        FROM comm_jobs j {_where(job)} ORDER BY j.job_id""").fetchall()
    out = []
    for jid, world, backend, n, missing, truncated, straggler, n_coll, n_matched, n_partial in rows:
        parts = [f"job {jid}: {n} of {world} ranks ({backend})" if world is not None
                 else f"job {jid}: {n} rank{'s' if n != 1 else ''} (world size unknown)"]
        if missing:
            parts.append(f"missing ranks {', '.join(map(str, missing[:4]))}{' ...' if len(missing) > 4 else ''}")
        if truncated:
            parts.append(f"cut short: ranks {', '.join(map(str, truncated))}")
        coll = f"{n_coll} collectives: {n_matched} matched on every rank"
        rest = n_coll - n_matched - n_partial
        parts.append(coll + (f", {n_partial} on the ranks present" if n_partial else "")
                     + (f", {rest} not matched" if rest else ""))
        parts.append(f"straggler rank {straggler}" if straggler is not None else "no straggler")
        out.append("; ".join(parts))
    return out




def tracelens_files() -> list:
    """TraceLens's multi-rank collective report files (sql/peers/tracelens/comm_*.sql, ``@output tracelens-comm``),
    in TraceLens's order of writing."""
    from tracesql.store.sqlmodules import outputs

    return outputs("tracelens-comm")

_BW_GROUPS = ("algo bw (GB/s)", "bus bw (GB/s)")


@_scoped("comm")
def multirank_jobs(ds) -> list[int]:
    """The jobs of two or more distinct ranks (comm_jobs), in order."""
    if not ds.con.sql("SELECT count(*) FROM traces WHERE rank IS NOT NULL").fetchall()[0][0]:
        return []
    return [r[0] for r in ds.con.sql("SELECT job_id FROM comm_jobs WHERE len(ranks) > 1 ORDER BY job_id").fetchall()]


def tracelens_jobs(ds) -> list[int]:
    """The jobs of two or more ranks with collective kernels that TraceLens's multi-rank report reads (a job of a
    CPU backend has none: TraceLens reports nothing for it)."""
    jobs = multirank_jobs(ds)
    if not jobs:
        return []
    have = {r[0] for r in ds.con.sql("SELECT DISTINCT job_id FROM _tl_nccl_kernels").fetchall()}
    return [j for j in jobs if j in have]


@_scoped("comm", "tracelens-comm")
def tracelens_frames(ds, job: int) -> dict[str, pl.DataFrame]:
    """TraceLens's multi-rank collective report files for one job, as frames with TraceLens's columns.

    The values are the views' (sql/peers/tracelens/comm_*.sql); this only lays them out as TraceLens writes
    them: the per-rank columns of nccl_implicit_sync side by side (rank_<r>_ts, rank_<r>_dur for every rank, then
    rank_<r>_wait_time), the bandwidth columns of the implicit-sync summary only when some value exists, node_id /
    node_span only when the job's GPUs per node are known, and no rows at all for an empty table (TraceLens then
    writes the header alone, or no straggler file)."""
    _job(ds, job)
    w = f"WHERE job_id = {int(job)}"
    out: dict[str, pl.DataFrame] = {}
    gpn = ds.con.sql(f"SELECT gpus_per_node FROM _tl_gpus_per_node {w}").fetchall()
    node_cols = bool(gpn and gpn[0][0] is not None)
    for o in tracelens_files():
        name = o.name
        df = ds.sql(o.query(f"job_id = {int(job)}"))
        if name == "nccl_implicit_sync" and df.height:
            ranks = ds.sql(f"SELECT collective_id, rank, ts, dur, wait_time FROM tl_nccl_implicit_sync_ranks {w}")
            order = sorted(set(ranks["rank"].to_list()))
            wide = df.select("collective_id")
            for r in order:
                one = ranks.filter(pl.col("rank") == r).select(
                    "collective_id", pl.col("ts").alias(f"rank_{r}_ts"), pl.col("dur").alias(f"rank_{r}_dur"),
                    pl.col("wait_time").alias(f"rank_{r}_wait_time"))
                wide = wide.join(one, on="collective_id", how="left", maintain_order="left")
            cols = [c for r in order for c in (f"rank_{r}_ts", f"rank_{r}_dur")] + \
                [f"rank_{r}_wait_time" for r in order]
            node = df.select("node_span")
            df = pl.concat([df.drop("node_span"), wide.select(cols), node], how="horizontal")
        if name == "nccl_summary_implicit_sync":
            for g in _BW_GROUPS:
                if df.height and df[f"{g}_mean"].null_count() == df.height:
                    df = df.drop([c for c in df.columns if c.startswith(g + "_")])
        if not node_cols or df.height == 0:
            df = df.drop([c for c in ("node_id", "node_span") if c in df.columns])
        if name == "straggler_summary" and df.height == 0:
            continue
        out[name] = df
    return out

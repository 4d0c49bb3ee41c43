"""Pairing a graph replay with a twin trace: its capture trace, or an eager run of the same code.

A pairing is one file, ``DATASET/twins/<trace_id>.<twin_trace_id>.json`` (tracesql.store.schema.TWINS_DIR),
written whole (a temporary file renamed into place) under the dataset's lock; sql/tree/graph_twins.sql reads
them (view ``trace_twins``) and places every graph launch of the replay on its twins (``graph_alignment``,
``graph_kernel_tags``). Pairings change what later queries return, never a stored table: nothing to rebuild.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import polars as pl

from tracesql.errors import DatasetError
from tracesql.store.lock import active, dataset_lock, fsync_dir
from tracesql.store.schema import TWINS_DIR

KINDS = ("eager", "capture")


def _one(ds, trace: str) -> str:
    from tracesql.api.analysis import trace_ids

    ids = trace_ids(ds, trace)
    if len(ids) != 1:  # trace_ids raises when nothing matches
        raise DatasetError(f"{trace}: names {len(ids)} traces; give one trace id, label or file name")
    return ids[0]


def pair(dataset, trace: str, twin: str, kind: str = "eager") -> Path:
    """Pair the trace ``trace`` (a graph replay) with ``twin`` (a trace id, label or file name of the same
    dataset) as its ``kind`` twin ('eager' or 'capture'). Returns the pairing's file. Pairing a trace with
    itself, or an unknown kind, is an error; pairing again replaces the kind."""
    from tracesql.api.dataset import Dataset

    if kind not in KINDS:
        raise DatasetError(f"{kind}: a twin is 'eager' or 'capture'")
    path = Path(dataset)
    with Dataset(path) as ds:
        tid, twin_id = _one(ds, trace), _one(ds, twin)
    if tid == twin_id:
        raise DatasetError(f"{trace}: a trace cannot be its own twin")
    out_dir = path / TWINS_DIR
    target = out_dir / f"{tid}.{twin_id}.json"
    with active(path) as act:
        if act is None:
            raise DatasetError(f"{dataset}: not a tracesql dataset")
        with dataset_lock(path):
            out_dir.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".pair-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump({"trace_id": tid, "twin_trace_id": twin_id, "kind": kind}, f)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            fsync_dir(out_dir)
    return target


def unpair(dataset, trace: str, twin: str) -> bool:
    """Remove the pairing of ``trace`` with ``twin``; returns whether there was one. (A capture trace paired
    automatically stays paired: see trace_twins.)"""
    from tracesql.api.dataset import Dataset

    path = Path(dataset)
    with Dataset(path) as ds:
        tid, twin_id = _one(ds, trace), _one(ds, twin)
    target = path / TWINS_DIR / f"{tid}.{twin_id}.json"
    with active(path), dataset_lock(path):
        if not target.exists():
            return False
        target.unlink()
        fsync_dir(target.parent)
    return True


def twins(ds) -> pl.DataFrame:
    """One row per pairing (the view trace_twin_summary): how its replay's graph launches were placed, and the
    share of the replay's GPU time whose op comes from a twin. The views it reads (tagged ``@materialize twins``)
    are computed once, in a scope."""
    from tracesql.store.sqlmodules import materialized

    with ds.materialized(materialized("twins")):
        return ds.sql("SELECT * FROM trace_twin_summary ORDER BY trace, twin")

"""The call tree (nn.Module -> op -> runtime launch -> GPU event) with GPU time per node.

Everything is computed by the SQL views of ``sql/tree/`` (cpu_nesting, gpu_launch_links,
cpu_event_context, gpu_event_ops, op_gpu_time, module_gpu_time, call_tree, ...);
this module only selects from them and formats the result.
"""
from __future__ import annotations

import time

import polars as pl

from tracesql.store.sqlmodules import materialized


def tree_views() -> list[str]:
    """The views worth computing once for tree queries (tagged ``@materialize tree`` in the SQL library), in
    dependency order. cpu_nesting, gpu_launch_links and cpu_event_context are stored tables, not among them."""
    return materialized("tree")


def _database(ds) -> str:
    """The connection's own catalog (quoted), so that `db.main.v` never means a temporary object."""
    name = ds.con.execute("SELECT current_database()").fetchall()[0][0]
    return '"' + name.replace('"', '""') + '"'


def materialize(ds, views=None) -> dict[str, float]:
    """Compute the tree views once and keep them as temporary tables of ``ds.con``.

    A temporary table shadows the view of the same name, so every later query (and every view built on
    it) reads the stored rows instead of recomputing the nesting. Returns the seconds spent per view.
    Call :func:`release` to go back to the live views (e.g. after ingesting more traces).
    """
    timings = {}
    db = _database(ds)
    for v in views or tree_views():
        t0 = time.perf_counter()
        ds.con.execute(f'CREATE OR REPLACE TEMP TABLE "{v}" AS SELECT * FROM {db}.main."{v}"')
        timings[v] = time.perf_counter() - t0
    return timings


def restrict_to_trace(ds, trace_id: str) -> None:
    """Make this connection see one trace only: temporary views shadow the stored tables.

    For one-shot commands on a private connection (`tracesql tree --trace`): every view then computes
    that trace alone, with the traces a graph replay takes its ops from (its capture trace, its twins).
    """
    from tracesql.store.dataset import companion_traces
    from tracesql.store.schema import TABLES

    ids = [trace_id, *sorted(companion_traces(ds, [trace_id]))]
    id_list = ", ".join("'" + i.replace("'", "''") + "'" for i in ids)
    db = _database(ds)
    for t in TABLES:
        ds.con.execute(f"CREATE OR REPLACE TEMP VIEW \"{t}\" AS SELECT * FROM {db}.main.\"{t}\" "
                       f"WHERE trace_id IN ({id_list})")


def release(ds, views=None) -> None:
    """Drop the temporary tables made by :func:`materialize`."""
    for v in reversed(views or tree_views()):
        ds.con.execute(f'DROP TABLE IF EXISTS temp.main."{v}"')


# A node whose name the trace does not give (JSON null): shown as this in the text tree (an empty cell in tables).
NO_NAME = "[no name]"

_COLUMNS = "trace_id, level, kind, name, gpu_busy_us, gpu_sum_us, kernel_count, node_id, parent_node_id, ts_ns, dur_ns"
_MERGED_COLUMNS = "trace_id, level, kind, name, n_nodes, gpu_busy_us, gpu_sum_us, kernel_count, ts_ns, dur_ns"


def tree(ds, op=None, module=None, depth=None, trace=None, merge: bool = False) -> pl.DataFrame:
    """The call tree with GPU time per node, one row per node in print order (depth-first, by start): the rows of
    the SQL macro call_tree_from (merge: call_tree_merged_from), where the columns are documented.

    op / module: start from every instance of that op (name, or a LIKE pattern) / nn.Module (full
    `nn.Module: X_N` name, `X_N`, a LIKE pattern on it, or the class name `X`) instead of the roots; one that
    matches nothing raises EmptySelection. depth: levels printed below the starting nodes (0: the starting nodes
    only). trace: one trace_id (restrict to it). merge: sibling nodes of the same kind and name merged into one
    (`n_nodes` instances, times summed; a trailing `#N` read as `#*`).

    Columns: trace_id, level (0 for the starting nodes), kind ('annotation', 'module', 'op', 'launch',
    'twin op' (a twin trace's op replayed by the graph launch above it), 'gpu', and 'unlinked' for the per-trace
    summary of GPU events without a launch), name, gpu_busy_us
    (union of the GPU intervals below the node), gpu_sum_us (Σ durations), kernel_count, node_id
    (event_id), parent_node_id, ts_ns, dur_ns; merged: n_nodes instead of node_id and parent_node_id.
    """
    from tracesql.errors import EmptySelection

    if op is not None and module is not None:
        raise ValueError("give op or module, not both")
    macro, cols = ("call_tree_merged_from", _MERGED_COLUMNS) if merge else ("call_tree_from", _COLUMNS)
    params = {"op": op, "module": module, "depth": None if depth is None else int(depth), "trace": trace}
    df = ds.con.sql(f"SELECT {cols} FROM {macro}($trace::VARCHAR, $op::VARCHAR, $module::VARCHAR, "
                    "$depth::INTEGER)", params=params).pl()
    if df.height == 0 and (op is not None or module is not None):
        what = f"op {op!r}" if op is not None else f"module {module!r}"
        raise EmptySelection(f"no {what} found in {ds.path}" + (f" (trace {trace})" if trace else ""))
    return df


def format_tree(df: pl.DataFrame, width: int = 110, name_width: int | None = None) -> str:
    """Indented text rendering of :func:`tree`'s result, one line per node, each at most ``width`` characters:
    `name ..... (busy µs, N GPU events)`, a merged node (:func:`tree` with merge) `name ×N ..... (...)`; a name
    too long for the line is cut in the middle."""
    from tracesql.escape import terminal_text
    from tracesql.render.output import cut_middle

    labels: dict[str, str] = {}
    if "trace" in df.columns:
        labels = dict(zip(df.get_column("trace_id").to_list(), df.get_column("trace").to_list(), strict=True))
    lines = []
    last_trace = None
    for row in df.iter_rows(named=True):
        if row["trace_id"] != last_trace:
            if last_trace is not None:
                lines.append("")
            label = labels.get(row["trace_id"])
            lines.append(f"trace {terminal_text(label)} ({row['trace_id']})" if label else f"trace {row['trace_id']}")
            last_trace = row["trace_id"]
        tail = f" ({row['gpu_busy_us']:,.2f} µs"
        if row["kind"] != "gpu":
            tail += f", {row['kernel_count']:,} GPU event{'s' if row['kernel_count'] != 1 else ''}"
        tail += ")"
        indent = "  " * row["level"]
        room = width - len(indent) - len(tail) - 4  # a space and at least three dots
        if name_width is not None:
            room = min(room, name_width)
        times = f" ×{row['n_nodes']:,}" if row.get("n_nodes") is not None else ""
        shown = NO_NAME if row["name"] is None else terminal_text(row["name"])  # nothing raw reaches the screen
        name = cut_middle(shown, max(room - len(times), 8)) + times
        head = indent + name + " "
        lines.append(head + "." * max(3, width - len(head) - len(tail)) + tail)
    return "\n".join(lines)

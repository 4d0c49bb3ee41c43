"""Rows of one table: how the rows of a chunk routed to an event table become a Parquet part of it.

``EXTRACTIONS`` declares, for each table of ``schema.EVENT_TABLES`` and for ``launches``, the SELECT list that
yields the table's columns (``schema.columns``) from the chunk's rows (``event_id`` and the columns of
``read.chunk_select``), the args fields read as typed columns (the struct ``a``, by ``json_transform``), and
which rows it keeps. ``table_copy`` writes the COPY statement of an entry, casting every column to its schema type.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import orjson

from tracesql.escape import sql_str
from tracesql.ingest.read import EXTRA_KEYS
from tracesql.store.schema import columns


@dataclass(frozen=True)
class Extraction:
    """The rows of one table.

    ``select``: the SELECT list (the table's columns by name; ``a`` is the struct of typed args when ``args`` is
    set). ``args``: args fields read into ``a`` (field -> DuckDB type). ``rows``: the FROM source, ``{src}`` being
    the chunk's rows routed to the table; ``where``: a filter on them; ``join``: appended after the source.
    """

    select: str
    args: dict[str, str] | None = None
    rows: str = "{src}"
    where: str | None = None
    join: str = ""

    def sql(self, src: str, keep: str = "") -> str:
        """The SELECT over ``src`` (and the column ``keep`` of its rows, when given)."""
        rows = self.rows.replace("{src}", src)
        if self.where is not None:
            rows += f" WHERE {self.where}"
        if self.args is not None:
            sig = orjson.dumps(self.args).decode()
            rows = f"(SELECT *, json_transform(args, '{sig}') AS a FROM {rows})"
        return f"SELECT {self.select}{', ' + keep if keep else ''} FROM {rows}{self.join}"


# Launch APIs by name: graph launches (cudaGraphLaunch, hipGraphLaunch, cuGraphLaunch), memcpy/memset APIs
# (cudaMemcpyAsync, cuMemsetD32Async, hipMemcpyWithStream, ...) and kernel launches
# (cudaLaunchKernel[ExC], cuLaunchKernel[Ex], hipLaunchKernel, hipExtModuleLaunchKernel, ...).
_LAUNCH_KIND = """CASE
  WHEN name ILIKE '%graphlaunch%' THEN 'graph'
  WHEN name LIKE 'cudaMemcpy%' OR name LIKE 'cuMemcpy%' OR name LIKE 'hipMemcpy%' THEN 'memcpy'
  WHEN name LIKE 'cudaMemset%' OR name LIKE 'cuMemset%' OR name LIKE 'hipMemset%' THEN 'memset'
  WHEN (name LIKE 'cu%' OR name LIKE 'hip%') AND name LIKE '%Launch%Kernel%' THEN 'kernel'
END"""

# 'External id' ('external id' in PyTorch 1.8 traces; DuckDB struct keys ignore case, so read it apart)
_EXT_ID = """coalesce(a."External id", CASE WHEN cat_raw IN ('Operator', 'Runtime', 'Kernel', 'Memcpy', 'Memset')
  THEN TRY_CAST(json_extract_string(args, '$."external id"') AS BIGINT) END)"""


def _bigint(expr: str) -> str:
    return f"TRY_CAST({expr} AS BIGINT)"


def _extra_json() -> str:
    # the extra fields were read as text: numbers/objects/lists are valid JSON again, bare strings are re-quoted
    pairs = ", ".join(f"'{k}', CASE WHEN json_valid(\"{k}\") THEN json(\"{k}\") ELSE to_json(\"{k}\") END"
                      for k in EXTRA_KEYS)
    nulls = " AND ".join(f'"{k}" IS NULL' for k in EXTRA_KEYS)
    return f"CASE WHEN {nulls} THEN NULL ELSE json_merge_patch('{{}}', json_object({pairs})) END"


def _detail(field: str, key: str) -> str:
    """The text of ``key:VALUE`` in a JAX details string (args kernel_details / memcpy_details: fields separated by
    spaces or newlines, e.g. ``regs:32 static_shared:0 grid:2,1,1 block:32,1,1 occ_pct:100`` from XLA on CUDA,
    ``grid:16,1,1 block:512,1,1 private_mem:0 group_mem:0 occ_pct:0`` on ROCm, ``kind:HtoD size:4096``)."""
    return f"nullif(regexp_extract(a.{field}, '(^|\\s){key}:(\\S+)', 2), '')"


def _kernel_dims() -> str:
    dims = []
    for d in ("grid", "block"):
        for i, ax in enumerate("xyz"):
            # JAX writes "kernel_details": " grid:1,1,1 block:512,1,1 ..." instead of lists
            jax_dim = f"string_split({_detail('kernel_details', d)}, ',')[{i + 1}]"
            dims.append(f"CASE WHEN a.kernel_details IS NULL THEN a.{d}[{i + 1}] "
                        f"ELSE {_bigint(jax_dim)} END AS {d}_{ax}")
    return ", ".join(dims)


def _jax_details() -> str:
    """registers, shared memory and occupancy from kernel_details, bytes and copy kind from memcpy_details (JAX),
    where Kineto's own args are absent."""
    regs = _bigint(_detail("kernel_details", "regs"))
    shared = (f"coalesce({_bigint(_detail('kernel_details', 'static_shared'))} "
              f"+ {_bigint(_detail('kernel_details', 'dynamic_shared'))}, "
              f"{_bigint(_detail('kernel_details', 'group_mem'))})")
    occ = f"TRY_CAST({_detail('kernel_details', 'occ_pct')} AS DOUBLE)"
    size = _bigint(_detail("memcpy_details", "size"))
    return f"""coalesce(a."registers per thread", {regs}) AS registers_per_thread,
            coalesce(a."shared memory", {shared}) AS shared_memory_bytes,
            a."blocks per SM" AS blocks_per_sm, a."warps per SM" AS warps_per_sm,
            coalesce(a."est. achieved occupancy %", {occ}) AS est_occupancy_pct, a.queued AS queued,
            coalesce(a.bytes, {size}) AS bytes,
            coalesce(a."memory bandwidth (GB/s)",
                     CASE WHEN {size} > 0 AND dur_ns > 0 THEN {size} / dur_ns END) AS memory_bandwidth_gbps,
            {_detail('memcpy_details', 'kind')} AS copy_kind,
            a.hlo_module AS hlo_module, a.hlo_op AS hlo_op,
            CASE WHEN a.hlo_op IS NOT NULL THEN a.name END AS framework_op, a.program_id AS program_id"""


EXTRACTIONS: dict[str, Extraction] = {
    "events": Extraction(
        select=f"""event_id, ph, cat, cat_raw, name, pid, tid, ts_ns, dur_ns,
            {_EXT_ID} AS external_id, coalesce(a.correlation, a.correlation_id) AS correlation,
            a."Sequence number" AS sequence_number, a."Fwd thread id" AS fwd_thread_id,
            a."Python id" AS python_id, a."Python parent id" AS python_parent_id,
            a."Input Dims" AS input_dims, a."Input type" AS input_types, a."Input Strides" AS input_strides,
            a."Concrete Inputs" AS concrete_inputs,
            args, {_extra_json()} AS extra""",
        args={"External id": "BIGINT", "correlation": "BIGINT", "correlation_id": "BIGINT",
              "Sequence number": "BIGINT", "Fwd thread id": "BIGINT", "Python id": "BIGINT",
              "Python parent id": "BIGINT", "Input Dims": "JSON", "Input type": "JSON", "Input Strides": "JSON",
              "Concrete Inputs": "JSON"},
    ),
    # the launch API calls among the events routed to events
    "launches": Extraction(
        select=f"""event_id, name, launch_kind, pid, tid, ts_ns, dur_ns,
            coalesce(a.correlation, a.correlation_id) AS correlation, {_EXT_ID} AS external_id, a.cbid AS cbid""",
        args={"External id": "BIGINT", "correlation": "BIGINT", "correlation_id": "BIGINT", "cbid": "BIGINT"},
        rows=f"(SELECT *, {_LAUNCH_KIND} AS launch_kind FROM {{src}} WHERE cat IN ('cuda_runtime', 'cuda_driver'))",
        where="launch_kind IS NOT NULL",
    ),
    "kernels": Extraction(
        select=f"""event_id, cat, cat_raw, name, pid, tid, ts_ns, dur_ns,
            coalesce(a.device, dev.device) AS device,
            coalesce(a.stream, CASE WHEN dev.pid IS NOT NULL THEN {_bigint('tid')} END) AS stream,
            coalesce(a.correlation, a.correlation_id) AS correlation, {_EXT_ID} AS external_id,
            a.context AS context, {_kernel_dims()}, {_jax_details()}, args""",
        args={"device": "INTEGER", "stream": "BIGINT", "correlation": "BIGINT", "correlation_id": "BIGINT",
              "External id": "BIGINT", "context": "BIGINT", "grid": "BIGINT[]", "block": "BIGINT[]",
              "registers per thread": "BIGINT", "shared memory": "BIGINT", "blocks per SM": "DOUBLE",
              "warps per SM": "DOUBLE", "est. achieved occupancy %": "DOUBLE", "queued": "BIGINT",
              "bytes": "BIGINT", "memory bandwidth (GB/s)": "DOUBLE", "kernel_details": "VARCHAR",
              "memcpy_details": "VARCHAR", "hlo_module": "VARCHAR", "hlo_op": "VARCHAR", "name": "VARCHAR",
              "program_id": "BIGINT"},
        # the device of a /device:GPU:N process (JAX), from the connection's table device_pids (pid, device)
        join=" k LEFT JOIN device_pids dev USING (pid)",
    ),
    "correlations": Extraction(
        select=f"""event_id, ph, cat_raw AS cat, name,
            {_bigint("id")} AS flow_id, id AS flow_id_raw, pid, tid, ts_ns, bp AS binding_point""",
    ),
    "instants": Extraction(
        select="event_id, ph, cat_raw AS cat, name, pid, tid, ts_ns, s AS scope, args",
    ),
    "metadata": Extraction(
        select="""event_id, name, pid, tid, ts_ns,
            coalesce(json_extract_string(args, '$.name'), json_extract_string(args, '$.labels'),
                     json_extract_string(args, '$.sort_index')) AS value, args""",
    ),
    "counters": Extraction(
        select="event_id, name, cat_raw AS cat, pid, tid, ts_ns, args",
    ),
    "gpu_user_annotations": Extraction(
        select=f"""event_id, name, pid, tid, ts_ns, dur_ns,
            coalesce(a.device, TRY_CAST(pid AS INTEGER)) AS device, coalesce(a.stream, {_bigint('tid')}) AS stream,
            {_EXT_ID} AS external_id, args""",
        args={"device": "INTEGER", "stream": "BIGINT", "External id": "BIGINT"},
    ),
    "other_events": Extraction(
        select=f"""event_id, ph, cat_raw AS cat, name, pid, tid, ts_ns, dur_ns, args,
            {_extra_json()} AS extra""",
    ),
}


def table_copy(table: str, src: str, out: str, partition: str | None = None) -> str:
    """COPY the rows of ``src`` (event_id + chunk columns, already filtered to the table's route) into the Parquet
    file ``out`` with the table's schema (schema.py), extracting typed columns from args. With ``partition`` (a
    column of ``src``), ``out`` is a directory: one file per value, ``out/<partition>=<value>/data_0.parquet``,
    without that column, and the statement returns one row per file (RETURN_STATS)."""
    sel = EXTRACTIONS[table].sql(src, keep=f'"{partition}"' if partition else "")
    cols = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t, _ in columns(table))
    if partition:
        cols += f', "{partition}"'
    opts = f', PARTITION_BY ("{partition}"), RETURN_STATS' if partition else ""
    return (f"COPY (SELECT {cols} FROM ({sel})) TO {sql_str(out)} "
            f"(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1{opts})")


def copy_table(con: duckdb.DuckDBPyConnection, out: Path, table: str, src: str, index: int) -> int:
    """Write the rows of ``src`` as part ``index`` of ``table`` under the directory ``out``; returns the rows
    written."""
    d = out / table
    d.mkdir(exist_ok=True)
    row = con.execute(table_copy(table, src, str(d / f"part-{index:05d}.parquet"))).fetchone()
    assert row is not None
    return int(row[0])


def copy_partitioned(con: duckdb.DuckDBPyConnection, out: Path, table: str, src: str,
                     partition: str) -> dict[str, tuple[Path, int]]:
    """Write the rows of ``src`` as one Parquet file per value of its column ``partition`` under ``out/table``;
    returns {value as text: (file, rows)}."""
    return partition_files(con.execute(table_copy(table, src, str(out / table), partition)), partition)


def partition_files(cur: duckdb.DuckDBPyConnection, partition: str) -> dict[str, tuple[Path, int]]:
    """What a partitioned COPY with RETURN_STATS wrote: {value of ``partition`` as text: (file, rows)}."""
    names = [c[0] for c in cur.description]
    rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    return {str(r["partition_keys"][partition]): (Path(r["filename"]), int(r["count"])) for r in rows}


# The bytes of a Parquet file with a table's columns and no rows, by table (written once per process).
_EMPTY_PARTS: dict[str, bytes] = {}


def write_empty_part(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> None:
    """Write a part of ``table`` without rows (its schema's columns and types) at ``path``."""
    if table not in _EMPTY_PARTS:
        tmp = path.with_name(f".{path.name}.empty")
        cols = ", ".join(f'NULL::{t} AS "{c}"' for c, t, _ in columns(table))
        con.execute(f"COPY (SELECT {cols} WHERE false) TO {sql_str(str(tmp))} (FORMAT parquet)")
        _EMPTY_PARTS[table] = tmp.read_bytes()
        tmp.unlink()
    path.write_bytes(_EMPTY_PARTS[table])

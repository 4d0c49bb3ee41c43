"""The GPU a roofline is drawn for, per style: set on the connection for the scope of a call."""
from __future__ import annotations

from pathlib import Path

import duckdb


def set_arch(ds, style: str, arch: str | None) -> None:
    """The GPU of a report's roofline, for this connection. Style tracelens: TraceLens's platform (its
    --gpu_arch_platform: a name of tl_arch_platforms, e.g. MI300X) or arch JSON file (its --gpu_arch_json_path),
    read by sql/peers/tracelens/arch.sql; the perf sheets then carry TraceLens's roofline columns. Native: the
    device of the first screen's Compute line (tracesql perf --arch: a name of sql/perf/devices.csv or a CSV spec).
    Style hta: HTA has no roofline; a UsageError."""
    from tracesql.errors import DatasetError, UsageError

    if arch is None:
        return
    if style == "native":
        from tracesql.api.perf import _set_device

        _set_device(ds, arch)
        return
    if style != "tracelens":
        raise UsageError("--arch applies to the native and tracelens styles (HTA has no roofline)")
    p = Path(arch)
    if p.is_file() or arch.endswith(".json"):
        try:
            text = p.read_text()
        except OSError as e:
            raise DatasetError(f"{arch}: cannot read the GPU arch file ({e.strerror})") from None
        try:
            ok = ds.con.execute("SELECT json_type($t::JSON -> 'max_achievable_tflops') = 'OBJECT'",
                                {"t": text}).fetchall()[0][0]
        except duckdb.Error:
            ok = False
        if not ok:
            raise UsageError(f"{arch}: not a TraceLens GPU arch file (a JSON object with mem_bw_gbps and "
                             "max_achievable_tflops: {compute spec: TFLOP/s})")
        bad = ds.con.execute("""SELECT k, v FROM (SELECT 'mem_bw_gbps' AS k, TRY_CAST($t::JSON ->> 'mem_bw_gbps'
                                                AS DOUBLE) AS v, 0 AS o
                                  UNION ALL SELECT 'max_achievable_tflops.' || k, TRY_CAST($t::JSON
                                                -> 'max_achievable_tflops' ->> k AS DOUBLE), 1
                                  FROM unnest(json_keys($t::JSON -> 'max_achievable_tflops')) AS s(k))
                                 WHERE v IS NOT NULL AND NOT (v > 0 AND NOT isinf(v)) ORDER BY o, k LIMIT 1""",
                             {"t": text}).fetchall()
        if bad:  # a peak of 0, below 0, nan or inf would give a roofline % of no meaning
            raise UsageError(f"{arch}: {bad[0][0]} is {bad[0][1]}; the bandwidth and the peaks must be positive "
                             "numbers")
        ds.con.execute("SET VARIABLE tracesql_tl_arch_json = ?", [text])
        return
    known = [r[0] for r in ds.con.sql("SELECT DISTINCT platform FROM tl_arch_platforms ORDER BY 1").fetchall()]
    name = next((k for k in known if k.lower() == arch.lower()), None)
    if name is None:
        raise UsageError(f"unknown --arch {arch!r} for --style tracelens: give one of TraceLens's platforms "
                         f"({', '.join(known)}) or a TraceLens GPU arch JSON file")
    ds.con.execute("SET VARIABLE tracesql_tl_arch = ?", [name])

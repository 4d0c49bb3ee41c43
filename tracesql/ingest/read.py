"""How DuckDB reads one chunk of events: the read modes and the ``read_json`` SELECT of each.

A chunk (whole events joined by commas, see ``jsonstream.TraceSplitter``) is written to a file as a JSON array and
read by ``read_json`` with an explicit column list. ``ts``/``dur`` (µs in the file) become int64 ns; how depends
on the ``ReadMode``:

- ``PROBE``: read as JSON values and cast to DOUBLE. A row whose value would need another mode (not a plain JSON
  number, or a ts of 10^13 µs or more) is marked ``bad_time = 'probe'``; an unmarked result is the chunk's rows.
- ``DOUBLE``: read as doubles, exact to the ns while no ts has 14 or more integer digits and a fraction.
- ``EXACT``: read as the decimal text (``rewrite`` quotes the numbers first) and cast through DECIMAL.
- ``CAREFUL``: as ``EXACT``, and a value that is not a number is told apart (``rewrite`` renames the key of a
  JSON string value): a string holding a number is read as that number (``time_repair`` names it); any other
  value (true, NaN, an object, another string, a number out of range, ts or dur given twice) makes the row
  malformed (``bad_time`` says why).

``classify`` picks the mode of a text from a few regex scans (no parse in Python); ``chunk_select`` is the SELECT
over a chunk file: raw fields, ns times, normalised category and the table each row goes to (``route``).
"""
from __future__ import annotations

import enum
import re

from tracesql.escape import sql_path

# Top-level event fields other than ph/cat/name/pid/tid/ts/dur/args; they are kept in an ``extra`` JSON column.
EXTRA_KEYS = ["tts", "tdur", "id", "id2", "bp", "s", "cname", "scope", "bind_id", "flow_in", "flow_out", "sf",
              "stack"]


class ReadMode(enum.Enum):
    """How ts/dur of a chunk are read (module docstring)."""

    PROBE = "probe"
    DOUBLE = "double"
    EXACT = "exact"
    CAREFUL = "careful"


# ts values with 14+ integer digits and a fraction (or 16+ digits) are not exact as doubles at ns precision.
_NEEDS_EXACT = re.compile(rb'"ts"\s*:\s*-?(?:\d{14,}\.|\d{16})')
_QUOTE_TIME = re.compile(rb'("(?:ts|dur)"\s*:\s*)(-?[0-9][0-9.eE+-]*)')
# A ts/dur whose value is not a plain JSON number: a string, true/false, null, NaN, Infinity, an object or a list.
# One scan per chunk finds the first ts that needs exact text (group 1) or is odd; dur is checked by a second.
# Both have a literal prefix, which keeps them fast; an odd value makes the read CAREFUL.
_TS_SCAN = re.compile(rb'"ts"\s*:\s*(?:(-?(?:\d{14,}\.|\d{16}))|[^-0-9\s]|-[^0-9])')
_TS_ODD = re.compile(rb'"ts"\s*:\s*(?:[^-0-9\s]|-[^0-9])')
_DUR_ODD = re.compile(rb'"dur"\s*:\s*(?:[^-0-9\s]|-[^0-9])')
# CAREFUL: a ts/dur given as a JSON string is read through a renamed key, so that SQL can tell it from a number
# (which is quoted by _QUOTE_TIME to keep its exact text).
_STR_KEY = "__tracesql_str_"
_STR_TIME = re.compile(rb'"(ts|dur)"(\s*:\s*")')


def classify(data: bytes) -> tuple[ReadMode, bool]:
    """The mode that reads every ts/dur of ``data`` (events as text) exactly: ``DOUBLE``, ``EXACT`` or
    ``CAREFUL``; and whether some ts needs its exact decimal text (14+ integer digits)."""
    m = _TS_SCAN.search(data)
    if m is None:
        exact = False
        odd = _DUR_ODD.search(data) is not None
    elif m.group(1) is not None:  # no odd ts before this one
        exact = True
        odd = _TS_ODD.search(data, m.start()) is not None or _DUR_ODD.search(data) is not None
    else:  # no ts needing exact text before this one
        odd = True
        exact = _NEEDS_EXACT.search(data, m.start()) is not None
    return (ReadMode.CAREFUL if odd else ReadMode.EXACT if exact else ReadMode.DOUBLE), exact


def rewrite(data: bytes, mode: ReadMode) -> bytes:
    """The text of ``data`` as ``mode`` reads it: EXACT quotes the ts/dur numbers; CAREFUL first renames the keys
    of string values, then quotes the numbers."""
    if mode is ReadMode.CAREFUL:
        data = _STR_TIME.sub(b'"' + _STR_KEY.encode() + rb'\1"\2', data)
    if mode in (ReadMode.EXACT, ReadMode.CAREFUL):
        data = _QUOTE_TIME.sub(rb'\1"\2"', data)
    return data


def _read_columns(mode: ReadMode) -> str:
    t = {ReadMode.PROBE: "JSON", ReadMode.DOUBLE: "DOUBLE"}.get(mode, "VARCHAR")
    # pid/tid as VARCHAR: numbers come as their text, strings unquoted.
    cols = {"ph": "VARCHAR", "cat": "VARCHAR", "name": "VARCHAR", "pid": "VARCHAR", "tid": "VARCHAR", "ts": t, "dur": t,
            "args": "JSON"}
    if mode is ReadMode.CAREFUL:
        cols[_STR_KEY + "ts"] = cols[_STR_KEY + "dur"] = "VARCHAR"
    for k in EXTRA_KEYS:  # VARCHAR is much cheaper to read than JSON; values are re-typed by extract.py
        cols[k] = "VARCHAR"
    return "{" + ", ".join(f"'{k}': '{v}'" for k, v in cols.items()) + "}"


def _careful_time(col: str) -> tuple[str, str, str]:
    """CAREFUL: col holds a number's exact text (quoted by _QUOTE_TIME) or a literal (true, NaN, {...}) as text;
    the renamed key holds the value of a JSON string. Returns (renamed column, text, its DECIMAL value)."""
    s = f'"{_STR_KEY}{col}"'
    txt = f"coalesce({col}, trim({s}))"
    return s, txt, f"TRY_CAST({txt} AS DECIMAL(38,9))"


def _bad_time_expr(mode: ReadMode) -> str:
    """CAREFUL: why the ts or dur of a row is not a finite number in range (the event is malformed), else NULL.
    Such rows are taken out of the chunk and recorded, without failing the chunk.
    PROBE: 'probe' where the value needs another mode (a ts/dur that is not a finite JSON number, a ts of
    10^13 µs or more), else NULL. Other modes: NULL."""
    if mode is ReadMode.PROBE:  # the JSON text of a number starts with a digit or '-' (NaN and infinities: range)
        checks = []
        for col, limit in (("ts", "abs(TRY_CAST(ts AS DOUBLE)) < 1e13"), ("dur", "isfinite(TRY_CAST(dur AS DOUBLE))")):
            checks.append(f"({col} IS NOT NULL AND NOT coalesce((ascii({col}::VARCHAR) BETWEEN 48 AND 57 "
                          f"OR ascii({col}::VARCHAR) = 45) AND {limit}, false))")
        return f"CASE WHEN {' OR '.join(checks)} THEN 'probe' END"
    if mode is not ReadMode.CAREFUL:
        return "NULL::VARCHAR"
    reasons = []
    for col in ("ts", "dur"):
        s, txt, dec = _careful_time(col)
        reasons.append(f"""CASE WHEN {col} IS NULL AND {s} IS NULL THEN NULL
            WHEN {col} IS NOT NULL AND {s} IS NOT NULL THEN 'duplicate key "{col}"'
            WHEN abs({dec}) < 9223372036854775 THEN NULL
            WHEN {dec} IS NOT NULL THEN '{col} out of range: ' || left({txt}, 40)
            ELSE '{col} is not a number: ' || left(CASE WHEN {s} IS NULL THEN {col} ELSE '"' || {s} || '"' END, 40)
            END""")
    return f"nullif(concat_ws('; ', {', '.join(reasons)}), '')"


def _time_expr(col: str, mode: ReadMode) -> str:
    """ts or dur of a row in int64 ns."""
    if mode is ReadMode.CAREFUL:  # NULL when the value is bad (see _bad_time_expr)
        s, _, dec = _careful_time(col)
        return f"""(CASE WHEN {col} IS NOT NULL AND {s} IS NOT NULL THEN NULL
            WHEN abs({dec}) < 9223372036854775 THEN CAST(round({dec} * 1000) AS BIGINT) END)"""
    if mode is ReadMode.EXACT:
        return f"CAST(round(CAST({col} AS DECIMAL(38,9)) * 1000) AS BIGINT)"
    if mode is ReadMode.PROBE:
        col = f"TRY_CAST({col} AS DOUBLE)"
    # floor() is exact for doubles; the fraction has < 0.5 ns error below 2^43 µs.
    return f"(CAST(floor({col}) AS BIGINT) * 1000 + CAST(round(({col} - floor({col})) * 1000) AS BIGINT))"


def _time_repair_expr(mode: ReadMode) -> str:
    """Text naming the ts/dur values that were JSON strings (CAREFUL), else NULL."""
    if mode is not ReadMode.CAREFUL:
        return "NULL::VARCHAR"
    return f"""nullif(concat_ws(', ', 'ts "' || "{_STR_KEY}ts" || '"', 'dur "' || "{_STR_KEY}dur" || '"'), '')"""


def _args_expr(mode: ReadMode) -> str:
    """args as written: in a CAREFUL read, keys renamed by _STR_TIME inside args are renamed back."""
    if mode is not ReadMode.CAREFUL:
        return "args"
    return (f"""CASE WHEN contains(args::VARCHAR, '"{_STR_KEY}') THEN replace(replace(args::VARCHAR,
                '"{_STR_KEY}ts"', '"ts"'), '"{_STR_KEY}dur"', '"dur"')::JSON ELSE args END""")


_GPU_CATS = "('kernel', 'gpu_memcpy', 'gpu_memset', 'cuda_sync')"

# Category as written -> normalised category (PyTorch 1.8 names); other categories are kept as they are.
_CAT_NORM = """CASE cat WHEN 'Operator' THEN 'cpu_op' WHEN 'Runtime' THEN 'cuda_runtime' WHEN 'Kernel' THEN 'kernel'
  WHEN 'Memcpy' THEN 'gpu_memcpy' WHEN 'Memset' THEN 'gpu_memset' ELSE cat END"""

# Which table a row goes to (``cat`` here is the normalised category). Complete events without a category
# ('x_nocat': JAX and other non-Kineto writers) are resolved when the whole file has been read, because that
# needs the process names; 'empty' rows (no trace-event field) are skipped.
_ROUTE = f"""CASE
  WHEN ph = 'X' AND cat IN {_GPU_CATS} THEN 'kernels'
  WHEN ph = 'X' AND cat = 'gpu_user_annotation' THEN 'gpu_user_annotations'
  WHEN ph = 'X' AND cat IS NULL THEN 'x_nocat'
  WHEN ph IN ('X', 'B', 'E') THEN 'events'
  WHEN ph IN ('s', 'f', 't') THEN 'correlations'
  WHEN ph IN ('i', 'I') THEN 'instants'
  WHEN ph = 'M' THEN 'metadata'
  WHEN ph = 'C' THEN 'counters'
  WHEN ph IS NULL AND name IS NULL AND cat IS NULL AND pid IS NULL AND tid IS NULL AND ts_ns IS NULL
       AND args IS NULL AND {' AND '.join(f'"{k}" IS NULL' for k in EXTRA_KEYS)} THEN 'empty'
  ELSE 'other_events'
END"""


def chunk_select(json_path: str | list[str], mode: ReadMode, ord_offset: int) -> str:
    """Rows of one chunk file read in ``mode``: ``ord`` (1-based position + ``ord_offset``), raw fields, ns times,
    normalised category, ``time_repair``, ``bad_time`` and ``route`` (the target table). Given a list of chunk
    files, they are read in one go and each row also carries the ``filename`` it came from; ``ord`` then numbers
    the rows of all files, in the order of the list."""
    extra = ", ".join(f'"{k}"' for k in EXTRA_KEYS)
    many = isinstance(json_path, list)
    src = "[" + ", ".join(sql_path(p) for p in json_path) + "]" if many else sql_path(json_path)
    return f"""
  SELECT *, {_ROUTE} AS route FROM (
    SELECT (ordinality + {ord_offset})::BIGINT AS ord, ph, cat AS cat_raw, {_CAT_NORM} AS cat, name, pid, tid,
           {_time_expr('ts', mode)} AS ts_ns, {_time_expr('dur', mode)} AS dur_ns,
           {_args_expr(mode)} AS args, {extra}, {_time_repair_expr(mode)} AS time_repair,
           {_bad_time_expr(mode)} AS bad_time{', filename' if many else ''}
    FROM read_json({src}, format = 'array', columns = {_read_columns(mode)},
                   maximum_object_size = 67108864{', filename = true' if many else ''}) WITH ORDINALITY)"""


def event_error(msg: str) -> str:
    """DuckDB's error for one event, without what only makes sense for the temporary chunk file."""
    msg = re.sub(r' in file "[^"]*",?', "", msg).replace("Invalid Input Error: ", "")
    msg = re.sub(r",? in record/value \d+", "", msg).strip()
    msg = re.sub(r"^Malformed JSON(?: at byte \d+)?: ", "", msg).rstrip(". ")
    msg = re.sub(r"^Conversion Error: Type DOUBLE with value (\S+) can't be cast because the value is out of range "
                 r"for the destination type INT64", r"ts or dur out of range: \1", msg)
    # a ts/dur beyond int64 ns, found while scaling µs to ns (DOUBLE: the multiplication; EXACT: the cast)
    if re.match(r"^(?:Out of Range Error: Overflow in multiplication of INT64|Conversion Error: Failed to cast "
                r"decimal value \S+ to type INT64)", msg):
        return f"ts or dur out of range: beyond int64 nanoseconds (|value| < {_NS_LIMIT_US:.3g} µs)"
    return msg


_NS_LIMIT_US = 9223372036854775  # the largest ts/dur in µs whose ns fit in int64

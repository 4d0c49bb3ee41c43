"""The SQL library in ``sql/``: modules, what each one requires, stores and materializes, in load order.

A module is one ``.sql`` file; its name is its path under ``sql/`` without the suffix (``tree/nesting``).
Its first comment block says what it is and carries the module's declarations, one per line:

    -- @requires lib/keys tree/nesting          modules whose objects this one reads (loaded first)
    -- @stores cpu_nesting FROM _cpu_nesting_build
                                                 a table stored with each trace at ingest: the rows of the
                                                 build view, columns as in schema.py
    -- @build-temp _tree_clip UNTIL _tree_nest_order
                                                 while building the stored tables, keep this helper view as a
                                                 temporary table from just before the module's stored table
                                                 is built until the named object has been built
    -- @build-levels _tree_context_walk BY _tree_context_level OVER _tree_context_nodes
                                                 build this recursive helper one depth level per statement
                                                 with the level macro, over the named nodes (stored in depth
                                                 order)

and the comment block above an object may say where it is worth computing once per connection:

    -- @materialize report tree                  tags: the report of that style ('report' native,
                                                 'report-tracelens', 'report-hta'), 'tree', the
                                                 collective commands ('comm'), TraceLens's multi-rank
                                                 report ('tracelens-comm') or one level of a comparison
                                                 rank by rank ('diff-LEVEL')

and what a command or a report shows of it, so that no Python module lists view names (a declaration
ending in a backslash continues on the next comment line):

    -- @output perf-by 1 args KEYS op_name family input_dims
    -- @output report-tracelens 4 ops_summary_by_category EXCLUDE rank ORDER BY trace_id, rank
    -- @output report-native 12 short_kernels \\
    --     COLUMNS trace_id trace op_name kernel_name count total_ns:us mean_ns:us short_pct pct_of_kernel_time \\
    --     ORDER BY trace, total_ns DESC, op_name, kernel_name
    -- @output report-native 5 gaps_by_stream CALL gaps what=streams
                                                 the object is output NAME of GROUP, at POSITION in the group:
                                                 a value of a command's option (`perf --by args`), a file (a
                                                 section) of a report, a part of the first screen; KEYS are the
                                                 columns that identify a row, EXCLUDE the columns not shown,
                                                 COLUMNS instead the columns shown, in order (`trace`: the
                                                 trace's label; `x_ns:us`: x_ns in µs, named x_us), CALL the
                                                 API function that shows the object instead, with its keyword
                                                 arguments (names the report knows: tracesql.api.report),
                                                 TITLE and ABOUT the heading of the section and one line on
                                                 what it means (the HTML report), IF ROWS (after NAME) a
                                                 section shown only when it has rows, ORDER BY (the rest of
                                                 the line) the order of the rows

Nothing else decides what is loaded, stored, materialized or shown: deleting a folder of modules removes
exactly what they define (a module that requires a missing one is an error at load time).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from tracesql.errors import DatasetError

_DECL = re.compile(r"^--\s*@([a-z-]+)\s*(.*?)\s*$")
_CREATE = re.compile(r"^CREATE OR REPLACE (VIEW|MACRO) (\w+)", re.M)


@dataclass(frozen=True)
class Output:
    """An object shown by a command or a report (``@output``): the output ``name`` of ``group`` at ``position``."""

    group: str
    position: int
    name: str
    object: str
    keys: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    order_by: str | None = None
    columns: tuple[str, ...] = ()  # the columns shown, in order (none: all but exclude)
    call: str | None = None  # the API function that shows the object (its rows are then not a query's)
    call_args: tuple[tuple[str, str | int | bool], ...] = ()  # its keyword arguments
    doc: str = ""  # the first sentence of the object's comment block: what a row is ("op_summary: one row per ...")
    title: str = ""  # TITLE "...": how a report heads the section ("Ops by GPU time")
    about: str = ""  # ABOUT "...": one line on what it means, units included
    if_rows: bool = False  # IF ROWS: a report shows the section only when it has rows

    def query(self, where: str = "", source: str | None = None, drop: tuple[str, ...] = ()) -> str:
        """SELECT of the object's rows as shown (``where``: a condition on them; ``source``: read another object
        with the same columns instead; ``drop``: columns not shown besides those the declaration leaves out)."""
        src = source or self.object
        if self.columns:
            shown = [c for c in self.columns if c not in drop]
            cols = ", ".join("t.trace" if c == "trace" else f"o.{c[:-3]} / 1e3 AS {c[:-6]}_us" if c.endswith("_ns:us")
                             else f"o.{c}" for c in shown)
            src = f"{src} o" + (" JOIN (SELECT trace_id, label AS trace FROM trace_labels) t USING (trace_id)"
                                if "trace" in shown else "")
        else:
            exclude = self.exclude + tuple(c for c in drop if c not in self.exclude)
            cols = f"* EXCLUDE ({', '.join(exclude)})" if exclude else "*"
        return (f"SELECT {cols} FROM {src}" + (f" WHERE {where}" if where else "")
                + (f" ORDER BY {self.order_by}" if self.order_by else ""))


_OUTPUT = re.compile(r"^(?P<group>[a-z-]+)\s+(?P<pos>\d+)\s+(?P<name>\S+)(?P<if_rows>\s+IF ROWS)?"
                     r"(?:\s+KEYS\s+(?P<keys>.*?))?"
                     r"(?:\s+EXCLUDE\s+(?P<exclude>.*?))?(?:\s+COLUMNS\s+(?P<columns>.*?))?"
                     r"(?:\s+CALL\s+(?P<call>\w+)(?P<args>(?:\s+\w+=\S+)*))?"
                     r'(?:\s+TITLE\s+"(?P<title>[^"]*)")?(?:\s+ABOUT\s+"(?P<about>[^"]*)")?'
                     r"(?:\s+ORDER BY\s+(?P<order>.*))?$")


def _arg(value: str) -> str | int | bool:
    """A CALL argument's value: an integer, true or false, else the text."""
    return int(value) if value.isdigit() else {"true": True, "false": False}.get(value, value)


def _doc(block: list[str]) -> str:
    """The first sentence of a comment block (its lines before the first declaration or column list), without
    the ``name:`` it starts with."""
    words: list[str] = []
    for line in block:
        t = line[2:].strip()
        if not t or t.startswith("@") or (words and line[2:4] == "  "):
            break
        words.append(t)
    text = " ".join(words)
    text = re.sub(r"^[\w]+(\([^)]*\))?:\s*", "", text)
    end = re.search(r"(?<=[a-z)\]])[.:](\s|$)", text)
    return text[:end.start()] if end else text


def _output(decl: str, obj: str, path: Path, doc: str = "") -> Output:
    m = _OUTPUT.match(decl)
    if not m:
        raise DatasetError(f"{path}: cannot read '@output {decl}' (GROUP POSITION NAME [IF ROWS] [KEYS c ...] "
                           '[EXCLUDE c ...] [COLUMNS c ...] [CALL function arg=value ...] [TITLE "..."] '
                           '[ABOUT "..."] [ORDER BY ...])')
    args = tuple((k, _arg(v)) for k, v in (a.split("=", 1) for a in (m["args"] or "").split()))
    return Output(m["group"], int(m["pos"]), m["name"], obj, tuple((m["keys"] or "").split()),
                  tuple((m["exclude"] or "").split()), m["order"], tuple((m["columns"] or "").split()),
                  m["call"], args, doc, m["title"] or "", m["about"] or "", bool(m["if_rows"]))


@dataclass
class Module:
    """One SQL file of the library and what its header declares."""

    name: str
    path: Path
    requires: list[str] = field(default_factory=list)
    stores: dict[str, str] = field(default_factory=dict)          # stored table -> its build view
    build_temp: list[tuple[str, str]] = field(default_factory=list)  # (helper view, drop after this object)
    build_levels: dict[str, tuple[str, str]] = field(default_factory=dict)  # helper -> (level macro, nodes)
    objects: list[str] = field(default_factory=list)              # views, macros and tables it creates
    materialize: dict[str, list[str]] = field(default_factory=dict)  # tag -> objects, in file order
    statements: list[tuple[str, str, str]] = field(default_factory=list)  # (VIEW|MACRO, name, SQL) in file order
    outputs: list[Output] = field(default_factory=list)           # what commands and reports show of it


def sql_dir() -> Path:
    """The shipped ``sql/`` folder (inside the installed package, or the repository's top level)."""
    package = Path(__file__).resolve().parent.parent  # tracesql/
    for cand in (package / "sql", package.parent / "sql"):
        if cand.is_dir():
            return cand
    raise DatasetError("the tracesql sql/ folder is missing from the installation")


def _joined(block: list[str]) -> list[str]:
    """The comment lines of a block, a line ending in a backslash continued by the next one (its text after
    ``--``)."""
    out: list[str] = []
    cont = False
    for line in block:
        if cont:
            out[-1] = out[-1][:-1].rstrip() + " " + line[2:].strip()
        else:
            out.append(line.rstrip())
        cont = out[-1].endswith("\\")
    return out


def _parse(name: str, path: Path) -> Module:
    text = path.read_text()
    m = Module(name=name, path=path)
    lines = text.splitlines()
    i = 0
    while i < len(lines) and lines[i].startswith("--"):  # the header block
        d = _DECL.match(lines[i])
        i += 1
        if not d:
            continue
        key, arg = d.group(1), d.group(2).split()
        if key == "requires":
            m.requires += arg
        elif key == "stores" and len(arg) == 3 and arg[1] == "FROM":
            m.stores[arg[0]] = arg[2]
        elif key == "build-temp" and len(arg) == 3 and arg[1] == "UNTIL":
            m.build_temp.append((arg[0], arg[2]))
        elif key == "build-levels" and len(arg) == 5 and arg[1] == "BY" and arg[3] == "OVER":
            m.build_levels[arg[0]] = (arg[2], arg[4])
        else:
            raise DatasetError(f"{path}: cannot read the declaration '{lines[i - 1]}'")
    block: list[str] = []
    starts: list[tuple[int, str, str]] = []  # (line, VIEW|MACRO, name) of each statement
    for j, line in enumerate(lines[i:], start=i):
        c = _CREATE.match(line)
        if c:
            starts.append((j, c.group(1), c.group(2)))
            m.objects.append(c.group(2))
            for b in _joined(block):
                d = _DECL.match(b)
                if d and d.group(1) == "materialize":
                    for tag in d.group(2).split():
                        m.materialize.setdefault(tag, []).append(c.group(2))
                elif d and d.group(1) == "output":
                    m.outputs.append(_output(d.group(2), c.group(2), path, _doc(block)))
        elif not starts and line.strip() and not line.startswith("--"):
            raise DatasetError(f"{path}: every statement creates a view or a macro (CREATE OR REPLACE VIEW|MACRO "
                               f"name), not '{line[:60]}'")
        block = block + [line] if line.startswith("--") else []
    # a statement runs from its CREATE line to the next one (the comments between are harmless)
    ends = [j for j, _, _ in starts[1:]] + [len(lines)]
    m.statements = [(kind, name, "\n".join(lines[j:e])) for (j, kind, name), e in zip(starts, ends, strict=True)]
    return m


@lru_cache(maxsize=4)
def _modules(root: Path) -> dict[str, Module]:
    mods = {}
    for p in sorted(root.rglob("*.sql")):
        name = p.relative_to(root).with_suffix("").as_posix()
        mods[name] = _parse(name, p)
    return mods


def modules() -> dict[str, Module]:
    """Every module of the shipped library, by name."""
    return _modules(sql_dir())


@lru_cache(maxsize=4)
def _object_modules(root: Path) -> dict[str, str]:
    return {o: m.name for m in _modules(root).values() for o in m.objects}


def object_modules() -> dict[str, str]:
    """The module that creates each object of the library, by object name."""
    return _object_modules(sql_dir())


def load_order(names: list[str] | None = None) -> list[Module]:
    """The modules ``names`` (default: all) and everything they require, each after what it requires (ties
    in name order)."""
    mods = modules()
    out: list[Module] = []
    state: dict[str, int] = {}

    def visit(n: str, chain: tuple[str, ...]) -> None:
        if n not in mods:
            raise DatasetError(f"sql module {chain[-1] if chain else '?'} requires {n}, which does not exist")
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            raise DatasetError(f"sql modules require each other in a cycle: {' -> '.join(chain + (n,))}")
        state[n] = 1
        for r in mods[n].requires:
            visit(r, chain + (n,))
        state[n] = 2
        out.append(mods[n])

    for n in sorted(names if names is not None else mods):
        visit(n, ())
    return out


def module_statements(mods: list[Module]) -> list[str]:
    """The SQL text of each module, ``${SQL_DIR}`` replaced by the absolute path of the shipped sql/ folder
    (for the rule CSVs). The text names no dataset: it reads the table views."""
    sd = str(sql_dir()).replace("'", "''")
    return [f"-- module {m.name}\n" + m.path.read_text().replace("${SQL_DIR}", sd) for m in mods]


def statements() -> list[str]:
    """Every module's SQL, in load order."""
    return module_statements(load_order())


def stored_tables() -> dict[str, Module]:
    """Tables stored with each trace at ingest (``@stores``), in build order, with the module declaring each."""
    return {t: m for m in load_order() for t in m.stores}


def outputs(group: str) -> list[Output]:
    """The outputs of ``group`` (``@output``), by position; DatasetError when two share a position or a name."""
    found = sorted((o for m in modules().values() for o in m.outputs if o.group == group), key=lambda o: o.position)
    for a, b in zip(found, found[1:], strict=False):
        if a.position == b.position:
            raise DatasetError(f"@output {group}: {a.object} and {b.object} are both at position {a.position}")
    if len({o.name for o in found}) < len(found):
        raise DatasetError(f"@output {group}: a name is given twice")
    return found


def materialized(tag: str) -> list[str]:
    """Objects tagged ``@materialize TAG``, in load order (each after the objects it reads)."""
    return [o for m in load_order() for o in m.materialize.get(tag, [])]

"""The Python packages show the architecture: each layer imports only the layers below it, no module imports
another that imports it back (directly or not), and nothing outside the command line imports it.

Layers, from the bottom: errors, escape, version (leaves); store (dataset, SQL library, schema), parallel
(executors), render (terminal tables, machine formats, HTML/SVG); ingest; api (the analyses and reports);
peers (the peer styles' Python); cli. Every import counts, also one inside a function."""
from __future__ import annotations

import ast
from pathlib import Path

import tracesql

PACKAGE = Path(tracesql.__file__).resolve().parent

# layer -> the layers it may import (besides itself)
ALLOWED = {
    "errors": set(), "escape": set(), "version": set(),
    "store": {"errors", "escape"},
    "parallel": {"errors"},
    "render": {"errors", "escape"},
    "ingest": {"errors", "escape", "version", "store", "parallel", "render"},
    "api": {"errors", "escape", "version", "store", "parallel", "render", "ingest"},
    "peers": {"errors", "escape", "store", "render", "api"},
    "cli": {"errors", "escape", "version", "store", "parallel", "render", "ingest", "api", "peers", "top"},
    "top": {"errors", "version", "ingest", "api"},
}


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    edges = {}
    for name, f in mods.items():
        pkg = name if f.name == "__init__.py" else name.rsplit(".", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(pkg.split(".")[:len(pkg.split(".")) - node.level + 1] + ([base] if base else []))
                if base.split(".")[0] != "tracesql":
                    continue
                for a in node.names:
                    found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "tracesql"}
        edges[name] = {m for m in found if m in mods and m != name}
    return edges


def _layer(module: str) -> str:
    parts = module.split(".")
    return "top" if len(parts) == 1 else parts[1]


def test_every_module_belongs_to_a_layer():
    assert {_layer(m) for m in _modules()} <= set(ALLOWED)


def test_layers_import_only_the_layers_below():
    bad = [f"{m} -> {e}" for m, es in _imports(_modules()).items() for e in es
           if _layer(e) != _layer(m) and _layer(e) not in ALLOWED[_layer(m)]]
    assert bad == []


def test_nothing_outside_the_command_line_imports_it():
    bad = [f"{m} -> {e}" for m, es in _imports(_modules()).items() for e in es
           if _layer(e) == "cli" and _layer(m) != "cli"]
    assert bad == []


def test_no_import_cycle():
    edges = _imports(_modules())
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for e in sorted(edges[m]):
            if state.get(e) == 1:
                cycles.append(" -> ".join(path[path.index(e):] + [e]) if e in path else f"{m} -> {e}")
            elif e not in state:
                visit(e, path + [e])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_the_graph_is_read_as_imports_are_written():
    """The checks above read the real imports: the facade imports the analyses, the command line the facade."""
    edges = _imports(_modules())
    assert "tracesql.api.tree" in edges["tracesql.api.dataset"]
    assert "tracesql.api.dataset" in edges["tracesql"]
    assert "tracesql.cli.common" in edges["tracesql.cli.main"]


def _code_strings(f: Path) -> str:
    """The string constants of a Python file that are not docstrings (f-strings' literal parts included)."""
    tree = ast.parse(f.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return "\n".join(n.value for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs)


def test_the_native_report_and_the_category_breakdowns_name_no_view():
    """The native report's sections and `categories --by` are the SQL library's @output report-native and
    categories-by: the Python that shows them names none of their views."""
    import re

    from tracesql.store.sqlmodules import outputs

    shown = {o.object for g in ("report-native", "categories-by") for o in outputs(g)}
    assert len(shown) >= 18
    shown -= {o.name for o in outputs("report-tracelens")}  # a peer's file name (short_kernel_histogram), not a view
    for f in (PACKAGE / "api" / "report.py", PACKAGE / "api" / "categories.py"):
        named = set(re.findall(r"\w+", _code_strings(f))) & shown
        assert not named, (f.name, sorted(named))


def test_reports_name_no_output_format():
    """Every output format is an entry of tracesql.render.formats.FORMATS: the modules that build reports (the
    native report and the peer styles, the archive report) compare nothing with a format's name, so neither has a
    branch per format."""
    from tracesql.render.formats import FORMATS

    assert {"table", "csv", "json", "parquet", "html", "xlsx"} <= set(FORMATS)
    for f in (PACKAGE / "api" / "report.py", PACKAGE / "api" / "archive_report.py"):
        compared = {c.value for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, ast.Compare)
                    for c in ast.walk(n) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        assert "native" in compared or f.name != "report.py"  # the check sees the comparisons there are
        assert not compared & set(FORMATS), (f.name, sorted(compared & set(FORMATS)))

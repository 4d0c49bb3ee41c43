"""The README's route without tracesql: in a fresh virtual environment, the commands of its `pip install duckdb-cli`
block, exactly as written, read a dataset. Needs pip to reach a package index (CI has one); without it the test
fails and says so, it does not skip."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tracesql

README = Path(__file__).resolve().parent.parent / "README.md"


def _route_block() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), re.S)
    (block,) = [b for b in blocks if "pip install duckdb-cli" in b]
    return [ln for ln in block.splitlines() if ln.strip()]


@pytest.mark.slow
def test_plain_duckdb_route_of_the_readme(shared_traces, tmp_path):
    lines = _route_block()
    assert lines[0] == "pip install duckdb-cli" and [ln.split()[1] for ln in lines[1:]] == ["-init",
                                                                                           "qwen.tsql/catalog.duckdb"]
    (r,) = tracesql.ingest([str(shared_traces / "nvidia/h100_qwen_infer.json.gz")], out=tmp_path / "qwen.tsql")
    assert r.status == "ingested"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VIRTUAL_ENV=str(venv))
    env.pop("PYTHONPATH", None)
    pip = subprocess.run(lines[0], shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, f"could not install the duckdb CLI with pip (no package index?): {pip.stderr[-2000:]}"
    assert (venv / "bin" / "duckdb").exists(), "pip install duckdb-cli put no duckdb command in the environment"
    version = subprocess.run([str(venv / "bin" / "duckdb"), "--version"], capture_output=True, text=True).stdout
    sql = "SELECT count(*) AS n FROM kernels;\nSELECT round(busy_pct, 3) AS busy FROM gpu_timeline WHERE pooled;\n"
    for line in lines[1:]:
        proc = subprocess.run(line, shell=True, cwd=tmp_path, env=env, input=sql, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0 and "Error" not in proc.stderr, (line, version, proc.stderr[-2000:])
        assert "1707" in proc.stdout and "91.933" in proc.stdout, (line, version, proc.stdout[-2000:])

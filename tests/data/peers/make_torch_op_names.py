"""Writes sql/peers/tracelens/torch_op_names.csv: the op names TraceLens segments an Inductor kernel name against
(TritonCompiledPerfModel in TraceLens/PerfModel/triton_compiled_perf_model.py reads the fused ATen ops out of
`triton_poi_fused_<op>_<op>_<n>` with a set of torch op names; its scripts/generate_known_aten_ops.py defines the
set: the attribute names of every torch.ops namespace loaded by `import torch`, and torch.distributed's public names
that contain '_'). Run with the Python of a torch installation:

    python tests/data/peers/make_torch_op_names.py
"""
from __future__ import annotations

from pathlib import Path

import torch  # type: ignore[import-not-found]

names: set[str] = set()
for ns in dir(torch.ops):
    if ns.startswith("__"):
        continue
    try:
        names.update(n for n in dir(getattr(torch.ops, ns)) if not n.startswith("__"))
    except Exception:  # noqa: BLE001 - a namespace that fails to load has no names
        continue
names.update(n for n in dir(torch.distributed) if not n.startswith("_") and "_" in n)

out = Path(__file__).resolve().parents[3] / "sql" / "peers" / "tracelens" / "torch_op_names.csv"
header = [f"# torch op names (torch {torch.__version__}), written by tests/data/peers/make_torch_op_names.py", "name"]
out.write_text("\n".join(header + sorted(names)) + "\n")
print(f"{len(names)} names -> {out}")

#!/usr/bin/env bash
# Create (idempotently) the isolated virtual environment used to run
# Holistic Trace Analysis (HTA) for the comparison benchmark.
#
#   bash benchmarks/hta_env.sh            # create/refresh benchmarks/.hta-venv
#   PYTHON=python3.11 bash benchmarks/hta_env.sh
#
# HTA is kept out of the project's own environment on purpose: it pins its
# own pandas/numpy stack, and the benchmark must not perturb tracesql's deps.
# pandas<3 and numpy<2 match the versions HTA 0.5.0 was released against
# (the reference outputs in ../shared/reference/hta were made with pandas 2.2.3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.hta-venv"
python="${PYTHON:-python3}"
reqs=("holistictraceanalysis==0.5.0" "pandas<3" "numpy<2")

if [ ! -x "$venv/bin/python" ]; then
    echo "creating $venv with $($python -V 2>&1)"
    "$python" -m venv "$venv"
fi

# A marker records what was installed, so re-running is a cheap no-op.
marker="$venv/.installed"
want="$(printf '%s\n' "${reqs[@]}")"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] \
        && "$venv/bin/python" -c "import hta" 2>/dev/null; then
    echo "HTA environment already present: $venv"
else
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "${reqs[@]}"
    printf '%s\n' "${reqs[@]}" > "$marker"
fi

"$venv/bin/python" - <<'PY'
import importlib.metadata as md
import hta  # noqa: F401  (fails loudly if the install is broken)
for pkg in ("holistictraceanalysis", "pandas", "numpy"):
    print(f"{pkg}=={md.version(pkg)}")
PY

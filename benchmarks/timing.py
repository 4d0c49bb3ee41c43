"""CPU seconds of a function, the best of several runs (what the in-process benchmarks report)."""
from __future__ import annotations

import time
from collections.abc import Callable


def best_cpu(fn: Callable[[], object], repeat: int) -> float:
    """The lowest process CPU time (user + system, s) of ``repeat`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best

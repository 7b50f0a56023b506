"""Timing shared by the codec benchmarks (bench_codecs, bench_psadpcm, bench_ut): the best of a
few wall-clock runs, so one noisy run on a shared machine does not count."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Smallest wall time of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best

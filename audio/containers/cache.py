"""A decoded-take cache bounded in megabytes, with background prefetch and pinning.

Playback asks :meth:`TakeCache.get_or_decode` (or :meth:`TakeCache.get` for a
non-blocking look-up) and schedules upcoming takes with :meth:`TakeCache.prefetch`,
which decodes on a worker thread so the audio thread never decodes. A pinned take (one
that is playing) is never evicted; the budget may be exceeded while pins hold it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CacheStats", "TakeCache", "value_nbytes"]


def value_nbytes(value: Any) -> int:
    """Bytes of the numpy arrays in ``value`` (an array, or a tuple/list holding some).

    Parameters
    ----------
    value:
        An array, or a tuple/list holding some.
    """
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, (tuple, list)):
        return sum(value_nbytes(v) for v in value)
    return 0


@dataclass(frozen=True)
class CacheStats:
    """Counters: hits, misses, evictions, current bytes held, entries, pinned keys."""

    hits: int
    misses: int
    evictions: int
    bytes: int
    entries: int
    pinned: int


class TakeCache:
    """LRU of decoded takes bounded by ``budget_mb`` megabytes (10**6 bytes) of numpy data.

    Thread-safe. ``workers`` decode threads serve :meth:`prefetch` (1 by default).

    Parameters
    ----------
    budget_mb:
        Budget, megabytes (10**6 bytes) of numpy data.
    workers:
        Decode threads serving :meth:`prefetch`.
    """

    def __init__(self, budget_mb: float, *, workers: int = 1) -> None:
        if budget_mb <= 0:
            raise ValueError("budget_mb must be positive")
        self.budget = int(budget_mb * 1_000_000)
        self._lock = threading.RLock()
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._pins: dict[Hashable, int] = {}
        self._inflight: dict[Hashable, Future] = {}
        self._bytes = self._hits = self._misses = self._evictions = 0
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="take-decode")

    def get(self, key: Hashable) -> Any | None:
        """The cached value (counts a hit, refreshes recency) or ``None`` (counts a miss); never decodes.

        Parameters
        ----------
        key:
            The take's key.
        """
        with self._lock:
            if key in self._data:
                self._hits += 1
                self._data.move_to_end(key)
                return self._data[key][0]
            self._misses += 1
            return None

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def get_or_decode(self, key: Hashable, fn: Callable[[], Any]) -> Any:
        """The cached value, else wait for an in-flight prefetch of ``key``, else decode now with ``fn``.

        Parameters
        ----------
        key:
            The take's key.
        fn:
            Decodes the take (called at most once per miss).
        """
        with self._lock:
            value = self.get(key)
            if value is not None:
                return value
            fut = self._inflight.get(key)
        if fut is not None:
            return fut.result()
        value = fn()
        self._store(key, value)
        return value

    def prefetch(self, keys_and_fns: Iterable[tuple[Hashable, Callable[[], Any]]]) -> list[Future]:
        """Decode the missing keys on the worker thread; returns their futures (errors surface there).

        Parameters
        ----------
        keys_and_fns:
            ``(key, decode function)`` pairs.
        """
        futures = []
        with self._lock:
            for key, fn in keys_and_fns:
                if key in self._data:
                    continue
                fut = self._inflight.get(key)
                if fut is None:
                    fut = self._pool.submit(self._run, key, fn)
                    self._inflight[key] = fut
                futures.append(fut)
        return futures

    def warm(self, fn: Callable[[], object]) -> Future:
        """Run ``fn`` once on the worker thread and keep nothing (load a decoder library
        before the first take needs it); its error, if any, stays in the returned future.

        Parameters
        ----------
        fn : callable
            Called with no arguments on the cache's worker thread; its result is discarded.
        """
        return self._pool.submit(fn)

    def _run(self, key: Hashable, fn: Callable[[], Any]) -> Any:
        try:
            value = fn()
            self._store(key, value)
            return value
        finally:
            with self._lock:
                self._inflight.pop(key, None)

    def _store(self, key: Hashable, value: Any) -> None:
        size = value_nbytes(value)
        with self._lock:
            if key in self._data:
                self._bytes -= self._data.pop(key)[1]
            self._data[key] = (value, size)
            self._bytes += size
            self._evict()

    def _evict(self) -> None:
        for key in list(self._data):
            if self._bytes <= self.budget:
                break
            if self._pins.get(key):
                continue
            self._bytes -= self._data.pop(key)[1]
            self._evictions += 1

    def pin(self, key: Hashable) -> None:
        """Keep ``key`` from eviction until a matching :meth:`unpin` (pins nest).

        Parameters
        ----------
        key:
            The take's key.
        """
        with self._lock:
            self._pins[key] = self._pins.get(key, 0) + 1

    def unpin(self, key: Hashable) -> None:
        """Release one pin of ``key``; evicts if the cache is over budget.

        Parameters
        ----------
        key:
            The take's key.
        """
        with self._lock:
            left = self._pins.get(key, 0) - 1
            if left > 0:
                self._pins[key] = left
            else:
                self._pins.pop(key, None)
            self._evict()

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                self._hits, self._misses, self._evictions, self._bytes, len(self._data), len(self._pins)
            )

    def close(self) -> None:
        """Stop the worker thread (waits for running decodes)."""
        self._pool.shutdown(wait=True)

    def __enter__(self) -> TakeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

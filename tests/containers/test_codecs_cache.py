"""TakeCache: megabyte budget, LRU order, pins, background prefetch, stats."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from audio.containers.cache import TakeCache


def take(mb: float, fill: float = 0.0):
    return lambda: (np.full(int(mb * 1_000_000) // 4, fill, np.float32), 48000)


def test_budget_evicts_least_recently_used_and_counts_bytes():
    with TakeCache(budget_mb=2.5) as cache:
        for k in "abc":
            cache.get_or_decode(k, take(1.0))
        s = cache.stats()
        assert (s.entries, s.evictions, s.bytes) == (2, 1, 2_000_000)
        assert "a" not in cache and "b" in cache and "c" in cache
        cache.get("b")  # b becomes most recent
        cache.get_or_decode("d", take(1.0))
        assert "c" not in cache and "b" in cache


def test_hits_and_misses_and_no_second_decode():
    calls = []

    def fn():
        calls.append(1)
        return np.zeros(10, np.int16)

    with TakeCache(1) as cache:
        cache.get_or_decode("k", fn)
        cache.get_or_decode("k", fn)
        assert cache.get("missing") is None
        s = cache.stats()
        assert (s.hits, s.misses, len(calls)) == (1, 2, 1)


def test_pinned_take_is_not_evicted_until_unpinned():
    with TakeCache(budget_mb=1.5) as cache:
        cache.get_or_decode("playing", take(1.0))
        cache.pin("playing")
        cache.get_or_decode("next", take(1.0))
        assert "playing" in cache and "next" not in cache
        cache.unpin("playing")
        assert "playing" in cache  # within budget again
        cache.get_or_decode("other", take(1.0))
        assert "playing" not in cache and "other" in cache and cache.stats().bytes <= 1_500_000


def test_prefetch_decodes_on_a_worker_thread():
    names = []

    def fn():
        names.append(threading.current_thread().name)
        return np.ones(100, np.float32)

    with TakeCache(1) as cache:
        futures = cache.prefetch([("x", fn), ("y", fn)])
        for f in futures:
            f.result(timeout=10)
        assert "x" in cache and "y" in cache
        assert all(n.startswith("take-decode") for n in names)
        assert threading.current_thread().name not in names
        cache.get_or_decode("x", fn)
        assert len(names) == 2


def test_prefetch_errors_surface_in_the_future_and_nothing_is_cached():
    def bad():
        raise ValueError("corrupt")

    with TakeCache(1) as cache:
        (fut,) = cache.prefetch([("bad", bad)])
        with pytest.raises(ValueError):
            fut.result(timeout=10)
        assert "bad" not in cache


def test_warm_runs_once_on_the_worker_thread_and_keeps_nothing():
    ran = []
    with TakeCache(budget_mb=1) as cache:
        cache.warm(lambda: ran.append(threading.current_thread().name) or np.zeros(10)).result(timeout=10)
        assert cache.stats().entries == 0 and cache.stats().bytes == 0
    assert len(ran) == 1 and ran[0].startswith("take-decode")

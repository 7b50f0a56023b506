"""A per-process memo of read-only loads, for batch workers that run thousands of seeds and
for the offline renders of a process.

A ``barkbus batch`` worker runs the same few scenarios over and over with new seeds. What
does not depend on the seed (an install's opened archives and index, a tuning file, a take's
decoded samples or, decisions-only, its length) is loaded once per worker and shared by the
runs that follow. Loaders call :func:`memo` with a key naming what they load and the file
signature it came from (:func:`file_key`: path, size and modification time, so a file edited
between runs is read again); :func:`memo` builds the value the first time and returns the
same object after that.

It is off unless a caller turns it on around its runs (:func:`enabled`, as the batch runner
and :func:`audio.offline.render.render_scenario` do): live runs and ports, which keep one
engine for hours and may decode on a loader thread, always build their own. A memoised
value must therefore be read-only for the runs that share it (per-run state such as random
generators is built around it, never inside). Values are per thread (a Dask worker with
several threads runs one task per thread, and an install's reader is not shared between
threads).
The memo holds at most :data:`MAX_ENTRIES` values and ``budget`` bytes of arrays (the least
recently used go first).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["MAX_ENTRIES", "active", "clear", "enabled", "file_key", "folder_key", "load", "memo", "stats"]

T = TypeVar("T")

MAX_ENTRIES = 100_000
"""Most values the memo holds (the least recently used are dropped beyond it)."""
DEFAULT_BUDGET = 512 << 20
"""Bytes of array data (``nbytes``) the memo holds by default (512 MiB per worker)."""

_store: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
_lock = threading.Lock()
_local = threading.local()
_budget = DEFAULT_BUDGET
_bytes = 0
_hits = 0
_misses = 0


def _depth() -> int:
    return getattr(_local, "depth", 0)  # type: ignore[no-any-return]


def active() -> bool:
    """Whether :func:`memo` shares values now (inside :func:`enabled`, in this thread)."""
    return _depth() > 0


@contextmanager
def enabled(budget: int = DEFAULT_BUDGET) -> Iterator[None]:
    """Share memoised values inside this block (nested blocks share the same store; the
    outer block's budget holds again when an inner one ends).

    Parameters
    ----------
    budget:
        Bytes of array data kept (``nbytes`` of the values' arrays); the least recently
        used values go first beyond it.
    """
    global _budget
    outer = _budget
    _local.depth = _depth() + 1
    _budget = budget
    try:
        yield
    finally:
        _local.depth = _depth() - 1
        _budget = outer


def file_key(path: str | os.PathLike[str]) -> tuple[str, int, int]:
    """``(absolute path, size in bytes, modification time in ns)`` of a file or folder (the
    size and time of what the path names now; its absolute path found once per process)."""
    name = os.path.abspath(path)
    st = os.stat(name)
    return (_real(name), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=4096)
def _real(name: str) -> str:
    """``name`` with its symbolic links followed."""
    return str(Path(name).resolve())


def folder_key(path: str | os.PathLike[str]) -> tuple[tuple[str, int, int], ...]:
    """:func:`file_key` of a folder and of every regular file directly inside it (an install's
    archives: one edited, added or removed between runs changes the key)."""
    p = Path(path)
    return (file_key(p), *(file_key(f) for f in sorted(p.iterdir()) if f.is_file()))


def _nbytes(value: Any) -> int:
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    n = getattr(value, "nbytes", 0)
    return n if isinstance(n, int) else 0


def memo(key: Hashable, build: Callable[[], T]) -> T:
    """The value memoised under ``key``, built by ``build()`` the first time; outside
    :func:`enabled`, simply ``build()``.

    Parameters
    ----------
    key:
        What is loaded and from where: a tuple starting with a name for the kind of value
        (``("skate.install", file_key(root))``).
    build:
        Loads the value (its exceptions pass through; nothing is stored then).
    """
    global _bytes, _hits, _misses
    if _depth() == 0:
        return build()
    key = (threading.get_ident(), key)
    with _lock:
        got = _store.get(key)
        if got is not None:
            _store.move_to_end(key)
            _hits += 1
            return got[0]  # type: ignore[no-any-return]
        _misses += 1
    value = build()  # outside the lock: only this thread builds under its own keys
    size = _nbytes(value)
    with _lock:
        old = _store.pop(key, None)
        _bytes += size - (old[1] if old is not None else 0)
        _store[key] = (value, size)
        while len(_store) > 1 and (len(_store) > MAX_ENTRIES or _bytes > _budget):
            _, (_, dropped) = _store.popitem(last=False)
            _bytes -= dropped
    return value


def load(kind: str, path: str | os.PathLike[str], build: Callable[[], T], *extra: Hashable) -> T:
    """``build()`` memoised under ``(kind, signature of path, *extra)``: a file's
    :func:`file_key`, a folder's :func:`folder_key`. A path that cannot be examined is simply
    built (its loader then reports the problem, as outside the memo)."""
    if _depth() == 0:
        return build()
    try:
        sig = folder_key(path) if Path(path).is_dir() else (file_key(path),)
    except OSError:
        return build()
    return memo((kind, *sig, *extra), build)


def clear() -> None:
    """Forget every memoised value."""
    global _bytes, _hits, _misses
    with _lock:
        _store.clear()
        _bytes = _hits = _misses = 0


def stats() -> dict[str, int]:
    """``{"entries", "bytes", "hits", "misses"}`` of the memo so far."""
    return {"entries": len(_store), "bytes": _bytes, "hits": _hits, "misses": _misses}

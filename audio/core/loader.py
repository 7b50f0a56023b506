"""The asset loader: files a request names are opened and decoded off the render thread.

Like the I/O managers of Wwise and FMOD, a small pool of worker threads does every open,
read and decode a ``play`` (or any other request naming a file) needs, so a slow disk, a
network share or a file that blocks on open (a FIFO, a device) never stops the engine
clock. The render thread only asks (:meth:`AssetLoader.request`) and later looks
(:meth:`Load.ready`); an offline render waits for the load at the event's sample
(:meth:`Load.wait`), so its output does not depend on how fast the disk is.

Only regular files are opened: :func:`check_name` refuses an empty name, a NUL byte or an
over-long name before anything touches the file system, and :func:`open_regular` checks
with ``os.stat`` first (a FIFO, device or socket is refused without opening it), then opens
with ``O_NONBLOCK`` (a FIFO swapped in between does not block the open) and checks the
opened file again with ``fstat``. The workers are daemon threads: a worker stuck in a read
never keeps the process from ending (SIGTERM and ``--seconds`` end a live run whatever a
load is doing); the request fails as a fault after its timeout.
"""

from __future__ import annotations

import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

from audio.core.errors import BarkbusError

__all__ = [
    "LOAD_QUEUE",
    "LOAD_TIMEOUT",
    "LOAD_WORKERS",
    "MAX_NAME",
    "AssetLoader",
    "BadName",
    "Load",
    "LoadTimeout",
    "check_name",
    "open_regular",
    "shared_loader",
]

T = TypeVar("T")
log = logging.getLogger("barkbus.loader")

LOAD_WORKERS = 2
"""Worker threads of the shared loader (Wwise's and FMOD's defaults are one or two)."""
LOAD_TIMEOUT = 5.0
"""Seconds a request may take before it fails as a fault (offline and live alike)."""
LOAD_QUEUE = 1024
"""Requests waiting for a worker at most; more are refused (a fault each)."""
MAX_NAME = 4096
"""Longest file name a client may send (characters)."""


class BadName(BarkbusError, ValueError):
    """A name a client sent cannot name a file we open: ``name`` and ``reason``."""

    def __init__(self, name: object, reason: str) -> None:
        self.name, self.reason = name, reason
        super().__init__(f"bad file name {str(name)[:120]!r}: {reason}")


class LoadTimeout(BarkbusError, TimeoutError):
    """A load did not finish within its timeout (seconds)."""


def check_name(name: object, *, limit: int = MAX_NAME) -> str:
    """``name`` if it is text that can name a file: 1..``limit`` characters, no NUL byte, valid
    UTF-8 (no lone surrogates); else :class:`BadName`. Touches no file."""
    if not isinstance(name, str):
        raise BadName(name, f"expected text, got {type(name).__name__}")
    if not name or len(name) > limit:
        raise BadName(name, f"expected 1..{limit} characters, got {len(name)}")
    if "\x00" in name:
        raise BadName(name, "contains a NUL byte")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise BadName(name, "not valid Unicode (a lone surrogate)") from None
    return name


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of ``path`` if it is a regular file, else :class:`BadName`.

    ``os.stat`` first (symbolic links followed; a loop is refused), then an ``O_NONBLOCK`` open
    (so a FIFO swapped in after the check does not block) and an ``fstat`` of what was opened.
    The caller closes the descriptor."""
    text = check_name(os.fspath(path))
    try:
        st = os.stat(text)
    except FileNotFoundError:
        raise
    except OSError as exc:  # a symbolic-link loop, a name too long, no permission
        raise BadName(text, exc.strerror or str(exc)) from None
    if not stat.S_ISREG(st.st_mode):
        raise BadName(text, f"not a regular file ({_kind(st.st_mode)})")
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(text, flags)
    except OSError as exc:
        raise BadName(text, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadName(text, f"not a regular file ({_kind(st.st_mode)})")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | os.PathLike[str], *, limit: int = 1 << 30) -> bytes:
    """The bytes of regular file ``path`` (at most ``limit`` bytes), via :func:`open_regular`."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise BadName(os.fspath(path), f"{size} bytes; at most {limit} are read")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit + 1)[:limit]
    finally:
        os.close(fd)


def check_regular(path: str | os.PathLike[str]) -> Path:
    """``path`` if it is a regular file we can open (see :func:`open_regular`), else BadName."""
    os.close(open_regular(path))
    return Path(os.fspath(path))


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"


class Load(Generic[T]):
    """One request: done when the worker has its value or its error. Thread-safe."""

    __slots__ = ("key", "asked", "_done", "_value", "_error")

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.asked = time.monotonic()
        """Wall clock (``time.monotonic``) when it was asked for."""
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def ready(self) -> bool:
        """True once the value (or the error) is there; never blocks."""
        return self._done.is_set()

    def expired(self, timeout: float) -> bool:
        """True if not ready ``timeout`` seconds after it was asked for."""
        return not self.ready() and time.monotonic() - self.asked > timeout

    def wait(self, timeout: float) -> T:
        """The value (waiting up to ``timeout`` seconds); the load's error, or LoadTimeout."""
        if not self._done.wait(max(0.0, timeout - (time.monotonic() - self.asked))):
            raise LoadTimeout(f"loading {str(self.key)[:200]} took longer than {timeout:g} s")
        return self.result()

    def result(self) -> T:
        """The value of a ready load (raises its error)."""
        if self._error is not None:
            raise self._error
        assert self._done.is_set()
        return self._value  # type: ignore[return-value]

    def _finish(self, value: T | None, error: BaseException | None) -> None:
        self._value, self._error = value, error
        self._done.set()


class AssetLoader:
    """A pool of ``workers`` daemon threads running load functions, at most ``queue_size``
    waiting; a request for a key already in flight shares its :class:`Load`.

    Parameters
    ----------
    workers:
        Threads (default :data:`LOAD_WORKERS`).
    queue_size:
        Requests waiting for a worker at most (default :data:`LOAD_QUEUE`).
    """

    def __init__(self, workers: int = LOAD_WORKERS, queue_size: int = LOAD_QUEUE) -> None:
        if workers < 1 or queue_size < 1:
            raise ValueError("an asset loader needs at least one worker and one queue place")
        self.workers = workers
        self._queue: queue.Queue[tuple[Load[Any], Callable[[], Any]]] = queue.Queue(queue_size)
        self._inflight: dict[Hashable, Load[Any]] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.refused = 0
        """Requests refused because the queue was full."""
        self.loaded = 0
        self.failed = 0

    def request(self, key: Hashable, fn: Callable[[], T]) -> Load[T]:
        """Run ``fn`` on a worker (once per key in flight); a :class:`Load` to look at later.

        A full queue gives a load that has already failed (``queue full``), logged once."""
        with self._lock:
            got = self._inflight.get(key)
            if got is not None:
                return got
            load: Load[T] = Load(key)
            try:
                self._queue.put_nowait((load, fn))
            except queue.Full:
                self.refused += 1
                if self.refused == 1:
                    log.warning("asset loader: %d requests waiting; refusing more", self._queue.maxsize)
                load._finish(None, LoadTimeout(f"loader queue full ({self._queue.maxsize} waiting)"))
                return load
            self._inflight[key] = load
            if len(self._threads) < self.workers:
                t = threading.Thread(
                    target=self._work, name=f"barkbus-loader-{len(self._threads)}", daemon=True
                )
                self._threads.append(t)
                t.start()
        return load

    def _work(self) -> None:
        while True:
            load, fn = self._queue.get()
            try:
                value, error = fn(), None
            except BaseException as exc:  # the error belongs to the request, never to the worker
                value, error = None, exc
            with self._lock:
                self._inflight.pop(load.key, None)
                if error is None:
                    self.loaded += 1
                else:
                    self.failed += 1
            load._finish(value, error)

    def pending(self) -> int:
        """Requests not finished yet."""
        with self._lock:
            return len(self._inflight)


_SHARED: AssetLoader | None = None
_SHARED_LOCK = threading.Lock()


def shared_loader() -> AssetLoader:
    """The process's loader (created on first use; its threads start with the first request)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = AssetLoader()
        return _SHARED

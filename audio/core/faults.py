"""One fault path: what fails costs one voice (or one system), is reported, counted, and skipped.

A *fault* is a failure the engine survives: a take or file that does not decode, an
unsupported codec, a missing file or one refused by the path policy (:mod:`audio.core.paths`)
costs the voice that needed it; an exception in a game system's tick while the engine
isolates systems (live, ports) disables that system. Every fault is published once as a
:class:`~audio.core.bus.Decision` with outcome :data:`FAULT` and the detail keys ``kind``
(one of :data:`KINDS`), ``file`` (or None), ``offset`` (bytes into that file, or None) and
``reason`` (one line), plus what the reporter knows (``ped``, ``clip``, ``emitter``...).

:func:`report_fault` is the only way to raise one. :class:`FaultLog` (every
:class:`~audio.core.engine.Engine` has one, ``engine.faults``) counts them by kind and system,
keeps the last few, and calls ``on_fault`` callbacks. A thread that is not the engine's (the
OSC receiver refusing a file) uses :meth:`FaultLog.report_later`: the decision is published
at the engine's next control point.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from audio.core.bus import Decision, EventBus
from audio.core.errors import BarkbusError, FormatError, UnsupportedError
from audio.core.loader import BadName
from audio.core.outcomes import CoreOutcome
from audio.core.paths import PathRefused

__all__ = ["FAULT", "KINDS", "Fault", "FaultLog", "SystemFault", "describe", "report_fault"]

FAULT = CoreOutcome.Fault
"""Decision outcome of every fault."""
KINDS = ("decode", "unsupported", "missing", "refused", "io", "event", "system")
"""decode: bad data; unsupported: a codec/feature barkbus lacks; missing: no such file;
refused: outside the allowed roots; io: another OS error; event: an event a system could not
apply (its voice does not start); system: a game system disabled after an exception."""
log = logging.getLogger("barkbus.faults")


class SystemFault(BarkbusError, RuntimeError):
    """A game system raised while the engine does not isolate systems (offline renders)."""

    def __init__(self, system: str, where: str, t: float, exc: BaseException) -> None:
        self.system, self.where, self.t, self.cause = system, where, t, exc
        super().__init__(
            f"game system {system!r} failed in {where} at {t:.3f} s: {type(exc).__name__}: {exc}"
        )


@dataclass(frozen=True)
class Fault:
    """One reported fault (what :meth:`FaultLog.last` keeps): sample ``at``, ``t`` seconds."""

    at: int
    t: float
    system: str
    kind: str
    file: str | None
    offset: int | None
    reason: str

    @classmethod
    def from_decision(cls, d: Decision) -> Fault:
        off = d.detail.get("offset")
        file = d.detail.get("file")
        return cls(
            d.at,
            d.t,
            d.system,
            str(d.detail.get("kind", "decode")),
            None if file is None else str(file),
            off if isinstance(off, int) else None,
            str(d.detail.get("reason", "")),
        )


def describe(exc: BaseException, file: str | None = None) -> tuple[str, str | None, int | None, str]:
    """``(kind, file, offset, reason)`` of an exception that cost a voice."""
    if isinstance(exc, UnsupportedError):
        return "unsupported", file or exc.path, exc.offset, str(exc)
    if isinstance(exc, FormatError):
        return "decode", file or exc.path, exc.offset, str(exc)
    if isinstance(exc, BadName):
        return "refused", file or str(exc.name)[:200], None, str(exc)
    if isinstance(exc, FileNotFoundError):
        return "missing", file or exc.filename, None, f"no such file: {file or exc.filename}"
    if isinstance(exc, OSError):
        return "io", file or exc.filename, None, f"{type(exc).__name__}: {exc}"
    if isinstance(exc, PathRefused):
        return "refused", file or exc.path, None, str(exc)
    if isinstance(exc, BarkbusError):
        return "decode", file, None, str(exc)
    return "event", file, None, f"{type(exc).__name__}: {exc}"


def report_fault(
    bus: EventBus,
    system: str,
    kind: str,
    reason: str,
    *,
    file: str | None = None,
    offset: int | None = None,
    **detail: Any,
) -> Decision:
    """Publish one fault decision now (on the engine's thread)."""
    if kind not in KINDS:
        raise ValueError(f"fault kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return bus.decide(system, FAULT, kind=kind, file=file, offset=offset, reason=reason[:500], **detail)


class FaultLog:
    """Counts the fault decisions of ``bus``, keeps the last ``keep``, calls ``on_fault`` callbacks.

    Callbacks run on the engine's thread; one that raises is logged and counted in
    ``callback_errors``, never passed to the engine. The first 20 faults and every 1000th are
    logged as warnings unless ``warn`` is False (a caller that records every fault itself, as a
    batch run's row does).
    """

    warn: bool = True

    def __init__(self, bus: EventBus, keep: int = 64) -> None:
        self.bus = bus
        self.count = 0
        self.by_kind: collections.Counter[str] = collections.Counter()
        self.by_system: collections.Counter[str] = collections.Counter()
        self.last: collections.deque[Fault] = collections.deque(maxlen=keep)
        self.callback_errors = 0
        self._callbacks: list[Callable[[Fault], None]] = []
        self._pending: collections.deque[tuple[str, str, str, dict[str, Any]]] = collections.deque(
            maxlen=1024
        )
        self._lock = threading.Lock()
        bus.on_decision(self._seen)

    def on_fault(self, callback: Callable[[Fault], None]) -> None:
        """Call ``callback(fault)`` for every fault from now on."""
        self._callbacks.append(callback)

    def _seen(self, d: Decision) -> None:
        if d.outcome != FAULT:
            return
        f = Fault.from_decision(d)
        with self._lock:
            self.count += 1
            self.by_kind[f.kind] += 1
            self.by_system[f.system] += 1
            self.last.append(f)
        if self.warn and (self.count <= 20 or self.count % 1000 == 0):
            log.warning("fault %d (%s, %s): %s", self.count, f.system, f.kind, f.reason)
        for cb in self._callbacks:
            try:
                cb(f)
            except Exception:  # a host's callback must not stop the engine
                self.callback_errors += 1
                if self.callback_errors <= 5:
                    log.exception("on_fault callback failed (ignored)")

    def report_later(self, system: str, kind: str, reason: str, **detail: Any) -> None:
        """From any thread: publish this fault at the engine's next control point."""
        with self._lock:
            self._pending.append((system, kind, reason, detail))

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def publish_pending(self) -> None:
        """Publish the faults queued by :meth:`report_later` (engine thread)."""
        while True:
            with self._lock:
                if not self._pending:
                    return
                system, kind, reason, detail = self._pending.popleft()
            report_fault(self.bus, system, kind, reason, **detail)

    def summary(self) -> str:
        """``"3 faults (decode 2, refused 1)"`` or ``"no faults"``."""
        if not self.count:
            return "no faults"
        kinds = ", ".join(f"{k} {n}" for k, n in self.by_kind.most_common())
        return f"{self.count} fault{'s' if self.count != 1 else ''} ({kinds})"

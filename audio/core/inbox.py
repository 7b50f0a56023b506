"""The engine's thread-safe event inbox: producers on any thread, the render thread drains.

A port (:mod:`audio.port`), the OSC server, the TUI and a live player (:mod:`audio.live`) all
post through one :class:`Inbox`; the thread that renders calls :meth:`Inbox.post_all` before
each block, so events reach the bus only on that thread.
"""

from __future__ import annotations

import dataclasses
import queue
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from audio.core.bus import Event

if TYPE_CHECKING:
    from audio.core.engine import Engine

__all__ = ["Inbox", "InboxItem"]


@dataclass
class InboxItem:
    """One queued event: when it arrived (``perf_counter_ns``) and when it takes effect."""

    event: Event
    received_ns: int
    when: str  # "now" (block boundary) or "event" (the event's own t)


class Inbox:
    """Bounded thread-safe queue of events for the render thread.

    ``put`` never blocks: when ``maxsize`` events are waiting the new one is dropped and
    counted (a flood cannot grow memory).
    """

    def __init__(self, maxsize: int = 4096) -> None:
        self._q: queue.Queue[InboxItem] = queue.Queue(maxsize=maxsize)
        self.maxsize = maxsize
        self.accepted = 0
        self.dropped = 0

    def put(self, event: Event, *, when: str = "now", received_ns: int | None = None) -> bool:
        """Queue ``event``; returns ``False`` if it was dropped (the inbox is full).

        Parameters
        ----------
        event:
            The event (already validated by the poster).
        when:
            ``"now"`` (takes effect at the next block boundary) or ``"event"`` (at its ``t``).
        received_ns:
            Arrival time (``time.perf_counter_ns``); now if ``None``.
        """
        if when not in ("now", "event"):
            raise ValueError(f"when must be 'now' or 'event', got {when!r}")
        item = InboxItem(event, time.perf_counter_ns() if received_ns is None else received_ns, when)
        try:
            self._q.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            return False
        self.accepted += 1
        return True

    def drain(self) -> list[InboxItem]:
        """Everything queued now, oldest first."""
        out = []
        while True:
            try:
                out.append(self._q.get_nowait())
            except queue.Empty:
                return out

    def post_all(self, engine: Engine) -> list[tuple[int, int]]:
        """Drain and post to ``engine.bus``; returns ``[(sample, received_ns)]``.

        "now" events are re-timed to the current block boundary (``t`` = ``now / rate``);
        "event" events keep their ``t`` (a past time is clamped to now by the bus).
        """
        posted = []
        now = int(engine.now)
        rate = engine.bus.sample_rate
        for item in self.drain():
            ev = item.event
            if item.when == "now":
                ev = dataclasses.replace(ev, t=now / rate)
                at = engine.bus.post(ev, at=now)
            else:
                at = engine.bus.post(ev)
            posted.append((at, item.received_ns))
        return posted

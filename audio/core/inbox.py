"""The engine's thread-safe event inbox: producers on any thread, the render thread drains.

A port (:mod:`audio.port`), the OSC server, the TUI and a live player (:mod:`audio.live`) all
post through one :class:`Inbox`; the thread that renders calls :meth:`Inbox.post_all` before
each block, so events reach the bus only on that thread.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import time
from dataclasses import dataclass
from typing import Any

from audio.core.bus import Event
from audio.core.engine import Engine

log = logging.getLogger("barkbus.live")

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
        self._held: list[tuple[InboxItem, Any, int]] = []
        """Live: events waiting for the loader (item, load, sample held at), at most ``HOLD``."""

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

    def post_all(self, engine: Any) -> list[tuple[int, int]]:
        """Drain and post to ``engine.bus``; returns ``[(sample, received_ns)]``.

        "now" events are re-timed to the current block boundary (``t`` = ``now / sample_rate``);
        "event" events keep their ``t`` (a past time is clamped to now by the bus). ``engine``
        is an :class:`~audio.core.engine.Engine` or a stand-in with ``now`` and ``bus`` (which
        just drains: nothing is held for a loader).
        """
        posted = []
        now = int(engine.now)
        sample_rate = engine.bus.sample_rate
        for item in self._ready(engine, now):
            ev = item.event
            if item.when == "now":
                ev = dataclasses.replace(ev, t=now / sample_rate)
                at = engine.bus.post(ev, at=now)
            else:
                at = engine.bus.post(ev)
            posted.append((at, item.received_ns))
        return posted

    HOLD = 256
    """Events held for the loader at most; more are posted at once (their system decides)."""

    def _ready(self, engine: Any, now: int) -> list[InboxItem]:
        """The events to post now, in arrival order. Live (``engine.load_wait`` false), an event
        naming a file still loading is held (not posted, so not captured) until the file is
        ready or its load times out: the system then starts it at once, and a replay of the
        capture, which waits for the file at the same sample, plays the same."""
        if not isinstance(engine, Engine) or engine.load_wait:
            return [item for item, _, _ in self._held] + self.drain() if self._held else self.drain()
        out, held = [], []
        timeout = engine.config.load_timeout
        for item, load, since in self._held:
            if load.ready() or load.expired(timeout):
                log.info("%s posted %d samples late (its file was loading)", item.event.KIND, now - since)
                out.append(item)
            else:
                held.append((item, load, since))
        for item in self.drain():
            load = engine.prefetch(item.event) if len(held) < self.HOLD else None
            if load is None or load.ready():
                out.append(item)
            else:
                held.append((item, load, now))
        self._held = held
        return out

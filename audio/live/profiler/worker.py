"""The profiler page's server process for a live run (started by :mod:`.feed`).

``python -m audio.live.profiler.worker --feed FD --listen FD[,FD] --ring FD --max-voices N
[--nice N]``: ``--feed`` is this end of the audio process' feed socket (``SOCK_SEQPACKET``),
``--listen`` the page's listening sockets, already bound by the audio process, ``--ring`` the
shared memory ring of voice records (:mod:`.ring`). The first message on the feed is the run's
hello; then one message per snapshot (its number in the ring, bus meters, new voices' fixed
fields, decisions, ended voices, timing metrics) and replies to the page's requests.
Everything the page needs is built here: voice rows,
history, percentiles, JSON. The process ends when the feed ends (the audio process stopped it
or is gone).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import pickle
import signal
import socket
import sys
import time
from typing import Any

import numpy as np

from audio.live.profiler.feed import MAX_MESSAGE
from audio.live.profiler.history import History
from audio.live.profiler.ring import SnapshotRing
from audio.live.profiler.server import ProfilerServer
from audio.live.profiler.snapshot import Snapshot, VoiceDesc, bar_of
from audio.live.profiler.sources import _Base

__all__ = ["FedSource", "main"]

log = logging.getLogger("barkbus.profiler")
TIMING_KEEP = 1 << 18
"""Callback and render durations kept for the percentiles (~23 minutes at 48 kHz / 256)."""
KEEP_DESCS = 8192
"""Voices' fixed fields kept at most (those of finished voices go with their bar)."""


class _Durations:
    """The newest :data:`TIMING_KEEP` durations (ns) in a ring, for percentiles."""

    def __init__(self) -> None:
        self.ring = np.zeros(TIMING_KEEP, dtype=np.int64)
        self.n = 0

    def add(self, xs: np.ndarray) -> None:
        xs = xs[-TIMING_KEEP:]
        i = (self.n + np.arange(xs.shape[0])) % TIMING_KEEP
        self.ring[i] = xs
        self.n += xs.shape[0]

    def p99_us(self) -> float:
        k = min(self.n, TIMING_KEEP)
        return round(float(np.percentile(self.ring[:k], 99)) / 1e3, 1) if k else 0.0


class FedSource(_Base):
    """A running run as the audio process feeds it: what :class:`~audio.live.profiler.sources.LiveSource`
    shows, rebuilt from the feed's messages. Actions and listener moves are forwarded to the
    audio process, their replies queued for the client that asked."""

    def __init__(
        self,
        feed: socket.socket,
        hello: dict[str, Any],
        ring: SnapshotRing | None = None,
        history: History | None = None,
    ) -> None:
        super().__init__(history or History())
        self.feed = feed
        self.ring = ring
        self.ring_missed = 0
        self.info = hello
        self.latest: Snapshot | None = None
        self.descs: dict[int, VoiceDesc] = {}
        self.metrics: dict[str, Any] = {}
        self.metrics_seq = 0
        self.closed = False
        self.stats: dict[str, int] = {}
        self._callbacks = _Durations()
        self._renders = _Durations()
        self._pending: dict[int, tuple[dict[str, Any], Any]] = {}
        self._rid = 0
        self._stats_at = time.monotonic()

    def update(self) -> None:
        """Take every message the feed holds (server loop, every tick)."""
        while not self.closed:
            try:
                data = self.feed.recv(MAX_MESSAGE)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:
                self.closed = True
                break
            msg = pickle.loads(data)
            if msg[0] == "snap":
                self._snapshot(*msg[1:])
            elif msg[0] == "bye":  # the run stops: our last counts, then the end
                self._send({"type": "bye", "stats": self.stats})
                self.closed = True
            elif msg[0] == "reply":
                state, kind = self._pending.pop(msg[1], (None, None))
                if state is not None:
                    state.setdefault("replies", []).append((kind, msg[2]))
        now = time.monotonic()
        if self.stats and now - self._stats_at >= 1.0:
            self._stats_at = now
            self._send({"type": "stats", "stats": self.stats})

    def _snapshot(
        self,
        head: tuple[Any, ...],
        new: list[VoiceDesc],
        decisions: list[Any],
        ends: tuple[np.ndarray, np.ndarray] | None,
        metrics: dict[str, Any] | None,
    ) -> None:
        for d in new:
            self.descs[d.id] = d
        for dec in decisions:
            self.history.add_decision(dec)
        seq, t, rate, total, graphs, buses, panels, extra = head
        if ends is not None:
            for vid, end in zip(ends[0].tolist(), ends[1].tolist()):
                if vid in self.descs:
                    self.history.add_bar(bar_of(self.descs.pop(vid), end, rate))
        if len(self.descs) > KEEP_DESCS:
            for vid in sorted(self.descs)[: len(self.descs) - KEEP_DESCS]:
                del self.descs[vid]
        records = self.ring.read(seq) if self.ring is not None else None
        if records is not None:
            descs = [self.descs.get(i) for i in records["id"].tolist()]
            self.latest = Snapshot(seq, t, records, descs, graphs, buses, panels, total, extra, rate)
        else:  # overwritten before it was read (far behind): this one shows no voices
            self.ring_missed += 1
        if panels is not None and panels != self.panels:
            self.panels = panels
            self.panels_seq += 1
        if metrics is not None:
            self._callbacks.add(metrics["callback_ns"])
            self._renders.add(metrics["render_ns"])
            self.metrics = {
                "callback_p99_us": self._callbacks.p99_us(),
                "budget_us": round(float(metrics["budget_us"]), 1),
                "render_p99_us": self._renders.p99_us(),
                "deadline_misses": int(metrics["deadline_misses"]),
                "underruns": int(metrics["underruns"]),
                "events_dropped": int(metrics["events_dropped"]),
                "snapshot_hz": float(metrics["snapshot_hz"]),
            }
            self.metrics_seq += 1

    def _send(self, msg: dict[str, Any]) -> bool:
        try:
            self.feed.send(json.dumps(msg).encode())
            return True
        except OSError:
            return False

    def hello(self, state: dict[str, Any]) -> dict[str, Any]:
        state.update(dc=0, bc=0, seq=-1, mc=-1, pc=-1)
        keys = ("game", "games", "actions", "rate_hz")
        return {"type": "hello", "mode": self.mode, **{k: self.info[k] for k in keys}}

    def tick(self, state: dict[str, Any]) -> str | None:
        return self.live_tick(state, self.latest, self.metrics, self.metrics_seq)

    def request(self, req: dict[str, Any], state: dict[str, Any]) -> dict[str, Any] | None:
        """Actions and listener moves go to the audio process (the answer comes later)."""
        kind = req.get("type")
        if kind not in ("action", "listener"):
            return {"type": "result", "ok": False, "text": f"unknown request {str(kind)[:40]!r}"}
        self._rid += 1
        if not self._send({"type": "request", "rid": self._rid, "req": req}):
            return {"type": "result", "ok": False, "text": "the run is not answering (dropped)"}
        self._pending[self._rid] = (state, kind)
        if len(self._pending) > 1024:  # answers that never came (the run stopped): forget the oldest
            del self._pending[min(self._pending)]
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="The profiler page's server process (started by barkbus live).")
    p.add_argument("--feed", type=int, required=True, help="file descriptor of the feed socket")
    p.add_argument("--listen", required=True, help="file descriptors of the page's listening sockets")
    p.add_argument("--ring", type=int, required=True, help="file descriptor of the snapshot ring")
    p.add_argument("--max-voices", type=int, required=True, help="records per ring slot")
    p.add_argument("--nice", type=int, default=0, help="niceness to add to this process")
    args = p.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the audio process' to handle: it ends our feed
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    feed = socket.socket(fileno=args.feed)
    hello = pickle.loads(feed.recv(MAX_MESSAGE))
    feed.setblocking(False)
    listen = [socket.socket(fileno=int(f)) for f in args.listen.split(",")]
    source = FedSource(feed, hello, SnapshotRing(args.max_voices, args.ring))
    server = ProfilerServer(source, hello["host"], token=hello["token"], sockets=listen)
    source.stats = server.stats
    server.start()
    source._send({"type": "ready"})
    try:
        while not source.closed:
            time.sleep(0.2)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

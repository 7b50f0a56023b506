"""What the render thread publishes for the profiler page: bounded snapshots, never shared state.

The render thread calls :meth:`SnapshotPublisher.on_block` after every block (the
:class:`~audio.live.device.LivePlayer` ``on_block`` hook) and ``bus.on_decision`` hands it every
decision. Per block it only meters the master and the buses (a fixed number of numpy calls into
preallocated scratch, whatever the voice count); every ``every`` blocks (10 Hz by default) it
builds one :class:`Snapshot`: the playing voices as numpy records gathered from the voice banks
(:class:`~audio.live.profiler.records.VoiceRecords`: a fixed number of numpy calls per voice
graph, no Python per voice), the bus meters, the listener, every ``panel_every`` snapshots the
game systems' own panels; and publishes it by replacing one reference (atomic under the GIL: no
lock). Decisions and the voices that ended go to bounded deques (``append`` and ``popleft`` are
thread-safe); when a reader falls behind, the oldest entries are dropped, never the render
thread held up. Rows and bars are made by the reader.

The audio callback is never involved: it only copies blocks out of the ring.

Levels are dBFS (``-inf`` printed as ``None``); times are seconds of engine time.
"""

from __future__ import annotations

import collections
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from audio.core.bus import Decision
from audio.live.profiler.records import VoiceDesc, VoiceRecords, db, record_rows

__all__ = [
    "Bar",
    "PANEL_HZ",
    "SNAPSHOT_HZ",
    "Snapshot",
    "SnapshotPublisher",
    "VoiceDesc",
    "bar_of",
    "db",
]

SNAPSHOT_HZ = 10.0
"""Snapshots per second of engine time (the page updates at this rate)."""
METER_HOLD = 1 << 15
"""Samples (all channels) each meter holds before measuring them: a block is one copy, the
peak and the sum of squares are taken per snapshot (or when the buffer is full)."""
PANEL_HZ = 5.0
"""Game state panels per second (a system's ``snapshot()`` formats text: kept rarer)."""


@dataclass(frozen=True)
class Bar:
    """One finished voice: its row (system, speaker), label, stream slot and time span (s)."""

    id: int
    system: str
    speaker: str
    clip: str
    take: str
    slot: int
    graph: str
    t0: float
    t1: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "system": self.system,
            "speaker": self.speaker,
            "clip": self.clip,
            "take": self.take,
            "slot": self.slot,
            "graph": self.graph,
            "t0": round(self.t0, 4),
            "t1": round(self.t1, 4),
        }


class Snapshot:
    """The state of the run at engine time ``t`` (s), never mutated once published.

    The render thread stores numpy records (:data:`~audio.live.profiler.records.RECORD`) and the
    voices' fixed fields (``descs``, aligned with them); the rows the page shows are built on
    first use by the reader (:attr:`voices`), off the render thread.
    """

    def __init__(
        self,
        seq: int,
        t: float,
        records: np.ndarray,
        descs: Sequence[VoiceDesc | None] | np.ndarray,
        graphs: list[tuple[str, str]],
        buses: list[dict[str, Any]],
        panels: list[dict[str, Any]] | None = None,
        voices_total: int = 0,
        extra: dict[str, Any] | None = None,
        sample_rate: float = 48000.0,
    ) -> None:
        self.seq, self.t, self.records, self.descs, self.graphs = seq, t, records, descs, graphs
        self.buses, self.panels = buses, panels
        self.voices_total, self.extra, self.sample_rate = voices_total, extra or {}, sample_rate
        self._voices: list[dict[str, Any]] | None = None
        self._json: str | None = None

    @property
    def voices(self) -> list[dict[str, Any]]:
        """The listed voices as the page shows them, oldest first."""
        if self._voices is None:
            self._voices = record_rows(self.records, self.descs, self.graphs, self.sample_rate)
        return self._voices

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "t": round(self.t, 4),
            "voices": self.voices,
            "voices_total": self.voices_total,
            "buses": self.buses,
            "panels": self.panels,
            **self.extra,
        }

    def encoded(self) -> str:
        """:meth:`to_json` as JSON text, built once (every client gets the same)."""
        if self._json is None:
            self._json = json.dumps(self.to_json(), separators=(",", ":"))
        return self._json


def bar_of(d: VoiceDesc, end: int, sample_rate: float) -> Bar:
    """The finished bar of the voice ``d`` that ended at ``end`` (engine samples)."""
    system, speaker = d.system_speaker
    return Bar(
        d.id,
        system,
        speaker,
        d.meta.get("clip", d.tag),
        d.meta.get("take", ""),
        d.slot,
        d.graph,
        d.started_at / sample_rate,
        end / sample_rate,
    )


class SnapshotPublisher:
    """Publishes :class:`Snapshot` objects of ``engine`` from the render thread.

    Parameters
    ----------
    engine:
        The engine (``voices``, ``mixer``, ``systems``, ``bus``, ``now``).
    rate_hz:
        Snapshots per second of engine time.
    panel_hz:
        Game state panels per second.
    max_voices:
        Voices listed per snapshot (the loudest-first order is the page's; here the oldest
        first, as the engine lists them); the total is always given.
    keep:
        Decisions (and snapshots' lists of ended voices) kept for a reader that has not
        collected them yet.
    """

    def __init__(
        self,
        engine: Any,
        *,
        rate_hz: float = SNAPSHOT_HZ,
        panel_hz: float = PANEL_HZ,
        max_voices: int = 96,
        keep: int = 65536,
    ) -> None:
        self.engine = engine
        engine.mixer.meters = True  # the records' peaks read the voices' output rows
        self.sample_rate = float(engine.sample_rate)
        self.block = int(engine.block)
        self.every = max(1, round(self.sample_rate / self.block / rate_hz))
        self.panel_every = max(1, round(rate_hz / panel_hz))
        self.max_voices = max_voices
        self.latest: Snapshot | None = None
        self.decisions: collections.deque[Decision] = collections.deque(maxlen=keep)
        self.ended: collections.deque[tuple[np.ndarray, np.ndarray, np.ndarray]] = collections.deque(
            maxlen=keep
        )
        """(ids, end samples, descriptions) of the voices that ended, one entry per snapshot."""
        self.records = VoiceRecords(engine, keep)
        self._graphs: list[tuple[str, str]] = []
        self.on_snapshot: Callable[[Snapshot], None] | None = None
        self._blocks = 0
        self._seq = 0
        self._bus_names: list[str] = []
        self._peak = np.zeros(0)
        self._sumsq = np.zeros(0)
        self._count = np.zeros(0, dtype=np.int64)
        self._held = np.zeros((0, METER_HOLD), dtype=np.float32)
        self._fill: list[int] = []
        engine.bus.on_decision(self._decision)

    # -- render thread -------------------------------------------------------------------
    def _decision(self, d: Decision) -> None:
        self.decisions.append(d)

    def _meter_layout(self) -> None:
        names = ["master", *sorted(n for n in self.engine.mixer.buses if n != "master")]
        if names != self._bus_names:
            self._bus_names = names
            self._peak = np.zeros(len(names))
            self._sumsq = np.zeros(len(names))
            self._count = np.zeros(len(names), dtype=np.int64)
            self._held = np.zeros((len(names), METER_HOLD), dtype=np.float32)
            self._fill = [0] * len(names)

    def _meter(self, k: int, flat: np.ndarray) -> None:
        """Add samples (any shape, contiguous) to meter ``k``: three numpy calls."""
        if flat.size == 0:
            return
        self._sumsq[k] += float(np.dot(flat, flat))
        self._count[k] += flat.size
        pk = max(float(flat.max()), -float(flat.min()))
        if pk > self._peak[k]:
            self._peak[k] = pk

    def _hold(self, k: int, out: np.ndarray) -> None:
        """Copy the samples ``out`` (channels x samples, or samples x channels) into meter
        ``k``'s hold buffer: one numpy copy; the buffer is measured when full or published."""
        m = out.size
        f = self._fill[k]
        if f + m > METER_HOLD:
            self._fold(k)
            f = 0
            if m > METER_HOLD:  # a block larger than the buffer: measured at once
                self._meter(k, np.ascontiguousarray(out).reshape(-1))
                return
        np.copyto(self._held[k, f : f + m].reshape(out.shape), out)
        self._fill[k] = f + m

    def _fold(self, k: int) -> None:
        """Measure what meter ``k`` holds and empty it."""
        f = self._fill[k]
        if f:
            self._meter(k, self._held[k, :f])
            self._fill[k] = 0

    def on_block(self, start: int, block: np.ndarray) -> None:
        """Meter the block just rendered (one copy per bus); publish a snapshot every ``every``
        blocks."""
        if len(self._bus_names) != len(self.engine.mixer.buses):
            self._meter_layout()
        n = int(block.shape[0])
        self._hold(0, block)
        buses = self.engine.mixer.buses
        for k in range(1, len(self._bus_names)):
            out = buses[self._bus_names[k]].output[0]
            self._hold(k, out[:, :n])
        self._blocks += 1
        if self._blocks % self.every == 0:
            self.publish()

    def _buses(self) -> list[dict[str, Any]]:
        out = []
        for k, name in enumerate(self._bus_names):
            self._fold(k)
            cnt = int(self._count[k])
            rms = math.sqrt(self._sumsq[k] / cnt) if cnt else 0.0
            out.append({"name": name, "peak_db": db(float(self._peak[k])), "rms_db": db(rms)})
        self._peak[:] = 0.0
        self._sumsq[:] = 0.0
        self._count[:] = 0
        return out

    def _panels(self) -> list[dict[str, Any]]:
        panels = []
        for s in self.engine.systems:
            if s.name in self.engine.disabled:
                continue
            try:
                for title, rows in s.snapshot().items():
                    panels.append({"system": s.name, "title": title, "rows": [str(r) for r in rows[:40]]})
            except Exception as exc:  # a panel is a view: it never stops the render
                panels.append({"system": s.name, "title": "error", "rows": [f"{type(exc).__name__}: {exc}"]})
        return panels

    def finish(self) -> None:
        """Close the bars of the voices still playing at the engine's present (end of a run)."""
        ids, descs = self.records.playing_now()
        self.ended.append((ids, np.full(ids.shape[0], int(self.engine.now), dtype=np.int64), descs))

    def take_bars(self) -> list[Bar]:
        """The finished bars of the voices that ended since the last call (reader's thread)."""
        out: list[Bar] = []
        while self.ended:
            _ids, ends, descs = self.ended.popleft()
            out.extend(bar_of(d, e, self.sample_rate) for d, e in zip(descs, ends.tolist()) if d is not None)
        return out

    def _world(self) -> dict[str, Any]:
        world = self.engine.world
        x, y, z = world.listener_position()
        emitters = {}
        for name in list(world.emitters)[:64]:
            ex, ey, ez = world.position(name)
            emitters[name] = [round(ex, 2), round(ey, 2), round(ez, 2)]
        return {
            "listener": [round(x, 2), round(y, 2), round(z, 2), round(world.listener_yaw, 1)],
            "emitters": emitters,
        }

    def publish(self) -> Snapshot:
        """Build and publish a snapshot now (render thread, or any thread when not running)."""
        records, descs, total, ended_ids, ended_at, ended_descs = self.records.take(self.max_voices)
        if ended_ids.shape[0]:
            self.ended.append((ended_ids, ended_at, ended_descs))
        panels = self._panels() if self._seq % self.panel_every == 0 else None
        snap = Snapshot(
            self._seq,
            self.engine.now / self.sample_rate,
            records,
            descs,
            self.graphs(),
            self._buses(),
            panels,
            total,
            self._world(),
            self.sample_rate,
        )
        self._seq += 1
        self.latest = snap
        if self.on_snapshot is not None:
            self.on_snapshot(snap)
        return snap

    def graphs(self) -> list[tuple[str, str]]:
        """(graph, bus) of each graph index the records use (a new list only when one was added)."""
        if len(self._graphs) != len(self.records.graphs):
            self._graphs = [(g.name, g.bus) for g in self.records.graphs]
        return self._graphs

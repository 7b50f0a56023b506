"""What the render thread publishes for the profiler page: bounded snapshots, never shared state.

The render thread calls :meth:`SnapshotPublisher.on_block` after every block (the
:class:`~audio.live.device.LivePlayer` ``on_block`` hook) and ``bus.on_decision`` hands it every
decision. Per block it only meters the master and the buses (a fixed number of numpy calls into
preallocated scratch, whatever the voice count); every ``every`` blocks (15 Hz by default) it
builds one :class:`Snapshot` of plain Python values (the voices playing with their levels and
parameters, the bus meters, every ``panel_every`` snapshots the game systems' own panels) and
publishes it by replacing one reference (atomic under the GIL: no lock). Decisions and finished
voice bars go to bounded deques (``append`` and ``popleft`` are thread-safe); when a reader falls
behind, the oldest entries are dropped and counted, never the render thread held up.

The audio callback is never involved: it only copies blocks out of the ring.

Levels are dBFS (``-inf`` printed as ``None``); times are seconds of engine time.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from audio.core.bus import Decision

__all__ = ["Bar", "PANEL_HZ", "SNAPSHOT_HZ", "Snapshot", "SnapshotPublisher", "db", "voice_row"]

SNAPSHOT_HZ = 15.0
"""Snapshots per second of engine time (the page updates at this rate)."""
PANEL_HZ = 5.0
"""Game state panels per second (a system's ``snapshot()`` formats text: kept rarer)."""
FLOOR_DB = -120.0
"""Levels below this are reported as silence (None)."""


def db(linear: float) -> float | None:
    """``20 log10(linear)`` in dB, or None below :data:`FLOOR_DB` (silence)."""
    if not linear > 10.0 ** (FLOOR_DB / 20.0):
        return None
    return round(20.0 * math.log10(linear), 2)


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


@dataclass(frozen=True)
class Snapshot:
    """The state of the run at engine time ``t`` (s): JSON-ready plain values, never mutated."""

    seq: int
    t: float
    voices: list[dict[str, Any]]
    buses: list[dict[str, Any]]
    panels: list[dict[str, Any]] | None = None
    voices_total: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

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


def split_tag(tag: str, meta: dict[str, Any]) -> tuple[str, str]:
    """(system, speaker) of a voice from its tag ``"<system>:<speaker>:<what>"`` or its meta."""
    parts = tag.split(":", 2) if ":" in tag else tag.split(" ", 2)
    system = parts[0] if parts and parts[0] else "voice"
    for key in ("ped", "speaker", "emitter"):
        if meta.get(key) is not None:
            return system, str(meta[key])
    return system, parts[1] if len(parts) > 1 else ""


class _GraphInfo:
    """Where to read a voice graph's interesting parameters (looked up once per graph)."""

    def __init__(self, bank: Any, mixer: Any) -> None:
        self.peak: str | None = None
        for node_id, node in bank.by_id.items():
            if node.kind == "PI20" and self.peak is None:
                self.peak = node_id
        self.bus = ""
        self.submix: Any = None
        self.delay: str | None = None
        for _node, to in bank.routes():
            kind, _, name = str(to).partition(":")
            if kind == "bus" and not self.bus:
                self.bus = name
            elif kind == "submix" and self.submix is None:
                self.submix = mixer.submix_banks.get(name)
        if self.submix is not None:
            for node_id, node in self.submix.by_id.items():
                if node.kind == "Del0" and self.delay is None:
                    self.delay = node_id
            if not self.bus:
                for _node, to in self.submix.routes():
                    kind, _, name = str(to).partition(":")
                    if kind == "bus":
                        self.bus = name
                        break
        self.ducker = mixer.duckers.get(self.bus)


def voice_row(v: Any, info: _GraphInfo, rate: float) -> dict[str, Any]:
    """One playing voice as the page shows it (render thread: reads the voice's bank)."""
    meta = v.meta or {}
    system, speaker = split_tag(v.tag, meta)
    peak = float(np.abs(v._bank.output[v.instance]).max()) if not v.done else 0.0
    row: dict[str, Any] = {
        "id": v.id,
        "system": system,
        "speaker": speaker,
        "clip": str(meta.get("clip", "")),
        "take": str(meta.get("take", "")),
        "graph": v.graph,
        "bus": info.bus,
        "slot": v.slot,
        "t0": round(v.started_at / rate, 4),
        "pos_s": round(v.position / v.rate, 3) if v.rate else 0.0,
        "len_s": round(v.frames / v.rate, 3) if v.rate else 0.0,
        "peak_db": db(peak),
        "stopped": bool(v.stopped),
    }
    if info.peak is not None:
        row["peak_centre_hz"] = round(v._bank.get(v.instance, f"{info.peak}.centre_hz"), 1)
        row["peak_gain_db"] = db(v._bank.get(v.instance, f"{info.peak}.gain"))
    if info.delay is not None and info.submix is not None and v.slot < info.submix.capacity:
        row["delay_ms"] = round(1e3 * info.submix.get(v.slot, f"{info.delay}.seconds"), 2)
    if info.ducker is not None:
        row["band"] = v.band
        band = min(max(v.band, 0), info.ducker.env.shape[0] - 1)
        row["duck_db"] = db(info.ducker.gain(band))
    return row


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
        Decisions and finished voice bars kept for a reader that has not collected them yet.
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
        self.rate = float(engine.sample_rate)
        self.block = int(getattr(engine, "block", 256))
        self.every = max(1, round(self.rate / self.block / rate_hz))
        self.panel_every = max(1, round(rate_hz / panel_hz))
        self.max_voices = max_voices
        self.latest: Snapshot | None = None
        self.decisions: collections.deque[Decision] = collections.deque(maxlen=keep)
        self.bars: collections.deque[Bar] = collections.deque(maxlen=keep)
        self.decisions_seen = 0
        self.bars_seen = 0
        self.on_snapshot: Callable[[Snapshot], None] | None = None
        self._blocks = 0
        self._seq = 0
        self._known: dict[int, Any] = {}
        self._info: dict[str, _GraphInfo] = {}
        self._bus_names: list[str] = []
        self._peak = np.zeros(0)
        self._sumsq = np.zeros(0)
        self._count = np.zeros(0, dtype=np.int64)
        self._scratch = np.zeros((8, max(self.block, 1)), dtype=np.float32)
        engine.bus.on_decision(self._decision)

    # -- render thread -------------------------------------------------------------------
    def _decision(self, d: Decision) -> None:
        self.decisions.append(d)
        self.decisions_seen += 1

    def _meter_layout(self) -> None:
        names = ["master", *sorted(n for n in self.engine.mixer.buses if n != "master")]
        if names != self._bus_names:
            self._bus_names = names
            self._peak = np.zeros(len(names))
            self._sumsq = np.zeros(len(names))
            self._count = np.zeros(len(names), dtype=np.int64)

    def _meter(self, k: int, x: np.ndarray) -> None:
        ch, n = x.shape
        if ch > self._scratch.shape[0] or n > self._scratch.shape[1]:
            self._scratch = np.zeros((max(ch, 8), max(n, self._scratch.shape[1])), dtype=np.float32)
        s = self._scratch[:ch, :n]
        np.multiply(x, x, out=s)
        self._sumsq[k] += float(s.sum())
        self._count[k] += ch * n
        pk = float(np.sqrt(s.max())) if n else 0.0
        if pk > self._peak[k]:
            self._peak[k] = pk

    def on_block(self, start: int, block: np.ndarray) -> None:
        """Meter the block just rendered; publish a snapshot every ``every`` blocks."""
        if len(self._bus_names) != len(self.engine.mixer.buses):
            self._meter_layout()
        n = int(block.shape[0])
        self._meter(0, block.T)
        buses = self.engine.mixer.buses
        for k in range(1, len(self._bus_names)):
            out = buses[self._bus_names[k]].output[0]
            self._meter(k, out[:, : min(n, out.shape[1])])
        self._blocks += 1
        if self._blocks % self.every == 0:
            self.publish()

    def _voices(self) -> tuple[list[dict[str, Any]], int]:
        eng = self.engine
        playing = eng.voices.playing()
        now_ids = set()
        rows = []
        for v in playing:
            now_ids.add(v.id)
            self._known.setdefault(v.id, v)
            if len(rows) < self.max_voices:
                info = self._info.get(v.graph)
                if info is None:
                    info = self._info[v.graph] = _GraphInfo(v._bank, eng.mixer)
                rows.append(voice_row(v, info, self.rate))
        for vid in [i for i in self._known if i not in now_ids]:
            v = self._known.pop(vid)
            end = v.ended_at
            meta = v.meta or {}
            system, speaker = split_tag(v.tag, meta)
            self.bars.append(
                Bar(
                    v.id,
                    system,
                    speaker,
                    str(meta.get("clip", v.tag)),
                    str(meta.get("take", "")),
                    v.slot,
                    v.graph,
                    v.started_at / self.rate,
                    (end if end is not None else eng.now) / self.rate,
                )
            )
            self.bars_seen += 1
        return rows, len(playing)

    def _buses(self) -> list[dict[str, Any]]:
        out = []
        for k, name in enumerate(self._bus_names):
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
            snap = getattr(s, "snapshot", None)
            if snap is None or s.name in getattr(self.engine, "disabled", {}):
                continue
            try:
                for title, rows in snap().items():
                    panels.append({"system": s.name, "title": title, "rows": [str(r) for r in rows[:40]]})
            except Exception as exc:  # a panel is a view: it never stops the render
                panels.append({"system": s.name, "title": "error", "rows": [f"{type(exc).__name__}: {exc}"]})
        return panels

    def finish(self) -> None:
        """Close the bars of the voices still playing at the engine's present (end of a run)."""
        now = self.engine.now / self.rate
        for v in self._known.values():
            meta = v.meta or {}
            system, speaker = split_tag(v.tag, meta)
            clip, take = str(meta.get("clip", v.tag)), str(meta.get("take", ""))
            self.bars.append(Bar(v.id, system, speaker, clip, take, v.slot, v.graph, v.started_at / self.rate, now))
            self.bars_seen += 1
        self._known.clear()

    def _world(self) -> dict[str, Any]:
        world = self.engine.world
        x, y, z = world.listener_position()
        emitters = {}
        for name in list(world.emitters)[:64]:
            ex, ey, ez = world.position(name)
            emitters[name] = [round(ex, 2), round(ey, 2), round(ez, 2)]
        return {"listener": [round(x, 2), round(y, 2), round(z, 2), round(world.listener_yaw, 1)], "emitters": emitters}

    def publish(self) -> Snapshot:
        """Build and publish a snapshot now (render thread, or any thread when not running)."""
        voices, total = self._voices()
        panels = self._panels() if self._seq % self.panel_every == 0 else None
        snap = Snapshot(
            self._seq, self.engine.now / self.rate, voices, self._buses(), panels, total, self._world()
        )
        self._seq += 1
        self.latest = snap
        if self.on_snapshot is not None:
            self.on_snapshot(snap)
        return snap

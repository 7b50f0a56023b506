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
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from audio.core.bus import Decision

__all__ = [
    "Bar",
    "PANEL_HZ",
    "SNAPSHOT_HZ",
    "Snapshot",
    "SnapshotPublisher",
    "VoiceDesc",
    "VoiceGroup",
    "db",
    "voice_rows",
]

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
class VoiceDesc:
    """What the page shows of a voice that never changes while it plays (a plain, picklable
    copy of a :class:`~audio.core.voices.Voice`'s fixed fields, made once per voice)."""

    id: int
    graph: str
    slot: int
    band: int
    tag: str
    sample_rate: float
    length: int
    started_at: int
    meta: dict[str, str]

    @classmethod
    def of(cls, v: Any) -> VoiceDesc:
        meta = v.meta or {}
        keep = {
            k: str(meta[k]) for k in ("clip", "take", "ped", "speaker", "emitter") if meta.get(k) is not None
        }
        return cls(
            v.id, v.graph, v.slot, v.band, v.tag, float(v.sample_rate), int(v.length), int(v.started_at), keep
        )


@dataclass(frozen=True)
class VoiceGroup:
    """Playing voices of one graph as the render thread saw them: the voices (whose fields the
    page reads are fixed at their start: :class:`~audio.core.voices.Voice` or
    :class:`VoiceDesc`) and copies of their bank's numbers and stop flags at that moment."""

    bus: str
    voices: list[Any]
    peaks: np.ndarray
    ipos: np.ndarray
    centre: np.ndarray | None
    gain: np.ndarray | None
    delay: np.ndarray | None
    duck: np.ndarray | None
    stopped: np.ndarray


class Snapshot:
    """The state of the run at engine time ``t`` (s), never mutated once published.

    The render thread stores raw copies (:class:`VoiceGroup`); the rows the page shows are
    built on first use by the reader (:attr:`voices`), off the render thread.
    """

    def __init__(
        self,
        seq: int,
        t: float,
        groups: list[VoiceGroup],
        buses: list[dict[str, Any]],
        panels: list[dict[str, Any]] | None = None,
        voices_total: int = 0,
        extra: dict[str, Any] | None = None,
        sample_rate: float = 48000.0,
    ) -> None:
        self.seq, self.t, self.groups, self.buses, self.panels = seq, t, groups, buses, panels
        self.voices_total, self.extra, self.sample_rate = voices_total, extra or {}, sample_rate
        self._voices: list[dict[str, Any]] | None = None
        self._json: str | None = None

    @property
    def voices(self) -> list[dict[str, Any]]:
        """The listed voices as the page shows them, oldest first."""
        if self._voices is None:
            rows = [r for g in self.groups for r in voice_rows(g, self.sample_rate)]
            rows.sort(key=lambda r: r["id"])
            self._voices = rows
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


def split_tag(tag: str, meta: dict[str, Any]) -> tuple[str, str]:
    """(system, speaker) of a voice from its tag ``"<system>:<speaker>:<what>"`` or its meta."""
    parts = tag.split(":", 2) if ":" in tag else tag.split(" ", 2)
    system = parts[0] if parts and parts[0] else "voice"
    for key in ("ped", "speaker", "emitter"):
        if meta.get(key) is not None:
            return system, str(meta[key])
    return system, parts[1] if len(parts) > 1 else ""


class _GraphInfo:
    """Where to read a voice graph's interesting parameters (looked up once per graph): the
    first PI20 (PEAK) node's centre and gain, the distance delay (Del0) of the submix it sends
    to, the bus it reaches and that bus's ducker."""

    def __init__(self, bank: Any, mixer: Any) -> None:
        self.bank = bank
        self.centre: np.ndarray | None = None
        self.gain: np.ndarray | None = None
        for node in bank.by_id.values():
            if node.kind == "PI20":
                self.centre, self.gain = node.params["centre_hz"], node.params["gain"]
                break
        self.bus = ""
        submix: Any = None
        for _node, to in bank.routes():
            kind, _, name = str(to).partition(":")
            if kind == "bus" and not self.bus:
                self.bus = name
            elif kind == "submix" and submix is None:
                submix = mixer.submix_banks.get(name)
        self.delay: np.ndarray | None = None
        if submix is not None:
            for node in submix.by_id.values():
                if node.kind == "Del0":
                    self.delay = node.params["seconds"]
                    break
            if not self.bus:
                for _node, to in submix.routes():
                    kind, _, name = str(to).partition(":")
                    if kind == "bus":
                        self.bus = name
                        break
        self.ducker = mixer.duckers.get(self.bus)


def gather(voices: list[Any], info: _GraphInfo) -> VoiceGroup:
    """Copy what the page shows of ``voices`` (one graph) out of its bank: one numpy gather per
    quantity, whatever the number of voices (render thread)."""
    inst = np.fromiter((v.instance for v in voices), dtype=np.int64, count=len(voices))
    slots = np.fromiter((v.slot for v in voices), dtype=np.int64, count=len(voices))
    stopped = np.fromiter((v.stopped for v in voices), dtype=np.bool_, count=len(voices))
    delay = None
    if info.delay is not None:
        delay = info.delay[np.clip(slots, 0, info.delay.shape[0] - 1)]
    return VoiceGroup(
        info.bus,
        voices,
        np.abs(info.bank.output[inst]).max(axis=(1, 2)),
        info.bank.ipos[inst],
        info.centre[inst] if info.centre is not None else None,
        info.gain[inst] if info.gain is not None else None,
        delay,
        info.ducker.env.copy() if info.ducker is not None else None,
        stopped,
    )


def voice_rows(g: VoiceGroup, sample_rate: float) -> list[dict[str, Any]]:
    """The rows of one :class:`VoiceGroup` as the page shows them (any thread)."""
    peaks, ipos, stopped = g.peaks.tolist(), g.ipos.tolist(), g.stopped.tolist()
    centre = g.centre.tolist() if g.centre is not None else None
    gain = g.gain.tolist() if g.gain is not None else None
    delay = g.delay.tolist() if g.delay is not None else None
    rows = []
    for k, v in enumerate(g.voices):
        meta = v.meta or {}
        system, speaker = split_tag(v.tag, meta)
        vr = v.sample_rate or 1.0
        row: dict[str, Any] = {
            "id": v.id,
            "system": system,
            "speaker": speaker,
            "clip": str(meta.get("clip", "")),
            "take": str(meta.get("take", "")),
            "graph": v.graph,
            "bus": g.bus,
            "slot": v.slot,
            "t0": round(v.started_at / sample_rate, 4),
            "pos_s": round(ipos[k] / vr, 3),
            "len_s": round(v.length / vr, 3),
            "peak_db": db(peaks[k]),
            "stopped": stopped[k],
        }
        if centre is not None and gain is not None:
            row["peak_centre_hz"] = round(centre[k], 1)
            row["peak_gain_db"] = db(gain[k])
        if delay is not None:
            row["delay_ms"] = round(1e3 * delay[k], 2)
        if g.duck is not None:
            row["band"] = v.band
            row["duck_db"] = db(float(g.duck[min(max(v.band, 0), g.duck.shape[0] - 1)]))
        rows.append(row)
    return rows


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
        self.sample_rate = float(engine.sample_rate)
        self.block = int(engine.block)
        self.every = max(1, round(self.sample_rate / self.block / rate_hz))
        self.panel_every = max(1, round(rate_hz / panel_hz))
        self.max_voices = max_voices
        self.latest: Snapshot | None = None
        self.decisions: collections.deque[Decision] = collections.deque(maxlen=keep)
        self.bars: collections.deque[Bar] = collections.deque(maxlen=keep)
        self.on_snapshot: Callable[[Snapshot], None] | None = None
        self._blocks = 0
        self._seq = 0
        self._known: dict[int, Any] = {}
        self._info: dict[str, _GraphInfo] = {}
        self._bus_names: list[str] = []
        self._peak = np.zeros(0)
        self._sumsq = np.zeros(0)
        self._count = np.zeros(0, dtype=np.int64)
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

    def _meter(self, k: int, flat: np.ndarray) -> None:
        """Add one block (any shape, contiguous) to meter ``k``: three numpy calls."""
        if flat.size == 0:
            return
        self._sumsq[k] += float(np.dot(flat, flat))
        self._count[k] += flat.size
        pk = max(float(flat.max()), -float(flat.min()))
        if pk > self._peak[k]:
            self._peak[k] = pk

    def on_block(self, start: int, block: np.ndarray) -> None:
        """Meter the block just rendered; publish a snapshot every ``every`` blocks."""
        if len(self._bus_names) != len(self.engine.mixer.buses):
            self._meter_layout()
        n = int(block.shape[0])
        self._meter(0, block.reshape(-1))
        buses = self.engine.mixer.buses
        for k in range(1, len(self._bus_names)):
            out = buses[self._bus_names[k]].output[0]
            self._meter(k, out.reshape(-1) if n >= out.shape[1] else np.ravel(out[:, :n]))
        self._blocks += 1
        if self._blocks % self.every == 0:
            self.publish()

    def _voices(self) -> tuple[list[VoiceGroup], int]:
        eng = self.engine
        playing = eng.voices.playing()
        listed: dict[str, list[Any]] = {}
        for v in playing[: self.max_voices]:
            listed.setdefault(v.graph, []).append(v)
        groups = []
        for graph, vs in listed.items():
            info = self._info.get(graph)
            if info is None:
                info = self._info[graph] = _GraphInfo(eng.mixer.voice_bank(graph), eng.mixer)
            groups.append(gather(vs, info))
        known = self._known
        now_ids = set()
        for v in playing:
            now_ids.add(v.id)
            if v.id not in known:
                known[v.id] = v
        if len(known) != len(now_ids):
            for vid in [i for i in known if i not in now_ids]:
                self._close(known.pop(vid), None)
        return groups, len(playing)

    def _close(self, v: Any, end: int | None) -> None:
        """A voice that ended (at ``end`` samples; None = its own end) as a finished bar."""
        if end is None:
            end = v.ended_at if v.ended_at is not None else self.engine.now
        meta = v.meta or {}
        system, speaker = split_tag(v.tag, meta)
        clip, take = str(meta.get("clip", v.tag)), str(meta.get("take", ""))
        self.bars.append(
            Bar(
                v.id,
                system,
                speaker,
                clip,
                take,
                v.slot,
                v.graph,
                v.started_at / self.sample_rate,
                end / self.sample_rate,
            )
        )

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
        for v in self._known.values():
            self._close(v, self.engine.now)
        self._known.clear()

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
        voices, total = self._voices()
        panels = self._panels() if self._seq % self.panel_every == 0 else None
        snap = Snapshot(
            self._seq,
            self.engine.now / self.sample_rate,
            voices,
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

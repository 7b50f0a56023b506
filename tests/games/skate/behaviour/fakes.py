"""Shared builders for the Skate 3 speech behaviour tests: synthetic tables and a fake engine."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from audio.core.bus import EventBus
from audio.core.engine import EngineConfig
from audio.core.world import Path3
from audio.games.skate.formats.evt import ClipRef, EvtEvent, EvtRecord, EvtTable

BUSM = 0x1000  # business m type bit (voices 59-61)
SECURITY = 0x40  # voices 75-77


@dataclass
class Hdr:
    id: int
    take_count: int
    history_len: int
    flags: int = 0


def rec(clips, values=(), weight_code=0x39, probability=100, mode=0, locals=0):
    return EvtRecord(
        weight_code,
        probability,
        mode,
        locals,
        tuple(values),
        tuple(c if isinstance(c, ClipRef) else ClipRef(c) for c in clips),
    )


def event(eid, records, fields=(1, 2, 3), probability=100, timeout=90, flags2=0, conditions=()):
    return EvtEvent(
        eid,
        timeout,
        500,
        len(fields) << 4,
        probability,
        flags2,
        0,
        tuple(fields),
        tuple(records),
        tuple(conditions),
    )


CLIP_NAMES = {
    10: "501_59_busm1_Warn_n",
    11: "501_59_busm1_Warn_f",
    12: "104_59_busm1_Slam_n",
    13: "104_59_busm1_Slam_f",
    14: "202_59_busm1_HImpRct",
    15: "205_59_busm1_SpecCol",
    16: "203_59_busm1_Concern",
    20: "102_75_secg1_RadioChirpA",
    21: "102_75_secg1_Radio",
    22: "102_75_secg1_RadioChirpB",
    30: "501_75_secg1_Warn_n",
    31: "501_75_secg1_Warn_f",
}
TAKES = {10: 4, 11: 3, 12: 2, 13: 2, 14: 3, 15: 2, 16: 2, 20: 1, 21: 5, 22: 1, 30: 2, 31: 2}


def demo_table() -> EvtTable:
    """A small living-world table: warn / slam with near-far records, collisions, guard radio."""
    evs = [
        event(
            8210,
            [
                rec([10], (BUSM, 1, 2)),
                rec([11], (BUSM, 1, 1)),
                rec([30], (SECURITY, 1, 2)),
                rec([31], (SECURITY, 1, 1)),
            ],
            timeout=60,
        ),
        event(8204, [rec([12], (BUSM, 1, 2)), rec([13], (BUSM, 1, 1))]),
        event(8207, [rec([14], (BUSM, 1, 0))]),
        event(8209, [rec([15], (BUSM, 1, 0))]),
        event(8220, [rec([16], (BUSM, 1, 0))]),
        event(8277, [rec([20, 21, 22], (SECURITY, 0))], fields=(1, 2)),
    ]
    return EvtTable(bank=1, sub_bank=0, events=evs, path="demo.evt")


def demo_headers() -> list[Hdr]:
    return [Hdr(cid, n, n) for cid, n in TAKES.items()]


class SynthSource:
    """TakeSource with synthetic audio: clip c take t lasts (0.5 + 0.1 t) s at 36 kHz."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds
        self.calls: list[tuple[int, int]] = []

    def pcm(self, clip_id: int, take: int):
        self.calls.append((clip_id, take))
        secs = self.seconds if self.seconds is not None else 0.5 + 0.1 * take
        n = int(secs * 36000)
        t = np.arange(n, dtype=np.float32) / 36000
        return (0.1 * np.sin(2 * np.pi * (200 + clip_id) * t)).astype(np.float32), 36000

    def length(self, clip_id: int, take: int) -> tuple[int, int]:
        pcm, sample_rate = self.pcm(clip_id, take)
        return pcm.shape[0], sample_rate

    def clip_name(self, clip_id: int) -> str:
        return CLIP_NAMES.get(clip_id, f"999_41_clip{clip_id}")


class FakeWorld:
    """Listener at the origin facing +z (x right, y up, as audio.core.world). Azimuth 16384 = left.
    An emitter is a position or a path (``audio.core.world.Path3``)."""

    def __init__(self) -> None:
        self.emitters: dict[str, object] = {}
        self.listener = Path3([(0.0, (0.0, 0.0, 0.0))])

    def set_emitter(self, id, position=(0.0, 0.0, 0.0), path=None):
        self.emitters[id] = path if path is not None else tuple(position)

    def listener_position(self) -> tuple[float, float, float]:
        return (0.0, 0.0, 0.0)

    def distance_to(self, position) -> float:
        x, y, z = position
        return math.sqrt(x * x + y * y + z * z)

    def polar_to(self, position) -> tuple[float, float]:
        """(metres, degrees from straight ahead, + = left)."""
        x, _, z = position
        return self.distance_to(position), math.degrees(math.atan2(-x, z))


@dataclass
class FakeVoice:
    id: int
    graph: str
    length: int
    sample_rate: int
    slot: int
    tag: str
    params: dict
    started_at: int
    engine: FakeEngine = field(repr=False)
    stopped: bool = False
    written: dict = field(default_factory=dict)

    @property
    def done(self) -> bool:
        if self.stopped:
            return True
        return self.engine.now >= self.started_at + int(self.length * 48000 / self.sample_rate)


class FakeVoices:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.started: list[FakeVoice] = []
        self.sets: list[tuple[int, dict]] = []
        self.stops: list[int] = []

    def start(self, graph, pcm, sample_rate, *, params=None, slot=0, band=0, tag="", meta=None):
        v = FakeVoice(
            len(self.started),
            graph,
            len(pcm),
            sample_rate,
            slot,
            tag,
            dict(params or {}),
            self.engine.now,
            self.engine,
            written=dict(params or {}),
        )
        self.started.append(v)
        return v

    def set(self, voice, **params):
        voice.params.update(params)
        voice.written.update(params)
        self.sets.append((voice.id, params))

    def rewrite_keys(self, graph) -> frozenset[str]:
        return frozenset({"Sen0_echo.level", "Sen0_env.level"})

    def stop(self, voice, fade=True):
        voice.stopped = True
        self.stops.append(voice.id)


class FakeMixer:
    def __init__(self) -> None:
        self.submix: list[tuple[str, int, dict]] = []

    def set_submix(self, graph, slot, **params):
        self.submix.append((graph, slot, params))


class FakeEngine:
    """Dispatches bus events and ticks one 30 Hz system at exact console-frame samples."""

    def __init__(self) -> None:
        self.bus = EventBus()
        self.config = EngineConfig()
        self.world = FakeWorld()
        self.voices = FakeVoices(self)
        self.mixer = FakeMixer()
        self.now = 0
        self.frame = 0
        self.sample_rate = 48000
        self.systems = []

    def frame_of(self, system) -> int:
        """The last frame ticked (every frame ticks; events come before their frame's tick)."""
        return self.frame - 1

    def add_system(self, system) -> None:
        system.attach(self)
        self.systems.append(system)

    def run(self, seconds: float) -> None:
        end = self.frame + int(round(seconds * 30))
        while self.frame < end:
            self.now = self.frame * 1600
            self.bus.dispatch(self.now)
            for s in self.systems:
                s.tick(self.frame, self)
            self.frame += 1

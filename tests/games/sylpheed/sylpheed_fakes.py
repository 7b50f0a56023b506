"""Test doubles for the Sylpheed chatter tests: a fake engine and table builders."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from audio.core.bus import EventBus
from audio.core.clock import RngStreams
from audio.games.sylpheed.formats.presets import EventRecord, RuleTable

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / ".." / "shared" / "fixtures"
DEMO = ROOT / "audio" / "games" / "sylpheed" / "demo"


def load_demo_tool() -> Any:
    """Import tools/build_sylpheed_demo.py (not a package) as a module."""
    spec = importlib.util.spec_from_file_location(
        "build_sylpheed_demo", ROOT / "tools" / "build_sylpheed_demo.py"
    )
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def ev(
    event: str,
    lines: list[tuple[str, bool]] | None = None,
    *,
    probability: int = 100,
    priority: int = 3,
    interval: int = 0,
    fluctuation: int = 0,
    effective: int = 0,
    pattern: str = "Sound",
    count: int | None = None,
) -> EventRecord:
    """An event record (times in seconds, as on the disc)."""
    lines = lines if lines is not None else [(f"MSG_TEST_{event}", False)]
    return EventRecord(
        event,
        effective,
        interval,
        priority,
        probability,
        len(lines) if count is None else count,
        fluctuation,
        pattern,
        tuple(lines),
    )


def table(name: str, events: list[EventRecord], speakers: tuple[str, ...] = ("CharacterTEST",)) -> RuleTable:
    return RuleTable(name, tuple(events), speakers)


@dataclass
class FakeVoice:
    id: int
    pcm_len: int
    sample_rate: int
    band: int
    tag: str
    playing: bool = True


@dataclass
class FakeVoices:
    started: list[tuple[str, int, int, str]] = field(default_factory=list)
    stopped: list[int] = field(default_factory=list)

    def start(
        self,
        graph: str,
        pcm: np.ndarray,
        sample_rate: int,
        *,
        band: int = 0,
        tag: str = "",
        params: dict[str, float] | None = None,
        slot: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> FakeVoice:
        self.started.append((graph, band, len(pcm), tag))
        return FakeVoice(len(self.started), len(pcm), sample_rate, band, tag)

    def stop(self, voice: FakeVoice, fade: bool = True) -> None:
        self.stopped.append(voice.id)
        voice.playing = False


@dataclass
class FakeMixer:
    ducks: list[tuple[str, str, int, bool]] = field(default_factory=list)

    def duck(self, bus: str, key: str, band: int, on: bool) -> None:
        self.ducks.append((bus, key, band, on))

    def held(self) -> dict[str, int]:
        """Duck keys currently held -> band."""
        out: dict[str, int] = {}
        for _, key, band, on in self.ducks:
            if on:
                out[key] = band
            else:
                out.pop(key, None)
        return out


class FakeEngine:
    """Just what SylpheedChatterSystem uses: bus, rng, voices, mixer; 60 Hz ticks by hand."""

    def __init__(self, seed: int = 0) -> None:
        self.bus = EventBus(48_000)
        self.rng = RngStreams(seed)
        self.voices = FakeVoices()
        self.mixer = FakeMixer()
        self.system: Any = None
        self.frame = 0
        self._ticked = -1
        self.posted: list[Any] = []
        self.bus.on_post(self.posted.append)

    def add_system(self, system: Any) -> None:
        self.system = system
        system.attach(self)

    def frame_of(self, system: Any) -> int:
        """The last frame ticked (events come between ticks here)."""
        return self._ticked

    def run_frames(self, n: int) -> None:
        """Deliver due events and tick the system for ``n`` frames (800 samples each)."""
        for _ in range(n):
            now = self.frame * 800
            self._ticked = self.frame - 1
            self.bus.dispatch(now)
            self.system.tick(self.frame, self)
            self._ticked = self.frame
            self.bus.dispatch(now)
            self.frame += 1

    def outcomes(self, name: str | None = None) -> list[Any]:
        return [d for d in self.bus.decisions if name is None or d.outcome == name]


class SilentLines:
    """A LineSource of synthetic PCM: each message id lasts ``seconds`` at 24 kHz."""

    def __init__(self, seconds: float | dict[str, float] = 0.5, sample_rate: int = 24_000) -> None:
        self.seconds, self.sample_rate = seconds, sample_rate

    def line(self, message_id: str) -> tuple[np.ndarray, int] | None:
        s = self.seconds.get(message_id, 0.5) if isinstance(self.seconds, dict) else self.seconds
        return np.zeros(int(s * self.sample_rate), np.float32), self.sample_rate

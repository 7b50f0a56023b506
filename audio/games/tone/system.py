"""A test-tone speech system: the smallest game system, for tests, demos and benchmarks.

``tone.on`` starts a sine "line" for a speaker (a new line of the same speaker stops the
previous one, like a game's speaker slot); ``tone.stop`` stops the speaker's line. It
publishes the same decision outcomes the port's speech tracker reads from the game
systems: ``Started`` / ``Finished`` / ``Stopped`` with ``speaker`` and ``line`` details.
This is not a game's behaviour: it exists so the live, TUI, OSC and port layers can be
exercised without any game data.

Scenario hooks (the ``tone`` game of :mod:`audio.games`)::

    [tone]
    graph = "play_voice"   # voice graph the lines play through (default)
    max_seconds = 30.0             # longest line accepted

    [[event]]
    t = 0.5
    type = "tone.on"               # speaker, line, freq_hz, seconds, level, fade_ms
    speaker = "ann"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from msgspec import Meta

from audio.core.bus import Event, EventBus
from audio.core.schema import Struct, convert

__all__ = [
    "CACHE_SAMPLES",
    "DEFAULT_GRAPH",
    "ToneOn",
    "ToneSection",
    "ToneStop",
    "ToneSystem",
    "port_section",
    "scenario_events",
    "system_from_scenario",
    "tone_pcm",
]

DEFAULT_GRAPH = "play_voice"
"""Voice graph the tone lines play through unless told otherwise."""

CACHE_SAMPLES = 8_000_000
"""Samples of synthesised lines a ToneSystem keeps for reuse (32 MB of float32)."""


@dataclass(frozen=True, kw_only=True)
class ToneOn(Event, kind="tone.on"):
    """Start a tone line: ``freq_hz`` Hz, ``seconds`` long, peak ``level`` (0..1), with
    linear fades of ``fade_ms`` (0 = a hard onset, for latency probes)."""

    speaker: str = "tone"
    line: str = ""
    freq_hz: float = 440.0
    seconds: float = 0.25
    level: float = 0.5
    fade_ms: float = 5.0


@dataclass(frozen=True, kw_only=True)
class ToneStop(Event, kind="tone.stop"):
    """Stop ``speaker``'s line (with the engine's release fade)."""

    speaker: str = "tone"


def tone_pcm(freq_hz: float, seconds: float, level: float, rate: int, fade_ms: float = 5.0) -> np.ndarray:
    """Mono float32 sine (cosine phase: full level at sample 0), ``seconds`` long, with
    linear fades of ``fade_ms`` at both ends."""
    n = max(1, round(seconds * rate))
    x = (level * np.cos(2 * np.pi * freq_hz * np.arange(n) / rate)).astype(np.float32)
    f = min(n // 2, int(fade_ms * rate / 1000))
    if f > 0:
        ramp = np.linspace(0.0, 1.0, f, endpoint=False, dtype=np.float32)
        x[:f] *= ramp
        x[-f:] *= ramp[::-1]
    return x


class ToneSystem:
    """Plays :class:`ToneOn` lines through ``engine.voices`` on voice graph ``graph``.

    ``max_seconds`` / ``max_freq_hz`` bound a request (out-of-range requests are refused
    with a ``Rejected`` decision, never crash the engine).
    """

    name = "tone"
    frame_rate = 60

    def __init__(
        self,
        graph: str,
        *,
        rate: int = 48_000,
        params: dict[str, float] | None = None,
        max_seconds: float = 30.0,
        max_freq_hz: float = 20_000.0,
    ) -> None:
        self.graph = graph
        self.rate = rate
        self.params = dict(params or {})
        self.max_seconds = max_seconds
        self.max_freq_hz = max_freq_hz
        self.lines: dict[str, tuple[Any, str]] = {}
        self._engine: Any = None
        self._cache: dict[tuple[float, float, float, float], np.ndarray] = {}
        self._cached = 0

    def check_event(self, event: Event) -> tuple[str, str] | None:
        """Tones name nothing of an install: always None."""
        return None

    def prepare(self, events: list[ToneOn]) -> None:
        """Synthesise these lines ahead (e.g. before going live), within the cache bound."""
        for ev in events:
            self._pcm(ev)

    def _pcm(self, ev: ToneOn) -> np.ndarray:
        """The line's samples, synthesised once per (freq, seconds, level, fade) and kept
        while the cache holds under :data:`CACHE_SAMPLES` samples (render-thread cost)."""
        key = (ev.freq_hz, ev.seconds, ev.level, ev.fade_ms)
        pcm = self._cache.get(key)
        if pcm is None:
            pcm = tone_pcm(ev.freq_hz, ev.seconds, ev.level, self.rate, ev.fade_ms)
            if self._cached + pcm.size <= CACHE_SAMPLES:
                self._cache[key] = pcm
                self._cached += pcm.size
        return pcm

    @property
    def graphs(self) -> tuple[str, ...]:
        """The voice graph its lines play through (loaded by :meth:`Engine.prepare`)."""
        return (self.graph,)

    def attach(self, engine: Any) -> None:
        self._engine = engine
        engine.bus.subscribe(self, [ToneOn, ToneStop])

    def handle(self, event: Event, bus: EventBus) -> None:
        eng = self._engine
        if isinstance(event, ToneStop):
            cur = self.lines.pop(event.speaker, None)
            if cur is not None:
                eng.voices.stop(cur[0], fade=True)
                bus.decide(self.name, "Stopped", speaker=event.speaker, line=cur[1])
            return
        assert isinstance(event, ToneOn)
        if not (
            0 < event.seconds <= self.max_seconds
            and 0 < event.freq_hz <= self.max_freq_hz
            and 0 <= event.level <= 1
            and 0 <= event.fade_ms <= 1000
        ):
            bus.decide(
                self.name,
                "Rejected",
                speaker=event.speaker,
                line=event.line,
                reason="seconds, freq_hz, level or fade_ms out of range",
            )
            return
        cur = self.lines.pop(event.speaker, None)
        if cur is not None:
            eng.voices.stop(cur[0], fade=True)
            bus.decide(self.name, "Interrupted", speaker=event.speaker, line=cur[1])
        pcm = self._pcm(event)
        voice = eng.voices.start(
            self.graph, pcm, self.rate, params=self.params, tag=f"tone {event.speaker} {event.line}".strip()
        )
        self.lines[event.speaker] = (voice, event.line)
        bus.decide(self.name, "Started", speaker=event.speaker, line=event.line, freq_hz=event.freq_hz)

    def tick(self, frame: int, engine: Any) -> None:
        for speaker in [s for s, (v, _) in self.lines.items() if v.done]:
            _, line = self.lines.pop(speaker)
            engine.bus.decide(self.name, "Finished", speaker=speaker, line=line)

    def is_speaking(self, speaker: Any) -> bool:
        return str(speaker) in self.lines

    def line_active(self, line_id: Any) -> bool:
        return any(line == str(line_id) for _, line in self.lines.values())


class ToneSection(Struct):
    """The ``[tone]`` scenario section."""

    graph: Annotated[str, Meta(min_length=1, max_length=256)] = DEFAULT_GRAPH
    """Voice graph the lines play through."""
    max_seconds: Annotated[float, Meta(gt=0.0, le=86_400.0)] = 30.0
    """Longest line accepted (s); a longer one is Rejected."""


def system_from_scenario(section: dict, ctx: Any) -> ToneSystem:
    """Build the system from a scenario's ``[tone]`` section (:class:`ToneSection`)."""
    where = str(getattr(ctx, "path", "<scenario>"))
    cfg = convert(section, ToneSection, source=where, where="tone")
    return ToneSystem(cfg.graph, max_seconds=cfg.max_seconds)


def port_section(install: str | None) -> dict[str, Any]:
    """The ``[tone]`` section a port opens (no install: the tones need no game data)."""
    return {"graph": DEFAULT_GRAPH}


def scenario_events() -> dict[str, Callable[[dict, Any], Event]]:
    """Factories for the scenario's ``[[event]]`` types ``tone.on`` / ``tone.stop`` (each
    entry checked against the event type)."""

    def factory(cls: type[Event]) -> Callable[[dict, Any], Event]:
        def make(d: dict, ctx: Any) -> Event:
            fields = {k: v for k, v in d.items() if k != "type"}
            where = getattr(ctx, "where", "") or cls.KIND
            return convert(fields, cls, source=str(getattr(ctx, "path", "<scenario>")), where=where)

        return make

    return {"tone.on": factory(ToneOn), "tone.stop": factory(ToneStop)}

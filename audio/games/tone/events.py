"""The test-tone system's bus events: ``tone.on`` and ``tone.stop``."""

from __future__ import annotations

from dataclasses import dataclass

from audio.core.bus import Event

__all__ = ["ToneOn", "ToneStop"]


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

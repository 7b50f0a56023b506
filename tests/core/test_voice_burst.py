"""Voice stealing holds under a burst: more starts in one block than the bank has instances."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from audio.core.world import EmitterMove
from audio.offline.scenario import PlayEvent
from audio.port.api import open_system


def test_a_burst_beyond_the_bank_steals_the_oldest_and_never_faults(tmp_path: Path) -> None:
    wav = tmp_path / "burst.wav"
    sf.write(wav, np.full(48_000, 0.01, np.float32), 48_000)
    port = open_system(game="tone", allow=[tmp_path])
    port.post(EmitterMove(emitter="e0", position=(0.0, 0.0, 2.0)))
    n = 600
    for i in range(n):
        port.post(PlayEvent(emitter="e0", file=str(wav), gain=float(i % 7) / 7, t=0.1))
    port.advance(0.2)
    voices = port.engine.voices
    budget = port.engine.config.voice_budget
    capacity = budget + port.engine.config.voice_headroom
    decisions = [d for d in port.bus.decisions if d.system == "play"]
    started = [d.detail["voice"] for d in decisions if d.outcome == "Started"]
    assert len(started) == n and not [d for d in decisions if d.outcome == "Fault"]
    # every start past the budget stole the oldest audible voice; past the bank's capacity the
    # oldest fading one was cut to free its instance
    assert voices.stolen == n - budget and voices.cut == n - capacity
    assert sorted(v.id for v in voices.playing()) == sorted(started[-budget:])
    assert port.engine.disabled == {}

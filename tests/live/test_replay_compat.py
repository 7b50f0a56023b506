"""Live captures replay through the lead's offline renderer (``barkbus render --replay``)."""

from __future__ import annotations

import time

import numpy as np
import soundfile as sf

from audio.core.capture import read_capture
from audio.live.device import LiveSettings, write_capture
from audio.offline.render import render_replay
from audio.offline.scenario import demo_scenario
from audio.port import open_system


def test_a_live_scenario_run_replays_offline_to_the_identical_audio(tmp_path, capsys):
    from audio.port.live import main

    cap, wav = tmp_path / "live.jsonl", tmp_path / "live.wav"
    scenario = str(demo_scenario("basic"))
    argv = ["live", "--scenario", scenario, "--no-audio", "--seconds", "2", "--capture", str(cap)]
    assert main([*argv, "--record", str(wav)]) == 0, capsys.readouterr().err
    played, _ = sf.read(wav, dtype="float32")
    header, _ = read_capture(cap)
    # counted, not timed: the run's own samples (fewer than 2 s of them on a starved machine,
    # whose underruns render nothing), past the first line's start at 0.2 s
    assert header["samples"] == played.shape[0] > 0.5 * 48000
    assert np.abs(played).max() > 0.01  # the scenario's first line starts at 0.2 s
    assert render_replay(cap).audio.tobytes() == played.tobytes()


def test_a_live_tone_capture_replays_offline_to_identical_audio(tmp_path):
    port = open_system(game="tone", seed=5)
    assert "doc" in port.capture_header()
    player = port.play(LiveSettings(no_audio=True, keep_blocks=True))
    for i in range(4):
        time.sleep(0.1)
        port.emit("tone.on", speaker="a", line=f"l{i}", freq_hz=300.0 + 100 * i, seconds=0.1)
    time.sleep(0.2)
    port.stop()
    cap = write_capture(
        tmp_path / "tone.jsonl", player.capture_header(**port.capture_header()), player.records
    )
    live = np.concatenate(player.rendered)
    assert np.abs(live).max() > 0.1
    assert render_replay(cap).audio.tobytes() == live.tobytes()

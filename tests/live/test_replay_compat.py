"""Live captures replay through the lead's offline renderer (``barkbus render --replay``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from audio.core.capture import read_capture
from audio.live.device import LiveSettings, write_capture
from audio.offline.render import render_replay
from audio.offline.scenario import demo_scenario
from audio.port import open_system

ROOT = Path(__file__).resolve().parents[2]


def test_a_live_scenario_run_replays_offline_to_the_identical_audio(tmp_path):
    cap, wav = tmp_path / "live.jsonl", tmp_path / "live.wav"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "audio.port.live",
            "live",
            "--scenario",
            str(demo_scenario("basic")),
            "--no-audio",
            "--seconds",
            "2",
            "--capture",
            str(cap),
            "--record",
            str(wav),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    played, _ = sf.read(wav, dtype="float32")
    header, _ = read_capture(cap)
    assert header["samples"] == played.shape[0] >= 2 * 48000 * 0.9
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

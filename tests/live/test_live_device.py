"""A live run through a real PortAudio device (JACK's dummy driver in CI) driven over OSC."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.core.capture import read_capture, replay
from audio.port.api import engine_for_capture

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.live


def test_osc_driven_live_run_keeps_the_device_clock_and_replays_to_the_identical_audio(
    audio_device, tmp_path
):
    cap, wav, met = tmp_path / "run.jsonl", tmp_path / "live.wav", tmp_path / "metrics.json"
    live = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "audio.port.live",
            "live",
            "--game",
            "tone",
            "--osc",
            "--osc-port",
            "0",
            "--seconds",
            "60",  # a bound: the test ends the run with SIGTERM once the client is done
            "--capture",
            str(cap),
            "--record",
            str(wav),
            "--metrics-json",
            str(met),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = live.stdout.readline()
        assert line.startswith("OSC listening on"), line + live.stderr.read()
        port = line.rsplit(":", 1)[1].strip()
        client = subprocess.run(
            [
                sys.executable,
                "tools/osc_client.py",
                "--port",
                port,
                "demo",
                "--game",
                "tone",
                "--seconds",
                "2.5",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        live.send_signal(signal.SIGTERM)
        out, err = live.communicate(timeout=30)
    finally:
        live.kill()
    assert live.returncode == 0, err
    assert "stopped by SIGTERM" in out
    assert client.returncode == 0, client.stdout + client.stderr
    assert "('/speaking', ['ann', 1])" in client.stdout
    fired = client.stdout.count("/tone/on")

    # counted, not timed: the render thread ran on the device's callbacks, never ahead of them by
    # more than the ring, and every callback got a rendered block or counted an underrun
    m = json.loads(met.read_text())
    played = m["callbacks"] - m["underruns"]
    assert m["callbacks"] > 0 and 0 < played <= m["blocks_rendered"] <= played + 2  # ring: 2 blocks
    assert m["samples_rendered"] == 256 * m["blocks_rendered"]
    assert fired >= 3 and m["events_posted"] == fired and m["events_dropped"] == 0

    header, events = read_capture(cap)
    engine = engine_for_capture(header, cap)  # registers the game's event kinds the capture names
    events = list(events)
    assert len([e for e in events if e[2] == "external"]) == fired
    played_audio, sample_rate = sf.read(wav, dtype="float32")
    assert sample_rate == 48000 and header["samples"] == m["samples_rendered"]
    assert played_audio.shape == (header["samples"], 2) and np.abs(played_audio).max() > 0.1
    replayed = replay(engine, events, header["samples"])
    assert replayed.tobytes() == played_audio.tobytes()


def test_list_devices_names_the_output_device(audio_device):
    r = subprocess.run(
        [sys.executable, "-m", "audio.port.live", "live", "--list-devices"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0 and "out)" in r.stdout

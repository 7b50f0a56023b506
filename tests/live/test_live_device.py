"""A live run through a real PortAudio device (JACK's dummy driver in CI) driven over OSC."""

from __future__ import annotations

import json
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
            "audio.live.cli",
            "live",
            "--game",
            "tone",
            "--osc",
            "--osc-port",
            "0",
            "--seconds",
            "7",
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
                "5",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        _out, err = live.communicate(timeout=30)
    finally:
        live.kill()
    assert live.returncode == 0, err
    assert client.returncode == 0, client.stdout + client.stderr
    assert "('/speaking', ['ann', 1])" in client.stdout

    m = json.loads(met.read_text())
    assert m["elapsed_s"] >= 5.0
    assert m["callbacks"] == pytest.approx(m["expected_callbacks"], rel=0.03)
    assert m["deadline_misses"] == 0
    assert m["events_posted"] >= 10 and m["events_dropped"] == 0

    header, events = read_capture(cap)
    played, rate = sf.read(wav, dtype="float32")
    assert rate == 48000 and played.shape == (header["samples"], 2) and np.abs(played).max() > 0.1
    replayed = replay(engine_for_capture(header, cap), list(events), header["samples"])
    assert replayed.tobytes() == played.tobytes()


def test_list_devices_names_the_output_device(audio_device):
    r = subprocess.run(
        [sys.executable, "-m", "audio.live.cli", "live", "--list-devices"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0 and "out)" in r.stdout

"""The curses audition driven through tmux (null output, so no device is needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pane(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-t", session, "-p"], capture_output=True, text=True
    ).stdout


def _wait_for(session: str, text: str, timeout: float = 20.0) -> str:
    end = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < end:
        screen = _pane(session)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not on screen after {timeout} s:\n{screen}")


@pytest.fixture
def tui(tmp_path):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    session = f"bbtui-{uuid.uuid4().hex[:8]}"
    cap = tmp_path / "tui.jsonl"
    cmd = (
        f"cd {ROOT} && {sys.executable} -m audio.port.live live --tui --no-audio --capture {cap} "
        f"--metrics-json {tmp_path / 'm.json'}; sleep 60"
    )
    subprocess.run(
        args=["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", cmd],
        check=True,
    )
    try:
        _wait_for(session, "barkbus audition")
        yield session, cap, tmp_path / "m.json"
    finally:
        subprocess.run(check=False, args=["tmux", "kill-session", "-t", session], capture_output=True)


def _keys(session: str, *keys: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", session, *keys], check=True)


def test_keys_fire_lines_select_speakers_move_emitters_and_show_decisions(tui):
    session, cap, met = tui
    _keys(session, "6")
    screen = _wait_for(session, "tone Started speaker=ann")
    assert "freq_hz=440.0" in screen
    _keys(session, "Tab")
    _wait_for(session, "[bob]")
    _keys(session, "Left", "Left", "Up")
    _wait_for(session, "azimuth +30 deg  distance 6.2 m")
    _keys(session, "1")
    _wait_for(session, "speaker=bob line=bob-2 freq_hz=262.0")
    _wait_for(session, "tone bob bob-2")  # its voice is listed while it plays
    _keys(session, ":", "tone/on cat hi 300 2", "Enter")
    _wait_for(session, "speaker=cat line=hi")
    _keys(session, ":", "nonsense 1", "Enter")
    _wait_for(session, "no action /nonsense")
    _keys(session, "q")
    screen = _wait_for(session, "capture written")
    assert "deadline misses " in screen and "underruns " in screen  # the run's counters, shown
    lines = cap.read_text().splitlines()
    kinds = [json.loads(x)["kind"] for x in lines[1:]]
    assert kinds.count("tone.on") == 3 and "world.emitter" in kinds
    m = json.loads(met.read_text())
    played = m["callbacks"] - m["underruns"]  # counted, not timed: every callback is accounted for
    assert 0 < played <= m["blocks_rendered"] <= played + 2

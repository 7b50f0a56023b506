"""The asset loader: only regular files, off the render thread, bounded, and never blocking."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.core.loader import AssetLoader, BadName, LoadTimeout, check_name, open_regular
from audio.core.world import EmitterMove
from audio.offline.scenario import PlayEvent
from audio.port.api import VoicePort, open_system


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``os.open`` is called with while the test runs (counted, so no test times itself)."""
    paths: list[str] = []
    real = os.open

    def counting_open(path: str | os.PathLike[str], *args: int, **kwargs: int) -> int:
        paths.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    return paths


def test_a_fifo_is_refused_without_opening_it(tmp_path: Path, opened: list[str]) -> None:
    fifo = tmp_path / "x.wav"
    os.mkfifo(fifo)
    with pytest.raises(BadName, match="FIFO"):
        open_regular(fifo)
    assert str(fifo) not in opened  # a blocking open would never return (no writer)
    regular = tmp_path / "y.wav"
    regular.write_bytes(b"RIFF")
    os.close(open_regular(regular))
    assert opened == [str(regular)]  # the count sees the opens that do happen


@pytest.mark.parametrize(
    ("name", "why"),
    [("town.rmf\x00", "NUL"), ("", "1..4096"), ("a" * 5000, "1..4096"), ("\udcff.wav", "surrogate")],
)
def test_a_bad_name_is_refused_before_the_file_system(name: str, why: str) -> None:
    with pytest.raises(BadName, match=why):
        check_name(name)


def test_a_symlink_loop_and_a_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(BadName, match="symbolic links"):
        open_regular(tmp_path / "a")
    with pytest.raises(BadName, match="folder"):
        open_regular(tmp_path)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing.wav")


def test_a_request_runs_on_a_worker_once_per_key_in_flight() -> None:
    loader = AssetLoader(workers=1)
    gate = threading.Event()
    calls: list[str] = []

    def work() -> str:
        calls.append(threading.current_thread().name)
        gate.wait(5)
        return "done"

    a, b = loader.request("k", work), loader.request("k", work)
    assert a is b and not a.ready()
    gate.set()
    assert a.wait(5) == "done" and calls == ["barkbus-loader-0"]


def test_a_full_queue_refuses_and_a_slow_load_times_out() -> None:
    loader = AssetLoader(workers=1, queue_size=1)
    gate = threading.Event()
    first = loader.request(1, lambda: gate.wait(5))
    deadline = time.monotonic() + 5
    while loader._queue.qsize() and time.monotonic() < deadline:  # the worker took the first
        time.sleep(0.001)
    loader.request(2, lambda: gate.wait(5))  # waits in the queue
    refused = loader.request(3, lambda: 3)
    assert refused.ready() and loader.refused == 1
    with pytest.raises(LoadTimeout, match="queue full"):
        refused.result()
    with pytest.raises(LoadTimeout, match="longer than"):
        first.wait(0.05)
    gate.set()


def _port_with_file(tmp_path: Path) -> tuple[VoicePort, Path]:
    wav = tmp_path / "line.wav"
    sf.write(wav, np.full(4800, 0.25, np.float32), 48_000)
    port = open_system(game="tone", allow=[tmp_path])
    port.post(EmitterMove(emitter="e0", position=(0.0, 0.0, 2.0), t=0.0))
    return port, wav


def test_a_pulled_port_starts_a_new_file_at_its_event_sample(tmp_path: Path) -> None:
    port, wav = _port_with_file(tmp_path)
    port.post(PlayEvent(emitter="e0", file=str(wav), t=0.1))
    port.advance(0.2)
    (d,) = [d for d in port.bus.decisions if d.outcome == "Started"]
    assert d.at == 4800 and "late_ms" not in d.detail


def _slow_disk(port: VoicePort) -> threading.Event:
    gate = threading.Event()
    real = port.engine.loader.request
    port.engine.loader.request = lambda key, fn: real(key, lambda: (gate.wait(5), fn())[1])
    return gate


def _until_loaded(port: VoicePort) -> None:
    deadline = time.monotonic() + 5
    while port.engine.loader.pending() and time.monotonic() < deadline:
        time.sleep(0.001)


def test_live_holds_a_play_until_its_file_is_loaded_so_the_capture_replays_it(tmp_path: Path) -> None:
    port, wav = _port_with_file(tmp_path)
    port.engine.load_wait = False  # what the live player sets
    captured: list[dict] = []
    port.bus.on_post(captured.append)
    gate = _slow_disk(port)
    port.post(PlayEvent(emitter="e0", file=str(wav)), when="now")
    port.advance(0.1)
    assert not [d for d in port.bus.decisions if d.outcome == "Started"]
    assert not [c for c in captured if c["kind"] == "play"]  # held in the inbox, not posted
    gate.set()
    _until_loaded(port)
    port.advance(0.1)
    (d,) = [d for d in port.bus.decisions if d.outcome == "Started"]
    (c,) = [c for c in captured if c["kind"] == "play"]
    assert d.at == c["at"] >= 4800  # started at the sample the capture records


def test_a_live_play_posted_past_the_inbox_starts_late_and_logs_the_delay(tmp_path: Path) -> None:
    port, wav = _port_with_file(tmp_path)
    port.engine.load_wait = False
    play = port.engine.system("play")
    gate = _slow_disk(port)
    port.bus.post(PlayEvent(emitter="e0", file=str(wav), t=0.0))
    port.advance(0.1)
    assert not [d for d in port.bus.decisions if d.outcome == "Started"] and len(play.loading) == 1
    gate.set()
    _until_loaded(port)
    port.advance(0.1)
    (d,) = [d for d in port.bus.decisions if d.outcome == "Started"]
    assert d.detail["late_ms"] >= 100.0 and not play.loading


def test_a_fifo_play_is_one_fault_and_the_engine_goes_on(tmp_path: Path, opened: list[str]) -> None:
    port, _ = _port_with_file(tmp_path)
    os.mkfifo(tmp_path / "stall.wav")
    port.post(PlayEvent(emitter="e0", file=str(tmp_path / "stall.wav"), t=0.0))
    port.advance(0.5)
    assert str(tmp_path / "stall.wav") not in opened  # never opened, so nothing could block
    (f,) = [d for d in port.bus.decisions if d.outcome == "Fault"]
    assert f.detail["kind"] == "refused" and "FIFO" in f.detail["reason"]
    assert port.engine.now == 24_000

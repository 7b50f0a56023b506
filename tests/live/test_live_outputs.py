"""`barkbus live` never loses its outputs: SIGTERM/SIGHUP end it like Ctrl-C, the capture and
the record are streamed (a SIGKILL loses at most the last second) and what is on disk replays.
No audio device needed (--no-audio)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.core.capture import read_capture
from audio.core.errors import BarkbusError
from audio.live.device import CaptureWriter, RecordWriter
from audio.offline.render import render_replay
from audio.port.osc import build_message

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_RATE = 48000


class Live:
    """A `barkbus live --no-audio --osc` subprocess writing into ``folder``."""

    def __init__(self, folder: Path, *extra: str) -> None:
        self.folder = folder
        cmd = [
            sys.executable,
            "-m",
            "audio.port.live",
            "live",
            "--no-audio",
            "--osc",
            "--osc-port",
            "0",
            "--capture",
            str(folder / "run.jsonl"),
            "--record",
            str(folder / "run.wav"),
            "--metrics-json",
            str(folder / "metrics.json"),
            *extra,
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        line = self.proc.stdout.readline()
        assert line.startswith("OSC listening on "), line + self.proc.stderr.read()
        host, port = line.split()[-1].rsplit(":", 1)
        self.target = (host, int(port))
        assert self.proc.stdout.readline().startswith("live: tone running")
        self.started = time.monotonic()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def tones(self, n: int, gap: float = 0.1) -> None:
        for i in range(n):
            self.sock.sendto(
                build_message("/tone/on", f"s{i % 3}", f"l{i}", 200.0 + 40 * i, 0.15, 0.4), self.target
            )
            time.sleep(gap)

    def stop(self, sig: int) -> tuple[str, str]:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=60)
        return out, err


def _replay_equals_record(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    res = render_replay(folder / "run.jsonl")
    rec, sample_rate = sf.read(folder / "run.wav", dtype="float32", always_2d=True)
    assert sample_rate == SAMPLE_RATE
    return res.audio, rec


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_live_like_ctrl_c_and_what_it_wrote_replays(tmp_path, sig):
    live = Live(tmp_path)
    live.tones(8)
    out, err = live.stop(sig)
    assert live.proc.returncode == 0, err
    assert f"stopped by {signal.Signals(sig).name}" in out and "capture written to" in out
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["osc"]["accepted"] == 8 and metrics["faults"] == 0
    header, events = read_capture(tmp_path / "run.jsonl")
    ext = [e for e in events if e[2] == "external"]
    assert len(ext) == 8 and header["samples"] == metrics["samples_rendered"] > SAMPLE_RATE // 2
    replay, rec = _replay_equals_record(tmp_path)
    assert replay.shape == rec.shape and np.array_equal(replay, rec) and np.abs(rec).max() > 0.1


@pytest.mark.slow
def test_the_capture_is_on_disk_within_a_second_of_an_event(tmp_path):
    live = Live(tmp_path)
    try:
        time.sleep(0.3)
        live.sock.sendto(build_message("/tone/on", "ann", "probe", 300.0, 0.1, 0.3), live.target)
        sent = time.monotonic()
        found = None
        while time.monotonic() - sent < 3.0:
            if b'"line":"probe"' in (tmp_path / "run.jsonl").read_bytes():
                found = time.monotonic() - sent
                break
            time.sleep(0.02)
        header = json.loads((tmp_path / "run.jsonl").read_text().splitlines()[0])
    finally:
        live.stop(signal.SIGTERM)
    assert found is not None and found < 1.0
    assert header["samples"] > 0  # the header follows the run while it goes


def test_after_a_sigkill_the_capture_on_disk_replays_and_loses_at_most_a_second(tmp_path):
    live = Live(tmp_path)
    live.tones(20, gap=0.1)
    time.sleep(0.5)
    live.proc.send_signal(signal.SIGKILL)
    live.proc.communicate(timeout=30)
    assert live.proc.returncode == -signal.SIGKILL
    header, events = read_capture(tmp_path / "run.jsonl")
    list(events)  # the capture on disk reads as a whole
    # counted, not timed against the run's render speed: the first 15 tones were sent at least a
    # second before the kill (the last 5 and the 0.5 s pause took longer), so they are all on disk,
    # in order, and the header's samples reach past the last of them
    lines = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()[1:]]
    sent = [x["line"] for x in lines if x.get("origin") == "external" and x.get("kind") == "tone.on"]
    assert sent[:15] == [f"l{i}" for i in range(15)], sent
    last = max(x["at"] for x in lines if x.get("line") == "l14")
    assert header["samples"] > last
    replay, rec = _replay_equals_record(tmp_path)
    n = min(len(replay), len(rec))
    assert n > last and np.array_equal(replay[:n], rec[:n]) and np.abs(rec[:n]).max() > 0.1


def test_live_refuses_bad_numbers_and_unwritable_outputs_with_one_line(tmp_path, capsys):
    from audio.port.live import main

    base = ["live", "--no-audio", "--seconds", "0.1"]
    (tmp_path / "dir.jsonl").mkdir()
    for extra, msg in (
        (["--block", "0"], "--block must be"),
        (["--block", "-5"], "--block must be"),
        (["--seed", "-1"], "--seed must be"),
        (["--ahead", "0"], "--ahead must be"),
        (["--capture", str(tmp_path / "dir.jsonl")], "is a folder"),
    ):
        assert main(base + extra) == 2  # in this process: an exception here would fail the test
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1


def test_outputs_in_a_missing_folder_are_created(tmp_path, capsys):
    from audio.port.live import main

    out = tmp_path / "a" / "b"
    argv = ["live", "--no-audio", "--seconds", "0.3", "--capture", str(out / "c.jsonl")]
    assert main([*argv, "--record", str(out / "r.wav")]) == 0, capsys.readouterr().err
    assert read_capture(out / "c.jsonl")[0]["samples"] == sf.info(str(out / "r.wav")).frames > 0


def test_the_writers_keep_valid_files_between_flushes(tmp_path):
    cap = CaptureWriter(tmp_path / "c.jsonl", {"game": "tone"}, samples=lambda: 512, flush_s=0.05)
    rec = RecordWriter(tmp_path / "r.wav", SAMPLE_RATE, flush_s=0.05)
    block = np.linspace(-0.5, 0.5, 512, dtype=np.float32).reshape(256, 2)
    cap.record({"kind": "tone.stop", "at": 0, "origin": "external", "t": 0.0, "speaker": "a"})
    rec.push(0, block)
    time.sleep(0.3)
    header, events = read_capture(tmp_path / "c.jsonl")  # while both are still open
    assert header["samples"] == 512 and len(list(events)) == 1
    data, _ = sf.read(tmp_path / "r.wav", dtype="float32", always_2d=True)
    assert np.array_equal(data, block)
    cap.close(768)
    rec.push(256, block)
    rec.close()
    assert read_capture(tmp_path / "c.jsonl")[0]["samples"] == 768
    assert sf.info(str(tmp_path / "r.wav")).frames == 512


# -- captures are untrusted input too ---------------------------------------------------------
_GOOD = [
    '{"capture": "barkbus", "version": 1, "game": "tone", "samples": 4800, "doc": {}}',
    '{"kind":"tone.on","at":0,"origin":"external","t":0.0,"speaker":"a","line":"x","freq_hz":440.0,'
    '"seconds":0.1,"level":0.5,"fade_ms":5.0}',
    '{"kind":"world.emitter","at":256,"origin":"external","t":0.0053,"emitter":"e","position":[1,2,3]}',
    '{"kind":"skate.value","at":512,"origin":"internal","t":0.01,"ped":1,"value":14}',
]


@st.composite
def mutated_capture(draw) -> bytes:
    text = bytearray("\n".join(_GOOD).encode())
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["flip", "cut", "insert"]))
        i = draw(st.integers(0, max(0, len(text) - 1)))
        if op == "flip" and text:
            text[i] = draw(st.integers(0, 255))
        elif op == "cut":
            del text[i : i + draw(st.integers(1, 40))]
        else:
            junk = [b"nan", b"-1", b"1e999", b"[[[[[[", b"\xff\xfe", b'"', b"\n{}", b"null"]
            text[i:i] = draw(st.sampled_from(junk))
    return bytes(text)


@settings(max_examples=examples(300))
@given(mutated_capture())
def test_a_mutated_capture_reads_or_fails_with_a_barkbus_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cap") / "c.jsonl"
    path.write_bytes(data)
    try:
        header, events = read_capture(path)
        for _ in events:
            pass
    except BarkbusError:
        pass


@pytest.mark.slow
def test_a_live_run_without_its_device_is_exit_1_and_leaves_no_files(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "audio", "live", "--device", "9999", "--seconds", "0.1"]
        + ["--capture", str(tmp_path / "c.jsonl"), "--record", str(tmp_path / "r.wav")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1 and r.stderr.startswith("barkbus: error: no audio output")
    assert list(tmp_path.iterdir()) == []


def test_the_tui_without_a_terminal_is_one_line_not_a_curses_traceback(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "audio", "live", "--tui", "--no-audio", "--seconds", "0.1"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stderr == (
        "barkbus: error: --tui needs a terminal (standard input and output); use --osc or a scenario\n"
    )

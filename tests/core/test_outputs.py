"""Outputs are never lost: checked first, streamed, renamed when complete; formats by extension."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.cli import main
from audio.core.errors import OutputError
from audio.core.outputs import AudioSink, audio_format, check_writable
from audio.offline.scenario import demo_scenario

ROOT = Path(__file__).resolve().parents[2]


def _fmt_chunk(path: Path) -> tuple[int, int, int]:
    """(wFormatTag, channels, dwChannelMask or 0) read straight from the RIFF bytes."""
    data = path.read_bytes()
    at = data.find(b"fmt ")
    tag, channels = struct.unpack_from("<HH", data, at + 8)
    mask = struct.unpack_from("<I", data, at + 8 + 20)[0] if tag == 0xFFFE else 0
    return tag, channels, mask


def test_a_5_1_wav_is_wave_format_extensible_with_the_5_1_channel_mask(tmp_path):
    out = tmp_path / "six.wav"
    assert main(["render", str(demo_scenario("basic")), "-o", str(out), "--layout", "5.1", "--quiet"]) == 0
    assert _fmt_chunk(out) == (0xFFFE, 6, 0x3F)  # FL FR FC LFE BL BR
    data, _ = sf.read(out)
    assert data.shape[1] == 6 and np.abs(data).max() > 0.01


def test_wav_and_flac_of_one_render_hold_the_same_samples(tmp_path):
    scn = str(demo_scenario("basic"))
    assert main(["render", scn, "-o", str(tmp_path / "a.wav"), "--quiet"]) == 0
    assert main(["render", scn, "-o", str(tmp_path / "a.flac"), "--quiet"]) == 0
    w, _ = sf.read(tmp_path / "a.wav", dtype="int16")
    f, _ = sf.read(tmp_path / "a.flac", dtype="int16")
    assert np.array_equal(w, f) and np.abs(w).max() > 300


@pytest.mark.parametrize("ext,major", [(".ogg", "OGG"), (".aiff", "AIFF"), (".flac", "FLAC")])
def test_the_extension_picks_the_format_libsndfile_writes(tmp_path, ext, major):
    out = tmp_path / f"x{ext}"
    sink = AudioSink(out, 48000, 2)
    sink.write(np.full((4800, 2), 0.25, np.float32))
    sink.commit()
    assert sf.info(str(out)).format == major


def test_an_extension_libsndfile_cannot_write_is_refused_before_rendering(tmp_path, capsys, monkeypatch):
    import audio.offline.render

    with pytest.raises(OutputError, match="extension '.xyz'"):
        audio_format(tmp_path / "x.xyz")
    renders: list[object] = []
    monkeypatch.setattr(audio.offline.render, "render_scenario", lambda *a, **k: renders.append(a))
    assert main(["render", str(demo_scenario("basic")), "-o", str(tmp_path / "x.xyz"), "--quiet"]) == 2
    assert renders == [] and not (tmp_path / "x.xyz").exists()  # counted: no render started
    assert "cannot write audio with extension" in capsys.readouterr().err


def test_an_unwritable_output_is_found_before_rendering(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OutputError, match="cannot write .*not a folder"):
        check_writable(blocker / "x.wav")
    rc = main(
        [
            "render",
            str(demo_scenario("basic")),
            "-o",
            str(tmp_path / "ok.wav"),
            "--log",
            str(blocker / "log.jsonl"),
            "--quiet",
        ]
    )
    assert rc == 2 and not (tmp_path / "ok.wav").exists()


def test_a_discarded_sink_leaves_nothing_under_the_final_name(tmp_path):
    sink = AudioSink(tmp_path / "x.wav", 48000, 2)
    sink.write(np.zeros((480, 2), np.float32))
    sink.discard()
    assert list(tmp_path.iterdir()) == []


def _start_long_render(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """A 6 h render (a minute or more of work even at thousands of times real time) in a
    subprocess, returned once it has started writing its partial file."""
    scn = tmp_path / "long.toml"
    scn.write_text("[scenario]\nduration = 21600.0\n[tone]\n")
    out = tmp_path / "long.wav"
    proc = subprocess.Popen(
        [sys.executable, "-m", "audio", "render", str(scn), "-o", str(out), "--quiet"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not any(p.name.startswith(".long.partial") for p in tmp_path.iterdir()):
        time.sleep(0.05)
    return proc, out


@pytest.mark.slow
def test_a_render_killed_with_sigkill_leaves_no_file_under_the_final_name(tmp_path):
    proc, out = _start_long_render(tmp_path)
    time.sleep(0.1)  # mid-write
    partial = [p for p in tmp_path.iterdir() if p.name.startswith(".long.partial")]
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert partial, "the render never started writing"
    assert not out.exists()


@pytest.mark.slow
def test_a_render_stopped_with_sigterm_removes_its_partial_file(tmp_path):
    proc, _ = _start_long_render(tmp_path)
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(20)
    assert proc.returncode != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml"]


@pytest.mark.parametrize("block", [1001, 40_000])
def test_the_streamed_file_stems_and_statistics_match_the_kept_audio_whatever_the_chunking(tmp_path, block):
    """Blocks smaller and larger than the 16,384-sample output chunk, a length that is no
    multiple of either: the file holds exactly the kept audio, quantised, and the stems match."""
    from audio.offline.render import CHUNK, Outputs, render_scenario

    kept = render_scenario(demo_scenario("basic"), stems=["master"], keep_audio=True)
    assert kept.samples == round(8.0 * 48_000)  # the basic demo's duration: every sample, no more
    assert kept.samples % CHUNK and kept.samples % block and kept.audio.shape[0] == kept.samples
    out = tmp_path / "mix.wav"
    res = render_scenario(
        demo_scenario("basic"),
        block=block,
        outputs=Outputs(audio=out, stems_dir=tmp_path / "stems", stems=["master"]),
    )
    want = np.clip(np.rint(kept.audio * np.float32(32767.0)), -32768, 32767).astype(np.int16)
    got, _ = sf.read(out, dtype="int16")
    assert np.array_equal(got, want)
    stem, _ = sf.read(tmp_path / "stems" / "master.wav", dtype="int16")
    assert np.array_equal(stem, want)
    flat = kept.audio.astype(np.float64).ravel()
    assert res.peak == float(np.abs(flat).max())
    assert res.rms == pytest.approx(float(np.sqrt(np.mean(flat**2))), rel=1e-12)


def test_the_summary_times_the_set_up_apart_from_the_render():
    from audio.offline.render import render_scenario, summary_text

    res = render_scenario(demo_scenario("basic"))
    assert res.setup_seconds > 0 and res.seconds_taken > 0
    text = summary_text(res)
    assert f"set up in {res.setup_seconds:.2f} s, rendered in {res.seconds_taken:.2f} s" in text
    assert f"({res.duration / res.seconds_taken:.1f}x real time)" in text


def test_the_console_entry_exits_with_mains_status_and_its_files_complete(tmp_path):
    out = tmp_path / "basic.wav"
    ok = subprocess.run(
        [sys.executable, "-m", "audio", "demo", "--which", "basic", "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert ok.returncode == 0, ok.stderr
    assert "rendered in" in ok.stdout and sf.info(out).frames > 0
    bad = subprocess.run(
        [sys.executable, "-m", "audio", "render", str(tmp_path / "missing.toml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_pcm16_quantisation_is_numpys_rint_clip_expression_sample_for_sample():
    from audio.core.outputs import _to_pcm16

    rng = np.random.default_rng(3)
    halves = (np.arange(-40, 40, dtype=np.float32) + np.float32(0.5)) / np.float32(32767.0)
    x = np.concatenate(
        [rng.uniform(-1.2, 1.2, 20_000).astype(np.float32), halves, np.float32([1.0, -1.0, 3e38, -3e38, 0.0])]
    ).reshape(-1, 1)
    x = np.repeat(x, 2, axis=1)
    with np.errstate(over="ignore"):  # +-3e38 scale to +-inf, then clip
        want = np.clip(np.rint(x * np.float32(32767.0)), -32768, 32767).astype(np.int16)
    got = np.empty(x.shape, np.int16)
    _to_pcm16(x, got)
    assert np.array_equal(got, want)
    assert {int(v) for v in got.ravel()} >= {32767, -32768}

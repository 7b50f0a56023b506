"""Outputs a user can trust (issue 19): checked before any work, never written over another
output, a link or a device, '-' for standard output and input, a full disk is one line."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.cli import main
from audio.core.errors import OutputError
from audio.core.outputs import AudioSink, AudioStats, atomic_path, open_output, remove_stale_partials
from audio.offline.scenario import demo_scenario

ROOT = Path(__file__).resolve().parents[2]
BASIC = str(demo_scenario("basic"))


def _cli(*args: str, stdin: bytes | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "audio", *args], input=stdin, capture_output=True, cwd=cwd, env=env
    )


def test_two_outputs_on_one_file_are_refused_before_rendering(tmp_path, capsys):
    out = tmp_path / "x.wav"
    assert main(["render", BASIC, "-o", str(out), "--log", str(out)]) == 2
    assert main(["render", BASIC, "-o", str(out), "--capture", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "both -o and --log" in err and "both -o and --capture" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_an_output_through_a_link_to_another_output_is_the_same_file(tmp_path, capsys):
    (tmp_path / "link.wav").symlink_to(tmp_path / "mix.wav")
    args = ["render", BASIC, "-o", str(tmp_path / "mix.wav"), "--log", str(tmp_path / "link.wav")]
    assert main(args) == 2
    assert "would write" in capsys.readouterr().err


def test_a_log_named_like_a_stem_is_refused(tmp_path, capsys):
    st = tmp_path / "st"
    assert (
        main(
            [
                "render",
                BASIC,
                "-o",
                str(tmp_path / "m.wav"),
                "--stems",
                str(st),
                "--log",
                str(st / "master.wav"),
            ]
        )
        == 2
    )
    assert "master stem" in capsys.readouterr().err


@pytest.mark.slow
def test_pictures_without_an_extension_are_png_and_unknown_ones_are_refused(tmp_path, capsys):
    t, sp = tmp_path / "t", tmp_path / "sp"
    assert main(["render", BASIC, "-q", "--timeline", str(t), "--spectrogram", str(sp)]) == 0
    assert t.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and sp.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (
        main(["render", BASIC, "-q", "-o", str(tmp_path / "x.wav"), "--timeline", str(tmp_path / "t.bmp")])
        == 2
    )
    assert "'.bmp'" in capsys.readouterr().err and not (tmp_path / "x.wav").exists()


@pytest.mark.slow
def test_dash_is_standard_output_for_audio_as_wav_and_for_the_log():
    res = _cli("render", BASIC, "-o", "-")
    assert res.returncode == 0, res.stderr
    assert res.stdout[:4] == b"RIFF" and b"WAVE" in res.stdout[:12]
    assert b"voices started" in res.stderr  # the summary moves out of the way
    res = _cli("render", BASIC, "--log", "-", "-q")
    lines = res.stdout.decode().splitlines()
    assert res.returncode == 0 and len(lines) == 5 and all(json.loads(ln)["system"] == "play" for ln in lines)


def test_two_outputs_on_standard_output_are_refused(capsys):
    assert main(["render", BASIC, "-o", "-", "--log", "-"]) == 2
    assert "<standard output>" in capsys.readouterr().err


@pytest.mark.slow
def test_dash_is_standard_input_for_a_scenario_and_a_capture(tmp_path):
    scn = Path(BASIC)
    res = _cli(
        "render",
        "-",
        "-o",
        str(tmp_path / "a.wav"),
        "--capture",
        "-",
        "-q",
        stdin=scn.read_bytes(),
        cwd=scn.parent,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[0])["capture"] == "barkbus"
    again = _cli(
        "render", "--replay", "-", "-o", str(tmp_path / "b.wav"), "-q", stdin=res.stdout, cwd=scn.parent
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "a.wav").read_bytes() == (tmp_path / "b.wav").read_bytes()


def test_a_symlinked_output_writes_its_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert main(["render", BASIC, "-q", "--log", str(link)]) == 0
    assert link.is_symlink() and target.read_text().count("\n") == 5


def test_a_fifo_is_written_through_never_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    with open_output(fifo) as fh:
        fh.write("hello\n")
    reader.join(10)
    assert got == [b"hello\n"] and fifo.is_fifo()


def test_a_character_device_is_written_through_never_replaced(tmp_path):
    assert main(["render", BASIC, "-q", "-o", os.devnull, "--log", str(tmp_path / "l.jsonl")]) == 0
    assert Path(os.devnull).is_char_device()
    assert not any(p.name.startswith(".null") for p in Path(os.devnull).parent.iterdir())


def test_a_failed_write_is_one_line_naming_the_path_and_leaves_no_partial(tmp_path):
    out = tmp_path / "t.png"
    with (
        pytest.raises(OutputError, match=r"t\.png: cannot write \(No space left on device\)"),
        atomic_path(out) as tmp,
    ):
        tmp.write_bytes(b"x")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_file_size_limit_mid_audio_is_one_line_exit_2_and_no_partial(tmp_path):
    code = (
        "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN);"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (200000, 200000));"
        "from audio.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, "-c", code, "render", BASIC, "-q", "-o", str(tmp_path / "x.wav")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert (
        res.returncode == 2
        and res.stderr == f"barkbus: error: {tmp_path / 'x.wav'}: cannot write (File too large)\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting a tmpfs needs root")
def test_a_full_disk_is_no_space_left_exit_2_and_no_partial(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        res = _cli("render", BASIC, "-q", "-o", str(disk / "x.wav"))
        assert res.returncode == 2
        assert (
            res.stderr.decode()
            == f"barkbus: error: {disk / 'x.wav'}: cannot write (No space left on device)\n"
        )
        assert list(disk.iterdir()) == []
    finally:
        subprocess.run(["umount", str(disk)])


def test_stale_partials_of_a_dead_run_are_removed_and_a_live_runs_kept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".x.partial-{dead.pid}.wav"
    live = tmp_path / f".x.partial-{os.getppid()}.wav"
    other = tmp_path / f".y.partial-{dead.pid}.wav"
    for p in (stale, live, other):
        p.write_bytes(b"partial")
    assert remove_stale_partials(tmp_path / "x.wav") == [stale]
    assert live.exists() and other.exists() and not stale.exists()


def test_missing_folders_are_created_and_removed_again_when_the_write_fails(tmp_path):
    sink = AudioSink(tmp_path / "a" / "b" / "x.wav", 48000, 2)
    sink.write(np.zeros((10, 2), np.float32))
    sink.discard()
    assert list(tmp_path.iterdir()) == []
    assert main(["render", BASIC, "-q", "-o", str(tmp_path / "new" / "x.wav")]) == 0
    assert sf.info(tmp_path / "new" / "x.wav").frames == 8 * 48000


def test_stats_count_full_scale_samples_and_the_first_frame():
    x = np.zeros((100, 2), np.float32)
    x[30, 1] = 1.0
    x[31, 0] = -1.5
    x[90, :] = 0.99
    st = AudioStats()
    st.add(x[:50])
    st.add(x[50:])
    assert (st.clipped, st.first_clip) == (2, 30)
    st2 = AudioStats()
    st2.add(x[40:])
    assert (st2.clipped, st2.first_clip) == (0, None)


def test_stats_peak_and_sum_of_squares_match_numpy_and_a_nan_sample_gives_a_nan_peak():
    x = (np.random.default_rng(3).standard_normal((1001, 2)) * 0.3).astype(np.float32)
    st = AudioStats()
    st.add(x)
    assert st.peak == float(np.abs(x).max())
    assert st.sum_sq == pytest.approx(float(np.sum(x.astype(np.float64) ** 2)), rel=1e-13)
    x[500, 1] = np.nan
    st.add(x)
    assert np.isnan(st.peak)


def _loud(tmp_path: Path) -> Path:
    scn = tmp_path / "loud.toml"
    shutil.copy(Path(BASIC).parent / "watch_it.flac", tmp_path)
    scn.write_text(
        '[scenario]\nduration = 2.0\n[[emitter]]\nid = "a"\nposition = [0.0, 0.0, 1.0]\n'
        '[[event]]\nt = 0.0\ntype = "play"\nemitter = "a"\nfile = "watch_it.flac"\ngain = 64.0\n'
    )
    return scn


def test_clipping_is_reported_and_strict_fails_on_it(tmp_path, capsys):
    scn = _loud(tmp_path)
    assert main(["render", str(scn), "-o", str(tmp_path / "x.wav")]) == 0
    out = capsys.readouterr().out
    assert "CLIPPED:" in out
    assert main(["render", str(scn), "-o", str(tmp_path / "x.wav"), "--strict"]) == 1
    assert "clipped samples" in capsys.readouterr().err
    assert main(["render", str(scn), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["clipped"] > 0 and summary["first_clip_seconds"] >= 0.0 and not summary["silent"]


def test_an_all_silent_output_is_reported_and_strict_fails_on_it(tmp_path, capsys):
    scn = tmp_path / "quiet.toml"
    scn.write_text("[scenario]\nduration = 0.5\n")
    assert main(["render", str(scn)]) == 0
    assert "SILENT" in capsys.readouterr().out
    assert main(["render", str(scn), "--strict"]) == 1
    assert "all-silent output" in capsys.readouterr().err


def test_quiet_prints_nothing_and_json_one_object(tmp_path, capsys):
    assert main(["render", BASIC, "-q", "-o", str(tmp_path / "x.wav")]) == 0
    assert capsys.readouterr().out == ""
    assert main(["render", BASIC, "--json", "-o", str(tmp_path / "x.wav")]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and json.loads(out)["voices_started"] == 3


def test_stems_cover_every_bus_with_voices_in_the_mix_format(tmp_path):
    from audio.offline.render import Outputs, render_scenario

    st = tmp_path / "st"
    render_scenario(demo_scenario("sylpheed"), outputs=Outputs(audio=tmp_path / "m.flac", stems_dir=st))
    assert sorted(p.name for p in st.iterdir()) == ["master.flac", "radio.flac"]
    radio, _ = sf.read(st / "radio.flac")
    assert np.abs(radio).max() > 0.01  # every Sylpheed voice goes through the radio bus


def test_the_demo_writes_one_capture_per_game(tmp_path, monkeypatch):
    import audio.offline.scenario as scenario

    monkeypatch.setattr(scenario, "demo_names", lambda: ["one", "two", "basic"])
    monkeypatch.setattr(scenario, "demo_scenario", lambda name: Path(BASIC))
    assert main(["demo", "-q", "-o", str(tmp_path / "d.wav"), "--capture", str(tmp_path / "cap.jsonl")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cap-one.jsonl",
        "cap-two.jsonl",
        "d-one.wav",
        "d-two.wav",
    ]


def test_argument_errors_are_one_line_without_usage_and_debug_goes_anywhere(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["render", BASIC, "--block", "zero"])
    err = capsys.readouterr().err
    assert (
        exc.value.code == 2
        and err.count("\n") == 1
        and err.startswith("barkbus: error: ")
        and "usage" not in err
    )
    assert main(["render", BASIC, "-o", str(tmp_path / "x.bmp"), "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.splitlines()[-1].startswith("barkbus: error: ")


def test_skate_ls_of_an_unknown_voice_is_an_error_with_a_suggestion(capsys):
    assert main(["skate", "ls", "--voice", "busmX"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'busm1'" in err


def test_skate_decode_writes_by_extension_and_pictures_default(tmp_path, capsys):
    assert main(["skate", "ls"]) == 0
    clip = capsys.readouterr().out.split()[0]
    assert main(["skate", "decode", clip, "-o", str(tmp_path / "dec")]) == 2  # no extension, not a device
    assert "extension '(none)'" in capsys.readouterr().err
    assert main(["skate", "decode", clip, "-o", str(tmp_path / "dec.flac")]) == 0
    assert sf.info(tmp_path / "dec.flac").format == "FLAC"


def test_skate_tuning_dash_is_standard_output_and_deep_nesting_is_one_line(tmp_path, capsys):
    assert main(["skate", "tuning", "-o", "-"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("format") and "wrote" not in out.err and not Path("-").exists()
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["skate", "tuning", str(deep)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deeply" in err


def test_an_interrupted_render_leaves_no_stems_folder_and_no_partials(tmp_path, monkeypatch):
    from audio.offline import render

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(render, "_run", interrupted)
    st = tmp_path / "new" / "st"
    assert main(["render", BASIC, "-o", str(tmp_path / "x.flac"), "--stems", str(st)]) == 130
    assert list(tmp_path.iterdir()) == []


def test_the_next_render_of_a_name_removes_a_killed_runs_partial(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".x.partial-{dead.pid}.wav"
    stale.write_bytes(b"RIFF")
    assert main(["render", BASIC, "-q", "-o", str(tmp_path / "x.wav")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.wav"]


def test_graph_list_and_skate_ls_print_one_json_object(capsys):
    assert main(["graph", "list", "--json"]) == 0
    graphs = json.loads(capsys.readouterr().out)["graphs"]
    assert {"radio", "starlancer_radio_voice", "radiata_dialogue_voice"} <= {g["name"] for g in graphs}
    assert main(["skate", "ls", "--voice", "busm1", "--json"]) == 0
    clips = json.loads(capsys.readouterr().out)["clips"]
    assert clips and all("_busm1_" in c["name"] for c in clips)

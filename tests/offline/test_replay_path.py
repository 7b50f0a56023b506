"""One replay path: ``render --replay`` and the port rebuild the engine a capture header describes
(layout, sample rate, block, seed, installs relative to the capture) and re-post its events."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.core.capture import post_captured, read_capture, replay
from audio.core.errors import BarkbusError
from audio.offline.render import Outputs, render_replay, render_scenario
from audio.offline.scenario import demo_scenario, load_scenario, replay_scenario
from audio.port import open_system
from audio.port.api import engine_for_capture
from audio.port.events import PortError

ROOT = Path(__file__).resolve().parents[2]
RADIATA_DEMO = ROOT / "audio" / "games" / "radiata" / "demo"


def test_a_5_1_capture_replays_to_the_identical_6_channel_file(tmp_path):
    scn = load_scenario(demo_scenario("basic"))
    scn.layout, scn.duration = "5.1", 2.0  # the document itself says nothing of the layout
    first, again, cap = tmp_path / "first.wav", tmp_path / "again.wav", tmp_path / "six.jsonl"
    render_scenario(scn, capture=cap, outputs=Outputs(audio=first))
    render_replay(cap, outputs=Outputs(audio=again))
    info = sf.info(again)
    assert (info.channels, info.samplerate, info.frames) == (6, 48000, 96000)
    played, _ = sf.read(first, dtype="float32")
    assert np.abs(played).max() > 0.01
    assert again.read_bytes() == first.read_bytes()


def test_the_port_builds_the_same_engine_as_render_replay_from_a_header(tmp_path):
    scn = load_scenario(demo_scenario("basic"))
    scn.layout, scn.duration = "5.1", 1.0
    cap = tmp_path / "six.jsonl"
    first = render_scenario(scn, capture=cap)
    header, events = read_capture(cap)
    eng = engine_for_capture(header, cap)
    assert (eng.channels, eng.sample_rate) == (6, 48000)
    out = replay(eng, events, header["samples"], block=eng.config.block)
    assert first.audio is not None and out.tobytes() == first.audio.tobytes()


def test_the_header_sample_rate_block_and_layout_build_the_engine(tmp_path):
    header = {"capture": "barkbus", "sample_rate": 44100, "block": 128, "layout": "5.1", "seed": 7}
    _, eng = replay_scenario({**header, "game": "tone"}, tmp_path / "c.jsonl")
    assert (eng.sample_rate, eng.config.block, eng.channels, eng.config.seed) == (44100, 128, 6, 7)


def test_a_bad_header_is_one_error_naming_the_field(tmp_path):
    with pytest.raises(BarkbusError, match=r"header\.layout"):
        replay_scenario({"capture": "barkbus", "layout": "7.1", "game": "tone"})
    with pytest.raises(PortError, match=r"header\.sample_rate"):
        engine_for_capture({"capture": "barkbus", "sample_rate": 100, "game": "tone"})


def _live(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "audio.port.live", "live", "--no-audio", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_a_live_capture_at_44_1_khz_replays_at_44_1_khz_identical_to_its_record(tmp_path):
    cap, wav = tmp_path / "live.jsonl", tmp_path / "live.wav"
    args = ["--scenario", str(demo_scenario("basic")), "--rate", "44100", "--seconds", "1.5"]
    r = _live(tmp_path, *args, "--capture", str(cap), "--record", str(wav))
    assert r.returncode == 0, r.stderr
    played, sample_rate = sf.read(wav, dtype="float32")
    assert sample_rate == 44100 and sf.info(wav).subtype == "FLOAT"
    header, events = read_capture(cap)
    assert header["sample_rate"] == 44100 and header["samples"] == played.shape[0] >= 1.2 * 44100
    assert np.abs(played).max() > 0.01  # the scenario's first line starts at 0.2 s
    res = render_replay(cap)
    assert res.sample_rate == 44100
    assert res.audio is not None and res.audio.tobytes() == played.tobytes()


def _talk_folder(folder: Path) -> Path:
    """A folder holding a Radiata install and a scenario naming it relatively."""
    shutil.copytree(RADIATA_DEMO, folder / "install")
    text = (RADIATA_DEMO / "talk.toml").read_text(encoding="utf-8")
    assert 'install = "demo"' in text
    scenario = folder / "talk.toml"
    scenario.write_text(text.replace('install = "demo"', 'install = "install"'), encoding="utf-8")
    return scenario


def test_a_capture_moved_with_its_folder_and_install_replays(tmp_path):
    scenario = _talk_folder(tmp_path / "a")
    res = render_scenario(scenario, capture=tmp_path / "a" / "run.jsonl")
    assert res.audio is not None and float(np.abs(res.audio).max()) > 0.01
    shutil.move(tmp_path / "a", tmp_path / "b")
    again = render_replay(tmp_path / "b" / "run.jsonl")
    assert again.audio is not None and again.audio.tobytes() == res.audio.tobytes()


def test_a_port_capture_moved_with_its_install_folder_rebuilds_there(tmp_path):
    from audio.live.device import write_capture

    _talk_folder(tmp_path / "a")
    port = open_system(game="radiata", install=str(tmp_path / "a" / "install"), seed=2)
    cap = write_capture(tmp_path / "a" / "port.jsonl", {**port.capture_header(), "samples": 0}, [])
    header = json.loads(cap.read_text(encoding="utf-8").splitlines()[0])
    assert header["install"] == "install" and header["doc"]["radiata"]["install"] == "install"
    shutil.move(tmp_path / "a", tmp_path / "b")
    moved = tmp_path / "b" / "port.jsonl"
    eng = engine_for_capture(read_capture(moved)[0], moved)
    assert [type(s).__name__ for s in eng.systems] == [type(s).__name__ for s in port.engine.systems]
    shutil.rmtree(tmp_path / "b" / "install")  # the install really is read from the moved folder
    with pytest.raises(PortError, match="install"):
        engine_for_capture(read_capture(moved)[0], moved)


def test_internal_events_are_not_posted_again():
    class Bus:
        def __init__(self) -> None:
            self.posted: list[int] = []

        def post(self, ev: object, at: int) -> None:
            self.posted.append(at)

    class Eng:
        bus = Bus()

    from audio.games.tone.system import ToneOn

    ev = ToneOn(speaker="a", line="l", freq_hz=300.0, seconds=0.1)
    assert post_captured(Eng(), [(ev, 10, "external"), (ev, 20, "internal"), (ev, 30, "external")]) == 2
    assert Eng.bus.posted == [10, 30]


def test_a_capture_on_standard_output_stores_absolute_paths(tmp_path, monkeypatch):
    from audio.core.capture import portable_header

    monkeypatch.chdir(tmp_path)
    h = portable_header({"scenario": "s.toml", "install": "inst", "allow": ["a"]}, "-")
    assert h == {
        "scenario": str(tmp_path / "s.toml"),
        "install": str(tmp_path / "inst"),
        "allow": [str(tmp_path / "a")],
    }
    beside = portable_header({"scenario": str(tmp_path / "s.toml")}, tmp_path / "c.jsonl")
    assert beside == {"scenario": "s.toml"}

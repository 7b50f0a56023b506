"""Voice-level faults never stop a port or a render; files come only from the allowed roots."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.core.faults import FAULT
from audio.core.paths import PathPolicy, PathRefused
from audio.offline.scenario import PlayEvent
from audio.port import open_system
from audio.port.api import port_paths

DEMO = Path(__file__).resolve().parents[2] / "audio" / "games" / "skate" / "demo"


def corrupt_install(dest: Path, every: int) -> int:
    """The Skate demo install with the SNS block flag of every ``every``-th take overwritten."""
    from audio.games.skate.formats.install import SkateInstall

    shutil.copytree(DEMO, dest)
    inst = SkateInstall.open(dest)
    bank = inst.bank()
    spots = [c.entry.offset + t.offset for c in bank.clips for t in c.takes]
    path = Path(bank.path)
    inst.close()
    with path.open("r+b") as fh:
        for at in spots[::every]:
            fh.seek(at)
            fh.write(b"\xff\xff\xff\xff")
    return len(spots[::every])


def _speak(port) -> None:
    for ped, voice in ((1, "busm1"), (2, "adtf2"), (3, "tenm1")):
        port.emit("skate.spawn", ped=ped, voice=voice, position=(0.0, 0.0, 3.0 + ped))
    for i, v in enumerate([6, 10, 14, 20, 23, 51, 53] * 2):
        for ped in (1, 2, 3):
            port.emit("skate.value", t=0.5 + 0.5 * i, ped=ped, value=v)


@pytest.mark.parametrize("every", [1, 2])
def test_takes_that_do_not_decode_cost_their_voice_only_and_reach_on_fault(tmp_path, every):
    broken = corrupt_install(tmp_path / "install", every)
    port = open_system("skate", install=str(tmp_path / "install"), seed=1)
    seen = []
    port.on_fault(seen.append)
    _speak(port)
    audio = port.advance(8.0)
    faults = [d for d in port.bus.decisions if d.outcome == FAULT]
    started = [d for d in port.bus.decisions if d.outcome == "Started"]
    assert broken > 10 and faults and len(seen) == len(faults) == port.faults.count
    for d in faults:
        assert d.system == "skate.speech" and d.detail["kind"] == "decode" and d.detail["offset"] == 0
        assert "livingworldspeech.big+" in d.detail["file"] and "SNS block flag" in d.detail["reason"]
        assert {"ped", "clip", "take"} <= set(d.detail)
    if every == 1:
        assert started == [] and not audio.any()  # nothing decodes: silence, no crash
    else:
        assert started and np.abs(audio).max() > 0.01  # the good takes still play
    assert port.engine.disabled == {}
    assert not any(port.is_speaking(p) for p in (1, 2, 3)) or started


def test_a_render_of_a_scenario_on_a_corrupt_install_completes_and_counts_the_faults(tmp_path):
    from audio.offline.render import render_scenario

    corrupt_install(tmp_path / "install", 2)
    text = (DEMO / "plaza.toml").read_text(encoding="utf-8")
    scn = tmp_path / "plaza.toml"
    scn.write_text(text.replace('install = "."', f'install = "{tmp_path / "install"}"'), encoding="utf-8")
    assert f'install = "{tmp_path / "install"}"' in scn.read_text(encoding="utf-8")
    shutil.copy(DEMO / "tuning.toml", tmp_path / "tuning.toml")
    res = render_scenario(scn)
    counts = res.outcome_counts()
    assert counts[("skate.speech", FAULT)] > 0 and counts[("skate.speech", "Started")] > 0
    assert np.abs(res.audio).max() > 0.01


@pytest.fixture
def files(tmp_path):
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    t = np.arange(4800) / 48000.0
    sf.write(allowed / "good.wav", (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 48000)
    sf.write(outside / "secret.wav", (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 48000)
    (allowed / "bad.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEfmt \x02\x00\x00\x00\x01\x00")
    (allowed / "link.wav").symlink_to(outside / "secret.wav")
    return {"allowed": allowed, "outside": outside}


def _play_port(files):
    port = open_system("tone", allow=[str(files["allowed"])])
    port.emit("world.emitter", emitter="radio", position=(1.0, 0.0, 3.0))
    return port


def test_play_of_a_file_under_an_allowed_folder_plays(files):
    port = _play_port(files)
    port.post(PlayEvent(t=0.05, emitter="radio", file=str(files["allowed"] / "good.wav")))
    audio = port.advance(0.2)
    assert [d.outcome for d in port.bus.decisions if d.system == "play"] == ["Started", "Finished"]
    assert np.abs(audio).max() > 0.05 and port.faults.count == 0


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../outside/secret.wav", "link.wav", "outside/../../outside/secret.wav"]
)
def test_files_outside_the_allowed_roots_are_refused_logged_and_counted(files, name):
    port = _play_port(files)
    path = name if name.startswith("/") else str(files["allowed"] / name)
    with pytest.raises(PathRefused, match="outside the allowed folders"):
        port.post(PlayEvent(emitter="radio", file=path))
    assert port.paths.refused == 1 and not any(isinstance(it.event, PlayEvent) for it in port.inbox.drain())
    audio = port.advance(0.1)
    (d,) = [d for d in port.bus.decisions if d.outcome == FAULT]
    assert d.system == "port" and d.detail["kind"] == "refused" and d.detail["file"] == path
    assert not audio.any()


@pytest.mark.parametrize("name,kind", [("bad.wav", "decode"), ("missing.wav", "missing")])
def test_a_play_file_that_is_missing_or_does_not_decode_is_a_fault_and_the_rest_plays(files, name, kind):
    port = _play_port(files)
    port.post(PlayEvent(t=0.0, emitter="radio", file=str(files["allowed"] / name)))
    port.post(PlayEvent(t=0.05, emitter="radio", file=str(files["allowed"] / "good.wav")))
    port.post(PlayEvent(t=0.06, emitter="nowhere", file=str(files["allowed"] / "good.wav")))
    audio = port.advance(0.2)
    faults = [d for d in port.bus.decisions if d.outcome == FAULT]
    assert [(d.system, d.detail["kind"]) for d in faults] == [("play", kind), ("play", "event")]
    assert faults[0].detail["file"] == str(files["allowed"] / name)
    assert "no emitter 'nowhere'" in faults[1].detail["reason"]
    assert sum(d.outcome == "Started" for d in port.bus.decisions) == 1 and np.abs(audio).max() > 0.05


def test_the_play_system_refuses_outside_files_itself_when_an_event_bypasses_the_port(files):
    port = _play_port(files)
    port.bus.post(PlayEvent(t=0.0, emitter="radio", file=str(files["outside"] / "secret.wav")))
    port.advance(0.05)
    (d,) = [d for d in port.bus.decisions if d.outcome == FAULT]
    assert d.system == "play" and d.detail["kind"] == "refused"


def test_a_relative_file_is_taken_from_the_scenario_folder_and_recorded_absolute(tmp_path, files):
    policy = port_paths(None, files["allowed"] / "s.toml", {}, ())
    assert policy.check("good.wav") == (files["allowed"] / "good.wav").resolve()
    with pytest.raises(PathRefused):
        policy.check("../outside/secret.wav")


def test_the_path_policy_resolves_dots_and_links_and_counts():
    policy = PathPolicy([], bundled=True)
    demo_file = DEMO / "plaza.toml"
    assert policy.check(str(demo_file)) == demo_file.resolve()
    for bad in ("", "a\x00b", "x" * 5000, str(DEMO / ".." / ".." / ".." / "cli.py"), "/"):
        with pytest.raises(PathRefused):
            policy.check(bad)
    assert policy.refused == 5 and policy.allowed == 1 and policy.allows(str(demo_file))
    assert policy.refused == 5  # allows() is not counted


def test_a_host_callback_that_raises_is_logged_and_counted_never_stops_the_port():
    port = open_system("tone")
    port.on_decision(lambda d: 1 / 0)
    port.on_subtitle(lambda s: [][1])
    port.emit("tone.on", speaker="ann", line="x", seconds=0.1)
    port.advance(0.5)
    assert port.callback_errors == 2 and not port.is_speaking("ann")  # Started + Finished


def test_a_ports_engine_isolates_its_systems():
    port = open_system("tone")
    tone = port.engine.systems[-1]

    def broken(frame, engine):
        raise RuntimeError("boom")

    tone.tick = broken
    port.emit("world.emitter", emitter="x", position=(0.0, 0.0, 1.0))
    port.advance(0.1)
    assert tone.name in port.engine.disabled and port.faults.by_kind["system"] == 1
    assert port.advance(0.1).shape == (4800, 2)
    assert os.environ.get("NEVER") is None


@pytest.mark.parametrize("name", ["../outside/secret.wav", "/etc/passwd", "/dev/zero", "sub"])
def test_a_radiata_talk_file_from_outside_its_rmf_folder_is_never_opened(files, name):
    from audio.core.errors import FormatError
    from audio.games.radiata.system import RmfSource

    (files["allowed"] / "sub").mkdir()
    src = RmfSource(root=files["allowed"])
    with pytest.raises(FormatError, match="inside the RMF folder"):
        src.file(name)

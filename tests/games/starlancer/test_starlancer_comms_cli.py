"""The comms extraction recipe and the ``barkbus starlancer`` commands."""

from __future__ import annotations

import argparse
import json

from starlancer_fakes import SPEC_BLOCK, small_mission

from audio.containers import refpack
from audio.games.starlancer.cli import register
from audio.games.starlancer.formats.dte import read_dte, write_dte
from audio.games.starlancer.formats.hog import read_hog, write_hog
from audio.games.starlancer.script.comms import mission_comms


def run(*argv):
    ap = argparse.ArgumentParser(prog="barkbus")
    register(ap.add_subparsers(dest="cmd", required=True))
    args = ap.parse_args(["starlancer", *map(str, argv)])
    return args.func(args)


def test_comms_events_of_the_small_mission():
    dte = read_dte(write_dte(small_mission()))
    hog = read_hog(write_hog([("MS1_BAN_001", b"x"), ("ms1_ins_001", b"y")]))
    res = mission_comms(dte, "mission99", hog)
    by = [(e.routine, e.command) for e in res.events]
    assert by[:4] == [
        ("part Start", "DisableGenericComms"),
        ("part Start", "CommsFromPilotOnce"),
        ("part Start", "WaitForMovie"),
        ("part Start", "DisableGenericComms"),
    ]
    pilot = res.events[1]
    assert (pilot.speaker, pilot.member, pilot.member_found, pilot.film_flags, pilot.mode) == (
        "pilot 20",
        "ms1_ins_001",
        True,
        6,
        "now",
    )
    t0 = [e for e in res.events if e.routine == "trigger 0"]
    assert (t0[0].condition, t0[0].subject, t0[0].speaker, t0[0].film_flags) == (
        "Destroyed",
        "(A1)Naginata",
        "ship(0)=(A1)Naginata",
        5,
    )
    once = next(e for e in t0 if e.command == "CommsFromShipOnce")
    assert once.guard == ["equal(global(0)=(GV)convoykilled, byte(1))"] and once.member_found is False
    t1 = [e for e in res.events if e.routine == "trigger 1"]
    assert t1[1].speaker.startswith("the triggering event's ship") and t1[1].subject == "Bandit"
    assert [(e.routine, e.kind, e.part) for e in res.edges] == [
        ("part Start", "spawn", "Later"),
        ("trigger 0", "call", "Later"),
    ]


def test_cli_disasm_raw_json(tmp_path, capsys):
    p = tmp_path / "block.bin"
    p.write_bytes(SPEC_BLOCK)
    assert run("disasm", "--raw", p, "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    ins = {i["ip"]: i for i in doc["instructions"]}
    assert ins[36]["target"] == 52 and ins[23]["call"] == "CommsFromShip" and doc["slack"] == [[55, 56]]


def test_cli_disasm_mission_in_a_hog_prints_every_routine(tmp_path, capsys):
    hog = tmp_path / "resource.hog"
    hog.write_bytes(write_hog([("mission99.dte", refpack.encode(write_dte(small_mission())))]))
    assert run("disasm", hog) == 0
    out = capsys.readouterr().out
    assert "== trigger 0 [Destroyed on (A1)Naginata]" in out and "== part Start" in out
    assert "CommsFromShip(ship=ship(0)=(A1)Naginata" in out


def test_cli_comms_json(tmp_path, capsys):
    m = tmp_path / "mission99.dte"
    m.write_bytes(write_dte(small_mission()))
    assert run("comms", m, "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mission"] == "mission99.dte" and any(
        e["command"] == "CommsFromShipOnce" for e in doc["events"]
    )


def test_cli_hog_lists_members(tmp_path, capsys):
    p = tmp_path / "msspeech.hog"
    p.write_bytes(write_hog([("A", b"1"), ("B", b"22")], filler=True))
    assert run("hog", p) == 0
    assert "1 filler record(s) skipped" in capsys.readouterr().out


def test_cli_encode_then_decode_a_wav(tmp_path, capsys):
    import numpy as np
    import soundfile as sf

    t = np.arange(4410) / 22050
    x = (0.3 * np.sin(2 * np.pi * 220 * t) * np.hanning(len(t))).astype(np.float32)
    src, ut, out = tmp_path / "in.wav", tmp_path / "x.ut", tmp_path / "out.wav"
    sf.write(src, x, 22050, subtype="PCM_16")
    assert run("encode", src, "-o", ut) == 0
    assert "waveform SNR" in capsys.readouterr().out
    assert run("decode", ut, "-o", out) == 0
    y, sample_rate = sf.read(out)
    assert sample_rate == 22050 and len(y) == len(x)


def test_cli_comms_on_the_demo_install(capsys):
    from audio.games.starlancer.scenario import demo_root

    res = demo_root() / "resource.hog"
    if not res.exists():
        return
    assert run("comms", res) == 0
    out = capsys.readouterr().out
    assert "CommsFromPilotOnce" in out and "member ms99_ins_001" in out and "MISSING" not in out

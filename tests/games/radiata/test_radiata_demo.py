"""The demo install: built by our writers, small, dumps, decodes, and renders clips in time with the text."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from audio.containers.vag import decode_vag
from audio.games.radiata.cli import demo_rmf, register
from audio.games.radiata.formats.rmf import read_rmf
from audio.games.radiata.formats.voicetable import load_voicetable
from audio.games.radiata.scenario import demo_root

DEMO = demo_root()
needs_demo = pytest.mark.skipif(
    not (DEMO / "town.rmf").exists(), reason="demo install not built (python tools/build_radiata_demo.py)"
)


@needs_demo
def test_demo_is_small_and_in_our_formats():
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert total < 200_000
    f = read_rmf((DEMO / "town.rmf").read_bytes(), "town.rmf")
    assert f.region == "EN" and [p is None for p in f.packets] == [False, True, False, False]
    assert f.packets[0].speakers[2].character_id == 9901
    gate = f.script(0)
    assert gate.prologue and gate.ended and gate.mismatches() == []
    waits = [(m.wait.cursor, m.wait.infinite) for m in gate.messages]
    assert (True, False) in waits and (False, False) in waits and any(m.signals for m in gate.messages)
    assert any(not m.voices for m in gate.messages) and any(m.voices for m in gate.messages)
    assert f.script(2).messages[1].choice.count == 2


@needs_demo
def test_every_voice_table_clip_decodes_as_vag():
    t = load_voicetable(DEMO / "voices.toml")
    assert len(t.entries) == 5
    for e in t.entries:
        pcm, sample_rate = decode_vag(e.audio.read_bytes(), str(e.audio))
        assert sample_rate == 22_050 and len(pcm) > sample_rate // 2 and np.abs(pcm).max() > 0.3


@needs_demo
def test_dump_defaults_to_the_demo(capsys):
    ap = argparse.ArgumentParser(prog="barkbus")
    register(ap.add_subparsers(dest="cmd", required=True))
    args = ap.parse_args(["radiata", "dump", "--json"])
    assert args.func(args) == 0 and demo_rmf().exists()
    out = json.loads(capsys.readouterr().out)
    assert out["absent"] == [1] and len(out["records"]) == 8 and out["mismatches"] == []


@needs_demo
def test_demo_scenario_renders_clips_in_time_with_the_text():
    from audio.offline.render import render_scenario

    res = render_scenario(DEMO / "talk.toml")
    talk = [d for d in res.decisions if d.system == "radiata.talk"]
    opened = {d.detail["message"]: d.at for d in talk if d.outcome == "Message"}
    started = [(d.at, d.detail["line"]) for d in talk if d.outcome == "Started"]
    assert len(started) == 5 and all(opened[line.rsplit(":", 1)[0]] == at for at, line in started)
    assert [d.detail["reason"] for d in talk if d.outcome == "TalkEnd"] == ["End", "End"]
    assert [d.detail["option_text"] for d in talk if d.outcome == "Chosen"] == ["Yes, sir!"]
    assert sum(d.outcome == "Advanced" for d in talk) == 2 and any(d.outcome == "Signal" for d in talk)
    for tag, _, start, end in res.voices:
        seg = res.audio[start:end]
        assert tag.startswith("radiata:") and np.sqrt(np.mean(seg**2)) > 0.01


@needs_demo
def test_a_batch_worker_decodes_each_clip_and_reads_each_packet_script_once(monkeypatch):
    from audio.core import memo
    from audio.games.radiata import system
    from audio.offline.batch.runner import simulate
    from audio.offline.scenario import demo_scenario

    decoded: list[str] = []
    real = system.decode_clip
    monkeypatch.setattr(system, "decode_clip", lambda path: decoded.append(path.name) or real(path))
    path = str(demo_scenario("radiata"))
    memo.clear()
    with memo.enabled():
        runs = [simulate(path, seed) for seed in range(3)]
    memo.clear()
    assert decoded and len(decoded) == len(set(decoded))  # the first run decoded, the others kept
    talks = [run.engine.system("radiata.talk") for run in runs]
    assert all(isinstance(t, system.RadiataTalkSystem) and t.rmf is talks[0].rmf for t in talks)
    assert talks[0].rmf.script("town.rmf", 0) is talks[2].rmf.script("town.rmf", 0)

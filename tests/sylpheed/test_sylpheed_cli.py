"""`barkbus sylpheed ...` commands and the demo on the real engine."""
from __future__ import annotations

import argparse

import numpy as np
import pytest
import soundfile as sf

from audio.games.sylpheed.cli import register

from sylpheed_fakes import DEMO, FIXTURES

needs_demo = pytest.mark.skipif(not (DEMO / "dat" / "sound.pak").exists(),
                                reason="demo install not built (python tools/build_sylpheed_demo.py)")


def run(*argv):
    ap = argparse.ArgumentParser(prog="barkbus")
    register(ap.add_subparsers(dest="cmd", required=True))
    args = ap.parse_args(["sylpheed", *map(str, argv)])
    return args.func(args)


@pytest.mark.skipif(not (FIXTURES / "xmadroid.xwb").exists(), reason="xmadroid.xwb fixture absent")
def test_slb_probe_and_decode_a_standalone_wave_bank(tmp_path, capsys):
    assert run("slb-probe", FIXTURES / "xmadroid.xwb") == 0
    assert "DNBW" in capsys.readouterr().out
    out = tmp_path / "e2.wav"
    assert run("slb-decode", FIXTURES / "xmadroid.xwb", "--entry", 2, "-o", out) == 0
    pcm, rate = sf.read(out)
    assert rate == 44_133 and len(pcm) > 10_000


def test_slb_probe_of_junk_exits_1(tmp_path, capsys):
    p = tmp_path / "junk.slb"
    p.write_bytes(b"\x01" * 100)
    assert run("slb-probe", p) == 1
    assert "no decodable audio" in capsys.readouterr().out


@needs_demo
def test_tables_and_cues_on_the_demo(capsys):
    assert run("tables", "--root", DEMO) == 0
    out = capsys.readouterr().out
    assert "self-check len(fields) == Count*4+5: 4/4" in out and "roster agreement: 4/4" in out
    assert "flag=CLEARED" in out
    assert run("cues", "--root", DEMO) == 0
    out = capsys.readouterr().out
    assert "32 of 33 message ids resolve" in out and "MSG_ADAN_789" in out


@needs_demo
def test_demo_scenario_renders_bit_identically_on_the_real_engine():
    from audio.offline.scenario import build_engine, demo_scenario, load_scenario

    def render():
        eng = build_engine(load_scenario(demo_scenario("sylpheed")))
        out = eng.render(48_000 * 9)
        return out, [d for d in eng.bus.decisions if d.system == "sylpheed.chatter"]

    a, da = render()
    b, db = render()
    assert np.array_equal(a, b) and da == db
    assert np.abs(a).max() > 0.05 and np.abs(a).max() < 1.0
    assert any(d.outcome == "Ducked" for d in da)

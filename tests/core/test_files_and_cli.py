"""Scenario and graph files: clear errors; the CLI renders byte-identical files."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from audio.cli import main
from audio.core.errors import GraphError, ScenarioError
from audio.dsp.curves import PeakCurves, fold_azimuth
from audio.dsp.graph import load_graph
from audio.offline.scenario import demo_scenario, load_scenario

GOOD_NODE = '[[node]]\nid = "Rsp0"\nkind = "Rsp0"\n'


@pytest.mark.parametrize(
    "body,match",
    [
        ('[graph]\nname="x"\nkind="voice"\n', "at least one"),
        ('[graph]\nname="x"\nkind="organ"\n' + GOOD_NODE, "graph.kind"),
        (
            '[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE + '[[node]]\nid="a"\nkind="FOO"\n',
            "node 'a', field 'kind'",
        ),
        (
            '[graph]\nname="x"\nkind="voice"\n'
            + GOOD_NODE
            + '[[node]]\nid="a"\nkind="PI20"\nparams={gian=1}\n',
            "field 'params.gian'",
        ),
        (
            '[graph]\nname="x"\nkind="voice"\n'
            + GOOD_NODE
            + '[[node]]\nid="a"\nkind="PI20"\nparams={gain="1"}\n',
            "field 'params.gain': expected `float`, got `str`",
        ),
        (
            '[graph]\nname="x"\nkind="voice"\n'
            + GOOD_NODE
            + '[[node]]\nid="a"\nkind="PI20"\nparams={gian=1}\n',
            r"unknown field \(did you mean 'gain'\?\)",
        ),
        (
            '[graph]\nname="x"\nkind="voice"\n'
            + GOOD_NODE
            + '[[node]]\nid="a"\nkind="Gai0"\nparams={gain=65}\n',
            r"node 'a', field 'params.gain': expected `float` <= 64.0",
        ),
        (
            '[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE + '[[node]]\nid="a"\nkind="PI2O"\n',
            r"unknown node kind 'PI2O' \(did you mean 'PI20'\?\)",
        ),
        ('[graph]\nname="x"\nkind="voise"\n' + GOOD_NODE, r"got 'voise' \(did you mean 'voice'\?\)"),
        ('[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE + "[ducker]\n", "only bus graphs have a ducker"),
        (
            '[graph]\nname="x"\nkind="bus"\n[[node]]\nid="s"\nkind="Sub0"\n[ducker]\nvolume_db=3.0\n',
            r"field 'ducker.volume_db': expected `float` <= 0.0",
        ),
        (
            '[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE + '[[node]]\nid="a"\nkind="Gai0"\ngian=1\n',
            r"node 'a', field 'gian': unknown field",
        ),
        ('[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE + '[[node]]\nid="a"\nkind="Sen0"\n', "field 'to'"),
        (
            '[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE + '[[node]]\nid="a"\nkind="Gai0"\ninput="zz"\n',
            "not an earlier node",
        ),
        ('[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE + GOOD_NODE, "duplicate"),
        (
            '[graph]\nname="x"\nkind="voice"\n'
            + GOOD_NODE
            + '[[node]]\nid="p"\nkind="Pn21"\n[[node]]\nid="q"\nkind="Pn21"\n',
            "multichannel",
        ),
        ("[graph\n", "not valid TOML"),
    ],
)
def test_bad_graph_files_name_file_node_and_field(tmp_path, body, match):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(GraphError, match=match) as exc:
        load_graph(p)
    assert str(p) in str(exc.value)


_PLAY = '[[emitter]]\nid = "a"\n[[event]]\nt = 1\ntype = "play"\nemitter = "a"\nfile = "nope.wav"\n'


@pytest.mark.parametrize(
    "body,where,match",
    [
        ("[scenario]\nseed = 1\n", "scenario", "missing required field `duration`"),
        ('[scenario]\nduration = "long"\n', "scenario.duration", "expected `float`, got `str`"),
        ("[scenario]\nduration = 5\nsed = 1\n", "scenario.sed", "did you mean 'seed'"),
        ("[scenario]\nduration = 5\nseed = 1.5\n", "scenario.seed", "expected `int`, got `float`"),
        ("[scenario]\nduration = nan\n", "scenario.duration", "finite number"),
        (
            "[scenario]\nduration = 5\n[listener]\nposition = [0, inf, 0]\n",
            r"listener.position\[1\]",
            "finite",
        ),
        ("[scenario]\nduration = 5\n[listener]\nposition = [0, 0]\n", "listener.position", "length 3"),
        (
            '[scenario]\nduration = 5\n[[event]]\nt = 1\ntype = "dance"\n',
            r"event\[0\].type",
            "unknown event type 'dance'",
        ),
        (
            '[scenario]\nduration = 5\n[[event]]\nt = 9\ntype = "listener"\nposition = [0, 0, 0]\n',
            r"event\[0\].t",
            "after the end",
        ),
        ("[scenario]\nduration = 5\n" + _PLAY, r"event\[1\].file|event\[0\].file", "not found"),
        (
            '[scenario]\nduration = 5\n[[event]]\nt = 1\ntype = "play"\nemitter = "b"\nfile = "s.toml"\n',
            r"event\[0\].emitter",
            "no \\[\\[emitter\\]\\] with id 'b'",
        ),
        (
            '[scenario]\nduration = 5\n[[emitter]]\nid = "a"\n[[event]]\nt = 1\ntype = "play"\n'
            'emitter = "a"\nfile = "s.toml"\necho_sned = 1.0\n',
            r"event\[0\].echo_sned",
            "did you mean 'echo_send'",
        ),
        (
            '[scenario]\nduration = 5\n[[emitter]]\nid = "a"\n[[emitter]]\nid = "a"\n',
            r"emitter\[1\].id",
            "duplicate",
        ),
        (
            '[scenario]\nduration = 5\n[[emitter]]\nid = "a"\n'
            "path = [{t = 2, position = [0,0,0]}, {t = 1, position = [0,0,0]}]\n",
            r"emitter\[0\].path\[1\].t",
            "must not decrease",
        ),
        ("[scenario]\nduration = 5\n[mystery]\n", "mystery", "unknown field"),
        (
            '[scenario]\nduration = 5\nlayout = "mono"\n',
            "scenario.layout",
            "expected one of 'stereo', '5.1', got 'mono'",
        ),
        ("[scenario]\nduration = 5\nx = " + "[" * 40 + "]" * 40 + "\n", "scenario", "nested|unknown"),
    ],
)
def test_bad_scenarios_name_the_file_and_the_path_to_the_field(tmp_path, body, where, match):
    p = tmp_path / "s.toml"
    p.write_text(body)
    with pytest.raises(ScenarioError, match=match) as exc:
        load_scenario(p)
    assert str(exc.value).startswith(f"{p}: ")
    assert re.search(where, str(exc.value))


def test_a_scenario_that_is_not_text_or_too_big_is_refused_before_parsing(tmp_path):
    wav = tmp_path / "speech.wav"
    wav.write_bytes(b"RIFF\xff\xff\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\xfe\xff")
    with pytest.raises(ScenarioError, match="not UTF-8 text"):
        load_scenario(wav)
    many = tmp_path / "many.toml"
    many.write_text("[scenario]\nduration = 5\n" + '[[event]]\nt = 0\ntype = "listener"\n' * 100_001)
    with pytest.raises(ScenarioError, match="more than 100000 events"):
        load_scenario(many)


def test_peak_curves_hit_the_retail_points_and_fold_azimuth():
    spec = load_graph("skate_stream_voice")
    pc = PeakCurves.from_graph(spec)
    for x, y in zip(spec.curves["peak_centre_hz"].x, spec.curves["peak_centre_hz"].y):
        assert pc.centre_hz(x) == pytest.approx(y)
    assert pc(16384)[0] == pytest.approx(
        4000.0 - (4000 - 2676.428) * (16384 - 15796.47) / (21666.78 - 15796.47)
    )
    f32 = lambda v: float(np.float32(v))  # noqa: E731  (the game's curve points are float32)
    assert pc(0) == (600.0, f32(0.4), 3.0)
    assert pc(32767)[:2] == (600.0, f32(0.1))
    assert fold_azimuth(65535) == 1 and fold_azimuth(32768) == 32768 and fold_azimuth(32767) == 32767
    assert pc(65536 - 5000) == pc(5000)
    assert pc.centre_hz(-10) == 600.0 and pc.gain(40_000) == f32(0.1)


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_cli_render_is_byte_identical_for_the_same_seed_and_any_block(tmp_path, capsys):
    scn = demo_scenario("basic")
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    assert main(["render", str(scn), "-o", str(a)]) == 0
    assert main(["render", str(scn), "-o", str(b), "--block", "100"]) == 0
    assert _sha(a) == _sha(b)
    assert "voices started" in capsys.readouterr().out


def test_cli_reports_scenario_errors_without_a_traceback(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text("[scenario]\n")
    assert main(["render", str(p), "-o", str(tmp_path / "x.wav")]) == 2
    err = capsys.readouterr().err
    assert "missing required field `duration`" in err and len(err.strip().splitlines()) == 1


def test_graph_plot_writes_a_png(tmp_path):
    out = tmp_path / "g.png"
    assert main(["graph", "plot", "skate_stream_voice", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stems_and_log_are_written(tmp_path):
    scn_dir = tmp_path / "scn"
    shutil.copytree(demo_scenario("basic").parent, scn_dir)
    out = tmp_path / "o.flac"
    rc = main(
        [
            "render",
            str(scn_dir / "basic.toml"),
            "-o",
            str(out),
            "--stems",
            str(tmp_path / "st"),
            "--log",
            str(tmp_path / "l.jsonl"),
            "--quiet",
        ]
    )
    assert rc == 0 and out.stat().st_size > 1000
    import soundfile as sf

    master, _ = sf.read(tmp_path / "st" / "master.flac")  # stems take the mix's format
    env, _ = sf.read(tmp_path / "st" / "environment.flac")
    assert master.shape == env.shape and abs(env).max() > 0
    assert (tmp_path / "l.jsonl").read_text().count('"outcome":"Started"') == 3


def test_seed_changes_nothing_where_nothing_is_random():
    from audio.offline.render import render_scenario

    a = render_scenario(demo_scenario("basic"), seed=1).audio
    b = render_scenario(demo_scenario("basic"), seed=999).audio
    assert np.array_equal(a, b)


def test_51_layout_renders_six_channels(tmp_path):
    out = tmp_path / "s.wav"
    assert main(["render", str(demo_scenario("basic")), "-o", str(out), "--layout", "5.1", "--quiet"]) == 0
    import soundfile as sf

    data, sample_rate = sf.read(out)
    assert data.shape[1] == 6 and sample_rate == 48_000
    assert np.all(data[:, 3] == 0)  # nothing is routed to the LFE
    assert np.abs(data[:, 2]).max() > 0  # the centre speaker carries the frontal source


@pytest.mark.parametrize(
    "body,match",
    [
        (
            '[graph]\nname="x"\nkind="voice"\n' + GOOD_NODE.replace("[[node]]", "[[node]]\nx = nan"),
            "finite number",
        ),
        (b'[graph]\nname="\xff"\n', "not valid TOML"),
    ],
)
def test_graph_files_refuse_nan_and_bad_text(tmp_path, body, match):
    p = tmp_path / "g.toml"
    p.write_bytes(body if isinstance(body, bytes) else body.encode())
    with pytest.raises(GraphError, match=match):
        load_graph(p)


def test_a_graph_alias_has_its_base_chain_and_its_own_routes():
    alias, base = load_graph("play_voice"), load_graph("skate_stream_voice")
    assert [n.kind for n in alias.nodes] == [n.kind for n in base.nodes]
    assert [n.to for n in alias.nodes if n.to and n.to.startswith("submix:")] == ["submix:play_echo_submix"]
    assert alias.curves.keys() == base.curves.keys() and alias.name == "play_voice"

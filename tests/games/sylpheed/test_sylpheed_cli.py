"""`barkbus sylpheed ...` commands and the demo on the real engine."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import soundfile as sf
from sylpheed_fakes import DEMO, FIXTURES

from audio.games.sylpheed.cli import register

needs_demo = pytest.mark.skipif(
    not (DEMO / "dat" / "sound.pak").exists(),
    reason="demo install not built (python tools/build_sylpheed_demo.py)",
)


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
    pcm, sample_rate = sf.read(out)
    assert sample_rate == 44_133 and len(pcm) > 10_000


def test_slb_probe_of_junk_exits_1(tmp_path, capsys):
    p = tmp_path / "junk.slb"
    p.write_bytes(b"\x01" * 100)
    assert run("slb-probe", p) == 1
    assert "no decodable audio" in capsys.readouterr().out


@needs_demo
@pytest.mark.parametrize("root", [(), ("--root", DEMO), ("--root", "demo")])
def test_tables_and_cues_default_to_the_demo_install(capsys, root):
    assert run("tables", *root) == 0
    out = capsys.readouterr().out
    assert "self-check len(fields) == Count*4+5: 4/4" in out and "roster agreement: 4/4" in out
    assert "flag=CLEARED" in out
    assert run("cues", *root) == 0
    out = capsys.readouterr().out
    assert "32 of 33 message ids resolve" in out and "MSG_ADAN_789" in out


def cli(*argv):
    """The real ``barkbus`` entry point (its one error handler)."""
    from audio.cli import main

    return main(["sylpheed", *map(str, argv)])


def one_line_error(capsys, *argv, want: str) -> None:
    assert cli(*argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and want in err[0], err


@needs_demo
def test_ls_lists_every_member_named_from_the_install_tables(capsys):
    from audio.games.sylpheed.formats.cues import read_sounds
    from audio.games.sylpheed.formats.pak import read_install_path
    from audio.games.sylpheed.formats.table import read_table

    assert run("ls", "sound") == 0
    out = capsys.readouterr().out.splitlines()
    files = read_sounds(read_table(read_install_path(DEMO, "dat\\tables.pak+eng\\sounds.tbl"))).files
    assert out[0].startswith("dat\\sound.pak: 32 entries (32 named")
    assert sorted(ln.split()[-1] for ln in out[1:]) == sorted(files.values())
    assert run("ls") == 0
    out = capsys.readouterr().out
    assert "dat\\GP_MAIN_GAME_E.pak: 12 entries (12 named" in out and "stage\\UnitGroup_S02.tbl" in out
    assert "Z1 ->" in out and "eng\\sounds.tbl" in out


@needs_demo
def test_ls_marks_members_the_tables_do_not_name(tmp_path, capsys):
    import shutil

    from audio.games.sylpheed.formats.pak import PakArchive, write_pak

    shutil.copytree(DEMO / "dat", tmp_path / "dat")
    arc = PakArchive.open(DEMO / "dat" / "sound.pak")
    entries = {e.id: arc.stored(e.id) for e in arc.entries} | {0x01020304: b"not in any table"}
    write_pak(tmp_path / "dat" / "sound.pak", entries, compress=False)
    assert run("ls", "--root", tmp_path, "dat/sound.pak") == 0
    out = capsys.readouterr().out.splitlines()
    assert "33 entries (32 named" in out[0]
    assert out[-1].split()[0] == "0x01020304" and out[-1].split()[-1] == "?"


@needs_demo
def test_slb_probe_and_decode_take_an_install_member_by_name(tmp_path, capsys):
    assert run("slb-probe", "--root", "demo", "eng\\Voice\\VOICE_ADAN_010.slb") == 0
    out = capsys.readouterr().out
    assert out.startswith("dat\\sound.pak+eng\\Voice\\VOICE_ADAN_010.slb") and "DNBW" in out
    wav = tmp_path / "adan.wav"
    assert run("slb-decode", "--root", "demo", "dat/sound.pak+eng/voice/voice_adan_010.slb", "-o", wav) == 0
    pcm, sample_rate = sf.read(wav)
    assert sample_rate == 24_000 and len(pcm) > sample_rate and np.abs(pcm).max() > 0.05


@needs_demo
def test_a_misspelled_member_gets_one_line_with_a_suggestion(capsys):
    one_line_error(
        capsys,
        "slb-probe",
        "--root",
        "demo",
        "eng\\Voice\\VOICE_ADAN_01.slb",
        want="(did you mean 'eng\\Voice\\VOICE_ADAN_010.slb'?)",
    )
    one_line_error(
        capsys,
        "slb-decode",
        "--root",
        "demo",
        "dat\\sond.pak+eng\\x.slb",
        "-o",
        "x.wav",
        want="(did you mean 'dat\\sound.pak'?)",
    )
    one_line_error(capsys, "ls", "sounds", want="(did you mean 'sound'?)")


def test_missing_files_and_installs_give_one_line(tmp_path, capsys):
    one_line_error(capsys, "slb-probe", tmp_path / "none.slb", want="none.slb: no such file")
    one_line_error(capsys, "tables", "--root", tmp_path, want="not a Project Sylpheed install")
    one_line_error(capsys, "cues", "--root", tmp_path / "gone", want="no dat/ folder")
    one_line_error(capsys, "ls", "--root", tmp_path, want="not a Project Sylpheed install")


@needs_demo
def test_tables_with_an_unknown_stage_gives_one_line(capsys):
    one_line_error(capsys, "tables", "--stage", "S09", want="no stage S09 (have S02)")
    one_line_error(capsys, "tables", "--stage", "nine", want="--stage")


@needs_demo
def test_probing_the_raw_sound_part_probes_each_entry(capsys):
    assert run("slb-probe", DEMO / "dat" / "sound.p00") == 0
    out = capsys.readouterr().out
    assert "unrecognised" not in out
    assert "32 entries; probing each entry" in out and "32 of 32 entries hold decodable audio" in out
    assert len([ln for ln in out.splitlines() if "xwb 'DNBW'" in ln and ".slb:" in ln]) == 32
    assert run("slb-probe", "--root", "demo", "sound") == 0
    assert "32 of 32 entries hold decodable audio" in capsys.readouterr().out


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

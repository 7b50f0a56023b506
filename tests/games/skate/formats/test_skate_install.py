"""Finding and indexing speech banks in an install, take access and decoding, the CLI."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import soundfile as sf
from skate_fakes import pcm_take, small_bank

from audio.core.errors import FormatError
from audio.games.skate import cli
from audio.games.skate.formats.hdr import ClipHeader
from audio.games.skate.formats.install import SPEECH_DIR, MissingEntry, SkateInstall, write_install


@pytest.fixture(scope="module")
def install(tmp_path_factory):
    root = tmp_path_factory.mktemp("skate")
    clips, evt, samples = small_bank()
    write_install(root, "livingworld", clips, evt)
    return root, clips, evt, samples


def test_open_finds_the_banks_in_the_game_layout(tmp_path):
    clips, evt, _ = small_bank()
    write_install(tmp_path, "livingworld", clips, evt)
    write_install(tmp_path, "announcer", clips[:1], evt, compression="refpack")
    assert (tmp_path / SPEECH_DIR / "livingworldspeech.big").is_file()
    with SkateInstall.open(tmp_path) as inst:
        assert sorted(inst.banks) == ["announcer", "livingworld"]
        assert len(inst.bank("announcer").clips) == 1
        with pytest.raises(KeyError, match="maincast"):
            inst.bank("maincast")
    with pytest.raises(FileNotFoundError, match="livingworldspeech.big"):
        SkateInstall.open(tmp_path / "nothing")


def test_index_lists_every_clip_with_its_parts_header_and_takes(install):
    root, clips, evt, _ = install
    with SkateInstall.open(root) as inst:
        bank = inst.bank()
        assert [c.name for c in bank.clips] == sorted(name for name, _, _ in clips)
        warn = bank.clip("501_59_busm1_Warn_n.dat")
        assert (warn.event, warn.voice_id, warn.voice_name, warn.line, warn.hdr_id) == (
            501,
            59,
            "busm1",
            "Warn_n",
            10,
        )
        assert len(warn.takes) == 3 and warn.header.take_count == 3
        assert sum(t.size for t in warn.takes) == warn.dat_size
        assert bank.take_count == sum(len(t) for _, _, t in clips)
        assert (bank.events.bank, bank.events.events) == (evt.bank, evt.events)
        assert bank.problems == []


def test_lookup_by_hdr_id_and_headers_sorted_by_id(install):
    root, *_ = install
    with SkateInstall.open(root) as inst:
        bank = inst.bank()
        by_id = bank.clips_by_hdr_id()
        assert sorted(by_id) == [10, 11, 12, 13, 14] and by_id[14].name == "1901_53_Shout"
        assert [h.id for h in bank.headers] == [10, 11, 12, 13, 14]


def test_take_bytes_are_the_sth_header_and_the_dat_slice(install):
    root, clips, _, _ = install
    name, _, takes = clips[0]
    with SkateInstall.open(root) as inst:
        bank = inst.bank()
        for k, (snr, sns) in enumerate(takes):
            assert bank.take_bytes(name, k) == (snr, sns)
        with pytest.raises(MissingEntry, match="no take"):
            bank.take_bytes(name, len(takes))


def test_decode_take_gives_float_mono_at_the_take_rate(install):
    root, _, _, samples = install
    with SkateInstall.open(root) as inst:
        bank = inst.bank()
        pcm, sample_rate = bank.decode_take("501_59_busm1_Warn_f", 1)
    want = samples[("501_59_busm1_Warn_f", 1)]
    assert sample_rate == 36000 and pcm.dtype == np.float32 and pcm.ndim == 1
    np.testing.assert_allclose(pcm, want / 32768.0, atol=1e-6)


def test_voice_bits_are_the_most_common_pair_outside_event_497(install):
    root, *_ = install
    with SkateInstall.open(root) as inst:
        bank = inst.bank()
        # voice 59: two 501 records carry (0x1000, 1); its two 497 records (0x40, 4) do not count
        assert bank.voice_bits(59) == (0x1000, 1)
        assert bank.voice_bits(47) == (0x2, 2)
        assert bank.voice_bits(53) == (0x100, 1)
        assert bank.voice_bits(99) is None


def test_inconsistencies_are_reported_not_raised(tmp_path):
    clips, evt, _ = small_bank()
    name, _, takes = clips[0]
    clips[0] = (name, ClipHeader.new(10, len(takes) + 2), takes)
    write_install(tmp_path, "livingworld", clips, evt)
    with SkateInstall.open(tmp_path) as inst:
        assert any("says 5 takes" in p for p in inst.bank().problems)


@pytest.mark.parametrize("compression", ["refpack", "chunkref-zlib", "chunkref-refpack"])
def test_compressed_installs_index_the_same(tmp_path, compression):
    clips, evt, _ = small_bank()
    write_install(tmp_path, "livingworld", clips, evt, compression=compression, dat_compression=compression)
    with SkateInstall.open(tmp_path) as inst:
        bank = inst.bank()
        assert len(bank.clips) == 5 and bank.take_bytes(clips[4][0], 1) == clips[4][2][1]


def test_write_install_rejects_bad_clip_names(tmp_path):
    snr, sns, _ = pcm_take(0)
    with pytest.raises(ValueError, match="clip name"):
        write_install(
            tmp_path, "livingworld", [("noname", ClipHeader.new(1, 1), [(snr, sns)])], small_bank()[1]
        )


def test_a_corrupt_nested_archive_is_a_format_error(tmp_path):
    clips, evt, _ = small_bank()
    path = write_install(tmp_path, "livingworld", clips, evt)
    data = bytearray(path.read_bytes())
    at = data.find(b"EB\x00\x03", 4)  # the first nested archive's header
    data[at + 2 : at + 4] = b"\x00\x09"
    path.write_bytes(bytes(data))
    with SkateInstall.open(tmp_path) as inst, pytest.raises(FormatError, match="version 3"):
        inst.bank().clips


# -- CLI -----------------------------------------------------------------------------------------


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="barkbus")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return args.func(args)


def test_cli_index_ls_info(install, capsys):
    root, *_ = install
    assert run_cli("skate", "index", "--root", str(root)) == 0
    out = capsys.readouterr().out
    assert "clips 5" in out and "takes 9" in out and "ms" in out
    assert run_cli("skate", "ls", "--root", str(root), "--voice", "busm1", "--event", "501") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["501_59_busm1_Warn_f", "501_59_busm1_Warn_n"]
    assert run_cli("skate", "info", "--root", str(root), "501_59_busm1_Warn_n") == 0
    out = capsys.readouterr().out
    assert "take  2" in out and "501_warn record 0" in out and "type 0x1000" in out


def test_cli_decode_writes_a_wav(install, tmp_path):
    root, _, _, samples = install
    out = tmp_path / "t.wav"
    assert run_cli("skate", "decode", "--root", str(root), "1901_53_Shout:1", "-o", str(out)) == 0
    data, sample_rate = sf.read(out, dtype="int16")
    assert sample_rate == 36000 and np.array_equal(data, samples[("1901_53_Shout", 1)])


def test_cli_errors_are_one_line_and_exit_code_2(install, tmp_path, capsys):
    from audio.cli import main

    root, *_ = install
    assert main(["skate", "info", "--root", str(root), "501_1_nope"]) == 2
    assert "no clip '501_1_nope'" in capsys.readouterr().err
    assert main(["skate", "index", "--root", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "no speech bank" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_default_root_is_the_demo_install():
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    assert parser.parse_args(["skate", "ls"]).root == cli.DEMO_ROOT
    assert cli.DEMO_ROOT.parts[-2:] == ("skate", "demo")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_export_decodes_every_take(install, tmp_path, jobs):
    root, clips, _, samples = install
    assert run_cli("skate", "export", "--root", str(root), "-o", str(tmp_path), "--jobs", jobs) == 0
    files = sorted(tmp_path.rglob("*.wav"))
    assert len(files) == sum(len(t) for _, _, t in clips)
    data, _ = sf.read(tmp_path / "501_47_adtf2_Warn_n" / "0.wav", dtype="int16")
    assert np.array_equal(data, samples[("501_47_adtf2_Warn_n", 0)])


def test_paths_are_matched_case_insensitively(tmp_path):
    clips, evt, _ = small_bank()
    path = write_install(tmp_path / "x", "livingworld", clips[:2], evt)
    target = tmp_path / "Data" / "Audio" / "ENGLISH"
    target.mkdir(parents=True)
    path.rename(target / "LivingWorldSpeech.big")
    with SkateInstall.open(tmp_path) as inst:
        assert len(inst.bank("livingworld").clips) == 2

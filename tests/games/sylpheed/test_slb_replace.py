"""``sylpheed slb-replace``: one wave bank entry re-encoded as XMA2, the others kept as stored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from audio.cli import main
from audio.codecs.xma2_encoder import encode_xma2
from audio.containers import xwb

SAMPLE_RATE = 32000


def _bank(tmp_path: Path) -> Path:
    t = np.arange(SAMPLE_RATE // 2) / SAMPLE_RATE
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    enc = encode_xma2(tone, SAMPLE_RATE, bitrate=48)
    waves = [
        xwb.NewWave.pcm16((tone * 20000).astype(np.int16), SAMPLE_RATE, name="first"),
        xwb.xma2_wave(enc.streams[0], 1, SAMPLE_RATE, enc.seek_table(), name="second"),
        xwb.NewWave.pcm16((tone[::-1] * 20000).astype(np.int16), SAMPLE_RATE, name="third"),
    ]
    path = tmp_path / "VOICE_TEST.slb"
    path.write_bytes(xwb.write_wavebank(waves))
    return path


def test_slb_replace_swaps_one_entry_and_keeps_the_others(tmp_path: Path) -> None:
    slb = _bank(tmp_path)
    line = tmp_path / "line.wav"
    x = 0.4 * np.sin(2 * np.pi * 200 * np.arange(22050) / 22050)
    sf.write(line, x, 22050, subtype="FLOAT")
    out = tmp_path / "new.slb"
    assert main(["sylpheed", "slb-replace", str(slb), "1", str(line), "-o", str(out)]) == 0
    old = xwb.read_wavebank(slb.read_bytes(), str(slb))
    new = xwb.read_wavebank(out.read_bytes(), str(out))
    assert [e.name for e in new.entries] == ["first", "second", "third"]
    for k in (0, 2):
        assert xwb.entry_data(new, k) == xwb.entry_data(old, k)
    e = new.entries[1]
    assert e.codec == xwb.CODEC_XMA2 and e.seek_table[-1] == e.num_samples
    pcm, sample_rate = xwb.decode_entry(new, 1)  # FFmpeg's XMA2 decoder
    assert sample_rate == SAMPLE_RATE and pcm.shape == (SAMPLE_RATE, 1)
    assert 0.3 < np.abs(pcm).max() < 0.5


def test_slb_replace_refuses_a_missing_entry_and_writing_over_the_input(tmp_path: Path, capsys) -> None:
    slb = _bank(tmp_path)
    line = tmp_path / "line.wav"
    sf.write(line, np.zeros(100), SAMPLE_RATE)
    assert main(["sylpheed", "slb-replace", str(slb), "7", str(line), "-o", str(tmp_path / "o.slb")]) == 2
    assert main(["sylpheed", "slb-replace", str(slb), "0", str(line), "-o", str(slb)]) == 2
    err = capsys.readouterr().err
    assert "no entry 7" in err and "input" in err


def test_slb_replace_inside_a_pak_writes_a_new_pak_with_every_other_member_as_stored(tmp_path: Path) -> None:
    from audio.games.sylpheed.formats.hashes import name_hash
    from audio.games.sylpheed.formats.pak import PakArchive, write_pak

    member = "eng\\etc\\VOICE_T_010.slb"
    root = tmp_path / "install"
    slb = _bank(tmp_path)
    write_pak(root / "dat" / "sound.pak", {member: slb.read_bytes(), "eng\\etc\\other.bin": b"x" * 5000})
    old_pak = PakArchive.open(root / "dat" / "sound.pak")
    line = tmp_path / "line.wav"
    sf.write(line, 0.4 * np.sin(2 * np.pi * 300 * np.arange(16000) / 16000), 16000, subtype="FLOAT")
    out = tmp_path / "mod" / "sound.pak"
    args = ["sylpheed", "slb-replace", f"dat\\sound.pak+{member}", "1", str(line), "-o", str(out)]
    assert main([*args, "--root", str(root)]) == 0
    new_pak = PakArchive.open(out)
    assert [e.id for e in new_pak.entries] == [e.id for e in old_pak.entries]
    assert new_pak.stored("eng\\etc\\other.bin") == old_pak.stored("eng\\etc\\other.bin")
    assert new_pak.stored(member).startswith(b"Z1")  # stored as the old member was
    old_slb = xwb.read_wavebank(old_pak.read(member), member)
    new_slb = xwb.read_wavebank(new_pak.read(member), member)
    for k in (0, 2):
        assert xwb.entry_data(new_slb, k) == xwb.entry_data(old_slb, k)
    assert new_slb.entries[1].codec == xwb.CODEC_XMA2
    pcm, sample_rate = xwb.decode_entry(new_slb, 1)  # FFmpeg's XMA2 decoder
    assert sample_rate == SAMPLE_RATE and pcm.shape == (SAMPLE_RATE, 1)
    assert name_hash(member) in {e.id for e in new_pak.entries}
    # never written over, and a member needs a .pak output
    assert main([*args, "--root", str(root)]) == 2
    assert main([*args[:-1], str(tmp_path / "x.slb"), "--root", str(root)]) == 2


def test_an_xma1_era_bank_in_the_demo_pak_takes_the_line_as_pcm_only(tmp_path: Path, capsys) -> None:
    from audio.games.sylpheed.formats.pak import PakArchive
    from audio.games.sylpheed.scenario import demo_root

    member = "eng\\etc\\VOICE_A_010.slb"
    old_pak = PakArchive.open(demo_root() / "dat" / "sound.pak")
    old_slb = xwb.read_wavebank(old_pak.read(member), member)
    assert old_slb.version <= xwb.XMA1_MAX_VERSION
    line = tmp_path / "line.wav"
    x = 0.4 * np.sin(2 * np.pi * 300 * np.arange(12000) / 24000)
    sf.write(line, x, 24000, subtype="FLOAT")
    out = tmp_path / "sound.pak"
    args = ["sylpheed", "slb-replace", member, "0", str(line), "-o", str(out), "--root", "demo"]
    assert main(args) == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "XMA1" in err and "--codec pcm" in err and len(err.strip().splitlines()) == 1
    assert main([*args, "--codec", "pcm"]) == 0
    new_pak = PakArchive.open(out)
    for e in old_pak.entries:
        if new_pak.stored(e.id) != old_pak.stored(e.id):
            assert e == old_pak.entry(member)
    new_slb = xwb.read_wavebank(new_pak.read(member), member)
    assert (new_slb.version, new_slb.entries[0].codec) == (old_slb.version, xwb.CODEC_PCM)
    pcm, sample_rate = xwb.decode_entry(new_slb, 0)
    assert sample_rate == 24000 and np.abs(pcm[:, 0] - x).max() < 1e-4

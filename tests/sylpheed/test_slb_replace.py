"""``sylpheed slb-replace``: one wave bank entry re-encoded as XMA2, the others kept as stored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from audio.cli import main
from audio.codecs.xma2_encoder import encode_xma2
from audio.containers import xwb

RATE = 32000


def _bank(tmp_path: Path) -> Path:
    t = np.arange(RATE // 2) / RATE
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    enc = encode_xma2(tone, RATE, bitrate=48)
    waves = [
        xwb.NewWave.pcm16((tone * 20000).astype(np.int16), RATE, name="first"),
        xwb.xma2_wave(enc.streams[0], 1, RATE, enc.seek_table(), name="second"),
        xwb.NewWave.pcm16((tone[::-1] * 20000).astype(np.int16), RATE, name="third"),
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
    pcm, rate = xwb.decode_entry(new, 1)  # FFmpeg's XMA2 decoder
    assert rate == RATE and pcm.shape == (RATE, 1)
    assert 0.3 < np.abs(pcm).max() < 0.5


def test_slb_replace_refuses_a_missing_entry_and_writing_over_the_input(tmp_path: Path, capsys) -> None:
    slb = _bank(tmp_path)
    line = tmp_path / "line.wav"
    sf.write(line, np.zeros(100), RATE)
    assert main(["sylpheed", "slb-replace", str(slb), "7", str(line), "-o", str(tmp_path / "o.slb")]) == 2
    assert main(["sylpheed", "slb-replace", str(slb), "0", str(line), "-o", str(slb)]) == 2
    err = capsys.readouterr().err
    assert "no entry 7" in err and "input" in err

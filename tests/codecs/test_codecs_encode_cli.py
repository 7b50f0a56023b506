"""``barkbus encode``: files read back through the readers and FFmpeg; errors are one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.cli import main
from audio.codecs.xma2_decoder import parse_xma2
from audio.containers import riff
from audio.containers.snr import CODEC_EAXMA, decode_take, parse_snr

SAMPLE_RATE = 36000


@pytest.fixture()
def wav_in(tmp_path: Path) -> Path:
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    x = 0.5 * np.sin(2 * np.pi * 220 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 2 * t))
    path = tmp_path / "in.wav"
    sf.write(path, x, SAMPLE_RATE, subtype="FLOAT")
    return path


def test_xma_output_is_riff_xma2_that_ffmpeg_decodes_to_the_input_length(
    wav_in: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "line.xma"
    assert main(["encode", str(wav_in), "-o", str(out), "--bitrate", "48"]) == 0
    summary = capsys.readouterr().out
    assert "xma2" in summary and "kbit/s" in summary and "SNR" in summary
    wav = out.read_bytes()
    assert riff.read_riff(wav).format_tag == riff.TAG_XMA2
    decoded = riff.decode_with_ffmpeg(wav)
    assert decoded.shape == (SAMPLE_RATE, 1)


def test_snr_output_is_an_ea_xma2_take_pair(wav_in: Path, tmp_path: Path) -> None:
    assert main(["encode", str(wav_in), "-o", str(tmp_path / "take.snr"), "--rate", "32000"]) == 0
    header = (tmp_path / "take.snr").read_bytes()
    h = parse_snr(header)
    assert (h.codec, h.sample_rate, h.num_samples) == (CODEC_EAXMA, 32000, 32000)
    pcm, sample_rate = decode_take(header, (tmp_path / "take.sns").read_bytes())
    assert sample_rate == 32000 and pcm.shape == (32000, 1)


def test_extended_syntax_flag_writes_mixed_subframes_that_ffmpeg_decodes(
    wav_in: Path, tmp_path: Path
) -> None:
    out = tmp_path / "line.xma"
    assert main(["encode", str(wav_in), "-o", str(out), "--bitrate", "48", "--xma2-syntax", "extended"]) == 0
    wav = out.read_bytes()
    info = riff.read_riff(wav)
    data = wav[info.data_offset : info.data_offset + info.data_size]
    packets = [data[i : i + 2048] for i in range(0, len(data), 2048)]
    lengths = {s.length for f in parse_xma2(packets, SAMPLE_RATE, 1).xma_frames for s in f.subframes}
    assert lengths != {128}
    assert riff.decode_with_ffmpeg(wav).shape == (SAMPLE_RATE, 1)


@pytest.mark.parametrize(
    "args, message",
    [
        (["-o", "x.mp3"], "cannot tell the format"),
        (["-o", "x.vag", "--bitrate", "64"], "fixed rate"),
        (["-o", "x.xma", "--codec", "ps-adpcm"], "written as .vag"),
        (["-o", "-"], "needs --codec"),
        (["-o", "x.vag", "--xma2-syntax", "extended"], "applies to xma2"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(wav_in: Path, tmp_path: Path, capsys, args, message) -> None:
    args = [a if not a.startswith("x.") else str(tmp_path / a) for a in args]
    assert main(["encode", str(wav_in), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_nan_input_is_refused(tmp_path: Path, capsys) -> None:
    x = np.zeros(1000)
    x[10] = np.nan
    src = tmp_path / "nan.wav"
    sf.write(src, x, SAMPLE_RATE, subtype="FLOAT")
    assert main(["encode", str(src), "-o", str(tmp_path / "o.xma")]) == 2
    assert "NaN" in capsys.readouterr().err
    assert not (tmp_path / "o.xma").exists()


def test_the_syntax_flag_offers_exactly_the_encoders_syntaxes() -> None:
    from audio.codecs.xma2_encoder import SYNTAXES
    from audio.offline.encode_cli import XMA2_SYNTAXES

    assert XMA2_SYNTAXES == SYNTAXES

"""A 16-bit WAV of known length is written straight to the file (``_Pcm16Wav``), with the very
bytes libsndfile writes for the same samples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.core.outputs import AudioSink, _Pcm16Wav
from audio.offline.render import Outputs, render_scenario
from audio.offline.scenario import demo_scenario


def _write(path: Path, x: np.ndarray, sample_rate: int, samples: int | None, cut: int) -> bytes:
    sink = AudioSink(path, sample_rate, x.shape[1], samples=samples)
    assert isinstance(sink._file, _Pcm16Wav) == (samples is not None)
    for i in range(0, x.shape[0], cut):  # uneven blocks
        sink.write(x[i : i + cut])
    sink.commit()
    return path.read_bytes()


@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize("samples", [0, 1, 999, 70_001])
@pytest.mark.parametrize("sample_rate", [48_000, 22_050])
def test_a_direct_16_bit_wav_has_the_bytes_libsndfile_writes(tmp_path, channels, samples, sample_rate):
    rng = np.random.default_rng(samples + channels)
    x = (rng.standard_normal((samples, channels)) * 0.6).astype(np.float32)  # some past full scale
    direct = _write(tmp_path / "direct.wav", x, sample_rate, samples, 4_097)
    libsndfile = _write(tmp_path / "libsndfile.wav", x, sample_rate, None, 4_097)
    assert direct == libsndfile
    back, sr = sf.read(tmp_path / "direct.wav", dtype="int16", always_2d=True)
    assert sr == sample_rate and back.shape == (samples, channels)


def test_other_formats_and_layouts_keep_libsndfile(tmp_path):
    assert not isinstance(AudioSink(tmp_path / "a.flac", 48_000, 2, samples=10)._file, _Pcm16Wav)
    assert not isinstance(AudioSink(tmp_path / "b.wav", 48_000, 6, samples=10)._file, _Pcm16Wav)
    assert not isinstance(AudioSink(tmp_path / "c.wav", 48_000, 2, "FLOAT", samples=10)._file, _Pcm16Wav)
    too_long = _Pcm16Wav.LIMIT // 4 + 1
    assert not isinstance(AudioSink(tmp_path / "d.wav", 48_000, 2, samples=too_long)._file, _Pcm16Wav)


def test_a_rendered_wav_is_the_file_libsndfile_writes_for_its_samples(tmp_path):
    res = render_scenario(
        demo_scenario("skate"), outputs=Outputs(audio=tmp_path / "plaza.wav"), keep_audio=True
    )
    assert res.audio is not None
    sink = AudioSink(tmp_path / "ref.wav", res.sample_rate, res.channels)  # no length: libsndfile
    sink.write(res.audio)
    sink.commit()
    assert (tmp_path / "plaza.wav").read_bytes() == (tmp_path / "ref.wav").read_bytes()

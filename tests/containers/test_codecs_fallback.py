"""The runtime fallback decoder: each step of the chain (soundfile, our codecs by signature, vgmstream)
is the one that decodes the files meant for it; nobody's file is one FormatError; play events use it."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.codecs.psadpcm import decode_psadpcm_int16, encode_psadpcm
from audio.codecs.xas1 import encode_xas1
from audio.codecs.xma import xma2_extradata
from audio.containers import riff, vgmstream, xwb
from audio.containers.fallback import decode_file, decode_file_step
from audio.containers.snr import CODEC_XAS1, TYPE_STREAM, SnrHeader
from audio.containers.sns import write_blocks
from audio.containers.vag import decode_vag, encode_vag
from audio.core.errors import BarkbusError, FormatError, UnsupportedError

_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = (
    next(
        (
            p
            for p in (_ROOT / ".." / "shared", _ROOT / ".." / ".." / "shared")  # checkout or worktree
            if (p / "fixtures" / "xmadroid.xwb").is_file()
        ),
        _ROOT,
    )
    / "fixtures"
    / "xmadroid.xwb"
)
needs_vgmstream = pytest.mark.skipif(not vgmstream.available()[0], reason="pyvgmstream unavailable")

_rng = np.random.default_rng(5)
_T = np.arange(4410) / 22050
_TONE = (0.4 * np.sin(2 * np.pi * 330 * _T) + _rng.normal(0, 0.01, _T.size)).astype(np.float32)
_PCM16 = np.round(_TONE * 32767).astype(np.int16)


def soundfile_declines(path: Path) -> bool:
    try:
        sf.read(str(path))
    except (sf.SoundFileError, RuntimeError):
        return True
    return False


def test_wav_and_flac_are_read_by_soundfile_exactly_as_before(tmp_path: Path) -> None:
    for name in ("a.wav", "a.flac"):
        p = tmp_path / name
        sf.write(p, np.stack([_TONE, -_TONE], axis=1), 22050, subtype="PCM_16")
        pcm, sample_rate, step = decode_file_step(p)
        before, before_rate = sf.read(p, dtype="float32", always_2d=True)
        assert step == "soundfile" and sample_rate == before_rate == 22050
        assert pcm.dtype == np.float32 and np.array_equal(pcm, before)


def test_vag_is_declined_by_soundfile_and_decoded_by_our_vag_reader(tmp_path: Path) -> None:
    p = tmp_path / "line.vag"
    p.write_bytes(encode_vag(_TONE, 22050, "line"))
    assert soundfile_declines(p)
    pcm, sample_rate, step = decode_file_step(p)
    expected, expected_rate = decode_vag(p.read_bytes())
    assert step == "barkbus VAG" and sample_rate == expected_rate == 22050
    assert pcm.shape == (28 + -(-_TONE.size // 28) * 28, 1) and np.array_equal(pcm, expected)


def test_xwb_gives_its_first_entry_through_our_reader(tmp_path: Path) -> None:
    p = tmp_path / "bank.xwb"
    waves = [
        xwb.NewWave.pcm16(_PCM16.reshape(-1, 1), 22050, name="first"),
        xwb.NewWave.pcm16(_PCM16[:100].reshape(-1, 1), 8000, name="second"),
    ]
    p.write_bytes(xwb.write_wavebank(waves, alignment=64))
    assert soundfile_declines(p)
    pcm, sample_rate, step = decode_file_step(p)
    assert step == "barkbus XWB" and sample_rate == 22050
    assert np.array_equal(pcm[:, 0], _PCM16.astype(np.float32) / 32768)


@pytest.mark.skipif(not FIXTURE.is_file(), reason="xmadroid.xwb fixture missing")
def test_riff_xma2_is_declined_by_soundfile_and_decoded_by_our_riff_reader(tmp_path: Path) -> None:
    bank = xwb.read_wavebank(FIXTURE.read_bytes(), "xmadroid.xwb")
    e = bank.entries[2]
    ext = xma2_extradata(1, samples_encoded=e.num_samples, block_count=1)
    p = tmp_path / "xma.wav"
    p.write_bytes(riff.build_wav(riff.xma2_fmt(1, e.sample_rate, ext), xwb.entry_data(bank, 2)))
    assert soundfile_declines(p)
    pcm, sample_rate, step = decode_file_step(p)
    assert step == "barkbus RIFF" and sample_rate == e.sample_rate
    assert np.array_equal(pcm, xwb.decode_entry(bank, 2)[0])


def test_ea_snr_with_sibling_sns_is_decoded_by_our_take_decoder(tmp_path: Path) -> None:
    header = SnrHeader(0, CODEC_XAS1, 1, 22050, TYPE_STREAM, False, _PCM16.size).pack()
    (tmp_path / "take.snr").write_bytes(header)
    (tmp_path / "take.sns").write_bytes(write_blocks(encode_xas1(_PCM16, block_samples=1024)))
    pcm, sample_rate, step = decode_file_step(tmp_path / "take.snr")
    assert step == "barkbus SNR+SNS" and sample_rate == 22050 and pcm.shape == (_PCM16.size, 1)
    assert np.abs(pcm[:, 0] - _TONE).max() < 0.05


@needs_vgmstream
def test_vgmstream_is_the_last_step_for_a_little_endian_vag(tmp_path: Path) -> None:
    body = bytes(16) + encode_psadpcm(_TONE)
    head = b"pGAV" + struct.pack("<IIII", 3, 0, len(body), 22050) + bytes(28)  # PS2 little-endian VAG
    p = tmp_path / "jak.vag"
    p.write_bytes(head + body)
    assert soundfile_declines(p)
    pcm, sample_rate, step = decode_file_step(p)
    assert step == "vgmstream" and sample_rate == 22050
    assert np.array_equal(pcm[:, 0] * 32768, decode_psadpcm_int16(body)[:, 0].astype(np.float32))


@needs_vgmstream
def test_vgmstream_decodes_an_ea_snu_our_codecs_do_not_take(tmp_path: Path) -> None:
    header = SnrHeader(0, CODEC_XAS1, 1, 22050, TYPE_STREAM, False, _PCM16.size).pack()
    p = tmp_path / "take.snu"
    p.write_bytes(vgmstream.snu_wrap(header, write_blocks(encode_xas1(_PCM16, block_samples=1024))))
    _, sample_rate, step = decode_file_step(p)
    assert step == "vgmstream" and sample_rate == 22050


def test_a_file_nobody_decodes_is_one_format_error_naming_every_step(tmp_path: Path) -> None:
    p = tmp_path / "junk.bin"
    p.write_bytes(np.random.default_rng(1).integers(0, 256, 3000, dtype=np.uint8).tobytes())
    with pytest.raises(FormatError) as info:
        decode_file(p)
    msg = str(info.value)
    assert not isinstance(info.value, UnsupportedError)
    assert str(p) in msg and "soundfile" in msg and "barkbus codecs" in msg and "vgmstream" in msg


def test_a_corrupt_vag_reports_our_readers_reason(tmp_path: Path) -> None:
    data = bytearray(encode_vag(_TONE, 22050))
    data[0x0C:0x10] = struct.pack(">I", 10**8)  # data size far past the end
    p = tmp_path / "cut.vag"
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError) as info:
        decode_file(p)
    assert "barkbus VAG" in str(info.value) and "offset 12" in str(info.value)


def test_an_unsupported_vag_variant_is_an_unsupported_error(tmp_path: Path) -> None:
    data = bytearray(encode_vag(_TONE, 22050))
    data[4:8] = struct.pack(">I", 0x00020001)  # Vita HEVAG: not PS-ADPCM
    data[0x0C:0x10] = struct.pack(">I", 10**8)  # and broken for vgmstream too
    p = tmp_path / "hevag.vag"
    p.write_bytes(bytes(data))
    with pytest.raises(UnsupportedError):
        decode_file(p)


def test_a_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="readable"):
        decode_file(tmp_path / "nope.vag")


def test_play_events_preload_vag_files_through_the_chain(tmp_path: Path) -> None:
    from audio.offline.scenario import PlaySystem

    vag_path, wav_path = tmp_path / "line.vag", tmp_path / "line.wav"
    vag_path.write_bytes(encode_vag(_TONE, 22050, "line"))
    sf.write(wav_path, np.stack([_TONE, 0.5 * _TONE], axis=1), 22050, subtype="PCM_16")
    play = PlaySystem()
    mono, sample_rate = play.preload(str(vag_path))
    assert sample_rate == 22050 and mono.ndim == 1 and np.abs(mono).max() > 0.3
    wav_mono, _ = play.preload(str(wav_path))
    before, _ = sf.read(wav_path, dtype="float32", always_2d=True)
    assert np.array_equal(wav_mono, before.mean(axis=1).astype(np.float32))


_SIGNATURES = [b"", b"VAGp", b"RIFF\x00\x01\x00\x00WAVE", b"WBND", b"H\x00\x00\x30"]
_EXTENSIONS = [".vag", ".wav", ".xwb", ".sps", ".bin"]


@pytest.mark.parametrize("ext", _EXTENSIONS)
def test_every_signature_with_a_broken_body_decodes_or_raises_a_barkbus_error(
    tmp_path: Path, ext: str
) -> None:
    # each signature under each extension, with a zeroed and a counting body (the fuzzer below
    # draws the rest)
    for i, prefix in enumerate(_SIGNATURES):
        for body in (bytes(44), bytes(range(256))):
            p = tmp_path / f"broken{i}{ext}"
            p.write_bytes(prefix + body)
            try:
                pcm, sample_rate = decode_file(p)
            except BarkbusError:
                continue
            assert pcm.dtype == np.float32 and pcm.ndim == 2 and sample_rate >= 1


# in the default suite: vgmstream.vag_refusal spares the short VAGp files pyvgmstream took seconds on
@settings(
    max_examples=examples(40),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.binary(max_size=300),
    st.sampled_from(_EXTENSIONS),
    st.sampled_from(_SIGNATURES),
)
def test_fuzz_decode_file_only_raises_barkbus_errors(
    tmp_path: Path, data: bytes, ext: str, prefix: bytes
) -> None:
    p = tmp_path / f"fuzz{ext}"
    p.write_bytes(prefix + data)
    try:
        pcm, sample_rate = decode_file(p)
    except BarkbusError:
        return
    assert pcm.dtype == np.float32 and pcm.ndim == 2 and sample_rate >= 1


def test_a_scenario_play_event_renders_a_vag_clip(tmp_path: Path) -> None:
    from audio.offline.render import render_scenario

    (tmp_path / "line.vag").write_bytes(encode_vag(_TONE, 22050, "line"))
    (tmp_path / "s.toml").write_text(
        '[scenario]\nname = "vag"\nduration = 1.0\n\n[listener]\nposition = [0.0, 1.7, 0.0]\n\n'
        '[[emitter]]\nid = "e"\nposition = [0.0, 1.7, 2.0]\n\n'
        '[[event]]\nt = 0.1\ntype = "play"\nemitter = "e"\nfile = "line.vag"\n'
    )
    res = render_scenario(tmp_path / "s.toml")
    sample_rate = res.sample_rate
    assert any(d.system == "play" and d.outcome == "Started" for d in res.decisions)
    assert np.abs(res.audio[int(0.15 * sample_rate) : int(0.25 * sample_rate)]).max() > 0.01
    assert np.abs(res.audio[: int(0.05 * sample_rate)]).max() < 1e-4

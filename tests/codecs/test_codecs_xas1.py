"""EA-XAS v1 (codec 4): vectorised decoder vs a straightforward reference and vgmstream; encoder quality."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.codecs.xas1 import XAS1_FRAME_BYTES, decode_xas1, decode_xas1_frames, encode_xas1
from audio.containers import vgmstream
from audio.containers.snr import CODEC_XAS1, TYPE_STREAM, SnrHeader, decode_take
from audio.containers.sns import coded_blocks, write_blocks
from audio.core.errors import FormatError

_REF_COEFS = [(0.0, 0.0), (0.9375, 0.0), (1.796875, -0.8125), (1.53125, -0.859375)]


def reference_frame(frame: bytes) -> list[int]:
    """Decode one 0x4C-byte frame sample by sample, straight from the format description."""
    out = []
    for g in range(4):
        h = struct.unpack_from("<I", frame, 4 * g)[0]
        c1, c2 = _REF_COEFS[h & 0xF] if (h & 0xF) < 4 else (0.0, 0.0)
        c1, c2 = np.float32(c1), np.float32(c2)
        hist2 = struct.unpack("<h", struct.pack("<H", h & 0xFFF0))[0]
        hist1 = struct.unpack("<h", struct.pack("<H", (h >> 16) & 0xFFF0))[0]
        shift = (h >> 16) & 0xF
        out += [hist2, hist1]
        for row in range(15):
            byte = frame[0x10 + 4 * row + g]
            for nib in (byte >> 4, byte & 0xF):
                s = struct.unpack("<h", struct.pack("<H", (nib << 12) & 0xFFFF))[0] >> shift
                v = np.float32(np.float32(s) + np.float32(hist1) * c1) + np.float32(hist2) * c2
                v = max(-32768, min(32767, int(v)))  # int() truncates toward zero
                out.append(v)
                hist2, hist1 = hist1, v
    return out


def speech_like(n: int, sample_rate: int, seed: int) -> np.ndarray:
    """Voiced bursts: a 90-220 Hz pulse train through two formant resonances, with pauses and noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / sample_rate
    f0 = 90 + 130 * (0.5 + 0.5 * np.sin(2 * np.pi * 0.9 * t + seed))
    phase = np.cumsum(f0 / sample_rate)
    src = (np.diff(np.floor(phase), prepend=0) > 0).astype(float)
    out = np.zeros(n)
    for formant, bw in ((600 + 100 * (seed % 3), 80), (1700, 120)):
        r = np.exp(-np.pi * bw / sample_rate)
        a1, a2 = 2 * r * np.cos(2 * np.pi * formant / sample_rate), -r * r
        y1 = y2 = 0.0
        y = np.empty(n)
        for i in range(n):  # test-side signal generator, not a decoder
            y0 = src[i] + a1 * y1 + a2 * y2
            y[i], y2, y1 = y0, y1, y0
        out += y
    env = (np.sin(2 * np.pi * 2.3 * t + seed) > -0.3).astype(float)
    out = out * env + rng.normal(0, 0.02, n)
    return (out / np.abs(out).max() * 20000).astype(np.int16)


def snr_db(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x.astype(float), y.astype(float)
    return 10 * np.log10((x**2).sum() / max(((x - y) ** 2).sum(), 1e-9))


def test_vectorised_decoder_matches_reference_on_random_frames_including_bad_coef_indexes():
    rng = np.random.default_rng(7)
    xas1_frames = rng.integers(0, 256, size=(60, XAS1_FRAME_BYTES), dtype=np.uint8)
    got = decode_xas1_frames(xas1_frames)
    for i in range(len(xas1_frames)):
        assert got[i].tolist() == reference_frame(xas1_frames[i].tobytes())


@settings(max_examples=examples(40))
@given(st.binary(min_size=XAS1_FRAME_BYTES, max_size=XAS1_FRAME_BYTES))
def test_vectorised_decoder_matches_reference_on_any_frame(frame):
    assert decode_xas1_frames(np.frombuffer(frame, np.uint8)[None])[0].tolist() == reference_frame(frame)


def test_block_layout_interleaves_channel_frames_and_trims_partial_frames():
    rng = np.random.default_rng(1)
    x = rng.integers(-3000, 3000, size=(700, 2)).astype(np.int16)
    body = write_blocks(encode_xas1(x, block_samples=256))
    y = decode_xas1(coded_blocks(body), 2, 700)
    # frame 0 of channel 1 sits right after frame 0 of channel 0
    ch1_frame0 = np.frombuffer(body[8 + XAS1_FRAME_BYTES : 8 + 2 * XAS1_FRAME_BYTES], np.uint8)
    np.testing.assert_array_equal(y[:128, 1], reference_frame(ch1_frame0.tobytes()))
    assert y.shape == (700, 2)


def test_encoder_round_trip_snr_on_speech_like_signal_is_at_least_35_db():
    x = speech_like(48000, 48000, seed=2)
    body = write_blocks(encode_xas1(x))
    y, sample_rate = decode_take(SnrHeader(0, CODEC_XAS1, 1, 48000, TYPE_STREAM, False, len(x)).pack(), body)
    assert sample_rate == 48000 and y.shape == (len(x), 1)
    assert snr_db(x, y[:, 0] * 32768) >= 35.0  # measured 40-44 dB


@settings(max_examples=examples(15))
@given(
    n=st.integers(1, 3000),
    channels=st.integers(1, 3),
    seed=st.integers(0, 1000),
    amp=st.sampled_from([50, 2000, 30000]),
)
def test_encoder_round_trip_on_random_lengths_keeps_length_and_quality(n, channels, seed, amp):
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    x = (amp * np.sin(2 * np.pi * t * rng.uniform(0.001, 0.05, channels))).astype(np.int16)
    y = decode_xas1(coded_blocks(write_blocks(encode_xas1(x, block_samples=512))), channels, n)
    assert y.shape == (n, channels)
    if np.abs(x).max() >= 16 and n >= 32:  # a handful of samples has no meaningful SNR
        assert snr_db(x, y) >= 20.0


def test_truncated_xas1_block_is_a_format_error():
    body = bytearray(write_blocks(encode_xas1(np.zeros(300, np.int16))))
    struct.pack_into(">I", body, 4, 1000)  # claims more samples than its frames hold
    with pytest.raises(FormatError, match="XAS1 frames"):
        decode_xas1(coded_blocks(bytes(body)), 1, 1000, path="t")


@pytest.mark.parametrize("channels, n, block", [(1, 48000, 2048), (2, 10001, 1024), (3, 777, 128)])
def test_xas1_decode_is_bit_exact_with_vgmstream(channels, n, block):
    ok, reason = vgmstream.available()
    if not ok:
        pytest.skip(reason)
    x = np.stack([speech_like(n, 32000, seed=c) for c in range(channels)], axis=1)
    header = SnrHeader(0, CODEC_XAS1, channels, 32000, TYPE_STREAM, False, n).pack()
    body = write_blocks(encode_xas1(x, block_samples=block))
    ours, _ = decode_take(header, body)
    ref, sample_rate = vgmstream.decode_take_vgmstream(header, body)
    assert sample_rate == 32000
    np.testing.assert_array_equal(ours, ref / np.float32(32768))


def test_pcm16be_decode_is_bit_exact_with_vgmstream():
    ok, reason = vgmstream.available()
    if not ok:
        pytest.skip(reason)
    from audio.codecs.pcm import encode_pcm16be

    rng = np.random.default_rng(5)
    x = rng.integers(-32768, 32767, size=(5000, 2), dtype=np.int16)
    header = SnrHeader(0, 2, 2, 44100, TYPE_STREAM, False, 5000).pack()
    body = write_blocks(encode_pcm16be(x, block_samples=999))
    ours, _ = decode_take(header, body)
    ref, _ = vgmstream.decode_take_vgmstream(header, body)
    np.testing.assert_array_equal(ours, ref / np.float32(32768))
    np.testing.assert_array_equal(ours, x / np.float32(32768))


def test_partial_frame_in_a_middle_block_keeps_only_that_blocks_samples():
    rng = np.random.default_rng(9)
    a = rng.integers(-5000, 5000, size=(300, 2)).astype(np.int16)
    b = rng.integers(-5000, 5000, size=(500, 2)).astype(np.int16)
    first = bytearray(write_blocks(encode_xas1(a, block_samples=256)))
    first[256 // 128 * 2 * XAS1_FRAME_BYTES + 8] = 0x00  # clear the 0x80 flag of a's last (44-sample) block
    joined = bytes(first) + write_blocks(encode_xas1(b, block_samples=256))
    got = decode_xas1(coded_blocks(joined), 2, 800)
    np.testing.assert_array_equal(
        got[:300], decode_xas1(coded_blocks(write_blocks(encode_xas1(a, block_samples=256))), 2, 300)
    )
    np.testing.assert_array_equal(
        got[300:], decode_xas1(coded_blocks(write_blocks(encode_xas1(b, block_samples=256))), 2, 500)
    )


def test_empty_take_decodes_to_no_samples():
    assert decode_xas1(coded_blocks(b""), 1, 0).shape == (0, 1)
    with pytest.raises(FormatError):
        decode_xas1(coded_blocks(b""), 1, 10)

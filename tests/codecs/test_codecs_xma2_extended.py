"""The extended XMA2 syntax: mixed subframe tilings, sent vector counts, flat scale factors."""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.codecs.xma import decode_xma
from audio.codecs.xma2_decoder import Xma2Frame, Xma2Stream, _Sub, decode_xma2, parse_xma2, synthesise
from audio.codecs.xma2_encoder import encode_xma2, xma_frames_for
from audio.codecs.xma2_tiling import MODEL_OFFSET, TILINGS, analyse_blocks, block_windows, layout
from audio.core.errors import InputError

SAMPLE_RATE = 36000


def _voice(seconds: float, seed: int = 0) -> np.ndarray:
    """Speech-like: a gliding harmonic tone, syllable envelope, plosive-like noise bursts."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    phase = 2 * np.pi * np.cumsum(140 + 30 * np.sin(2 * np.pi * 0.7 * t)) / SAMPLE_RATE
    tone = sum(np.sin(h * phase) / h for h in range(1, 25))
    env = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2
    rng = np.random.default_rng(seed)
    bursts = (np.sin(2 * np.pi * 2 * t) > 0.95) * rng.standard_normal(t.size)
    x = env * tone + 0.3 * bursts + 0.01 * rng.standard_normal(t.size)
    return (0.8 * x / np.abs(x).max()).astype(np.float32)


def _snr(x: np.ndarray, y: np.ndarray) -> float:
    return float(10 * np.log10(np.sum(x.astype(float) ** 2) / np.sum((x.astype(float) - y) ** 2)))


def test_mixed_tilings_reconstruct_the_input_through_the_decoders_synthesis() -> None:
    """Unquantised coefficients of random tilings, synthesised by the decoder's own model
    (min-of-neighbours sine overlaps), give back the input at model time 576."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(5000) * 0.3
    n = xma_frames_for(x.size)
    model = np.zeros(512 * n + 1024)
    model[MODEL_OFFSET : MODEL_OFFSET + x.size] = x
    tiling = rng.integers(0, len(TILINGS), n)
    starts, sizes = layout(tiling)
    left, right = block_windows(sizes)
    coeffs = iter(np.split(analyse_blocks(model, starts, sizes, left, right), np.cumsum(sizes)[:-1]))
    xma_frames = []
    for t in tiling:
        subs, offset = [], 0
        for size in TILINGS[t]:
            subs.append(_Sub(size, offset, [next(coeffs)]))
            offset += size
        xma_frames.append(Xma2Frame(0, 0, None, None, subs))
    y = synthesise(Xma2Stream(xma_frames, 1, SAMPLE_RATE))[:, 0]
    assert np.abs(y[MODEL_OFFSET : MODEL_OFFSET + x.size] - x).max() < 1e-9


def test_uniform_128_blocks_equal_the_specs_forward_formula() -> None:
    """Spec section 6: X[k] = -32768 sum sin-window x cos(pi/L (u + 1/2 + L/2)(k + 1/2))."""
    rng = np.random.default_rng(2)
    model = rng.standard_normal(2048)
    size = 128
    u = np.arange(2 * size)[:, None] + 0.5
    k = np.arange(size)[None, :] + 0.5
    basis = -32768 * np.sin(u * np.pi / (2 * size)) * np.cos(np.pi / size * (u + size / 2) * k)
    start = np.array([700])
    full = np.array([size])
    ours = analyse_blocks(model, start, full, full, full)
    ref = model[700 - size // 2 : 700 + 3 * size // 2] @ basis
    assert np.abs(ours - ref).max() < 1e-6 * np.abs(ref).max()


@pytest.mark.parametrize("length", [0, 1, 511, 513, 9000])
def test_extended_streams_decode_in_ffmpeg_to_the_input_length_like_our_decoder(length: int) -> None:
    x = _voice(0.5)[:length]
    enc = encode_xma2(x, SAMPLE_RATE, bitrate=64, syntax="extended")
    ff = decode_xma(enc.streams[0], SAMPLE_RATE, 1)
    ours = decode_xma2(enc.streams[0], SAMPLE_RATE, 1)
    assert ff.shape == ours.shape == (length, 1)
    assert np.abs(ff - ours).max(initial=0) < 1e-5


@settings(max_examples=examples(25), deadline=None)
@given(
    length=st.integers(0, 6000),
    channels=st.sampled_from([1, 2]),
    sample_rate=st.sampled_from([16000, 22050, 32000, 36000, 44100, 48000]),
    kbps=st.floats(16, 256),
    seed=st.integers(0, 2**16),
)
def test_random_extended_streams_decode_like_ffmpeg_to_the_input_length(
    length: int, channels: int, sample_rate: int, kbps: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = (0.3 * rng.standard_normal((length, channels)) * rng.random((1, channels))).astype(np.float32)
    enc = encode_xma2(x, sample_rate, bitrate=kbps * channels, syntax="extended")
    ff = decode_xma(enc.streams[0], sample_rate, channels)
    ours = decode_xma2(enc.streams[0], sample_rate, channels)
    assert ff.shape == ours.shape == (length, channels)
    assert np.abs(ff - ours).max(initial=0) < 1e-5


def test_extended_mode_mixes_block_lengths_and_beats_the_microsoft_subset() -> None:
    x = _voice(2.0)
    default = encode_xma2(x, SAMPLE_RATE, bitrate=48)
    ext = encode_xma2(x, SAMPLE_RATE, bitrate=48, syntax="extended")
    assert ext.bitrate <= 48
    lengths = {s.length for f in parse_xma2(ext.streams[0], SAMPLE_RATE, 1).xma_frames for s in f.subframes}
    assert lengths == {128, 256, 512}
    y_default = decode_xma(default.streams[0], SAMPLE_RATE, 1)[:, 0]
    y_ext = decode_xma(ext.streams[0], SAMPLE_RATE, 1)[:, 0]
    assert _snr(x, y_ext) > _snr(x, y_default) + 1.0


def test_whole_subframe_vector_coding_decodes_like_ffmpeg() -> None:
    """Dense white noise at a high rate: subframes whose every coefficient is vector-coded
    (sent count = subframe length, no run-level part) must not be cut short by the
    automatic switch in the strict decoder."""
    x = (0.2 * np.random.default_rng(5).standard_normal((6000, 2))).astype(np.float32)
    enc = encode_xma2(x, SAMPLE_RATE, bitrate=600, syntax="extended")
    ff = decode_xma(enc.streams[0], SAMPLE_RATE, 2)
    ours = decode_xma2(enc.streams[0], SAMPLE_RATE, 2)
    assert np.abs(ff - ours).max() < 1e-5
    assert _snr(x, ours) > 30


def test_unknown_syntax_is_refused() -> None:
    with pytest.raises(InputError, match="syntax"):
        encode_xma2(np.zeros(100, np.float32), SAMPLE_RATE, syntax="console")


@pytest.mark.parametrize("channels", [1, 2])
def test_priced_xma_frame_lengths_equal_the_written_ones(channels: int) -> None:
    """The bitrate search prices XMA frames without writing their coefficients; the lengths
    must be the writer's, bit for bit (sent vector counts, automatic switches, silent
    channels, escapes)."""
    from audio.codecs.xma2_encoder import _ExtStream

    rng = np.random.default_rng(7)
    x = np.stack([_voice(1.5, seed=c) for c in range(channels)], axis=1).astype(np.float64)
    x[: x.shape[0] // 3, -1] = 0.0  # a silent stretch in one channel
    x[x.shape[0] // 2 : x.shape[0] // 2 + 3000] += 0.5 * rng.standard_normal((3000, channels))
    stream = _ExtStream(x, SAMPLE_RATE)
    stream.fix_tiling(50, 0.1)
    for level in (-20, 20, 50, 80):
        levels = level + rng.integers(0, 3, (stream.n_xma_frames, 4))
        written = stream.encode(levels, 100, 0.1, True)
        priced = stream.encode(levels, 100, 0.1, False)
        assert np.array_equal(written[1], priced[1]), level
        assert np.array_equal(written[2], priced[2]) and np.array_equal(written[3], priced[3])

"""A stream decodes through FFmpeg alike whatever was decoded before it on the same thread (each
stream gets a fresh decoder: a flushed one dropped or refused a one-packet 128-sample stream that
followed another stream)."""

from __future__ import annotations

import numpy as np
import pytest

from audio.codecs.xma import decode_xma
from audio.codecs.xma2_encoder import encode_xma2
from audio.core.errors import FormatError

SAMPLE_RATE = 36000


def _noise(samples: int, seed: int) -> np.ndarray:
    return (0.3 * np.random.default_rng(seed).standard_normal((samples, 1))).astype(np.float32)


def _tone(seconds: float, hz: float) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (0.5 * np.sin(2 * np.pi * hz * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


@pytest.mark.parametrize("before", [300, 1000, 4000])
def test_a_one_packet_stream_decodes_to_its_length_after_another_stream(before: int) -> None:
    short = encode_xma2(_noise(128, 2), SAMPLE_RATE, bitrate=32).streams[0]
    first = decode_xma(short, SAMPLE_RATE, 1)
    decode_xma(encode_xma2(_noise(before, 1), SAMPLE_RATE, bitrate=256).streams[0], SAMPLE_RATE, 1)
    again = decode_xma(short, SAMPLE_RATE, 1)
    assert first.shape == again.shape == (128, 1)
    assert np.array_equal(first, again)


def test_streams_decode_alike_in_any_order_also_after_a_refused_one() -> None:
    streams = [
        encode_xma2(_tone(s, hz), SAMPLE_RATE).streams[0]
        for s, hz in ((0.7, 220.0), (1.3, 330.0), (0.4, 97.0))
    ]
    alone = [decode_xma(s, SAMPLE_RATE, 1) for s in streams]
    with pytest.raises(FormatError):
        decode_xma([bytes(1000)], SAMPLE_RATE, 1)
    for i in (2, 0, 1, 1, 2, 0):
        got = decode_xma(streams[i], SAMPLE_RATE, 1)
        assert got.shape == alone[i].shape and np.array_equal(got, alone[i])

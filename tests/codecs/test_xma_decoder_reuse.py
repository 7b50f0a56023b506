"""A flushed FFmpeg XMA2 decoder kept for the next take decodes exactly what a fresh one does,
also after a stream it refused."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from audio.codecs import xma
from audio.codecs.xma import decode_xma
from audio.codecs.xma2_encoder import encode_xma2
from audio.core.errors import FormatError

SAMPLE_RATE = 36000


def _tone(seconds: float, hz: float) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (0.5 * np.sin(2 * np.pi * hz * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


def _fresh(packets: list[bytes], channels: int = 1) -> np.ndarray:
    xma._DECODERS.__dict__.pop("kept", None)
    return decode_xma(packets, SAMPLE_RATE, channels)


def test_a_kept_decoder_decodes_each_stream_as_a_fresh_one() -> None:
    streams = [
        encode_xma2(_tone(s, hz), SAMPLE_RATE).streams[0]
        for s, hz in ((0.7, 220.0), (1.3, 330.0), (0.4, 97.0))
    ]
    fresh = [_fresh(s) for s in streams]
    xma._DECODERS.__dict__.pop("kept", None)
    reused = [decode_xma(s, SAMPLE_RATE, 1) for s in streams + streams]
    assert len(xma._DECODERS.kept) == 1  # one layout: one decoder, kept between takes
    for got, want in zip(reused, fresh + fresh):
        assert got.shape == want.shape and np.array_equal(got, want)


def test_a_decoder_that_refused_a_stream_is_not_reused() -> None:
    good = encode_xma2(_tone(0.8, 440.0), SAMPLE_RATE).streams[0]
    want = _fresh(good)
    with pytest.raises(FormatError):
        decode_xma(list(good)[:2], SAMPLE_RATE, 1, samples_range=(SAMPLE_RATE, 2 * SAMPLE_RATE))
    assert np.array_equal(decode_xma(good, SAMPLE_RATE, 1), want)
    bad = [bytes(1000)]
    with pytest.raises(FormatError):
        decode_xma(bad, SAMPLE_RATE, 1)
    assert np.array_equal(decode_xma(good, SAMPLE_RATE, 1), want)


def test_each_thread_keeps_its_own_decoders() -> None:
    good = encode_xma2(_tone(0.5, 250.0), SAMPLE_RATE).streams[0]
    want = _fresh(good)
    got: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: got.append(decode_xma(good, SAMPLE_RATE, 1)))
    worker.start()
    worker.join()
    assert np.array_equal(got[0], want)
    assert len(xma._DECODERS.kept) == 1  # the worker's decoder stayed on the worker's thread

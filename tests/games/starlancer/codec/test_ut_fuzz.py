"""Fuzzing read_ut / decode_ut: only barkbus errors escape, and decoding stays bounded."""

from __future__ import annotations

import struct

import numpy as np
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.core.errors import BarkbusError
from audio.games.starlancer.formats.ut import MAX_OVERRUN_LPC_FRAMES, decode_ut, read_ut, write_ut

FUZZ = settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
_rng = np.random.default_rng(5)
SEED = write_ut(b"\xf1\x38" + _rng.integers(0, 256, 900, dtype=np.uint8).tobytes(), num_samples=432 * 20)


def _decode_ok(data: bytes) -> None:
    try:
        read_ut(data, "fuzz.ut")
        out = decode_ut(data, "fuzz.ut")
    except BarkbusError:
        return
    assert out.dtype == np.float32 and np.all(out >= -1) and np.all(out < 1)
    assert out.shape == (struct.unpack_from("<I", data, 8)[0] // 2,)
    # the work is bounded by the file: at most one 432-sample frame per byte, plus the overrun
    assert out.size <= 432 * (len(data) + MAX_OVERRUN_LPC_FRAMES)


@FUZZ
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_barkbus_errors(data):
    _decode_ok(data)


@FUZZ
@given(st.data())
def test_mutated_files_raise_only_barkbus_errors(data):
    buf = bytearray(SEED)
    for _ in range(data.draw(st.integers(0, 6))):
        pos = data.draw(st.integers(0, min(len(buf), data.draw(st.sampled_from([16, 64, len(buf)]))) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        buf = buf[: data.draw(st.integers(0, len(buf)))]
    _decode_ok(bytes(buf))


@FUZZ
@given(st.sampled_from(["CB00", "CB97"]), st.binary(max_size=300), st.integers(0, 432 * 8))
def test_any_stream_in_a_valid_container_decodes(tag, stream, samples):
    out = decode_ut(write_ut(stream, tag, num_samples=samples))
    assert out.shape == (samples,)

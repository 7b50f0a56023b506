"""Digital Anvil LPC decoder: the spec's worked frame, tables, bit reader, and bit-exact agreement with
an independent plain-Python float32 reference (slcodec_ref)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from slcodec_ref import VAR_CODES, BitWriter, L, gains, reference_decode

from audio.codecs import da_lpc

WORKED = bytes.fromhex(
    "f1 38 16 04 41 08 21 84 10 42 00 00 1c 00 00 00 00 00 00 00 00 20 00 00 00 00 00 00 00 00 80 00 00 00 00"
    " 00 00 00 00 00 02 00 00 00 00 00 00"
)


def _worked_fields(alone0: int = 1) -> bytes:
    """The spec's worked frame, built field by field (8.10)."""
    w = BitWriter()
    w.put(1, 1), w.put(8, 4), w.put(7, 4), w.put(28, 6)  # stepped, n, g, r
    for i in (44, 32, 32, 32):
        w.put(i, 6)
    for _ in range(8):
        w.put(16, 5)
    for s in range(4):
        w.put(0, 8), w.put(0, 4), w.put(0, 6), w.put(0, 1), w.put(alone0 if s == 0 else 1, 1)
        if s == 0:
            w.code("11")  # +2 at position 0
            w.put(0, 53)
        else:
            w.put(0, 54)
    return bytes(w).ljust(47, b"\0")


def test_worked_frame_stream_bytes_match_the_fields_described():
    assert _worked_fields() == WORKED
    alt = bytearray(WORKED)
    alt[12] = 0x18
    assert _worked_fields(alone0=0) == bytes(alt)


def test_worked_frame_decodes_to_the_spec_values():
    y = da_lpc.decode_float(WORKED, 432)
    assert y.dtype == np.float32 and y.shape == (432,)
    np.testing.assert_allclose(y[:5], [128.0, -19.809536, 3.0657635, -0.47446367, 0.073428944], rtol=2e-7)
    assert list(da_lpc.decode(WORKED, 432)[:5]) == [128, -20, 3, 0, 0]
    assert y[0] == np.float32(128.0)


def test_worked_frame_with_fill_filter_halves_the_gain():
    alt = bytearray(WORKED)
    alt[12] = 0x18
    y = da_lpc.decode_float(bytes(alt), 432)
    np.testing.assert_allclose(y[:4], [64.0, 28.327932, -4.3840876, -6.6553698], rtol=2e-7)
    assert list(da_lpc.decode(bytes(alt), 432)[:8]) == [64, 28, -4, -7, 1, 1, 0, 0]


def test_worked_frame_matches_the_reference_bit_for_bit():
    ref = np.array(reference_decode(WORKED, 1), np.float32)
    assert np.array_equal(da_lpc.decode_float(WORKED, 432).view(np.uint32), ref.view(np.uint32))


def test_level_table_is_mirrored_and_has_the_spec_values():
    lv = da_lpc.LEVELS
    assert lv.shape == (64,) and lv[0] == 0 and lv[32] == 0
    assert all(lv[64 - i] == -lv[i] for i in range(1, 32))
    assert np.allclose(
        lv[[1, 16, 17, 44, 47]], [-0.996776, -0.750198, -0.724405, 0.619048, 0.724405], atol=1e-6
    )
    assert list(lv) == L


def test_gain_table_steps_one_product_at_a_time():
    g = da_lpc.gain_table(da_lpc.SHIPPED_HEADER)
    assert g[0] == 64.0 and g[1] == np.float32(68.352)
    assert abs(float(g[63]) - 4038.01) < 0.01
    assert list(g) == gains(7, 28)


def test_shipped_header_is_f1_38():
    assert da_lpc.write_header_bits(da_lpc.SHIPPED_HEADER) == b"\xf1\x38"
    h = da_lpc.read_header(b"\xf1\x38")
    assert h == da_lpc.SHIPPED_HEADER and h.coded_levels == 24


def test_variable_code_tables_are_complete_prefix_codes():
    for codes in VAR_CODES:
        assert sum(2.0 ** -len(c) for c, _, _ in codes) == 1.0
        names = [c for c, _, _ in codes]
        assert not any(a != b and b.startswith(a) for a in names for b in names)


def _random_stream(rng: random.Random, header: tuple[int, int, int, int], nbytes: int) -> bytes:
    w = BitWriter()
    stepped, n, g, r = header
    w.put(stepped, 1), w.put(n, 4), w.put(g, 4), w.put(r, 6)
    w.bits += [rng.getrandbits(1) for _ in range(8 * nbytes)]
    return bytes(w)


@pytest.mark.parametrize("header", [(1, 8, 7, 28), (0, 8, 7, 28), (1, 0, 3, 63), (1, 15, 15, 0)])
def test_random_streams_match_the_reference_bit_for_bit(header):
    """Random bits exercise every code path: plain and variable codes, escapes, runs, lags past the
    history's start (q < 0), unstable-looking coefficient sets, inf/NaN."""
    rng = random.Random(sum(header))
    for trial in range(3):
        stream = _random_stream(rng, header, 500)
        ref = np.array(reference_decode(stream, 3), np.float32)
        got = da_lpc.decode_float(stream, 3 * 432)
        assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), (header, trial)


def test_long_lags_read_the_gains_coefficients_and_memory():
    """Subframe 0 with lag 255 reads q = 216 - 255 + i < 0, i.e. the state before the history."""
    w = BitWriter()
    w.put(1, 1), w.put(8, 4), w.put(7, 4), w.put(28, 6)
    for _ in range(2):  # two frames
        for i in (44, 32, 32, 32):
            w.put(i, 6)
        for _ in range(8):
            w.put(16, 5)
        for s in range(4):
            w.put(255 if s == 0 else 0, 8), w.put(15, 4), w.put(0, 6), w.put(0, 1), w.put(1, 1)
            w.code("11")
            w.put(0, 53)
    stream = bytes(w)
    ref = np.array(reference_decode(stream, 2), np.float32)
    got = da_lpc.decode_float(stream, 864)
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    # in frame 0 the first 39 pitch sources are gains 49..63 (large): the output is far from a lone pulse
    assert abs(float(got[1])) > 1000


def test_bits_past_the_end_read_as_zero():
    stream = WORKED[:20]
    assert np.array_equal(da_lpc.decode_float(stream, 1300), da_lpc.decode_float(stream + bytes(400), 1300))
    assert np.array_equal(da_lpc.decode_float(b"", 500), da_lpc.decode_float(bytes(300), 500))


def test_output_length_is_exactly_the_sample_count():
    for n in (0, 1, 431, 432, 433, 1000):
        assert da_lpc.decode(WORKED, n).shape == (n,)


def test_to_int16_rounds_ties_to_even_holds_and_maps_nan():
    y = np.array(
        [0.5, 1.5, 2.5, -0.5, -1.5, 32767.4, 32767.6, -40000, 70000, np.nan, np.inf, -np.inf], np.float32
    )
    assert list(da_lpc.to_int16(y)) == [0, 2, 2, 0, -2, 32767, 32767, -32768, 32767, -32768, 32767, -32768]


def test_to_int16_wrap17_is_the_games_17_bit_read():
    y = np.array([65536.0 + 100, -65536.0 - 100, 40000.0, 1000.0], np.float32)
    assert list(da_lpc.to_int16(y, wrap17=True)) == [-32768, 32767, 32767, 1000]
    y2 = np.array([131072.0 + 5.0], np.float32)
    assert list(da_lpc.to_int16(y2, wrap17=True)) == [5]


def _flat_frame(w: BitWriter, first_level: int) -> None:
    """Level indices giving R = 0 (so W = 0 and the output equals the excitation)."""
    w.put(first_level, 6)
    for _ in range(3):
        w.put(32, 6)
    for _ in range(8):
        w.put(16, 5)


def test_variable_code_symbols_runs_and_escapes_give_the_pulses_written():
    """First level index 0 (< 24: variable code) with all-zero levels: output = G[0] x pulse exactly."""
    w = BitWriter()
    w.put(1, 1), w.put(8, 4), w.put(7, 4), w.put(28, 6)
    _flat_frame(w, 0)
    w.put(0, 8), w.put(0, 4), w.put(0, 6), w.put(1, 1), w.put(1, 1)  # offset 1, alone
    w.code("10")  # ctx0: +1 -> ctx0
    w.code("1100")  # ctx0: -2 -> ctx1
    w.code("010")  # ctx1: -1 -> ctx0
    w.code("11111101")  # ctx0: +6 -> ctx1
    w.code("00")  # ctx1: 0 -> ctx0
    w.code("11111110"), w.code("1101")  # ctx0: escape, magnitude 9, positive -> ctx1
    w.code("1111110"), w.code("00")  # ctx1: escape, magnitude 7, negative -> ctx1
    w.code("1111111"), w.put(3, 6)  # ctx1: run of 10 -> ctx0
    w.code("11111111"), w.put(63, 6)  # ctx0: run of 70, cut to the 37 positions left
    for _ in range(3):  # subframes 1..3: one cut run each
        w.put(0, 8), w.put(0, 4), w.put(0, 6), w.put(0, 1), w.put(1, 1)
        w.code("11111111"), w.put(63, 6)
    stream = bytes(w)
    y = da_lpc.decode_float(stream, 432)
    expect = np.zeros(432, np.float32)
    for k, v in enumerate([1, -2, -1, 6, 0, 9, -7]):
        expect[1 + 2 * k] = 64.0 * v
    assert np.array_equal(y, expect)
    assert np.array_equal(y, np.array(reference_decode(stream, 1), np.float32))


def test_plain_code_gives_minus_and_plus_two():
    """First level index 32 (>= 24: plain code): 0 -> 0, 10 -> -2, 11 -> +2; not stepped."""
    w = BitWriter()
    w.put(0, 1), w.put(8, 4), w.put(7, 4), w.put(28, 6)  # not stepped
    _flat_frame(w, 32)
    w.put(0, 8), w.put(0, 4), w.put(1, 6)  # gain index 1: 68.352
    w.code("10"), w.code("0"), w.code("11")
    stream = bytes(w)
    y = da_lpc.decode_float(stream, 432)
    gain = da_lpc.gain_table(da_lpc.StreamHeader(False, 8, 7, 28))[1]
    assert gain == np.float32(68.352)
    assert y[0] == -2 * gain and y[1] == 0 and y[2] == 2 * gain and not y[3:].any()

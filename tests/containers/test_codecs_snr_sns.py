"""SNR header bit fields, SNS block walking and the PCM16BE codec (codec 2)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.codecs.pcm import decode_pcm16be, encode_pcm16be
from audio.containers.snr import (
    CODEC_PCM16BE,
    TYPE_GIGASAMPLE,
    TYPE_RAM,
    TYPE_STREAM,
    SnrHeader,
    decode_take,
    parse_snr,
    split_sps,
    write_sps,
)
from audio.containers.sns import coded_blocks, walk_blocks, write_blocks
from audio.core.errors import FormatError, UnsupportedError


def test_spec_example_is_mono_36000_pcm16be_stream_10000_samples():
    h = parse_snr(bytes.fromhex("02008ca040002710"))
    assert (h.version, h.codec, h.channels, h.sample_rate) == (0, CODEC_PCM16BE, 1, 36000)
    assert (h.type, h.type_name, h.loop, h.num_samples, h.size) == (TYPE_STREAM, "STREAM", False, 10000, 8)
    assert h.codec_name == "PCM16BE"


def test_header_bit_fields_are_read_from_their_positions():
    w1 = 0 << 28 | 4 << 24 | (6 - 1) << 18 | 48000
    w2 = TYPE_STREAM << 30 | 1 << 29 | 123456
    h = parse_snr(struct.pack(">IIiI", w1, w2, 777, 0x1234))
    assert (h.codec, h.channels, h.sample_rate, h.loop, h.num_samples) == (4, 6, 48000, True, 123456)
    assert (h.loop_start, h.loop_offset, h.size) == (777, 0x1234, 16)


def test_ram_loop_has_only_loop_start_and_gigasample_has_prefetch():
    ram = parse_snr(struct.pack(">IIi", 0x02008CA0, TYPE_RAM << 30 | 1 << 29 | 50, 5))
    assert (ram.loop_start, ram.loop_offset, ram.size) == (5, None, 12)
    giga = parse_snr(struct.pack(">III", 0x02008CA0, TYPE_GIGASAMPLE << 30 | 50, 4096))
    assert (giga.type_name, giga.prefetch_samples, giga.size) == ("GIGASAMPLE", 4096, 12)


@pytest.mark.parametrize(
    "blob, what",
    [
        (struct.pack(">II", 0x22008CA0, 10), "version"),
        (struct.pack(">II", 0x02000000, 10), "sample rate"),
        (struct.pack(">II", 0x02030D41, 10), "sample rate"),  # 200001 Hz
        (struct.pack(">II", 0x02008CA0, 3 << 30), "type"),
        (struct.pack(">II", 0x02008CA0, 1 << 30 | 1 << 29), "loop start"),  # loop word missing
        (b"\x02\x00\x8c", "word 1"),
    ],
)
def test_bad_headers_raise_format_error_naming_the_field(blob, what):
    with pytest.raises(FormatError, match=what):
        parse_snr(blob, "take.snr")


@settings(max_examples=examples(100))
@given(
    version=st.integers(0, 1),
    codec=st.integers(0, 15),
    channels=st.integers(1, 64),
    sample_rate=st.integers(1, 200000),
    kind=st.sampled_from([0, 1, 2]),
    loop=st.booleans(),
    samples=st.integers(0, (1 << 29) - 1),
    loop_start=st.integers(-(2**31), 2**31 - 1),
    loop_offset=st.integers(0, 2**32 - 1),
    prefetch=st.integers(0, 2**32 - 1),
)
def test_header_pack_parse_round_trip(
    version, codec, channels, sample_rate, kind, loop, samples, loop_start, loop_offset, prefetch
):
    h = SnrHeader(
        version,
        codec,
        channels,
        sample_rate,
        kind,
        loop,
        samples,
        loop_start if loop else None,
        loop_offset if loop and kind == 1 else None,
        prefetch if kind == 2 else None,
    )
    assert parse_snr(h.pack()) == h
    assert len(h.pack()) == h.size


def test_unsupported_codec_names_the_codec():
    header = SnrHeader(0, 5, 1, 48000, TYPE_STREAM, False, 10).pack()
    with pytest.raises(UnsupportedError, match=r"unsupported codec 5 \(EALayer3 v1\)"):
        decode_take(header, write_blocks([(10, b"\0" * 40)]), "x.snr")


@pytest.mark.parametrize(
    "word, what", [(0x00000000, "size"), (0x00FFFFFF, "size"), (0x40000010, "flag"), (0x00000004, "size")]
)
def test_bad_sns_blocks_are_rejected(word, what):
    body = struct.pack(">II", word, 4) + b"\0" * 8
    with pytest.raises(FormatError, match=what) as err:
        walk_blocks(body, "take.sns", base_offset=100)
    assert err.value.offset == 100 and err.value.path == "take.sns"


def test_truncated_block_is_rejected_with_its_offset():
    body = write_blocks([(2, b"\0" * 8), (2, b"\0" * 8)])
    with pytest.raises(FormatError) as err:
        walk_blocks(body[:-3], "t")
    assert err.value.offset == 16


def test_walk_stops_after_the_last_block_flag():
    body = write_blocks([(1, b"ab"), (2, b"cdef")]) + b"garbage after the end"
    blocks = walk_blocks(body)
    assert [(b.flag, b.samples, b.payload_size) for b in blocks] == [(0x00, 1, 2), (0x80, 2, 4)]


def test_sps_v1_blocks_end_at_the_e_block():
    body = write_blocks([(3, b"xyz"), (1, b"w")], version=1)
    assert [b.flag for b in walk_blocks(body, version=1)] == [0x44, 0x44]
    with pytest.raises(FormatError, match="flag"):
        walk_blocks(body, version=0)


def test_pcm16be_round_trip_is_exact_and_trims_to_num_samples():
    rng = np.random.default_rng(3)
    x = rng.integers(-32768, 32767, size=(5001, 3), dtype=np.int16)
    body = write_blocks(encode_pcm16be(x, block_samples=700))
    header = SnrHeader(0, CODEC_PCM16BE, 3, 22050, TYPE_STREAM, False, 5000).pack()
    y, sample_rate = decode_take(header, body)
    assert sample_rate == 22050 and y.dtype == np.float32
    np.testing.assert_array_equal(y, x[:5000] / np.float32(32768))
    assert body[8:12] == struct.pack(">hh", x[0, 0], x[0, 1])  # big-endian, channel-interleaved


def test_pcm16be_short_take_is_a_format_error():
    body = write_blocks(encode_pcm16be(np.zeros(100, np.int16)))
    with pytest.raises(FormatError, match="200 samples"):
        decode_pcm16be(coded_blocks(body), 1, 200, path="t")


def test_sps_file_round_trip():
    x = (np.arange(1000) * 7 % 4000 - 2000).astype(np.int16)
    header = SnrHeader(0, CODEC_PCM16BE, 1, 32000, TYPE_RAM, False, 1000)
    sps = write_sps(header, write_blocks(encode_pcm16be(x, block_samples=300), version=1))
    h, at = split_sps(sps, "a.sps")
    assert h.version == 1 and h.num_samples == 1000
    y, _ = decode_take(h.pack(), sps[at:])
    np.testing.assert_array_equal(y[:, 0], x / np.float32(32768))


def test_ram_snr_with_its_block_inline_decodes_alone():
    x = (np.arange(400) * 37 % 3000).astype(np.int16)
    header = SnrHeader(0, CODEC_PCM16BE, 1, 16000, TYPE_RAM, False, 400).pack()
    snr_file = header + write_blocks(encode_pcm16be(x, block_samples=400))
    y, sample_rate = decode_take(snr_file, b"", "ram.snr")
    np.testing.assert_array_equal(y[:, 0], x / np.float32(32768))


def test_gigasample_prefetch_data_is_unsupported():
    header = SnrHeader(0, CODEC_PCM16BE, 1, 16000, TYPE_GIGASAMPLE, False, 10, prefetch_samples=10).pack()
    with pytest.raises(UnsupportedError, match="prefetch"):
        decode_take(header + write_blocks(encode_pcm16be(np.zeros(10, np.int16))), b"", "g.snr")

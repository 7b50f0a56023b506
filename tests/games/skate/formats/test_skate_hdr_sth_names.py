"""Clip headers (.hdr), take rows (.sth) and clip names."""

from __future__ import annotations

import struct

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.core.errors import FormatError
from audio.games.skate.formats.hdr import ClipHeader, parse_hdr, write_hdr
from audio.games.skate.formats.names import ClipName, format_clip_name, parse_clip_name
from audio.games.skate.formats.sth import Take, parse_sth, write_sth

SNR = bytes.fromhex("03008ca040002710")  # EA-XMA, mono, 36 kHz, STREAM, 10000 samples


def test_hdr_fields_are_read_from_their_offsets():
    raw = (
        struct.pack(">HBB4sB", 0x1234, 0x80, 5, b"\1\2\3\4", 0)
        + b"\7\7"
        + bytes(5)
        + struct.pack(">5H", *range(0, 60, 12))
    )
    h = parse_hdr(raw, "a.hdr")
    assert (h.id, h.flags, h.take_count, h.history_len, h.runtime) == (0x1234, 0x80, 5, 0, b"\1\2\3\4")
    assert h.sth_row_offsets == (0, 12, 24, 36, 48)
    assert write_hdr(h) == raw


def test_new_header_has_row_offsets_and_an_empty_history_ring():
    h = ClipHeader.new(77, take_count=3)
    raw = write_hdr(h)
    assert raw[:4] == b"\x00\x4d\x00\x03" and raw[8] == 3
    assert parse_hdr(raw).sth_row_offsets == (0, 12, 24)
    assert raw[16 + 6 : 16 + 6 + 4] == b"\x00\xff\xff\xff"  # cursor 0, three empty entries
    assert ClipHeader.new(1, 4, history_len=0).history_len == 0


@settings(max_examples=examples(100))
@given(st.binary(min_size=9, max_size=200))
def test_hdr_write_of_read_is_identity(raw):
    assert write_hdr(parse_hdr(raw)) == raw


def test_short_hdr_is_a_format_error():
    with pytest.raises(FormatError, match="clip header"):
        parse_hdr(b"\0" * 8, "short.hdr")


def test_sth_take_sizes_come_from_the_next_offset_and_the_dat_size():
    raw = write_sth([(0, SNR), (1000, SNR), (1500, SNR)])
    takes = parse_sth(raw, 4000, "c.sth")
    assert [(t.offset, t.size) for t in takes] == [(0, 1000), (1000, 500), (1500, 2500)]
    t = takes[0]
    assert (t.codec, t.channels, t.sample_rate, t.num_samples) == (3, 1, 36000, 10000)
    assert t.duration == pytest.approx(10000 / 36000)
    assert write_sth([(x.offset, x.snr) for x in takes]) == raw


def test_bad_sth_rows_are_format_errors():
    with pytest.raises(FormatError, match="12-byte"):
        parse_sth(b"\0" * 13, 100, "x.sth")
    with pytest.raises(FormatError, match="offset"):
        parse_sth(write_sth([(50, SNR), (10, SNR)]), 100, "x.sth")
    with pytest.raises(FormatError, match="size 100"):
        parse_sth(write_sth([(0, SNR), (200, SNR)]), 100, "x.sth")


@settings(max_examples=examples(100))
@given(st.lists(st.tuples(st.integers(0, 5000), st.binary(min_size=8, max_size=8)), max_size=10))
def test_sth_round_trip(rows):
    rows = sorted(rows)
    dat = (rows[-1][0] if rows else 0) + 7
    takes = parse_sth(write_sth(rows), dat)
    assert [(t.offset, t.snr) for t in takes] == rows
    assert sum(t.size for t in takes) == dat - (rows[0][0] if rows else dat)
    assert all(isinstance(t, Take) for t in takes)


@pytest.mark.parametrize(
    "name,parts",
    [
        ("501_59_busm1_Warn_n.dat", (501, 59, "busm1", "Warn_n")),
        ("1901_53_Shout.dat", (1901, 53, None, "Shout")),
        ("806_47_adtf2_Int_c14_tour.dat", (806, 47, "adtf2", "Int_c14_tour")),
        ("some/dir/104_51_grn1_Slam_far.dat", (104, 51, "grn1", "Slam_far")),
    ],
)
def test_clip_names_parse(name, parts):
    assert parse_clip_name(name) == ClipName(*parts)


@pytest.mark.parametrize(
    "name", ["livingworld_Events.evt", "501_warn.dat", "501_59_busm1_Warn_n.hdr", "x_1_y.dat"]
)
def test_other_names_are_not_clips(name):
    assert parse_clip_name(name) is None


def test_format_is_the_inverse_of_parse():
    for name in ("501_59_busm1_Warn_n.dat", "1901_53_Shout.dat"):
        assert format_clip_name(parse_clip_name(name)) == name

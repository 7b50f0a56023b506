"""BIGF .hog archives: layout, the filler record, the member-name rule, RefPack'd members."""

from __future__ import annotations

import struct

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.containers import refpack
from audio.core.errors import BarkbusError, FormatError
from audio.games.starlancer.formats.hog import MissingMember, member_name, read_hog, write_hog


def _hand_hog(entries: list[tuple[str, bytes]], filler: bytes = b"", extra_count: int = 0) -> bytes:
    """A BIGF archive assembled by hand (independent of write_hog): BE header and directory."""
    dir_len = sum(8 + len(n) + 1 for n, _ in entries) + len(filler)
    data_off = 16 + dir_len
    d, body = b"", b""
    for n, b in entries:
        d += struct.pack(">II", data_off + len(body), len(b)) + n.encode() + b"\0"
        body += b
    return (
        b"BIGF"
        + struct.pack(">III", data_off + len(body), len(entries) + extra_count, data_off)
        + d
        + filler
        + body
    )


def test_header_and_directory_are_big_endian():
    h = read_hog(_hand_hog([("a.bin", b"xyz"), ("B", b"12345")]))
    assert [(e.name, e.size) for e in h.entries] == [("a.bin", 3), ("B", 5)]
    assert h.raw(h.entries[1]) == b"12345"


def test_filler_record_of_cd_bytes_is_not_an_entry():
    data = _hand_hog([("MS1_BAN_001", b"abc")], filler=b"\xcd" * 12, extra_count=1)
    h = read_hog(data)
    assert h.declared == 2 and len(h.entries) == 1 and h.filler == 1
    with pytest.raises(FormatError):
        read_hog(data, tolerant=False)


def test_writer_filler_matches_the_hand_layout():
    assert write_hog([("MS1_BAN_001", b"abc")], filler=True) == _hand_hog(
        [("MS1_BAN_001", b"abc")], filler=b"\xcd" * 12, extra_count=1
    )


@pytest.mark.parametrize(
    "asked, member",
    [
        ("ms_speech\\ms1_ban_001.ut", "ms1_ban_001"),
        ("x.ut.wav", "x"),
        ("name.UT", "name.UT"),
        ("a.b.ut", "a.b.ut"),
        ("pilots\\face.fm8", "face.fm8"),
        ("dir/x.ut", "dir/x"),
    ],
)
def test_member_name_rule(asked, member):
    assert member_name(asked) == member


def test_member_found_case_insensitively_by_the_game_name():
    h = read_hog(write_hog([("MS1_BAN_001", b"speech")]))
    assert h.read("ms_speech\\ms1_ban_001.ut") == b"speech"


def test_duplicate_names_take_the_first_and_are_reported():
    h = read_hog(write_hog([("interpal.TGA", b"one"), ("interpal.tga", b"second")]))
    assert h.read("INTERPAL.tga", game_name=False) == b"one" and h.duplicates == ["interpal.tga"]


def test_only_10fb_members_are_expanded():
    packed = refpack.encode(b"mission data " * 50)
    assert packed[:2] == b"\x10\xfb"
    other = b"\x11\xfb" + packed[2:]  # valid RefPack flags, but not exactly 10 FB
    h = read_hog(write_hog([("m.dte", packed), ("o.dte", other)]))
    assert h.read("m.dte", game_name=False) == b"mission data " * 50
    assert h.read("o.dte", game_name=False) == other


def test_missing_member_is_one_format_error():
    h = read_hog(write_hog([("A", b"1")]))
    with pytest.raises(MissingMember, match="ms9_xxx_001"):
        h.read("ms9_xxx_001.ut")


def test_member_outside_the_file_stops_the_walk():
    data = bytearray(_hand_hog([("A", b"1"), ("B", b"2")]))
    struct.pack_into(">I", data, 16 + 10 + 4, 10_000)  # entry B's size
    h = read_hog(bytes(data))
    assert [e.name for e in h.entries] == ["A"] and h.filler == 1


def test_not_bigf_is_a_format_error():
    with pytest.raises(FormatError):
        read_hog(b"BIGG" + bytes(12))


@settings(max_examples=examples(150))
@given(st.binary(max_size=200))
def test_fuzz_hog_only_barkbus_errors(blob):
    for data in (blob, b"BIGF" + blob):
        try:
            h = read_hog(data)
            for e in h.entries:
                h.read(e.name, game_name=False)
        except BarkbusError:
            pass


@settings(max_examples=examples(60))
@given(
    st.lists(
        st.tuples(st.text("abcXYZ_.\\ 01", min_size=1, max_size=12), st.binary(max_size=40)), max_size=6
    ),
    st.booleans(),
    st.booleans(),
)
def test_writer_round_trips(members, filler, compress):
    h = read_hog(write_hog(members, filler=filler, compress=compress))
    assert [e.name for e in h.entries] == [n for n, _ in members]
    for e, (_n, b) in zip(h.entries, members):
        assert (refpack.decode(h.raw(e)) if compress else h.raw(e)) == b

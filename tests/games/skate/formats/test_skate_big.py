"""EB v3 and legacy BIGF/BIG4 archives: round trips, chunkref layout, nesting, guards."""

from __future__ import annotations

import os
import struct

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.core.errors import FormatError
from audio.games.skate.formats import big
from audio.games.skate.formats.big import (
    BigArchive,
    chunkref_decode,
    chunkref_encode,
    write_big,
    write_legacy_big,
)

FILES = [
    ("a.txt", b"hello world " * 300),
    ("sub/b.bin", os.urandom(5000)),
    ("sub/c.dat", b"x" * 70_000),
    ("empty", b""),
]


@pytest.mark.parametrize("compression", sorted(big.COMPRESSIONS))
@pytest.mark.parametrize("wide", [False, True])
def test_eb3_round_trip_with_each_compression(compression, wide):
    data = write_big(FILES, compression=compression, wide_entries=wide)
    arc = BigArchive.from_buffer(data, "t.big")
    assert arc.kind == "EB3"
    assert [e.path for e in arc.entries] == [p for p, _ in FILES]
    assert [arc.read(e) for e in arc.entries] == [d for _, d in FILES]
    want = big.COMPRESSIONS[compression]
    assert [e.compression for e in arc.entries[:3]] == [want] * 3


@pytest.mark.parametrize("shift", [0, 4, 11])
def test_entry_data_is_aligned_to_the_shift(shift):
    arc = BigArchive.from_buffer(write_big(FILES, alignment_shift=shift))
    assert all(e.offset % (1 << shift) == 0 for e in arc.entries)
    assert arc.read("sub/c.dat") == FILES[2][1]


def test_per_file_compression_overrides_the_default():
    arc = BigArchive.from_buffer(write_big([("a", b"a" * 100, "refpack"), ("b", b"b" * 100)]))
    assert [e.compression for e in arc.entries] == [1, 0]
    assert arc.read("a") == b"a" * 100


def test_stored_entries_are_zero_copy_views():
    arc = BigArchive.from_buffer(write_big(FILES))
    view = arc.view("sub/b.bin")
    assert view.obj is arc.data.obj and bytes(view) == FILES[1][1]


@pytest.mark.parametrize("method,alignment", [(0, 16), (4, 1), (2, 64), (3, 4096)])
def test_chunkref_chunks_are_aligned_and_round_trip(method, alignment):
    data = os.urandom(3000) * 30  # 90 KB -> 2 chunks of 64 KB
    packed = chunkref_encode(data, method, chunk_size=0x10000, alignment=alignment)
    assert packed[:8] == b"chunkref"
    total, chunk, count, align_ = struct.unpack_from(">4I", packed, 12)
    assert (total, chunk, count, align_) == (len(data), 0x10000, 2, alignment)
    cursor = 28
    for _ in range(count):  # walk the layout the spec gives
        payload = -(-(cursor + 8) // alignment) * alignment
        size, m = struct.unpack_from(">II", packed, payload - 8)
        assert m == method and payload % alignment == 0
        cursor = payload + size
    assert cursor == len(packed)
    assert chunkref_decode(packed, "c") == data


def test_chunkref_rejects_bad_headers():
    good = chunkref_encode(b"abc" * 100, 0, chunk_size=64)
    with pytest.raises(FormatError, match="chunks for"):
        chunkref_decode(good[:20] + struct.pack(">I", 99) + good[24:], "c")
    with pytest.raises(FormatError, match="power of two"):
        chunkref_decode(good[:24] + struct.pack(">I", 3) + good[28:], "c")
    with pytest.raises(FormatError, match="total size 7"):
        chunkref_decode(good, "c", expected_size=7)
    with pytest.raises(FormatError, match="at most"):
        chunkref_decode(good[:12] + struct.pack(">I", 1 << 31) + good[16:], "c")


def test_nested_archive_opens_on_a_slice_of_its_parent(tmp_path):
    inner = write_big([("x.hdr", b"\1\2\3"), ("y.hdr", b"\4\5")])
    outer = write_big([("clip.dat", b"audio"), ("inner.big", inner)])
    p = tmp_path / "outer.big"
    p.write_bytes(outer)
    with BigArchive.open(p) as arc:
        nested = arc.open_nested("inner.big")
        assert nested.data.obj is arc.data.obj  # the same mapped file, no copy
        assert nested.base == arc.entry("inner.big").offset
        assert nested.read("y.hdr") == b"\4\5"
        assert nested.path.endswith("outer.big+inner.big")
        nested.close()


def test_compressed_nested_archive_opens_from_memory():
    inner = write_big([("x", b"x" * 1000)])
    arc = BigArchive.from_buffer(write_big([("inner.big", inner, "chunkref-zlib")]))
    assert arc.open_nested("inner.big").read("x") == b"x" * 1000


def test_an_archive_containing_itself_is_a_cycle_error():
    data = bytearray(write_big([("self.big", b"\0" * 64)]))
    struct.pack_into(">III", data, 48, 0, len(data), len(data))  # entry 0 = the whole archive
    arc = BigArchive.from_buffer(bytes(data), "self.big")
    with pytest.raises(FormatError, match="cycle"):
        arc.open_nested("self.big")


def test_nesting_deeper_than_the_limit_is_an_error():
    data = write_big([("leaf", b"leaf")])
    for _ in range(big.MAX_DEPTH + 1):
        data = write_big([("n.big", data)])
    arc = BigArchive.from_buffer(data)
    with pytest.raises(FormatError, match="nesting"):
        for _ in range(big.MAX_DEPTH + 1):
            arc = arc.open_nested("n.big")


def test_huge_counts_and_sizes_are_rejected_before_allocating():
    data = bytearray(write_big([("a", b"abc")]))
    struct.pack_into(">I", data, 4, 0x7FFFFFFF)  # entry count
    with pytest.raises(FormatError, match="entry table"):
        BigArchive.from_buffer(bytes(data), "huge.big")
    data = bytearray(write_big([("a", b"abc", "refpack")]))
    struct.pack_into(">I", data, 48 + 8, 0xFFFFFFF0)  # unpacked size 4 GB
    with pytest.raises(FormatError, match="unpacked size"):
        BigArchive.from_buffer(bytes(data), "huge.big")
    data = bytearray(write_big([("a", b"abc")]))
    struct.pack_into(">I", data, 48 + 4, 0x10000000)  # stored past the end
    with pytest.raises(FormatError, match="inside the archive"):
        BigArchive.from_buffer(bytes(data), "huge.big")


def test_wrong_magic_and_version_are_errors():
    with pytest.raises(FormatError, match="magic"):
        BigArchive.from_buffer(b"XX" + bytes(60))
    data = bytearray(write_big([("a", b"abc")]))
    data[3] = 2
    with pytest.raises(FormatError, match="version 3"):
        BigArchive.from_buffer(bytes(data))


@pytest.mark.parametrize("magic", [b"BIGF", b"BIG4"])
@pytest.mark.parametrize("compression", ["none", "refpack"])
def test_legacy_round_trip(magic, compression):
    data = write_legacy_big(FILES, magic=magic, compression=compression)
    arc = BigArchive.from_buffer(data)
    assert arc.kind == magic.decode()
    assert [e.path for e in arc.entries] == [p for p, _ in FILES]
    assert [arc.read(e) for e in arc.entries] == [d for _, d in FILES]
    # header: count and header size big-endian, names with backslashes
    assert struct.unpack_from(">I", data, 8)[0] == len(FILES)
    assert b"sub\\b.bin\0" in data


names = st.text(st.sampled_from("abcdefxyz_0123."), min_size=1, max_size=20)


@settings(max_examples=examples(60))
@given(
    st.lists(st.tuples(names, st.binary(max_size=300)), max_size=8, unique_by=lambda f: f[0]),
    st.sampled_from(sorted(big.COMPRESSIONS)),
    st.integers(0, 6),
)
def test_eb3_round_trip_property(files, compression, shift):
    arc = BigArchive.from_buffer(write_big(files, compression=compression, alignment_shift=shift))
    assert [(e.path, arc.read(e)) for e in arc.entries] == files

"""RefPack: hand-made streams, header variants, errors, and encoder round trips."""

from __future__ import annotations

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.containers import refpack
from audio.core.errors import FormatError


def test_literal_run_then_short_copy_decodes():
    # E0 = 4 literals "abcd"; 00 02 = copy 3 from 3 back ("bcd"); FC = stop with no literals
    stream = bytes.fromhex("10FB000007") + b"\xe0abcd" + b"\x00\x02" + b"\xfc"
    assert refpack.decode(stream) == b"abcdbcd"


def test_overlapping_copy_repeats_its_period():
    # 2-byte command, 1 literal 'x', copy 5 from 1 back
    stream = bytes.fromhex("10FB000006") + bytes([(5 - 3) << 2 | 1, 0]) + b"x" + b"\xfc"
    assert refpack.decode(stream) == b"xxxxxx"


def test_three_and_four_byte_commands():
    lit = bytes(range(1, 9))  # E1 = 8 literals
    # 3-byte: 2 literals "YZ", then copy 6 bytes from 10 back
    three = bytes([0x80 | (6 - 4), 2 << 6 | 0, 10 - 1]) + b"YZ"
    # 4-byte: n = 5 + 300, offset 16, no literals
    n4, off4 = 305, 16
    four = bytes([0xC0 | ((n4 - 5) >> 8) << 2, (off4 - 1) >> 8, (off4 - 1) & 0xFF, (n4 - 5) & 0xFF])
    expect = bytearray(lit + b"YZ")
    for _ in range(6):
        expect.append(expect[-10])
    for _ in range(n4):
        expect.append(expect[-off4])
    body = b"\xe1" + lit + three + four + b"\xfc"
    stream = bytes([0x10, 0xFB]) + len(expect).to_bytes(3, "big") + body
    assert refpack.decode(stream) == bytes(expect)


@pytest.mark.parametrize("flags", [0x10, 0x11, 0x50, 0x90, 0x91])
def test_header_variants_give_the_same_output(flags):
    body = b"\xe0wxyz" + b"\x00\x03" + b"\xfd!"
    out = b"wxyzwxy!"
    width = 4 if flags & 0x80 else 3
    head = bytes([flags, 0xFB])
    if flags & 1:
        head += (width * 2 + 2 + len(body)).to_bytes(width, "big")
    head += len(out).to_bytes(width, "big")
    assert refpack.decode(head + body) == out
    assert refpack.header_info(head + body)[1] == len(out)


def test_back_reference_before_the_start_is_an_error():
    # 2 literals "ab", then copy 3 from 6 back: only 2 bytes exist
    stream = bytes.fromhex("10FB000005") + b"\x02\x05ab" + b"\xfc"
    with pytest.raises(FormatError, match="back-reference"):
        refpack.decode(stream, "x.rp")


def test_truncated_input_is_an_error():
    stream = bytes.fromhex("10FB000008") + b"\xe1abcdefgh"  # 8 literals, no stop command
    assert refpack.decode(stream) == b"abcdefgh"  # complete output without a stop is accepted
    with pytest.raises(FormatError, match="literal"):
        refpack.decode(stream[:-2])
    with pytest.raises(FormatError):
        refpack.decode(bytes.fromhex("10FB000010") + b"\xe0ab")


def test_output_past_the_declared_size_is_an_error():
    stream = bytes.fromhex("10FB000003") + b"\xe0abcd\xfc"
    with pytest.raises(FormatError, match="declared size"):
        refpack.decode(stream)


def test_short_output_is_an_error():
    with pytest.raises(FormatError, match="decoded bytes"):
        refpack.decode(bytes.fromhex("10FB000009") + b"\xe0abcd\xfc")


def test_bad_magic_and_impossible_sizes_are_errors():
    with pytest.raises(FormatError, match="magic"):
        refpack.decode(b"\x10\xfa\x00\x00\x01\xfda")
    with pytest.raises(FormatError, match="unpacked size"):
        refpack.decode(bytes.fromhex("90FBFFFFFFFF") + b"\xfc")  # 4 GB from 7 bytes
    with pytest.raises(FormatError, match="unpacked size 5"):
        refpack.decode(bytes.fromhex("10FB000004") + b"\xe0abcd\xfc", expected_size=5)


def test_encoder_compresses_repetitive_data():
    data = b"the quick brown fox " * 500
    packed = refpack.encode(data)
    assert len(packed) < len(data) // 10
    assert refpack.decode(packed) == data


def test_long_and_far_matches_round_trip():
    import os

    block = os.urandom(70_000)
    data = block + os.urandom(100) + block[:5000] + bytes(3000)  # far (70 KB back) and long matches
    packed = refpack.encode(data)
    assert len(packed) < len(data) - 4000
    assert refpack.decode(packed) == data


def test_large_sizes_use_the_four_byte_header():
    data = bytes(1 << 24)
    packed = refpack.encode(data)
    assert packed[:2] == b"\x90\xfb"
    assert refpack.decode(packed) == data


chunks = st.lists(
    st.one_of(st.binary(max_size=40), st.sampled_from([b"abc", b"abcabcabc", b"\0" * 33])), max_size=60
)


@settings(max_examples=examples(150))
@given(chunks, st.integers(1, 40))
def test_encode_decode_round_trip(parts, depth):
    data = b"".join(parts)
    assert refpack.decode(refpack.encode(data, chain_depth=depth)) == data

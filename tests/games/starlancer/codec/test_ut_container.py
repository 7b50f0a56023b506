"""The .ut container (spec 7): the worked file byte for byte, both tags, the scramble rule, plain marks,
the game's tail bug, the length-field rule and bad input."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from audio.codecs import da_lpc
from audio.core.errors import FormatError
from audio.games.starlancer.formats.ut import KEY, decode_ut, decode_ut_int16, read_ut, scramble, write_ut

STREAM = bytes.fromhex(
    "f1 38 16 04 41 08 21 84 10 42 00 00 1c 00 00 00 00 00 00 00 00 20 00 00 00 00 00 00 00 00 80 00 00 00 00"
    " 00 00 00 00 00 02 00 00 00 00 00 00"
)
FILE = bytes.fromhex(
    "37 00 00 00 43 42 30 30 60 03 00 00 5a 15 8c ae ea 25 bb 2e bb 6f 9a aa b7 2d 9a aa ab 2d 9a aa ab 0d"
    " 9a aa ab 2d 9a aa ab 2d 1a aa ab 2d 9a aa ab 2d 9a 00 02 00 00 00 00 00 00"
)


def _xor(stream: bytes, n: int) -> bytes:
    """Independent scramble: XOR the first n bytes with KEY[i % 4]."""
    return bytes(b ^ KEY[i % 4] if i < n else b for i, b in enumerate(stream))


def test_write_ut_reproduces_the_spec_file_byte_for_byte():
    assert len(FILE) == 59
    assert write_ut(STREAM, "CB00", num_samples=432) == FILE


def test_read_ut_unscrambles_the_spec_file():
    ut = read_ut(FILE, "ms1_test.ut")
    assert (ut.tag, ut.length, ut.size, ut.num_samples, ut.num_lpc_frames) == ("CB00", 55, 864, 432, 1)
    assert ut.scrambled and ut.payload == STREAM


def test_decode_ut_of_the_spec_file_gives_the_worked_frame():
    pcm = decode_ut_int16(FILE)
    assert pcm.dtype == np.int16 and list(pcm[:5]) == [128, -20, 3, 0, 0] and pcm.shape == (432,)
    f = decode_ut(FILE)
    assert f.dtype == np.float32 and f[0] == np.float32(128 / 32768) and f.min() >= -1 and f.max() < 1


@pytest.mark.parametrize("tag", ["CB00", "CB97"])
def test_both_tags_round_trip_and_decode_alike(tag):
    data = write_ut(STREAM, tag, num_samples=432)
    assert data[4:8] == tag.encode()
    assert read_ut(data).tag == tag
    assert np.array_equal(decode_ut_int16(data), decode_ut_int16(FILE))


def test_scramble_covers_all_but_the_last_8_bytes():
    s = bytes(range(40))
    assert scramble(s) == _xor(s, 32)
    assert scramble(scramble(s)) == s
    assert scramble(b"\x01\x02\x03") == b"\x01\x02\x03"  # shorter than the plain tail


def test_files_marked_man_or_cb_are_taken_as_plain():
    plain_body = FILE[4:12] + STREAM
    for mark in (b"man\0", b"CB\x10\x00"):
        ut = read_ut(mark + plain_body)
        assert not ut.scrambled and ut.payload == STREAM


def test_game_faithful_tail_leaves_8_more_bytes_scrambled():
    ut = read_ut(FILE, game_faithful_tail=True)
    n = 55 - 0x18
    assert n == len(STREAM) - 16
    assert ut.payload == _xor(_xor(STREAM, len(STREAM) - 8), n)
    assert ut.payload[:n] == STREAM[:n] and ut.payload[n : len(STREAM) - 8] != STREAM[n : len(STREAM) - 8]


def test_length_field_never_begins_cb_or_man():
    # 0x4243 = "CB" little-endian: a stream of 0x4243 - 8 bytes would give that length
    payload = bytes(0x4243 - 8)
    data = write_ut(payload, num_samples=10)
    assert data[:2] != b"CB" and len(data) == 0x4243 + 4 + 1
    assert struct.unpack_from("<I", data)[0] == len(data) - 4
    assert read_ut(data).payload == payload + b"\0"


def test_short_file_is_a_format_error_and_any_tag_plays():
    with pytest.raises(FormatError, match="12-byte"):
        read_ut(FILE[:11], "x.ut")
    other = FILE[:4] + b"XY01" + FILE[8:]  # spec 11.16: the game plays whatever the tag
    assert read_ut(other, "x.ut").tag == "XY01"
    assert np.array_equal(decode_ut_int16(other), decode_ut_int16(FILE))


def test_stream_that_ends_early_decodes_with_zero_bits():
    """Shipped streams run out before their samples: the rest reads as zero bits."""
    short = write_ut(STREAM[:30], num_samples=432 * 3)
    padded = write_ut(STREAM[:30] + bytes(200), num_samples=432 * 3)
    a, b = decode_ut_int16(short), decode_ut_int16(padded)
    assert a.shape == (1296,) and np.array_equal(a, b)
    assert np.array_equal(a, da_lpc.decode(STREAM[:30], 1296))


def test_implausible_size_is_a_format_error():
    data = write_ut(STREAM, num_samples=432 * 1000)
    with pytest.raises(FormatError, match="offset 8"):
        decode_ut(data, "huge.ut")
    huge = FILE[:8] + b"\xff\xff\xff\xff" + FILE[12:]
    with pytest.raises(FormatError):
        decode_ut(huge)


def test_write_ut_rejects_bad_arguments():
    with pytest.raises(ValueError):
        write_ut(STREAM, "CB0", num_samples=1)  # a tag is 4 bytes
    with pytest.raises(ValueError):
        write_ut(STREAM, num_samples=-1)

"""RMF writers: command records by name, whole messages in the seed's shape [4.3], packets and files."""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence

from audio.core.binary import align
from audio.games.radiata.formats.rmf.layout import ABSENT, EN, MAGIC, TABLE_AT, TILE_BYTES, VERSION, Speaker
from audio.games.radiata.formats.rmf.text import encode_text, text_glyphs
from audio.games.radiata.formats.rmf.tokens import Command, end, record, walk_tokens


def sentence(glyph_count: int, flags: int = 0) -> bytes:
    return record(0x0F, 5, flags, glyph_count)


def speaker(index: int, mode: int = 0) -> bytes:
    return record(0x0E, 0, index, mode)


def text_speed(glyphs_per_frame: float) -> bytes:
    return record(0x07, 0, round(glyphs_per_frame * 256))


def signal(value: int) -> bytes:
    return record(0x06, 0, value)


def wait_time(duration: int, flags: int) -> bytes:
    """``duration`` frames (0xFFFF infinite); flags 3 press to continue, 2 timed."""
    return record(0x0F, 0, duration, flags)


def play_se(channel_raw: int, sound_id: int) -> bytes:
    """A voice clip: channel byte (0x1F auto + lip-sync, 0..15 explicit) and sound id."""
    return record(0x0F, 8, channel_raw & 0xFF, sound_id)


def name_window(index: int, mode: int = 1, y_offset: int = 118, name_id: int = 0) -> bytes:
    return record(0x0E, 0x0E, index, mode, y_offset, name_id)


def wait_select2(count: int, time_limit: int = 0) -> bytes:
    return record(0x0F, 4, time_limit, count)


def jump(arg: int, *words: int) -> bytes:
    """A Jump (``0F x7``): u8 ``arg`` at +2 and up to six words from +4."""
    if len(words) > 6:
        raise ValueError("a Jump holds at most six words")
    return record(0x0F, 7, arg & 0xFF, *words)


def color(r: int, g: int, b: int, a: int = 0x80, shadow: bool = False) -> bytes:
    return record(0x02, 1 if shadow else 0, r | g << 8, b | a << 8)


def position(x: int, y: int, relative: bool = False) -> bytes:
    return record(0x04, 1 if relative else 0, x, y)


def proper(payload: bytes, sub_high: int = 0) -> bytes:
    """A Proper record: ``0F`` with ``b1 = len(payload) // 2`` (sub nibble must be 6)."""
    b1 = len(payload) // 2
    if len(payload) % 2 or b1 & 0x0F != 6 or b1 > 0xFF:
        raise ValueError("a Proper payload is 2 * b1 bytes with b1 & 0x0F == 6")
    return bytes((0x0F, b1)) + payload


def build_message(
    speaker_index: int,
    text: str,
    *,
    mode: int = 0,
    speed: float | None = 3.0,
    voice: tuple[int, int] | None = None,
    signals: Sequence[tuple[int, int]] = (),
    wait: tuple[int, int] | None = (60, 3),
    choices: Sequence[str] | None = None,
    name_plate: bool = True,
) -> bytes:
    """One dialogue (or choice) message in the seed's shape [4.3], with its glyph count.

    ``voice`` = (channel byte, sound id); ``signals`` = (value, after how many visible glyphs);
    ``choices`` makes a choice prompt (``text`` is then usually empty) with no wait record.
    """
    body = _text_with_signals(text, signals)
    count = text_glyphs(text)
    head = speaker(speaker_index, mode)
    if speed is not None:
        head += text_speed(speed)
    if voice is not None:
        head += play_se(*voice)
    if name_plate:
        head += name_window(speaker_index)
    tail = b""
    if choices is not None:
        tail += wait_select2(len(choices))
        for c in choices:
            tail += encode_text(c) + end()
            count += text_glyphs(c)
    elif wait is not None:
        tail += wait_time(*wait)
    return sentence(count) + head + bytes(body) + tail


def _text_with_signals(text: str, signals: Sequence[tuple[int, int]]) -> bytes:
    """``text`` with each signal (value, k) written after its k-th visible glyph."""
    out = bytearray(b"".join(signal(v) for v, k in signals if k == 0))
    seen = 0
    for m in re.finditer(r"\[(?:g|tile):\d+\]|.", text, re.DOTALL):
        out += encode_text(m.group(0))
        if m.group(0) not in (" ", "\n"):
            seen += 1
            out += b"".join(signal(v) for v, k in signals if k == seen)
    if any(not 0 <= k <= seen for _, k in signals):
        raise ValueError(f"a signal after more glyphs than the text's {seen}")
    return bytes(out)


def write_packet(
    speakers: Sequence[Speaker | tuple[int, int] | int],
    stream: bytes,
    glyph_budget: int | None = None,
    end_token: bool = True,
) -> bytes:
    """A packet: budget (default: the sum of its Sentence counts), speakers, ``stream``, then the
    End, 4-byte padding and slack (``end_token=False`` leaves the End and padding out)."""
    sp = [
        s if isinstance(s, Speaker) else Speaker(*s) if isinstance(s, tuple) else Speaker(s) for s in speakers
    ]
    if glyph_budget is None:
        glyph_budget = sum(
            t.u16(4) for t in walk_tokens(stream) if isinstance(t, Command) and t.entry == 0x25
        )
    head = struct.pack("<II", glyph_budget, len(sp)) + b"".join(
        struct.pack("<HH", s.character_id, s.variant) for s in sp
    )
    body = head + stream
    if not end_token:
        return body
    return body + bytes(align(len(body), 4) - len(body)) + bytes(4)


def write_rmf(
    packets: Sequence[bytes | None],
    region: str = EN,
    *,
    version: int = VERSION,
    tiles: bytes = b"",
    widths: bytes | None = None,
) -> bytes:
    """An RMF1 file: header, offset table (None -> absent), packets, tiles, EN width table.

    Packets follow the table directly, each 4-aligned. ``widths`` (EN only) defaults to 30 per
    tile, padded to 4 bytes, when there are tiles.
    """
    if region not in TABLE_AT:
        raise ValueError(f"region must be EN or JP, got {region!r}")
    if len(tiles) % TILE_BYTES:
        raise ValueError(f"tiles must be a multiple of {TILE_BYTES} bytes")
    t = TABLE_AT[region]
    pos = t + 4 * len(packets)
    table, blobs = [], []
    for p in packets:
        if p is None:
            table.append(ABSENT)
            continue
        blob = bytes(p) + bytes(align(len(p), 4) - len(p))
        table.append(pos)
        blobs.append(blob)
        pos += len(blob)
    pds = pos
    head = MAGIC + struct.pack("<IIII", version, len(tiles), pds, len(packets))
    if region == EN:
        head += struct.pack("<I", pds + len(tiles))
    out = head + struct.pack(f"<{len(table)}I", *table) + b"".join(blobs) + tiles
    if region == EN and tiles:
        n = len(tiles) // TILE_BYTES
        w = widths if widths is not None else bytes([30] * n)
        out += w + bytes(align(len(w), 4) - len(w))
    return out

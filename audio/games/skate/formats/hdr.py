"""A clip's ``.hdr`` (the speech library's clip header): reader and writer.

Big-endian. +0 u16 id (the number ``.evt`` clip entries use); +2 u8 flags (0 in all banks; bit7 =
per-take condition bits, low bits = condition bytes per take); +3 u8 take count; +4..+7 runtime;
+8 u8 history length (= take count, or 0); +9/+10 size scale; +16 u16 per take: the byte offset of
its ``.sth`` row; then the history ring (cursor + entries, 0xFF = empty). Only +0..+8 are interpreted;
every other byte is kept so that ``write_hdr(parse_hdr(x)) == x``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from audio.core.binary import Reader, align

__all__ = ["ClipHeader", "HDR_MIN_SIZE", "parse_hdr", "write_hdr"]

#: Bytes +0..+8 must be present.
HDR_MIN_SIZE = 9


@dataclass(frozen=True)
class ClipHeader:
    """The interpreted fields of a ``.hdr`` plus its other bytes as stored."""

    id: int
    flags: int
    take_count: int
    history_len: int
    runtime: bytes = bytes(4)  # +4..+7
    tail: bytes = b""  # +9 to the end: size scale, .sth row offsets, history ring

    @classmethod
    def new(cls, id: int, take_count: int, history_len: int | None = None, flags: int = 0) -> ClipHeader:
        """A header laid out like the game's: row offsets ``12 * k`` at +16 and an empty history ring.

        ``history_len`` defaults to ``take_count``.
        """
        hist = take_count if history_len is None else history_len
        tail = bytearray(16 - HDR_MIN_SIZE)
        tail += struct.pack(f">{take_count}H", *(12 * k for k in range(take_count)))
        tail += bytes((0,)) + b"\xff" * hist  # cursor, then the empty entries
        tail += bytes(align(HDR_MIN_SIZE + len(tail), 4) - HDR_MIN_SIZE - len(tail))
        return cls(id, flags, take_count, hist, bytes(4), bytes(tail))

    @property
    def sth_row_offsets(self) -> tuple[int, ...] | None:
        """The u16 ``.sth`` row offsets at +16 (None if the header is too short to hold them)."""
        at = 16 - HDR_MIN_SIZE
        if len(self.tail) < at + 2 * self.take_count:
            return None
        return struct.unpack_from(f">{self.take_count}H", self.tail, at)


def parse_hdr(data: bytes | memoryview, path: str = "<hdr>") -> ClipHeader:
    """Read a ``.hdr``; fewer than 9 bytes raise :class:`FormatError`."""
    r = Reader(data, str(path))
    r.need(0, HDR_MIN_SIZE, "clip header +0..+8 (id, flags, take count, runtime, history length)")
    raw = bytes(data)
    return ClipHeader(
        id=(raw[0] << 8) | raw[1],
        flags=raw[2],
        take_count=raw[3],
        history_len=raw[8],
        runtime=raw[4:8],
        tail=raw[HDR_MIN_SIZE:],
    )


def write_hdr(h: ClipHeader) -> bytes:
    """Lay out ``h`` (``runtime`` must be 4 bytes)."""
    if len(h.runtime) != 4:
        raise ValueError("ClipHeader.runtime is 4 bytes")
    return struct.pack(">HBB4sB", h.id, h.flags, h.take_count, h.runtime, h.history_len) + h.tail

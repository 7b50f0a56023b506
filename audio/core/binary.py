"""Bounds-checked reading of binary buffers.

:class:`Reader` wraps ``bytes`` and a path so that every read past the end, and every
count that would allocate more than the buffer can hold, raises :class:`FormatError`
with the file and the offset instead of an ``IndexError`` or a huge allocation.
"""

from __future__ import annotations

import builtins
import struct
from dataclasses import dataclass

from audio.core.errors import FormatError

__all__ = ["Reader", "align"]


def align(value: int, to: int) -> int:
    """Round ``value`` up to a multiple of ``to`` (a positive integer)."""
    return (value + to - 1) // to * to


_FMT = {"u8": "B", "i8": "b", "u16": "H", "i16": "h", "u32": "I", "i32": "i", "u64": "Q", "f32": "f"}


@dataclass(frozen=True)
class Reader:
    """Read typed values at absolute offsets of ``data``; ``big`` selects byte order."""

    data: bytes | memoryview
    path: str = "<buffer>"
    big: bool = True

    def __len__(self) -> int:
        return len(self.data)

    def need(self, offset: int, size: int, what: str) -> None:
        """Raise unless ``size`` bytes of ``what`` lie inside the buffer at ``offset``."""
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise FormatError(self.path, offset, f"{what} ({size} bytes)", f"end of data at {len(self.data)}")

    def _num(self, kind: str, offset: int, what: str) -> int | float:
        fmt = (">" if self.big else "<") + _FMT[kind]
        size = struct.calcsize(fmt)
        self.need(offset, size, what or kind)
        return struct.unpack_from(fmt, self.data, offset)[0]

    def u8(self, offset: int, what: str = "") -> int:
        return int(self._num("u8", offset, what))

    def i8(self, offset: int, what: str = "") -> int:
        return int(self._num("i8", offset, what))

    def u16(self, offset: int, what: str = "") -> int:
        return int(self._num("u16", offset, what))

    def i16(self, offset: int, what: str = "") -> int:
        return int(self._num("i16", offset, what))

    def u32(self, offset: int, what: str = "") -> int:
        return int(self._num("u32", offset, what))

    def i32(self, offset: int, what: str = "") -> int:
        return int(self._num("i32", offset, what))

    def u64(self, offset: int, what: str = "") -> int:
        return int(self._num("u64", offset, what))

    def f32(self, offset: int, what: str = "") -> float:
        return float(self._num("f32", offset, what))

    def bytes(self, offset: int, size: int, what: str = "bytes") -> bytes:
        self.need(offset, size, what)
        return bytes(self.data[offset : offset + size])

    def cstring(self, offset: int, what: str = "string", limit: int = 4096, encoding: str = "latin-1") -> str:
        """A NUL-terminated string starting at ``offset`` (at most ``limit`` bytes)."""
        self.need(offset, 1, what)
        end = bytes(self.data[offset : offset + limit]).find(b"\0")
        if end < 0:
            raise FormatError(self.path, offset, f"NUL-terminated {what} within {limit} bytes")
        return bytes(self.data[offset : offset + end]).decode(encoding)

    def count(self, offset: int, value: int, item_size: int, what: str, limit: int | None = None) -> int:
        """Check that ``value`` items of ``item_size`` bytes can fit after ``offset``.

        Use it on every count read from a file before allocating or looping on it.
        """
        room = max(0, len(self.data) - offset)
        if value < 0 or value * max(item_size, 1) > room or (limit is not None and value > limit):
            raise FormatError(
                self.path,
                offset,
                f"{what} that fits the data "
                f"({room} bytes left" + (f", at most {limit}" if limit else "") + ")",
                value,
            )
        return value

    def magic(self, offset: int, expected: builtins.bytes, what: str = "magic") -> None:
        got = self.bytes(offset, len(expected), what)
        if got != expected:
            raise FormatError(self.path, offset, f"{what} {expected!r}", got)
